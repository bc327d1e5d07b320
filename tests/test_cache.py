"""The result cache gives the same results as a fresh scan, before and after files change."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import fields
from pathlib import Path

import pytest
from click.testing import CliRunner

import portcheck.runner as runner
from portcheck.cache import CACHE_DIR, Cache, decode_result, encode_result
from portcheck.catalog import load_catalog
from portcheck.cli import main
from portcheck.config import Config
from portcheck.model import FileError, FileResult, Finding, FixSafety, Severity
from portcheck.runner import scan_paths
from portcheck.scanner import Settings

NOTEBOOK = (
    '{"cells": [{"cell_type": "markdown", "source": ["# demo"]},'
    ' {"cell_type": "code", "source": ["import torch\\n", "x = torch.ones(2).cuda()\\n"]}],'
    ' "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
)

PROJECT = {
    "train.py": "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\nx = torch.zeros(3, device='cuda')\n",
    "clean.py": "import torch\nmodel = torch.nn.Linear(2, 2)\n",
    "pkg/__init__.py": "",
    "pkg/util.py": "def f(t):\n    return t.cuda()  # one\n\n\ndef g(t):\n    return t.cuda()\n",
    "broken.py": "def f(:\n    return x.cuda()\n",
    "latin.py": b"# -*- coding: latin-1 -*-\nname = '\xe9'\nx = y.cuda()\n",
    "nb.ipynb": NOTEBOOK,
    "requirements.txt": "torch==2.6\nnvidia-cudnn-cu12\n",
    "Dockerfile": "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\n",
}


def make_project(root: Path) -> Path:
    for name, content in PROJECT.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def age(path: Path, seconds: float = 3600) -> None:
    """Backdate a file, as if it had been written long before the scan."""
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    return root


def _spy(calls):
    real = runner.scan_keyed

    def spy(candidate, settings, display):
        calls.append(display)
        return real(candidate, settings, display)

    return spy


@pytest.fixture
def counted(monkeypatch):
    """The files actually scanned (not served from the cache)."""
    calls = []
    monkeypatch.setattr(runner, "scan_keyed", _spy(calls))
    return calls


def fresh(root: Path, target: str = "generic"):
    return scan_paths([Path(".")], Config(root=root), target=target, jobs=1, cache=None)


def cached(root: Path, target: str = "generic", cache_root: Path = None):
    cache = Cache(cache_root or root, load_catalog().digest)
    return scan_paths([Path(".")], Config(root=root), target=target, jobs=1, cache=cache)


def test_warm_scan_matches_a_fresh_scan_without_rescanning(project, counted):
    expected = fresh(project)
    assert expected.findings and expected.errors  # the project exercises findings and errors
    cold = cached(project)
    assert cold == expected
    assert len(counted) == len(expected.files)
    counted.clear()
    warm = cached(project)
    assert warm == expected
    assert counted == []


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda p: p.write_text(PROJECT["clean.py"] + "y = y.cuda()\n", encoding="utf-8"), id="grows"),
        pytest.param(
            lambda p: p.write_text(PROJECT["clean.py"].replace("(2, 2)", "(2, 3)"), encoding="utf-8"), id="same-size"
        ),
        pytest.param(
            lambda p: p.write_text(PROJECT["clean.py"].replace("Linear(2, 2)", "Linear(2,2).cuda()"), encoding="utf-8"),
            id="new-finding",
        ),
    ],
)
def test_a_changed_file_is_rescanned(project, counted, change):
    target = project / "clean.py"
    for path in project.rglob("*"):
        if path.is_file():
            age(path)
    cached(project)
    stat = target.stat()
    change(target)
    # Even with the old mtime put back, the content decides.
    if target.stat().st_size == stat.st_size:
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    counted.clear()
    after = cached(project)
    assert after == fresh(project)
    assert counted == ["clean.py"]


def test_a_file_changed_within_the_same_clock_tick_is_not_missed(project):
    # Written "just now", so its stat is not trusted: the bytes are compared even when size and mtime
    # match exactly, as after two edits within one timestamp tick.
    target = project / "clean.py"
    cached(project)
    stat = target.stat()
    original = target.read_text(encoding="utf-8")
    edited = "x = y.cuda()  #"
    edited += "-" * (len(original) - len(edited) - 1) + "\n"
    target.write_text(edited, encoding="utf-8")
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (target.stat().st_size, target.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    after = cached(project)
    assert after == fresh(project)
    assert any(f.path == "clean.py" for f in after.findings)


def test_touching_a_file_keeps_the_cached_result(project, counted):
    cached(project)
    os.utime(project / "train.py")
    counted.clear()
    assert cached(project) == fresh(project)
    assert counted == []


def test_deleted_and_added_files(project):
    cached(project)
    (project / "pkg" / "util.py").unlink()
    (project / "pkg" / "more.py").write_text("t = t.cuda()\n", encoding="utf-8")
    assert cached(project) == fresh(project)


def test_results_are_not_shared_across_settings(project, counted):
    cached(project, "generic")
    counted.clear()
    other = cached(project, "neuron")
    assert other == fresh(project, "neuron")
    assert len(counted) == len(other.files)


def test_key_depends_on_catalog_settings_and_version(tmp_path, monkeypatch):
    settings = Settings()
    key = Cache(tmp_path, "catalog-a").key(settings)
    assert key == Cache(tmp_path, "catalog-a").key(Settings())
    assert key != Cache(tmp_path, "catalog-b").key(settings)
    assert key != Cache(tmp_path, "catalog-a").key(Settings(select=("DEV",)))
    assert key != Cache(tmp_path, "catalog-a").key(Settings(per_file_ignores=(("tests/*", ("DEV002",)),)))
    import portcheck.cache as cache_module

    with monkeypatch.context() as patch:
        patch.setattr(cache_module, "__version__", "999.0")
        assert Cache(tmp_path, "catalog-a").key(settings) != key
    with monkeypatch.context() as patch:
        patch.setattr(cache_module, "_code_stamp", lambda: (("scan.py", 1, 2),))
        assert Cache(tmp_path, "catalog-a").key(settings) != key  # portcheck's own code changed
    with monkeypatch.context() as patch:
        patch.setattr(cache_module.sys, "version_info", (3, 99, 0))
        assert Cache(tmp_path, "catalog-a").key(settings) != key
    assert Cache(tmp_path, "catalog-a").key(settings) == key


def test_results_show_the_current_display_path(project, monkeypatch):
    cached(project)
    monkeypatch.chdir(project / "pkg")
    cache = Cache(project, load_catalog().digest)
    from_sub = scan_paths([Path("util.py"), Path("../train.py")], Config(root=project), jobs=1, cache=cache)
    expected = scan_paths([Path("util.py"), Path("../train.py")], Config(root=project), jobs=1, cache=None)
    assert from_sub == expected
    assert {f.path for f in from_sub.findings} == {"util.py", "../train.py"}


def test_per_file_ignores_follow_the_displayed_path(project, monkeypatch):
    config = Config(root=project, per_file_ignores={"pkg/*": ("DEV002",)})

    def both(*paths):
        cache = Cache(project, load_catalog().digest)
        warm = scan_paths([Path(p) for p in paths], config, jobs=1, cache=cache)
        return warm, scan_paths([Path(p) for p in paths], config, jobs=1, cache=None)

    at_root = both("pkg/util.py")
    assert at_root[0] == at_root[1] and not at_root[0].findings
    monkeypatch.chdir(project / "pkg")
    in_pkg = both("util.py")  # displayed as util.py, which "pkg/*" does not match
    assert in_pkg[0] == in_pkg[1] and in_pkg[0].findings


def test_a_corrupt_cache_is_ignored(project, counted):
    cached(project)
    for index in (project / CACHE_DIR).rglob("*.bin"):
        index.write_bytes(b"\x00garbage")
    counted.clear()
    assert cached(project) == fresh(project)
    assert counted  # rescanned


def test_round_trip_keeps_every_field():
    finding = Finding(
        path="a.ipynb",
        line=3,
        column=5,
        end_line=4,
        end_column=2,
        code="DEV002",
        name="dot-cuda-call",
        category="device",
        severity=Severity.MAJOR,
        message="m",
        fixable=True,
        fix_safety=FixSafety.UNSAFE,
        cell=2,
        source_line="x.cuda()",
        guarded=True,
        note="lowered",
        fixes=(("generic", "unsafe"),),
        role="rank",
        symbol="torch.Tensor.cuda",
        flag="cuda",
        unflagged=Severity.MINOR,
    )
    result = FileResult(
        path="a.ipynb", findings=(finding,), error=FileError("a.ipynb", "bad", 1, 2, "parse"), lines=7, kind="notebook",
        backends=("mps", "xpu"),
    )
    assert decode_result(encode_result(result), "a.ipynb") == result
    # `role` and `symbol` take no part in comparisons, so every field is compared one by one.
    back = decode_result(encode_result(result), "a.ipynb").findings[0]
    assert {f.name: getattr(back, f.name) for f in fields(Finding)} == {
        f.name: getattr(finding, f.name) for f in fields(Finding)
    }
    moved = decode_result(encode_result(result), "b/a.ipynb")
    assert moved.path == moved.findings[0].path == moved.error.path == "b/a.ipynb"


def test_a_file_that_could_not_be_read_is_not_cached(project, counted, monkeypatch):
    real_open = open

    def refuse(path, *args, **kwargs):
        if str(path).endswith("train.py"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(runner, "open", refuse, raising=False)
        cached(project)
    counted.clear()
    assert cached(project) == fresh(project)
    assert counted == ["train.py"]


# --- the cache folder and the CLI ---------------------------------------------------------------------


def test_cache_folder_ignores_itself_for_git(project):
    if shutil.which("git") is None:
        pytest.skip("needs git")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    cached(project)
    assert (project / CACHE_DIR / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    assert status.stdout.strip()  # the project files are untracked...
    assert CACHE_DIR not in status.stdout  # ...but the cache is not listed


def test_cli_caches_at_the_config_root(project):
    (project / "portcheck.toml").write_text('target = "generic"\n', encoding="utf-8")
    runner_ = CliRunner()
    result = runner_.invoke(main, ["scan", "pkg"])
    assert result.exit_code == 1, result.output
    assert (project / CACHE_DIR).is_dir()
    assert not (project / "pkg" / CACHE_DIR).exists()


def test_cli_no_cache_writes_nothing_and_clean_removes_the_cache(project):
    runner_ = CliRunner()
    uncached = runner_.invoke(main, ["scan", "--no-cache", "--output-format", "json"])
    assert not (project / CACHE_DIR).exists()
    first = runner_.invoke(main, ["scan", "--output-format", "json"])
    assert (project / CACHE_DIR).is_dir()
    second = runner_.invoke(main, ["scan", "--output-format", "json"])
    assert uncached.exit_code == first.exit_code == second.exit_code == 1
    assert uncached.stdout == first.stdout == second.stdout
    cleaned = runner_.invoke(main, ["clean"])
    assert cleaned.exit_code == 0, cleaned.output
    assert not (project / CACHE_DIR).exists()
    again = runner_.invoke(main, ["clean"])
    assert again.exit_code == 0
    assert "no cache" in again.output


def test_clean_a_project_by_path(project, tmp_path, monkeypatch):
    (project / "portcheck.toml").write_text('target = "generic"\n', encoding="utf-8")
    assert CliRunner().invoke(main, ["scan", "pkg"]).exit_code == 1
    assert (project / CACHE_DIR).is_dir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    cleaned = CliRunner().invoke(main, ["clean", str(project / "pkg")])  # finds the project root above
    assert cleaned.exit_code == 0, cleaned.output
    assert not (project / CACHE_DIR).exists()
