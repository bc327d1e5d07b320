"""Imports in code switched on for their library (a function named for it, a flag that names it) are opt-in:
lowered one level with a note; a test that only names torch switches on no library."""

from __future__ import annotations

from pathlib import Path

from portcheck.config import Config
from portcheck.runner import scan_paths


def _findings(tmp_path: Path, text: str):
    (tmp_path / "m.py").write_text(text, encoding="utf-8")
    result = scan_paths([tmp_path / "m.py"], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    return {(f.line, f.code): f for r in result.files for f in r.findings}


def test_an_import_under_a_flag_that_names_its_library_is_opt_in(tmp_path: Path):
    found = _findings(tmp_path, "def setup(unet, args):\n    if args.xformers:\n        import xformers.ops\n")
    assert found[(3, "PKG003")].severity.value == "minor" and "`xformers`" in found[(3, "PKG003")].note


def test_the_same_import_on_the_plain_path_keeps_its_severity(tmp_path: Path):
    found = _findings(tmp_path, "def setup(unet, args):\n    if args.fast:\n        import xformers.ops\n")
    assert found[(3, "PKG003")].severity.value == "major", found


def test_a_version_check_of_torch_switches_on_no_library(tmp_path: Path):
    text = (
        "import torch\nfrom packaging import version\n\n"
        "if version.parse(torch.__version__) >= version.parse('1.6'):\n"
        "    from torch.cuda.amp import autocast\n\n\n"
        "def step(model, x):\n    with autocast():\n        return model(x)\n"
    )
    found = _findings(tmp_path, text)
    assert "switched on" not in found[(5, "AMP001")].note, found[(5, "AMP001")].note


ALIASED = (
    "try:\n    from flash_attn.flash_attn_interface import flash_attn_unpadded_func\n"
    "    flash_attn_func = flash_attn_unpadded_func\nexcept ImportError:\n    flash_attn_func = None\n{use}"
)


def test_an_optional_import_given_only_to_an_alias_nothing_reads_is_unused(tmp_path: Path):
    # X-PLUG/mPLUG-DocOwl's modeling file: `flash_attn_func` is bound and never called
    unused = _findings(tmp_path, ALIASED.format(use=""))[(2, "PKG002")]
    assert unused.severity.value == "info" and "never used" in unused.note, unused
    called = _findings(tmp_path, ALIASED.format(use="out = flash_attn_func(q, k, v)\n"))[(2, "PKG002")]
    assert called.severity.value == "minor" and "never used" not in called.note, called
