"""Whether an `except ImportError:` handler is a fallback: the program goes on without the package.

A handler that re-raises (`raise`, `raise ImportError("install x") from e`) or exits is no fallback:
the import is as hard as an unguarded one, and its findings keep their severity. Nor is one that imports
the same name from another place (`imports_again`): what follows needs it either way.
"""

from __future__ import annotations

import ast
from typing import Sequence, Set, Tuple

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


def _imported(stmts: Sequence[ast.stmt]) -> Set[Tuple[str, ...]]:
    """The dotted names of what the statements import, as parts (a relative import's dots dropped):
    `from .a.b import C` gives ("a", "b", "C"), `import x.y as z` gives ("x", "y")."""
    found: Set[Tuple[str, ...]] = set()
    for stmt in stmts:
        if isinstance(stmt, ast.ImportFrom):
            head = tuple(stmt.module.split(".")) if stmt.module else ()
            found.update(head + (alias.name,) for alias in stmt.names)
        elif isinstance(stmt, ast.Import):
            found.update(tuple(alias.name.split(".")) for alias in stmt.names)
    return found


def imports_again(node: ast.AST, handler: ast.ExceptHandler) -> bool:
    """`try: from networks.resample2d import Resample2d` / `except: from .networks.resample2d import
    Resample2d` (flownet2-pytorch), `try: from op_builder.builder import OpBuilder` / `except ImportError: from
    deepspeed.ops.op_builder.builder import OpBuilder`: the handler imports the same thing by another path (one
    dotted name ends the other), so what follows needs it either way; no fallback. `from apex.parallel import
    DistributedDataParallel as DDP`, then `torch.nn.parallel`'s, is one: another module."""
    tried, again = _imported(getattr(node, "body", [])), _imported(handler.body)
    return any(a[-len(b):] == b or b[-len(a):] == a for a in tried for b in again)
