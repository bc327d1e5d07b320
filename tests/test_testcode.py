"""Test files: which paths hold tests, and whether a file's place is judged inside the scanned folder."""

from pathlib import Path

import pytest
from helpers import scan_tree

from portcheck.config import Config
from portcheck.pyscan.testcode import is_data_pipeline_path, is_evaluation_path, is_test_path
from portcheck.runner import scan_paths
from portcheck.scanner import project_path


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_ops.py", "test/layers/ops.py", "pkg/tests/conftest.py", "ops_test.py", "src/pkg/testing.py",
        "torchrec/schema/api_tests/planner.py", "pkg/unit_tests/ops.py", "e2e_tests/run.py",
    ],
)
def test_test_paths(path):
    assert is_test_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/ops.py", "latest/train.py", "contest.py", "test_data/loader.py", "pkg/test_utils/mesh.py",
        "scripts/tensor_test/op.py", "",
    ],
)
def test_other_paths(path):
    assert not is_test_path(path)


def test_project_path_strips_the_deepest_scanned_folder():
    assert project_path("tests/fixture/tests/test_a.py", ("tests", "tests/fixture")) == "tests/test_a.py"
    assert project_path("tests/fixture/train.py", ("tests/fixture",)) == "train.py"
    assert project_path("tests/fixture/train.py", ()) == "tests/fixture/train.py"
    assert project_path("testsuite/train.py", ("tests",)) == "testsuite/train.py"


def _notes(folder, cwd):
    result = scan_paths([folder], Config(respect_gitignore=False), target="neuron", cwd=cwd, jobs=1)
    return {(r.path, f.code): f.note for r in result.files for f in r.findings}


def test_a_project_kept_under_tests_is_not_test_code_when_scanned_itself(tmp_path):
    repo = tmp_path / "tests" / "fixture_repo"
    repo.mkdir(parents=True)
    (repo / "train.py").write_text("import torch\nmodel = Net().cuda()\n", encoding="utf-8")
    inside = _notes(repo, tmp_path)
    assert inside == {("tests/fixture_repo/train.py", "DEV002"): ""}
    # Scanned from above, the same file is part of the outer project's test suite: lowered, and said so.
    outer = _notes(tmp_path, tmp_path)
    assert "test code" in outer[("tests/fixture_repo/train.py", "DEV002")]


@pytest.mark.parametrize(
    "path,cuda_only",
    [
        ("tests/test_common_gpu.py", True),
        ("tests/test_gpu_examples.py", True),
        ("tests/test_ops_cuda.py", True),
        ("tests/distributed/two_gpu_unit_test.py", True),
        ("tests/test_multigpu.py", True),
        ("tests/test_gpt2.py", False),  # a word, not a substring
        ("tests/test_cudnn_flags.py", False),
        ("tests/gpu_utils.py", False),  # a helper in a test folder, not a test module named for the GPU
        ("src/gpu_ops.py", False),
    ],
)
def test_a_test_module_named_for_the_gpu_only_runs_with_cuda(path, cuda_only):
    import ast

    from portcheck.pyscan.imports import ImportTable
    from portcheck.pyscan.testcode import module_cuda_only

    module = ast.parse("import torch\n")
    assert (module_cuda_only(module, ImportTable.from_module(module), path) is not None) is cuda_only


_KERNEL_TEST = """import torch
import unittest
import window_process


class WindowProcess(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, shift):
        return window_process.roll_forward(x, shift)


class Test(unittest.TestCase):
    def test_forward(self, dtype=torch.float32):
        x = torch.randn(4, 4, dtype=dtype).cuda()
        self.assertTrue(torch.equal(WindowProcess.apply(x, 1), torch.roll(x, 1)))

    def test_forward_fp16(self):
        self.test_forward(dtype=torch.float16)
"""


