"""CUDA-named flags a project only ever turns on: checks of them are no checks.

`if self.cuda: x = x.cuda()` reads like a CUDA check, and the scan lowers what it guards ("other devices
skip it"). Where the project sets that attribute in one place only, to `True` (cgl_fairness's `args.cuda=True`
in `arguments.py`, copied into trainers by `self.cuda = args.cuda`), or declares it as a command-line option
that is on by default (`parser.add_argument('--use_gpu', default=True)` in an options module), the guarded code
runs everywhere and crashes off CUDA. The per-file pass sees the check but not the stores, which live in other
modules; this pass reads the stores of the whole project.

A flag is always on when the project stores it at least once as on and never otherwise:
- on: `x.flag = True`; `flag = True` (or `flag: bool = True`) in a class body, a config class's default;
  an `add_argument` option of that name whose default is `True` or whose action is `store_false`;
- neither: `x.flag = y.flag`, a copy; a keyword `flag=True` or `flag=y.flag`, passing it on;
- on too: `self.flag = use_cuda` from a parameter of the function holding the store, where every call of that
  function (of its class, for `__init__`) found in the project passes `True` for it, or leaves it to a default of
  `True` (COMBAT's `GradCam(..., use_cuda=True)`, the only calls of `GradCam.__init__(self, ..., use_cuda)`);
- otherwise: any other store of the attribute (`x.flag = torch.cuda.is_available()`, `self.flag = flag` from a
  parameter some call passes anything else or that nothing calls, `x.flag += ...`), any other option of that name,
  a keyword that passes it anything else (`Namespace(cuda=False)`, `set_defaults(cuda=...)`), `setattr(x, "flag",
  ...)`, a dict key `"flag"` (configs that become attributes), or a file that names it and does not parse.
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple, Union

from portcheck.pyscan.context import defaulted_parameters, option_dest

Place = Tuple[str, int]  # (display path, line) of a store that turns the flag on
Texts = Iterable[Tuple[str, str]]  # (display path, text) of Python files
Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
# A store of a flag from a parameter: (callee, parameter, its position in a call, its default is `True`, the store)
Handed = Tuple[str, str, Optional[int], bool, Place]


def always_on(texts: Texts, names: Set[str], spelling: Callable[[str], Texts] = lambda word: ()) -> Dict[str, Place]:
    """Of `names` (attribute names of CUDA-named flags), those every Python text of the project (`(path,
    text)` pairs) only ever turns on, each with the first place that does. `spelling(word)`: the project's Python
    texts that spell `word`, where the calls of a function whose parameter a flag is set from are looked for."""
    on: Dict[str, Place] = {}
    off: Set[str] = set()
    handed: Dict[str, List[Handed]] = {}
    spellings = sorted({s for n in names for s in (n, n.replace("_", "-"))})
    either = "|".join(map(re.escape, spellings))
    # what may set one: a store or a keyword (`x.cuda = `, `cuda: bool = `, `cuda=`), an option or a key (`"--cuda"`)
    may_set = re.compile(r"\b(?:%s)\s*(?::[^=\n]*)?[-+*/|&]?=(?!=)|['\"](?:--)?(?:%s)['\"]" % (either, either))
    for path, text in texts:
        if not may_set.search(text):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            off.update(n for n in names if re.search(r"\b%s\b" % re.escape(n), text))
            continue
        for node, function, owner in _walk(tree):
            for name, turned_on in _stores(node, names):
                if turned_on is None:
                    continue
                if turned_on:
                    on.setdefault(name, (path, getattr(node, "lineno", 0)))
                    continue
                given = _from_parameter(node, function, owner)
                if given is None:
                    off.add(name)
                else:
                    handed.setdefault(name, []).append((*given, (path, getattr(node, "lineno", 0))))
    for name, stores in sorted(handed.items()):
        for callee, parameter, position, default_on, _ in stores:
            if name in off:
                break
            passed, place = _always_passed_on(callee, parameter, position, default_on, spelling)
            if not passed:
                off.add(name)
            elif place is not None:  # (none: nothing calls it, and the store never runs)
                on.setdefault(name, place)
    return {name: place for name, place in sorted(on.items()) if name not in off}


def _walk(tree: ast.AST) -> Iterator[Tuple[ast.AST, Optional[Function], Optional[ast.ClassDef]]]:
    """Every node, with the function holding it and the class holding that function (a method's class)."""
    stack: List[Tuple[ast.AST, Optional[Function], Optional[ast.ClassDef]]] = [(tree, None, None)]
    while stack:
        node, function, owner = stack.pop()
        yield node, function, owner
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                stack.append((child, None, child))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((child, child, owner if function is None else None))
            else:
                stack.append((child, function, owner))


def _from_parameter(
    node: ast.AST, function: Optional[Function], owner: Optional[ast.ClassDef]
) -> Optional[Tuple[str, str, Optional[int], bool]]:
    """For `self.flag = use_cuda`, `use_cuda` a parameter of the function holding it: what calls it (its class for
    `__init__`), the parameter, its position in a call (None for one only by keyword) and whether its default is
    `True`."""
    if function is None or not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Name):
        return None
    positional = [*function.args.posonlyargs, *function.args.args]
    method = owner is not None and bool(positional) and positional[0].arg in ("self", "cls")
    defaults = {a.arg: d for a, d in defaulted_parameters(function.args)}
    names = [a.arg for a in positional]
    name = node.value.id
    if name in names:
        position: Optional[int] = names.index(name) - (1 if method else 0)
    elif name in {a.arg for a in function.args.kwonlyargs}:
        position = None
    else:
        return None
    if function.name == "__init__":
        if owner is None:
            return None
        callee = owner.name
    else:
        callee = function.name
    return callee, name, position, name in defaults and _is_true(defaults[name])


