"""Test code: which files hold tests, and which parts of them only ever run where CUDA exists.

A test that only runs with CUDA (skipped elsewhere by a decorator, a module-level mark, a module-level
skip, its folder or file name, a CUDA-only extension it imports, or the unit test of a compiled kernel that
only puts its inputs on CUDA) tests CUDA code; it is no lock-in of the code
under test. The same holds for helpers that only such tests call, for the CUDA branch of a test's
`if torch.cuda.is_available():` and for the rest of a test after `if not torch.cuda.is_available(): return`.
"""

from __future__ import annotations

import ast
import re
from typing import (
    AbstractSet,
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
)

from portcheck.backends import name_words
from portcheck.parts import DEFAULT_PATTERNS
from portcheck.pyscan.context import (
    CUDA_WORD,
    EVALUATION_WORDS,
    POST_PROCESSING,
    REQUIREMENT,
    SKIP_DECORATORS,
    cuda_only_decorator,
    is_cuda_check,
    is_negative_cuda_check,
    launches_raw_kernel,
    skips_without_cuda,
)
from portcheck.pyscan.extensions import is_triton_kernel
from portcheck.pyscan.imports import TRY_STATEMENTS, ImportTable, dotted, imported_modules
from portcheck.pyscan.loading import TEST_FRAMEWORKS
from portcheck.pyscan.nodes import children, module_nodes, walk

# `tests/`, `test/`, `testing/` folders; `test_x.py`, `x_test.py`, `conftest.py`, `testing.py` files.
# (`unit_tests/`, torchrec's `schema/api_tests/`, `e2e_tests/`)
_TEST_DIR = re.compile(r"(?i)^(?:tests?|testing|\w+_tests|unit_?tests?|integration_?tests?)$")
_TEST_FILE = re.compile(r"(?i)^(?:test_\w+|\w+_test|tests?|conftest|testing)\.py$")
# Test folders that only hold GPU tests: `tests/gpu/`, `tests/cuda/`, `gpu_tests/`, warp-drive's `pycuda_tests/`.
_GPU_DIR = re.compile(r"(?i)^(?:cuda|gpus?|(?:(?:py)?cuda|gpu)_?tests?|tests?_?(?:(?:py)?cuda|gpu))$")
# A module whose name says it runs on CUDA only: compiled extensions (`fused_adam_cuda`, `_C`).
_CUDA_EXTENSION = re.compile(r"^(?:_C|\w+_cuda(?:_\w+)?|\w*cuda_ext\w*|\w+_C)$")
_SKIP_MODULE_CALLS = frozenset({"skip", "skipTest", "SkipTest", "exit"})
CUDA_ONLY_ATTR = "_portcheck_cuda_only"


def _parts(path: str) -> List[str]:
    return [p for p in re.split(r"[\\/]+", path) if p and p != "."]


def is_test_path(path: str) -> bool:
    """A file of a test suite: under a `tests/` folder, or named `test_*.py`, `*_test.py`, `conftest.py`."""
    parts = _parts(path)
    if not parts:
        return False
    return bool(_TEST_FILE.match(parts[-1])) or any(_TEST_DIR.match(p) for p in parts[:-1])


_TEST_MODULE = re.compile(r"(?i)^(?:test_\w+|\w+_test)\.py$")
_NAMED_TEST = re.compile(r"(?i)^(?:tests?|testing)\.py$")


def is_named_test_only(path: str) -> bool:
    """`test.py`, `tests.py`, `testing.py` outside every test folder: a test by name only, which no test runner
    collects (mmdetection's `apis/test.py` holds `single_gpu_test` for its tools to import)."""
    parts = _parts(path)
    return bool(parts) and bool(_NAMED_TEST.match(parts[-1])) and not any(_TEST_DIR.match(p) for p in parts[:-1])


def is_collected_test(path: str) -> bool:
    """A file named as a test runner's module (`test_model.py`, `model_test.py`): collected and run, not
    imported, so a name it binds is read there or nowhere (with `is_test_module`: it holds tests)."""
    parts = _parts(path)
    return bool(parts) and bool(_TEST_MODULE.match(parts[-1]))


# `benchmark_cauchy.py`, `bench_matmul.py`, `attention_benchmark.py`: a file that times code.
# `bench.py` alone too (IST-DASLab/marlin's, timing its kernel at the repository's top)
# `speed_test.py`, `test_speed.py` (LeViT's, timing CUDA and CPU throughput) too
_BENCH_FILE = re.compile(
    r"(?i)^(?:bench(?:mark)?s?(?:_\w+)?|\w+_bench(?:mark)?s?|(?:\w+_)?speed_?test\w*|test_speed\w*"
    # a kernel's development and tuning scripts (showlab/DIM's `develop_triton_ffn.py`, which times its Triton
    # module against the PyTorch one; `autotune_matmul.py`)
    r"|develop_triton\w*|autotune\w*)\.py$"
)


def is_benchmark_file(path: str) -> bool:
    """A file named for timing code (`benchmark_cauchy.py`, `bench_matmul.py`) or for developing or tuning a
    kernel (`develop_triton_litemla.py`, `autotune_matmul.py`)."""
    parts = _parts(path)
    return bool(parts) and bool(_BENCH_FILE.match(parts[-1]))


_BENCH_DIRS = frozenset({"bench", "benches", "benchmark", "benchmarks"})


def is_benchmark_path(path: str) -> bool:
    """A file of benchmarks: named for timing code, or under a `benchmark/` (`bench/`) folder."""
    return is_benchmark_file(path) or any(p.lower() in _BENCH_DIRS for p in _parts(path)[:-1])


_EXAMPLE_DIRS = frozenset(DEFAULT_PATTERNS["examples"])


def is_benchmark_suite_path(path: str) -> bool:
    """A file of a project's benchmark suite: under a `benchmarks/` (`bench/`) folder and not among its
    examples (`examples/benchmark/` holds scripts a user runs and copies)."""
    folders = [p.lower() for p in _parts(path)[:-1]]
    return any(p in _BENCH_DIRS for p in folders) and not any(p in _EXAMPLE_DIRS for p in folders)


# Words of a script's name that say it converts weights once, offline (`merge_llama_with_chinese_lora.py`,
# `export_hf_checkpoint.py`, `convert_10ks_to_mds.py`).
_CONVERSION_WORDS = frozenset({"merge", "convert", "conversion", "export"})


