"""Matcher kinds for Python code. A rule's `[match]` table names a kind and its parameters.

Each kind is a small class: it validates its parameters, says which AST node types it wants,
yields the nodes to report, and derives the trigger tokens the textual pre-filter uses (a file
that contains none of a rule's tokens cannot match it, so it is never parsed for that rule; the
one assumption is that import statements use PEP 8 spacing, `import a, b` rather than `import a,b`).
"""

from __future__ import annotations

import ast
import re
from typing import (
    Any,
    Callable,
    Dict,
    FrozenSet,
    Iterator,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Tuple,
    Type,
    Union,
)

from portcheck.backends import in_other_backend
from portcheck.pyscan.context import (
    ARGUMENT_OF_ATTR,
    CLAMPED_ATTR,
    CLAMPED_NOTE,
    SEARCHED_ATTR,
    SEARCHING_METHODS,
    SET_FALSE_ATTR,
    STEP_TOKENS,
    TESTED_ATTR,
    Ctx,
    arguments_picked_by_cuda_check,
    is_evaluation_function,
    is_evaluation_loop,
    is_fp32_island,
    is_message_call,
    is_pandas_value,
    is_step_loop,
    is_training_loop,
    numpy_of_host_tensor,
    reads_stop_token,
    updates_weights,
)
from portcheck.pyscan.imports import ALIASED_CALLABLES, ImportTable, dotted, none_operand
from portcheck.pyscan.nodes import children, self_call, walk
from portcheck.torchfacts import (
    AVAILABILITY_CALLS,
    DEFAULT_DEVICE,
    INDEX,
    UNKNOWN,
    argument_role,
    name_role,
    symbol_role,
)

# What a matcher reports: a node, or a Span (a token inside one).
Reported = Union[ast.AST, "Span"]
# A matcher's hit: what to report with a label, and optionally a context of its own (a string inside
# a guarded ternary is itself guarded). The label may be a `Label`, which also says what was matched.
Hit = Union[Tuple[Reported, str], Tuple[Reported, str, Ctx]]


class Label(str):
    """A hit's label (the text a rule's message puts for `{match}`) with what the matcher decided about
    the code it reports: its `role` (one of `torchfacts.ROLES`: where a value goes, what an argument or
    a name is) and its `symbol` (the qualified name matched: the callee, the reference). Both travel with
    the finding (`Finding.role`, `Finding.symbol`) to the fixer, which rewrites and never decides again."""

    role: str
    symbol: str

    def __new__(cls, text: str, role: str = "", symbol: Optional[str] = "") -> "Label":
        made = super().__new__(cls, text)
        made.role = role
        made.symbol = symbol or ""
        return made


def argument_place(call: ast.Call, expr: ast.AST) -> Tuple[Optional[str], Optional[int]]:
    """(keyword, position) by which `expr` is passed to `call`: the keyword, else its index among the
    positional arguments (`*args` not counted); (None, None) when it is neither."""
    for kw in call.keywords:
        if kw.value is expr:
            return kw.arg, None
    position = 0
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            continue
        if arg is expr:
            return None, position
        position += 1
    return None, None


def value_role(call: ast.Call, callee: Optional[str], expr: ast.AST) -> str:
    """Where `expr`, an argument of `call` (whose qualified name is `callee`), goes."""
    keyword, position = argument_place(call, expr)
    method = call.func.attr if isinstance(call.func, ast.Attribute) else None
    return argument_role(callee or "", method, keyword, position)


def device_argument_role(expr: Optional[ast.AST]) -> str:
    """What a device argument is (`x.cuda(<expr>)`): "" when there is none."""
    if expr is None:
        return ""
    if isinstance(expr, ast.Constant):
        if expr.value is None:
            return DEFAULT_DEVICE
        return INDEX if type(expr.value) is int else UNKNOWN
    if isinstance(expr, ast.Name):
        return name_role(expr.id)
    if isinstance(expr, ast.Attribute):
        return name_role(expr.attr)
    return UNKNOWN


class Located(Protocol):
    """The position of what a matcher reports: every node it reports has one, and so has a Span."""

    @property
    def lineno(self) -> int: ...

    @property
    def col_offset(self) -> int: ...

    @property
    def end_lineno(self) -> Optional[int]: ...

    @property
    def end_col_offset(self) -> Optional[int]: ...
# A pre-filter requirement: every clause must be met; a clause is met when one of its alternatives
# is, and an alternative when all of its strings occur in the text.
Alternative = Tuple[str, ...]
Clause = Tuple[Alternative, ...]


class Word(str):
    """A requirement string that occurs as a whole identifier: `det` in `torch.det(x)`, not in `detach`."""


class Member(str):
    """A requirement string that occurs as a whole identifier right after a dot (`where` in
    `torch.where`; PEP 8 spacing) or in the name list of an import (`from torch import where`)."""


class Attr(str):
    """A requirement string that occurs as a whole identifier right after a dot: `item` in `x.item()`.
    Like import tokens, this assumes PEP 8 spacing (`x.item()`, not `x. item()`)."""


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

    def clause(self) -> Clause:
        """Every segment of a qualified name is spelled in a file that refers to it (in the import or
        in the attribute chain), so each name needs all of its segments."""
        return tuple(_segments(n) for n in self.names)


def _segments(name: str) -> Tuple[str, ...]:
    # The root is a name; every later segment follows a dot, unless it is imported by name.
    parts = [s for s in name.split(".") if s != "*"]
    return tuple(Word(s) if i == 0 else Member(s) for i, s in enumerate(parts))


_COMMON_SEGMENTS = {"torch", "nn", "utils", "functional", "distributed", "*"}
# Segments rare in code that does not use the API: the best pre-filter tokens.
_RARE = re.compile(r"cuda|cudnn|nccl|nvtx|triton|xla", re.IGNORECASE)


def _best_segment(name: str) -> str:
    """A segment of a dotted name that any reference to it must spell out: every segment is spelled
    either in the import or in the attribute chain, so any one is a sound token; pick a rare one."""
    segments = [s for s in name.split(".") if s not in _COMMON_SEGMENTS] or [s for s in name.split(".") if s != "*"]
    rare = [s for s in segments if _RARE.search(s)]
    return max(rare or segments, key=len)


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


def _bool(params: Mapping[str, Any], key: str, default: bool) -> bool:
    value = params.get(key, default)
    if not isinstance(value, bool):
        raise MatcherError(f"'{key}' must be true or false")
    return value


