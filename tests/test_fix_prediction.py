"""What a scan promises about `portcheck fix` is what `fix` does: per file, the score predicted
before the fix equals the score measured after it, and a rescan after `fix` reports nothing as
fixable in the mode that was used (per finding: the fixer's verdict for that node, never the rule's)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Dict, Tuple

import pytest

from portcheck.catalog import load_catalog
from portcheck.config import Config
from portcheck.fixer.paths import fix_paths
from portcheck.model import FixSafety, Target
from portcheck.runner import scan_paths
from portcheck.score import score_scan

ROOT = Path(__file__).resolve().parent.parent
CATALOG = load_catalog()


def _scores(folder: Path, target: Target) -> Tuple[Dict[str, Tuple[float, float]], object]:
    scan = scan_paths([folder], Config(), target=target.value, cwd=folder, jobs=1)
    card = score_scan(scan, CATALOG, target)
    return {f.path: (f.score, f.score_after_fix) for f in card.files}, scan


def check_prediction(source: Path, tmp_path: Path, target: Target, unsafe: bool) -> int:
    work = tmp_path / "work"
    shutil.copytree(source, work, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    before, scan = _scores(work, target)
    promised = sum(1 for f in scan.findings if f.fixable or (unsafe and f.fix_safety is FixSafety.UNSAFE))
    report = fix_paths([work], target=target.value, unsafe=unsafe, config=Config(), cwd=work)
    assert sum(len(f.applied) for f in report.files) == promised
    after, rescan = _scores(work, target)
    if not unsafe:
        wrong = {
            path: (b[1], after.get(path, (100.0, 100.0))[0])
            for path, b in before.items()
            if b[1] != after.get(path, (100.0, 100.0))[0]
        }
        assert not wrong, f"predicted vs measured score after fix: {wrong}"
    still = [
        f"{f.path}:{f.line} {f.code}"
        for f in rescan.findings
        if f.fixable or (unsafe and f.fix_safety is FixSafety.UNSAFE)
    ]
    assert not still, f"still reported fixable after fix: {still}"
    return promised


@pytest.mark.parametrize("target", [Target.GENERIC, Target.NEURON, Target.XLA])
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_the_example_project_gets_what_the_scan_promised(tmp_path, target, unsafe):
    assert check_prediction(ROOT / "examples", tmp_path, target, unsafe) > 0


def test_the_runtime_scripts_get_what_the_scan_promised(tmp_path):
    assert check_prediction(ROOT / "tests" / "runtime", tmp_path, Target.GENERIC, False) > 0


def test_an_import_the_fix_drops_is_not_reported_on_its_own(tmp_path):
    # `from torch.cuda.amp import custom_fwd` was reported by AMP001 (and RT000) besides AMP003's
    # finding on each use: fixing the uses drops the import, and with it a finding no fix promised,
    # so the score measured after the fix was higher than predicted (NVIDIA/apex cudnn_gbn).
    src = tmp_path / "src"
    src.mkdir()
    (src / "fn.py").write_text(
        "import torch\nfrom torch.cuda.amp import custom_fwd, custom_bwd\n\n\n"
        "class F(torch.autograd.Function):\n    @staticmethod\n    @custom_fwd\n    def forward(ctx, x):\n"
        "        return x\n\n    @staticmethod\n    @custom_bwd\n    def backward(ctx, g):\n        return g\n",
        encoding="utf-8",
    )
    assert check_prediction(src, tmp_path, Target.GENERIC, False) == 2


# The scan plans its verdicts on a skeleton of the module whose blanked lines can leave a block's
# trailing indented comments at the end, which libcst does not reproduce
# (`cst.parse_module("x = 1\n\n    # c\n").code` drops the comment); the verdict must not refuse the
# file for that when `fix`, working on the whole file, applies the fixes
# (NVIDIA/apex examples/simple/distributed/distributed_data_parallel.py).
def test_a_module_ending_in_a_blocks_indented_comment_gets_what_the_scan_promised(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(
        "import torch\nx = torch.zeros(2, device='cuda')\nif flag:\n    y = 1\n    # left in the block\n",
        encoding="utf-8",
    )
    assert check_prediction(src, tmp_path, Target.GENERIC, False) > 0


# A benchmark that times on CUDA by design (karpathy/nanoGPT's `bench.py`, state-spaces/mamba's
# `benchmarks/`): its workings are lowered (a lone script) or not reported (a suite) because it measures on
# CUDA. Once `fix` has ported every measuring call, a lone script measures on CUDA no longer and its
# workings count as they are; a suite's measurement is left to a person, so `fix` never ports one of its
# clock's calls and leaves the other on CUDA.
HARNESS = (
    "import time\nimport torch\n\ndevice = 'cuda'\ncheck = 'cuda' in device\n"
    "torch.cuda.synchronize()\nstart = time.time()\nx = torch.ones(8, device=device) * 2\n"
    "torch.cuda.synchronize()\nprint(time.time() - start)\n"
)


@pytest.mark.parametrize("where", ["bench.py", "benchmarks/bench_ones.py"])
def test_a_cuda_benchmark_harness_gets_what_the_scan_promised(tmp_path, where):
    src = tmp_path / "src"
    (src / where).parent.mkdir(parents=True)
    (src / where).write_text(HARNESS, encoding="utf-8")
    fixed = check_prediction(src, tmp_path, Target.GENERIC, False)
    text = (tmp_path / "work" / where).read_text(encoding="utf-8")
    if where == "bench.py":
        assert fixed >= 2 and "torch.cuda.synchronize" not in text, text
    else:
        assert fixed == 0 and text == HARNESS, text


def test_a_file_libcst_cannot_reproduce_is_promised_no_fix(tmp_path):
    # The whole file ends in such a comment: `fix` refuses it, so the scan promises nothing for it.
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text("import torch\nx = torch.zeros(2, device='cuda')\n\n    # c\n", encoding="utf-8")
    assert check_prediction(src, tmp_path, Target.GENERIC, False) == 0

# Folders of fetched public repositories (bench/README.md); the suite runs these only when it is set.
CORPUS = Path(os.environ.get("PORTCHECK_REAL_CORPUS", "/nonexistent-real-corpus"))
REPOS = [
    "karpathy+nanoGPT",
    "karpathy+build-nanogpt",
    "karpathy+llm.c",
    "openai+guided-diffusion",
    "openai+CLIP",
    "facebookresearch+DiT",
    "facebookresearch+mae",
    "facebookresearch+dino",
    "rosinality+stylegan2-pytorch",
    "NVlabs+stylegan3",
    "state-spaces+mamba",
    "lucidrains+denoising-diffusion-pytorch",
    "ultralytics+yolov5",
    "pytorch+torchtitan",
    "huggingface+accelerate",
    "facebookresearch+detectron2",
    "EleutherAI+gpt-neox",
    "NVIDIA+apex",
]


@pytest.mark.slow
@pytest.mark.parametrize("repo", REPOS)
def test_real_repositories_get_what_the_scan_promised(tmp_path, repo):
    if not (CORPUS / repo).is_dir():
        pytest.skip(f"{CORPUS / repo} is not on this machine")
    check_prediction(CORPUS / repo, tmp_path, Target.GENERIC, False)


# NVIDIA/apex's layout: a test of the project's own CUDA extension (`apex/contrib/test/focal_loss`), which the
# scan's project pass leaves alone (it runs only where the extension does); `fix` leaves it alone too.
KERNEL_TEST_PROJECT = {
    "setup.py": (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "setup(name='pkg', ext_modules=[CUDAExtension('focal_loss_cuda', ['pkg/csrc/focal.cu'])],"
        " cmdclass={'build_ext': BuildExtension})\n"
    ),
    "pkg/__init__.py": "",
    "pkg/csrc/focal.cu": "__global__ void k(float* x) {}\n",
    "pkg/focal.py": "import focal_loss_cuda\n\n\ndef focal_loss(x):\n    return focal_loss_cuda.forward(x)\n",
    "tests/test_focal.py": (
        "import unittest\n\nimport torch\n\nSKIP_TEST = None\ntry:\n    from pkg.focal import focal_loss\n"
        "except ImportError as e:\n    SKIP_TEST = e\n\n\n@unittest.skipIf(SKIP_TEST, f'{SKIP_TEST}')\n"
        "class FocalLossTest(unittest.TestCase):\n    def test_focal(self):\n        x = torch.randn(4).cuda()\n"
        "        self.assertIsNotNone(focal_loss(x))\n"
    ),
    "train.py": "import torch\nx = torch.zeros(2).cuda()\n",
}


def test_fix_leaves_what_the_project_pass_does_not_report(tmp_path):
    src = tmp_path / "src"
    for name, text in KERNEL_TEST_PROJECT.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, encoding="utf-8")
    # the test of the kernel is reported when its file is scanned alone, not in the whole project
    alone = scan_paths([src / "tests" / "test_focal.py"], Config(), target="generic", cwd=src, jobs=1)
    assert [f.code for f in alone.findings] == ["DEV002"]
    assert check_prediction(src, tmp_path, Target.GENERIC, False) == 1  # train.py's `.cuda()` only
    assert ".cuda()" in (tmp_path / "work" / "tests" / "test_focal.py").read_text(encoding="utf-8")
    assert ".cuda()" not in (tmp_path / "work" / "train.py").read_text(encoding="utf-8")
