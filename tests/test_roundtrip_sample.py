"""A bounded real-corpus round trip (the full one is bench/roundtrip.py): scan and fix a sample of
transformers sources and the repository's examples, on copies, with no crash, no file that stops
compiling, and a second fix that changes nothing."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPORA = (ROOT / "bench" / "corpora" / "transformers-5.23.0" / "transformers", Path("/tmp/corpus/tf/transformers"))
SAMPLE = 40


def _load_roundtrip():
    spec = importlib.util.spec_from_file_location("roundtrip", ROOT / "bench" / "roundtrip.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("roundtrip", module)
    spec.loader.exec_module(module)
    return module


roundtrip = _load_roundtrip()


def _has_fix() -> bool:
    try:
        from portcheck.fixer.command import fix  # noqa: F401
    except ImportError:
        return False
    return True


needs_fix = pytest.mark.skipif(not _has_fix(), reason="`portcheck fix` is not part of this build")


def corpus() -> Path:
    for folder in CORPORA:
        if folder.is_dir():
            return folder
    pytest.skip("no transformers corpus here (python bench/roundtrip.py builds one)")


# Text a fix acts on: a `.cuda(` call, a "cuda" device string, a `torch.cuda.` API.
FIXABLE = re.compile(rb"\.cuda\(|[\"']cuda(:\d)?[\"']|torch\.cuda\.")
MAX_BYTES = 40_000  # the largest modules take seconds each through libcst; the full run has them


def sample(top: Path, n: int) -> List[str]:
    """An evenly spread sample of modules under MAX_BYTES, half of them with text a fix acts on."""
    rels = [r for r in roundtrip.python_files(top) if (top / r).stat().st_size <= MAX_BYTES]
    fixable = [r for r in rels if FIXABLE.search((top / r).read_bytes())]
    chosen = set(fixable)
    other = [r for r in rels if r not in chosen]
    pick = every_kth(fixable, n // 2)
    pick += every_kth(other, n - len(pick))
    return sorted(pick)


def every_kth(items: List[str], n: int) -> List[str]:
    if n <= 0:
        return []
    return items[:: max(1, len(items) // n)][:n]


def round_trip_all(src: Path, rels: List[str], work: Path) -> List:
    roundtrip.copy_tree(src, rels, work)
    (work / "pyproject.toml").write_text("[tool.portcheck]\nrespect-gitignore = false\n")
    # Unsafe fixes too: they are a superset of the safe ones, so more of the fixer is exercised.
    return [roundtrip.round_trip(work / rel, rel, "generic", unsafe=True) for rel in rels]


def assert_clean(outcomes) -> None:
    crashes = [(o.path, o.crash) for o in outcomes if o.crash]
    assert not crashes, crashes
    assert not [o.path for o in outcomes if o.regression], "files that compiled before no longer compile"
    assert not [o.path for o in outcomes if o.idempotent is False], "a second fix changed these files"


@needs_fix
def test_corpus_sample_round_trips(tmp_path):
    top = corpus()
    rels = sample(top, SAMPLE)
    assert len(rels) == SAMPLE
    outcomes = round_trip_all(top, rels, tmp_path / "src")
    assert_clean(outcomes)
    # Half the sample is chosen where fixes happen: a fix that did nothing would make this test empty.
    assert sum(o.changed for o in outcomes) >= 5, [(o.path, o.findings, o.changed) for o in outcomes]
    # The originals are untouched: the round trip works on copies.
    assert all(
        (top / r).read_bytes() != (tmp_path / "src" / r).read_bytes()
        for r in rels
        if next(o for o in outcomes if o.path == r).changed
    )


@needs_fix
def test_examples_round_trip(tmp_path):
    src = ROOT / "examples"
    rels = roundtrip.python_files(src) if src.is_dir() else []
    if not rels:
        pytest.skip("the repository has no examples yet")
    outcomes = round_trip_all(src, rels, tmp_path / "src")
    assert_clean(outcomes)
    assert any(o.changed for o in outcomes)


KILLER_SITE = """
import builtins, os
_compile = builtins.compile

def compile(source, filename, *args, **kwargs):
    if str(filename).endswith("boom.py"):
        os._exit(70)
    return _compile(source, filename, *args, **kwargs)

builtins.compile = compile
"""


def test_a_file_that_kills_the_worker_is_counted_and_the_run_goes_on(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("a.py", "boom.py", "c.py"):
        (src / name).write_text("x = 1\n")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(KILLER_SITE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), str(ROOT)]))
    # The runner itself does not load the killer: only its children see PYTHONPATH at start-up.
    outcomes = {o.path: o for o in roundtrip.run_shard(src, ["a.py", "boom.py", "c.py"], "generic", False)}
    assert sorted(outcomes) == ["a.py", "boom.py", "c.py"]
    assert "died" in outcomes["boom.py"].crash and "70" in outcomes["boom.py"].crash
    # The files before and after it were round-tripped normally, by the first and the restarted worker.
    for name in ("a.py", "c.py"):
        assert outcomes[name].crash is None and outcomes[name].compiled_before and outcomes[name].idempotent, outcomes[
            name
        ]