def is_conversion_script(path: str, text: str) -> bool:
    """A script (it has a `__main__` block) named for converting, merging or exporting weights: it runs once,
    offline, usually on the CPU, so what a step loop would cost on an XLA-like device does not apply."""
    parts = _parts(path)
    if not parts or "__main__" not in text:
        return False
    return bool(_CONVERSION_WORDS & set(name_words(parts[-1].rsplit(".", 1)[0])))


def kernel_test_paths(tests: Iterable[str], kernel_sources: Iterable[str]) -> Set[str]:
    """The test (or benchmark) files among `tests` that sit beside CUDA sources (`kernel_sources`, `.cu`/`.cuh` paths):
    in the folder that holds them or one or two folders above (`extensions/kernels/test_cauchy.py` beside
    `cauchy_cuda.cu`; `renderutils/tests/test_bsdf.py` for `renderutils/c_src/bsdf.cu`; a `tests/` folder
    counts as the folder it sits in). Such a test runs the kernel against its reference: it is the
    kernel's test, not code to port. So is a test file in a folder beside the sources' folder, below a folder at
    least two deep and in no test folder (Stratified-Transformer's `lib/pointops2/functions/test_*.py` for
    `lib/pointops2/src/*/`). A test at the repository's top level is never one."""
    folders = {tuple(_parts(p)[:-1]) for p in kernel_sources}
    found: Set[str] = set()
    for path in tests:
        home = _parts(path)[:-1]
        if home and _TEST_DIR.match(home[-1]):
            home = home[:-1]
        beside = len(home) >= 3 and not any(_TEST_DIR.match(part) for part in _parts(path)[:-1])
        homes = [tuple(home)] + ([tuple(home[:-1])] if beside else [])
        if home and any(f[: len(h)] == h and len(f) - len(h) <= 2 for h in homes for f in folders):
            found.add(path)
    return found


# Folders (and modules) of a data pipeline: what they hold runs in the data loader, on host tensors
# (OpenNMT's `onmt/transforms/bart.py` noising, DPR's `dpr/data/reader_data.py`, regression-transformer's
# `terminator/collators.py`).
_DATA_NAMES = frozenset(
    {
        "data", "dataset", "datasets", "dataloader", "dataloaders", "data_loader", "data_loaders", "data_loading",
        "transforms", "preprocessing", "preprocess", "collator", "collators", "collate", "data_collator",
        "data_collators",
    }
)


def is_data_pipeline_path(path: str) -> bool:
    """A module of the data pipeline, by its folder or name (`data/`, `datasets/`, `transforms/`,
    `dataloader.py`, panrep's `load_data.py`, `prepare_data.py`): it prepares batches on the host."""
    parts = [p.lower() for p in _parts(path)]
    if parts:
        parts[-1] = parts[-1].rsplit(".", 1)[0]
        words = set(name_words(parts[-1]))
        if "data" in words and words & _DATA_VERBS and words <= _DATA_VERBS | {"data"}:
            return True
    return any(p in _DATA_NAMES for p in parts)


# What a module named `<verb>_data` does to the data (`load_data.py`, `prepare_data.py`, `data_process.py`)
_DATA_VERBS = frozenset({"load", "loading", "prepare", "preprocess", "preprocessing", "process", "processing"})


def is_evaluation_path(path: str) -> bool:
    """A file of evaluation code, by a folder or file-name word (`dinov2/eval/linear.py`,
    `evaluations/th_evaluator.py`, `eval_retrieval.py`), or of post-processing (mmdet's
    `core/post_processing/bbox_nms.py`, `postprocess.py`): it scores a model on a dataset or turns its outputs
    into results, off the training step. Capitalised words count too (Multi-Modality-Arena's `MedicalEval/`,
    `LVLM_Eval`)."""
    parts = _parts(path)
    if parts:
        parts[-1] = parts[-1].rsplit(".", 1)[0]
    return any(w in EVALUATION_WORDS for part in parts for w in (*name_words(part), *_capitalised(part))) or any(
        POST_PROCESSING.match(part) for part in parts
    )


_CAPITALISED = re.compile(r"(?<=[a-z])[A-Z][a-z]+")


def _capitalised(name: str) -> List[str]:
    """`MedicalEval` -> ["eval"]: the capitalised words inside a camel-case name, lower case."""
    return [w.lower() for w in _CAPITALISED.findall(name)]


_METRIC_WORDS = frozenset({"metric", "metrics"})


def is_metric_path(path: str) -> bool:
    """A module of metrics, by a folder or file-name word (`anomalib/metrics/pimo/_validate.py`,
    `utils/metrics.py`, `metric_stats.py`; not `torch_geometric/`): it scores collected outputs, once per
    evaluation, unless a training loop runs in it."""
    parts = _parts(path)
    if parts:
        parts[-1] = parts[-1].rsplit(".", 1)[0]
    return any(w in _METRIC_WORDS for part in parts for w in name_words(part))


# Post-training quantization (AWQ's `awq/quantize/`, GPTQ's `quant/quantizer.py`, gpt-fast's `quantize.py`):
# a pass over calibration data, once per model, that writes quantized weights. `quantization/` is not here:
# it holds vector-quantization layers that train (audiocraft's `quantization/core_vq.py`).
# (and its calibration: deepcompressor's `calib/smooth.py` asserts on `isnan` once per layer)
_QUANTIZE_NAMES = frozenset({"quantize", "quantizer", "calib", "calibration"})


def is_quantize_path(path: str) -> bool:
    """A module of a post-training quantizer, by its folder or name (`quantize/`, `quantize.py`, `quantizer.py`,
    `calib/`, `calibration.py`)."""
    parts = [p.lower() for p in _parts(path)]
    if parts:
        parts[-1] = parts[-1].rsplit(".", 1)[0]
    return any(p in _QUANTIZE_NAMES for p in parts)


def is_test_module(path: str, module: ast.Module) -> bool:
    """`is_test_path`, or a module that defines a `TestCase`; a file named as a test (`test.py`, `test_*.py`,
    `*_test.py`) outside a test folder is test code only when it defines tests (a top-level `test*` or `check_*`
    function, as in the kernel checks of Deformable-DETR's `ops/test.py`, or a `TestCase`): elsewhere it is a
    project's evaluation script or API (`tools/test.py`, `mmseg/apis/test.py`, `tools/test_net.py`, MUNIT's
    `test_batch.py`, mmfashion's `apis/test_retriever.py`), whose lock-in is the product's. So is a module of a
    `test/` folder in a `lib/`, `core/` or `src/` folder (CornerNet-Lite's `core/test/cornernet.py`, the STARK
    trackers' `lib/test/tracker/`) that defines no tests and imports no test framework: that folder holds the
    inference code the project runs."""
    if not is_test_path(path):
        # a module of test cases under another name (the `unittest.py` that Synchronized-BatchNorm-PyTorch's copies
        # carry: `class TorchTestCase(unittest.TestCase)` with its tensor assertions), or an op's numerical check
        return any(_is_test_case(stmt) for stmt in module.body) or _checks_gradients(module)
    parts = _parts(path)
    folders = parts[:-1]
    suites = [at for at, p in enumerate(folders) if _TEST_DIR.match(p)]
    if parts[-1] in ("conftest.py", "testing.py") or any(
        at == 0 or folders[at] != "test" or folders[at - 1] not in _CODE_FOLDERS for at in suites
    ):
        return True
    defines = any(
        (isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and _defines_a_test(stmt)) or _is_test_case(stmt)
        for stmt in module.body
    )
    return defines or (bool(suites) and any(_is_test_framework(m) for m in imported_modules(module.body)))


