"""Property tests on generated Python programs (hypothesmith), alone and with CUDA snippets spliced in.

`scan` never raises and reports sane positions; spliced snippets are found wherever they land; `fix`
output parses, is idempotent, and changes only flagged lines, import lines and the lines it adds.

By default each property runs a few dozen examples, the same ones on every run. For a long run
with fresh examples:
    PORTCHECK_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz.py
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Set, Tuple

import hypothesmith
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from portcheck.model import FileResult
from portcheck.scanner import Settings, scan_bytes
from portcheck.source import python_lines

LONG_RUN = int(os.environ.get("PORTCHECK_FUZZ_EXAMPLES", "0"))
# Generated programs are full of constructs the compiler warns about (`1 is 1`, invalid escapes).
pytestmark = [
    pytest.mark.filterwarnings("ignore::SyntaxWarning"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


def _has_fix() -> bool:
    """`portcheck fix` is part of every build: a broken import fails here, loudly, instead of skipping."""
    from portcheck.fixer.command import fix  # noqa: F401

    return True


HAS_FIX = _has_fix()


def _profile(name: str, default_examples: int) -> settings:
    # The default run is a fixed sample, the same on every machine, so a suite run never fails by
    # chance; a long run explores fresh examples and keeps failures in the example database.
    settings.register_profile(
        name,
        max_examples=LONG_RUN or default_examples,
        deadline=None,
        derandomize=not LONG_RUN,
        database=settings.default.database if LONG_RUN else None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    return settings.get_profile(name)


# hypothesmith's grammar strategy is cheap; its node strategy (libcst-built trees) costs ~0.15 s an example.
GRAMMAR = _profile("portcheck-fuzz-grammar", 40)
NODES = _profile("portcheck-fuzz-nodes", 8)
FIXES = _profile("portcheck-fuzz-fix", 25)

# (snippet, the rule it must trigger wherever it is spliced, or None when that depends on the imports
# of the surrounding program, which a generated program may shadow).
SNIPPETS: Tuple[Tuple[str, Optional[str]], ...] = (
    ('model.to("cuda")', "DEV001"),
    ("DEVICE = 'cuda:0'", "DEV001"),
    ("def train(model, device='cuda'):\n    return model.to(device)", "DEV001"),
    ("x = y.cuda()", "DEV002"),
    ("batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}", "DEV002"),
    ("if t.is_cuda:\n    pass", "DEV004"),
    ("use_amp = args.device == 'cuda'", "DEV004"),
    ("import torch\nok = torch.cuda.is_available()", None),
    ("import torch\nt = torch.zeros(3, device='cuda')", None),
    ("import torch\nif torch.cuda.is_available():\n    m = m.cuda()\nelse:\n    m = m.cpu()", None),
    ("import torch\nstate = torch.load(path, map_location='cuda')", None),
)


def _catalog_snippets() -> Tuple[Tuple[str, Optional[str]], ...]:
    """Every Python invalid case of every rule with an autofix: code the fixer must rewrite."""
    from portcheck.catalog import load_catalog

    cases = []
    for entry in load_catalog().rules:
        if entry.rule.fixable:
            cases.extend((c.code.rstrip("\n"), None) for c in entry.rule.invalid if c.filename.endswith(".py"))
    return tuple(cases)


FIXABLE_SNIPPETS = _catalog_snippets()

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def split_lines(text: str) -> List[str]:
    """Lines with their endings, split where Python splits them."""
    return _LINE.findall(text)


def insertion_points(source: str, lines: Sequence[str]) -> List[int]:
    """0-based line indexes before which a top-level statement may be inserted without changing the rest."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [len(lines)]
    points = {len(lines)}
    after_future = 0
    for stmt in module.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            after_future = stmt.end_lineno or stmt.lineno
            continue
        decorators = getattr(stmt, "decorator_list", [])
        if decorators:
            start = min(d.lineno for d in decorators) - 1
            starts_line = lines[start].startswith("@")
        else:
            start = stmt.lineno - 1
            starts_line = stmt.col_offset == 0  # not after a `;`
        if not starts_line:
            continue
        if start > 0 and lines[start - 1].rstrip("\r\n").endswith("\\"):
            continue  # a backslash continuation runs into this line
        points.add(start)
    return sorted(p for p in points if p >= after_future)


@dataclass(frozen=True)
class Spliced:
    source: str
    expected: Tuple[Tuple[int, str], ...]  # (1-based line of the snippet's first line, rule code)