@pytest.mark.parametrize(
    "text,cuda_only",
    [
        (_KERNEL_TEST, True),
        # A test on the CPU too: it tests the op, not only a CUDA kernel.
        (_KERNEL_TEST.replace("torch.randn(4, 4, dtype=dtype).cuda()", "torch.randn(4, 4, dtype=dtype)"), False),
        # No compiled op wrapped: a plain test that moves a model to CUDA is lock-in of the test suite.
        (_KERNEL_TEST.replace("window_process.roll_forward(x, shift)", "torch.roll(x, shift)"), False),
    ],
)
def test_the_unit_test_of_a_compiled_cuda_kernel_only_runs_with_cuda(text, cuda_only):
    import ast

    from portcheck.pyscan.imports import ImportTable
    from portcheck.pyscan.testcode import module_cuda_only

    module = ast.parse(text)
    why = module_cuda_only(module, ImportTable.from_module(module), "kernels/window/unit_test.py")
    assert (why is not None) is cuda_only


@pytest.mark.parametrize(
    "path,text,test_code",
    [
        ("tools/test.py", "import torch\n\ndef main():\n    model = Net().cuda()\n", False),  # an evaluation script
        ("pkg/apis/test.py", "import torch\n\ndef single_gpu_test(model):\n    model = model.cuda()\n", False),
        ("pkg/zero/test.py", "import torch\n\ndef test1():\n    x = torch.ones(2).cuda()\n", True),
        ("models/ops/test.py", "import torch\n\ndef check_forward_equal():\n    x = torch.ones(2).cuda()\n", True),
        # TransMVSNet's and KD-MVS's `test.py`: the evaluation script's depth filter checks what it is given
        (
            "test.py",
            "import torch\n\ndef check_geometric_consistency(depth_ref, intrinsics_ref):\n    pass\n\n"
            "model = Net().cuda()\n",
            False,
        ),
        ("models/ops/test.py", "import torch\n\ndef check_gradient(channels=4):\n    x = torch.ones(2).cuda()\n", True),
        ("tests/test.py", "import torch\n\ndef main():\n    model = Net().cuda()\n", True),
        # CenterTrack's `src/test.py`: `def test(opt):` is the evaluation script's entry point, no test
        ("src/test.py", "import torch\n\ndef test(opt):\n    model = Net().cuda()\n", False),
        ("src/test.py", "import torch\n\ndef test():\n    x = torch.ones(2).cuda()\n", True),
        # a module of test cases under another name (Synchronized-BatchNorm-PyTorch's `unittest.py`)
        (
            "sync_batchnorm/unittest.py",
            "import unittest\nimport torch\n\nclass TorchTestCase(unittest.TestCase):\n"
            "    def check(self):\n        x = torch.ones(2).cuda()\n",
            True,
        ),
        ("sync_batchnorm/replicate.py", "import torch\n\nclass Callback:\n    x = torch.ones(2).cuda()\n", False),
        # an op's numerical check under another name (`forward_backward_error.py` beside InternImage's
        # deformable-attention op): `gradcheck` imported, tests defined
        (
            "ops/attn/forward_backward_error.py",
            "import torch\nfrom torch.autograd import gradcheck\n\ndef check_equal(dim=4):\n"
            "    x = torch.ones(2).cuda()\n",
            True,
        ),
        # `gradcheck` in a module that defines no test (a search script's `def test(N, H, W)`, an op's module)
        (
            "ops/scripts/search.py",
            "import torch\nfrom torch.autograd import gradcheck\n\ndef test(n, h):\n    x = torch.ones(2).cuda()\n",
            False,
        ),
        ("ops/check.py", "import torch\n\ndef check_equal(dim=4):\n    x = torch.ones(2).cuda()\n", False),
        # a `test/` folder inside a package: CornerNet-Lite's `core/test/cornernet.py` is its inference code
        ("core/test/cornernet.py", "import torch\n\ndef decode(x):\n    return x.cuda()\n", False),
        ("core/test/helpers.py", "import torch\nimport pytest\n\ndef make(x):\n    return x.cuda()\n", True),
        ("test/helpers.py", "import torch\n\ndef make(x):\n    return x.cuda()\n", True),
        ("gpytorch/test/utils.py", "import torch\n\ndef make(x):\n    return x.cuda()\n", True),  # testing utilities
        ("pkg/tests/helpers.py", "import torch\n\ndef make(x):\n    return x.cuda()\n", True),
        # torchrec's `distributed/test_utils/test_model_parallel.py`: tests on a base derived from a TestCase
        (
            "pkg/test_utils/test_model_parallel.py",
            "import torch\n\nclass Shared(MultiProcessTestBase):\n    def _run(self):\n"
            "        x = torch.ones(2).cuda()\n",
            True,
        ),
        # named as tests outside a test folder: an evaluation script (detectron2's `tools/test_net.py`, MUNIT's
        # `test_batch.py`) or an API with options (mmfashion's `apis/test_retriever.py`) is product code
        ("tools/test_net.py", "import torch\n\ndef main(args):\n    model = Net().cuda()\n", False),
        ("test_batch.py", "import torch\nmodel = Net().cuda()\n", False),
        (
            "pkg/apis/test_retriever.py",
            "import torch\n\ndef test_retriever(model, data, cfg, distributed=False):\n    model = model.cuda()\n",
            False,
        ),
        ("ops_test.py", "import torch\n\ndef test_add():\n    x = torch.ones(2).cuda()\n", True),
        ("test_ops.py", "import torch\n\ndef test_add(device):\n    x = torch.ones(2).cuda()\n", True),
        ("pkg/tests/run_all.py", "import torch\nmodel = Net().cuda()\n", True),
    ],
)
def test_a_file_named_test_py_is_test_code_when_it_defines_tests(tmp_path, path, text, test_code):
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text(text, encoding="utf-8")
    notes = _notes(tmp_path, tmp_path)
    assert ("test code" in notes[(path, "DEV002")]) == test_code, notes