def _bool_or_lower(params: Mapping[str, Any], key: str, default: bool) -> Tuple[bool, bool]:
    """(matches there, one severity level lower) for a key that takes true, false or "lower"."""
    value = params.get(key, default)
    if value == "lower":
        return True, True
    if not isinstance(value, bool):
        raise MatcherError(f"'{key}' must be true, false or \"lower\"")
    return value, False


def _outermost_chain(node: ast.AST, parent: Optional[ast.AST]) -> bool:
    return not (isinstance(parent, ast.Attribute) and parent.value is node)


def qualified_chain(node: ast.AST, imports: ImportTable) -> List[Tuple[ast.AST, str]]:
    """[(node, qualified name)] for each link of an Attribute chain, outermost first; empty when the
    chain does not start at an imported name. Remembered on the node: every reference rule asks."""
    known = node.__dict__.get("_portcheck_chain")
    if known is not None:
        return known
    links = [node]
    root = node
    while isinstance(root, ast.Attribute):
        root = root.value
        links.append(root)
    out: List[Tuple[ast.AST, str]] = []
    base = imports.aliases.get(root.id) if isinstance(root, ast.Name) else None
    if base is None:
        held = imports.held_module(links)
        if held is not None:
            links, base = links[: held + 1], "torch"
    if base is not None:
        names = [base]
        for link in reversed(links[:-1]):
            names.append(names[-1] + "." + link.attr)  # type: ignore[attr-defined]  # all links but the root are Attributes
        out = list(zip(links, reversed(names)))
    node._portcheck_chain = out  # type: ignore[attr-defined]  # memo on the node, read back above
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


_INSIDE = (None, "loop", "function", "step-loop", "training-loop")


def _declined(ctx: Ctx) -> Ctx:
    return ctx._replace(declined=True)


def _shown(ctx: Ctx) -> Ctx:
    return ctx._replace(shown=True)


