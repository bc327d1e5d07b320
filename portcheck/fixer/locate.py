"""Find the libcst nodes a finding points at.

libcst's position metadata costs twice its parse, so positions are computed only for the innermost
statement that holds each finding: classes and functions are entered, with Python's own parser (the
`ast` line numbers) saying where each statement of their bodies starts. Each such statement is
rendered at its place, with its indentation, and its rendering is compared with the file's text; when
anything does not line up, positions come from the whole module instead. Parents are mapped for those
statements and the blocks above them; the first question about any other node maps the whole of the
top-level statements that hold findings.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from typing import Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from portcheck.fixer.syntax import parent_map
from portcheck.model import Finding

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
Key = Tuple[int, int, int, int]  # start line, start column (0-based), end line, end column (0-based)

# libcst statement -> the `ast` statement types it corresponds to (a simple statement line holds one
# `ast` statement per small statement).
_COMPOUND: Mapping[type, Tuple[type, ...]] = {
    cst.ClassDef: (ast.ClassDef,),
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.If: (ast.If,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.Try: (ast.Try,),
    **({cst.TryStar: (ast.TryStar,)} if hasattr(cst, "TryStar") and hasattr(ast, "TryStar") else {}),
    **({cst.Match: (ast.Match,)} if hasattr(ast, "Match") else {}),
}
_AST_COMPOUND = tuple(t for types in _COMPOUND.values() for t in types)


def key_of(finding: Finding) -> Key:
    # Findings carry 1-based columns with an exclusive end; libcst counts columns from 0.
    return (finding.line, finding.column - 1, finding.end_line, finding.end_column - 1)


class Parents(Mapping[int, cst.CSTNode]):
    """id(child) -> parent, filled for the located statements and the blocks above them; the first
    lookup of any other node maps every top-level statement that holds a finding."""

    def __init__(self, tree: cst.Module, statements: Sequence[cst.CSTNode]) -> None:
        self._tree = tree
        self._statements = statements
        self._map: Dict[int, cst.CSTNode] = {id(stmt): tree for stmt in statements}
        self._complete = False

    def add(self, node: cst.CSTNode, parent: cst.CSTNode) -> None:
        self._map[id(node)] = parent

    def mapped(self) -> Set[int]:
        """The ids of the nodes whose parent is known so far (the fill is not forced)."""
        return set(self._map)

    def add_tree(self, node: cst.CSTNode) -> None:
        self._map.update(parent_map(node))

    def _fill(self) -> None:
        if not self._complete:
            self._complete = True
            for stmt in self._statements:
                self._map.update(parent_map(stmt))

    def __getitem__(self, key: int) -> cst.CSTNode:
        found = self._map.get(key)
        if found is None and key != id(self._tree):  # the module has no parent: nothing to fill
            self._fill()
            found = self._map.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[int]:
        self._fill()
        return iter(self._map)

    def __len__(self) -> int:
        self._fill()
        return len(self._map)


@dataclass(frozen=True)
class _Spot:
    """A statement to locate in: where its rendering starts, the indentation around it, its ancestors."""

    stmt: cst.BaseStatement
    first_line: int
    indents: Tuple[str, ...]
    chain: Tuple[Tuple[cst.CSTNode, cst.CSTNode], ...]  # (child, parent) pairs from the statement up
    top: cst.BaseStatement  # the top-level statement that holds it


class Locator:
    """Nodes by position, and each node's parent, within the statements that hold `lines`."""

    def __init__(self, tree: cst.Module, lines: Iterable[int], text: Optional[str] = None) -> None:
        wanted_lines = sorted(set(lines))
        self.index: Dict[Key, List[cst.CSTNode]] = {}
        self.ends: Dict[Tuple[int, int], List[Tuple[Key, cst.CSTNode]]] = {}
        source = tree.code if text is None else text
        spots = _spots(tree, wanted_lines, source)
        if spots is not None:
            self.statements: Tuple[cst.BaseStatement, ...] = tuple({id(s.top): s.top for s in spots}.values())
            self.parents = Parents(tree, self.statements)
            source_lines = _LINE.findall(source)  # lines as libcst and `ast` count them (not `splitlines`)
            for spot in spots:
                found = _positions_at(tree, spot, source_lines)
                if found is None:
                    spots = None
                    break
                self._index(found)
                self.parents.add_tree(spot.stmt)
                for child, parent in spot.chain:
                    self.parents.add(child, parent)
        if spots is None:  # the slow, sure way: the whole module
            self.index.clear()
            self.ends.clear()
            top_level = _top_level(tree, wanted_lines)
            self.statements = tuple(top_level)
            self.parents = Parents(tree, self.statements)
            positions = MetadataWrapper(tree, unsafe_skip_copy=True).resolve(PositionProvider)
            for stmt in top_level:
                self.parents.add_tree(stmt)
            inside = {id(stmt) for stmt in top_level} | self.parents.mapped()
            self._index({n: r for n, r in positions.items() if id(n) in inside})

    def _index(self, positions: Mapping[cst.CSTNode, CodeRange]) -> None:
        for node, where in positions.items():
            key = (where.start.line, where.start.column, where.end.line, where.end.column)
            self.index.setdefault(key, []).append(node)  # children come first: innermost first
            self.ends.setdefault(key[2:], []).append((key, node))

    def nodes(self, finding: Finding) -> List[cst.CSTNode]:
        key = key_of(finding)
        found = self.index.get(key)
        if found:
            return found
        # A finding that points at a token on a later line of a node (`.cuda` closing a call that spans
        # lines): the nodes that end where it ends and start on an earlier line, innermost first. A
        # finding that is merely off on its own line still matches nothing.
        return [node for start, node in self.ends.get(key[2:], []) if start[0] < key[0]]


