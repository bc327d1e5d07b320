"""One pass over a module's syntax tree, handing each node and its context to the matchers that want it.

The walk is iterative, so deeply nested code cannot exhaust the interpreter's recursion limit.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Type

from portcheck.pyscan.context import (
    Ctx,
    catches_import_error,
    is_availability_check,
    is_cuda_check,
    is_message_call,
)
from portcheck.pyscan.imports import ImportTable

# A handler gets (node, parent, ctx, imports) and yields the nodes to report with an optional label.
Handler = Callable[[ast.AST, Optional[ast.AST], Ctx, ImportTable], Iterator[Tuple[ast.AST, str]]]

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_TRY = tuple(t for t in (getattr(ast, "Try", None), getattr(ast, "TryStar", None)) if t is not None)


def _children(node: ast.AST, ctx: Ctx, imports: ImportTable) -> List[Tuple[ast.AST, Ctx]]:
    if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Constant, ast.JoinedStr)) and isinstance(
        getattr(node.value, "value", ""), str
    ):
        return []  # docstrings and bare strings are prose
    if isinstance(node, ast.If) or isinstance(node, ast.IfExp):
        branch = ctx
        if node.orelse and is_cuda_check(node.test, imports):
            branch = branch._replace(guarded=True)
        if is_availability_check(node.test):
            branch = branch._replace(optional_import=True)
        body = node.body if isinstance(node.body, list) else [node.body]
        orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
        return [(node.test, ctx)] + [(c, branch) for c in body] + [(c, branch) for c in orelse]
    if isinstance(node, _LOOPS):
        inner = ctx._replace(in_loop=True)
        head = [node.test] if isinstance(node, ast.While) else [node.target, node.iter]
        return [(c, ctx) for c in head] + [(c, inner) for c in node.body] + [(c, ctx) for c in node.orelse]
    if isinstance(node, _COMPS):
        inner = ctx._replace(in_loop=True)
        return [(c, inner) for c in ast.iter_child_nodes(node)]
    if isinstance(node, _FUNCS):
        inner = ctx._replace(in_loop=False, in_function=True)
        outer: List[ast.AST] = list(getattr(node, "decorator_list", [])) + [node.args]
        if getattr(node, "returns", None) is not None:
            outer.append(node.returns)
        body = node.body if isinstance(node.body, list) else [node.body]
        return [(c, ctx) for c in outer] + [(c, inner) for c in body]
    if _TRY and isinstance(node, _TRY):
        body_ctx = ctx
        if any(catches_import_error(h) for h in node.handlers):
            body_ctx = ctx._replace(optional_import=True)
        rest = list(node.handlers) + list(node.orelse) + list(node.finalbody)
        return [(c, body_ctx) for c in node.body] + [(c, ctx) for c in rest]
    if isinstance(node, ast.Call):
        if is_message_call(node):
            msg = ctx._replace(message=True)
            return [(node.func, ctx)] + [(c, msg) for c in node.args] + [(k, msg) for k in node.keywords]
        return [(node.func, ctx)] + [(c, ctx) for c in node.args] + [
            (k, ctx._replace(message=True) if k.arg in ("help", "msg", "message", "description") else ctx)
            for k in node.keywords
        ]
    if isinstance(node, ast.Raise):
        msg = ctx._replace(message=True)
        return [(c, msg) for c in ast.iter_child_nodes(node)]
    if isinstance(node, ast.Assert):
        out = [(node.test, ctx)]
        if node.msg is not None:
            out.append((node.msg, ctx._replace(message=True)))
        return out
    return [(c, ctx) for c in ast.iter_child_nodes(node)]


def walk(
    module: ast.Module,
    imports: ImportTable,
    handlers: Dict[Type[ast.AST], Sequence[Tuple[object, Handler]]],
    root: Ctx = Ctx(),
) -> Iterator[Tuple[object, ast.AST, str, Ctx]]:
    """Yield (key, node, label, ctx) for every handler hit, in source order of discovery."""
    stack: List[Tuple[ast.AST, Optional[ast.AST], Ctx]] = [(module, None, root)]
    pop = stack.pop
    push = stack.extend
    while stack:
        node, parent, ctx = pop()
        wanted = handlers.get(type(node))
        if wanted:
            for key, handler in wanted:
                for hit, label in handler(node, parent, ctx, imports):
                    yield key, hit, label, ctx
        kids = _children(node, ctx, imports)
        if kids:
            push([(child, node, cctx) for child, cctx in reversed(kids)])