class Matcher:
    """Base class. Shared keys: `inside` ("loop", "function", "step-loop": a loop that runs a model
    step, or "training-loop": a loop that takes a training step; neither in an `except` handler),
    `messages` (whether to match inside log/print/raise messages: code there still runs, so every kind
    does by default except `string`, whose literals there are prose), `requires` (only in
    modules that import one of these modules), `tokens` (strings any matching file must contain, when
    the ones the matcher derives are too common to filter well), `in-guard-tests` (false: do not match
    in the test of a CUDA check that only guards CUDA-only or display-only code, in test skips, or in
    the CUDA checks of test functions, where the check is no device fallback), `in-display` (false: do
    not match inside functions that only collect or print environment information, such as
    `collect_env()`), `on-host` (false: do not match on host values: the `dtype=` of a tensor factory that names no
    device, a method of a numpy array or of such a factory's tensor, the arguments of numpy calls, the
    methods of a `Dataset` class), `fp32-islands` (false: decline calls that pass `enabled=False`,
    an autocast turned off for an fp32 region or a scaler that does nothing), `in-guards` (false: do not
    match in the CUDA branch of a check that only guards CUDA-only code, where a call that does nothing
    elsewhere is already portable),
    `in-xla-branches` (false: do not match in the branch of `if x.device.type == "xla":`, which only
    runs on an XLA device), `in-complex-branches` (false: do not match in the branch of
    `if torch.is_complex(x):`, which only handles a complex tensor made elsewhere), `in-float64-branches`
    (false: the same for `if x.dtype is torch.float64:`, whose branch keeps a float64 input in float64),
    `in-constructors` (false: do not match in the `__init__` of a module, dataset, sampler or loader class,
    which runs once, when the model or the data pipeline is built, not once per step), `in-tests` (false: do
    not match in the files of a test suite, where the construct wraps whatever the test builds, on any device).
    `messages` and `in-display` also take "lower": match there, one level lower, with a note saying
    the value is only shown. `in-display` also covers numbers formatted for people
    (`f"{mem / 1e9:.2f}"`, `"%.2f" % mem`, `round(mem / 2**30, 3)`,
    `"allocated: {}".format(mem / mega_bytes)`) and modules such as `collect_env.py`.
    What a rule declines this way still keeps fallback rules off the node. Nothing matches inside the
    expected values of a test's
    assertions, nor in tests that only run with CUDA (skipped elsewhere, or CUDA-only parts of test
    files, see `testcode.py`)."""

    kind = ""
    messages_default = True
    node_types: Tuple[Type[ast.AST], ...] = ()
    allowed_keys: FrozenSet[str] = frozenset()
    _common_keys = frozenset(
        {"kind", "inside", "messages", "requires", "tokens", "in-guard-tests", "in-display", "on-host", "fp32-islands",
         "in-guards", "in-xla-branches", "in-complex-branches", "in-float64-branches", "in-constructors",
         "in-build-scripts", "in-tests", "in-metrics"}
    )

    def __init__(self, params: Mapping[str, Any]) -> None:
        unknown = set(params) - set(self.allowed_keys) - self._common_keys
        if unknown:
            raise MatcherError(f"unknown key '{sorted(unknown)[0]}' for matcher kind '{self.kind}'")
        self.params = params
        self.inside = params.get("inside")
        if self.inside not in _INSIDE:
            raise MatcherError("'inside' must be 'loop', 'function', 'step-loop' or 'training-loop'")
        # `messages` and `in-display` also take "lower": match there, one severity level lower.
        self.messages, self.messages_lower = _bool_or_lower(params, "messages", self.messages_default)
        self.requires = tuple(_str_list(params, "requires", required=False))
        self.given_tokens = _str_list(params, "tokens", required=False)
        self.in_guard_tests = _bool(params, "in-guard-tests", True)
        self.in_display, self.display_lower = _bool_or_lower(params, "in-display", True)
        self.on_host = _bool(params, "on-host", True)
        self.fp32_islands = _bool(params, "fp32-islands", True)
        self.in_guards = _bool(params, "in-guards", True)
        self.in_xla_branches = _bool(params, "in-xla-branches", True)
        self.in_complex_branches = _bool(params, "in-complex-branches", True)
        self.in_float64_branches = _bool(params, "in-float64-branches", True)
        self.in_constructors = _bool(params, "in-constructors", True)
        # `in-build-scripts = false`: in a `setup.py` a device check picks the extensions to build, not a device
        self.in_build_scripts = _bool(params, "in-build-scripts", True)
        # `in-tests = false`: in a test suite's files the construct wraps whatever the test builds, on any
        # device (`nn.DataParallel(model)` around a CPU model to check its `module.` keys)
        self.in_tests = _bool(params, "in-tests", True)
        # `in-metrics = false`: in a module of metrics, outside a training loop, the construct computes a score
        # once per evaluation over collected outputs (a data-dependent `torch.where`, a check on their values)
        self.in_metrics = _bool(params, "in-metrics", True)

    def tokens(self) -> List[str]:
        """Strings any file this matcher can match must contain (any one of them); [] = no such string."""
        if self.given_tokens:
            return list(self.given_tokens)
        if self.inside in ("step-loop", "training-loop"):
            return list(STEP_TOKENS)  # a step loop calls backward/zero_grad/optimizer.step
        return self.own_tokens()

    def own_tokens(self) -> List[str]:
        raise NotImplementedError

    def token_clauses(self) -> Tuple[Clause, ...]:
        """What any file this matcher can match holds, stricter than `tokens()` (which is one of the
        clauses): the given tokens, a step loop's tokens, the matcher's own, and a required import's
        name (`requires` only holds in a module whose import statements spell it). () = nothing known."""
        clauses: List[Clause] = []
        if self.given_tokens:
            clauses.append(tuple((t,) for t in self.given_tokens))
        if self.inside in ("step-loop", "training-loop"):
            clauses.append(tuple((t,) for t in STEP_TOKENS))
        clauses.extend(self.own_clauses())
        if self.requires:
            clauses.append(tuple((Word(r),) for r in self.requires))
        # A clause with an empty alternative or an empty string is met by every text.
        return tuple(c for c in clauses if c and all(alt and all(alt) for alt in c))

    def own_clauses(self) -> Tuple[Clause, ...]:
        """The matcher's own requirement; by default any one of `own_tokens()`."""
        own = self.own_tokens()
        return (tuple((t,) for t in own),) if own else ()

    def match(self, node: Any, parent: Optional[ast.AST], ctx: Ctx, imports: ImportTable) -> Iterator[Hit]:
        raise NotImplementedError

    def handler(self) -> Callable[..., Iterator[Hit]]:
        inside, messages, requires, match = self.inside, self.messages, self.requires, self.match
        in_guard_tests, in_display, on_host = self.in_guard_tests, self.in_display, self.on_host
        messages_lower, display_lower = self.messages_lower, self.display_lower
        fp32_islands = self.fp32_islands
        in_guards = self.in_guards
        in_xla_branches = self.in_xla_branches
        in_complex_branches = self.in_complex_branches
        in_float64_branches = self.in_float64_branches
        in_constructors = self.in_constructors
        in_build_scripts = self.in_build_scripts
        in_tests = self.in_tests
        in_metrics = self.in_metrics

        def run(node: ast.AST, parent: Optional[ast.AST], ctx: Ctx, imports: ImportTable) -> Iterator[Hit]:
            if ctx.annotation or ctx.test_assert or ctx.skipped:
                return iter(())
            if ctx.in_test and type(node) is ast.Assert:
                return iter(())  # a test's assertion checks values; it is no control flow of the code under test
            # A node this rule declines where it sits (a guard's test, display code, a host tensor) still
            # matches, marked declined: it reports nothing, and no fallback rule reports it either.
            declined = (
                (ctx.message and not messages)
                or (ctx.guard_test and not in_guard_tests)
                or (ctx.display and not in_display)
                or (ctx.host and not on_host)
                or (ctx.pure_guard and not in_guards)
                or (ctx.xla_branch and not in_xla_branches)
                or (ctx.complex_branch and not in_complex_branches)
                or (ctx.float64_branch and not in_float64_branches)
                or (ctx.in_init and ctx.built_once and not in_constructors)
                or (ctx.build_script and not in_build_scripts)
                or (ctx.test_file and not in_tests)
                or (ctx.metric and not in_metrics and not is_training_loop(ctx.loop))
                # `autocast(enabled=False)` (an fp32 island, AMP004's) or `GradScaler(enabled=False)`, which
                # does nothing: no fallback reports the call either (co-tracker's disabled scaler)
                or (not fp32_islands and type(node) is ast.Call and is_fp32_island(node))
            )
            if inside is not None:
                if inside == "loop" and not ctx.in_loop:
                    return iter(())
                if inside == "function" and not ctx.in_function:
                    return iter(())
                if inside == "step-loop" and (ctx.periodic or ctx.error_path or not is_step_loop(ctx.loop)):
                    return iter(())
                if inside == "training-loop" and (ctx.periodic or ctx.error_path or not is_training_loop(ctx.loop)):
                    return iter(())
            if requires and not imports.imports_any(requires):
                return iter(())
            if inside == "step-loop" and (
                ((ctx.evaluation or is_evaluation_function(ctx.scope)) and not updates_weights(ctx.loop))
                or is_evaluation_loop(ctx.loop)
                or reads_stop_token(node, parent, ctx.loop, ctx.scope)
                or (_handed_to_decoder(node, parent) and not is_training_loop(ctx.loop))
            ):
                # evaluation or batch inference over a dataset (or a loop of an evaluation script that trains
                # nothing; swav's `eval_linear.py` trains a probe): reading each result to the host is what the
                # loop is for, as `.cpu()` is in a loop that does not train; and the token a greedy decoder
                # reads to stop at the end of the sequence
                declined = True
            mark: Callable[[Ctx], Ctx]
            if declined:
                mark = _declined
            elif (ctx.message and messages_lower) or (ctx.display and display_lower):
                mark = _shown  # matched one level lower, the value being only shown
            else:
                return match(node, parent, ctx, imports)
            hits = match(node, parent, ctx, imports)
            return ((hit[0], hit[1], mark(hit[2] if len(hit) > 2 else ctx)) for hit in hits)

        return run


# What turns token ids into text: the host needs the ids to do it, on any device.
_DECODERS = frozenset({"decode", "batch_decode", "convert_ids_to_tokens"})


def _handed_to_decoder(node: ast.AST, parent: Optional[ast.AST]) -> bool:
    """`tokenizer.decode(continuation.tolist())` (catwalk's generation after `model.generate`): ids read to the
    host to make text of them, which a loop that trains nothing is for."""
    return (
        isinstance(parent, ast.Call)
        and any(arg is node for arg in parent.args)
        and (dotted(parent.func) or "").rsplit(".", 1)[-1] in _DECODERS
    )


_PATH_CALLS = frozenset({"join", "Path", "PurePath", "PosixPath", "abspath", "realpath", "normpath", "str", "fspath"})