def _always_passed_on(
    callee: str, parameter: str, position: Optional[int], default_on: bool, spelling: Callable[[str], Texts]
) -> Tuple[bool, Optional[Place]]:
    """Whether every call of `callee` in the project passes `True` for `parameter` (or leaves it to a default of
    `True`), with the first call (None where none is found: GradCAM's unused `GuidedBackpropReLUModel`); False
    where one passes anything else or spreads `*args`/`**kwargs`."""
    first: Optional[Place] = None
    called = re.compile(r"\b%s\s*\(" % re.escape(callee))
    for path, text in spelling(callee):
        if not called.search(text):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False, None
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) != callee:
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                return False, None
            given = next((k.value for k in node.keywords if k.arg == parameter), None)
            if given is None and position is not None and position < len(node.args):
                given = node.args[position]
            if not (_is_true(given) if given is not None else default_on):
                return False, None
            if first is None:
                first = (path, node.lineno)
    return True, first


def _stores(node: ast.AST, names: Set[str]) -> Iterable[Tuple[str, Optional[bool]]]:
    """(flag, turned on?) for each way `node` sets one of `names`: True on, False otherwise, None a copy."""
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            for part in _parts(target):
                if isinstance(part, ast.Attribute) and part.attr in names:
                    yield part.attr, _turns_on(node, part is target)
    elif isinstance(node, ast.ClassDef):
        for stmt in node.body:  # `cuda = True`, `use_gpu: bool = True`: a config class's default
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name) and target.id in names:
                        yield target.id, _turns_on(stmt, True)
    elif isinstance(node, ast.Call):
        func = node.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if last == "add_argument":
            dest = option_dest(node)
            if dest in names:
                yield dest, _option_on(node)
        elif last == "setattr" and len(node.args) >= 2 and _literal(node.args[1]) in names:
            yield str(_literal(node.args[1])), False
        for keyword in node.keywords:
            if keyword.arg in names and last != "add_argument":
                yield keyword.arg, None if _true_or_copy(keyword.value, keyword.arg) else False
    elif isinstance(node, ast.Dict):
        for key in node.keys:
            if key is not None and _literal(key) in names:
                yield str(_literal(key)), False


def _parts(target: ast.AST) -> Iterable[ast.AST]:
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _parts(element)
    else:
        yield target


def _turns_on(stmt: Union[ast.Assign, ast.AnnAssign, ast.AugAssign], alone: bool) -> Optional[bool]:
    """True for `x.flag = True`, None for `x.flag = y.flag`, False for anything else."""
    if isinstance(stmt, ast.AugAssign) or not alone:
        return False
    if stmt.value is None:
        return None  # `flag: bool`, an annotation that stores nothing
    if _is_true(stmt.value):
        return True
    target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return None if _is_copy(stmt.value, name) else False


def _true_or_copy(value: ast.AST, name: str) -> bool:
    return _is_true(value) or _is_copy(value, name)


def _is_copy(value: ast.AST, name: str) -> bool:
    return isinstance(value, ast.Attribute) and value.attr == name


def _is_true(value: ast.AST) -> bool:
    return isinstance(value, ast.Constant) and value.value is True


def _literal(node: ast.AST) -> object:
    return node.value if isinstance(node, ast.Constant) else None


def _option_on(call: ast.Call) -> bool:
    """Whether the option is on unless given: `default=True`, or `action="store_false"`."""
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    action = _literal(keywords["action"]) if "action" in keywords else None
    if "default" in keywords:
        return _is_true(keywords["default"])
    return action == "store_false"
