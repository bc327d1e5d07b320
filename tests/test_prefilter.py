"""The textual pre-filter never hides a finding: a scan with it reports exactly what a scan that
runs every rule on every file reports, on the repository's fixtures and examples and on a sample
of a real corpus (when one is unpacked)."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import portcheck.scanner as scan_mod
from portcheck.catalog import load_catalog
from portcheck.filetypes import classify
from portcheck.model import TARGETS, Finding
from portcheck.prefilter import Prefilter
from portcheck.scanner import Settings, scan_bytes

ROOT = Path(__file__).resolve().parent.parent
# The transformers corpus bench/run.py builds, unless PORTCHECK_TEST_CORPUS names another folder.
CORPUS = Path(
    os.environ.get("PORTCHECK_TEST_CORPUS", str(ROOT / "bench" / "corpora" / "transformers-5.23.0" / "transformers"))
)
CORPUS_SAMPLE = 150


class EveryRule(Prefilter):
    """Lets every rule through: what a scan without a pre-filter does."""

    def candidates(self, text: str):
        return self.rules


def _files(top: Path) -> List[Path]:
    if not top.is_dir():
        return []
    found = [
        p
        for p in top.rglob("*")
        if p.is_file() and classify(p.name) in ("python", "notebook") and "__pycache__" not in p.parts
    ]
    return sorted(found)


def _corpus_sample() -> List[Path]:
    """Every k-th .py file of the sorted corpus, so the sample spreads over the whole tree."""
    files = sorted(CORPUS.rglob("*.py")) if CORPUS.is_dir() else []
    if not files:
        return []
    step = max(1, len(files) // CORPUS_SAMPLE)
    return files[::step][:CORPUS_SAMPLE]


def _key(f: Finding) -> Tuple:
    return (f.path, f.cell, f.line, f.column, f.end_line, f.end_column, f.code, f.severity, f.message, f.guarded)


def _scan(files: Sequence[Path], target: str) -> Dict[str, Tuple]:
    out = {}
    settings_ = Settings(target=target)
    for path in files:
        kind = classify(path.name) or "python"
        result = scan_bytes(path.read_bytes(), path.as_posix(), kind, settings_)
        out[path.as_posix()] = tuple(sorted(_key(f) for f in result.findings))
    return out


@pytest.fixture
def without_prefilter(monkeypatch):
    """A switch: inside `with without_prefilter:`, scans run every rule on every file."""
    real = scan_mod.prepare

    @functools.lru_cache(maxsize=None)
    def unfiltered(settings_):
        prepared = real(settings_)
        return replace(prepared, prefilter=EveryRule(prepared.rules))

    class Switch:
        def __enter__(self):
            monkeypatch.setattr(scan_mod, "prepare", unfiltered)

        def __exit__(self, *exc):
            monkeypatch.setattr(scan_mod, "prepare", real)

    return Switch()


def _compare(files: Sequence[Path], targets, without_prefilter) -> int:
    """Assert both scans agree on every file; return how many findings were compared."""
    compared = 0
    for target in targets:
        filtered = _scan(files, target)
        with without_prefilter:
            everything = _scan(files, target)
        missed = {
            p: sorted(set(everything[p]) - set(filtered[p]))
            for p in everything
            if set(everything[p]) - set(filtered[p])
        }
        extra = {
            p: sorted(set(filtered[p]) - set(everything[p])) for p in filtered if set(filtered[p]) - set(everything[p])
        }
        assert not missed, f"target {target}: the pre-filter hid findings: {missed}"
        assert not extra, f"target {target}: findings only with the pre-filter: {extra}"
        compared += sum(len(v) for v in everything.values())
    return compared


def test_prefilter_hides_nothing_in_fixtures_and_examples(without_prefilter):
    files = _files(ROOT / "tests") + _files(ROOT / "examples")
    assert files, "no fixture files found"
    compared = _compare(files, [t.value for t in TARGETS], without_prefilter)
    assert compared > 0, "the fixtures produced no findings, so the comparison proves nothing"


def test_prefilter_hides_nothing_in_a_real_corpus_sample(without_prefilter):
    files = _corpus_sample()
    if not files:
        pytest.skip(f"no corpus at {CORPUS} (set PORTCHECK_TEST_CORPUS)")
    compared = _compare(files, [t.value for t in TARGETS], without_prefilter)
    assert compared > 0, "the corpus sample produced no findings, so the comparison proves nothing"


def test_prefilter_skips_rules_for_files_without_their_tokens():
    # Without this, a pre-filter that passes everything would satisfy the tests above.
    prefilter = Prefilter(load_catalog().rules)
    assert len(prefilter.candidates("x = 1\n")) < len(prefilter.rules)
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in _corpus_sample() or _files(ROOT / "tests")]
    assert any(len(prefilter.candidates(t)) < len(prefilter.rules) for t in texts)


def _plain_present(text: str):
    """Whether a requirement string occurs, decided by regular expressions (not the pre-filter's code)."""
    import re

    from portcheck import prefilter as pf

    import_lists = [
        m.span() for m in re.finditer(r"import[ \t]*(?:\((?:[\s\w,]|#[^\n]*)*\)?|(?:[ \t\w,]|\\\r?\n)*)", text)
    ]

    memo: Dict[str, bool] = {}

    def present(token: str) -> bool:
        if token not in memo:
            memo[token] = decide(token)
        return memo[token]

    def decide(token: str) -> bool:
        for prefix in (pf._WHOLE, pf._ATTR, pf._MEMBER):
            if token.startswith(prefix):
                word = re.escape(token[len(prefix) :])
                for m in re.finditer(r"(?<!\w)" + word + r"(?!\w)", text):
                    after_dot = m.start() > 0 and text[m.start() - 1] == "."
                    if prefix == pf._WHOLE or after_dot:
                        return True
                    if prefix == pf._MEMBER and any(a <= m.start() < b for a, b in import_lists):
                        return True
                return False
        return token in text

    return present


def _plain_search(prefilter: Prefilter, text: str) -> Tuple[int, ...]:
    """Which rules a pre-filter should pass, computed the obvious way from each matcher's tokens and
    requirement clauses."""
    from portcheck.prefilter import holds, matcher_clauses

    present = _plain_present(text)
    hit = []
    for index, entry in enumerate(prefilter.rules):
        tokens = [tuple(m.tokens()) for m in entry.matchers]
        if any(not t for t in tokens):
            hit.append(index)
            continue
        gated = any(tok in text for t in tokens for tok in t)
        if gated and any(holds(matcher_clauses(m), present) for m in entry.matchers):
            hit.append(index)
    return tuple(hit)


def _indices(prefilter: Prefilter, rules) -> Tuple[int, ...]:
    position = {id(r): i for i, r in enumerate(prefilter.rules)}
    return tuple(position[id(r)] for r in rules)


def _built(rules, accelerate: bool) -> Prefilter:
    prefilter = Prefilter(rules, accelerate=accelerate)
    if accelerate and not prefilter.accelerated:
        pytest.skip("ahocorasick_rs is not installed: only the pure-Python search is in use")
    return prefilter


# Both searches: the pure-Python containment search, and the compiled automaton when installed.
SEARCHES = pytest.mark.parametrize("accelerate", [False, True], ids=["python", "automaton"])


@SEARCHES
def test_candidates_equal_a_plain_search_on_real_files(accelerate):
    prefilter = _built(load_catalog().rules, accelerate)
    files = _files(ROOT / "tests") + _corpus_sample()
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert _indices(prefilter, prefilter.candidates(text)) == _plain_search(prefilter, text), path


@SEARCHES
def test_every_invalid_case_passes_the_prefilter(accelerate):
    prefilter = _built(load_catalog().rules, accelerate)
    for entry in prefilter.rules:
        for case in entry.rule.invalid:
            if classify(case.filename) == "python":
                assert entry in prefilter.candidates(case.code), (
                    f"{entry.rule.code}: its own invalid case is filtered out"
                )


@dataclass(frozen=True)
class _Matcher:
    found: Tuple[str, ...]

    def tokens(self):
        return list(self.found)


@dataclass(frozen=True)
class _Rule:
    matchers: Tuple[_Matcher, ...]


# Tokens that hold one another, as real catalogs have them (`cuda` in `is_cuda`), and tokens of
# several words whose longest word is no token of its own (`flash_attn` in `from flash_attn`).
_TOKENS = (
    "cuda",
    "is_cuda",
    "cudnn",
    "nccl",
    "is_cuda_available",
    "cu",
    "dnn",
    "amp",
    "GradScaler",
    "Scaler",
    "from flash_attn",
    "import flash_attn",
    ", flash_attn",
    "torch.cuda",
    ", cupy",
    "from cupyx",
)
_RULES = tuple(_Rule((_Matcher(pair),)) for pair in zip(_TOKENS, _TOKENS[1:] + _TOKENS[:1])) + (
    _Rule((_Matcher(("is_cuda",)),)),
    _Rule((_Matcher(()),)),  # open-ended: always a candidate
    _Rule((_Matcher(("",)),)),  # an empty token is in every text
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            _TOKENS
            + (
                "_",
                ".",
                " ",
                ", ",
                "is_",
                "d",
                "a",
                "x",
                "from ",
                "import ",
                "flash_attn",
                "cupy",
                "torch",
                "é",
                "\ud800",
            )
        ),
        max_size=12,
    )
)
def test_candidates_equal_a_plain_search_on_generated_text(pieces):
    for accelerate in (False, True):
        prefilter = Prefilter(_RULES, accelerate=accelerate)  # type: ignore[arg-type]
        text = "".join(pieces)
        assert _indices(prefilter, prefilter.candidates(text)) == _plain_search(prefilter, text), prefilter.accelerated


