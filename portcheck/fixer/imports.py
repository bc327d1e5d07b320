"""Add the imports a fix needs and drop those it made unused, keeping the comments of every import
line it drops."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import AbstractSet, Dict, List, Sequence, Set, Tuple, Union

import libcst as cst

from portcheck.fixer.names import Binding
from portcheck.fixer.syntax import dotted, small_statements

_Body = Union[cst.Module, cst.IndentedBlock]


def _comment_lines(line: cst.SimpleStatementLine) -> Tuple[cst.EmptyLine, ...]:
    """The lines to keep when `line` goes: its leading lines when any is a comment (blank lines
    included, so the layout stays), then its own trailing comment as a line of its own."""
    kept: List[cst.EmptyLine] = []
    if any(empty.comment is not None for empty in line.leading_lines):
        kept.extend(line.leading_lines)
    trailing = line.trailing_whitespace.comment
    if trailing is not None:
        kept.append(cst.EmptyLine(indent=True, comment=trailing))
    return tuple(kept)


@lru_cache(maxsize=1)
def _remover() -> type:
    """The import remover, a libcst codemod (importing libcst.codemod takes about 0.2 s, which only a
    fix that drops an import pays; a scan's verdicts never do)."""
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import RemoveImportsVisitor

    class _RemoveKeepingComments(RemoveImportsVisitor):
        """RemoveImportsVisitor drops an emptied statement line together with the comments above it and
        beside it. Here an emptied line with comments holds a `pass` until its block is left; the block
        then drops it and hands its comments to the next statement, or to the block's footer."""

        def __init__(self, context: CodemodContext) -> None:
            super().__init__(context)
            self._orphans: Dict[int, Tuple[cst.EmptyLine, ...]] = {}

        def leave_SimpleStatementLine(
            self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
        ) -> cst.SimpleStatementLine:
            if updated_node.body:
                return updated_node
            comments = _comment_lines(original_node)
            if not comments:
                return updated_node  # removed by its block, as before
            holder = updated_node.with_changes(body=[cst.Pass()])
            self._orphans[id(holder)] = comments
            return holder

        def _rehome(self, node: _Body) -> _Body:
            if not self._orphans:
                return node
            body: List[cst.BaseStatement] = []
            pending: List[cst.EmptyLine] = []
            for stmt in node.body:
                comments = self._orphans.pop(id(stmt), None)
                if comments is not None:
                    pending.extend(comments)
                    continue
                if pending and isinstance(stmt, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):  # all statements
                    stmt = stmt.with_changes(leading_lines=[*pending, *stmt.leading_lines])
                    pending = []
                body.append(stmt)
            if len(body) == len(node.body):
                return node
            return node.with_changes(body=body, footer=[*pending, *node.footer])

        def leave_IndentedBlock(
            self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
        ) -> cst.IndentedBlock:
            block = self._rehome(updated_node)
            assert isinstance(block, cst.IndentedBlock)
            return block

        def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
            module = self._rehome(updated_node)
            assert isinstance(module, cst.Module)
            return module

    return _RemoveKeepingComments


def fix_imports(tree: cst.Module, modules: Set[str], removals: Sequence[Binding], keep: AbstractSet[str]) -> cst.Module:
    """`tree` importing `modules`, without the `removals` that nothing uses any more (nor `keep` names)."""
    roots = {m.split(".", 1)[0] for m in modules}
    dropped = [b for b in removals if b.local not in keep and b.local not in roots]
    for module in sorted(modules):
        tree = _add_import(tree, module)
    if dropped:
        from libcst.codemod import CodemodContext
        from libcst.codemod.visitors import RemoveImportsVisitor

        context = CodemodContext()
        for binding in dropped:
            RemoveImportsVisitor.remove_unused_import(context, binding.module, binding.obj, binding.asname)
        tree = _remover()(context).transform_module(tree)
    return tree


def _is_import(stmt: cst.CSTNode) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine):
        return all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)
    if isinstance(stmt, (cst.Try, cst.If)):
        # `try: import x / except ImportError: x = None`: an import block of its own.
        return any(isinstance(n, (cst.Import, cst.ImportFrom)) for n in small_statements(stmt))
    return False


def _imports_module(stmt: cst.CSTNode, module: str) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and any(
        isinstance(s, cst.Import) and any(a.asname is None and dotted(a.name) == module for a in s.names)
        for s in stmt.body
    )


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _add_import(tree: cst.Module, module: str) -> cst.Module:
    """`tree` with `import module` after every import that precedes the module's first use of it
    (relative imports and `try: import ...` blocks included), unless it is imported already."""
    body = list(tree.body)
    if any(_imports_module(stmt, module) for stmt in body):
        return tree
    root = re.compile(rf"\b{re.escape(module.split('.', 1)[0])}\b")
    at = 0
    for i, stmt in enumerate(body):
        if _is_import(stmt) or (i == 0 and _is_docstring(stmt)):
            at = i + 1
            continue
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) or root.search(tree.code_for_node(stmt)):
            break
    line = cst.parse_statement(f"import {module}\n", config=tree.config_for_parsing)
    if at < len(body) and not _is_import(body[at]) and not body[at].leading_lines:
        body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine()])
    body.insert(at, line)
    return tree.with_changes(body=body)
