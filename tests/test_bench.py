"""The benchmark harness measures what it says: the whole process tree's CPU and memory, a
deterministic sample, corpora that no outer .gitignore hides, and ratios in the right direction."""

from __future__ import annotations

import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("bench.measure", reason="the bench/ folder is not part of this checkout")

from bench import corpora  # noqa: E402
from bench.measure import Measurement, measure, tree_rss  # noqa: E402
from bench.profile_scan import fold  # noqa: E402
from bench.results import Report, Row, Target, ratios, scaling  # noqa: E402
from bench.table import render  # noqa: E402

MB = 1_000_000

# A parent that starts a child; each holds 60 MB while both are alive, and the child burns CPU.
_TREE = textwrap.dedent(
    """
    import subprocess, sys, time
    if sys.argv[1:] == ["child"]:
        block = bytearray(60_000_000)
        for i in range(0, len(block), 4096):
            block[i] = 1
        end = time.process_time() + 0.4
        while time.process_time() < end:
            pass
        time.sleep(0.3)
    else:
        block = bytearray(60_000_000)
        for i in range(0, len(block), 4096):
            block[i] = 1
        subprocess.run([sys.executable, __file__, "child"], check=True)
    """
)


def test_measure_counts_the_whole_process_tree(tmp_path):
    script = tmp_path / "tree.py"
    script.write_text(_TREE, encoding="utf-8")
    m = measure([sys.executable, str(script)])
    assert m.returncode == 0
    # The CPU was burnt by the grandchild of this process: only a tree-wide count sees it.
    assert m.cpu_s >= 0.35
    assert m.wall_s >= 0.7
    # Both processes held 60 MB at once: the peak must exceed what either held alone.
    assert m.peak_rss_bytes >= 110 * MB


def test_measure_sees_other_processes_keeping_the_machine_busy():
    import subprocess

    spinner = subprocess.Popen(
        [sys.executable, "-c", "import time\nend = time.time() + 3\nwhile time.time() < end: pass"]
    )
    try:
        time.sleep(0.2)
        m = measure([sys.executable, "-c", "import time; time.sleep(1)"])
    finally:
        spinner.kill()
        spinner.wait()
    # The measured command slept while a neighbour kept one core busy (others may add more).
    assert m.cpu_s < 0.3
    assert m.others_cores >= 0.7


def test_measure_reports_the_exit_status_and_the_output(tmp_path):
    out = tmp_path / "out.txt"
    m = measure([sys.executable, "-c", "print('hello'); raise SystemExit(3)"], stdout=out)
    assert m.returncode == 3
    assert out.read_text().strip() == "hello"


def test_tree_rss_of_a_missing_process_is_zero():
    assert tree_rss(2**22 + 12345) == 0


def test_every_kth_is_deterministic_and_spread():
    files = [Path(f"f{i:02}.py") for i in range(10)]
    assert corpora.every_kth(files, 3) == [files[0], files[3], files[6]]
    assert corpora.every_kth(files, 10) == files
    assert corpora.every_kth(files, 50) == files
    assert corpora.every_kth(files, 0) == []


def _wheel(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("demo/__init__.py", "import torch\nx = torch.ones(2).cuda()\n")
        zf.writestr("demo/sub/util.py", "def f(t):\n    return t.cuda()\n")
        zf.writestr("demo/data.json", "{}")
        zf.writestr("demo-1.0.dist-info/METADATA", "Name: demo\n")
        zf.writestr("demo-1.0.dist-info/hook.py", "x = 1\n")
    return path


def test_unpack_keeps_only_python_sources(tmp_path):
    dest = tmp_path / "demo-1.0"
    corpora.unpack_python(_wheel(tmp_path / "demo-1.0-py3-none-any.whl"), dest)
    kept = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert kept == ["demo/__init__.py", "demo/sub/util.py", "pyproject.toml"]


def test_a_corpus_inside_an_ignored_folder_is_still_scanned(tmp_path):
    from portcheck.config import load_config
    from portcheck.runner import scan_paths

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".gitignore").write_text("/bench/corpora/\n")
    base = repo / "bench" / "corpora"
    dest = base / "demo-1.0"
    corpora.unpack_python(_wheel(tmp_path / "demo-1.0-py3-none-any.whl"), dest)
    corpus = corpora.describe(dest, [dest / "demo"])
    assert corpus.files == 2
    result = scan_paths(list(corpus.paths), load_config(corpus.paths[0]), target="generic", cwd=dest, jobs=1)
    assert sorted(f.path for f in result.files) == ["demo/__init__.py", "demo/sub/util.py"]
    assert {f.code for f in result.findings} == {"DEV002"}


