"""Whether an `except ImportError:` handler is a fallback: the program goes on without the package.

A handler that re-raises (`raise`, `raise ImportError("install x") from e`) or exits is no fallback:
the import is as hard as an unguarded one, and its findings keep their severity.
"""

from __future__ import annotations

import ast

from portcheck.pyscan.imports import dotted

_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})


def _stops(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Raise):
        return True
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and (dotted(stmt.value.func) or "") in _EXITS


def ends_the_run(block: list) -> bool:
    """Whether a block ends in a `raise` or an exit (`print(...)` then `sys.exit(1)`): what runs in it runs
    once, when something went wrong."""
    return bool(block) and _stops(block[-1])


def continues(handler: ast.ExceptHandler) -> bool:
    """True unless the handler's own block ends the import's story: a `raise` or an exit at its top level."""
    return not any(_stops(stmt) for stmt in handler.body)
