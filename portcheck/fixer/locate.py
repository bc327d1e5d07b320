"""Find the libcst nodes a finding points at. Positions, parents and the rewrite are computed only for
the top-level statements that hold findings: libcst's position metadata costs twice its parse."""

from __future__ import annotations

import re
from typing import Dict, Iterable, List, Mapping, Tuple

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from portcheck.fixer.syntax import parent_map
from portcheck.model import Finding

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
Key = Tuple[int, int, int, int]  # start line, start column (0-based), end line, end column (0-based)


def statement_starts(tree: cst.Module) -> List[int]:
    """The 1-based line each top-level statement (with its leading comments and blank lines) starts on."""
    line = 1 + sum(len(_LINE_BREAK.findall(tree.code_for_node(h))) for h in tree.header)
    starts = []
    for stmt in tree.body:
        starts.append(line)
        line += len(_LINE_BREAK.findall(tree.code_for_node(stmt)))
    return starts


def key_of(finding: Finding) -> Key:
    # Findings carry 1-based columns with an exclusive end; libcst counts columns from 0.
    return (finding.line, finding.column - 1, finding.end_line, finding.end_column - 1)


class Locator:
    """Nodes by position, and each node's parent, within the statements that hold `lines`."""

    def __init__(self, tree: cst.Module, lines: Iterable[int]) -> None:
        starts = statement_starts(tree)
        wanted = sorted({_statement_at(starts, line) for line in lines} - {-1})
        self.statements = tuple(tree.body[i] for i in wanted)
        self.index: Dict[Key, List[cst.CSTNode]] = {}
        self.ends: Dict[Tuple[int, int], List[Tuple[Key, cst.CSTNode]]] = {}
        self.parents: Dict[int, cst.CSTNode] = {}
        for i in wanted:
            stmt = tree.body[i]
            offset = starts[i] - 1
            alone = cst.Module(
                body=[stmt],
                header=[],
                footer=[],
                default_newline=tree.default_newline,
                default_indent=tree.default_indent,
            )
            positions: Mapping[cst.CSTNode, CodeRange] = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(
                PositionProvider
            )
            for node, where in positions.items():
                if node is alone:
                    continue
                key = (where.start.line + offset, where.start.column, where.end.line + offset, where.end.column)
                self.index.setdefault(key, []).append(node)  # children come first: innermost first
                self.ends.setdefault(key[2:], []).append((key, node))
            self.parents.update(parent_map(stmt))
            self.parents[id(stmt)] = tree

    def nodes(self, finding: Finding) -> List[cst.CSTNode]:
        key = key_of(finding)
        found = self.index.get(key)
        if found:
            return found
        # A finding that points at a token on a later line of a node (`.cuda` closing a call that spans
        # lines): the nodes that end where it ends and start on an earlier line, innermost first. A
        # finding that is merely off on its own line still matches nothing.
        return [node for start, node in self.ends.get(key[2:], []) if start[0] < key[0]]


def _statement_at(starts: List[int], line: int) -> int:
    """Index of the top-level statement spanning `line` (-1 before the first)."""
    lo, hi = 0, len(starts) - 1
    found = -1
    while lo <= hi:
        mid = (lo + hi) // 2
        if starts[mid] <= line:
            found = mid
            lo = mid + 1
        else:
            hi = mid - 1
    return found