_Pair = Tuple[cst.BaseStatement, ast.stmt, ast.stmt]


def _pairs(body: Sequence[cst.BaseStatement], tree: Sequence[ast.stmt]) -> Optional[List[_Pair]]:
    """(libcst statement, its first `ast` statement, its last) for a body, or None when they differ."""
    out = []
    i = 0
    for stmt in body:
        count = len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
        if i + count > len(tree):
            return None
        first, last = tree[i], tree[i + count - 1]
        expected = _COMPOUND.get(type(stmt))
        if expected is None:
            if any(isinstance(s, _AST_COMPOUND) for s in tree[i:i + count]):
                return None
        elif not isinstance(first, expected):
            return None
        out.append((stmt, first, last))
        i += count
    return out if i == len(tree) else None


def _first_token_line(stmt: cst.BaseStatement, node: ast.stmt) -> Tuple[int, int]:
    """(the line of the statement's first token, the lines its rendering puts before that token)."""
    before = len(getattr(stmt, "leading_lines", ()))
    decorators = getattr(stmt, "decorators", ())
    ast_decorators = getattr(node, "decorator_list", [])
    if decorators and ast_decorators:
        return ast_decorators[0].lineno, before + len(decorators[0].leading_lines)
    return node.lineno, before


def _spots(tree: cst.Module, lines: Sequence[int], source: str) -> Optional[List[_Spot]]:
    """The innermost statement (entering classes and functions) that holds each line; None when
    Python's parser and libcst disagree about the statements."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    top = _Level.of(tree.body, module.body)
    if top is None:
        return None
    levels: Dict[int, Optional[_Level]] = {}
    chosen: Dict[int, _Spot] = {}
    for line in lines:
        level: Optional[_Level] = top
        indents: Tuple[str, ...] = ()
        chain: Tuple[Tuple[cst.CSTNode, cst.CSTNode], ...] = ()
        parent: cst.CSTNode = tree
        spot: Optional[_Spot] = None
        top_stmt: Optional[cst.BaseStatement] = None
        while level is not None:
            hit = level.at(line)
            if hit is None:
                break
            stmt, node, start = hit
            top_stmt = top_stmt or stmt
            chain = ((stmt, parent), *chain)
            spot = _Spot(stmt, start, indents, chain, top_stmt)
            if not isinstance(stmt, (cst.ClassDef, cst.FunctionDef)) or not isinstance(stmt.body, cst.IndentedBlock):
                break
            if id(stmt) not in levels:
                levels[id(stmt)] = _Level.of(stmt.body.body, getattr(node, "body", []))
            level = levels[id(stmt)]
            block = stmt.body
            indents = (*indents, tree.default_indent if block.indent is None else block.indent)
            chain = ((block, stmt), *chain)
            parent = block
        if spot is not None:
            chosen.setdefault(id(spot.stmt), spot)
    # A statement inside another chosen one is located with it.
    ids = set(chosen)
    return [s for s in chosen.values() if not any(id(child) in ids for child, _ in s.chain[1:])]


class _Level:
    """The statements of one body, with the line each one's rendering starts on."""

    def __init__(self, pairs: List[_Pair]) -> None:
        self.pairs = pairs
        self.starts = []
        for stmt, first, _ in pairs:
            token_line, before = _first_token_line(stmt, first)
            self.starts.append(token_line - before)

    @classmethod
    def of(cls, body: Sequence[cst.BaseStatement], tree: Sequence[ast.stmt]) -> Optional["_Level"]:
        pairs = _pairs(body, tree)
        return cls(pairs) if pairs else None

    def at(self, line: int) -> Optional[Tuple[cst.BaseStatement, ast.stmt, int]]:
        index = bisect.bisect_right(self.starts, line) - 1
        if index < 0:
            return None
        stmt, first, last = self.pairs[index]
        if line > (last.end_lineno or last.lineno):
            return None  # a blank or comment line after it (the next statement's leading lines start later)
        return stmt, first, self.starts[index]


