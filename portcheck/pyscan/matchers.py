"""Matcher kinds for Python code. A rule's `[match]` table names a kind and its parameters.

Each kind is a small class: it validates its parameters, says which AST node types it wants,
yields the nodes to report, and derives the trigger tokens the textual pre-filter uses (a file
that contains none of a rule's tokens cannot match it, so it is never parsed for that rule).
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Tuple, Type

from portcheck.pyscan.context import Ctx
from portcheck.pyscan.imports import ImportTable, dotted

Hit = Tuple[ast.AST, str]


class MatcherError(ValueError):
    """A rule's match table is malformed; the message names the key."""


class NameSet:
    """Qualified names with optional trailing `.*` wildcards."""

    def __init__(self, names: Sequence[str]) -> None:
        self.exact: FrozenSet[str] = frozenset(n for n in names if not n.endswith(".*"))
        self.prefixes: Tuple[str, ...] = tuple(n[:-1] for n in names if n.endswith(".*"))
        self.names = tuple(names)

    def __contains__(self, name: Optional[str]) -> bool:
        if name is None:
            return False
        return name in self.exact or (bool(self.prefixes) and name.startswith(self.prefixes))

    def tokens(self) -> List[str]:
        return [_best_segment(n) for n in self.names]


_COMMON_SEGMENTS = {"torch", "nn", "utils", "functional", "distributed", "*"}


def _best_segment(name: str) -> str:
    """A segment of a dotted name that any reference to it must spell out (the most specific one)."""
    segments = [s for s in name.split(".") if s not in _COMMON_SEGMENTS] or [s for s in name.split(".") if s != "*"]
    return max(segments, key=len)


def _str_list(params: Mapping[str, Any], key: str, required: bool = True) -> List[str]:
    value = params.get(key)
    if value is None:
        if required:
            raise MatcherError(f"missing key '{key}'")
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MatcherError(f"'{key}' must be a string or a list of strings")
    return list(value)


def _int(params: Mapping[str, Any], key: str) -> Optional[int]:
    value = params.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise MatcherError(f"'{key}' must be an integer")
    return value