@SEARCHES
def test_text_that_is_not_valid_unicode_is_searched_too(accelerate):
    # Notebook JSON may hold a lone surrogate, which has no UTF-8 form.
    prefilter = _built(_RULES, accelerate)
    text = "x = y.is_cuda \ud800 from flash_attn import z"
    assert _indices(prefilter, prefilter.candidates(text)) == _plain_search(prefilter, text)
    assert len(prefilter.candidates(text)) > len(prefilter.candidates("\ud800"))


def test_an_installed_automaton_is_used():
    prefilter = Prefilter(load_catalog().rules)
    try:
        import ahocorasick_rs  # noqa: F401
    except ImportError:
        assert not prefilter.accelerated
    else:
        assert prefilter.accelerated


def _codes(text: str, target: str = "neuron"):
    from portcheck.scanner import prepare

    return {r.rule.code for r in prepare(Settings(target=target)).prefilter.candidates(text)}


@pytest.mark.parametrize("accelerate", [False, True], ids=["python", "automaton"])
def test_everyday_words_alone_select_no_xla_rule(accelerate):
    # `where`, `det`, `any` and `item` in prose, in longer names, or without torch: no XLA rule.
    from portcheck.scanner import prepare

    rules = prepare(Settings(target="neuron")).rules
    prefilter = _built(rules, accelerate)
    text = (
        "import torch\n# where the model is, any item will do\n"
        "x = detach(y).items()\nz = lu_factor_custom\nfor batch in loader:\n    model(batch)\n"
    )
    codes = {r.rule.code for r in prefilter.candidates(text)}
    assert not {"XLA004", "XLA005", "XLA006", "XLA009"} & codes
    assert {"XLA004", "XLA009"} <= {
        r.rule.code for r in prefilter.candidates(text + "a = torch.where(m)\nb = torch.linalg.det(a)\n")
    }
    assert "XLA006" not in {r.rule.code for r in prefilter.candidates("x = 1\nif x.any():\n    pass\n")}  # no torch


_IMPORTED_BY_NAME = """\
from torch import (  # the names are imported one by one
    nonzero,  # import them, but not as an attribute
    where,
)
from torch.linalg import \\
    det

mask = where(x > 0)
if det(a):
    pass
"""


def test_names_imported_one_by_one_are_found(tmp_path, without_prefilter):
    # A qualified name's last segment may be spelled only in an import's name list, across lines
    # and after comments; the pre-filter still passes the rule, and the scans agree.
    assert {"XLA004", "XLA009"} <= _codes(_IMPORTED_BY_NAME)
    path = tmp_path / "by_name.py"
    path.write_text(_IMPORTED_BY_NAME, encoding="utf-8")
    assert _compare([path], [t.value for t in TARGETS], without_prefilter) > 0