# Folders of a project's own code, whose `test/` subfolder holds the inference code (`lib/test/tracker/`); a
# package's `test/` (gpytorch's `gpytorch/test/`, its testing utilities) is a test folder.
_CODE_FOLDERS = frozenset({"lib", "core", "src"})


def _is_test_framework(module: str) -> bool:
    return module.split(".", 1)[0] in TEST_FRAMEWORKS or module.startswith("torch.testing")


def _is_test_case(stmt: ast.stmt) -> bool:
    """`class TorchTestCase(unittest.TestCase):`, `class TestOps(TestCase):`, and a class derived from a test base
    (torchrec's `class ModelParallelTestShared(MultiProcessTestBase):` in `test_utils/test_model_parallel.py`)."""
    return isinstance(stmt, ast.ClassDef) and any(
        (dotted(b) or "").endswith(("TestCase", "TestBase")) for b in stmt.bases
    )


_GRADIENT_CHECKS = frozenset({"gradcheck", "gradgradcheck"})


def _checks_gradients(module: ast.Module) -> bool:
    """A module that imports `torch.autograd`'s `gradcheck` and defines tests (`test*`, `check_*` functions): an
    op's numerical check against its reference, whatever its name (`forward_backward_error.py` beside the
    deformable-attention op's `setup.py` in InternImage's copies: `check_equal`, `test_op`, `gradcheck`)."""
    imported = any(
        isinstance(stmt, ast.ImportFrom)
        and stmt.module == "torch.autograd"
        and any(alias.name in _GRADIENT_CHECKS for alias in stmt.names)
        for stmt in module.body
    )
    return imported and any(
        isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and _defines_a_test(stmt) for stmt in module.body
    )


def _defines_a_test(function: Union[ast.FunctionDef, ast.AsyncFunctionDef]) -> bool:
    """A `test*` or `check_*` function, but not the entry point of an evaluation script or API: a function
    named just `test` that takes what to evaluate (CenterTrack's `def test(opt):`, `def test(model, loader):`),
    or a `test*` function with options a caller may leave out (mmfashion's `def test_retriever(model, query_set,
    gallery_set, cfg, distributed=False, validate=False)`; a test runner gives a test no such options), nor a
    `check_*` function that needs what it checks passed in (TransMVSNet's `def check_geometric_consistency(depth_ref,
    intrinsics_ref, ...)`, the depth filter of its evaluation script; an op's check takes nothing it must be given)."""
    args = function.args
    if function.name == "test":
        return not (args.posonlyargs or args.args)
    if function.name.startswith("test"):
        return not (args.defaults or any(d is not None for d in args.kw_defaults))
    required = len(args.posonlyargs) + len(args.args) - len(args.defaults)
    return function.name.startswith("check_") and required <= 0


def _gpu_test_folder(path: str) -> bool:
    return is_test_path(path) and any(_GPU_DIR.match(p) for p in _parts(path)[:-1])


# A word of a test file's name that says where it runs: `test_common_gpu.py`, `test_ops_cuda.py`,
# `two_gpu_unit_test.py`, `test_gpu_examples.py`, `test_multigpu.py`.
_GPU_WORD = re.compile(r"(?i)^(?:cuda|multigpus?|\d*x?gpus?)$")


def _gpu_test_name(path: str) -> bool:
    """A test module whose name says it only runs with CUDA, as a CUDA-only test class would."""
    parts = _parts(path)
    if not parts or not _TEST_FILE.match(parts[-1]):
        return False
    words = re.split(r"[_\-.]+", parts[-1][:-3])
    return any(_GPU_WORD.match(w) for w in words)


class LocalMarks(NamedTuple):
    """What a test module itself defines that says "CUDA only": names bound to a CUDA-only mark
    (`requires_cuda = pytest.mark.skipif(...)`), and names bound to a CUDA fact (`compute_capability =
    torch.cuda.get_device_capability()` under `if torch.cuda.is_available():`) that skip conditions test."""

    names: Set[str]
    facts: Set[str]