@st.composite
def spliced_programs(draw, programs, snippets: Sequence[Tuple[str, Optional[str]]] = SNIPPETS) -> Spliced:
    base = draw(programs)
    lines = split_lines(base)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    points = insertion_points(base, lines)
    chosen = draw(st.lists(st.tuples(st.sampled_from(points), st.sampled_from(snippets)), min_size=1, max_size=4))
    newline = "\r\n" if "\r\n" in base else "\n"
    inserts = {}
    for point, snippet in chosen:
        inserts.setdefault(point, []).append(snippet)
    out: List[str] = []
    expected: List[Tuple[int, str]] = []
    for index in range(len(lines) + 1):
        for text, code in inserts.get(index, []):
            if code is not None:
                expected.append((len(out) + 1, code))
            out.extend(line + newline for line in text.split("\n"))
        if index < len(lines):
            out.append(lines[index])
    return Spliced("".join(out), tuple(expected))


def _parses(source: str) -> bool:
    """Whether `source` is Python the scanner can read: it parses and is valid UTF-8 text."""
    try:
        source.encode("utf-8")
        ast.parse(source)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeEncodeError):
        return False


def scan_text(source: str, target: str = "generic", path: str = "fuzz.py") -> FileResult:
    return scan_bytes(source.encode("utf-8", "surrogatepass"), path, "python", Settings(target=target))


def assert_sane(result: FileResult, source: str) -> None:
    lines = python_lines(source)
    for f in result.findings:
        assert 1 <= f.line <= f.end_line <= max(1, len(lines)), f
        assert f.column >= 1 and f.end_column >= 1, f
        if f.line == f.end_line:
            assert f.end_column >= f.column, f
        assert f.column <= len(lines[f.line - 1]) + 1, (f, lines[f.line - 1])
        assert f.source_line == lines[f.line - 1].strip(), f
    if result.error is not None:
        assert result.error.message and "\n" not in result.error.message, result.error


# --- scan -------------------------------------------------------------------------------------


@GRAMMAR
@given(source=hypothesmith.from_grammar())
def test_scan_never_raises_on_generated_programs(source):
    for target in ("generic", "neuron"):
        assert_sane(scan_text(source, target), source)


@NODES
@given(source=hypothesmith.from_node())
def test_scan_never_raises_on_generated_trees(source):
    assert_sane(scan_text(source), source)


@GRAMMAR
@given(program=spliced_programs(hypothesmith.from_grammar()))
def test_spliced_cuda_snippets_are_found(program):
    result = scan_text(program.source)
    assert_sane(result, program.source)
    if not _parses(program.source):
        return  # a splice the generated program's layout did not allow; never raising is enough
    assert result.error is None, result.error
    found = {(f.line, f.code) for f in result.findings}
    missing = [e for e in program.expected if e not in found]
    assert not missing, (missing, program.source)
    event(f"snippets checked: {bool(program.expected)}")


@NODES
@given(program=spliced_programs(hypothesmith.from_node()))
def test_spliced_cuda_snippets_are_found_in_generated_trees(program):
    result = scan_text(program.source)
    assert_sane(result, program.source)
    if _parses(program.source):
        found = {(f.line, f.code) for f in result.findings}
        assert not [e for e in program.expected if e not in found], program.source


def notebook_json(cells: Sequence[Tuple[str, str]]) -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": kind,
                    "metadata": {},
                    "source": _as_notebook_source(text),
                    **({"outputs": [], "execution_count": None} if kind == "code" else {}),
                }
                for kind, text in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def _as_notebook_source(text: str) -> List[str]:
    # Jupyter stores a cell as a list of lines, each with its line ending.
    return split_lines(text)


@GRAMMAR
@given(programs=st.lists(spliced_programs(hypothesmith.from_grammar()), min_size=1, max_size=3), magic=st.booleans())
def test_spliced_snippets_are_found_in_notebook_cells(programs, magic):
    cells: List[Tuple[str, str]] = []
    expected = set()
    for i, program in enumerate(programs):
        source = ("%matplotlib inline\n" if magic else "") + program.source
        cells.append(("markdown", "# Step {}\nRun `model.cuda()` here.".format(i)))
        cells.append(("code", source))
        if _parses(program.source):
            offset = 1 if magic else 0
            expected.update((len(cells), line + offset, code) for line, code in program.expected)
    source = notebook_json(cells)
    result = scan_bytes(source.encode("utf-8", "surrogatepass"), "fuzz.ipynb", "notebook", Settings())
    if result.error is not None:
        assert "\n" not in result.error.message
        return
    found = {(f.cell, f.line, f.code) for f in result.findings}
    assert expected <= found, (sorted(expected - found), cells)
    for f in result.findings:
        assert f.cell is not None and f.cell % 2 == 0, f  # code cells only, never the markdown
        code = cells[f.cell - 1][1]
        assert 1 <= f.line <= f.end_line <= max(1, len(python_lines(code))), (f, code)


