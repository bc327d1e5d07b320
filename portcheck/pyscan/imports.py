"""Resolve names in a module to the qualified names they were imported as.

`import torch as t; t.cuda.synchronize` and `from torch.cuda import synchronize as sync`
both resolve to `torch.cuda.synchronize`. A name that was never imported resolves to nothing,
so a user's own `cuda` variable or `synchronize` function never matches a torch rule.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, Optional


class ImportTable:
    """Local name -> qualified name, gathered from every import statement in a module."""

    __slots__ = ("aliases", "assigned")

    def __init__(self) -> None:
        self.aliases: Dict[str, str] = {}
        # Names that are re-bound by plain assignment somewhere; they stop resolving to imports
        # only if they were never imported (an import always wins, as it is the common case).
        self.assigned: set = set()

    @classmethod
    def from_nodes(cls, nodes: Iterable[ast.AST]) -> "ImportTable":
        table = cls()
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        table.aliases[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".", 1)[0]
                        table.aliases.setdefault(root, root)
            elif isinstance(node, ast.ImportFrom):
                if node.level or not node.module:
                    continue  # relative imports are the project's own code
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    table.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return table

    def resolve(self, node: ast.AST) -> Optional[str]:
        """The qualified name of a Name/Attribute chain, or None when its root was not imported."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.aliases.get(node.id)
        if root is None:
            return None
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