def _cuda_only_marker(node: ast.AST, imports: ImportTable, local: LocalMarks) -> bool:
    """`pytest.mark.skipif(not torch.cuda.is_available(), ...)`, `requires_cuda`, a skip on a CUDA fact
    (`skipif(compute_capability < (8, 0))`), or a list of marks with one."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return any(_cuda_only_marker(e, imports, local) for e in node.elts)
    if cuda_only_decorator(node, imports):
        return True
    name = dotted(node.func if isinstance(node, ast.Call) else node) or ""
    if name in local.names:
        return True
    if isinstance(node, ast.Call) and node.args and name.rsplit(".", 1)[-1] in SKIP_DECORATORS and local.facts:
        return any(isinstance(n, ast.Name) and n.id in local.facts for n in walk(node.args[0]))
    if isinstance(node, ast.Call) and name.rsplit(".", 1)[-1] in SKIP_DECORATORS:
        # `pytest.mark.skipif(**_MARK_REQUIRE_GPU)` (lightning-bolts): the skip's arguments, defined in another
        # module, are named for the GPU they require
        return any(k.arg is None and _REQUIRES_GPU.search(dotted(k.value) or "") for k in node.keywords)
    return False


_REQUIRES_GPU = re.compile(r"requires?_?(?:a_?)?(?:gpu|cuda)|(?:gpu|cuda)_?(?:required|only)", re.IGNORECASE)


def _top_level_assigns(stmts: Iterable[ast.AST]) -> Iterator[ast.Assign]:
    """Assignments a module runs at import: its own statements and those of its top-level `if`/`try`."""
    for stmt in stmts:
        if isinstance(stmt, ast.Assign):
            yield stmt
        elif isinstance(stmt, ast.If):
            yield from _top_level_assigns(stmt.body + stmt.orelse)
        elif isinstance(stmt, TRY_STATEMENTS):
            yield from _top_level_assigns(stmt.body + stmt.orelse)


def _cuda_facts(module: ast.Module, imports: ImportTable) -> Set[str]:
    """Module-level names some assignment binds to a value read from `torch.cuda`."""
    facts: Set[str] = set()
    for stmt in _top_level_assigns(module.body):
        if any(
            isinstance(n, ast.Call) and (imports.resolved(n.func) or "").startswith("torch.cuda.")
            for n in walk(stmt.value)
        ):
            facts.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    return facts


def _skips_module(stmts: Iterable[ast.AST]) -> bool:
    """`pytest.skip(..., allow_module_level=True)`, `raise unittest.SkipTest(...)`, `sys.exit(0)`."""
    for stmt in stmts:
        call: Optional[ast.AST] = None
        if isinstance(stmt, ast.Expr):
            call = stmt.value
        elif isinstance(stmt, ast.Raise):
            call = stmt.exc
        if call is None:
            continue
        func = call.func if isinstance(call, ast.Call) else call
        name = (dotted(func) or "").rsplit(".", 1)[-1]
        if name in _SKIP_MODULE_CALLS:
            return True
    return False


# Libraries that import and run only with CUDA: a test module that imports one unconditionally (torch-ngp's
# `testing/test_ffmlp.py` times its extension against `tinycudann`) is a CUDA-only benchmark or check.
_CUDA_ONLY_LIBRARIES = frozenset({"tinycudann", "pycuda", "cupy", "flash_attn", "nvdiffrast", "transformer_engine"})


# Libraries whose classes only work with CUDA: a class derived from one is that library's code.
_CUDA_ONLY_BASES = _CUDA_ONLY_LIBRARIES | {"bitsandbytes", "apex"}


def extends_cuda_only_library(node: ast.ClassDef, imports: ImportTable) -> bool:
    """A class derived from a CUDA-only library's class (GaLore's `AdamW8bit(Optimizer2State)` from
    bitsandbytes): its methods extend that library and are ported with it, which the import reports."""
    return any((imports.resolve(b) or "").split(".", 1)[0] in _CUDA_ONLY_BASES for b in node.bases)


def _imports_cuda_only_library(module: ast.Module) -> bool:
    return _imports_at_top(module, _CUDA_ONLY_LIBRARIES)


def _imports_cuda_extension(module: ast.Module) -> bool:
    for stmt in module.body:
        if isinstance(stmt, ast.Import):
            if any(_CUDA_EXTENSION.match(a.name.rsplit(".", 1)[-1]) for a in stmt.names):
                return True
        elif isinstance(stmt, ast.ImportFrom) and stmt.module:
            if _CUDA_EXTENSION.match(stmt.module.rsplit(".", 1)[-1]) or any(
                _CUDA_EXTENSION.match(a.name) for a in stmt.names if a.name != "_C"
            ):
                return True
    return False


def local_markers(module: ast.Module, imports: ImportTable) -> LocalMarks:
    """Module-level names bound to a CUDA-only skip mark (`requires_cuda = pytest.mark.skipif(...)`,
    `sm80_or_better_only = pytest.mark.skipif(compute_capability < (8, 0), ...)`) and the CUDA facts."""
    found = LocalMarks(set(), _cuda_facts(module, imports))
    for stmt in module.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            if stmt.targets[0].id != "pytestmark" and _cuda_only_marker(stmt.value, imports, found):
                found.names.add(stmt.targets[0].id)
    return found


# Runtimes that exist for CUDA only and whose import a rule reports (PKG009): a module that imports one
# unconditionally is written for it (an engine wrapper, a CUDA-graph runner), and that import is its
# lock-in, reported once. (PyCUDA and CuPy are not here: no rule reports their imports.)
CUDA_RUNTIMES = frozenset({"tensorrt", "torch_tensorrt", "tensorrt_llm"})
# vLLM's engine internals: a module built on them (ChatTTS's `velocity`, a fork of vLLM's engine; a worker
# that subclasses `GPUModelRunner`) is a piece of a vLLM engine. vLLM reaches another accelerator through
# that platform's plugin (vllm-neuron), not through changes to such a module, and its vLLM import (PKG011)
# says so once. Its public API (`from vllm import LLM`, `vllm.engine.arg_utils`, `vllm.sampling_params`)
# is not here: a script that drives vLLM is ordinary code.
VLLM_ENGINE_INTERNALS = frozenset(
    {"attention", "block", "compilation", "config", "core", "distributed", "executor", "forward_context",
     "model_executor", "sequence", "v1", "worker"}
)


# CUDA-only kernel languages and driver bindings: a module built on one at its top level (Liger's CuTe DSL
# and cuTile backends, `import cutlass.cute as cute`, `import cuda.tile as ct`, `import cuda.bindings.driver`)
# is a CUDA kernel implementation, ported as a whole (KRN005 at the import).
CUDA_KERNEL_LANGUAGES = frozenset({"cutlass", "cuda", "pycuda", "pynvrtc"})
# Packages below a shared top name: CuPy's CUDA driver layer (`from cupy.cuda import function`, FastPhotoStyle's
# `smooth_filter.py`: a module that loads and launches compiled CUDA kernels itself; CuPy's array API alone
# is not here) and NVIDIA DALI (retinanet-examples' `odtk/dali.py`: a GPU data pipeline a port replaces whole)
CUDA_ONLY_SUBPACKAGES = frozenset({"cupy.cuda", "nvidia.dali"})


def imports_cuda_runtime(module: ast.Module) -> bool:
    """Whether a module's own top level (no `try`, no `if`) imports a CUDA-only runtime (`import tensorrt as
    trt`, `from torch_tensorrt import Input`), a CUDA kernel language (`import cutlass.cute as cute`) or vLLM's
    engine internals (`from vllm.worker.cache_engine import CacheEngine`), or tries a CUDA-only runtime at its
    top and then uses it (`_tries_runtime_it_uses`)."""
    return any(
        n.split(".", 1)[0] in CUDA_RUNTIMES
        or n.split(".", 1)[0] in CUDA_KERNEL_LANGUAGES
        or any(n == m or n.startswith(m + ".") for m in CUDA_ONLY_SUBPACKAGES)
        or n.split(".", 2)[0] == "vllm" and "." in n and n.split(".", 2)[1] in VLLM_ENGINE_INTERNALS
        for n in _top_level_imports(module)
    ) or _tries_runtime_it_uses(module)


def _tries_runtime_it_uses(module: ast.Module) -> bool:
    """`try: import tensorrt as trt` / `except ImportError: trt = None` at the top of a module that then builds
    with `trt` (mmyolo's `easydeploy/tools/build_engine.py`): without TensorRT the module does nothing, so it is
    written for it as an unconditional import would say. (An import nothing reads, pytorch/serve's optional
    `import torch_tensorrt` for its side effect, is not.)"""
    bound: Set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, TRY_STATEMENTS):
            for sub in stmt.body:
                if isinstance(sub, ast.Import):
                    runtimes = [a for a in sub.names if a.name.split(".", 1)[0] in CUDA_RUNTIMES]
                    bound.update((a.asname or a.name).split(".", 1)[0] for a in runtimes)
                elif isinstance(sub, ast.ImportFrom) and sub.module and sub.module.split(".", 1)[0] in CUDA_RUNTIMES:
                    bound.update(a.asname or a.name for a in sub.names)
    if not bound:
        return False
    return any(
        isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in bound
        or isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in bound
        for n in module_nodes(module)
    )


def _imports_at_top(module: ast.Module, packages: FrozenSet[str]) -> bool:
    """Whether the module's own top level (no `try`, no `if`) imports one of `packages` (or a submodule)."""
    return any(n.split(".", 1)[0] in packages for n in _top_level_imports(module))


def _top_level_imports(module: ast.Module) -> Iterator[str]:
    """The modules the module's own top level (no `try`, no `if`) imports, absolute ones only."""
    return imported_modules(module.body)


def module_cuda_only(module: ast.Module, imports: ImportTable, path: str) -> Optional[str]:
    """Why a whole test module only runs with CUDA, or None."""
    if _gpu_test_folder(path):
        return "folder"
    if _gpu_test_name(path):
        return "name"
    local = local_markers(module, imports)
    for stmt in module.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets):
            if _cuda_only_marker(stmt.value, imports, local):
                return "pytestmark"
        elif isinstance(stmt, ast.If) and is_negative_cuda_check(stmt.test, imports) and _skips_module(stmt.body):
            return "module skip"
    if _imports_cuda_extension(module):
        return "extension"
    if _imports_cuda_only_library(module):
        return "library"
    if _cuda_kernel_test(module):
        return "kernel test"
    return None


def _plain_imports(module: ast.Module) -> Set[str]:
    """Names bound by the module's own top-level `import x` (no `try`, no `if`, no dotted name)."""
    return {
        a.asname or a.name
        for stmt in module.body
        if isinstance(stmt, ast.Import)
        for a in stmt.names
        if "." not in a.name
    }


def _autograd_functions(module: ast.Module) -> Iterator[ast.ClassDef]:
    for stmt in module.body:
        if isinstance(stmt, ast.ClassDef) and any(
            (dotted(b) or "").endswith(("autograd.Function", "torch.autograd.function.Function")) for b in stmt.bases
        ):
            yield stmt


def _places_on_cuda(node: ast.AST) -> bool:
    """Whether a test body moves or creates its inputs on CUDA: `x.cuda()`, `device="cuda"`, `.to("cuda")`."""
    for sub in walk(node):
        if not isinstance(sub, ast.Call):
            continue
        if isinstance(sub.func, ast.Attribute) and sub.func.attr == "cuda" and not sub.args:
            return True
        values = list(sub.args) + [k.value for k in sub.keywords if k.arg == "device"]
        if any(isinstance(v, ast.Constant) and isinstance(v.value, str) and v.value.startswith("cuda") for v in values):
            return True
    return False


def _cuda_kernel_test(module: ast.Module) -> bool:
    """The unit test of a compiled kernel written for CUDA: the module wraps the ops of an extension it
    imports (`import window_process`, called from the `forward`/`backward` of a `torch.autograd.Function`),
    and every one of its tests puts its inputs on CUDA, or runs another test (`self.test_x(dtype=...)`).
    Such a test checks the CUDA kernel against a reference and has no other device to run on."""
    imported = _plain_imports(module)
    ops = set()
    for cls in _autograd_functions(module):
        for sub in walk(cls):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute):
                head = sub.func.value
                if isinstance(head, ast.Name) and head.id in imported and head.id not in _NOT_EXTENSIONS:
                    ops.add(head.id)
    if not ops:
        return False
    defs = (ast.FunctionDef, ast.AsyncFunctionDef)
    tests = [n for n in module_nodes(module) if isinstance(n, defs) and n.name.startswith("test")]
    if not tests:
        return False

    def runs_a_test(fn: ast.AST) -> bool:
        return any(
            isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr.startswith("test")
            for sub in walk(fn)
        )

    return all(_places_on_cuda(t) or runs_a_test(t) for t in tests)


# Modules an `autograd.Function` calls that are no compiled extension of the project.
_NOT_EXTENSIONS = frozenset({"torch", "numpy", "np", "math", "F", "functools", "operator", "triton"})


def _decorated(node: ast.AST, imports: ImportTable, local: LocalMarks) -> bool:
    if skips_without_cuda(node, imports):
        return True
    return any(_cuda_only_marker(d, imports, local) for d in getattr(node, "decorator_list", []))


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def early_cuda_exit(stmt: ast.AST, imports: ImportTable) -> bool:
    """`if not torch.cuda.is_available(): return` / `self.skipTest(...)` / `pytest.skip(...)`; a skip helper
    named for CUDA called as a statement (aihwkit's `self._skip_if_no_cuda()`, `require_gpu()`); `if
    SKIP_CUDA_TESTS: raise SkipTest(...)`."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        name = (dotted(stmt.value.func) or "").rsplit(".", 1)[-1].lstrip("_")
        return bool(name) and bool(REQUIREMENT.match(name))
    if not isinstance(stmt, ast.If) or stmt.orelse or not stmt.body:
        return False
    if names_cuda_skip(stmt.test):
        return _skips_module(stmt.body[-1:]) or _is_skip_call(stmt.body[-1])
    if not is_negative_cuda_check(stmt.test, imports):
        return False
    last = stmt.body[-1]
    if isinstance(last, (ast.Return, ast.Continue)):
        return True
    return _skips_module([last]) or _is_skip_call(last)


def names_cuda_skip(test: ast.AST) -> bool:
    """`SKIP_CUDA_TESTS`, `self.skip_gpu`: a flag named for skipping CUDA's tests."""
    name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
    return "skip" in name.lower() and bool(CUDA_WORD.search(name))


def _is_skip_call(stmt: ast.AST) -> bool:
    """`self.skipTest(...)`, `pytest.skip(...)` as a statement."""
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and (dotted(stmt.value.func) or "").rsplit(".", 1)[-1] in ("skipTest", "skip")
    )


def _references(module: ast.Module, imports: ImportTable, marked: Set[int]) -> Dict[str, List[bool]]:
    """Every use of a name (`helper(...)`, `self.helper(...)`, `Class.helper`), and for each whether it
    sits in CUDA-only code: a marked definition, a CUDA branch, or after an early exit without CUDA."""
    refs: Dict[str, List[bool]] = {}
    stack: List[Tuple[ast.AST, bool]] = [(module, False)]
    while stack:
        node, cuda_only = stack.pop()
        if (isinstance(node, _DEFS) and id(node) in marked) or getattr(node, CUDA_ONLY_ATTR, False):
            cuda_only = True  # (a `pytest.param` case that only runs with CUDA is marked so too)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            refs.setdefault(node.id, []).append(cuda_only)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            refs.setdefault(node.attr, []).append(cuda_only)
        if isinstance(node, (ast.If, ast.IfExp)) and is_cuda_check(node.test, imports):
            negative = is_negative_cuda_check(node.test, imports)
            body = node.body if isinstance(node.body, list) else [node.body]
            orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
            stack.append((node.test, cuda_only))
            stack.extend((c, cuda_only or not negative) for c in body)
            stack.extend((c, cuda_only or negative) for c in orelse)
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.AST):
                inner = cuda_only
                for stmt in block:
                    stack.append((stmt, inner))
                    inner = inner or early_cuda_exit(stmt, imports)
        for field, value in ast.iter_fields(node):
            if field in ("body", "orelse", "finalbody", "handlers"):
                continue
            if isinstance(value, ast.AST):
                stack.append((value, cuda_only))
            elif isinstance(value, list):
                stack.extend((v, cuda_only) for v in value if isinstance(v, ast.AST))
    return refs


def _definitions(module: ast.Module) -> Iterator[Tuple[ast.AST, Optional[ast.ClassDef]]]:
    """Definitions at module level and in classes (recursively), with their class."""
    stack: List[Tuple[ast.AST, Optional[ast.ClassDef]]] = [(s, None) for s in module.body]
    while stack:
        node, owner = stack.pop()
        if isinstance(node, _DEFS):
            yield node, owner
            if isinstance(node, ast.ClassDef):
                stack.extend((s, node) for s in node.body)


def _cuda_world_size(node: ast.ClassDef, imports: ImportTable) -> bool:
    """A multi-process test class whose `world_size` is the number of CUDA devices: none run elsewhere."""
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "world_size":
            return any(
                isinstance(sub, ast.Call) and imports.resolve(sub.func) == "torch.cuda.device_count"
                for sub in walk(stmt)
            )
    return False


_SET_UP = frozenset({"setUp", "setUpClass", "setup_method", "setup_class"})


def _returns_instead(exit: ast.AST) -> bool:
    """An early exit (`early_cuda_exit`) that returns or continues without CUDA, where a skip would skip."""
    return isinstance(exit, ast.If) and isinstance(exit.body[-1], (ast.Return, ast.Continue))


def _skips_instead(exit: ast.AST) -> bool:
    """An early exit (`early_cuda_exit`) that skips the test: a skip helper's call, or a check ending in a skip."""
    return not isinstance(exit, ast.If) or _is_skip_call(exit.body[-1])


def _set_up_skips_without_cuda(node: ast.ClassDef, imports: ImportTable) -> bool:
    """A test class whose set-up skips without CUDA (fairscale's `DistributedTest.setUp`: `if not
    torch.cuda.is_available(): raise unittest.SkipTest(...)`): none of its tests run elsewhere."""
    return any(
        isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
        and stmt.name in _SET_UP
        and any(
            early_cuda_exit(s, imports) and not _returns_instead(s)
            for s in stmt.body
        )
        for stmt in node.body
    )


def _cuda_only_fixtures(module: ast.Module, imports: ImportTable) -> Set[str]:
    """The module's pytest fixtures that skip without CUDA (curobo's `cuda_device`: `if not
    torch.cuda.is_available(): pytest.skip(...)`, then `return "cuda:0"`; or `if torch.cuda.is_available():
    return ...`, then `pytest.skip(...)`): a test that asks for one runs only with CUDA."""
    names: Set[str] = set()
    for node in module.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not any(
            (dotted(d.func if isinstance(d, ast.Call) else d) or "").rsplit(".", 1)[-1] == "fixture"
            for d in node.decorator_list
        ):
            continue
        body = node.body
        for i, stmt in enumerate(body):
            if (early_cuda_exit(stmt, imports) and _skips_instead(stmt)) or (
                isinstance(stmt, ast.If)
                and not stmt.orelse
                and stmt.body
                and isinstance(stmt.body[-1], ast.Return)
                and is_cuda_check(stmt.test, imports)
                and not is_negative_cuda_check(stmt.test, imports)
                and i + 1 < len(body)
                and _is_skip_call(body[i + 1])
            ):
                names.add(node.name)
                break
    return names


def _is_test(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")


def _cuda_only_param(node: ast.AST, imports: ImportTable, local: LocalMarks) -> bool:
    """`pytest.param(torch.device("cuda"), marks=RunIf(min_cuda_gpus=1))`: a parametrised case that only
    runs with CUDA (`marks=` a CUDA-only mark, a name bound to one, or a list holding one)."""
    if not isinstance(node, ast.Call) or (imports.resolved(node.func) or dotted(node.func) or "") != "pytest.param":
        return False
    return any(k.arg == "marks" and _cuda_only_marker(k.value, imports, local) for k in node.keywords)


def mark_cuda_only(module: ast.Module, imports: ImportTable) -> int:
    """Mark (with CUDA_ONLY_ATTR) the parts of a test module that only run with CUDA: definitions
    decorated so, classes whose every test is, helpers used only from CUDA-only code, and
    `pytest.param` cases marked so. Returns how many definitions were marked."""
    local = local_markers(module, imports)
    params = 0
    for node in module_nodes(module):
        if _cuda_only_param(node, imports, local):
            setattr(node, CUDA_ONLY_ATTR, True)
            params += 1
    defs = list(_definitions(module))
    marked: Set[int] = {id(n) for n, _ in defs if _decorated(n, imports, local)}
    fixtures = _cuda_only_fixtures(module, imports)
    if fixtures:
        marked.update(
            id(n)
            for n, _ in defs
            if _is_test(n) and any(a.arg in fixtures for a in n.args.args)  # type: ignore[attr-defined]
        )
    for node, _ in defs:
        if isinstance(node, ast.ClassDef) and id(node) not in marked:
            tests = [s for s in node.body if _is_test(s)]
            if (
                (tests and all(id(t) in marked for t in tests))
                or _cuda_world_size(node, imports)
                or _set_up_skips_without_cuda(node, imports)
            ):
                marked.add(id(node))
    # a test class that derives from a CUDA-only one in the same module inherits its skip
    classes = {n.name: n for n, owner in defs if isinstance(n, ast.ClassDef) and owner is None}
    for _ in range(4):
        inherited = [
            n
            for n in classes.values()
            if id(n) not in marked
            and any(isinstance(b, ast.Name) and b.id in classes and id(classes[b.id]) in marked for b in n.bases)
        ]
        if not inherited:
            break
        marked.update(id(n) for n in inherited)
    # helpers, and classes that hold no tests (a model built only by CUDA-only tests)
    candidates = [
        n
        for n, _ in defs
        if (
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            or (isinstance(n, ast.ClassDef) and not any(_is_test(s) for s in n.body))
        )
        and not n.name.startswith(("test", "Test", "__"))
    ]
    for _ in range(4):  # helpers of helpers: a few rounds reach a fixed point in practice
        refs = _references(module, imports, marked)
        added = False
        for node in candidates:
            if id(node) in marked:
                continue
            uses = refs.get(node.name, [])
            if uses and all(uses):
                marked.add(id(node))
                added = True
        if not added:
            break
    count = 0
    for node, _ in defs:
        if id(node) in marked:
            setattr(node, CUDA_ONLY_ATTR, True)
            count += 1
    if count or params:
        # an import whose names only CUDA-only tests use serves them alone (allennlp's `from torch.cuda import
        # amp`, used by a helper of a `@requires_multi_gpu` test), and so does a module-level value only they
        # read (lightning-bolts' `_ARG_GPUS = f" --gpus={int(torch.cuda.is_available())}"`, in GPU-only cases)
        only = names_used_only_with_cuda(module, imports)
        for stmt in module.body if only else ():
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                bound = [(a.asname or a.name).split(".", 1)[0] for a in stmt.names]
            elif isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
                bound = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
            else:
                continue
            if bound and "*" not in bound and all(b in only for b in bound):
                setattr(stmt, CUDA_ONLY_ATTR, True)
    return count


