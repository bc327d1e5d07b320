"""Reads of an environment variable by name: `os.environ["X"]`, `os.environ.get("X")`, `os.getenv("X")`."""

from __future__ import annotations

import ast
from typing import Optional

from portcheck.pyscan.imports import ImportTable
from portcheck.pyscan.nodes import walk

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


def reads_environment(test: ast.AST, imports: ImportTable) -> bool:
    """`os.environ.get("X") == "1"`, `os.environ["X"] == "1"`, `os.getenv(name)`: whether `test` reads an
    environment variable, by any name."""
    for node in walk(test):
        target = node.func if isinstance(node, ast.Call) else node.value if isinstance(node, ast.Subscript) else None
        name = imports.resolve(target) if target is not None else None
        if name in _GETTERS or name == "os.environ":
            return True
    return False
