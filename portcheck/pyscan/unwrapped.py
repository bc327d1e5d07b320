"""Wrappers taken off again: `model = nn.DataParallel(RAFT(args))`, `model.load_state_dict(...)`, then
`model = model.module` (princeton-vl/RAFT's `demo.py` and `evaluate.py`). The wrapper only lets a
checkpoint saved from DataParallel (its `module.` key prefix) load; the model then runs unwrapped, so it
replicates over nothing.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Sequence, Set, Tuple

_WRAPPERS = frozenset({"DataParallel"})


def unwrapped_wrappers(nodes: Sequence[ast.AST]) -> Dict[int, int]:
    """id of the callee of each `name = DataParallel(...)` that its block never runs or hands on as it is:
    every later use is a method call (`name.load_state_dict(...)`, `name.cuda()`) or `name.module` (the
    wrapped model, RAFT's `validate_chairs(model.module)`), up to a rebinding `name = name.module` -> the
    line of the first `.module`."""
    found: Dict[int, int] = {}
    for node in nodes:
        for body in _blocks(node):
            for i, stmt in enumerate(body):
                name = _wrapped_name(stmt)
                if name is None:
                    continue
                first = 0
                for later in body[i + 1 :]:
                    ok, line = _unwrapped_uses(later, name)
                    if not ok:
                        first = 0
                        break
                    first = first or line
                    if _unwraps(later, name):
                        break
                if first:
                    found[id(stmt.value.func)] = first  # type: ignore[attr-defined]
    return found


def _blocks(node: ast.AST) -> List[List[ast.stmt]]:
    return [value for field in ("body", "orelse", "finalbody") if isinstance(value := getattr(node, field, None), list)]


def _wrapped_name(stmt: ast.stmt):
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and isinstance(stmt.value, ast.Call)
    ):
        func = stmt.value.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if last in _WRAPPERS:
            return stmt.targets[0].id
    return None


def _unwraps(stmt: ast.stmt, name: str) -> bool:
    """`name = name.module`."""
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and stmt.targets[0].id == name
        and isinstance(stmt.value, ast.Attribute)
        and stmt.value.attr == "module"
        and isinstance(stmt.value.value, ast.Name)
        and stmt.value.value.id == name
    )


def _unwrapped_uses(stmt: ast.stmt, name: str) -> Tuple[bool, int]:
    """(whether `stmt` uses `name` only as a method-call receiver or through `.module`, and does not rebind it
    other than by `name = name.module`; the line of its first `name.module`, or 0)."""
    allowed: Set[int] = set()
    module_line = 0
    for sub in ast.walk(stmt):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == name:
            if sub.attr == "module":
                allowed.add(id(sub.value))
                module_line = min(module_line or sub.lineno, sub.lineno)
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and isinstance(sub.func.value, ast.Name):
            if sub.func.value.id == name and sub.func.attr != "module":
                allowed.add(id(sub.func.value))
    rebinds = _unwraps(stmt, name)
    for sub in ast.walk(stmt):
        if isinstance(sub, ast.Name) and sub.id == name and id(sub) not in allowed:
            if not (rebinds and isinstance(sub.ctx, ast.Store)):
                return False, 0
    return True, module_line