def cuda_only_spans(module: ast.Module, imports: ImportTable, path: str) -> List[Tuple[int, int]]:
    """The line spans of a test module that only run with CUDA (for passes that see lines, not the
    walker's context): the whole module, CUDA-only definitions, CUDA branches, the rest of a block
    after an early exit without CUDA. [] for a file that is no test file."""
    if not is_test_module(path, module):
        return []
    if module_cuda_only(module, imports, path) is not None:
        return [(1, 1 << 30)]
    mark_cuda_only(module, imports)
    spans: List[Tuple[int, int]] = []
    for node in module_nodes(module):
        if isinstance(node, _DEFS) and getattr(node, CUDA_ONLY_ATTR, False):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            spans.append((first, node.end_lineno or node.lineno))
        elif isinstance(node, ast.Call) and getattr(node, CUDA_ONLY_ATTR, False):
            spans.append((node.lineno, node.end_lineno or node.lineno))
        if isinstance(node, (ast.If, ast.IfExp)) and is_cuda_check(node.test, imports):
            side = node.orelse if is_negative_cuda_check(node.test, imports) else node.body
            block = side if isinstance(side, list) else [side]
            if block:
                spans.append((block[0].lineno, block[-1].end_lineno or block[-1].lineno))
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            for i, stmt in enumerate(stmts[:-1]):
                if isinstance(stmt, ast.AST) and early_cuda_exit(stmt, imports):
                    last = stmts[-1]
                    spans.append((stmts[i + 1].lineno, last.end_lineno or last.lineno))
                    break
    return spans