@GRAMMAR
@given(data=st.binary(max_size=2000))
def test_scan_never_raises_on_arbitrary_bytes(data):
    for kind, path in (
        ("python", "fuzz.py"),
        ("notebook", "fuzz.ipynb"),
        ("requirements", "requirements.txt"),
        ("dockerfile", "Dockerfile"),
    ):
        result = scan_bytes(data, path, kind, Settings())
        if result.error is not None:
            assert "\n" not in result.error.message


# --- fix ------------------------------------------------------------------------------------

needs_fix = pytest.mark.skipif(not HAS_FIX, reason="`portcheck fix` is not part of this build")


def run_fix(path: Path, target: str, unsafe: bool) -> None:
    from click.testing import CliRunner

    from portcheck.cli import main

    args = ["fix", str(path), "--target", target] + (["--unsafe-fixes"] if unsafe else [])
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), (result.exit_code, result.output, result.exception)


def import_lines(source: str) -> Set[int]:
    """1-based lines that belong to import statements anywhere in the module."""
    out: Set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return out


def added_block_lines(before: str, after: str) -> Set[int]:
    """1-based lines of the device block: top-level assignments the fix added to one of the names it
    gives the resolved device (`DEVICE = torch.accelerator...`)."""
    from portcheck.fixer.device import NAME_CANDIDATES

    old = {ast.dump(s) for s in ast.parse(before).body}
    out: Set[int] = set()
    for stmt in ast.parse(after).body:
        if ast.dump(stmt) in old or not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if all(isinstance(t, ast.Name) and t.id.rstrip("_0123456789") in NAME_CANDIDATES for t in targets):
            out.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return out


def assert_changes_are_confined(before: str, after: str, flagged: Set[int]) -> None:
    """Every changed line is a flagged line, an import line, or a line of the added device block.

    Import lines, the added block and blank lines are set aside first; what is left of both files
    must then line up, differing only at flagged lines (a rewritten node may grow or shrink in
    place, but no line appears between two unchanged ones).
    """
    old_lines, new_lines = python_lines(before), python_lines(after)
    skip_old = import_lines(before)
    skip_new = import_lines(after) | added_block_lines(before, after)
    a = [(n, t) for n, t in enumerate(old_lines, 1) if n not in skip_old and t.strip()]
    b = [(n, t) for n, t in enumerate(new_lines, 1) if n not in skip_new and t.strip()]
    matcher = difflib.SequenceMatcher(a=[t for _, t in a], b=[t for _, t in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        assert op != "insert", ("added a line that is neither an import nor the device block", [t for _, t in b[j1:j2]])
        touched = {a[k][0] for k in range(i1, i2)}
        assert touched <= flagged, (
            "changed a line nothing flagged",
            [t for _, t in a[i1:i2]],
            [t for _, t in b[j1:j2]],
        )


def check_fix(tmp_path_factory, program: Spliced, target: str, unsafe: bool) -> None:
    if not _parses(program.source):
        return
    folder = tmp_path_factory.mktemp("fuzzfix")
    path = folder / "fuzz.py"
    data = program.source.encode("utf-8", "surrogatepass")
    path.write_bytes(data)
    scan_target = "generic" if target == "cpu" else target
    flagged = set()
    for f in scan_text(program.source, scan_target).findings:
        flagged.update(range(f.line, f.end_line + 1))
    run_fix(path, target, unsafe)
    once = path.read_bytes()
    after = once.decode("utf-8", "surrogatepass")
    assert _parses(after), (program.source, after)
    assert_changes_are_confined(program.source, after, flagged)
    event(f"fix changed the file: {once != data}")
    run_fix(path, target, unsafe)
    assert path.read_bytes() == once, "a second fix changed the file again"


FIX_TARGETS = st.sampled_from(["generic", "cpu", "neuron", "xla"])


@needs_fix
@FIXES
@given(
    program=spliced_programs(hypothesmith.from_grammar(), SNIPPETS + FIXABLE_SNIPPETS),
    target=FIX_TARGETS,
    unsafe=st.booleans(),
)
def test_fix_parses_is_idempotent_and_stays_inside_findings(tmp_path_factory, program, target, unsafe):
    check_fix(tmp_path_factory, program, target, unsafe)


@needs_fix
@NODES
@given(
    program=spliced_programs(hypothesmith.from_node(), SNIPPETS + FIXABLE_SNIPPETS),
    target=FIX_TARGETS,
    unsafe=st.booleans(),
)
def test_fix_on_generated_trees(tmp_path_factory, program, target, unsafe):
    check_fix(tmp_path_factory, program, target, unsafe)