def _const_str(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _outermost_chain(node: ast.AST, parent: Optional[ast.AST]) -> bool:
    return not (isinstance(parent, ast.Attribute) and parent.value is node)


def _chain(node: ast.AST) -> List[ast.AST]:
    """[outermost, ..., innermost] for an Attribute chain."""
    out = [node]
    while isinstance(node, ast.Attribute):
        node = node.value
        out.append(node)
    return out


def call_argument(call: ast.Call, keyword: Optional[str], position: Optional[int]) -> Optional[ast.AST]:
    if keyword is not None:
        for kw in call.keywords:
            if kw.arg == keyword:
                return kw.value
    if position is not None and position < len(call.args):
        arg = call.args[position]
        if not isinstance(arg, ast.Starred):
            return arg
    return None


class Matcher:
    kind = ""
    node_types: Tuple[Type[ast.AST], ...] = ()
    allowed_keys: FrozenSet[str] = frozenset()

    def __init__(self, params: Mapping[str, Any]) -> None:
        unknown = set(params) - set(self.allowed_keys) - {"kind"}
        if unknown:
            raise MatcherError(f"unknown key '{sorted(unknown)[0]}' for matcher kind '{self.kind}'")
        self.params = params
        self.inside = params.get("inside")
        if self.inside not in (None, "loop", "function"):
            raise MatcherError("'inside' must be 'loop' or 'function'")
        self.messages = bool(params.get("messages", False))

    def tokens(self) -> List[str]:
        raise NotImplementedError

    def match(self, node: Any, parent: Optional[ast.AST], ctx: Ctx, imports: ImportTable) -> Iterator[Hit]:
        raise NotImplementedError

    def handler(self) -> Callable[..., Iterator[Hit]]:
        def run(node: ast.AST, parent: Optional[ast.AST], ctx: Ctx, imports: ImportTable) -> Iterator[Hit]:
            if ctx.message and not self.messages:
                return iter(())
            if self.inside == "loop" and not ctx.in_loop:
                return iter(())
            if self.inside == "function" and not ctx.in_function:
                return iter(())
            return self.match(node, parent, ctx, imports)

        return run


class CallMatcher(Matcher):
    """A call to one of `names`, optionally only when an argument has one of `values`."""

    kind = "call"
    node_types = (ast.Call,)
    allowed_keys = frozenset({"names", "argument", "min_args", "max_args", "inside", "messages"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.names = NameSet(_str_list(params, "names"))
        self.min_args = _int(params, "min_args")
        self.max_args = _int(params, "max_args")
        arg = params.get("argument")
        self.arg_keyword: Optional[str] = None
        self.arg_position: Optional[int] = None
        self.arg_values: Optional[List[Any]] = None
        self.arg_pattern: Optional[re.Pattern] = None
        self.arg_present = False
        if arg is not None:
            if not isinstance(arg, dict):
                raise MatcherError("'argument' must be a table")
            extra = set(arg) - {"keyword", "position", "values", "pattern", "present"}
            if extra:
                raise MatcherError(f"unknown key 'argument.{sorted(extra)[0]}'")
            self.arg_keyword = arg.get("keyword")
            self.arg_position = arg.get("position")
            self.arg_values = arg.get("values")
            pattern = arg.get("pattern")
            self.arg_pattern = re.compile(pattern) if pattern else None
            self.arg_present = bool(arg.get("present", False))
            if self.arg_keyword is None and self.arg_position is None:
                raise MatcherError("'argument' needs 'keyword' or 'position'")

    def tokens(self) -> List[str]:
        return self.names.tokens()

    def _arg_matches(self, value: ast.AST) -> bool:
        if self.arg_present:
            return not (isinstance(value, ast.Constant) and value.value in (None, False))
        if isinstance(value, ast.Constant):
            if self.arg_values is not None and value.value in self.arg_values and type(value.value) in {type(v) for v in self.arg_values}:
                return True
            if self.arg_pattern is not None and isinstance(value.value, str) and self.arg_pattern.search(value.value):
                return True
        return False

    def match(self, node: ast.Call, parent, ctx, imports) -> Iterator[Hit]:
        name = imports.resolve(node.func)
        if name not in self.names:
            return
        nargs = len(node.args)
        if self.min_args is not None and nargs < self.min_args:
            return
        if self.max_args is not None and nargs > self.max_args:
            return
        if self.arg_keyword is None and self.arg_position is None:
            yield node, name
            return
        value = call_argument(node, self.arg_keyword, self.arg_position)
        if value is not None and self._arg_matches(value):
            yield value, name


class ReferenceMatcher(Matcher):
    """Any use of one of `names` (call, attribute read or write, decorator, base class)."""

    kind = "reference"
    node_types = (ast.Attribute, ast.Name)
    allowed_keys = frozenset({"names", "context", "inside", "messages"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.names = NameSet(_str_list(params, "names"))
        self.context = params.get("context", "any")
        if self.context not in ("any", "load", "store"):
            raise MatcherError("'context' must be 'any', 'load' or 'store'")

    def tokens(self) -> List[str]:
        return self.names.tokens()

    def match(self, node, parent, ctx, imports) -> Iterator[Hit]:
        if not _outermost_chain(node, parent):
            return
        if self.context == "store" and not isinstance(node.ctx, ast.Store):
            return
        if self.context == "load" and not isinstance(node.ctx, ast.Load):
            return
        for sub in _chain(node):
            name = imports.resolve(sub)
            if name is None:
                return
            if name in self.names:
                yield sub, name
                return


class ImportMatcher(Matcher):
    """An import of one of `modules` (or a submodule)."""

    kind = "import"
    node_types = (ast.Import, ast.ImportFrom)
    allowed_keys = frozenset({"modules", "inside", "messages"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.modules = tuple(_str_list(params, "modules"))
        self._prefixes = tuple(m + "." for m in self.modules)

    def tokens(self) -> List[str]:
        return [m.split(".")[0] for m in self.modules]

    def _hit(self, module: str) -> bool:
        return module in self.modules or module.startswith(self._prefixes)

    def match(self, node, parent, ctx, imports) -> Iterator[Hit]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if self._hit(alias.name):
                    yield node, alias.name
                    return
        elif not node.level and node.module:
            if self._hit(node.module):
                yield node, node.module
            else:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if self._hit(full):
                        yield node, full
                        return


class MethodMatcher(Matcher):
    """A method call `<expr>.name(...)` on a value that is not an imported module."""

    kind = "method"
    node_types = (ast.Call,)
    allowed_keys = frozenset({"names", "min_args", "max_args", "inside", "messages", "receiver_not"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.names = frozenset(_str_list(params, "names"))
        self.min_args = _int(params, "min_args")
        self.max_args = _int(params, "max_args")
        self.receiver_not = frozenset(_str_list(params, "receiver_not", required=False))

    def tokens(self) -> List[str]:
        return sorted(self.names)

    def match(self, node: ast.Call, parent, ctx, imports) -> Iterator[Hit]:
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in self.names:
            return
        if imports.resolve(func.value) is not None:
            return  # `torch.cuda.foo()` is an API call, not a method on a tensor
        receiver = dotted(func.value)
        if receiver is not None and receiver.rsplit(".", 1)[-1] in self.receiver_not:
            return
        nargs = len(node.args) + len(node.keywords)
        if self.min_args is not None and nargs < self.min_args:
            return
        if self.max_args is not None and nargs > self.max_args:
            return
        yield node, func.attr


class AttributeMatcher(Matcher):
    """Reading attribute `name` on any value that is not an imported module (`x.is_cuda`)."""

    kind = "attribute"
    node_types = (ast.Attribute,)
    allowed_keys = frozenset({"names", "inside", "messages"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.names = frozenset(_str_list(params, "names"))

    def tokens(self) -> List[str]:
        return sorted(self.names)

    def match(self, node: ast.Attribute, parent, ctx, imports) -> Iterator[Hit]:
        if node.attr in self.names and isinstance(node.ctx, ast.Load) and imports.resolve(node.value) is None:
            yield node, node.attr


class StringMatcher(Matcher):
    """A string literal in code (not a docstring or a message) that matches `pattern`."""

    kind = "string"
    node_types = (ast.Constant,)
    allowed_keys = frozenset({"pattern", "tokens", "inside", "messages"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        pattern = params.get("pattern")
        if not isinstance(pattern, str):
            raise MatcherError("missing key 'pattern'")
        try:
            self.pattern = re.compile(pattern)
        except re.error as exc:
            raise MatcherError(f"'pattern' is not a valid regular expression: {exc}") from None
        self._tokens = _str_list(params, "tokens", required=False) or required_literals(pattern)

    def tokens(self) -> List[str]:
        return self._tokens

    def match(self, node: ast.Constant, parent, ctx, imports) -> Iterator[Hit]:
        if isinstance(node.value, str) and self.pattern.search(node.value):
            yield node, node.value


def required_literals(pattern: str) -> List[str]:
    """The longest literal run any match of `pattern` must contain, or [] when there is none."""
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]
    except ImportError:  # Python < 3.11
        import sre_parse  # type: ignore[no-redef]
    try:
        parsed = sre_parse.parse(pattern)
    except re.error:
        return []
    if parsed.state.flags & re.IGNORECASE:
        return []
    best, run = "", ""
    for op, arg in parsed:
        if str(op) == "LITERAL":
            run += chr(arg)
            best = max(best, run, key=len)
        elif str(op) in ("AT",):
            continue
        else:
            run = ""
    return [best] if len(best) >= 3 else []


MATCHERS: Dict[str, Type[Matcher]] = {
    m.kind: m for m in (CallMatcher, ReferenceMatcher, ImportMatcher, MethodMatcher, AttributeMatcher, StringMatcher)
}


def register(cls: Type[Matcher]) -> Type[Matcher]:
    MATCHERS[cls.kind] = cls
    return cls


def build(params: Mapping[str, Any]) -> Matcher:
    kind = params.get("kind")
    if not isinstance(kind, str):
        raise MatcherError("missing key 'kind'")
    cls = MATCHERS.get(kind)
    if cls is None:
        raise MatcherError(f"unknown matcher kind '{kind}'")
    return cls(params)