def test_sample_and_copies(tmp_path):
    dest = tmp_path / "demo-1.0"
    corpora.unpack_python(_wheel(tmp_path / "demo-1.0-py3-none-any.whl"), dest)
    source = corpora.describe(dest, [dest / "demo"])
    sample = corpora.sample_corpus(source, 1, tmp_path)
    assert sample.files == 1 and (sample.root / "pyproject.toml").is_file()
    doubled = corpora.copies(source, 2, tmp_path)
    assert doubled.files == 2 * source.files and doubled.bytes == 2 * source.bytes
    assert [p.name for p in doubled.paths] == ["copy1", "copy2"]


def _row(label, wall, cpu, rss_mb, files=100, size=1000):
    return Row(label, label, "sample", (), files, size, (Measurement(wall, cpu, int(rss_mb * MB), 0),))


def test_ratios_are_peer_over_portcheck():
    mine = _row("portcheck", 0.5, 0.4, 50)
    (r,) = ratios(mine, [_row("torchfix", 50.0, 80.0, 200)])
    assert (r.wall, r.cpu, r.rss) == (100.0, 200.0, 4.0)


def test_failed_or_missing_rows_give_no_ratio():
    mine = _row("portcheck", 0.5, 0.4, 50)
    broken = Row("fixit", "fixit", "sample", (), 100, 1000, (), "failed", "exit 2")
    assert ratios(mine, [broken]) == []


def test_scaling_is_relative_to_the_first_row():
    rows = [
        _row("1x", 2.0, 2.0, 50, size=1000),
        _row("2x", 3.0, 4.0, 50, size=2000),
        _row("4x", 6.0, 8.0, 50, size=4000),
    ]
    assert scaling(rows) == [("1x", 1.0, 1.0), ("2x", 2.0, 1.5), ("4x", 4.0, 3.0)]


def test_targets_compare_in_the_stated_direction():
    assert Target("speed-up", 150.0, 100, "x", higher_is_better=True).met is True
    assert Target("speed-up", 50.0, 100, "x", higher_is_better=True).met is False
    assert Target("wall", 0.5, 1, "s").met is True
    assert Target("wall", 1.5, 1, "s").met is False
    assert Target("wall", None, 1, "s").met is None


def test_render_shows_unavailable_rows_and_verdicts():
    missing = Row("fix", "portcheck fix --diff", "portcheck", (), 10, 100, (), "unavailable", "not in this build")
    report = Report(
        started="2026-01-01T00:00:00",
        machine={"nproc": 2},
        versions={"portcheck": "0"},
        settings={},
        rows=(_row("portcheck scan", 0.5, 0.4, 50), missing),
        targets=(Target("wall", 1.5, 1, "s"), Target("rss", None, 400, "MB")),
    )
    text = render(report)
    assert "unavailable" in text and "not in this build" in text
    assert "MISSED" in text and "not measured" in text


def test_fold_counts_self_and_inclusive_samples():
    raw = [
        "main (a.py:1);scan (b.py:10);parse (ast.py:50) 6",
        "main (a.py:1);scan (b.py:12);walk (w.py:3) 3",
        "main (a.py:1);scan (b.py:12);walk (w.py:7);walk (w.py:9) 1",
    ]
    own, inclusive, total = fold(raw)
    assert total == 10
    assert own["parse (ast.py)"] == 6 and own["walk (w.py)"] == 4
    assert inclusive["scan (b.py)"] == 10 and inclusive["walk (w.py)"] == 4


def test_a_run_disturbed_by_a_neighbour_is_run_again(tmp_path, monkeypatch):
    import bench.run as run_mod

    busy = Measurement(1.0, 1.0, 10 * MB, 0, others_cpu_s=1.0)
    quiet = Measurement(0.5, 1.0, 10 * MB, 0, others_cpu_s=0.0)
    results = iter([busy, quiet, quiet])
    monkeypatch.setattr(run_mod, "measure", lambda *a, **k: next(results))
    monkeypatch.setattr(run_mod.time, "sleep", lambda s: None)
    bench = run_mod.Bench(run_mod.parse_args(["--results", str(tmp_path)]))
    corpus = corpora.Corpus(tmp_path, (tmp_path,), 1, 10, 1)
    row = bench.run("k", "portcheck", "portcheck", ["true"], corpus, 2)
    assert row.runs == (quiet, quiet)
    assert "1 busy run(s) discarded" in row.note
    # Peers are too slow to repeat: their disturbed run is kept.
    results = iter([busy])
    peer = bench.run("p", "torchfix", "sample", ["true"], corpus, 1, retry_busy=False)
    assert peer.runs == (busy,)
