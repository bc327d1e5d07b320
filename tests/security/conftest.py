"""Shared pieces of the security tests: a project with CUDA code and ways to run portcheck on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]

# `.cuda()` and a literal "cuda" device: findings the safe fix rewrites.
FIXABLE = "import torch\n\n\ndef train(model, batch):\n    model = model.cuda()\n    return model(batch.to('cuda'))\n"


def console_script() -> List[str]:
    """The console script, whose sys.path does not include the working folder."""
    script = Path(sys.executable).parent / "portcheck"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-I", "-c", "from portcheck.cli import main; main()"]


def run_script(
    args: Sequence[str],
    cwd: Path,
    env: Optional[Dict[str, str]] = None,
    command: Optional[List[str]] = None,
    timeout: int = 120,
) -> subprocess.CompletedProcess:
    """portcheck in a subprocess, output as bytes (some tests check that it is valid UTF-8)."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in (full_env.get("PYTHONPATH", ""), str(ROOT)) if p)
    return subprocess.run(
        [*(command or console_script()), *args], cwd=cwd, env=full_env, capture_output=True, timeout=timeout
    )


@pytest.fixture
def cli(monkeypatch):
    """Run the CLI in this process from a folder: `cli(cwd, *args)` -> click's Result."""
    from portcheck.cli import main

    def invoke(cwd: Path, *args: str):
        monkeypatch.chdir(cwd)
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    return invoke
