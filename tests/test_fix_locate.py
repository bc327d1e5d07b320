"""Positions computed statement by statement agree with libcst's positions for the whole module."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from portcheck.fixer.locate import Locator, statement_starts
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


def test_statement_starts_count_header_and_leading_lines():
    tree = cst.parse_module("# a\n\nimport os\n\n\n# b\nx = 1\n")
    assert statement_starts(tree) == [3, 4]


def test_only_statements_holding_the_lines_are_located():
    tree = cst.parse_module("a = 1\nb = 2\nc = 3\n")
    located = Locator(tree, [2])
    assert [cst.Module(body=[s]).code for s in located.statements] == ["b = 2\n"]