def _path_tail(expr: ast.AST) -> Optional[str]:
    """The literal end of a path expression: the last argument of a call (`os.path.join`, `Path`), the
    right side of `+` or `/`, the last text of an f-string; None when it does not end in a literal."""
    for _ in range(8):
        if isinstance(expr, ast.Constant):
            return expr.value if isinstance(expr.value, str) else None
        if isinstance(expr, ast.Call) and expr.args and (dotted(expr.func) or "").rsplit(".", 1)[-1] in _PATH_CALLS:
            expr = expr.args[-1]
        elif isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Div)):
            expr = expr.right
        elif isinstance(expr, ast.JoinedStr) and expr.values:
            expr = expr.values[-1]
        else:
            return None
    return None


class ArgumentSpec:
    """An `argument = { keyword, position, values, pattern, present, missing }` table: which argument of a
    call to look at, and what it must hold. Values in a list or tuple literal count one by one."""

    _KEYS = frozenset({"keyword", "position", "values", "pattern", "present", "missing"})

    def __init__(self, arg: Any) -> None:
        if not isinstance(arg, dict):
            raise MatcherError("'argument' must be a table")
        extra = set(arg) - self._KEYS
        if extra:
            raise MatcherError(f"unknown key 'argument.{sorted(extra)[0]}'")
        self.keyword: Optional[str] = arg.get("keyword")
        position = arg.get("position")
        if position is not None and not isinstance(position, (int, list)):
            raise MatcherError("'argument.position' must be an integer or a list of integers")
        self.positions: Tuple[int, ...] = (
            tuple(position) if isinstance(position, list) else (() if position is None else (position,))
        )
        self.values: Optional[List[Any]] = arg.get("values")
        pattern = arg.get("pattern")
        try:
            self.pattern: Optional[re.Pattern] = re.compile(pattern) if pattern else None
        except re.error as exc:
            raise MatcherError(f"'argument.pattern' is not a valid regular expression: {exc}") from None
        self.present = bool(arg.get("present", False))
        self.missing = bool(arg.get("missing", False))
        if self.keyword is None and not self.positions:
            raise MatcherError("'argument' needs 'keyword' or 'position'")

    def candidates(self, call: ast.Call) -> List[ast.AST]:
        """The argument by keyword, else the positional arguments at each of `position`."""
        value = call_argument(call, self.keyword, None)
        if value is not None:
            return [value]
        out = []
        for position in self.positions:
            value = call_argument(call, None, position)
            if value is not None:
                out.append(value)
        return out

    def _const(self, value: ast.AST) -> bool:
        if not isinstance(value, ast.Constant):
            # A path built at run time (`os.path.join(here, "k.cu")`, `root / "k.cu"`, f"{root}/k.cu")
            # ends with the file name a `pattern` asks about.
            tail = _path_tail(value)
            return self.pattern is not None and tail is not None and bool(self.pattern.search(tail))
        if (
            self.values is not None
            and value.value in self.values
            and type(value.value) in {type(v) for v in self.values}
        ):
            return True
        return self.pattern is not None and isinstance(value.value, str) and bool(self.pattern.search(value.value))

    def matches(self, call: ast.Call) -> Optional[ast.AST]:
        """The node to report (the argument, or the call for `missing`), or None."""
        values = self.candidates(call)
        if self.missing:
            if (
                not values
                and not any(isinstance(a, ast.Starred) for a in call.args)
                and not any(k.arg is None for k in call.keywords)
            ):
                return call
            return None
        for value in values:
            if self.present:
                if not (isinstance(value, ast.Constant) and value.value in (None, False)):
                    return value
            elif isinstance(value, (ast.List, ast.Tuple, ast.Set)):
                if any(self._const(e) for e in value.elts):
                    return value
            elif self._const(value):
                return value
        return None