@pytest.mark.parametrize(
    "path,expected",
    [
        ("dinov2/eval/linear.py", True),
        ("utils/metrics.py", False),  # often the training losses
        ("evaluations/th_evaluator.py", True),
        ("eval_retrieval_video.py", True),
        ("open_flamingo/eval/utils.py", True),
        ("train.py", False),
        ("models/retrieval.py", False),  # `eval` only as part of a word
        ("evaluate_model_card.md", True),
        ("ultralytics/yolo/v8/pose/val.py", True),  # a validator run over a dataset
        ("interval.py", False),
        ("MedicalEval/Prefix_based_Score/mplug_owl/modeling_mplug_owl.py", True),  # Multi-Modality-Arena
        ("Interval/x.py", False),
        ("mmdet/ValidPath.py", False),  # a capitalised word inside the name, not its first
    ],
)
def test_evaluation_paths(path, expected):
    assert is_evaluation_path(path) is expected


@pytest.mark.parametrize(
    "path,expected",
    [
        ("onmt/transforms/bart.py", True),
        ("dpr/data/reader_data.py", True),
        ("src/pkg/datasets/coco.py", True),
        ("DeBERTa/data/dataloader.py", True),
        ("dpr/models/reader.py", False),
        ("train_data.py", False),  # a word of a name, not the pipeline's folder
        ("metadata.py", False),
    ],
)
def test_data_pipeline_paths(path, expected):
    assert is_data_pipeline_path(path) is expected


@pytest.mark.parametrize(
    "source,cuda_only",
    [
        ("import torch\nimport tinycudann as tcnn\n", True),  # torch-ngp's testing/test_ffmlp.py
        ("import torch\nfrom flash_attn import flash_attn_func\n", True),
        ("import torch\ntry:\n    import tinycudann as tcnn\nexcept ImportError:\n    tcnn = None\n", False),
        ("import torch\nimport numpy as np\n", False),
        # Megatron's GTP tests: TransformerEngine, NVIDIA's CUDA library, imported after a module-level skip
        ("import pytest\nif not HAVE_GTP:\n    pytest.skip('TE', allow_module_level=True)\n"
         "import transformer_engine.pytorch as te\n", True),
        # a mark that skips outside NVIDIA's containers (Megatron's `test_emerging_optimizers.py`)
        ("import os, pytest\npytestmark = [pytest.mark.skipif(Version(os.getenv('NVIDIA_PYTORCH_VERSION', '24.01'))"
         " <= Version('25.05'), reason='LTS')]\n", True),
        ("import pytest\npytestmark = pytest.mark.skipif(not HAVE_TE, reason='needs TransformerEngine')\n", True),
        ("import os, pytest\npytestmark = pytest.mark.skipif(os.getenv('CI_FAST') == '1', reason='slow')\n", False),
    ],
)
def test_a_test_module_that_imports_a_cuda_only_library_only_runs_with_cuda(source, cuda_only):
    import ast

    from portcheck.pyscan.imports import ImportTable
    from portcheck.pyscan.testcode import module_cuda_only

    module = ast.parse(source)
    assert (module_cuda_only(module, ImportTable.from_module(module), "testing/test_ffmlp.py") is not None) is cuda_only


