"""Parameter defaults no call in the application uses: `def mixup_target(target, num_classes,
device="cuda")` where every call passes `device`. The CUDA default is then never what runs, and a
porting engineer has nothing to change there (VideoMAE's `RandomErasing(..., device="cuda")`, always
built with `device="cpu"`).

`portcheck.pyscan.defaults` answers this for a private function within its module, file by file; a
public one may be called from any module, so only the whole project can tell: the runner asks this for
applications, as it asks `portcheck.reach`, and for a library scanned whole, where the names its
packages export (any name an `__init__.py` spells) are its users' to call and keep their findings
(omnivore's `mixup_target(..., device="cuda")`, always called with `device=target.device` inside the
package, is lowered). The answer per file is the lines of such defaults with the note for their
findings, the shape `portcheck.project_index` lowers to `info`.
"""

from __future__ import annotations

import ast
from typing import AbstractSet, Dict, FrozenSet, Iterable, List, Mapping, NamedTuple, Optional, Set, Tuple, cast

from portcheck.project_index import Sources
from portcheck.pyscan.defaults import cuda_defaults, passes
from portcheck.pyscan.loading import IDENTIFIER
from portcheck.pyscan.nodes import self_call, walk
from portcheck.pyscan.spellings import OWN, decode_tied

OVERRIDDEN_NOTE = (
    "lowered to info: every call of `{function}` in this project passes `{param}`, so this default is"
    " never used"
)


class Default(NamedTuple):
    path: str
    line: int
    function: str  # the name calls spell: the function's, or its class's for `__init__`
    param: str
    position: Optional[int]  # as a call spells it (`self` not counted); None: keyword-only
    init: bool = False  # a class's `__init__`: its subclasses' `super().__init__(...)` call it too
    owner: str = ""  # the class a method is defined in ("" for a function)
    bases: Tuple[str, ...] = ()  # the names of that class's bases, as its statement spells them
    keywords: Optional[FrozenSet[str]] = None  # the names a call may pass by keyword; None: any (`**kwargs`)
    positional: Optional[int] = None  # how many arguments a call may pass by position; None: any (`*args`)


def _parse(sources: Sources, path: str) -> Optional[ast.Module]:
    try:
        return ast.parse(sources.text(path))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _defaults_in(path: str, tree: ast.Module, lines: Set[int]) -> List[Default]:
    """The CUDA defaults of `tree`'s functions whose line is one of `lines`."""
    owners: Dict[int, ast.ClassDef] = {}  # id of a method -> its class
    for node in walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    owners[id(item)] = node
    out: List[Default] = []
    for node in walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            owner = owners.get(id(node))
            init = owner is not None and node.name == "__init__"
            name = owner.name if owner is not None and init else node.name
            bases = tuple(_callee(b) for b in owner.bases) if owner is not None else ()
            keywords, positional = _signature(node, owner is not None)
            for param, position, default in cuda_defaults(node):
                if default.lineno in lines:
                    owned = owner.name if owner else ""
                    line = default.lineno
                    out.append(Default(path, line, name, param, position, init, owned, bases, keywords, positional))
    return out


def _signature(node: ast.AST, method: bool) -> Tuple[Optional[FrozenSet[str]], Optional[int]]:
    """The keywords and the number of positional arguments a call of the function may pass (`self`/`cls` of a
    method not counted); None for either where `**kwargs` or `*args` takes any."""
    args = cast(ast.FunctionDef, node).args
    positional = [*args.posonlyargs, *args.args]
    skip = 1 if method and positional and positional[0].arg in ("self", "cls") else 0
    # (`self` is the first positional parameter: of `args` unless some are positional-only)
    named = args.args if args.posonlyargs else args.args[skip:]
    keywords = frozenset(a.arg for a in [*named, *args.kwonlyargs])
    return (None if args.kwarg else keywords), (None if args.vararg else len(positional) - skip)


def _may_call(call: ast.Call, default: Default) -> bool:
    """Whether `call` can be a call of the default's function: a keyword it does not take, or more arguments by
    position than it has, make a call of another function of that name (LoFA's `self.pipe.encode_prompt(text,
    positive=True)`, `self.prompter.encode_prompt(prompt, clip_skip=...)` of prompters without a `device`)."""
    if default.keywords is not None and any(k.arg is not None and k.arg not in default.keywords for k in call.keywords):
        return False
    plain = [a for a in call.args if not isinstance(a, ast.Starred)]
    return default.positional is None or len(plain) <= default.positional


def _own_method_calls(tree: ast.Module) -> Dict[int, str]:
    """id of each `self.m(...)` call in a method of a class that defines `m` itself -> that class's name: the call
    runs that class's `m` (or a subclass's), not a method of that name in another class (LoFA's pipelines, each with
    its own `encode_prompt` calling `self.encode_prompt(prompt, positive=True)`, beside `WanPrompter.encode_prompt(...,
    device="cuda")` that they call through `self.prompter` with a device)."""
    out: Dict[int, str] = {}
    for node in walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        methods = [i for i in node.body if isinstance(i, (ast.FunctionDef, ast.AsyncFunctionDef))]
        defined = {m.name for m in methods}
        for method in methods:
            for call in walk(method):
                if self_call(call) in defined:
                    out[id(call)] = node.name
    return out


def _harmless_names(tree: ast.Module) -> Set[int]:
    """ids of the names a class is spelt by where nothing can call it: `super(Cls, self)` (Python 2's spelling of
    `super()`, Gazeformer's `PositionEmbeddingSine2d`) and the classes `isinstance`/`issubclass` test."""
    out: Set[int] = set()
    for node in walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id == "super" and node.args:
            out.add(id(node.args[0]))
        elif node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            tested = node.args[1]
            out.update(id(e) for e in (tested.elts if isinstance(tested, ast.Tuple) else [tested]))
    return out


