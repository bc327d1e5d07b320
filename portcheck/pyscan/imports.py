"""Resolve names in a module to the qualified names they were imported as.

`import torch as t; t.cuda.synchronize` and `from torch.cuda import synchronize as sync`
both resolve to `torch.cuda.synchronize`. A name that was never imported resolves to nothing,
so a user's own `cuda` variable or `synchronize` function never matches a torch rule.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Set, Union


class ImportTable:
    """Local name -> qualified name, gathered from every import statement in a module."""

    __slots__ = ("aliases", "modules")

    def __init__(self) -> None:
        self.aliases: Dict[str, str] = {}
        # Names that are re-bound by plain assignment somewhere; they stop resolving to imports
        # only if they were never imported (an import always wins, as it is the common case).
        # Every module named by an import statement (relative imports excluded).
        self.modules: Set[str] = set()

    @classmethod
    def from_nodes(cls, nodes: Iterable[ast.AST]) -> "ImportTable":
        table = cls()
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    table.modules.add(alias.name)
                    if alias.asname:
                        table.aliases[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".", 1)[0]
                        table.aliases.setdefault(root, root)
            elif isinstance(node, ast.ImportFrom):
                if node.level or not node.module:
                    continue  # relative imports are the project's own code
                table.modules.add(node.module)
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    table.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return table

    @classmethod
    def from_module(cls, module: ast.AST) -> "ImportTable":
        """The imports of a module, found by visiting statements only (imports are never expressions),
        and the local aliases of the few callables code renames (`autocast = torch.cuda.amp.autocast`)."""
        imports: List[ast.AST] = []
        assigns: List[ast.Assign] = []
        for stmt in statements(module):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                imports.append(stmt)
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                if isinstance(stmt.value, (ast.Attribute, ast.Name)):
                    assigns.append(stmt)
        table = cls.from_nodes(imports)
        for stmt in assigns:
            local = stmt.targets[0].id  # type: ignore[attr-defined]  # one Name target: filtered above
            if local in table.aliases:
                continue
            name = table.resolve(stmt.value)
            if name is not None and name.rsplit(".", 1)[-1] in ALIASED_CALLABLES:
                table.aliases[local] = name
        return table

    def imports_any(self, roots: Iterable[str]) -> bool:
        """True when the module imports one of `roots` or a submodule of one (`torch` covers `torch.nn`)."""
        for root in roots:
            prefix = root + "."
            if any(m == root or m.startswith(prefix) for m in self.modules):
                return True
        return False

    def resolved(self, node: ast.AST) -> Optional[str]:
        """`resolve`, remembered on the node: every rule asks about the same callees and attributes."""
        memo = node.__dict__
        if "_portcheck_qname" in memo:
            return memo["_portcheck_qname"]
        name = memo["_portcheck_qname"] = self.resolve(node)
        return name

    def held_module(self, links: List[ast.AST]) -> Optional[int]:
        """For a chain [outermost, ..., root] whose root was not imported: the index of a `.torch` link that
        holds the imported torch module on an object (`self.torch.cuda.empty_cache`), or None."""
        if "torch" not in self.aliases.values():
            return None
        for index in range(len(links) - 2, 0, -1):
            link = links[index]
            if isinstance(link, ast.Attribute) and link.attr == "torch":
                return index
        return None

    def resolve(self, node: ast.AST) -> Optional[str]:
        """The qualified name of a Name/Attribute chain, or None when its root was not imported."""
        parts = []
        links = [node]
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
            links.append(node)
        if not isinstance(node, ast.Name):
            return None
        root = self.aliases.get(node.id)
        if root is None:
            held = self.held_module(links)
            if held is None:
                return None
            return ".".join(["torch"] + parts[:held][::-1])
        if parts:
            parts.reverse()
            return root + "." + ".".join(parts)
        return root


def dotted(node: ast.AST) -> Optional[str]:
    """The written dotted name of a Name/Attribute chain (`a.b.c`), without resolving imports."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    return ".".join(parts)


def none_operand(
    node: ast.AST, ops: tuple = (ast.Is, ast.IsNot), either_side: bool = False
) -> Optional[ast.expr]:
    """The operand of `x is None` / `x is not None`: a one-operator comparison, its operator one of `ops`, with
    `None` on the right (with `either_side`, on the left too: `None is x`). None for anything else."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ops)):
        return None
    left, right = node.left, node.comparators[0]
    if isinstance(right, ast.Constant) and right.value is None:
        return left
    if either_side and isinstance(left, ast.Constant) and left.value is None:
        return right
    return None


_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")
# `try` statements: `ast.Try`, and `ast.TryStar` (`except*`) where the Python has it.
TRY_STATEMENTS = tuple(t for t in (getattr(ast, "Try", None), getattr(ast, "TryStar", None)) if t is not None)
# Torch callables whose local aliases resolve like imports: renaming them is common, and a rule that
# misses `amp_autocast = torch.cuda.amp.autocast; with amp_autocast():` misses the whole AMP setup.
ALIASED_CALLABLES = frozenset({"autocast", "GradScaler", "custom_fwd", "custom_bwd"})


def statements(module: ast.AST) -> Iterable[ast.AST]:
    """Every statement at any depth of nested blocks (functions and classes included)."""
    stack = [module]
    while stack:
        node = stack.pop()
        if node is not module:
            yield node
        for field in _STATEMENT_LISTS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                stack.extend(block)


def import_statements(module: ast.AST) -> Iterable[Union[ast.Import, ast.ImportFrom]]:
    """Every `import` / `from ... import` statement, at any depth of nested blocks."""
    stack = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        for field in _STATEMENT_LISTS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                stack.extend(block)


def imported_modules(stmts: Sequence[ast.stmt]) -> Iterator[str]:
    """The modules `stmts` import at their own level (not inside nested blocks), absolute ones only."""
    for stmt in stmts:
        if isinstance(stmt, ast.Import):
            yield from (a.name for a in stmt.names)
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
            yield stmt.module
