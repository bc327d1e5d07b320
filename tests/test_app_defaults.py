"""CUDA parameter defaults that every call in an application overrides (portcheck.app_defaults)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest
from helpers import scan_tree

from portcheck.app_defaults import OVERRIDDEN_NOTE

# VideoMAE's layout: `mixup_target(..., device="cuda")` and `RandomErasing(..., device="cuda")`, whose every
# call passes a device of its own.
APP = {
    "mixup.py": (
        "import torch\n\n\n"
        "def mixup_target(target, num_classes, device='cuda'):\n"
        "    return torch.zeros(num_classes, device=device)\n"
    ),
    "random_erasing.py": (
        "import torch\n\n\n"
        "class RandomErasing:\n"
        "    def __init__(self, probability=0.5, device='cuda'):\n"
        "        self.device = device\n"
    ),
    "train.py": (
        "from mixup import mixup_target\nfrom random_erasing import RandomErasing\n\n"
        "y = mixup_target(t, 10, x.device)\ne = RandomErasing(0.25, device='cpu')\n"
    ),
}


def _scan(root: Path, files: Dict[str, str]):
    return scan_tree(root, files, top=True)


def test_a_default_every_call_overrides_is_info(tmp_path: Path):
    found = _scan(tmp_path, APP)
    mixup, erasing = found[("mixup.py", 4, "DEV001")], found[("random_erasing.py", 5, "DEV001")]
    assert mixup.severity.value == "info" and mixup.note == OVERRIDDEN_NOTE.format(
        function="mixup_target", param="device"
    )
    assert erasing.severity.value == "info" and "`RandomErasing`" in erasing.note


NOTEBOOK = '{"cells": [{"cell_type": "code", "source": ["mixup_target(t, 10)\\n"]}]}'
# What keeps the finding, by the file that changes.
KEEPS = {
    "a call that uses the default": ("eval.py", "from mixup import mixup_target\nmixup_target(t, 10)\n"),
    "a call through **kwargs": ("eval.py", "from mixup import mixup_target\nmixup_target(t, 10, **kw)\n"),
    "the function handed on": ("eval.py", "from mixup import mixup_target\nrun(callback=mixup_target)\n"),
    "a library": ("pyproject.toml", "[project]\nname = 'mixup'\n"),
    "a notebook that calls it": ("demo.ipynb", NOTEBOOK),
}


@pytest.mark.parametrize("change", [dict([c]) for c in KEEPS.values()], ids=list(KEEPS))
def test_a_default_that_may_be_used_keeps_its_finding(tmp_path: Path, change):
    found = _scan(tmp_path, {**APP, **change})
    assert found[("mixup.py", 4, "DEV001")].severity.value != "info", sorted(found)