def _positions_at(
    tree: cst.Module, spot: _Spot, source_lines: Sequence[str]
) -> Optional[Dict[cst.CSTNode, CodeRange]]:
    """Positions of every node of `spot.stmt`, rendered at its line with its indentation; None when
    that rendering is not the file's text there."""
    collector = _Collector()
    state = PositionProvidingCodegenState(
        default_indent=tree.default_indent,
        default_newline=tree.default_newline,
        provider=collector,  # type: ignore[arg-type]  # only its `_computed` dict is used
        indent_tokens=list(spot.indents),
        line=spot.first_line,
        column=0,
    )
    spot.stmt._codegen(state)
    rendered = "".join(state.tokens)
    end = spot.first_line - 1 + len(_LINE_BREAK.findall(rendered))
    there = "".join(source_lines[spot.first_line - 1:end])
    # The last statement of a file without a final newline renders one.
    unterminated = end >= len(source_lines) and not tree.has_trailing_newline
    if rendered != there and not (unterminated and rendered.rstrip("\r\n") == there):
        return None
    return collector._computed


class _Collector:
    """Stands in for a metadata provider: the codegen state records positions in `_computed`."""

    def __init__(self) -> None:
        self._computed: Dict[cst.CSTNode, CodeRange] = {}


def _top_level(tree: cst.Module, lines: Sequence[int]) -> List[cst.BaseStatement]:
    """The top-level statements that hold `lines`, counted from the rendering of the module."""
    starts = []
    line = 1 + sum(len(_LINE_BREAK.findall(tree.code_for_node(h))) for h in tree.header)
    for stmt in tree.body:
        starts.append(line)
        line += len(_LINE_BREAK.findall(tree.code_for_node(stmt)))
    picked: Dict[int, cst.BaseStatement] = {}
    for wanted in lines:
        index = _statement_at(starts, wanted)
        if index >= 0:
            picked.setdefault(index, tree.body[index])
    return [picked[i] for i in sorted(picked)]


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
