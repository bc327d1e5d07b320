"""Folders that hold a copy of another project: one `info` finding stands for each, and importing them is a
dependency."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

from portcheck.config import Config
from portcheck.runner import scan_paths
from portcheck.vendored import VENDORED_NOTE, vendored_folders

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
    "apex/apex/__init__.py": "",
    "apex/apex/normalization.py": "import torch\n\n\ndef fused(x):\n    torch.cuda.synchronize()\n    return x\n",
}


def _scan(root: Path, files: Dict[str, str]):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    result = scan_paths([root], Config(respect_gitignore=False), target="neuron", cwd=root, jobs=1)
    return {(r.path, f.line, f.code): f for r in result.files for f in r.findings}


def test_one_info_finding_stands_for_a_copied_project_and_importing_it_is_a_dependency(tmp_path: Path):
    found = _scan(tmp_path, JUKEBOX)
    copied = {key: f for key, f in found.items() if key[0].startswith("apex/")}
    # the copy's most severe finding (the CUDA extension it builds, a blocker), standing for both of its findings
    assert list(copied) == [("apex/setup.py", 1, "KRN001")], sorted(found)
    stand = copied[("apex/setup.py", 1, "KRN001")]
    counts = [n for n in range(2, 10) if stand.note == VENDORED_NOTE.format(folder="apex").format(count=n)]
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
    assert vendored_folders(files) == {"apex": VENDORED_NOTE.format(folder="apex")}
    # the scan's own root is no copy of anything
    assert vendored_folders([("repo/" + n, d) for n, d in files], roots=("repo",)) == {
        "repo/apex": VENDORED_NOTE.format(folder="repo/apex")
    }
    # a subpackage of the project's own package (flash-attn's `flash_attn/cute/`) is the product
    (tmp_path / "jukebox/cute").mkdir()
    (tmp_path / "jukebox/cute/pyproject.toml").write_text("[project]\nname = 'cute'\n")
    (tmp_path / "jukebox/cute/LICENSE").write_text("BSD\n")
    inner = files + [("jukebox/cute/pyproject.toml", str(tmp_path / "jukebox/cute/pyproject.toml"))]
    assert set(vendored_folders(inner)) == {"apex"}
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
