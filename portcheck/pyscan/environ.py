"""Reads of an environment variable by name: `os.environ["X"]`, `os.environ.get("X")`, `os.getenv("X")`."""

from __future__ import annotations

import ast
from typing import Optional

from portcheck.pyscan.imports import ImportTable

_GETTERS = frozenset({"os.environ.get", "os.getenv"})


def variable_read(node: ast.AST, imports: ImportTable) -> Optional[str]:
    """The name of the environment variable `node` reads, or None when it reads none by a literal name."""
    key: Optional[ast.AST] = None
    if isinstance(node, ast.Subscript) and imports.resolve(node.value) == "os.environ":
        key = node.slice
    elif isinstance(node, ast.Call) and node.args and imports.resolve(node.func) in _GETTERS:
        key = node.args[0]
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    return None
