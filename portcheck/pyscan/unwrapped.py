"""Wrappers taken off again: `model = nn.DataParallel(RAFT(args))`, `model.load_state_dict(...)`, then
`model = model.module` (princeton-vl/RAFT's `demo.py` and `evaluate.py`). The wrapper only lets a
checkpoint saved from DataParallel (its `module.` key prefix) load; the model then runs unwrapped, so it
replicates over nothing. So does a wrapper only made to save such a checkpoint (`psp = DataParallel(psp)`,
then `torch.save({"model_state": psp.state_dict()}, path)`: meetps/pytorch-semseg's `pspnet.py`).
"""

from __future__ import annotations

import ast
from typing import Dict, List, Sequence, Set, Tuple

from portcheck.pyscan.nodes import walk

_WRAPPERS = frozenset({"DataParallel"})


def unwrapped_wrappers(tree: ast.AST) -> Dict[int, int]:
    """ids of the callee and arguments of each `name = DataParallel(...)` that never runs or is handed on as it
    is: every later use is a method call (`name.load_state_dict(...)`, `name.cuda()`) or `name.module` (the wrapped
    model, RAFT's `validate_chairs(model.module)`), up to a rebinding `name = name.module` or the end of its
    scope -> the line of the first `.module` (or, where the wrapper is only saved, of its `.state_dict()`). Code
    that runs after the block (the rest of each enclosing
    block, gmflow's training loop after `if torch.cuda.device_count() > 1: model = DataParallel(model)`)
    counts too; inside a loop, where the block runs again, nothing is claimed."""
    found: Dict[int, int] = {}
    _visit(tree, (), found)
    return found


_LOOP: List[ast.stmt] = []  # a unique list: marks, in a continuation, a loop around the block
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)
_TRY = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)


def _visit(node: ast.AST, after: Tuple[Sequence[ast.stmt], ...], found: Dict[int, int]) -> None:
    """Every block of `node`; `after` holds what runs once a block of `node` ends, innermost first."""
    if isinstance(node, _SCOPES):
        after = ()
    elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
        after = (_LOOP,) + after
    # the `else` and `finally` of a `try` run after its body and handlers
    tail = list(getattr(node, "orelse", [])) + list(getattr(node, "finalbody", [])) if isinstance(node, _TRY) else []
    for body in _blocks(node):
        then = ((tail,) + after) if tail and body is not getattr(node, "finalbody", None) else after
        for i, stmt in enumerate(body):
            name = _wrapped_name(stmt)
            if name is not None:
                line = _first_module_use(body[i + 1 :], then, name)
                if line:
                    # the callee and what the call is given (`device_ids=[0]`)
                    found.update((id(n), line) for n in walk(stmt.value))  # type: ignore[attr-defined]
            _visit(stmt, (body[i + 1 :],) + then, found)


def _first_module_use(rest: Sequence[ast.stmt], after: Tuple[Sequence[ast.stmt], ...], name: str) -> int:
    first = 0
    saved = 0  # the line of a `name.state_dict()`, where every use is one of `_KEY_METHODS`
    for later in rest:
        ok, line = _unwrapped_uses(later, name)
        if not ok:
            return 0
        first = first or line
        if _unwraps(later, name):
            return first
        saved = saved if saved < 0 else _key_use(later, name, saved)
    for block in after:
        if block is _LOOP:
            return 0
        if any(isinstance(n, ast.Name) and n.id == name for stmt in block for n in walk(stmt)):
            return 0  # the wrapper outlives the block
    return first or max(saved, 0)


# What a wrapper made only for its checkpoint's keys is asked: its state dict, and where it sits.
_KEY_METHODS = frozenset({"state_dict", "load_state_dict", "cuda", "cpu", "to", "eval", "train"})


def _key_use(stmt: ast.stmt, name: str, saved: int) -> int:
    """`saved` updated by `stmt`: the line of the first `name.state_dict()` so far, or -1 once `name` is used
    any other way than by a method of `_KEY_METHODS`."""
    for sub in walk(stmt):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == name:
            if sub.attr not in _KEY_METHODS:
                return -1
            if sub.attr == "state_dict":
                saved = min(saved or sub.lineno, sub.lineno)
    return saved


def _blocks(node: ast.AST) -> List[Sequence[ast.stmt]]:
    blocks: List[Sequence[ast.stmt]] = [
        value for field in ("body", "orelse", "finalbody") if isinstance(value := getattr(node, field, None), list)
    ]
    blocks.extend(h.body for h in getattr(node, "handlers", ()) if isinstance(h, ast.ExceptHandler))
    blocks.extend(c.body for c in getattr(node, "cases", ()) if isinstance(c, ast.match_case))
    return blocks


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


# The methods that run a wrapper as calling it does.
_RUNS = frozenset({"forward", "__call__"})


def _unwrapped_uses(stmt: ast.stmt, name: str) -> Tuple[bool, int]:
    """(whether `stmt` uses `name` only as a method-call receiver or through `.module`, and does not rebind it
    other than by `name = name.module`; the line of its first `name.module`, or 0)."""
    allowed: Set[int] = set()
    module_line = 0
    for sub in walk(stmt):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == name:
            if sub.attr == "module":
                allowed.add(id(sub.value))
                module_line = min(module_line or sub.lineno, sub.lineno)
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and isinstance(sub.func.value, ast.Name):
            if sub.func.value.id == name and sub.func.attr in _RUNS:
                return False, 0  # `m.forward(x)` (soobinseo/Transformer-TTS's training loop) runs the wrapper
            if sub.func.value.id == name and sub.func.attr != "module":
                allowed.add(id(sub.func.value))
    rebinds = _unwraps(stmt, name)
    for sub in walk(stmt):
        if isinstance(sub, ast.Name) and sub.id == name and id(sub) not in allowed:
            if not (rebinds and isinstance(sub.ctx, ast.Store)):
                return False, 0
    return True, module_line
