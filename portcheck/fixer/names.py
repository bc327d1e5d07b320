"""Which import binds each name in a libcst module, so a fix can resolve `torch.cuda.X` however it was
imported, and drop an import that the fix left unused."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

import libcst as cst
from libcst.helpers import get_full_name_for_node

from portcheck.fixer.syntax import small_statements


@dataclass(frozen=True)
class Binding:
    """`import module [as asname]` or `from module import obj [as asname]`."""

    local: str
    qualified: str
    module: str
    obj: Optional[str] = None
    asname: Optional[str] = None


class Bindings:
    """Local name -> the import that binds it (the last one in the module wins, like at run time)."""

    def __init__(self, table: Dict[str, Binding]) -> None:
        self.table = table

    @classmethod
    def of(cls, tree: cst.CSTNode) -> "Bindings":
        table: Dict[str, Binding] = {}
        for node in small_statements(tree):
            if isinstance(node, cst.Import):
                for alias in node.names:
                    full = get_full_name_for_node(alias.name) or ""
                    asname = _asname(alias)
                    if asname:
                        table[asname] = Binding(asname, full, full, None, asname)
                    else:
                        root = full.split(".", 1)[0]
                        table.setdefault(root, Binding(root, root, full))
            elif isinstance(node, cst.ImportFrom):
                if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
                    continue
                module = get_full_name_for_node(node.module) or ""
                for alias in node.names:
                    obj = get_full_name_for_node(alias.name) or ""
                    asname = _asname(alias)
                    local = asname or obj
                    table[local] = Binding(local, f"{module}.{obj}", module, obj, asname)
        return cls(table)

    def resolve(self, node: cst.CSTNode) -> Optional[str]:
        """The qualified name of a Name/Attribute chain whose root was imported, else None."""
        parts = []
        while isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        if not isinstance(node, cst.Name):
            return None
        binding = self.table.get(node.value)
        if binding is None:
            return None
        return ".".join([binding.qualified, *reversed(parts)])

    def binding_of(self, node: cst.CSTNode) -> Optional[Binding]:
        """The import binding the root name of a Name/Attribute chain."""
        while isinstance(node, cst.Attribute):
            node = node.value
        if isinstance(node, cst.Name):
            return self.table.get(node.value)
        return None


def _asname(alias: cst.ImportAlias) -> Optional[str]:
    if alias.asname is None:
        return None
    name = alias.asname.name
    return name.value if isinstance(name, cst.Name) else None