def names_used_only_with_cuda(module: ast.Module, imports: ImportTable) -> Set[str]:
    """Names every use of which sits in CUDA-only test code (after `mark_cuda_only`): an import of
    one serves CUDA-only tests alone."""
    marked = {id(n) for n, _ in _definitions(module) if getattr(n, CUDA_ONLY_ATTR, False)}
    return {name for name, uses in _references(module, imports, marked).items() if uses and all(uses)}


# A module's `if __name__ == "__main__":` block that exercises the module's own definitions and checks or
# shows what they return (temporal_shift's "test inplace shift v.s. vanilla shift", a kernel wrapper
# compared with the reference it imports in the block) is the module's self-test: test code. A block that
# reads a command line (`argparse`, `sys.argv`, `fire`) or hands over to one function (`main()`) is a
# script's entry point instead: the product.
SELF_TEST_ATTR = "_portcheck_self_test"  # on the `If`: "test", or "cuda" when the module only runs with CUDA
_COMMAND_LINE = frozenset({"argparse", "fire", "click", "typer", "hydra", "absl", "jsonargparse", "tyro"})
_COMMAND_LINE_CALLS = frozenset({"parse_args", "parse_known_args", "ArgumentParser", "Fire", "input", "main"})


def _is_main_check(test: ast.AST) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _reads_command_line(block: Sequence[ast.stmt], readers: AbstractSet[str] = frozenset()) -> bool:
    """Whether the block reads the command line: imports a parser library, reads `sys.argv`, calls a parser,
    or calls one of `readers`, the module's functions that do (PixArt's `args = get_args()`)."""
    for node in walk(ast.Module(body=list(block), type_ignores=[])):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(n.split(".", 1)[0] in _COMMAND_LINE for n in names):
                return True
        elif isinstance(node, ast.Attribute) and node.attr == "argv":
            return True
        elif isinstance(node, ast.Call):
            name = (dotted(node.func) or "").rsplit(".", 1)[-1]
            if name in _COMMAND_LINE_CALLS or (isinstance(node.func, ast.Name) and node.func.id in readers):
                return True
    return False


