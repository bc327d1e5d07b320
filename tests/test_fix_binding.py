"""Every call a fix adds resolves in the installed torch and binds with `inspect.signature`.

The sources are every fixable rule's invalid examples, the runtime-proof scripts, the example project
and a file using every recipe, fixed for every target with unsafe fixes on, at `min-torch` 2.6 and
2.9. Each call the fixed text has that the original did not is resolved attribute by attribute from
`torch` and bound with placeholder arguments (positional-only parameters included). Names under
`torch_xla` are only counted: torch_xla is not installed here. Nothing emitted may need a newer torch
than `min-torch`.
"""

from __future__ import annotations

import ast
import inspect
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

import pytest
from test_fix_catalog import run_fix

from portcheck.catalog import Catalog, load_catalog
from portcheck.filetypes import classify
from portcheck.fixer.engine import FIX_TARGETS
from portcheck.fixer.torchapi import at_least, required

torch = pytest.importorskip("torch", reason="the binding check resolves emitted calls in an installed torch")

ROOT = Path(__file__).resolve().parent.parent
MIN_TORCH = ("2.6", "2.9")


def _dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _calls(text: str) -> Counter:
    """Calls of dotted names, by their code (a call added by a fix is one the original lacks)."""
    found: Counter = Counter()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and _dotted(node.func):
            found[ast.unparse(node)] += 1
    return found


def added_calls(before: str, after: str) -> List[ast.Call]:
    extra = _calls(after) - _calls(before)
    out = []
    for code, _ in extra.items():
        call = ast.parse(code, mode="eval").body
        assert isinstance(call, ast.Call)
        out.append(call)
    return out


@dataclass
class Tally:
    calls: int = 0
    bound: int = 0
    not_inspectable: int = 0  # C types such as torch.device: resolved, not bindable by signature
    xla: int = 0
    other: int = 0  # calls of the file's own names (`x.to(DEVICE)`)
    missing: List[str] = field(default_factory=list)
    unbound: List[str] = field(default_factory=list)
    too_new: List[str] = field(default_factory=list)


def _resolve(name: str):
    obj = torch
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def check_calls(calls: Iterable[ast.Call], min_torch: str, tally: Tally, where: str) -> None:
    for call in calls:
        name = _dotted(call.func) or ""
        tally.calls += 1
        root = name.split(".", 1)[0]
        if root == "torch_xla":
            tally.xla += 1
            continue
        if root != "torch":
            tally.other += 1
            continue
        needed = required([name])
        if not at_least(min_torch, needed):
            tally.too_new.append(f"{where}: {ast.unparse(call)} needs {needed}")
        try:
            obj = _resolve(name)
        except AttributeError:
            tally.missing.append(f"{where}: {ast.unparse(call)}")
            continue
        try:
            signature = inspect.signature(obj)
        except (TypeError, ValueError):
            tally.not_inspectable += 1
            continue
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            tally.not_inspectable += 1
            continue
        try:
            signature.bind(*[None] * len(call.args), **{k.arg: None for k in call.keywords if k.arg})
        except TypeError as exc:
            tally.unbound.append(f"{where}: {ast.unparse(call)} ({exc})")
            continue
        tally.bound += 1


def _sources(catalog: Catalog) -> List[Tuple[str, str]]:
    out = []
    for entry in catalog.rules:
        if entry.rule.fixable:
            for i, case in enumerate(entry.rule.invalid):
                if (classify(case.filename) or "python") == "python":
                    out.append((f"{entry.rule.code}[{i}]", case.code))
    for folder in ("tests/runtime", "examples"):
        for path in sorted((ROOT / folder).glob("*.py")):
            out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    from test_fix_recipes import EVERY_KIND

    out.append(("EVERY_KIND", EVERY_KIND))
    return out


def fix_and_tally(sources: Iterable[Tuple[str, str]], catalog: Optional[Catalog], tally: Tally) -> Dict[str, int]:
    fixed = 0
    for where, source in sources:
        for target in FIX_TARGETS:
            for min_torch in MIN_TORCH:
                result = run_fix(source, target, catalog=catalog, min_torch=min_torch)
                if result.text == source:
                    continue
                fixed += 1
                check_calls(added_calls(source, result.text), min_torch, tally, f"{where} [{target}, {min_torch}]")
    return {"fixed texts": fixed}


def test_every_emitted_call_resolves_and_binds(capsys):
    catalog = load_catalog()
    tally = Tally()
    counts = fix_and_tally(_sources(catalog), catalog, tally)
    with capsys.disabled():
        print(
            f"\nemitted calls: {tally.calls} in {counts['fixed texts']} fixed texts; bound {tally.bound}, "
            f"resolved but not inspectable {tally.not_inspectable}, torch_xla {tally.xla}, "
            f"the file's own {tally.other}; missing attributes {len(tally.missing)}, "
            f"not binding {len(tally.unbound)}, newer than min-torch {len(tally.too_new)}"
        )
    assert tally.bound > 50
    assert tally.missing == []
    assert tally.unbound == []
    assert tally.too_new == []


def test_the_check_catches_a_keyword_to_a_positional_only_parameter():
    tally = Tally()
    check_calls(added_calls("x = 1\n", "torch.accelerator.synchronize(device=d)\n"), "2.6", tally, "probe")
    assert tally.unbound and not tally.bound
    tally = Tally()
    check_calls(added_calls("x = 1\n", "torch.accelerator.no_such_call()\n"), "2.6", tally, "probe")
    assert tally.missing
    tally = Tally()
    check_calls(added_calls("x = 1\n", "torch.accelerator.empty_cache()\n"), "2.6", tally, "probe")
    assert tally.too_new


# Folders of fetched public repositories (bench/README.md); the suite runs these only when it is set.
CORPUS = Path(os.environ.get("PORTCHECK_REAL_CORPUS", "/nonexistent-real-corpus"))


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the real-repository corpus is not on this machine")
def test_every_emitted_call_binds_on_real_repositories(capsys):
    catalog = load_catalog()
    tally = Tally()
    sources = []
    for path in sorted(CORPUS.glob("*/**/*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if "cuda" in text and len(text) < 200_000:
            sources.append((str(path.relative_to(CORPUS)), text))
    fixed = 0
    for where, source in sources:
        for target in ("generic", "xla"):
            try:
                result = run_fix(source, target, catalog=catalog)
            except Exception:  # a file the rewriter refuses (parse errors) is not a binding question
                continue
            if result.text != source:
                fixed += 1
                check_calls(added_calls(source, result.text), "2.6", tally, f"{where} [{target}]")
    with capsys.disabled():
        print(
            f"\ncorpus: {len(sources)} files, {fixed} fixed texts, emitted calls {tally.calls}: bound {tally.bound}, "
            f"not inspectable {tally.not_inspectable}, torch_xla {tally.xla}, own {tally.other}; "
            f"missing {len(tally.missing)}, not binding {len(tally.unbound)}, too new {len(tally.too_new)}"
        )
    assert tally.missing == [] and tally.unbound == [] and tally.too_new == []
