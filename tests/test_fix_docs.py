"""docs/fixing.md states the semantics contract and lists, per recipe, what it does and what it refuses."""

from __future__ import annotations

import re
from pathlib import Path

from portcheck.fixer.recipes import RECIPES

DOC = (Path(__file__).resolve().parent.parent / "docs" / "fixing.md").read_text(encoding="utf-8")


def _recipe_rows():
    table = DOC.split("Per recipe (", 1)[1].split("\n### ", 1)[0]
    return {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(r"^\| `([a-z-]+)` \| (.+?) \| (.+?) \|$", table, re.MULTILINE)
    }


def test_the_contract_is_stated():
    assert "On a CUDA machine the fixed code does exactly what it did before" in DOC
    assert "CPU-only PyTorch and on a non-CUDA accelerator" in DOC


def test_every_recipe_is_listed_with_what_it_does_and_refuses():
    rows = _recipe_rows()
    assert set(rows) == set(RECIPES), f"missing: {set(RECIPES) - set(rows)}; unknown: {set(rows) - set(RECIPES)}"
    for kind, (does, refuses) in rows.items():
        assert does.strip() and refuses.strip(), kind