# What a training or evaluation run does and a self-test does not: load data, join a process group, step.
_RUN_CALLS = frozenset({"DataLoader", "init_process_group", "step", "save", "save_pretrained", "fit", "train"})


def _checks_or_compares(block: Sequence[ast.stmt]) -> bool:
    """An `assert` on a result, an import of a reference, or a host clock or CUDA events read (`s1 = time.time()`
    ... `print(s2 - s1)`: videocomposer's `mha_flash.py` timing its own block) inside the block, and nothing a
    training or evaluation run does (`DataLoader`, `init_process_group`, `optimizer.step()`)."""
    found = False
    for node in walk(ast.Module(body=list(block), type_ignores=[])):
        if isinstance(node, ast.Call):
            last = (dotted(node.func) or "").rsplit(".", 1)[-1]
            if last in _RUN_CALLS and not _profiler_step(node):
                return False
            found = found or last in _CLOCKS
        if isinstance(node, ast.Assert) and "cuda" not in ast.dump(node.test).lower():
            found = True  # (`assert torch.cuda.is_available()` states a requirement; it checks no result)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found = True
    return found


_CLOCKS = frozenset({"time", "perf_counter", "monotonic", "elapsed_time", "timeit"})


def _profiler_step(call: ast.Call) -> bool:
    """`prof.step()` under `with profile(...) as prof:`: a profiler's schedule, not a training step."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "step"
        and isinstance(func.value, ast.Name)
        and func.value.id.lower().startswith("prof")
    )


def _cannot_import_without_cuda(module: ast.Module) -> bool:
    """The module cannot be imported without CUDA: it imports a CUDA extension, a CUDA-only library or
    Triton kernels at its own top level."""
    return (
        _imports_cuda_extension(module)
        or _imports_cuda_only_library(module)
        or any("triton" in n.split(".") for n in _top_level_imports(module))
    )


def mark_self_tests(module: ast.Module) -> None:
    """Mark the module's self-test block (see SELF_TEST_ATTR)."""
    defined = {
        s.name for s in module.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    if not defined:
        return
    readers = {
        stmt.name
        for stmt in module.body
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and _reads_command_line(stmt.body)
    }
    for stmt in module.body:
        if not (isinstance(stmt, ast.If) and _is_main_check(stmt.test)) or stmt.orelse:
            continue
        if _reads_command_line(stmt.body, readers) or not _checks_or_compares(stmt.body):
            continue
        used = {n.id for s in stmt.body for n in walk(s) if isinstance(n, ast.Name)}
        if used & defined:
            cuda = _cannot_import_without_cuda(module)
            setattr(stmt, SELF_TEST_ATTR, "cuda" if cuda else "test")
            if cuda:
                _mark_imports_only_for(module, stmt, used)


def _mark_imports_only_for(module: ast.Module, block: ast.stmt, used: Set[str]) -> None:
    """Mark (CUDA_ONLY_ATTR) the module's top-level imports whose names only `block` (a CUDA-only self-test)
    reads: `import torch.cuda.amp as amp` for the timing under `if __name__ == "__main__":`."""
    elsewhere = {
        n.id for s in module.body if s is not block for n in walk(s) if isinstance(n, ast.Name)
    }
    for stmt in module.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names = {(a.asname or a.name).split(".")[0] for a in stmt.names}
            if names and names <= used and not names & elsewhere:
                setattr(stmt, CUDA_ONLY_ATTR, True)


def mark_kernel_self_tests(module: ast.Module, imports: ImportTable) -> None:
    """In a module that defines Triton kernels (or launches compiled ones: GLM-130B's `kernels/__init__.py`), mark
    (with CUDA_ONLY_ATTR) its top-level `test*` functions
    that nothing else in the module calls outside its `__main__` block (lightllm's `test1()` beside
    `token_softmax_fwd`, which fills CUDA tensors and compares the kernel with torch), and that block itself
    when it reads no command line (lmdeploy's `w8a8_triton_kernels.py`): the kernels' own checks, which run
    only where the kernels do."""
    if not any(is_triton_kernel(s, imports) or _launches_raw_kernel(s) for s in module.body):
        return
    mains = [s for s in module.body if isinstance(s, ast.If) and _is_main_check(s.test)]
    for main in mains:
        if not _reads_command_line(main.body):
            setattr(main, SELF_TEST_ATTR, "cuda")
    tests = [
        s for s in module.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name.startswith("test")
    ]
    if not tests:
        return
    called: Set[str] = set()
    for stmt in module.body:
        if stmt not in mains:
            own = getattr(stmt, "name", None)
            called.update(n.id for n in walk(stmt) if isinstance(n, ast.Name) and n.id != own)
    for node in tests:
        if node.name not in called:
            setattr(node, CUDA_ONLY_ATTR, True)


def _launches_raw_kernel(stmt: ast.stmt) -> bool:
    """A module-level function or class that launches a raw CUDA kernel (see `launches_raw_kernel`)."""
    return isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
        isinstance(n, ast.Call) and launches_raw_kernel(n) for n in walk(stmt)
    )


