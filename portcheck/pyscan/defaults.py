"""Parameter defaults that never take effect: a private function's `device="cuda"` that every call in its
module overrides.

vjepa2's `_get_pixels(per_pixel, rand_color, patch_size, dtype=torch.float32, device="cuda")` is called
twice, both times with `device=self.device`: the default is never used, so it is no device choice of the
program. A private function (`_name`) is not meant to be called from other modules, so its module's calls
are all of them; a public one may be called from anywhere and keeps its finding.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Sequence, Set, Tuple, cast

_CUDA_STRING = re.compile(r"^cuda(?::\d+)?$")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# A private function's signature with a CUDA string default: the text test before the walk.
MAY_HAVE = re.compile(r"def\s+_\w+\s*\([^)]*=\s*[\"']cuda")


def overridden_defaults(nodes: Sequence[ast.AST]) -> Set[int]:
    """The ids of the CUDA device-string defaults (`ast.Constant`) of private functions whose every call
    in the module passes that parameter. `nodes`: every node of the module (`ast.walk`)."""
    # function name -> (parameter, its position or None, default node)
    defaults: Dict[str, List[Tuple[str, Optional[int], ast.expr]]] = {}
    for fn in nodes:
        if not isinstance(fn, _FUNCTIONS) or not fn.name.startswith("_") or fn.name.startswith("__"):
            continue
        cuda = cuda_defaults(fn)
        if cuda:
            if fn.name in defaults:
                defaults[fn.name] = []  # defined twice: which one a call reaches is not known
                continue
            defaults[fn.name] = cuda
    if not any(defaults.values()):
        return set()
    calls: Dict[str, List[ast.Call]] = {name: [] for name in defaults}
    callees: Set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Call):
            name = _callee(node.func)
            if name in calls:
                calls[name].append(node)
                callees.add(id(node.func))
    used_otherwise = {
        name
        for node in nodes
        if (name := _callee(node)) in calls
        and id(node) not in callees
        and isinstance(getattr(node, "ctx", None), ast.Load)
    }
    found: Set[int] = set()
    for name, params in defaults.items():
        if not calls[name] or name in used_otherwise:
            continue
        for param, index, default in params:
            if all(passes(call, param, index) for call in calls[name]):
                found.add(id(default))
    return found


def cuda_defaults(fn: ast.AST) -> List[Tuple[str, Optional[int], ast.expr]]:
    """The CUDA device-string defaults of a function's parameters: each parameter's name, its position as
    a call spells it (`self`/`cls` not counted; None for a keyword-only one) and the default's node."""
    args = cast(ast.FunctionDef, fn).args
    positional = list(args.posonlyargs) + list(args.args)
    offset = len(positional) - len(args.defaults)
    pairs: List[Tuple[str, Optional[int], ast.expr]] = [
        (positional[offset + i].arg, offset + i, d) for i, d in enumerate(args.defaults)
    ]
    pairs += [(a.arg, None, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    method = bool(positional) and positional[0].arg in ("self", "cls")
    return [(name, None if index is None else index - method, d) for name, index, d in pairs if _is_cuda_string(d)]


def _is_cuda_string(node: Optional[ast.AST]) -> bool:
    """`"cuda"`, `"cuda:0"`, or a choice with one (`"cuda" if torch.cuda.is_available() else "cpu"`, CLIP's `load`)."""
    if isinstance(node, ast.IfExp):
        return _is_cuda_string(node.body) or _is_cuda_string(node.orelse)
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(_CUDA_STRING.match(node.value))


def _callee(node: ast.AST) -> Optional[str]:
    """`_f` of `_f(...)`, `self._f(...)`, `cls._f(...)`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
        return node.attr
    return None


def passes(call: ast.Call, param: str, index: Optional[int]) -> bool:
    """Whether `call` gives `param` a value of its own: by keyword, or by a position before any `*args`
    (`self.prepare_scoremodel(model, device, cache_dir, **kwargs)` passes `device`; a `*args` or `**kwargs`
    might or might not pass what no argument before it does)."""
    if any(k.arg == param for k in call.keywords):
        return True
    if index is None:
        return False
    leading = next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)), len(call.args))
    return leading > index
