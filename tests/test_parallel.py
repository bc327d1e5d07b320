"""Parallel scans: the same results in the same order as a serial scan, and no pool for small inputs."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import portcheck.runner as runner
from portcheck.cache import Cache
from portcheck.catalog import load_catalog
from portcheck.config import Config
from portcheck.discover import Candidate
from portcheck.runner import scan_paths
from portcheck.scanner import Settings

needs_fork = pytest.mark.skipif(sys.platform != "linux", reason="worker pids are observed through fork")


def make_files(root: Path, count: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        body = ["import torch"]
        # A varying number of findings per file, so a mix-up between files would show.
        body += [f"x{j} = torch.zeros({j}).cuda()" for j in range(i % 4)]
        if i % 7 == 0:
            body.append("def broken(: t.cuda()")
        (root / f"m{i:03d}.py").write_text("\n".join(body) + "\n", encoding="utf-8")
    (root / "requirements.txt").write_text("nvidia-cudnn-cu12\n", encoding="utf-8")
    return root


@pytest.fixture
def pids(monkeypatch, tmp_path):
    """Record which process scanned each file (forked workers inherit the patch)."""
    log = tmp_path / "pids"
    log.mkdir()
    real = runner.scan_plain

    def spy(candidate, settings, display):
        (log / str(os.getpid())).touch()
        return real(candidate, settings, display)

    monkeypatch.setattr(runner, "scan_plain", spy)
    return lambda: {int(p.name) for p in log.iterdir()}


@needs_fork
def test_pool_gives_the_serial_results(tmp_path, monkeypatch, pids):
    root = make_files(tmp_path / "proj", 40)
    monkeypatch.chdir(root)
    monkeypatch.setattr(runner, "POOL_THRESHOLD", 8)
    serial = scan_paths([Path(".")], Config(root=root), jobs=1)
    assert pids() == {os.getpid()}
    parallel = scan_paths([Path(".")], Config(root=root), jobs=3)
    assert len(pids() - {os.getpid()}) > 1  # workers did the scanning
    assert parallel == serial
    # Files that parse report one DEV002 per `.cuda()` line; the others report a parse error.
    assert len([f for f in serial.findings if f.code == "DEV002"]) == sum(i % 4 for i in range(40) if i % 7)
    assert len(serial.errors) == len(range(0, 40, 7))


@needs_fork
def test_small_inputs_are_scanned_inline(tmp_path, monkeypatch, pids):
    root = make_files(tmp_path / "proj", 5)
    monkeypatch.chdir(root)
    assert 6 < runner.POOL_THRESHOLD

    def no_pool(*args, **kwargs):
        raise AssertionError("a pool was started for a small input")

    import multiprocessing

    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    result = scan_paths([Path(".")], Config(root=root), jobs=8)
    assert pids() == {os.getpid()}
    assert len(result.files) == 6


@needs_fork
def test_results_keep_input_order(tmp_path, monkeypatch):
    root = make_files(tmp_path / "proj", 30)
    monkeypatch.chdir(root)
    monkeypatch.setattr(runner, "POOL_THRESHOLD", 4)
    monkeypatch.setattr(runner, "CHUNK_SIZE", 1)
    names = sorted((p.name for p in root.glob("*.py")), reverse=True)  # not the order a scan would sort to
    candidates = [Candidate(root / n, "python") for n in names]
    for jobs in (1, 4):
        results = runner.run_all(candidates, names, Settings(), jobs=jobs)
        assert [r.path for r in results] == names


@needs_fork
def test_pool_results_are_cached(tmp_path, monkeypatch):
    root = make_files(tmp_path / "proj", 30)
    monkeypatch.chdir(root)
    monkeypatch.setattr(runner, "POOL_THRESHOLD", 4)
    cache = Cache(root, load_catalog().digest)
    first = scan_paths([Path(".")], Config(root=root), jobs=2, cache=cache)

    def scanned(*args):
        raise AssertionError("a cached file was scanned again")

    monkeypatch.setattr(runner, "scan_keyed", scanned)
    again = scan_paths([Path(".")], Config(root=root), jobs=2, cache=Cache(root, load_catalog().digest))
    assert again == first == scan_paths([Path(".")], Config(root=root), jobs=1)


def test_default_jobs_is_the_usable_cores():
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert runner.default_jobs() == expected


def test_progress_counts_every_scanned_file(tmp_path, monkeypatch):
    root = make_files(tmp_path / "proj", 12)
    monkeypatch.chdir(root)
    seen = {}

    from contextlib import contextmanager

    @contextmanager
    def progress(total):
        seen["total"] = total
        seen["done"] = 0

        def advance(n=1):
            seen["done"] += n

        yield advance

    cache = Cache(root, load_catalog().digest)
    scan_paths([Path(".")], Config(root=root), jobs=1, cache=cache, progress=progress)
    assert seen == {"total": 13, "done": 13}
    (root / "m000.py").write_text("y = y.cuda()\n", encoding="utf-8")
    scan_paths([Path(".")], Config(root=root), jobs=1, cache=Cache(root, load_catalog().digest), progress=progress)
    assert seen == {"total": 1, "done": 1}  # only the changed file is left to scan


ROOT = Path(__file__).resolve().parent.parent
TARGET_NAMES = ("neuron", "xla", "generic")


@pytest.mark.parametrize("folder", ["examples", "tests/accuracy"])
def test_one_pass_for_all_targets_equals_one_scan_per_target(folder, monkeypatch):
    from portcheck.runner import scan_paths_targets

    top = ROOT / folder
    monkeypatch.chdir(top)
    config = Config(root=top, respect_gitignore=False)
    together = scan_paths_targets([Path(".")], config, TARGET_NAMES, jobs=1)
    apart = tuple(scan_paths([Path(".")], config, target=t, jobs=1) for t in TARGET_NAMES)
    assert together == apart
    assert together[0].findings != together[2].findings  # the targets do differ, so the test can fail
    assert any(f.code.startswith("XLA") for f in together[0].findings)


def test_one_pass_parses_each_file_once(tmp_path, monkeypatch):
    import portcheck.analyze as analyze
    from portcheck.runner import scan_paths_targets

    root = make_files(tmp_path / "proj", 10)
    monkeypatch.chdir(root)
    parsed = []
    real = analyze.parse_python
    monkeypatch.setattr(
        analyze, "parse_python", lambda text, path="<unknown>": (parsed.append(path), real(text, path))[1]
    )
    scan_paths_targets([Path(".")], Config(root=root), TARGET_NAMES, jobs=1)
    together = list(parsed)
    parsed.clear()
    for target in TARGET_NAMES:
        scan_paths([Path(".")], Config(root=root), target=target, jobs=1)
    assert together and len(together) == len(set(together))  # each file at most once
    assert set(together) == set(parsed) and len(parsed) > len(together)


def test_one_pass_fills_every_targets_cache(tmp_path, monkeypatch):
    from portcheck.runner import scan_paths_targets

    root = make_files(tmp_path / "proj", 6)
    monkeypatch.chdir(root)
    together = scan_paths_targets(
        [Path(".")], Config(root=root), TARGET_NAMES, jobs=1, cache=Cache(root, load_catalog().digest)
    )

    def scanned(*args):
        raise AssertionError("a cached file was scanned again")

    monkeypatch.setattr(runner, "scan_keyed", scanned)
    for target, expected in zip(TARGET_NAMES, together):
        assert (
            scan_paths([Path(".")], Config(root=root), target=target, jobs=1, cache=Cache(root, load_catalog().digest))
            == expected
        )


@needs_fork
def test_parallel_fix_gives_the_serial_fix(tmp_path, monkeypatch):
    import shutil

    import portcheck.fixer.paths as fix_mod

    serial_root = make_files(tmp_path / "serial", 40)
    parallel_root = tmp_path / "parallel"
    shutil.copytree(serial_root, parallel_root)
    monkeypatch.setattr(runner, "POOL_THRESHOLD", 8)
    log = tmp_path / "pids"
    log.mkdir()
    real = fix_mod.fix_file

    def spy(*args, **kwargs):
        (log / str(os.getpid())).touch()
        return real(*args, **kwargs)

    monkeypatch.setattr(fix_mod, "fix_file", spy)
    reports = {}
    for root, jobs in ((serial_root, 1), (parallel_root, 3)):
        monkeypatch.chdir(root)
        reports[jobs] = fix_mod.fix_paths([Path(".")], unsafe=True, config=Config(root=root), cwd=root, jobs=jobs)
    assert len({int(p.name) for p in log.iterdir()} - {os.getpid()}) > 1  # workers did the fixing
    assert reports[3] == reports[1]
    assert sum(len(f.applied) for f in reports[1].files) > 0  # something was fixed, so the comparison can fail
    for path in serial_root.rglob("*.py"):
        assert (parallel_root / path.relative_to(serial_root)).read_bytes() == path.read_bytes()
    assert any(
        b".cuda()" not in p.read_bytes() and b"torch.zeros" in p.read_bytes() for p in parallel_root.rglob("*.py")
    )


def test_fix_parses_only_files_with_fixable_findings(tmp_path, monkeypatch):
    import libcst

    import portcheck.fixer.paths as fix_mod

    root = make_files(tmp_path / "proj", 12)
    (root / "plain.py").write_text("import torch\nx = torch.zeros(2)\n", encoding="utf-8")
    monkeypatch.chdir(root)
    parsed = []
    real = libcst.parse_module
    monkeypatch.setattr(
        libcst, "parse_module", lambda source, *a, **k: (parsed.append(source), real(source, *a, **k))[1]
    )
    report = fix_mod.fix_paths([Path(".")], unsafe=True, write=False, config=Config(root=root), cwd=root, jobs=1)
    texts = {p.name: p.read_text(encoding="utf-8") for p in root.glob("*.py")}
    fixed = {f.path for f in report.files if f.applied}
    assert fixed and {texts[name] for name in fixed} <= set(parsed)
    untouched = {text for name, text in texts.items() if ".cuda()" not in text}
    assert untouched and not untouched & set(parsed)