# What a benchmark measures CUDA with: its clock (a device sync, CUDA events) and its memory counters.
_CUDA_MEASURES = frozenset(
    "torch.cuda." + n
    for n in (
        "synchronize Event max_memory_allocated memory_allocated max_memory_reserved memory_reserved"
        " reset_peak_memory_stats memory_stats"
    ).split()
) | {"triton.testing.do_bench_cudagraph"}  # timed by replaying a CUDA graph (trident's `benchmarks/`)


def cuda_measuring_calls(module: ast.Module, imports: ImportTable) -> List[ast.Call]:
    """The calls (in source order) by which a benchmark measures on CUDA outside any CUDA check
    (`torch.cuda.synchronize()` around its timer, `torch.cuda.Event(enable_timing=True)`,
    `torch.cuda.max_memory_allocated()`): the benchmark times on CUDA by design. Empty when it measures
    only where CUDA is, or not at all."""
    found: List[ast.Call] = []
    stack: List[ast.AST] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.If, ast.IfExp)) and is_cuda_check(node.test, imports):
            continue  # measured only where CUDA is: the benchmark has another path
        if isinstance(node, ast.Call) and imports.resolve(node.func) in _CUDA_MEASURES:
            found.append(node)
        stack.extend(children(node))
    return sorted(found, key=lambda c: (c.lineno, c.col_offset))


def cuda_harness_asserts(module: ast.Module, imports: ImportTable) -> Set[int]:
    """The nodes of `assert torch.cuda.is_available()` at a benchmark's top level or at the top of its
    `if __name__ == "__main__":` block (AQLM's `benchmark/matmul_benchmark.py`): the benchmark is a CUDA
    harness by design. Its assertion says so once; the CUDA calls it times are its workings. Empty when the
    module asserts no such thing."""
    blocks: List[Sequence[ast.stmt]] = [module.body]
    blocks += [s.body for s in module.body if isinstance(s, ast.If) and _is_main_check(s.test)]
    found: Set[int] = set()
    for block in blocks:
        for stmt in block:
            if (
                isinstance(stmt, ast.Assert)
                and is_cuda_check(stmt.test, imports)
                and not is_negative_cuda_check(stmt.test, imports)
            ):
                found.update(id(n) for n in walk(stmt))
    return found
