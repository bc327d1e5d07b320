"""Folders that hold a copy of another project: one `info` finding stands for each, and importing them is a
dependency."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest
from helpers import scan_tree

from portcheck.config import Config
from portcheck.runner import scan_paths
from portcheck.vendored import vendored_folders, vendored_note

# jukebox's layout: its own package, and NVIDIA apex copied in beside it with its own setup.py and licence.
JUKEBOX = {
    "setup.py": "from setuptools import setup\nsetup(name='jukebox')\n",
    "LICENSE": "MIT\n",
    "jukebox/__init__.py": "",
    "jukebox/ops.py": (
        "import torch\ntry:\n    from apex.normalization import FusedLayerNorm\nexcept ImportError:\n"
        "    FusedLayerNorm = torch.nn.LayerNorm\n"
    ),
    "apex/setup.py": "from torch.utils.cpp_extension import CUDAExtension\next = CUDAExtension('amp_C', ['a.cu'])\n",
    "apex/LICENSE": "BSD\n",
    "apex/apex/__init__.py": "from .normalization import fused\n",  # (exported: its users' to call)
    "apex/apex/normalization.py": "import torch\n\n\ndef fused(x):\n    torch.cuda.synchronize()\n    return x\n",
}


def _scan(root: Path, files: Dict[str, str]):
    return scan_tree(root, files)


def _standing_for(found, folder: str):
    """The one finding of the copy below `folder`, at info, standing for all of them."""
    copied = [f for key, f in found.items() if key[0].startswith(folder)]
    assert len(copied) == 1 and copied[0].severity.value == "info", sorted(found)
    return copied[0]


def test_one_info_finding_stands_for_a_copied_project_and_importing_it_is_a_dependency(tmp_path: Path):
    found = _scan(tmp_path, JUKEBOX)
    copied = {key: f for key, f in found.items() if key[0].startswith("apex/")}
    # the copy's most severe finding (the CUDA extension it builds, a blocker), standing for both of its findings
    assert list(copied) == [("apex/setup.py", 2, "KRN001")], sorted(found)
    stand = copied[("apex/setup.py", 2, "KRN001")]
    counts = [n for n in range(2, 10) if stand.note == vendored_note("apex").format(count=n)]
    assert stand.severity.value == "info" and counts, stand.note  # the rest are counted, not listed
    # scanned on its own, the copy is the product: every finding is listed at its severity
    alone = scan_paths([tmp_path / "apex"], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    listed = {(r.path, f.code): f.severity.value for r in alone.files for f in r.findings}
    assert listed.get(("apex/apex/normalization.py", "RT001")) not in (None, "info"), listed
    # the product's optional import of it: a package finding, lowered for its fallback
    assert found[("jukebox/ops.py", 3, "PKG001")].guarded, sorted(found)


def test_what_is_no_copy(tmp_path: Path):
    files = [(name, str(tmp_path / name)) for name in JUKEBOX]
    for name, text in JUKEBOX.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert vendored_folders(files) == {"apex": vendored_note("apex")}
    # the scan's own root is no copy of anything
    assert vendored_folders([("repo/" + n, d) for n, d in files], roots=("repo",)) == {
        "repo/apex": vendored_note("repo/apex")
    }
    # a subpackage of the project's own package (flash-attn's `flash_attn/cute/`, with its `__init__.py`) is the
    # product
    (tmp_path / "jukebox/cute").mkdir()
    (tmp_path / "jukebox/cute/pyproject.toml").write_text("[project]\nname = 'cute'\n")
    (tmp_path / "jukebox/cute/LICENSE").write_text("BSD\n")
    (tmp_path / "jukebox/cute/__init__.py").write_text("")
    inner = files + [
        ("jukebox/cute/pyproject.toml", str(tmp_path / "jukebox/cute/pyproject.toml")),
        ("jukebox/cute/__init__.py", str(tmp_path / "jukebox/cute/__init__.py")),
    ]
    assert set(vendored_folders(inner)) == {"apex"}
    # a distribution kept inside a package, itself no package (SPIn-NeRF's `DS_NeRF/torchsearchsorted/`: its
    # `setup.py`, licence and `src/` layout) is a copy
    (tmp_path / "jukebox/tss/src/tss").mkdir(parents=True)
    for name, text in (("setup.py", "setup(name='tss')\n"), ("LICENSE", "BSD\n"), ("src/tss/__init__.py", "")):
        (tmp_path / "jukebox/tss" / name).write_text(text)
    nested = files + [
        (f"jukebox/tss/{name}", str(tmp_path / "jukebox/tss" / name)) for name in ("setup.py", "src/tss/__init__.py")
    ]
    assert set(vendored_folders(nested)) == {"apex", "jukebox/tss"}
    # no licence: the project's own extension build (`raymarching/setup.py` in stable-dreamfusion)
    (tmp_path / "apex/LICENSE").unlink()
    assert vendored_folders(files) == {}


def test_a_repository_made_only_of_such_folders_has_none(tmp_path: Path):
    monorepo = {k: v for k, v in JUKEBOX.items() if k.startswith("apex/")}
    files = [(name, str(tmp_path / name)) for name in monorepo]
    for name, text in monorepo.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert vendored_folders(files) == {}


# VBench's layout: copies kept in `third_party/` folders inside the project's own package, some with only a
# licence (`amt/`), some with only packaging (`Dense_match/`), one nested a level deeper (`YOLO-World/mmyolo/`).
VBENCH = {
    "setup.py": "from setuptools import setup\nsetup(name='vbench')\n",
    "vbench/__init__.py": "",
    "vbench/score.py": "import torch\n\n\ndef score(x):\n    return x.cuda()\n",
    "vbench/third_party/__init__.py": "",
    "vbench/third_party/amt/LICENSE": "MIT\n",
    "vbench/third_party/amt/__init__.py": "",
    "vbench/third_party/amt/bench.py": "import torch\ntorch.cuda.synchronize()\n",
    "vbench/third_party/Dense_match/setup.py": "from setuptools import setup\nsetup(name='dm')\n",
    "vbench/third_party/Dense_match/run.py": "import torch\nx = torch.ones(2).cuda()\n",
    "vbench/third_party/YOLO-World/mmyolo/LICENSE": "GPL\n",
    "vbench/third_party/YOLO-World/mmyolo/setup.py": "from setuptools import setup\nsetup(name='mmyolo')\n",
    "vbench/third_party/YOLO-World/mmyolo/demo.py": "import torch\nx = torch.ones(2).cuda()\n",
    "vbench/third_party/YOLO-World/other.py": "import torch\nx = torch.ones(2).cuda()\n",
    "vbench/third_party/umt/__init__.py": "",
    "vbench/third_party/umt/model.py": "import torch\nx = torch.ones(2).cuda()\n",
}


def test_folders_in_a_third_party_folder_are_copies_by_their_licence_or_packaging(tmp_path: Path):
    files = [(name, str(tmp_path / name)) for name in VBENCH]
    for name, text in VBENCH.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    found = vendored_folders(files)
    # a licence alone, packaging alone, and the packaged and licensed project one level deeper; not the
    # folder with neither (`umt/`, `YOLO-World/` itself), and never the project's own package
    assert sorted(found) == [
        "vbench/third_party/Dense_match",
        "vbench/third_party/YOLO-World/mmyolo",
        "vbench/third_party/amt",
    ], found
    # scanned from inside a copy, that copy is the product
    inside = [("vbench/third_party/amt/" + n.rsplit("/", 1)[-1], d) for n, d in files if "/amt/" in n]
    assert vendored_folders(inside + files[:3], roots=("vbench/third_party/amt",)) == {}
    reported = _scan(tmp_path, VBENCH)
    paths = [key[0] for key in reported]
    assert "vbench/score.py" in paths and "vbench/third_party/umt/model.py" in paths, sorted(reported)
    for folder in found:  # one `info` finding stands for each copy
        standing = [f for key, f in reported.items() if key[0].startswith(folder + "/")]
        assert [f.severity.value for f in standing] == ["info"], (folder, sorted(reported))


# ControlNet's layout: UniFormer's folder (a licence, ControlNet's own glue in its `__init__.py`) with mmcv
# copied inside as a package that sets its own version.
CONTROLNET = {
    "gradio_seg.py": "import torch\nfrom annotator.uniformer import Detector\nx = torch.zeros(1).cuda()\n",
    "annotator/uniformer/LICENSE": "Apache\n",
    "annotator/uniformer/__init__.py": (
        "class Detector:\n    def __init__(self, model):\n        self.model = model.cuda()\n"
    ),
    "annotator/uniformer/mmcv/__init__.py": "from .version import __version__\n",
    "annotator/uniformer/mmcv/version.py": "__version__ = '1.3.17'\n",
    "annotator/uniformer/mmcv/parallel.py": (
        "import torch\n\n\ndef scatter(x, devices):\n    with torch.cuda.device(devices[0]):\n        return x.cuda()\n"
    ),
}


def test_a_versioned_library_below_a_licensed_folder_is_a_copy_but_the_glue_beside_it_is_not(tmp_path: Path):
    found = _scan(tmp_path, CONTROLNET)
    _standing_for(found, "annotator/uniformer/mmcv/")
    # the project's own glue in the licensed folder, and its own code, keep their findings
    assert ("annotator/uniformer/__init__.py", 3, "DEV002") in found, sorted(found)
    assert ("gradio_seg.py", 3, "DEV002") in found, sorted(found)


# LLMGA's layout: diffusers 0.22 copied into its own package as `llmga/diffusers/` (packaging, licence, the
# versioned `src/diffusers`), with upstream's `examples/` and `tests/`, and LLMGA's trainer added beside them.
LLMGA = {
    "llmga/__init__.py": "",
    "llmga/serve/cli.py": "from llmga.diffusers.train import main\n\nmain()\n",
    "llmga/diffusers/setup.py": "from setuptools import setup\nsetup(name='diffusers')\n",
    "llmga/diffusers/LICENSE": "Apache\n",
    "llmga/diffusers/src/diffusers/__init__.py": "__version__ = '0.22.0.dev0'\n",
    "llmga/diffusers/src/diffusers/pipeline.py": "import torch\n\n\ndef run(x):\n    return x.cuda()\n",
    "llmga/diffusers/examples/controlnet/train.py": (
        "import torch\n\ntorch.cuda.empty_cache()\nx = torch.ones(1).cuda()\n"
    ),
    "llmga/diffusers/tests/test_memory.py": (
        "import torch\n\n\ndef test_mem():\n    assert torch.cuda.max_memory_allocated() < 1\n"
    ),
    "llmga/diffusers/train.py": "import torch\n\n\ndef main():\n    return torch.ones(1).cuda()\n",
}


def test_a_copied_distributions_own_examples_and_tests_are_the_copy_but_files_added_beside_them_are_not(
    tmp_path: Path,
):
    found = _scan(tmp_path, LLMGA)
    examples = [f for key, f in found.items() if key[0].startswith("llmga/diffusers/examples/")]
    assert len(examples) == 1 and "is a copy of another project" in examples[0].note, sorted(found)
    # the trainer LLMGA added at the copy's top is its own code
    assert found[("llmga/diffusers/train.py", 5, "DEV002")].severity.value != "info", sorted(found)


def test_a_package_with_its_own_version_and_licence_is_the_project(tmp_path: Path):
    files = {
        "mypkg/LICENSE": "MIT\n",
        "mypkg/__init__.py": "__version__ = '0.1'\n",
        "mypkg/ops.py": "import torch\n\n\ndef f(x):\n    return x.cuda()\n",
        "train.py": "from mypkg.ops import f\n\nf(1)\n",
    }
    found = _scan(tmp_path, files)
    assert found[("mypkg/ops.py", 5, "DEV002")].severity.value != "info", sorted(found)


def test_a_release_folder_with_its_own_licence_is_a_copy(tmp_path: Path):
    # safari's `csrc/fftconv/mathdx/22.02/`: NVIDIA's cuFFTDx headers and examples beside the extension
    files = {
        "train.py": "import torch\n\n\ndef main(x):\n    return x.cuda()\n",
        "csrc/fftconv/fftconv_cuda.cu": "#include <cufftdx.hpp>\n__global__ void k() {}\n",
        "csrc/fftconv/mathdx/22.02/LICENSE.txt": "NVIDIA\n",
        "csrc/fftconv/mathdx/22.02/example/simple_fft.cu": "__global__ void a() {}\n",
        "csrc/fftconv/mathdx/22.02/example/CMakeLists.txt": "project(ex LANGUAGES CXX CUDA)\n",
        "models/v1.5/run.py": "import torch\n\nx = torch.zeros(1).cuda()\n",
    }
    found = _scan(tmp_path, files)
    stand = _standing_for(found, "csrc/fftconv/mathdx/")
    assert "csrc/fftconv/mathdx/22.02/" in stand.note, stand.note
    # the project's own kernel keeps its finding; a release-named folder without a licence is the project's
    assert found[("csrc/fftconv/fftconv_cuda.cu", 1, "KRN002")].severity.value != "info", sorted(found)
    assert found[("models/v1.5/run.py", 3, "DEV002")].severity.value != "info", sorted(found)


def test_a_folder_named_for_a_release_of_a_named_project_is_a_copy(tmp_path: Path):
    # zju3dv/mlp_maps' `kilonerf_cuda/cub-1.8.0/`: NVIDIA's CUB headers, examples and tests beside the extension
    files = {
        "train.py": "import torch\n\n\ndef main(x):\n    return x.cuda()\n",
        "csrc/kilonerf_cuda/integrate.cu": "#include <cub/cub.cuh>\n__global__ void k() {}\n",
        "csrc/kilonerf_cuda/cub-1.8.0/LICENSE.TXT": "NVIDIA\n",
        "csrc/kilonerf_cuda/cub-1.8.0/cub/block/block_reduce.cuh": (
            "#pragma once\ntemplate <int N> __device__ int r();\n"
        ),
        "csrc/kilonerf_cuda/cub-1.8.0/examples/device/example_device_reduce.cu": "__global__ void a() {}\n",
        "data/split-1.2/run.py": "import torch\n\nx = torch.zeros(1).cuda()\n",
    }
    found = _scan(tmp_path, files)
    _standing_for(found, "csrc/kilonerf_cuda/cub-1.8.0/")
    assert found[("csrc/kilonerf_cuda/integrate.cu", 1, "KRN002")].severity.value != "info", sorted(found)
    # a release-named folder without a licence is the project's own
    assert found[("data/split-1.2/run.py", 3, "DEV002")].severity.value != "info", sorted(found)


def test_a_cpp_project_with_its_own_cmake_build_and_licence_is_a_copy(tmp_path: Path):
    """bytedance/ABQ-LLM's `fastertransformer/`: NVIDIA's FasterTransformer, its `CMakeLists.txt` and `LICENSE`
    beside its kernels; the project's own extension, with a `CMakeLists.txt` and no licence, is the project."""
    files = {
        "train.py": "import torch\n\n\ndef main(x):\n    return x.cuda()\n",
        "fastertransformer/LICENSE": "Apache-2.0\n",
        "fastertransformer/CMakeLists.txt": "project(FasterTransformer LANGUAGES CXX CUDA)\n",
        "fastertransformer/src/kernels/gemm.cu": "#include <cuda_runtime.h>\n__global__ void g() {}\n",
        "fastertransformer/src/utils/allocator.h": "#pragma once\n#include <cuda_runtime.h>\n",
        "csrc/CMakeLists.txt": "project(abq LANGUAGES CXX CUDA)\n",
        "csrc/abq_gemm.cu": "#include <cuda_runtime.h>\n__global__ void k() {}\n",
    }
    found = _scan(tmp_path, files)
    stand = _standing_for(found, "fastertransformer/")
    assert "`fastertransformer/` is a copy of another project" in stand.note, stand.note
    assert found[("csrc/abq_gemm.cu", 1, "KRN002")].severity.value != "info", sorted(found)