@pytest.mark.parametrize(
    "source,expected",
    [
        # temporal-shift-module's ops/temporal_shift.py: checks its own module against a reference
        ("import torch\nclass Shift:\n    pass\nif __name__ == '__main__':\n    assert Shift() is not None\n", "test"),
        # lingua's causal_conv1d wrapper: compares with the reference it imports, CUDA extension at the top
        ("import torch\nimport causal_conv1d_cuda\ndef conv(x):\n    return x\nif __name__ == '__main__':\n"
         "    from causal_conv1d import causal_conv1d_fn as ref\n    print(conv(1) - ref(1))\n", "cuda"),
        ("import torch\nfrom mamba_ssm.ops.triton.ssd_combined import fwd\ndef scan(x):\n    return fwd(x)\n"
         "if __name__ == '__main__':\n    from mamba_ssm import ref\n    print(scan(1), ref(1))\n", "cuda"),
        # a script's entry point: reads its command line
        ("import argparse\ndef main(a):\n    pass\nif __name__ == '__main__':\n"
         "    a = argparse.ArgumentParser().parse_args()\n    assert a\n    main(a)\n", ""),
        # ImageReward's train.py: loads data and trains (its options come from another module)
        ("import torch\nfrom config.options import *\ndef init_seeds(s):\n    pass\nif __name__ == '__main__':\n"
         "    from data import ds\n    init_seeds(1)\n    loader = DataLoader(ds('test'))\n    optimizer.step()\n", ""),
        # a CUDA requirement states what the script needs; it checks no result
        ("import torch\ndef bench():\n    pass\nif __name__ == '__main__':\n    assert torch.cuda.is_available()\n"
         "    bench()\n", ""),
        # nothing of the module's own is exercised
        ("import torch\nif __name__ == '__main__':\n    import other\n    assert other.run()\n", ""),
        # xtuner's Triton grouped GEMM: profiles its kernel (`prof.step()` steps the profiler's schedule)
        ("import torch\nimport triton\ndef gemm(a):\n    return a\nif __name__ == '__main__':\n"
         "    from pathlib import Path\n    with profile() as prof:\n        gemm(1)\n        prof.step()\n"
         "    torch.cuda.empty_cache()\n", "cuda"),
        ("import torch\ndef train(m):\n    pass\nif __name__ == '__main__':\n    from opt import optimizer\n"
         "    train(1)\n    optimizer.step()\n", ""),
        # PixArt's `scripts/inference.py`: `args = get_args()`, a function of the module that parses the command
        # line, then a check of an option: a script's entry point
        ("import argparse\ndef get_args():\n    return argparse.ArgumentParser().parse_args()\n"
         "def visualize(x):\n    pass\nif __name__ == '__main__':\n    args = get_args()\n"
         "    assert args.algo in ['dpm']\n    visualize(args)\n", ""),
    ],
)
def test_a_modules_self_test_is_test_code(source, expected):
    import ast

    from portcheck.pyscan.testcode import SELF_TEST_ATTR, mark_self_tests

    module = ast.parse(source)
    mark_self_tests(module)
    main = [s for s in module.body if isinstance(s, ast.If)]
    assert getattr(main[-1], SELF_TEST_ATTR, "") == expected


def _lines_found(root: Path, name: str, text: str) -> list:
    """The lines of every finding when `text` is the test module `tests/<name>` of a project at `root`."""
    path = root / "tests" / name
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    result = scan_paths([root], Config(respect_gitignore=False), target="neuron", cwd=root, jobs=1)
    return sorted(f.line for r in result.files for f in r.findings)


