"""Start-up weight: a one-file scan (what a pre-commit hook runs) imports only what it needs.

These check which modules get imported, not how long anything takes (timings live in bench/).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Run the CLI in a fresh interpreter, then list every module it imported, one per line, into $MODULES.
PROBE = """
import os, sys
from portcheck.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    with open(os.environ["MODULES"], "w") as out:
        out.write("\\n".join(sorted(sys.modules)))
"""

HEAVY = (
    "libcst",
    "rich",
    "multiprocessing",
    "concurrent",
    "json",
    "pickle",
    "portcheck.baseline",
    "portcheck.fixer",
    "yaml",
)


def imported(tmp_path: Path, *args: str, **env: str) -> set:
    modules = tmp_path / "modules.txt"
    full_env = dict(os.environ, MODULES=str(modules), **env)
    for name in ("FORCE_COLOR", "PORTCHECK_DEBUG"):
        if name not in env:
            full_env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=tmp_path, env=full_env, capture_output=True, text=True, timeout=120
    )
    assert modules.exists(), done.stderr
    return set(modules.read_text().split())


def heavy_in(modules: set) -> list:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.fixture
def one_file(tmp_path):
    # A finding no recipe fixes: the fixer is not asked for a verdict, so libcst stays unloaded.
    (tmp_path / "train.py").write_text("import torch\nname = torch.cuda.get_device_name(0)\n", encoding="utf-8")
    return tmp_path


def test_one_file_text_scan_stays_light(one_file):
    modules = imported(one_file, "scan", "train.py")
    assert "portcheck.scanner" in modules  # the probe really ran a scan
    assert heavy_in(modules) == []


def test_one_file_scan_with_the_cache_warm_stays_light(one_file):
    imported(one_file, "scan", "train.py")
    assert (one_file / ".portcheck_cache").is_dir()
    modules = imported(one_file, "scan", "train.py")
    assert heavy_in(modules) == []


def test_a_file_with_something_to_fix_loads_the_fixer_for_its_verdict(tmp_path):
    # `[*]` and `score_after_fix` are the fixer's own verdict for each finding, planned in memory.
    (tmp_path / "train.py").write_text("import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n", encoding="utf-8")
    modules = imported(tmp_path, "scan", "train.py", "--no-cache")
    assert "portcheck.fixer.verdict" in modules and "libcst" in modules
    # A second scan is served from the cache, verdicts included, and stays light.
    imported(tmp_path, "scan", "train.py")
    assert heavy_in(imported(tmp_path, "scan", "train.py")) == []


@pytest.mark.parametrize(
    "args,env,expected",
    [
        (("--output-format", "json"), {}, "json"),
        (("--write-baseline", "bl.json"), {}, "portcheck.baseline"),
        ((), {"FORCE_COLOR": "1", "NO_COLOR": ""}, "rich"),
    ],
    ids=["json-output", "baseline", "colour"],
)
def test_heavier_features_import_what_they_need(one_file, args, env, expected):
    # The other side of the checks above: the probe does see these imports when they happen.
    modules = imported(one_file, "scan", "train.py", *args, **env)
    assert expected in modules


def test_version_does_not_load_the_scanner(tmp_path):
    modules = imported(tmp_path, "--version")
    assert "portcheck.scanner" not in modules and "portcheck.catalog" not in modules