def _is_init(path: str) -> bool:
    return path.replace("\\", "/").rsplit("/", 1)[-1] == "__init__.py"


def _calls_super(node: ast.Call) -> bool:
    """`super().__init__(...)` (or `super(Cls, self).__init__(...)`)."""
    return (
        isinstance(node.func, ast.Attribute)
        and node.func.attr == "__init__"
        and isinstance(node.func.value, ast.Call)
        and isinstance(node.func.value.func, ast.Name)
        and node.func.value.func.id == "super"
    )


def _callee(node: ast.AST) -> str:
    """`f` of `f(...)`, `self.f(...)`, `module.f(...)`."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def overridden_defaults(
    sources: Sources, lines: Mapping[str, AbstractSet[int]], texts: Iterable[str] = (), library: bool = False
) -> Dict[str, List[Tuple[int, int, str]]]:
    """Of the CUDA parameter defaults on `lines` (per path: the lines of findings there), those every call
    of their function in `sources` passes a value for. At least one call must be found, and the name must
    be used only as a callee (`callback=load` may call it any way) and spelt in none of `texts` (notebooks,
    configs and scripts, whose calls are not read). In a `library`, a name any `__init__.py` spells is
    exported, its users' to call: it keeps its findings. Per path, each such line with the note
    for its findings."""
    defaults: List[Default] = []
    for path, wanted in lines.items():
        if library and _is_init(path):
            continue
        tree = _parse(sources, path)
        if tree is not None:
            defaults.extend(_defaults_in(path, tree, set(wanted)))
    if library and defaults:
        # every word of every `__init__.py` (a re-export may span lines of a parenthesised import)
        exported = {word for path in sources.paths() if _is_init(path) for word in sources.words(path)}
        defaults = [d for d in defaults if d.function not in exported]
    if not defaults:
        return {}
    calls: Dict[str, List[ast.Call]] = {d.function: [] for d in defaults}
    where: Dict[int, str] = {}  # id of a call -> the path that makes it
    own_class: Dict[int, str] = {}  # id of a call of a class's own method (`self.m(...)`) -> that class
    classes = {d.function for d in defaults if d.init}
    # names also read other than as a callee, or named where calls are not read
    elsewise: Set[str] = {name for text in texts for name in calls.keys() & set(IDENTIFIER.findall(text))}
    for path in sources.paths():
        if not calls.keys() & sources.words(path):
            continue
        tree = _parse(sources, path)
        if tree is None:
            continue
        callees: Set[int] = _harmless_names(tree)
        own_class.update(_own_method_calls(tree))
        for node in walk(tree):
            if isinstance(node, ast.Call) and _callee(node.func) in calls:
                calls[_callee(node.func)].append(node)
                callees.add(id(node.func))
                where[id(node)] = path
            elif isinstance(node, ast.ClassDef):
                # `class CLIPT5Model(ScoreModel)` whose `__init__` calls `super().__init__(..., device=device)`
                # (UniWorld's t2v_metrics): that call is a call of the base's `__init__`; a subclass without an
                # `__init__` of its own is built with the base's, by calls this pass does not read as the base's
                init = next((i for i in node.body if isinstance(i, ast.FunctionDef) and i.name == "__init__"), None)
                bases = [b for b in node.bases if _callee(b) in classes]
                if init is not None and bases:
                    supers = [c for c in walk(init) if isinstance(c, ast.Call) and _calls_super(c)]
                    for base in bases:
                        calls[_callee(base)].extend(supers)
                        callees.add(id(base))
        for node in walk(tree):
            name = _callee(node)
            if name in calls and id(node) not in callees and isinstance(getattr(node, "ctx", None), ast.Load):
                elsewise.add(name)
    own = _own_spellings(sources, {where[id(c)] for found in calls.values() for c in found if id(c) in where}, calls)
    out: Dict[str, List[Tuple[int, int, str]]] = {}
    for d in defaults:
        # (a call in another module that spells only its own function of that name calls that one: locotrack's JAX
        # `get_alibi_slope(n)` beside the PyTorch port's `get_alibi_slope(n, device="cuda")`)
        # (and a `self.m(...)` in another class that defines `m` runs that class's `m`, unless the default's class
        # derives from it and so overrides it)
        found = [
            c
            for c in calls[d.function]
            if (where.get(id(c), d.path) == d.path or (where[id(c)], d.function) not in own)
            and not _another_class(own_class.get(id(c)), where.get(id(c), d.path), d)
            and _may_call(c, d)
        ]
        if found and d.function not in elsewise and all(passes(call, d.param, d.position) for call in found):
            note = OVERRIDDEN_NOTE.format(function=d.function, param=d.param)
            out.setdefault(d.path, []).append((d.line, d.line, note))
    return out


def _own_spellings(sources: Sources, paths: Iterable[str], calls: Mapping[str, object]) -> Set[Tuple[str, str]]:
    """(path, name) for each of `calls`' names a module of `paths` spells only as its own binding (its own
    definition of a function of that name, a local): `portcheck.pyscan.spellings`."""
    out: Set[Tuple[str, str]] = set()
    for path in paths:
        tied = decode_tied(sources.tied(path)) or {}
        out.update((path, name) for name in calls if tied.get(name) == frozenset({OWN}))
    return out


def _another_class(caller: Optional[str], path: str, default: Default) -> bool:
    """Whether a call `self.m(...)` made in class `caller` (of `path`), which defines `m` itself, runs a method other
    than the one `default` belongs to: another class, from which the default's class does not derive."""
    if caller is None or default.init:
        return False
    if caller == default.owner and path == default.path:
        return False
    return caller not in default.bases