# fairscale's test helpers: marks a shared testing module binds, and a base class whose set-up skips
FAIRSCALE_TEST = """
import unittest
import torch
from fairscale.fair_dev.testing.testing import skip_if_single_gpu


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l0 = torch.nn.Linear(2, 2).cuda()


@skip_if_single_gpu
def test_shared_weights():
    Model()


class DistributedTest(unittest.TestCase):
    def setUp(self):
        if torch_version() < (1, 6, 0):
            raise unittest.SkipTest("old torch")
        if not torch.cuda.is_available():
            raise unittest.SkipTest("CUDA not available, skipping test")

    def _train(self, model):
        return model.cuda()


class TestParity(DistributedTest):
    def test_parity(self):
        torch.cuda.set_device(0)


@unittest.skipIf(not is_sm_at_least_90(), "Need SM 9.0+")
def test_fp8():
    x = torch.ones(2, device="cuda")


def test_on_cpu():
    y = torch.ones(2).cuda()
"""


def test_fairscale_style_cuda_only_tests_report_nothing(tmp_path):
    lines = _lines_found(tmp_path, "test_fsdp.py", FAIRSCALE_TEST)
    # only the test that runs without CUDA keeps its finding
    assert lines == [FAIRSCALE_TEST.splitlines().index("    y = torch.ones(2).cuda()") + 1], lines


@pytest.mark.parametrize(
    "name,cuda_only",
    [
        ("skip_if_single_gpu", True),
        ("skip_if_less_than_four_gpu", True),
        ("skip_if_py39_no_cuda", True),
        ("skip_if_no_cuda", True),
        ("skip_if_cuda", False),  # skips where CUDA is: the test runs on the CPU
        ("skip_if_py38", False),
    ],
)
def test_skip_marks_named_for_missing_gpus(name, cuda_only):
    import ast

    from portcheck.pyscan.context import cuda_only_decorator
    from portcheck.pyscan.imports import ImportTable

    module = ast.parse(f"@{name}\ndef test_x():\n    pass\n")
    deco = module.body[0].decorator_list[0]  # type: ignore[attr-defined]
    assert cuda_only_decorator(deco, ImportTable.from_module(module)) is cuda_only


@pytest.mark.parametrize(
    "condition,cuda_only",
    [
        ("not dist.is_nccl_available()", True),  # pytorch/ignite: NCCL, CUDA's collectives
        ("not torch.cuda.is_available()", True),
        ("not dist.is_gloo_available()", False),
    ],
)
def test_skip_conditions_that_ask_for_cuda(condition, cuda_only):
    import ast

    from portcheck.pyscan.context import cuda_only_decorator
    from portcheck.pyscan.imports import ImportTable

    header = "import torch\nimport torch.distributed as dist\nimport pytest\n"
    module = ast.parse(f"{header}@pytest.mark.skipif({condition}, reason='x')\ndef test_x():\n    pass\n")
    deco = module.body[-1].decorator_list[0]  # type: ignore[attr-defined]
    assert cuda_only_decorator(deco, ImportTable.from_module(module)) is cuda_only


@pytest.mark.parametrize(
    "guarded, where",
    [
        (False, "examples/benchmarks"),
        (True, "examples/benchmarks"),
        (False, "benchmarks"),
        (True, "benchmarks"),
        (False, "."),  # `bench.py` at the repository's top: a benchmark by its name
    ],
)
def test_a_benchmark_that_measures_on_cuda_reports_its_workings_at_info(tmp_path: Path, guarded, where):
    sync = "torch.cuda.synchronize()"
    if guarded:
        sync = f"if torch.cuda.is_available():\n    {sync}"
    bench = (
        "import time\nimport torch\nfrom pkg.model import Net\n\n"
        "device = 'cuda'\nmodel = Net().to(device)\n"
        f"start = time.time()\nmodel(torch.ones(8, device=device))\n{sync}\n"
        "print(time.time() - start)\n"
    )
    path = "bench.py" if where == "." else f"{where}/bench_net.py"
    files = {"pkg/__init__.py": "", "pkg/model.py": "class Net:\n    pass\n", path: bench}
    found = scan_tree(tmp_path, files, top=True)
    if where == "benchmarks" and not guarded:
        # a benchmark suite's harness: the measurement stands for it; its workings are not reported
        assert found[(path, 9, "RT001")].severity.value != "info"
        assert (path, 5, "DEV001") not in found and (path, 6, "DEV001") not in found, sorted(found)
        return
    device = found[(path, 5, "DEV001")]
    if guarded:  # it measures wherever it runs: its device choice is the benchmark's lock-in
        assert device.severity.value != "info", device
    else:
        assert device.severity.value == "info" and "measures on CUDA by design (line 9)" in device.note
        assert found[(path, 9, "RT001")].severity.value != "info"


