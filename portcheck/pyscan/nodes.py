"""Walking parsed trees: every node under a node, and every node of a module listed once.

The per-file analysis asks many small questions of subtrees (`any(... for n in walk(test))`) and a few of
the whole module. `walk` yields exactly what `ast.walk` yields, in the same order (breadth first, children in
field order), at about half its cost: it reads each node type's fields once and appends children to one list
instead of going through `ast.iter_child_nodes` and a deque. `module_nodes` keeps a module's list on the
module node, so each pass over the whole tree reads the same nodes without walking it again (a transformers
modeling file has some 60,000 nodes). So does `walk` for a function or a class, which many passes ask
about again and again (its scope, its methods). The passes only set attributes on nodes; none adds or
removes one, so a kept list stays true.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Tuple, Type

_NODES_ATTR = "_portcheck_nodes"
_FIELDS: Dict[Type[ast.AST], Tuple[str, ...]] = {}


# Nodes whose walk is kept on them: a module, a function, a class.
_KEPT = frozenset({ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk(node)`: `node` and every node under it, in the same order."""
    if type(node) in _KEPT:
        return iter(_kept(node))
    return _walk(node)


def _kept(node: ast.AST) -> List[ast.AST]:
    known = getattr(node, _NODES_ATTR, None)
    if known is None:
        known = list(_walk(node))
        setattr(node, _NODES_ATTR, known)
    return known


def _walk(node: ast.AST) -> Iterator[ast.AST]:
    todo: List[ast.AST] = [node]
    append = todo.append
    extend = todo.extend
    fields_of = _FIELDS
    tree = ast.AST
    # (`children` inlined: calling it per node makes the walk about a third slower)
    for current in todo:  # the list grows while it is read: breadth first, as `ast.walk`'s deque
        yield current
        kind = type(current)
        fields = fields_of.get(kind)
        if fields is None:
            fields = fields_of[kind] = kind._fields
        for field in fields:
            value = getattr(current, field, None)
            if value is None:
                continue
            if type(value) is list:
                extend([item for item in value if isinstance(item, tree)])
            elif isinstance(value, tree):
                append(value)


def children(node: ast.AST) -> List[ast.AST]:
    """`list(ast.iter_child_nodes(node))`, faster."""
    kind = type(node)
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = kind._fields
    out: List[ast.AST] = []
    tree = ast.AST
    for field in fields:
        value = getattr(node, field, None)
        if value is None:
            continue
        if type(value) is list:
            out.extend([item for item in value if isinstance(item, tree)])
        elif isinstance(value, tree):
            out.append(value)
    return out


def module_nodes(node: ast.AST) -> List[ast.AST]:
    """`list(walk(node))`, kept on `node` when it is a module, a function or a class (the list itself: do not
    change it)."""
    return _kept(node) if type(node) in _KEPT else list(_walk(node))


def self_call(node: ast.AST) -> Optional[str]:
    """`m` of a call `self.m(...)`; None for any other node."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
    ):
        return node.func.attr
    return None