class CallMatcher(Matcher):
    """A call to one of `names`, optionally only when an `argument` holds one of `values`."""

    kind = "call"
    node_types = (ast.Call,)
    allowed_keys = frozenset({"names", "argument", "min_args", "max_args"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.names = NameSet(_str_list(params, "names"))
        self.min_args = _int(params, "min_args")
        self.max_args = _int(params, "max_args")
        self.argument = ArgumentSpec(params["argument"]) if params.get("argument") is not None else None

    def own_tokens(self) -> List[str]:
        return self.names.tokens()

    def own_clauses(self) -> Tuple[Clause, ...]:
        return (self.names.clause(),)

    def match(self, node: ast.Call, parent, ctx, imports) -> Iterator[Hit]:
        name = imports.resolved(node.func)
        if name not in self.names:
            return
        nargs = len(node.args) + len(node.keywords)
        if self.min_args is not None and nargs < self.min_args:
            return
        if self.max_args is not None and nargs > self.max_args:
            return
        if self.argument is None:
            yield node, Label(name, symbol_role(name), name)
            return
        hit = self.argument.matches(node)
        if hit is not None:
            yield hit, Label(name, symbol_role(name) if hit is node else value_role(node, name, hit), name)


# Queries of a dtype's limits: `torch.finfo(torch.float64).eps` is a Python number.
_DTYPE_QUERY = frozenset({"torch.finfo", "torch.iinfo"})


class ReferenceMatcher(Matcher):
    """Any use of one of `names` (call, attribute read or write, decorator, base class). A bare name that
    is assigned (`except ImportError: xm = None`) is a new binding, not a use, and so is an attribute
    replaced by another backend's object (`torch.cuda.Stream = torch.xpu.Stream`, a backend shim)."""

    kind = "reference"
    node_types = (ast.Attribute, ast.Name)
    allowed_keys = frozenset(
        {
            "names", "context", "in_compare", "in-tables", "not-beside", "bare-calls", "off-switches",
            "redundant-beside", "none-tests", "argument-of", "cuda-picked-arguments", "dict-keys",
        }
    )

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.names = NameSet(_str_list(params, "names"))
        # `off-switches`: `torch.backends.cuda.enable_cudnn_sdp(False)` turns off a kernel only CUDA has, which
        # pins nothing: such a call with a literal `False` is declined.
        self.off_switches = frozenset(_str_list(params, "off-switches", required=False) or ())
        self.context = params.get("context", "any")
        if self.context not in ("any", "load", "store"):
            raise MatcherError("'context' must be 'any', 'load' or 'store'")
        # `in_compare = false`: `x.dtype == torch.float64`, `dtype in [torch.float32, torch.float64]` and
        # `isinstance(m, nn.DataParallel)` test a value, `{torch.float64: "f64"}` maps it and
        # `torch.finfo(torch.float64).eps` asks for its limits (a Python number); none creates one.
        self.in_compare = _bool(params, "in_compare", True)
        # `in-tables = false`: `{"float64": torch.float64, ...}`, `(torch.float32, torch.float64)`: an entry of
        # a literal that names another torch object is a table or an allow-list of names, not a use.
        self.in_tables = _bool(params, "in-tables", True)
        # `dict-keys = false`: `{SDPBackend.MATH: {"enable_math": True, ...}}` (ml-mcf's `backend_map`): a key of a
        # dict display labels an entry, it sets nothing; what the entry's value does is reported where it is used.
        self.dict_keys = _bool(params, "dict-keys", True)
        # `not-beside`: `[SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]` keeps the portable math backend.
        beside = _str_list(params, "not-beside", required=False)
        self.not_beside = NameSet(beside) if beside else None
        # `bare-calls = false`: `with torch.backends.cuda.sdp_kernel():` passes nothing, so it pins nothing:
        # such a call is declined (no finding, and none of a catch-all rule).
        self.bare_calls = _bool(params, "bare-calls", True)
        # `redundant-beside`: `torch.cuda.manual_seed_all(seed)` in a function that also calls
        # `torch.manual_seed(...)`, which seeds every device: the CUDA call adds nothing elsewhere (one level lower).
        self.redundant_beside = frozenset(_str_list(params, "redundant-beside", required=False) or ())
        # `none-tests = false`: `torch.version.cuda is not None`, `if torch.version.cuda:` ask whether the build
        # has CUDA, which raises nothing: declined (a comparison with a version string is still a use)
        self.none_tests = _bool(params, "none-tests", True)
        # `argument-of`: `torch.cuda.get_device_name(torch.cuda.current_device())` asks for a CUDA device's name;
        # the index it passes is part of that question, which the outer call's rule reports: a call of one of
        # `names` passed to one of these is declined.
        outer = _str_list(params, "argument-of", required=False)
        self.argument_of = NameSet(outer) if outer else None
        # `cuda-picked-arguments = "guarded"`: `sdp_kernel(**config._asdict())` after `config = self.cuda_config if
        # is_cuda else self.cpu_config`: the call pins only where the check says CUDA, as under that check
        picked = params.get("cuda-picked-arguments", "as-is")
        if picked not in ("as-is", "guarded"):
            raise MatcherError("'cuda-picked-arguments' must be 'as-is' or 'guarded'")
        self.cuda_picked_guarded = picked == "guarded"

    def own_tokens(self) -> List[str]:
        return self.names.tokens()

    def own_clauses(self) -> Tuple[Clause, ...]:
        return (self.names.clause(),)

    def match(self, node, parent, ctx, imports) -> Iterator[Hit]:
        if not _outermost_chain(node, parent) or getattr(node, TESTED_ATTR, False):
            return  # (a value its `and` chain tested for truth first: reported at the test)
        if not self.in_compare and (
            isinstance(parent, ast.Compare)
            or (isinstance(parent, ast.Dict) and any(k is node for k in parent.keys))
            or (ctx.compared and isinstance(parent, (ast.List, ast.Tuple, ast.Set)))
            or (
                ctx.compared
                and isinstance(parent, ast.Call)
                and isinstance(parent.func, ast.Name)
                and parent.func.id in ("isinstance", "issubclass")
            )
            or (isinstance(parent, ast.Call) and node in parent.args and imports.resolved(parent.func) in _DTYPE_QUERY)
        ):
            return
        if not self.dict_keys and isinstance(parent, ast.Dict) and any(k is node for k in parent.keys):
            return
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            return  # `xm = None`, `sdp_kernel = nullcontext`: a fallback binds the name anew, using nothing
        if (not self.in_tables or self.not_beside is not None) and isinstance(
            parent, (ast.List, ast.Tuple, ast.Set, ast.Dict)
        ):
            entries = [e for e in (parent.values if isinstance(parent, ast.Dict) else parent.elts) if e is not node]
            names = [imports.resolved(e) or "" for e in entries]
            if not self.in_tables and any(n.startswith("torch.") for n in names):
                return
            if self.not_beside is not None and any(n in self.not_beside for n in names):
                return
        if _points_at_other_backend(node, parent, imports):
            return  # `torch.cuda.current_device = torch.xpu.current_device`: a shim that replaces CUDA's name
        if self.context == "load" and not isinstance(node.ctx, ast.Load):
            return
        # `context = "store"`: only a setting counts; a read of the setting (`if cudnn.benchmark:`) sets
        # nothing, and is declined (no finding, and none of a catch-all rule either)
        read = self.context == "store" and not isinstance(node.ctx, ast.Store)
        # `none-tests = false`: `torch.version.cuda is not None` asks, and is declined the same way
        read = read or (not self.none_tests and _tested_for_none(node, parent))
        # declined, so no catch-all rule reports it either
        bare = not self.bare_calls and isinstance(parent, ast.Call) and parent.func is node
        bare = bare and not (parent.args or parent.keywords)
        if self.argument_of is not None and isinstance(parent, ast.Call) and parent.func is node:
            outer = getattr(parent, ARGUMENT_OF_ATTR, None)
            bare = bare or (outer is not None and (imports.resolved(outer.func) or "") in self.argument_of)
        if self.off_switches and isinstance(parent, ast.Call) and parent.func is node:
            first = parent.args[0] if parent.args else None
            if isinstance(first, ast.Constant) and first.value is False:
                bare = bare or (imports.resolved(node) or "") in self.off_switches
        elif self.off_switches and isinstance(parent, ast.Assign) and any(t is node for t in parent.targets):
            # `torch.backends.cudnn.deterministic = False`: the default, asked for nothing
            if isinstance(parent.value, ast.Constant) and parent.value.value is False:
                bare = bare or (imports.resolved(node) or "") in self.off_switches
        elif self.off_switches and getattr(node, SET_FALSE_ATTR, False):
            # (the same in a tuple assignment: `cudnn.benchmark, cudnn.deterministic = True, False`)
            bare = bare or (imports.resolved(node) or "") in self.off_switches
        # `validate(model, amp_autocast=amp_autocast)` hands on a name bound to a CUDA callable: it is reported
        # where it is bound (the import, `amp_autocast = torch.cuda.amp.autocast`) and where it is called.
        # (A value handed on, `get_version(CUDA_HOME)`, is a use.)
        handed_on = isinstance(node, ast.Name) and (
            isinstance(parent, ast.keyword) or (isinstance(parent, ast.Call) and node is not parent.func)
        )
        for sub, name in qualified_chain(node, imports):
            if name in self.names:
                if handed_on and name.rsplit(".", 1)[-1] in ALIASED_CALLABLES:
                    return
                label = Label(name, symbol_role(name), name)
                if bare or read:
                    yield sub, label, ctx._replace(declined=True)
                elif isinstance(parent, ast.Call) and parent.func is node and getattr(parent, CLAMPED_ATTR, False):
                    yield sub, label, ctx._replace(lowered_by=CLAMPED_NOTE)
                elif (
                    self.cuda_picked_guarded
                    and not ctx.guarded
                    and isinstance(parent, ast.Call)
                    and parent.func is node
                    and arguments_picked_by_cuda_check(parent, ctx.scope, imports)
                ):
                    yield sub, label, ctx._replace(guarded=True, flag="")
                elif self.redundant_beside and (done := _called_in(ctx.scope, self.redundant_beside, imports)):
                    yield sub, label, ctx._replace(lowered_by=REDUNDANT_NOTE.format(call=done))
                else:
                    yield sub, label
                return


def _tested_for_none(node: ast.AST, parent: Optional[ast.AST]) -> bool:
    """`x is None`, `x is not None` (either side), or a truth test: `if x:`, `x and ...`, `not x`, `bool(x)`."""
    if isinstance(parent, (ast.If, ast.IfExp, ast.While)):
        return parent.test is node
    if isinstance(parent, ast.BoolOp) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
        return True
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "bool":
        return parent.args == [node]
    return parent is not None and none_operand(parent, either_side=True) is node


REDUNDANT_NOTE = "lowered one level: `{call}()` in the same function already does this for every device"


def _called_in(scope: Optional[ast.AST], names: FrozenSet[str], imports: ImportTable) -> str:
    """The first of `names` that `scope` (a function, or the module) calls, outside nested functions; ""
    for none."""
    if scope is None:
        return ""
    stack = list(children(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call):
            name = imports.resolve(node.func)
            if name in names:
                return name
        stack.extend(children(node))
    return ""


def _points_at_other_backend(node: ast.AST, parent: Optional[ast.AST], imports: ImportTable) -> bool:
    """`torch.cuda.Stream = torch.xpu.Stream`, `torch.cuda.synchronize = lambda *a: None`: the assignment
    target is replaced by another backend's object (or a stand-in function), so CUDA's is not used."""
    if not isinstance(parent, ast.Assign) or not any(t is node for t in parent.targets):
        return False
    value = parent.value
    if isinstance(value, ast.Lambda):
        return True
    return isinstance(value, (ast.Attribute, ast.Name)) and in_other_backend(imports.resolved(value) or "")


class ImportMatcher(Matcher):
    """An import of one of `modules` (or a submodule), or of any module whose dotted name matches `pattern`."""

    kind = "import"
    node_types = (ast.Import, ast.ImportFrom)
    allowed_keys = frozenset({"modules", "pattern", "names_not", "bare", "imports_anywhere"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.modules = tuple(_str_list(params, "modules", required="pattern" not in params))
        # `bare = false`: `import torch.cuda` (no alias) is not reported: it binds `torch`, so every use
        # spells the module's full name and the rule reports it where it is used.
        self.bare = _bool(params, "bare", True)
        # `from m import a, b` where every name is one of these is not reported: other rules report
        # each use of those names, and the import goes when its uses are fixed.
        self.names_not = frozenset(_str_list(params, "names_not", required=False))
        # `imports_anywhere = true`: the package imports on any machine (pynvml talks to NVML only when called),
        # so an import nothing in the module uses is no lock-in, as an unused API import is not
        self.imports_anywhere = _bool(params, "imports_anywhere", False)
        self._prefixes = tuple(m + "." for m in self.modules)
        pattern = params.get("pattern")
        try:
            self.pattern: Optional[re.Pattern] = re.compile(pattern) if isinstance(pattern, str) else None
        except re.error as exc:
            raise MatcherError(f"'pattern' is not a valid regular expression: {exc}") from None
        if pattern is not None and self.pattern is None:
            raise MatcherError("'pattern' must be a regular expression")

    def own_tokens(self) -> List[str]:
        # An import statement spells `import m`, `from m` or `, m` (PEP 8 spacing); searching for those
        # rather than the bare name keeps files that only mention the name (`_supports_flash_attn`) out.
        out = []
        for module in self.modules:
            out += [f"import {module}", f"from {module}", f", {module}"]
            if "." in module:
                # `from numba import cuda` spells every segment: a rare one, else the `from` form.
                rare = [s for s in module.split(".") if _RARE.search(s)]
                out.append(max(rare, key=len) if rare else f"from {module.rsplit('.', 1)[0]} import")
        if self.pattern is not None:
            literals = required_literals(self.pattern.pattern)
            if not literals:
                return []  # no necessary string: every file is a candidate (give `tokens`)
            out += literals
        return out

    def _hit(self, module: str) -> bool:
        if module in self.modules or (self._prefixes and module.startswith(self._prefixes)):
            return True
        return self.pattern is not None and bool(self.pattern.search(module))

    def match(self, node, parent, ctx, imports) -> Iterator[Hit]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if self._hit(alias.name) and (self.bare or alias.asname is not None):
                    yield node, alias.name
                    return
        elif not node.level and node.module:
            if self._hit(node.module):
                if self.names_not and all(alias.name in self.names_not for alias in node.names):
                    return
                yield node, node.module
            else:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if self._hit(full):
                        yield node, full
                        return


def _handles_method(fn: ast.AST, method: str) -> bool:
    """A function registered as the handler of a tensor method (torchao's NF4Tensor:
    `@implements_torch_function(torch.Tensor.cuda)` over `def function_cuda(*args, **kwargs)`)."""
    for deco in getattr(fn, "decorator_list", []):
        if not isinstance(deco, ast.Call):
            continue
        for arg in deco.args:
            for item in arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]:
                name = dotted(item) or ""
                if name.endswith(("Tensor." + method, "aten." + method)):
                    return True
    return False


# `elem.untyped_storage()._new_shared(numel)` (a collate function's batch buffer, as PyTorch's own
# `default_collate` makes it): a storage in shared host memory, for worker processes
_SHARED_MEMORY = frozenset({"_new_shared", "share_memory_", "is_shared"})


OWN_METHOD_ATTR = "_portcheck_own_method"  # on `self.to_sparse()` where the class defines `to_sparse`


def mark_own_method_calls(module: ast.Module, names: FrozenSet[str]) -> None:
    """Mark (OWN_METHOD_ATTR) the calls `self.name(...)` inside a class that defines a method `name` among
    `names` (botorch's `SparseOutlierNoise.to_sparse()`, which slices a dense parameter): the class's own
    method, not the tensor method a rule means. So is an attribute the class sets to an object it builds
    (`self.stft = ConvSTFT(...)`, DeepComplexCRN's real convolution STFT; not a `partial` of a function)."""
    classes = [n for n in module.body if isinstance(n, ast.ClassDef)]  # and the classes defined in them
    while classes:
        cls = classes.pop()
        classes.extend(n for n in cls.body if isinstance(n, ast.ClassDef))
        own = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))} & names
        own |= {
            target.attr
            for node in walk(cls)
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and (dotted(node.value.func) or "").rsplit(".", 1)[-1] != "partial"
            for target in node.targets
            if isinstance(target, ast.Attribute)
            and target.attr in names
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        }
        if not own:
            continue
        for node in walk(cls):
            if self_call(node) in own:
                setattr(node, OWN_METHOD_ATTR, True)


# Names that stand for a library by convention, whatever the import table holds.
_MODULE_ALIASES = frozenset({"np", "numpy", "jnp", "pd", "cv2", "scipy", "math", "tf"})


class MethodMatcher(Matcher):
    """A method call `<expr>.name(...)` on a value that is not an imported module."""

    kind = "method"
    node_types = (ast.Call,)
    allowed_keys = frozenset(
        {"names", "min_args", "max_args", "receiver_not", "argument", "unless_available", "handed-on", "string-args"}
    )

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.names = frozenset(_str_list(params, "names"))
        # `string-args = false`: not with a string first argument, which no tensor method of these names takes
        # (HF datasets' `ds.unique("joined_identifier")`, a column's distinct values)
        self.string_args = _bool(params, "string-args", True)
        # `handed-on = false`: not where the result goes straight into a call or a collection
        # (`cudaHostRegister(s.data_ptr(), ...)`, `int(im.data_ptr())`, `{a.storage(), b.storage()}`): a
        # pointer handed to native code or a storage shared with worker processes, no logic built on it
        self.handed_on = _bool(params, "handed-on", True)
        # `x.pin_memory() if torch.accelerator.is_available() else x`: the call runs only where an
        # accelerator is, so it is not reported.
        self.unless_available = _bool(params, "unless_available", False)
        self.min_args = _int(params, "min_args")
        self.max_args = _int(params, "max_args")
        self.receiver_not = frozenset(_str_list(params, "receiver_not", required=False))
        self.argument = ArgumentSpec(params["argument"]) if params.get("argument") is not None else None

    def own_tokens(self) -> List[str]:
        return sorted(self.names)

    def own_clauses(self) -> Tuple[Clause, ...]:
        return (tuple((Attr(n),) for n in sorted(self.names)),)

    def match(self, node: ast.Call, parent, ctx, imports) -> Iterator[Hit]:
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in self.names:
            return
        if isinstance(parent, ast.Attribute) and parent.attr in self.names:
            return  # `x.cpu().numpy()`: one finding, on the outermost call of the chain
        if isinstance(ctx.scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
            ctx.scope.name == func.attr or _handles_method(ctx.scope, func.attr)
        ):
            # `def cuda(self): ... v.cuda()`: a container's own `.cuda()` passed on to its parts (or a tensor
            # subclass's handler of it, `@implements_torch_function(torch.Tensor.cuda)`); its callers are the
            # lock-in, reported where they call it
            return
        if imports.resolved(func.value) is not None:
            return  # `torch.cuda.foo()` is an API call, not a method on a tensor
        if isinstance(func.value, ast.Name) and func.value.id in _MODULE_ALIASES:
            # `np.argwhere(...)` where `np` comes in through `from .utils import *` (TotalSelfScan's renderer): a
            # library's function under its usual name, not a tensor's method
            return
        if is_pandas_value(func.value, imports):
            # `cell_detection_df.type.unique()` in a module that imports pandas (LKCell): a DataFrame's column
            return
        if isinstance(func.value, ast.Constant) or getattr(node, OWN_METHOD_ATTR, False):
            return  # `"a,b".split()`: a method of a literal; `self.to_sparse()`: the class's own method
        if func.attr == "numpy" and numpy_of_host_tensor(node):
            return  # `lengths.long().numpy()`: no host copy in the chain, so a tensor already on the host
        if not self.handed_on and (
            isinstance(parent, (ast.keyword, ast.Set, ast.List, ast.Tuple))
            or (isinstance(parent, ast.Call) and parent.func is not node)
            or (isinstance(parent, ast.Attribute) and parent.attr in _SHARED_MEMORY)
        ):
            return
        if (
            self.unless_available
            and isinstance(parent, ast.IfExp)
            and parent.body is node
            and isinstance(parent.test, ast.Call)
            and imports.resolved(parent.test.func) in AVAILABILITY_CALLS
        ):
            return
        receiver = dotted(func.value)
        if receiver is not None and receiver.rsplit(".", 1)[-1] in self.receiver_not:
            return
        first = node.args[0] if node.args else None
        if not self.string_args and (
            isinstance(first, ast.JoinedStr) or (isinstance(first, ast.Constant) and isinstance(first.value, str))
        ):
            return
        nargs = len(node.args) + len(node.keywords)
        if self.min_args is not None and nargs < self.min_args:
            return
        if self.max_args is not None and nargs > self.max_args:
            return
        role = device_argument_role(call_argument(node, "device", 0))
        if self.argument is not None:
            hit = self.argument.matches(node)
            if hit is not None:
                yield hit, Label(func.attr, role)
            return
        yield token_span(node, func), Label(func.attr, role)


class Span:
    """A position to report that is not a node's own: the finding points at a token inside `node`."""

    __slots__ = ("lineno", "col_offset", "end_lineno", "end_col_offset")

    def __init__(self, lineno: int, col_offset: int, end_lineno: int, end_col_offset: int) -> None:
        self.lineno, self.col_offset, self.end_lineno, self.end_col_offset = (
            lineno,
            col_offset,
            end_lineno,
            end_col_offset,
        )


def token_span(call: ast.Call, func: ast.Attribute) -> Union[ast.Call, Span]:
    """A method call that spans several lines (`Model(\n...\n).cuda()`) is reported from its method
    name to its end, on the line where the name is; a one-line call keeps its own span."""
    end_line, end_col = getattr(func, "end_lineno", None), func.end_col_offset
    if end_line is None or end_line == call.lineno or end_col is None:
        return call
    if call.end_lineno is None or call.end_col_offset is None:  # ast.parse always sets both
        return call
    return Span(end_line, end_col - len(func.attr), call.end_lineno, call.end_col_offset)


class AttributeMatcher(Matcher):
    """Reading attribute `name` on any value that is not an imported module (`x.is_cuda`)."""

    kind = "attribute"
    node_types = (ast.Attribute,)
    allowed_keys = frozenset({"names"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.names = frozenset(_str_list(params, "names"))

    def own_tokens(self) -> List[str]:
        return sorted(self.names)

    def own_clauses(self) -> Tuple[Clause, ...]:
        return (tuple((Attr(n),) for n in sorted(self.names)),)

    def match(self, node: ast.Attribute, parent, ctx, imports) -> Iterator[Hit]:
        if node.attr not in self.names or not isinstance(node.ctx, ast.Load):
            return
        if imports.resolved(node.value) is not None:
            return
        if isinstance(ctx.scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and ctx.scope.name == node.attr:
            # `@property def is_cuda(self): return self._tensor.is_cuda` (CrypTen's wrappers): a wrapper's own
            # attribute passed on from what it wraps; its readers are the ones that decide on it
            return
        if isinstance(parent, ast.FormattedValue) or (
            isinstance(parent, ast.Call) and node in parent.args and is_message_call(parent)
        ):
            # `print(f"Model on GPU? {p.is_cuda}")` (pytext's workflow): the answer is only shown
            yield node, node.attr, ctx._replace(shown=True)
            return
        yield node, node.attr


def _searched_text(node: ast.AST, parent: Optional[ast.AST]) -> bool:
    """`spec.replace("cuda:", "")`, `name.startswith("cuda:")`: the literal is searched for in a string the
    program parses (a user's device spec), not a device it picks. The replacement of `replace` is used."""
    return getattr(node, SEARCHED_ATTR, False) or (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and parent.func.attr in SEARCHING_METHODS
        and bool(parent.args)
        and parent.args[0] is node
    )


class StringMatcher(Matcher):
    """A string literal in code (not a docstring or a message) that matches `pattern`."""

    kind = "string"
    node_types = (ast.Constant,)
    allowed_keys = frozenset({"pattern", "not_in_calls", "not-set-to", "remapped"})
    messages_default = False

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        pattern = params.get("pattern")
        if not isinstance(pattern, str):
            raise MatcherError("missing key 'pattern'")
        try:
            self.pattern = re.compile(pattern)
        except re.error as exc:
            raise MatcherError(f"'pattern' is not a valid regular expression: {exc}") from None
        # `not_in_calls`: arguments of these calls are lookups, not uses (`shutil.which("nvidia-smi")`).
        self.not_in_calls = frozenset(_str_list(params, "not_in_calls", required=False))
        # `not-set-to`: a key set to a literal value this matches is lowered one level (`CUDA_VISIBLE_DEVICES`
        # set to "" hides every GPU to run on the CPU, which changes nothing elsewhere): as `env[key] = value`,
        # `{key: value}`, `setenv(key, value)`, or `KEY=value` in the string itself.
        not_set_to = params.get("not-set-to")
        if not_set_to is not None and not isinstance(not_set_to, str):
            raise MatcherError("'not-set-to' must be a regular expression")
        try:
            self.not_set_to = re.compile(not_set_to) if not_set_to is not None else None
        except re.error as exc:
            raise MatcherError(f"'not-set-to' is not a valid regular expression: {exc}") from None
        # `remapped = false`: a key that a literal dict maps to a string this does not match
        # (`map_location={"cuda:0": "cpu"}`) names where saved tensors came from, to move them away from it.
        self.remapped = _bool(params, "remapped", True)

    def own_tokens(self) -> List[str]:
        return required_literals(self.pattern.pattern)

    def match(self, node: ast.Constant, parent, ctx, imports) -> Iterator[Hit]:
        if isinstance(node.value, str) and self.pattern.search(node.value):
            if (
                self.not_in_calls
                and isinstance(parent, ast.Call)
                and imports.resolved(parent.func) in self.not_in_calls
            ):
                return
            if _searched_text(node, parent):
                return
            if not self.remapped and self._remapped_away(node, parent):
                return
            if self.not_set_to is not None and self._set_to_unused(node, parent, ctx):
                yield node, Label(node.value, "", node.value), ctx._replace(lowered_by=SET_TO_NOTE)
                return
            yield node, Label(node.value, "", node.value)

    def _remapped_away(self, node: ast.Constant, parent) -> bool:
        if not isinstance(parent, ast.Dict) or node not in parent.keys:
            return False
        value = parent.values[parent.keys.index(node)]
        return (
            isinstance(value, ast.Constant)
            and isinstance(value.value, str)
            and self.pattern.search(value.value) is None
        )

    def _set_to_unused(self, node: ast.Constant, parent, ctx) -> bool:
        assert self.not_set_to is not None
        value: Optional[ast.AST] = None
        if isinstance(parent, ast.Subscript) and parent.slice is node:
            value = ctx.assigned
        elif isinstance(parent, ast.Dict):
            keys = list(parent.keys)
            if node in keys:
                value = parent.values[keys.index(node)]
        elif (
            isinstance(parent, ast.Call)
            and isinstance(parent.func, ast.Attribute)
            and parent.func.attr in _SETTERS
            and len(parent.args) == 2
            and parent.args[0] is node
        ):
            value = parent.args[1]
        if isinstance(value, ast.Constant) and type(value.value) in (str, int):
            return bool(self.not_set_to.fullmatch(str(value.value)))
        text = str(node.value)
        found = self.pattern.search(text)
        if found is None or value is not None:
            return False
        # `"CUDA_VISIBLE_DEVICES= python test.py"`: the assignment written in the string
        rest = text[found.end() :]
        if not rest.startswith("="):
            return False
        word = re.match(r"""=(?:"([^"]*)"|'([^']*)'|(\S*))""", rest)
        assert word is not None
        if word.end() == len(rest) and isinstance(parent, ast.JoinedStr):
            return False  # `f"CUDA_VISIBLE_DEVICES={gpu} ..."`: the value is what follows
        literal = next(g for g in word.groups() if g is not None)
        return bool(self.not_set_to.fullmatch(literal))


SET_TO_NOTE = (
    "lowered one level: the value it is set to only turns the CUDA setting off, which changes nothing on other targets"
)
# Calls that set a key to a value: `os.environ.setdefault(k, v)`, `monkeypatch.setenv(k, v)`, `os.putenv(k, v)`.
_SETTERS = frozenset({"setdefault", "setenv", "putenv", "__setitem__"})


def required_literals(pattern: str) -> List[str]:
    """The longest literal run any match of `pattern` must contain, or [] when there is none."""
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]  # private, so not in typeshed
    except ImportError:  # Python < 3.11
        import sre_parse
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