MOCKED_BACKEND = """
import torch.distributed as dist
from unittest.mock import MagicMock, patch


def test_falls_back_to_gloo():
    with patch("torch.distributed.get_backend", return_value=dist.Backend.NCCL):
        pass
    backend = MagicMock()
    backend.return_value = "nccl"


def test_nccl_group():
    dist.init_process_group(backend="nccl")
"""


def test_what_a_tests_mock_hands_back_is_made_up_data(tmp_path: Path):
    # pytorch/tnt: tests fake an NCCL backend to check the fallback to gloo; they run anywhere
    lines = _lines_found(tmp_path, "test_backend.py", MOCKED_BACKEND)
    assert lines == [MOCKED_BACKEND.splitlines().index('    dist.init_process_group(backend="nccl")') + 1], lines


CUDA_ONLY_IMPORT = """
import pytest
import torch
from torch.cuda import amp
from torch.cuda.amp import GradScaler


def _train(x, mixed):
    with amp.autocast(enabled=mixed):
        return x.sum()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_training():
    _train(torch.ones(2), True)


def test_scaler():
    GradScaler()
"""


def test_an_import_only_cuda_only_tests_use_reports_nothing(tmp_path: Path):
    # allenai/allennlp: `from torch.cuda import amp` serves a helper of a `@requires_multi_gpu` test alone
    lines = sorted(set(_lines_found(tmp_path, "test_fsdp.py", CUDA_ONLY_IMPORT)))
    text = CUDA_ONLY_IMPORT.splitlines()
    assert lines == [text.index("from torch.cuda.amp import GradScaler") + 1, text.index("    GradScaler()") + 1], lines


# lightning-bolts' tests/models/test_scripts.py: the skip's arguments live in `tests/__init__.py`, named for the
# GPU they require, and a module-level value only the GPU-only cases read
GPU_ONLY_CASES = """
import pytest
import torch
from tests import _MARK_REQUIRE_GPU

_ARG_GPUS = f" --gpus={int(torch.cuda.is_available())}"


@pytest.mark.parametrize(
    ("cli_args",),
    [
        pytest.param(" --max_steps=2" + _ARG_GPUS, marks=pytest.mark.skipif(**_MARK_REQUIRE_GPU)),
        pytest.param(
            f" --trainer.gpus={int(torch.cuda.is_available())}", marks=[pytest.mark.skipif(**_MARK_REQUIRE_GPU)]
        ),
        pytest.param(f" --max_steps=2 --gpus={int(torch.cuda.is_available())}"),
    ],
)
def test_cli_run(cli_args):
    run(cli_args)
"""


def test_cases_marked_by_a_gpu_requirement_and_the_values_only_they_read_report_nothing(tmp_path: Path):
    lines = sorted(set(_lines_found(tmp_path, "test_scripts.py", GPU_ONLY_CASES)))
    text = GPU_ONLY_CASES.splitlines()
    unmarked = '        pytest.param(f" --max_steps=2 --gpus={int(torch.cuda.is_available())}"),'
    assert lines == [text.index(unmarked) + 1], lines


# captum's tests/utils/test_common.py: devices as a test's input data for a sort by device index
DEVICE_DATA = """
import torch


def test_sort_key_list():
    key_list = [torch.device("cuda:13"), torch.device("cuda:0")]
    assert [k.index for k in sort_key_list(key_list)] == [0, 13]


def test_move():
    x = torch.ones(2).to(torch.device("cuda:0"))
    assert x.sum() == 2


def test_command_line():
    run_opts = parse_command_line(["params.yaml", "--device", "cuda:1"])
    assert run_opts["device"] == "cuda:1"
"""


def test_devices_built_as_a_tests_input_data_report_nothing(tmp_path: Path):
    lines = sorted(set(_lines_found(tmp_path, "test_common.py", DEVICE_DATA)))
    text = DEVICE_DATA.splitlines()
    assert lines == [text.index('    x = torch.ones(2).to(torch.device("cuda:0"))') + 1], lines


