"""Every node of a parsed module, listed once.

Many passes of the per-file analysis go over the whole tree (`ast.walk(module)`); walking it again for each
costs more than the passes' own work on large files (a transformers modeling file has some 60,000 nodes).
The list is kept on the module node, in `ast.walk`'s order, so each pass reads the same nodes as before.
The passes only set attributes on nodes; none adds or removes one.
"""

from __future__ import annotations

import ast
from typing import List

_NODES_ATTR = "_portcheck_nodes"


def module_nodes(node: ast.AST) -> List[ast.AST]:
    """`list(ast.walk(node))`, kept on `node` when it is a module (a subtree is walked afresh)."""
    if not isinstance(node, ast.Module):
        return list(ast.walk(node))
    known = getattr(node, _NODES_ATTR, None)
    if known is None:
        known = list(ast.walk(node))
        setattr(node, _NODES_ATTR, known)
    return known
