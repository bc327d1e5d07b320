"""The project checks itself: ruff and mypy, configured in pyproject.toml, pass on its own code.

Both run as subprocesses, as a contributor or `.pre-commit-config.yaml` runs them; the tools come
with the `test` extra, so a missing tool fails here rather than skipping.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUFF = ["ruff", "check", "portcheck", "tests", "bench"]
MYPY = ["mypy", "portcheck"]


def _tool(args, extra):
    command = [sys.executable, "-m", *args, *extra]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    if "No module named" in result.stderr:
        pytest.fail(f"{args[0]} is not installed: pip install -e '.[test]'")
    return result


def test_ruff_passes():
    result = _tool(RUFF, ["--no-cache"])
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_passes(tmp_path):
    result = _tool(MYPY, ["--cache-dir", str(tmp_path / "mypy")])
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_contributor_hooks_run_the_same_checks():
    # .pre-commit-config.yaml runs what this file runs, so a commit that passes its hooks passes here.
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert shlex.split(hooks["ruff"]["entry"]) == RUFF
    assert shlex.split(hooks["mypy"]["entry"]) == MYPY
    assert hooks["ruff"]["pass_filenames"] is False and hooks["mypy"]["pass_filenames"] is False
    examples = shlex.split(hooks["portcheck-examples"]["entry"])
    assert examples[:2] == ["portcheck", "scan"] and examples[-1] == "examples"
