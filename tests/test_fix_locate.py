"""Positions computed for the innermost statements that hold findings agree with libcst's positions for
the whole module."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from portcheck.fixer.locate import Locator
from portcheck.fixer.syntax import walk

SAMPLE = '''#!/usr/bin/env python
# header comment

"""Module docstring
spanning lines."""
import torch


@decorator(
    "arg",
)
class A:
    """Doc."""

    x = """multi
line"""  # trailing

    def f(self, y="cuda"):  # comment
        if y:
            return y.cuda()


# between
z = [
    1,
    2,
]; w = torch.zeros(1, device="cuda")
last = 1'''


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("trailing", ["", "\n"])
def test_statement_positions_match_whole_module_positions(newline, trailing):
    text = (SAMPLE + trailing).replace("\n", newline)
    tree = cst.parse_module(text)
    full = MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = range(1, text.count("\n") + 2)
    located = Locator(tree, lines)
    assert len(located.statements) == len(tree.body)
    outside = {id(n) for part in (*tree.header, *tree.footer) for n in walk(part)}  # no statement holds these
    checked = 0
    for node, where in full.items():
        if node is tree or id(node) in outside:
            continue
        key = (where.start.line, where.start.column, where.end.line, where.end.column)
        assert node in located.index.get(key, []), (type(node).__name__, key)
        checked += 1
    assert checked > 100


NESTED = '''import torch


class Outer:
    # leading comment
    @staticmethod
    @other(
        1,
    )
    def first(x):  # trailing
        a = 1; b = x.cuda()
        return torch.zeros(1, device="cuda")

    async def second(self):
      if self:
          y = ("é" +
  "cuda")
      return y

    class Inner:
        def deep(self):
            return (torch
                    .ones(2)
                    .cuda())
    z = [
1, 2]; w = "cuda"
def tail(): return "cuda"
'''


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("sample", [SAMPLE, NESTED], ids=["sample", "nested"])
def test_each_line_located_alone_has_the_whole_module_positions(sample, newline):
    text = sample.replace("\n", newline)
    tree = cst.parse_module(text)
    full = MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
    by_line = {}
    for node, where in full.items():
        by_line.setdefault(where.start.line, []).append((node, where))
    outside = {id(n) for part in (*tree.header, *tree.footer) for n in walk(part)}
    found = 0
    for line in range(1, text.count("\n") + 2):
        located = Locator(tree, [line], text)
        positions = {id(n): key for key, nodes in located.index.items() for n in nodes}
        for node, where in full.items():
            key = (where.start.line, where.start.column, where.end.line, where.end.column)
            if id(node) in positions:
                assert positions[id(node)] == key, (line, type(node).__name__)
        above = set()  # the blocks and statements that enclose the located one are not located themselves
        for nodes in located.index.values():
            for node in nodes:
                probe = located.parents.get(id(node))
                while probe is not None and id(probe) not in positions:
                    above.add(id(probe))
                    probe = located.parents.get(id(probe))
        for node, _where in by_line.get(line, []):
            if node is tree or id(node) in outside or id(node) in above:
                continue
            assert id(node) in positions, (line, type(node).__name__)
            found += 1
        # Every located node's parent chain reaches the module.
        for nodes in located.index.values():
            for node in nodes:
                probe, hops = node, 0
                while probe is not tree:
                    probe = located.parents[id(probe)]
                    hops += 1
                    assert hops < 200
    assert found > 50


def test_a_line_in_a_method_locates_that_statement_only():
    tree = cst.parse_module(NESTED)
    line = NESTED.splitlines().index('        a = 1; b = x.cuda()') + 1
    located = Locator(tree, [line], NESTED)
    names = {n.value for nodes in located.index.values() for n in nodes if isinstance(n, cst.Name)}
    assert names == {"a", "b", "x", "cuda"}
    assert [type(s).__name__ for s in located.statements] == ["ClassDef"]  # the top-level one, for rewriting


def test_when_python_and_libcst_disagree_the_whole_module_is_used():
    # Python 2 print statement: libcst parses nothing like it either; use a file ast cannot parse but
    # libcst can (a lone form feed inside the indentation confuses neither)... so feed text that is not
    # the tree's code: the rendering check then fails and the slow path answers.
    tree = cst.parse_module("class A:\n    def f(self):\n        return 1\n")
    located = Locator(tree, [3], "class A:\n    def f(self):\n\n        return 1\n")
    assert located.index  # positions still come from the whole module
    assert {type(s).__name__ for s in located.statements} == {"ClassDef"}


def test_only_statements_holding_the_lines_are_located():
    tree = cst.parse_module("a = 1\nb = 2\nc = 3\n")
    located = Locator(tree, [2])
    assert [cst.Module(body=[s]).code for s in located.statements] == ["b = 2\n"]