def test_a_training_loop_in_evaluation_code_is_a_training_step(tmp_path):
    # salina's `a2c/complete_with_async_eval/main.py` trains; the folder only says it also evaluates
    loop = (
        "import torch\n\ndef run(model, optimizer, batches):\n    for batch in batches:\n"
        "        loss = model(batch)\n        print(loss.item())\n        optimizer.zero_grad()\n"
        "        loss.backward()\n        optimizer.step()\n\ndef score(model, loader):\n"
        "    for x in loader:\n        out = model(x.to('neuron'))\n        keep = out.nonzero()\n"
    )
    found = scan_tree(tmp_path, {"a2c/complete_with_async_eval/main.py": loop})
    train = found[("a2c/complete_with_async_eval/main.py", 6, "XLA005")]
    assert "evaluation code" not in train.note and train.severity.value == "minor"
    assert "evaluation code" in found[("a2c/complete_with_async_eval/main.py", 14, "XLA004")].note


@pytest.mark.parametrize(
    "path,expected",
    [
        ("bench_matmul.py", True),
        ("attention_benchmark.py", True),
        ("speed_test.py", True),  # LeViT's: CUDA and CPU throughput
        ("tools/test_speed.py", True),
        ("models/speed.py", False),
        ("test_ops.py", False),
        ("nets/fastlinear/develop_triton_ffn.py", True),  # showlab/DIM: times its Triton module against PyTorch's
        ("autotune_matmul.py", True),
        ("finetune_llama.py", False),
        ("developer_tools.py", False),
    ],
)
def test_benchmark_files(path, expected):
    from portcheck.pyscan.testcode import is_benchmark_file

    assert is_benchmark_file(path) is expected


CUDA_FIXTURE = """
import pytest
import torch


@pytest.fixture
def cuda_device():
    if not torch.cuda.is_available():
        pytest.skip("CUDA is required")
    return "cuda:0"


@pytest.fixture(scope="module")
def device_cfg():
    if torch.cuda.is_available():
        return make_cfg(torch.device("cuda:0"))
    pytest.skip("CUDA not available")


def test_grid(cuda_device):
    grid = torch.zeros((1, 2), device=cuda_device, dtype=torch.float16)
    assert grid.is_cuda


def test_solver(device_cfg):
    x = torch.ones(2).cuda()
    assert solve(device_cfg, x)


def test_everywhere():
    x = torch.ones(2).cuda()
"""


def test_a_test_that_asks_for_a_fixture_skipping_without_cuda_runs_only_with_cuda(tmp_path: Path):
    # NVlabs/curobo's mapper tests take `cuda_device`, which skips where CUDA is not
    lines = sorted(set(_lines_found(tmp_path, "test_grid.py", CUDA_FIXTURE)))
    assert lines == [CUDA_FIXTURE.splitlines().index("def test_everywhere():") + 2], lines


@pytest.mark.parametrize(
    "docstring,harness",
    [
        ('"""Reproduce Paper Table 1: FA2 vs DualKV kernel-level fwd/bwd timing."""\n', True),
        ('"""Latency benchmark of the fused attention kernel."""\n', True),
        ('"""Train the model on one node."""\n', False),
        ("", False),
    ],
)
def test_a_script_whose_docstring_says_it_times_code_is_a_benchmark(tmp_path: Path, docstring, harness):
    # amazon-science/dualkv-flash-attn-for-rl's `experiments/reproduce_table1.py`
    script = (
        docstring + "import time\nimport torch\nfrom pkg.model import Net\n\n"
        "device = 'cuda'\nmodel = Net().to(device)\n"
        "start = time.time()\nmodel(torch.ones(8, device=device))\ntorch.cuda.synchronize()\n"
        "print(time.time() - start)\n"
    )
    line = 5 + (1 if docstring else 0)
    files = {"pkg/__init__.py": "", "pkg/model.py": "class Net:\n    pass\n", "experiments/reproduce.py": script}
    found = scan_tree(tmp_path, files, top=True)
    device = found[("experiments/reproduce.py", line, "DEV001")]
    assert (device.severity.value == "info" and "measures on CUDA by design" in device.note) is harness, device
