"""Values made only to hand to a CUDA-only package's call.

diffusers' `set_use_memory_efficient_attention_xformers` (copied into magic-research/magic-animate) checks
xformers with `xformers.ops.memory_efficient_attention(torch.randn((1, 2, 40), device="cuda"), ...)`;
cloneofsimo/lora's `test_xformers_backwards` builds `q = torch.randn((1, 4, size), device="cuda")` and hands
`q` to the same call. The device there is the package's: where the package is missing the code is never
reached, and a port that drops or replaces the package drops the probe with it. The package is reported
where it is imported; the device strings inside are its workings and are not reported (readers rejected
them even at `info`).
"""

from __future__ import annotations

import ast
from typing import Dict, List, Sequence, Set

from portcheck.pyscan.imports import ImportTable
from portcheck.pyscan.nodes import children, module_nodes, walk

# Nodes that open a scope of their own: a walk of one scope stops at them.
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def package_feeds(module: ast.Module, imports: ImportTable, packages: Sequence[str]) -> Dict[int, str]:
    """id of every node inside a value that only feeds a call into one of `packages` (module names:
    `xformers`, `flash_attn`) -> the name of that call. A value feeds the call when it is one of its
    arguments, or is bound in a function to a name whose every read is such an argument or rebinds the
    name (`q = q.detach().requires_grad_()`)."""
    wanted = frozenset(packages)
    prefixes = tuple(p + "." for p in wanted)
    fed: Dict[int, str] = {}
    for node in module_nodes(module):
        if isinstance(node, ast.Call):
            name = imports.resolved(node.func) or ""
            if name in wanted or name.startswith(prefixes):
                for value in list(node.args) + [k.value for k in node.keywords]:
                    for sub in walk(value):
                        fed[id(sub)] = name
    if not fed:
        return {}
    for function in module_nodes(module):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _bound_feeds(function, fed)
    return fed


def own_nodes(function: ast.AST) -> List[ast.AST]:
    """The nodes of `function`'s body (or a module's), not those of the functions and classes defined in it."""
    out: List[ast.AST] = []
    stack: List[ast.AST] = list(getattr(function, "body", []))
    while stack:
        node = stack.pop()
        out.append(node)
        if not isinstance(node, SCOPES):
            stack.extend(children(node))
    return out


def _bound_feeds(function: ast.AST, fed: Dict[int, str]) -> None:
    nodes = own_nodes(function)
    bindings: Dict[str, List[ast.Assign]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bindings.setdefault(node.targets[0].id, []).append(node)
    if not bindings:
        return
    rebinding: Dict[int, str] = {}  # id of a node inside the value of `name = ...` -> name
    for name, assigns in bindings.items():
        for assign in assigns:
            for sub in walk(assign.value):
                rebinding[id(sub)] = name
    targets = {id(assign.targets[0]) for assigns in bindings.values() for assign in assigns}
    reads: Dict[str, List[ast.Name]] = {}
    stored: Set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                reads.setdefault(node.id, []).append(node)
            elif id(node) not in targets:
                stored.add(node.id)  # bound another way too (a loop target, `with ... as`): not followed
    for name, assigns in bindings.items():
        seen = reads.get(name, [])
        if name in stored or not seen:
            continue
        into = [fed[id(r)] for r in seen if id(r) in fed]
        if into and all(id(r) in fed or rebinding.get(id(r)) == name for r in seen):
            for assign in assigns:
                for sub in walk(assign.value):
                    fed.setdefault(id(sub), into[0])
