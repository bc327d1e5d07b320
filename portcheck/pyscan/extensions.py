"""Whether a module builds extensions (a package's build script), and whether it compiles C++ only, from
its path and text.

YOLOX's `JitOp` builds `CppExtension`s from `glob("cocoeval/*.cpp")` and passes its generic
`extra_cuda_cflags` to `cpp_extension.load`: with no `.cu` source nvcc never runs, so those flags
and the loader are no CUDA lock-in. A module counts when it builds with `CppExtension` (or setuptools'
`Extension`, or `cythonize`) and never calls `CUDAExtension` nor passes `cuda_sources=` or `with_cuda=True`,
and its literals name C, C++ or Cython sources but no CUDA source (`.cu`, `.cuh`). One
`cpp_extension.load(...)` call is judged the same way from its arguments (`builds_cpu_only`).
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath
from typing import Dict, Set, Tuple

from portcheck.pyscan.imports import ImportTable, dotted
from portcheck.pyscan.nodes import walk

_KERNEL_DECORATORS = frozenset(
    {
        "triton.jit",
        "triton.autotune",
        "triton.heuristics",
        "triton.runtime.jit.jit",
        "triton.runtime.autotuner.autotune",
        # `triton-pre-mlir`, the Triton of before its MLIR rewrite that MPT's flash attention (and its LLaVA
        # forks) import as `triton`
        "triton_pre_mlir.jit",
        "triton_pre_mlir.autotune",
        "triton_pre_mlir.heuristics",
    }
)


def is_triton_kernel(node: ast.AST, imports: ImportTable) -> bool:
    """Whether a definition is a Triton kernel (`@triton.jit`, `@triton.autotune(...)`)."""
    for deco in getattr(node, "decorator_list", []):
        target = deco.func if isinstance(deco, ast.Call) else deco
        if imports.resolve(target) in _KERNEL_DECORATORS:
            return True
    return False


# (setuptools' own `Extension` and Cython's `cythonize`: zju3dv's NeRF repositories build C and `.pyx` extensions with
# torch's `BuildExtension` as the command class, and import `CUDAExtension` without calling it)
_CPP_BUILD = re.compile(r"\bCppExtension\b|\bExtension\s*\(|\bcythonize\s*\(")
_CUDA_BUILD = re.compile(
    r"\bCUDAExtension\s*\(|=\s*(?:\w+\.)*CUDAExtension\b|\bcuda_sources\b|\bwith_cuda\s*=\s*True\b|\.cuh?['\"]"
)
_CPP_SOURCE = re.compile(r"\.(?:cpp|cc|cxx|c|pyx)['\"]")

CPP_ONLY_NOTE = (
    "lowered to info: this module builds C++ extensions only (`CppExtension`, C++ sources and no `.cu`), so"
    " nvcc and its flags never run"
)


def builds_cpp_only(text: str) -> bool:
    if "Extension" not in text and "cythonize" not in text:
        return False
    return bool(_CPP_BUILD.search(text) and _CPP_SOURCE.search(text)) and not _CUDA_BUILD.search(text)


_CPU_SOURCE = re.compile(r"\.(?:cpp|cc|cxx|c)$")
_CUDA_SOURCE = re.compile(r"\.cuh?$")
_CUDA_BUILD_KEYWORDS = frozenset({"extra_cuda_cflags", "cuda_sources"})


def builds_cpu_only(call: ast.Call) -> bool:
    """`load(name=..., sources=["filter_pids.cpp"], extra_cflags=["-O3"])` (ColBERT's search extensions): a
    build whose literal sources are all C++ and that asks for nothing of CUDA (no `.cu` source, no
    `with_cuda=True`, no CUDA flags or sources) makes a CPU extension, which binds nothing CUDA-bound."""
    sources = next((k.value for k in call.keywords if k.arg == "sources"), call.args[1] if len(call.args) > 1 else None)
    if sources is None:
        return False
    names = [n.value for n in walk(sources) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    if not any(_CPU_SOURCE.search(n) for n in names) or any(_CUDA_SOURCE.search(n) for n in names):
        return False
    for keyword in call.keywords:
        if keyword.arg in _CUDA_BUILD_KEYWORDS:
            return False
        if keyword.arg == "with_cuda" and not (isinstance(keyword.value, ast.Constant) and not keyword.value.value):
            return False
    return True


_BUILD_IMPORT = re.compile(r"^\s*(?:from|import)\s+(?:setuptools|distutils|torch\.utils\.cpp_extension)\b", re.M)


_FFI_IMPORT = re.compile(r"^\s*(?:from\s+torch\.utils\.ffi\s+import|import\s+torch\.utils\.ffi\b)", re.M)


def is_build_script(path: str, text: str) -> bool:
    """A package's `setup.py` that imports setuptools (or torch's extension builder): what it runs decides
    what is compiled and installed. A device check there (`if torch.cuda.is_available():`, `suffix ==
    "cuda"`) picks which extensions to build, and off CUDA the build picks the C++ ones; nothing runs on a
    device. So is any module that imports torch's legacy FFI builder, which only builds (dla's `lib/build.py`:
    `if torch.cuda.is_available(): sources += ['src/batchnormp_cuda.c']`, then `create_extension(...)`)."""
    return (PurePosixPath(path.replace("\\", "/")).name == "setup.py" and bool(_BUILD_IMPORT.search(text))) or bool(
        _FFI_IMPORT.search(text)
    )


_LOADERS = frozenset({"torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
BUILDER_NOTE = (
    "lowered to info: in `{name}`, a builder of the extensions its callers name (their sources, reported where"
    " they are); how it builds (the toolkit's settings, the GPU's name for its cache) is that build's workings"
)


def extension_builders(module: ast.Module, imports: ImportTable) -> Dict[Tuple[int, int], str]:
    """StyleGAN's `torch_utils/custom_ops.py` (copied into most GAN and 3D-aware repositories): `get_plugin(module_name,
    sources, ...)` hands the sources its callers give (`bias_act.py`'s `sources=['bias_act.cpp', 'bias_act.cu']`) to
    `cpp_extension.load`; `os.environ['TORCH_CUDA_ARCH_LIST'] = ''` in it and `torch.cuda.get_device_name()` in the
    `_get_mangled_gpu_name` it calls name its build and cache, nothing a port changes there. Returns, for each
    module-level function that loads sources it does not spell (a parameter, not a literal list), and for each
    module-level function only such functions call, its (first, last) lines -> the builder's name."""
    functions = {s.name: s for s in module.body if isinstance(s, _FUNCTIONS)}
    builders = {name for name, f in functions.items() if any(_loads_given_sources(c, f, imports) for c in walk(f))}
    if not builders:
        return {}
    callers: Dict[str, Set[str]] = {}
    for name, f in functions.items():
        for node in walk(f):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
                callers.setdefault(node.func.id, set()).add(name)
    spans: Dict[Tuple[int, int], str] = {}
    for name, f in functions.items():
        if name in builders:
            spans[(f.lineno, f.end_lineno or f.lineno)] = name
        elif callers.get(name) and callers[name] <= builders and name.startswith("_"):
            spans[(f.lineno, f.end_lineno or f.lineno)] = sorted(callers[name])[0]
    # (a name the module reads elsewhere, at module level, is no private helper: `callers` only counts functions)
    return spans


def _loads_given_sources(node: ast.AST, function: ast.AST, imports: ImportTable) -> bool:
    if not isinstance(node, ast.Call) or imports.resolve(node.func) not in _LOADERS:
        return False
    sources = next((k.value for k in node.keywords if k.arg in ("sources", "cuda_sources")), None)
    if sources is None and len(node.args) > 1:
        sources = node.args[1]
    if sources is None:
        return False
    if not isinstance(function, _FUNCTIONS):
        return False
    parameters = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    spelt = [n for n in walk(sources) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    names = {n.id for n in walk(sources) if isinstance(n, ast.Name)}
    # `sources=sources`, `sources=cached_sources` (a list made from the parameter): no source of its own
    return not spelt and bool(names) and (bool(names & parameters) or _derived_from(function, names, parameters))


def _derived_from(function: ast.AST, names: Set[str], parameters: Set[str]) -> bool:
    """Whether some name of `names` is assigned, in `function`, from an expression that reads a parameter."""
    for node in walk(function):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
            if {n.id for n in walk(node.value) if isinstance(n, ast.Name)} & parameters:
                return True
    return False


OP_WRAPPER_NOTE = (
    "lowered to info: inside a wrapper of the compiled op `{name}` (bound by `ext_loader.load_ext`, mmcv's loader of"
    " its `_ext` extension); the port replaces or re-targets the op as a whole, not this code around it"
)


def compiled_op_wrappers(module: ast.Module) -> Dict[Tuple[int, int], str]:
    """mmcv's ops and their copies (BEVFormer's `multi_scale_deformable_attn_function.py`, copied into most driving
    repositories): `ext_module = ext_loader.load_ext('_ext', ['ms_deform_attn_forward', ...])`, then autograd
    Functions whose `forward`/`backward` call `ext_module.ms_deform_attn_forward(...)`, decorated with
    `torch.cuda.amp.custom_fwd`. Returns, for each module-level class or function that calls through a name so
    bound, its (first, last) lines -> the first op it calls (`ext_module.ms_deform_attn_forward`)."""
    bound: Set[str] = set()
    for statement in module.body:
        if (
            isinstance(statement, ast.Assign)
            and isinstance(statement.value, ast.Call)
            and (dotted(statement.value.func) or "").endswith("ext_loader.load_ext")
        ):
            bound.update(t.id for t in statement.targets if isinstance(t, ast.Name))
    if not bound:
        return {}
    spans: Dict[Tuple[int, int], str] = {}
    for statement in module.body:
        if not isinstance(statement, (ast.ClassDef, *_FUNCTIONS)):
            continue
        for node in walk(statement):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in bound
            ):
                spans[(statement.lineno, statement.end_lineno or statement.lineno)] = dotted(node.func) or ""
                break
    return spans

