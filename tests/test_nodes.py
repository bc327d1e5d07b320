"""The fast tree walks and text searches give exactly what the plain ones give (portcheck.pyscan.nodes,
portcheck.pyscan.definitions, portcheck.project_index's parallel facts): the speed-ups change no answer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from portcheck.project_index import TEXT_FACTS, TextSources
from portcheck.pyscan.definitions import _CLOSING, COMPUTED_LOOKUP, _headers, looks_up_by_computed_name
from portcheck.pyscan.nodes import children, module_nodes, walk

ROOT = Path(__file__).resolve().parents[1]
# Real Python text of every shape: the project's own modules and tests, and the accuracy corpus.
SOURCES = sorted((ROOT / "portcheck").rglob("*.py")) + sorted((ROOT / "tests" / "accuracy").rglob("*.py"))


def _texts():
    for path in SOURCES:
        yield path.read_text(encoding="utf-8", errors="replace")


def test_walk_yields_what_ast_walk_yields_in_the_same_order():
    checked = 0
    for text in _texts():
        tree = ast.parse(text)
        for node in [tree, *[n for n in ast.walk(tree) if isinstance(n, (ast.expr, ast.stmt))][:200]]:
            assert [id(n) for n in walk(node)] == [id(n) for n in ast.walk(node)]
            assert [id(n) for n in children(node)] == [id(n) for n in ast.iter_child_nodes(node)]
            checked += 1
    assert checked > 1000


def test_a_definition_keeps_its_walk_and_answers_the_same_again():
    tree = ast.parse("class A:\n    def f(self):\n        return self.g(1) + 2\n")
    method = tree.body[0].body[0]
    first = list(walk(method))
    assert first == list(walk(method)) == list(ast.walk(method))
    assert module_nodes(tree) is module_nodes(tree)  # kept, not walked again
    assert [id(n) for n in module_nodes(tree)] == [id(n) for n in ast.walk(tree)]


def test_the_computed_lookup_search_agrees_with_the_pattern():
    cases = [
        "x = globals()[name]",
        "x = globals()['model']",
        "timeit.timeit(stmt, globals=globals())",
        "y = eval(expr)",
        "model.eval()",
        "m = getattr(sys.modules[__name__], name)",
        "vars(args)",
        "obj.vars()",
        "evaluate(x)",
        "",
    ]
    for text in cases + list(_texts()):
        assert looks_up_by_computed_name(text) == bool(COMPUTED_LOOKUP.search(text)), text[:80]


@pytest.mark.parametrize("jobs", [1, 2])
def test_facts_computed_in_processes_are_the_facts_computed_one_by_one(jobs):
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8", errors="replace") for p in SOURCES[:80]}
    fetched = TextSources(texts)
    fetched.prefetch(tuple(TEXT_FACTS), jobs=jobs, threshold=10)
    if jobs > 1:  # every fact is there before any is asked
        assert not any(fetched.missing(p, n) for p in texts for n in TEXT_FACTS)
    else:  # one process: asked one by one, as the passes go
        assert all(fetched.missing(p, n) for p in texts for n in TEXT_FACTS)
    plain = TextSources(texts)
    for path in texts:
        assert fetched.lone_definitions(path) == plain.lone_definitions(path)
        assert fetched.loading_facts(path) == plain.loading_facts(path)
        assert fetched.words(path) == plain.words(path)
        assert fetched.import_words(path) == plain.import_words(path)
        assert fetched.import_only(path) == plain.import_only(path)


def _headers_plainly(lines):
    """`_headers` as first written: per line, the nearest code line above at a lower indentation that closes no
    bracket, found with a stack (the reference the one-pass version must agree with)."""
    out = [None] * (len(lines) + 1)
    stack = []
    for number, line in enumerate(lines, 1):
        indent = len(line) - len(line.lstrip(" \t"))
        at = len(stack) - 1
        while at >= 0 and stack[at][0] >= indent:
            at -= 1
        out[number] = stack[at][1] if at >= 0 else None
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and not line.lstrip().startswith(tuple(_CLOSING)):
            while stack and stack[-1][0] >= indent:
                stack.pop()
            stack.append((indent, number))
    return out


def test_block_headers_agree_with_the_plain_search():
    extra = ["def f(\n    a,\n):\n    if a:\n        x = 1\n\f\n    # c\n    return x\n", "\tif x:\n  \ty\n"]
    for text in extra + list(_texts()):
        lines = text.splitlines()
        assert _headers(lines) == _headers_plainly(lines)