# amazon-science/fact-graph's layout: a release of (adapter-)transformers copied whole into `src/`, under the
# repository's licence alone, beside the project's own scripts
FACT_GRAPH = {
    "LICENSE": "Apache\n",
    "src/main.py": "import torch\nfrom transformers import ElectraModel\nmodel = ElectraModel().cuda()\n",
    "src/transformers/__init__.py": '__version__ = "4.5.0.dev0"\nfrom .models import ElectraModel\n',
    "src/transformers/models.py": (
        "import torch\n\n\nclass ElectraModel(torch.nn.Module):\n    pass\n\n\n"
        "def parallelize(model):\n    torch.cuda.synchronize()\n    return model.to('cuda:0')\n"
    ),
}


def _write(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def test_a_well_known_library_copied_whole_is_a_copy_by_its_name_and_version(tmp_path: Path):
    root = tmp_path / "fact-graph"
    _write(root, FACT_GRAPH)
    # the same answer scanned from inside the repository and from the folder above it
    for cwd, prefix in ((root, ""), (tmp_path, "fact-graph/")):
        result = scan_paths([root], Config(respect_gitignore=False), target="neuron", cwd=cwd, jobs=1)
        copied = [f for r in result.files if r.path.startswith(prefix + "src/transformers/") for f in r.findings]
        assert len(copied) == 1 and copied[0].severity.value == "info", copied
        assert copied[0].note.startswith(f"lowered to info: `{prefix}src/transformers/` is a copy"), copied[0].note
        assert "with its own version" in copied[0].note
        own = [f for r in result.files if r.path == prefix + "src/main.py" for f in r.findings]
        assert own and all(f.severity.value != "info" for f in own)  # the project's own `.cuda()`
    # the library's own repository publishes that name: its `src/transformers/` is the product
    published = dict(FACT_GRAPH, **{"setup.py": "from setuptools import setup\nsetup(\n    name='transformers',\n)\n"})
    _write(tmp_path / "transformers", published)
    files = [(name, str(tmp_path / "transformers" / name)) for name in published]
    assert vendored_folders(files) == {}
    # a project's own versioned package under the repository's licence (no library's name) is the product, scanned
    # from inside or from above
    own_pkg = {k.replace("transformers", "factgraph"): v for k, v in FACT_GRAPH.items()}
    _write(tmp_path / "own", own_pkg)
    files = [(name, str(tmp_path / "own" / name)) for name in own_pkg]
    assert vendored_folders(files) == {}
    assert vendored_folders([("own/" + n, d) for n, d in files], roots=("own",)) == {}


def test_a_well_known_library_copied_whole_may_set_its_version_in_its_version_module(tmp_path: Path):
    # mmcv 1.3.17 in OpenDriveLab/ELM's `lavis/common/annotator/uniformer/mmcv/` (ControlNet's annotator, without the
    # licence above it): `__init__.py` imports `__version__` from the `version.py` that sets it
    files = {
        "lavis/run.py": "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n",
        "lavis/annotator/uniformer/mmcv/__init__.py": "from .version import *\nfrom .ops import nms\n",
        "lavis/annotator/uniformer/mmcv/version.py": "__version__ = '1.3.17'\n",
        "lavis/annotator/uniformer/mmcv/ops.py": (
            "import torch\n\n\ndef nms(boxes):\n    torch.cuda.synchronize()\n    return boxes.cuda()\n"
        ),
    }
    _write(tmp_path, files)
    pairs = [(name, str(tmp_path / name)) for name in files]
    assert list(vendored_folders(pairs)) == ["lavis/annotator/uniformer/mmcv"]
    # without a version set there, the folder is the project's own
    del files["lavis/annotator/uniformer/mmcv/version.py"]
    (tmp_path / "lavis/annotator/uniformer/mmcv/version.py").unlink()
    assert vendored_folders([(name, str(tmp_path / name)) for name in files]) == {}


# alibaba-damo-academy/Inferix's `LV-Bench/pretrained/hub/facebookresearch-dino-7c446df/`: a torch.hub cache of
# DINO's whole repository (its `hubconf.py` and licence), of which the benchmark only loads the model.
HUB_CACHE = {
    "lvb/score.py": "import torch\n\nmodel = torch.hub.load('facebookresearch/dino:main', 'dino_vits16').cuda()\n",
    "lvb/pretrained/hub/facebookresearch-dino-7c446df/LICENSE": "Apache\n",
    "lvb/pretrained/hub/facebookresearch-dino-7c446df/hubconf.py": "def dino_vits16():\n    return None\n",
    "lvb/pretrained/hub/facebookresearch-dino-7c446df/utils.py": (
        "import torch\n\n\ndef fix_random_seeds(seed=31):\n    torch.cuda.manual_seed_all(seed)\n"
        "    torch.cuda.synchronize()\n"
    ),
}


@pytest.mark.parametrize("licensed", [True, False])
def test_a_torch_hub_repository_with_its_licence_is_a_copy(tmp_path: Path, licensed: bool):
    files = dict(HUB_CACHE)
    if not licensed:
        del files["lvb/pretrained/hub/facebookresearch-dino-7c446df/LICENSE"]
    found = _scan(tmp_path, files)
    hub = [f for (path, _, _), f in found.items() if "/hub/" in path]
    if licensed:
        assert len(hub) == 1 and hub[0].severity.value == "info" and "a torch.hub repository" in hub[0].note, hub
    else:
        assert hub and not any("a torch.hub repository" in f.note for f in hub), hub
