"""One transform per autofix kind (the `kind` of a rule's `autofix.<target>` table).

A recipe looks at the node a finding points at and returns the edits to make (`Fix`) or why it will
not guess (`Skip`). Edits are built later from the already-rewritten children, so fixes nested in
one another compose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Type, TypeVar, Union

import libcst as cst

from portcheck import torchfacts as facts
from portcheck.fixer.device import Spelling
from portcheck.fixer.guards import Marker, counted_loop, generic_work, markers, protected
from portcheck.fixer.names import Binding, Bindings
from portcheck.fixer.syntax import (
    argument,
    code_of,
    fstring_like,
    keyword_arg,
    kwarg,
    parse_expr,
    positional_args,
    quote_like,
    string_value,
    walk,
    with_args,
    without_arg,
)
from portcheck.torchfacts import (
    AVAILABILITY_CALLS,
    CUDA_DEVICE,
    CUDA_TENSOR_TYPES,
    GUARD_FALLBACK,
    NO_ARGUMENTS,
    NO_FALLBACK,
    POSITIONAL_ONLY,
    argument_role,
    symbol_role,
)

# The updated node a build receives has the type of the plan's original node, which varies by plan;
# a build may also remove its node or turn one statement into several (libcst's sentinels).
Build = Callable[[Any], Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel[Any]]]
_Node = TypeVar("_Node", bound=cst.CSTNode)


@dataclass(frozen=True)
class Plan:
    """Rewrite `node` (a node of the original tree) with `build(updated node)`."""

    node: cst.CSTNode
    build: Build
    key: str  # two plans with the same node and key are the same edit


@dataclass(frozen=True)
class Fix:
    plans: Tuple[Plan, ...]
    written: Tuple[str, ...] = ()  # code the fix writes: decides imports, torch version, device variable
    imports: Tuple[str, ...] = ()  # modules to import that the written code does not name
    removals: Tuple[Binding, ...] = ()  # imports the fix may leave unused
    # CUDA-bound code the fix is only right together with: each must be rewritten by a fix applied
    # in the same run (the engine checks, and drops this fix otherwise). See `guards`.
    needs: Tuple[Marker, ...] = ()


@dataclass(frozen=True)
class Skip:
    reason: str


Outcome = Union[Fix, Skip]


@dataclass(frozen=True)
class Site:
    """What a recipe may look at: the nodes at the finding's range and their surroundings."""

    nodes: Tuple[cst.CSTNode, ...]  # innermost first
    params: Mapping[str, Any]
    spelling: Spelling
    parents: Mapping[int, cst.CSTNode]
    names: Bindings
    target: str
    path: str = "<string>"
    # What the matcher recognised at this position (`Finding.role`, `Finding.symbol`): a recipe branches
    # on these and never decides again what the finding's own code is.
    role: str = ""
    symbol: str = ""

    def own(self, node: cst.CSTNode) -> bool:
        """Whether `node` is the finding's own code: one of the nodes at its position, or their callee."""
        for mine in self.nodes:
            call = self.call_of(mine)
            if node is mine or (call is not None and call.func is node):
                return True
        return False

    def spelled(self, ref: cst.CSTNode) -> bool:
        """Whether `ref` (the finding's callee or reference, or the call it is passed to) spells the
        matcher's symbol with an imported name, rather than through a local alias (`amp_autocast =
        torch.cuda.amp.autocast`): a rewrite of the spelling (and of its import) is sound only then."""
        return self.names.binding_of(ref) is not None

    def context_name(self, node: cst.CSTNode) -> Optional[str]:
        """The qualified name of code around the finding (a guard's test, the call a value is passed to,
        a statement beside it), for rewriting and safety checks. The finding's own code is named by
        `symbol` and described by `role`; asking here for it is an error."""
        if self.own(node):
            raise ValueError(f"`{code_of(node)}` is the finding's own code: use Site.role and Site.symbol")
        return self.names.resolve(node)

    def pick(self, *types: Type[_Node]) -> Optional[_Node]:
        for node in self.nodes:
            if isinstance(node, types):
                return node
        return None

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self.parents.get(id(node))

    def call_of(self, node: cst.CSTNode) -> Optional[cst.Call]:
        """The call whose callee is `node` (`torch.cuda.synchronize` -> `torch.cuda.synchronize()`)."""
        if isinstance(node, cst.Call):
            return node
        parent = self.parent(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            return parent
        return None


_CUDA = CUDA_DEVICE
_CUDA_PREFIX = re.compile(r"^cuda(?=:|$)")
STRING = "string"
OBJECT = "object"
COLLAPSE = "collapse"
LOCATION = "location"  # a torch.load map_location


def _replace(node: cst.CSTNode, code: str, key: str) -> Plan:
    return Plan(node, lambda updated: parse_expr(code).with_changes(lpar=updated.lpar, rpar=updated.rpar), key)


def _fix(
    *plans: Plan,
    written: Sequence[str] = (),
    imports: Sequence[str] = (),
    removals: Sequence[Optional[Binding]] = (),
    needs: Sequence[Marker] = (),
) -> Fix:
    return Fix(tuple(plans), tuple(written), tuple(imports), tuple(r for r in removals if r is not None), tuple(needs))


# -- where a device value goes ------------------------------------------------------------------


@dataclass(frozen=True)
class Holder:
    # STRING (keep a str), OBJECT (a torch.device is fine), COLLAPSE (the whole torch.device call),
    # LOCATION (a torch.load map_location)
    kind: str
    call: Optional[cst.Call] = None
    arg: Optional[cst.Arg] = None


# How a value is written for each role of the place it goes (`torchfacts.argument_role`).
_KIND_OF_ROLE = {facts.MAP_LOCATION: LOCATION, facts.DEVICE_TYPE: STRING, facts.STRING: STRING}


def holder_of(site: Site, node: cst.CSTNode) -> Holder:
    """How the value of `node` is used. A string that was stored or passed on as a string stays one.
    For the finding's own code the matcher said where it goes (`site.role`); for a value around it
    (a variable's reads, a ternary the finding is the test of) the same `torchfacts.argument_role`
    says it from the call it is passed to."""
    child, parent = node, site.parent(node)
    while isinstance(parent, (cst.IfExp, cst.BooleanOperation)) and getattr(parent, "test", None) is not child:
        child, parent = parent, site.parent(parent)
    if not isinstance(parent, cst.Arg):
        return Holder(STRING)
    call = site.parent(parent)
    if not isinstance(call, cst.Call):
        return Holder(STRING)
    keyword = parent.keyword.value if parent.keyword else None
    role = site.role if site.own(node) else _context_role(site, call, parent)
    if role == facts.DEVICE_CALL:
        # `torch.device("cuda")` as a whole is the device; `torch.device("cuda", 0)` keeps its string.
        whole = len(call.args) == 1 and parent.value is node and keyword in (None, "type")
        return Holder(COLLAPSE if whole else STRING, call, parent)
    return Holder(_KIND_OF_ROLE.get(role, OBJECT), call, parent)


def _context_role(site: Site, call: cst.Call, arg: cst.Arg) -> str:
    """Where a value around the finding goes, passed to `call` as `arg`."""
    keyword = arg.keyword.value if arg.keyword else None
    position = next((i for i, a in enumerate(positional_args(call)) if a is arg), None) if keyword is None else None
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
    return argument_role(site.context_name(call.func) or "", method, keyword, position)


def _device_code(spelling: Spelling, index: Optional[str], kind: str) -> str:
    """Code for "cuda" (index None) or "cuda:<index>" used as an object or as a string."""
    if kind == LOCATION:
        return spelling.location()
    if kind in (OBJECT, COLLAPSE):
        return spelling.device() if index is None else spelling.indexed(index)
    if index is None:
        return spelling.device_type()
    prefix = spelling.type_prefix()
    if prefix is None:
        return spelling.device_type()
    if prefix[0] == "text":
        return f'"{prefix[1]}:{index}"'
    return f'f"{{{prefix[1]}}}:{index}"'


def _retype_literal(spelling: Spelling, literal: cst.SimpleString, rest: str) -> Optional[cst.BaseExpression]:
    """A string literal `cuda<rest>` rewritten to name the new device type; None drops it whole."""
    prefix = spelling.type_prefix()
    if prefix is None:
        return None
    if prefix[0] == "text":
        return quote_like(prefix[1] + rest, literal)
    if not rest:
        return parse_expr(prefix[1])
    return fstring_like(prefix[1], rest, literal)


def _leading_text(node: cst.CSTNode) -> str:
    """The literal text a string expression starts with ("" when it starts with code)."""
    if isinstance(node, cst.FormattedString):
        first = node.parts[0] if node.parts else None
        return first.value if isinstance(first, cst.FormattedStringText) else ""
    if isinstance(node, cst.BinaryOperation):
        return _leading_text(node.left)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return _leading_text(node.func.value)
    return string_value(node) or ""


def _device_literal(site: Site, node: cst.CSTNode) -> Outcome:
    """A plain "cuda" / "cuda:N" literal, rewritten for how its value is used."""
    sp = site.spelling
    m = _CUDA.match(string_value(node) or "")
    if not m:
        return Skip(f"not a plain CUDA device string: {code_of(node)}")
    holder = holder_of(site, node)
    if holder.kind == COLLAPSE and sp.device_is_object and holder.call is not None:
        code = _device_code(sp, m.group(1), COLLAPSE)
        return _fix(_replace(holder.call, code, "device-call"), written=[code])
    code = _device_code(sp, m.group(1), holder.kind)
    return _fix(_replace(node, code, "device-string"), written=[code])


# -- device strings -----------------------------------------------------------------------------


def device_string(site: Site) -> Outcome:
    """A CUDA device string, rewritten for how its value is used. An indexed one stored in a variable
    (`device = f"cuda:{rank}"`) falls back to plain "cpu" on a CPU-only machine: the variable may reach
    a `map_location`, where "cpu:0" raises."""
    outcome = _device_string(site)
    node = site.pick(cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.BinaryOperation, cst.Call)
    if (
        isinstance(outcome, Fix)
        and node is not None
        and len(outcome.plans) == 1
        and outcome.plans[0].node is node
        and site.spelling.style == "variable"
        and isinstance(site.parent(node), (cst.Assign, cst.AnnAssign))
        and _leading_text(node).startswith("cuda:")
        and holder_of(site, node).kind == STRING
    ):
        return _with_cpu_fallback(site, outcome)
    return outcome


def _with_cpu_fallback(site: Site, fix: Fix) -> Fix:
    """`fix`'s one plan, its string wrapped in `<string> if DEVICE.type != "cpu" else "cpu"`."""
    plan = fix.plans[0]
    build = plan.build
    test = f'{site.spelling.device_type()} != "cpu"'

    def build_choice(updated: cst.CSTNode) -> cst.CSTNode:
        typed = build(updated)
        assert isinstance(typed, cst.BaseExpression)
        return cst.IfExp(test=parse_expr(test), body=typed, orelse=cst.SimpleString('"cpu"'))

    return _fix(
        Plan(plan.node, build_choice, plan.key),
        written=[*fix.written, site.spelling.device_type()],
        imports=fix.imports,
        removals=fix.removals,
        needs=fix.needs,
    )


def _device_string(site: Site) -> Outcome:
    node = site.pick(cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.BinaryOperation, cst.Call)
    if node is None:
        return Skip("the code at this position is not a device string")
    sp = site.spelling
    holder = holder_of(site, node)
    if holder.kind == LOCATION:
        # Any CUDA location, with or without an index, loads onto the resolved device.
        if not _CUDA_PREFIX.match(_leading_text(node)):
            return Skip(f"not a CUDA map_location: {code_of(node)}")
        code = sp.location()
        # The matcher's symbol for a location is the load call it goes to.
        spelled = holder.call is not None and site.spelled(holder.call.func)
        if spelled and site.symbol.startswith("safetensors.") and sp.style == "variable":
            code = sp.device_type()  # safetensors takes the device as a string
        return _fix(_replace(node, code, "map-location"), written=[code])
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        return _device_literal(site, node)
    whole = sp.device() if holder.kind in (OBJECT, COLLAPSE) else sp.device_type()
    # Where the index is dropped (XLA), `torch.device(f"cuda:{i}")` becomes the device itself.
    collapse = holder.kind == COLLAPSE and sp.device_is_object
    whole_target = holder.call if collapse and holder.call is not None else node
    if isinstance(node, cst.FormattedString):
        first = node.parts[0] if node.parts else None
        if not isinstance(first, cst.FormattedStringText) or not _CUDA_PREFIX.match(first.value):
            return Skip("not a CUDA device f-string")
        prefix = sp.type_prefix()
        if prefix is None:
            return _fix(_replace(whole_target, whole, "device-string"), written=[whole])
        rest = first.value[len("cuda") :]
        prefix_kind, prefix_code = prefix

        def build_fstring(updated: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(updated, cst.FormattedString)
            head: List[cst.BaseFormattedStringContent]
            if prefix_kind == "text":
                head = [cst.FormattedStringText(prefix_code + rest)]
            else:
                head = [cst.FormattedStringExpression(expression=parse_expr(prefix_code))]
                if rest:
                    head.append(cst.FormattedStringText(rest))
            return updated.with_changes(parts=[*head, *updated.parts[1:]])

        return _fix(Plan(node, build_fstring, "device-string"), written=[prefix[1]] if prefix[0] == "expr" else [])
    if isinstance(node, cst.BinaryOperation):
        left = node.left
        value = string_value(left) if isinstance(left, cst.SimpleString) else None
        if value is None or not _CUDA_PREFIX.match(value) or not isinstance(node.operator, (cst.Add, cst.Modulo)):
            return Skip("not a CUDA device string expression")
        assert isinstance(left, cst.SimpleString)  # string_value gave a value
        if isinstance(node.operator, cst.Modulo) and value == "cuda":
            return Skip("not a CUDA device string expression")
        new_left = _retype_literal(sp, left, value[len("cuda") :])
        if new_left is None:
            return _fix(_replace(whole_target, whole, "device-string"), written=[whole])
        written = [sp.device_type()] if sp.style == "variable" else []
        return _fix(Plan(node, lambda updated: updated.with_changes(left=new_left), "device-string"), written=written)
    # "cuda:{}".format(rank)
    assert isinstance(node, cst.Call)  # the last of the types picked above
    func = node.func
    base = func.value if isinstance(func, cst.Attribute) and func.attr.value == "format" else None
    value = string_value(base) if isinstance(base, cst.SimpleString) else None
    if value is None or not isinstance(base, cst.SimpleString) or not _CUDA_PREFIX.match(value):
        return Skip("not a CUDA device string expression")
    rest = value[len("cuda") :]
    prefix = sp.type_prefix()
    if prefix is None:
        return _fix(_replace(whole_target, whole, "device-string"), written=[whole])
    if prefix[0] == "text":
        new_base = quote_like(prefix[1] + rest, base)

        def build_format(updated: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(updated, cst.Call) and isinstance(updated.func, cst.Attribute)
            return updated.with_changes(func=updated.func.with_changes(value=new_base))

        return _fix(Plan(node, build_format, "device-string"), written=[])
    # `"cuda:{}".format(rank)` -> `"{}:{}".format(DEVICE.type, rank)`: the type becomes the first
    # field, so only automatically numbered fields (`{}`) can shift along.
    if re.search(r"\{(?!\{)[^}]", rest) or any(a.keyword is not None or a.star for a in node.args):
        return Skip("the device string template uses numbered or named fields")
    type_base = quote_like("{}" + rest, base)
    type_code = prefix[1]

    def build_typed_format(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Call) and isinstance(updated.func, cst.Attribute)
        changed = updated.with_changes(func=updated.func.with_changes(value=type_base))
        return with_args(changed, [cst.Arg(parse_expr(type_code)), *updated.args])

    return _fix(Plan(node, build_typed_format, "device-string"), written=[type_code])


# -- a CUDA device string held in a variable ------------------------------------------------------


def _whole_string(site: Site, node: cst.CSTNode) -> cst.CSTNode:
    """The string expression a reported literal is part of: `"cuda:" + str(i)`, `"cuda:%d" % i`,
    `"cuda:{}".format(i)`, or the literal itself."""
    parent = site.parent(node)
    if isinstance(parent, cst.BinaryOperation) and parent.left is node:
        return parent
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "format":
        call = site.parent(parent)
        if isinstance(call, cst.Call) and call.func is parent:
            return call
    return node


def _scope_of(site: Site, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    parent = site.parent(node)
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
        parent = site.parent(parent)
    return parent


def _device_use(site: Site, name: cst.Name) -> Optional[str]:
    """How a read of the variable is used: "location" (a torch.load map_location), "device" (a
    `device=`, `.to(...)` or `torch.device(...)` argument), None anywhere else."""
    arg = site.parent(name)
    if not isinstance(arg, cst.Arg) or arg.value is not name or arg.star:
        return None
    call = site.parent(arg)
    if not isinstance(call, cst.Call):
        return None
    holder = holder_of(site, name)
    keyword = arg.keyword.value if arg.keyword else None
    if holder.kind == LOCATION:
        return "location"
    if keyword == "device":
        return "device"
    positional = positional_args(call)
    first = positional[:1] == [arg]
    if first and isinstance(call.func, cst.Attribute) and call.func.attr.value == "to":
        return "device"
    if first and (site.context_name(call.func) or "") == "torch.device":
        return "device"
    return None


def device_variable(site: Site) -> Outcome:
    """`loc = f"cuda:{rank}"` (or `"cuda:" + str(i)`, `"cuda:{}".format(i)`, `"cuda:0"`) whose every read
    is a device (`map_location=loc`, `device=loc`, `.to(loc)`, `torch.device(loc)`) becomes
    `f"{DEVICE.type}:{rank}" if DEVICE.type != "cpu" else "cpu"`: the same string on CUDA, the index on
    any other accelerator, and plain "cpu" on a CPU-only machine, where `map_location="cpu:0"` raises."""
    sp = site.spelling
    node = site.pick(cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
    if node is None:
        return Skip("the code at this position is not a device string")
    if sp.style != "variable":
        return Skip("a device string in a variable is rewritten for the resolved device only")
    expr = _whole_string(site, node)
    assign = site.parent(expr)
    target: Optional[cst.BaseExpression] = None
    if isinstance(assign, cst.Assign) and assign.value is expr and len(assign.targets) == 1:
        target = assign.targets[0].target
    elif isinstance(assign, cst.AnnAssign) and assign.value is expr:
        target = assign.target
    if not isinstance(target, cst.Name) or assign is None:
        return Skip(f"`{code_of(expr)}` is not assigned to a plain variable: where it goes is a person's call")
    scope = _scope_of(site, assign)
    if scope is None:
        return Skip("cannot tell where the variable is used")
    if isinstance(scope, cst.Module):
        return Skip(f"`{target.value}` is a module-level variable: its uses elsewhere in the module are not checked")
    uses: List[str] = []
    for other in walk(scope):
        if isinstance(other, cst.Name) and other.value == target.value and other is not target:
            parent = site.parent(other)
            if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) or (
                isinstance(parent, cst.Param) and parent.name is other
            ):
                return Skip(f"`{target.value}` is assigned more than once")
            use = _device_use(site, other)
            if use is None:
                return Skip(f"`{target.value}` is also used where its value is read as a string")
            uses.append(use)
    if not uses:
        return Skip(f"`{target.value}` is not used as a device in this scope")
    # The string is assigned to a plain variable (checked above): it stays a string.
    inner = _device_string(replace(site, nodes=(expr,), role=facts.STRING, symbol=""))
    if isinstance(inner, Skip) or len(inner.plans) != 1 or inner.plans[0].node is not expr:
        return inner if isinstance(inner, Skip) else Skip(f"cannot rewrite `{code_of(expr)}`")
    return _with_cpu_fallback(site, inner)


# -- .cuda() --------------------------------------------------------------------------------------


def _index_code(site: Site, value: cst.BaseExpression) -> Union[str, Skip]:
    """Code for the device a `.cuda(<value>)`-style argument names; the matcher said what it is."""
    sp = site.spelling
    if site.role == facts.DEFAULT_DEVICE:
        return sp.device()
    if site.role == facts.INDEX and isinstance(value, cst.Integer):
        return sp.indexed(value.value)
    if site.role in (facts.INDEX, facts.RANK):
        return sp.indexed(code_of(value))
    if site.role == facts.DEVICE_VALUE:
        return code_of(value)
    return Skip(f"cannot tell whether `{code_of(value)}` is a device index or a device")


_CUDA_METHOD_KEYWORDS = frozenset({"device", "non_blocking", "memory_format"})

# Tensor methods that change a tensor in place and that no nn.Module has.
_TENSOR_IN_PLACE = frozenset(
    {
        "copy_", "fill_", "zero_", "add_", "sub_", "mul_", "div_", "clamp_", "masked_fill_", "index_copy_",
        "index_fill_", "index_add_", "index_put_", "scatter_", "scatter_add_", "uniform_", "normal_", "set_",
    }
)  # fmt: skip
_in_place_cache: List[Tuple[cst.CSTNode, frozenset]] = []  # (module, its bases changed in place): the last one


def _changed_in_place(site: Site, receiver: cst.BaseExpression) -> bool:
    """Whether the module changes `receiver`, or an element of it, in place with a tensor method.

    `x.cuda()` on a CPU tensor is always a new tensor; `x.to(device)` is `x` itself when the device is the
    CPU. Where the code later writes into `x` (`x[i].copy_(...)`), the "copy" it handed to autograd or kept
    changes with it on a CPU-only machine, which CUDA never saw.
    """
    if not isinstance(receiver, (cst.Name, cst.Attribute)):
        return False
    root: cst.CSTNode = receiver
    while site.parent(root) is not None:
        root = site.parent(root)  # type: ignore[assignment]
    if not _in_place_cache or _in_place_cache[0][0] is not root:
        bases = set()

        class Visitor(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in _TENSOR_IN_PLACE:
                    base = func.value
                    while isinstance(base, cst.Subscript):
                        base = base.value
                    if isinstance(base, (cst.Name, cst.Attribute)):
                        bases.add(code_of(base))

        root.visit(Visitor())
        _in_place_cache[:] = [(root, frozenset(bases))]
    return code_of(receiver) in _in_place_cache[0][1]


def _copy_argument(site: Site) -> Optional[str]:
    """`copy=` for a `.to(...)` that must not alias its receiver on the CPU, as `.cuda()` never did."""
    kind = site.spelling.device_type()
    if kind.startswith('"'):  # a literal device type: decided here
        return "True" if kind == '"cpu"' else None
    return f'{kind} == "cpu"'


def dot_cuda(site: Site) -> Outcome:
    node = site.pick(cst.Call)
    if node is None or not isinstance(node.func, cst.Attribute) or node.func.attr.value != "cuda":
        return Skip("the code at this position is not a `.cuda()` call")
    # Tensor.cuda(device=None, non_blocking=False, memory_format=...) and Module.cuda(device=None):
    # any other call shape is some other object's `cuda` method.
    keywords = [a.keyword.value for a in node.args if a.keyword is not None]
    positional = positional_args(node)
    if (
        any(a.star for a in node.args)
        or len(positional) > 1
        or (positional and "device" in keywords)
        or not set(keywords) <= _CUDA_METHOD_KEYWORDS
    ):
        return Skip(f"`{code_of(node.func)}(...)` is not called like Tensor.cuda or Module.cuda")
    given = argument(node, "device", 0)
    if given is None:
        code = site.spelling.device()
    else:
        found = _index_code(site, given.value)
        if isinstance(found, Skip):
            return found
        code = found
    position = list(node.args).index(given) if given is not None else None
    receiver = node.func.value
    parent = site.parent(node)
    # `x = x.cuda()` drops the old `x`: nothing is left for a later write into `x` to reach.
    rebound = isinstance(parent, cst.Assign) and any(code_of(t.target) == code_of(receiver) for t in parent.targets)
    copy = _copy_argument(site) if not rebound and _changed_in_place(site, receiver) else None

    def build(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Call) and isinstance(updated.func, cst.Attribute)
        rest = [a for i, a in enumerate(updated.args) if i != position]
        equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
        extra = [cst.Arg(parse_expr(copy), keyword=cst.Name("copy"), equal=equal)] if copy is not None else []
        return with_args(
            updated.with_changes(func=updated.func.with_changes(attr=cst.Name("to"))),
            [cst.Arg(parse_expr(code)), *rest, *extra],
        )

    return _fix(Plan(node, build, "dot-cuda"), written=[code] + ([copy] if copy else []))


# -- device checks -----------------------------------------------------------------------------

# Where `a or b` needs no parentheses (not under `and`, `not` or an operator).
_SAFE_FOR_OR = (cst.If, cst.While, cst.IfExp, cst.Assign, cst.AnnAssign, cst.Return, cst.Arg, cst.Assert, cst.Expr)

_SAFE_FOR_COMPARE = (
    cst.If,
    cst.While,
    cst.IfExp,
    cst.BooleanOperation,
    cst.Assign,
    cst.AnnAssign,
    cst.Return,
    cst.Arg,
    cst.Assert,
    cst.Expr,
    cst.Element,
    cst.DictElement,
    cst.Lambda,
    cst.Param,
    cst.AugAssign,
)


def _compare_string(spelling: Spelling, node: cst.CSTNode) -> Optional[str]:
    value = string_value(node)
    m = _CUDA.match(value or "")
    if not m:
        return None
    return _device_code(spelling, m.group(1), STRING)


def _protection(site: Site, check: cst.CSTNode) -> Union[Skip, Tuple[List[Marker], bool]]:
    """(markers the fix needs, whether the guarded code is accelerator-generic work) for a CUDA check
    at `check`, or why the check is left alone."""
    found = protected(check, site.parents)
    if found.refusal is not None:
        return Skip(found.refusal)
    needs: List[Marker] = []
    for marker in markers(found.region, site.names, check):
        if not marker.fixable:
            return Skip(f"it guards CUDA-only work that has no counterpart elsewhere (`{marker.label}`)")
        needs.append(marker)
    return needs, generic_work(found.region, site.names)


def _cpu_test(site: Site, node: cst.CSTNode) -> Union[Skip, str]:
    """A test that is true on every accelerator and false on the CPU, for the CUDA check `node`."""
    if isinstance(node, cst.Attribute):
        return f'{code_of(node.value)}.device.type != "cpu"'
    if isinstance(node, cst.Call):
        assert isinstance(node.func, cst.Attribute)
        return f'not {code_of(node.func.value)}.startswith("cpu")'
    assert isinstance(node, cst.Comparison)
    if len(node.comparisons) != 1:
        return Skip("a chained comparison cannot be restated as a CPU test")
    target = node.comparisons[0]
    op = target.operator
    left, right = node.left, target.comparator
    left_cuda, right_cuda = (
        _compare_string(site.spelling, left) is not None,
        _compare_string(site.spelling, right) is not None,
    )
    if left_cuda == right_cuda:
        return Skip("this comparison does not compare a device with a CUDA string")
    other = code_of(right if left_cuda else left)
    if isinstance(op, (cst.Equal, cst.Is)):
        return f'{other} != "cpu"'
    if isinstance(op, (cst.NotEqual, cst.IsNot)):
        return f'{other} == "cpu"'
    if isinstance(op, cst.In) and left_cuda:
        return f'"cpu" not in {other}'
    if isinstance(op, cst.NotIn) and left_cuda:
        return f'"cpu" in {other}'
    return Skip("this comparison cannot be restated as a CPU test")


def _type_of_device(site: Site, node: cst.CSTNode) -> Optional[Tuple[cst.IfExp, cst.BaseExpression]]:
    """`"cuda" if "cuda" in device else "cpu"` (or `device.startswith("cuda")`): the device type of
    `device`, spelt out. Returns the expression and `device`."""
    parent = site.parent(node)
    if not (isinstance(parent, cst.IfExp) and parent.test is node):
        return None
    if string_value(parent.body) != "cuda" or string_value(parent.orelse) != "cpu":
        return None
    if (
        isinstance(node, cst.Comparison)
        and len(node.comparisons) == 1
        and isinstance(node.comparisons[0].operator, cst.In)
    ):
        if string_value(node.left) == "cuda":
            return parent, node.comparisons[0].comparator
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and len(node.args) == 1:
        if node.func.attr.value == "startswith" and string_value(node.args[0].value) == "cuda":
            return parent, node.func.value
    return None


_ACCELERATOR_DEVICE_CALLS = frozenset({"torch.accelerator.current_accelerator"})


def _accelerator_device(site: Site, node: cst.CSTNode) -> Optional[str]:
    """The name compared in `name.type == "cuda"` (or `name == "cuda"`) when the enclosing function (or
    module) binds it to `torch.accelerator.current_accelerator()`: the code already picks its device for
    every accelerator, and its comparison with "cuda" asks about CUDA on purpose."""
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return None
    sides = [node.left, node.comparisons[0].comparator]
    others = [side for side in sides if string_value(side) is None]
    if len(others) != 1:
        return None
    other = others[0]
    if isinstance(other, cst.Attribute) and other.attr.value == "type":
        other = other.value
    if not isinstance(other, cst.Name):
        return None
    scope = _scope_of(site, node)
    if scope is None:
        return None
    name, found = other.value, False

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, assign: cst.Assign) -> None:
            nonlocal found
            if (
                isinstance(assign.value, cst.Call)
                and site.context_name(assign.value.func) in _ACCELERATOR_DEVICE_CALLS
                and any(isinstance(t.target, cst.Name) and t.target.value == name for t in assign.targets)
            ):
                found = True

    scope.visit(Visitor())
    return name if found else None


def device_compare(site: Site) -> Outcome:
    node = site.pick(cst.Comparison, cst.Call, cst.Attribute)
    if node is None:
        return Skip("the code at this position is not a device check")
    chosen = _accelerator_device(site, node)
    if chosen is not None:
        return Skip(f"`{chosen}` comes from torch.accelerator: comparing it with \"cuda\" asks about CUDA on purpose")
    choice = _type_of_device(site, node)
    if choice is not None:
        # The type of whatever device the string names: "cuda" stays "cuda", and "neuron" is no
        # longer taken for the CPU (which would turn autocast off without a word).
        code = f"torch.device({code_of(choice[1])}).type"
        return _fix(_replace(choice[0], code, "device-type-of"), written=[code])
    analysis = _protection(site, node)
    if isinstance(analysis, Skip):
        return analysis
    needs, generic = analysis
    if generic:
        # Pinning and non-blocking copies need an accelerator: the test must stay false on the CPU,
        # where `device == DEVICE.type` would be true.
        cpu_test = _cpu_test(site, node)
        if isinstance(cpu_test, Skip):
            return cpu_test
        parent = site.parent(node)
        bare = isinstance(parent, _SAFE_FOR_COMPARE) or (
            isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)
        )
        outcome: Outcome = _fix(_replace(node, cpu_test if bare else f"({cpu_test})", "device-compare"))
    else:
        outcome = _selection_compare(site, node)
    if isinstance(outcome, Fix):
        return Fix(outcome.plans, outcome.written, outcome.imports, outcome.removals, tuple(needs))
    return outcome


def _selection_compare(site: Site, node: cst.CSTNode) -> Outcome:
    """A check that picks a device: ask the same question of the resolved device type."""
    sp = site.spelling
    if isinstance(node, cst.Comparison):
        sides = [node.left, *(t.comparator for t in node.comparisons)]
        codes: Dict[int, str] = {}
        for i, side in enumerate(sides):
            code = _compare_string(sp, side)
            if code is not None:
                codes[i] = code
            elif isinstance(side, (cst.Tuple, cst.List, cst.Set)):
                for element in side.elements:
                    inner = _compare_string(sp, element.value)
                    if inner is not None:
                        codes[i] = "container"
        if not codes:
            return Skip("no CUDA device string in this comparison")

        def retype(side: cst.BaseExpression) -> cst.BaseExpression:
            code = _compare_string(sp, side)
            if code is not None:
                return parse_expr(code).with_changes(lpar=side.lpar, rpar=side.rpar)
            if isinstance(side, (cst.Tuple, cst.List, cst.Set)):
                elements = []
                for element in side.elements:
                    inner = _compare_string(sp, element.value)
                    elements.append(element.with_changes(value=parse_expr(inner)) if inner is not None else element)
                return side.with_changes(elements=elements)
            return side

        # `x == "cuda"` asks "is x the accelerator": on a CPU-only machine its answer stays false (the
        # CPU path the code already has) instead of becoming true for everything on the CPU.
        plain = (
            sp.style == "variable"
            and len(node.comparisons) == 1
            and isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot))
            and len(codes) == 1
            and all(string_value(sides[i]) == "cuda" for i in codes)
        )
        negated = plain and isinstance(node.comparisons[0].operator, (cst.NotEqual, cst.IsNot))
        bare = isinstance(site.parent(node), _SAFE_FOR_OR)
        type_code = sp.device_type()

        def build(updated: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(updated, cst.Comparison)
            left = retype(updated.left) if 0 in codes else updated.left
            targets = []
            for i, target in enumerate(updated.comparisons, 1):
                op = target.operator
                if i in codes or i - 1 in codes:
                    # Identity against a freshly built string is never true: compare by value.
                    if isinstance(op, cst.Is):
                        op = cst.Equal(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
                    elif isinstance(op, cst.IsNot):
                        op = cst.NotEqual(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
                comparator = retype(target.comparator) if i in codes else target.comparator
                targets.append(target.with_changes(operator=op, comparator=comparator))
            if plain and not negated:
                # `x == DEVICE.type != "cpu"`
                targets.append(cst.ComparisonTarget(operator=cst.NotEqual(), comparator=cst.SimpleString('"cpu"')))
                return updated.with_changes(left=left, comparisons=targets)
            changed = updated.with_changes(left=left, comparisons=targets)
            if not plain:
                return changed
            # `x != DEVICE.type or DEVICE.type == "cpu"`
            either = cst.BooleanOperation(
                left=changed.with_changes(lpar=[], rpar=[]),
                operator=cst.Or(),
                right=parse_expr(f'{type_code} == "cpu"'),
            )
            if bare and not updated.lpar:
                return either
            return either.with_changes(lpar=updated.lpar or [cst.LeftParen()], rpar=updated.rpar or [cst.RightParen()])

        return _fix(Plan(node, build, "device-compare"), written=[type_code])
    if isinstance(node, cst.Call):
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "startswith" or not node.args:
            return Skip("the code at this position is not a device check")
        code = _compare_string(sp, node.args[0].value)
        if code is None:
            return Skip("no CUDA device string in this check")

        def build_startswith(updated: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(updated, cst.Call)
            first = updated.args[0].with_changes(value=parse_expr(code))
            return updated.with_changes(args=[first, *updated.args[1:]])

        return _fix(Plan(node, build_startswith, "device-compare"), written=[code])
    if isinstance(node, cst.Attribute) and node.attr.value == "is_cuda":
        type_code = sp.device_type()
        parent = site.parent(node)
        # Under `not` the parentheses are not needed, but they keep `not (a == b)` readable.
        bare = isinstance(parent, _SAFE_FOR_COMPARE)

        def build_is_cuda(updated: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(updated, cst.Attribute)
            dev_type = cst.Attribute(
                value=cst.Attribute(value=updated.value, attr=cst.Name("device")), attr=cst.Name("type")
            )
            targets = [cst.ComparisonTarget(operator=cst.Equal(), comparator=parse_expr(type_code))]
            if sp.style == "variable":
                # true on the accelerator only, as `is_cuda` was false for every tensor on a CPU-only machine
                targets.append(cst.ComparisonTarget(operator=cst.NotEqual(), comparator=cst.SimpleString('"cpu"')))
            compare = cst.Comparison(left=dev_type, comparisons=targets)
            if not bare:
                compare = compare.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            return compare.with_changes(lpar=[*updated.lpar, *compare.lpar], rpar=[*compare.rpar, *updated.rpar])

        return _fix(Plan(node, build_is_cuda, "device-compare"), written=[type_code])
    return Skip("the code at this position is not a device check")


# -- torch.cuda.is_available() -----------------------------------------------------------------


def _device_value(site: Site, node: cst.CSTNode) -> Optional[Tuple[str, Optional[str]]]:
    """("cuda"|"cpu", index) for "cuda:N"/"cpu" strings and torch.device(...) of them."""
    if isinstance(node, cst.Call) and site.context_name(node.func) == "torch.device" and len(node.args) == 1:
        found = _device_value(site, node.args[0].value)
        return (found[0], found[1]) if found else None
    value = string_value(node)
    if value == "cpu":
        return ("cpu", None)
    m = _CUDA.match(value or "")
    return ("cuda", m.group(1)) if m else None


def availability(site: Site) -> Outcome:
    sp = site.spelling
    found = site.pick(cst.Call, cst.Attribute, cst.Name)
    call = site.call_of(found) if found is not None else None
    if call is None:
        return Skip("the code at this position is not an availability check")
    provider = _provider_in_condition(site, call)
    if provider is not None:
        return Skip(
            f'the check goes with ONNX Runtime\'s "{provider}", so it asks about CUDA itself, not any accelerator'
        )
    parent = site.parent(call)
    if isinstance(parent, cst.IfExp) and parent.test is call:
        body, orelse = _device_value(site, parent.body), _device_value(site, parent.orelse)
        if body and orelse and body[0] == "cuda" and orelse[0] == "cpu":
            is_object = isinstance(parent.body, cst.Call) or isinstance(parent.orelse, cst.Call)
            holder = holder_of(site, parent)
            if holder.kind == COLLAPSE and sp.device_is_object and holder.call is not None:
                code = _device_code(sp, body[1], COLLAPSE)
                return _fix(_replace(holder.call, code, "device-call"), written=[code])
            code = _device_code(sp, body[1], OBJECT if is_object else holder.kind)
            return _fix(_replace(parent, code, "availability"), written=[code])
    guard = sp.guard()
    if guard is None:
        return Skip("XLA has no availability check to swap in; only the exact device ternary is fixed")
    if PurePath(site.path).name == "setup.py":
        return Skip("in setup.py the check decides whether CUDA extensions are built")
    analysis = _protection(site, call)
    if isinstance(analysis, Skip):
        return analysis
    needs = analysis[0]
    func = guard.rsplit("(", 1)[0]
    plans = [Plan(call, lambda updated: updated.with_changes(func=parse_expr(func)), "availability")]
    written = [guard]
    # `"cuda" if torch.cuda.is_available() and ... else "cpu"`: the scan leaves the device string of
    # such a ternary to this rule, so it is rewritten here too (a second run would otherwise).
    for literal in _ternary_device_strings(site, call):
        outcome = _device_literal(site, literal)
        if isinstance(outcome, Fix):
            plans.extend(outcome.plans)
            written.extend(outcome.written)
    return _fix(*plans, written=written, removals=[_removal(site, call.func)], needs=needs)


def _quiet_without_cuda(symbol: str) -> bool:
    """A `torch.cuda` call that neither raises nor changes anything without CUDA: a memory figure (0), a seed
    or `empty_cache()` (nothing to do)."""
    return symbol_role(symbol) in (facts.MEMORY_STAT, facts.SEED) or symbol == "torch.cuda.empty_cache"

_ORT_PROVIDER = re.compile(r"[A-Za-z0-9]+ExecutionProvider")  # ONNX Runtime's provider names


def _provider_in_condition(site: Site, call: cst.Call) -> Optional[str]:
    """The first ONNX Runtime execution provider named in the boolean expression around `call`
    (`torch.cuda.is_available() and "CUDAExecutionProvider" in providers`), else None. There the check
    asks about CUDA for ONNX Runtime, and swapping in any accelerator would change what it means."""
    top: cst.CSTNode = call
    parent = site.parent(top)
    while isinstance(parent, cst.BooleanOperation) or (
        isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)
    ):
        top, parent = parent, site.parent(parent)
    if top is call:
        return None
    for node in walk(top):
        value = string_value(node)
        if value is not None and _ORT_PROVIDER.fullmatch(value):
            return value
    return None


def _ternary_device_strings(site: Site, call: cst.Call) -> List[cst.CSTNode]:
    child: cst.CSTNode = call
    parent = site.parent(call)
    while parent is not None and not isinstance(parent, (cst.IfExp, cst.BaseStatement)):
        child, parent = parent, site.parent(parent)
    if not isinstance(parent, cst.IfExp) or parent.test is not child:
        return []
    values = {id(b): _device_value(site, b) for b in (parent.body, parent.orelse)}
    kinds = {v[0] for v in values.values() if v}
    if kinds != {"cuda", "cpu"}:
        return []
    return [
        b
        for b in (parent.body, parent.orelse)
        if isinstance(b, cst.SimpleString) and (values[id(b)] or ("",))[0] == "cuda"
    ]


# -- renamed torch.cuda calls ------------------------------------------------------------------


def _guarded(site: Site, node: cst.CSTNode) -> bool:
    """True inside the body of an `if torch.cuda.is_available():` or `if torch.accelerator.is_available():`,
    or the value of such an `... if torch.cuda.is_available() else None`."""
    child, parent = node, site.parent(node)
    while parent is not None:
        if (isinstance(parent, cst.If) and child is parent.body) or (
            isinstance(parent, cst.IfExp) and child is parent.body
        ):
            test = parent.test
            if isinstance(test, cst.Call) and site.context_name(test.func) in AVAILABILITY_CALLS:
                return True
        child, parent = parent, site.parent(parent)
    return False


def _removal(site: Site, ref: cst.CSTNode) -> Optional[Binding]:
    """The import binding the root of `ref`, when dropping it could be right (never plain `import torch`)."""
    binding = site.names.binding_of(ref)
    if binding is None or (binding.obj is None and binding.asname is None):
        return None
    return binding


def _bind_args(args: Sequence[cst.Arg], to: str) -> Union[Skip, List[Tuple[int, bool]]]:
    """How the arguments of a CUDA call go to the API `to`: (index in `args`, pass by position), in
    order. A keyword that `to` only takes by position (`synchronize(device, /)`) is passed by position."""
    if to in NO_ARGUMENTS:
        return [] if not args else Skip(f"`{to}` takes no arguments")
    only = POSITIONAL_ONLY.get(to)
    if only is None:
        return [(i, False) for i in range(len(args))]
    if any(a.star for a in args):
        return Skip(f"cannot tell how `*args` bind to `{to}`")
    order = [(i, False) for i, a in enumerate(args) if a.keyword is None]
    for i, arg in enumerate(args):
        if arg.keyword is None:
            continue
        # The CUDA APIs call the parameter `device`; it goes to the one positional slot.
        if arg.keyword.value in ("device", *only) and len(order) < len(only):
            order.append((i, True))
        else:
            return Skip(f"`{to}` has no parameter for `{arg.keyword.value}=`")
    if len(order) > len(only):
        return Skip(f"`{to}` takes at most {len(only)} argument(s)")
    return order


def _scope_body(site: Site, node: cst.CSTNode) -> List[cst.CSTNode]:
    """The statements of the function `node` is in, else of its module (not descending into defs)."""
    parent = site.parent(node)
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
        parent = site.parent(parent)
    if isinstance(parent, cst.FunctionDef):
        return [parent.body]
    if isinstance(parent, cst.Module):
        return [s for s in parent.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef))]
    return []


def _memory_companions(site: Site, call: cst.CSTNode) -> List[Marker]:
    """The CUDA memory statistics in the same function as `call`, the finding's statistic or
    synchronization: a timing or memory report is fixed whole, or it still needs CUDA and the rewrite
    gains nothing."""
    if site.role not in (facts.MEMORY_STAT, facts.MEMORY_SYNC):
        return []
    found: List[Marker] = []
    own = set(map(id, walk(call.func))) if isinstance(call, cst.Call) else {id(call)}
    stack: List[cst.CSTNode] = list(_scope_body(site, call))
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Import, cst.ImportFrom)) or id(node) in own:
            continue
        if isinstance(node, (cst.Attribute, cst.Name)) and symbol_role(site.context_name(node)) == facts.MEMORY_STAT:
            found.append(Marker(node, code_of(node), True))
            continue
        stack.extend(node.children)
    return found


def _same_seed(site: Site, call: cst.Call) -> bool:
    """True when the seeding statement `call` is, once renamed, a repeat of another in its block:
    `torch.manual_seed(s)` seeds every device, so `torch.cuda.manual_seed(s)` beside it goes."""
    expr = site.parent(call)
    line = site.parent(expr) if isinstance(expr, cst.Expr) else None
    block = site.parent(line) if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)):
        return False
    args = code_of(call.with_changes(func=cst.Name("f")))
    earlier = True
    for stmt in body:
        if stmt is line:
            earlier = False
            continue
        if not (
            isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
        ):
            continue
        other = stmt.body[0].value
        if not isinstance(other, cst.Call) or code_of(other.with_changes(func=cst.Name("f"))) != args:
            continue
        name = site.context_name(other.func) or ""
        # Keep the first of several CUDA seeds; drop any beside a plain `torch.manual_seed`.
        if symbol_role(name) == facts.SEED and (earlier or not name.startswith("torch.cuda.")):
            return True
    return False


def rename_call(site: Site) -> Outcome:
    to = site.params.get("to")
    if not isinstance(to, str) or not to:
        return Skip("the rule's rename-call fix names no replacement ('to')")
    guard = bool(site.params.get("guard", False))
    drop = bool(site.params.get("drop-args", False))
    node = site.pick(cst.Call, cst.Attribute, cst.Name)
    if node is None:
        return Skip("the code at this position is not a call")
    call = site.call_of(node)
    ref = call.func if call is not None else node
    # The name the matcher matched, and what it is; only where the code spells it (see Site.spelled).
    spelled = site.spelled(ref)
    original = site.symbol if spelled else ""
    role = site.role if spelled else ""
    if to.endswith(".*"):
        # `torch.accelerator.*`: the same name in another namespace.
        if not original:
            return Skip(f"cannot tell which API `{code_of(ref)}` is")
        to = to[:-1] + original.rsplit(".", 1)[-1]
    removals = [_removal(site, ref)]
    if call is None:
        if guard:
            return Skip(f"`{code_of(ref)}` is used without being called, so it cannot be guarded")
        return _fix(_replace(ref, to, "rename"), written=[to], removals=removals)
    needs = _memory_companions(site, call) if role else []
    holder = site.parent(call)
    while holder is not None and not isinstance(holder, (cst.FormattedString, cst.BaseStatement)):
        holder = site.parent(holder)
    if isinstance(holder, cst.FormattedString) and _CUDA_PREFIX.match(_leading_text(holder)):
        return Skip(f"it is part of the CUDA device string `{code_of(holder)}`, which stays")
    loop = counted_loop(call, site.parents) is not None
    if role == facts.CUDA_CHECK or loop:
        # `torch.cuda.device_count() > 1` is a CUDA check like `is_available()`: what it guards decides; so is
        # the count bounding a loop (`for i in range(torch.cuda.device_count()):`), which runs only with CUDA,
        # and then once per accelerator device: what would raise there must be rewritten with it (a memory
        # figure reads 0 and `empty_cache()` does nothing without CUDA)
        analysis = _protection(site, call)
        if isinstance(analysis, Skip):
            return analysis
        needs += [m for m in analysis[0] if not (loop and _quiet_without_cuda(m.label))]
    if role == facts.SEED and _same_seed(site, call):
        statement = site.parent(call)
        line = site.parent(statement) if statement is not None else None
        assert line is not None
        return _fix(Plan(line, lambda updated: cst.RemovalSentinel.REMOVE, "drop-seed"), removals=removals)
    order = [] if drop else _bind_args(call.args, to)
    if isinstance(order, Skip):
        return order
    keep_args = order == [(i, False) for i in range(len(call.args))]

    def build(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        changed = updated.with_changes(func=parse_expr(to))
        if keep_args:
            return changed
        args = [
            updated.args[i].with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
            if by_position
            else updated.args[i]
            for i, by_position in order
        ]
        args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
        return with_args(changed.with_changes(args=[]), args) if args else changed.with_changes(args=[])

    plans = [Plan(call, build, f"rename:{to}")]
    written = [to]
    test = site.spelling.guard()
    if guard and test is not None and not _guarded(site, call):
        written.append(test)
        expr = site.parent(call)
        line = site.parent(expr) if isinstance(expr, cst.Expr) else None
        if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:

            def build_if(updated: cst.CSTNode) -> cst.CSTNode:
                assert isinstance(updated, cst.SimpleStatementLine)
                return cst.If(
                    test=parse_expr(test),
                    body=cst.IndentedBlock(body=[updated.with_changes(leading_lines=[])]),
                    leading_lines=updated.leading_lines,
                )

            plans.append(Plan(line, build_if, "guard"))
        else:
            if to in NO_FALLBACK:
                return Skip(f"no value stands in for `{to}()` without an accelerator")
            fallback = GUARD_FALLBACK.get(to, "None")
            bare = isinstance(expr, (cst.Expr, cst.Arg, cst.Assign, cst.AnnAssign, cst.Return, cst.Element))

            def build_ifexp(updated: cst.BaseExpression) -> cst.CSTNode:
                inner = updated.with_changes(lpar=[], rpar=[])
                ifexp = cst.IfExp(test=parse_expr(test), body=inner, orelse=parse_expr(fallback))
                if not bare or updated.lpar:
                    ifexp = ifexp.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
                return ifexp

            plans.append(Plan(call, build_ifexp, "guard"))
    return _fix(*plans, written=written, removals=removals, needs=needs)


# -- autocast, GradScaler, custom_fwd --------------------------------------------------------------

_OLD_AUTOCAST_ARGS = ("enabled", "dtype", "cache_enabled")


def _amp_dtype(site: Site) -> str:
    # The old CUDA wrapper defaulted to float16; other devices default elsewhere (bfloat16 on CPU), so
    # the dtype is written out. XLA autocast runs in bfloat16.
    return "torch.bfloat16" if site.target == "xla" else "torch.float16"


def _string_arg_plan(site: Site, node: cst.CSTNode, add_dtype: bool) -> Outcome:
    """A "cuda" device-type argument: name the new device type (and pin autocast's dtype)."""
    value = string_value(node)
    if not _CUDA.match(value or ""):
        return Skip(f"not a CUDA device type: {code_of(node)}")
    sp = site.spelling
    type_code = sp.device_type()
    plans = [_replace(node, type_code, "device-type")]
    written = [type_code]
    holder = holder_of(site, node)
    call = holder.call
    # Only autocast takes a dtype (the same device-type position also feeds GradScaler and friends).
    # The call is the finding's: the one the matcher named, or the one it reported.
    is_autocast = call is not None and site.spelled(call.func) and site.symbol.endswith("autocast")
    if add_dtype and is_autocast and call is not None and argument(call, "dtype", 1) is None:
        dtype = _amp_dtype(site)
        written.append(dtype)
        plans.append(
            Plan(call, lambda updated: with_args(updated, [*updated.args, kwarg("dtype", parse_expr(dtype))]), "dtype")
        )
    return _fix(*plans, written=written)


def autocast(site: Site) -> Outcome:
    string = site.pick(cst.SimpleString)
    if string is not None:
        return _string_arg_plan(site, string, add_dtype=True)
    node = site.pick(cst.Call, cst.Attribute, cst.Name)
    if node is None:
        return Skip("the code at this position is not an autocast")
    call = site.call_of(node)
    ref = call.func if call is not None else node
    if site.role == facts.DEVICE_TYPE:
        return Skip(f"`{code_of(ref)}` is not an autocast this fix knows")  # a device type, but no literal
    name = site.symbol if site.spelled(ref) else ""
    sp = site.spelling
    type_code = sp.device_type()
    dtype = _amp_dtype(site)
    if name in ("torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"):
        given = argument(call, "device_type", 0) if call is not None else None
        if given is None:
            return Skip("autocast without a device type")
        return _string_arg_plan(site, given.value, add_dtype=True)
    if not name.endswith("autocast"):
        return Skip(f"`{code_of(ref)}` is not an autocast this fix knows")
    written = ["torch.autocast", type_code, dtype]
    if call is None:
        code = f"torch.autocast(device_type={type_code}, dtype={dtype})"
        return _fix(_replace(ref, code, "autocast"), written=written, removals=[_removal(site, ref)])
    if any(a.star for a in call.args):
        return Skip("autocast called with *args or **kwargs")

    def build(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        named: Dict[str, cst.Arg] = {}
        others: List[cst.Arg] = []
        positional = 0
        for arg in updated.args:
            if arg.keyword is None:
                if positional >= len(_OLD_AUTOCAST_ARGS):
                    others.append(arg)
                    continue
                named[_OLD_AUTOCAST_ARGS[positional]] = kwarg(_OLD_AUTOCAST_ARGS[positional], arg.value)
                positional += 1
            else:
                named[arg.keyword.value] = arg
        args = [
            kwarg("device_type", parse_expr(type_code)),
            named.pop("dtype", None) or kwarg("dtype", parse_expr(dtype)),
        ]
        args += [named[k] for k in _OLD_AUTOCAST_ARGS if k in named] + [
            a for k, a in named.items() if k not in _OLD_AUTOCAST_ARGS
        ]
        return with_args(updated.with_changes(func=parse_expr("torch.autocast")), [*args, *others])

    return _fix(Plan(call, build, "autocast"), written=written, removals=[_removal(site, ref)])


def grad_scaler(site: Site) -> Outcome:
    if site.target == "xla":
        return Skip("XLA autocast runs in bfloat16, which needs no gradient scaler; remove it by hand")
    string = site.pick(cst.SimpleString)
    if string is not None:
        return _string_arg_plan(site, string, add_dtype=False)
    node = site.pick(cst.Call, cst.Attribute, cst.Name)
    call = site.call_of(node) if node is not None else None
    if call is None:
        return Skip("the code at this position is not a GradScaler call")
    if site.role == facts.DEVICE_TYPE:
        return Skip(f"`{code_of(call.func)}` is not a GradScaler this fix knows")  # a device type, but no literal
    name = site.symbol if site.spelled(call.func) else ""
    type_code = site.spelling.device_type()
    given = argument(call, "device", 0) if name.startswith(("torch.amp.", "torch.GradScaler")) else None
    if given is not None:
        return _string_arg_plan(site, given.value, add_dtype=False)
    if not name.endswith("GradScaler"):
        return Skip(f"`{code_of(call.func)}` is not a GradScaler this fix knows")

    def build(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        return with_args(
            updated.with_changes(func=parse_expr("torch.amp.GradScaler")),
            [cst.Arg(parse_expr(type_code)), *updated.args],
        )

    return _fix(
        Plan(call, build, "grad-scaler"),
        written=["torch.amp.GradScaler", type_code],
        removals=[_removal(site, call.func)],
    )


def custom_fwd(site: Site) -> Outcome:
    node = site.pick(cst.Call, cst.Attribute, cst.Name)
    if node is None:
        return Skip("the code at this position is not custom_fwd/custom_bwd")
    call = site.call_of(node)
    ref = call.func if call is not None else node
    which = site.symbol.rsplit(".", 1)[-1] if site.spelled(ref) else ""
    if which not in ("custom_fwd", "custom_bwd"):
        return Skip(f"`{code_of(ref)}` is not custom_fwd or custom_bwd")
    to = f"torch.amp.{which}"
    type_code = site.spelling.device_type()
    written = [to, type_code]
    removals = [_removal(site, ref)]
    if call is None:
        return _fix(_replace(ref, f"{to}(device_type={type_code})", which), written=written, removals=removals)

    def build(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        existing = keyword_arg(updated, "device_type")
        if existing is not None:
            args = [a.with_changes(value=parse_expr(type_code)) if a is existing else a for a in updated.args]
        else:
            args = [*updated.args, kwarg("device_type", parse_expr(type_code))]
        return with_args(updated.with_changes(func=parse_expr(to)), args)

    return _fix(Plan(call, build, which), written=written, removals=removals)


# -- distributed ---------------------------------------------------------------------------------


def _backend_choice(site: Site, node: cst.CSTNode) -> Optional[cst.IfExp]:
    """`"nccl" if torch.cuda.is_available() else "gloo"`: the whole choice, which the default backend
    of the resolved device makes on its own."""
    parent = site.parent(node)
    if not isinstance(parent, cst.IfExp) or parent.body is not node or string_value(parent.orelse) != "gloo":
        return None
    test = parent.test
    if isinstance(test, cst.Call) and site.context_name(test.func) in AVAILABILITY_CALLS:
        return parent
    return None


def process_group_backend(site: Site) -> Outcome:
    sp = site.spelling
    code = sp.backend()
    attribute = site.pick(cst.Attribute)
    node: Optional[cst.CSTNode] = site.pick(cst.SimpleString)
    if (
        node is None
        and attribute is not None
        and site.spelled(attribute)
        and site.symbol == "torch.distributed.Backend.NCCL"
    ):
        node = attribute
    elif node is None or (string_value(node) or "").lower() != "nccl":
        return Skip('the code at this position is not the "nccl" backend')
    choice = _backend_choice(site, node)
    if choice is not None and sp.style == "variable":
        node = choice
    plans = [_replace(node, code, "backend")]
    imports: List[str] = []
    if site.target == "xla":
        imports.append("torch_xla.distributed.xla_backend")
        holder = holder_of(site, node)
        call = holder.call
        # The call the backend is passed to, to which the fix adds `init_method`.
        if call is not None and (site.context_name(call.func) or "").endswith("init_process_group"):

            def build(updated: cst.CSTNode) -> cst.CSTNode:
                assert isinstance(updated, cst.Call)
                existing = keyword_arg(updated, "init_method")
                value = parse_expr('"xla://"')
                if existing is not None:
                    return updated.with_changes(
                        args=[a.with_changes(value=value) if a is existing else a for a in updated.args]
                    )
                return with_args(updated, [*updated.args, kwarg("init_method", value)])

            plans.append(Plan(call, build, "init-method"))
    return _fix(*plans, written=[code], imports=imports)


def int_device(site: Site) -> Outcome:
    sp = site.spelling
    node = site.pick(cst.List, cst.Tuple, cst.Integer, cst.Name, cst.Attribute)
    if node is None:
        return Skip("the code at this position is not a device index")
    parent = site.parent(node)
    if isinstance(parent, cst.Element) and site.role == facts.DEVICE_IDS:
        # `device_ids=[local_rank]` reported at the index the list holds (an integer that flowed there):
        # the list is what becomes `None` on the CPU.
        sequence = site.parent(parent)
        arg = site.parent(sequence) if isinstance(sequence, (cst.List, cst.Tuple)) else None
        if isinstance(arg, cst.Arg):
            assert isinstance(sequence, (cst.List, cst.Tuple))
            node, parent = sequence, arg
    keyword = parent.keyword.value if isinstance(parent, cst.Arg) and parent.keyword else None
    if site.role == facts.DEVICE_IDS:
        if sp.style == "literal":
            return Skip(f"`{keyword}` holds indices, which Neuron accepts as they are")
        if site.target in ("cpu", "xla"):
            return _fix(_replace(node, "None", "device-ids"))
        test = f'{sp.name}.type == "cpu"'

        def build_ids(updated: cst.BaseExpression) -> cst.CSTNode:
            # DDP on CPU needs device_ids=None; on an accelerator the indices stay.
            return cst.IfExp(test=parse_expr(test), body=cst.Name("None"), orelse=updated)

        return _fix(Plan(node, build_ids, "device-ids"), written=[test])
    index = code_of(node)
    if site.role == facts.DEVICE_MAP:
        code = sp.device() if isinstance(node, cst.Integer) and node.value == "0" else sp.indexed(index)
        return _fix(_replace(node, code, "device-map"), written=[code])
    holder = holder_of(site, node)
    if holder.kind == COLLAPSE and sp.device_is_object and holder.call is not None:
        code = sp.indexed(index)
        return _fix(_replace(holder.call, code, "device-call"), written=[code])
    if holder.kind in (OBJECT, COLLAPSE):
        code = sp.indexed(index)
        return _fix(_replace(node, code, "int-device"), written=[code])
    return Skip(f"`{index}` is not in a position this fix rewrites")


# -- plain edits ---------------------------------------------------------------------------------


def remove_keyword(site: Site) -> Outcome:
    keyword = site.params.get("keyword")
    if not isinstance(keyword, str) or not keyword:
        return Skip("the rule's remove-keyword fix names no 'keyword'")
    node: Optional[cst.CSTNode] = site.nodes[0] if site.nodes else None
    while node is not None and not (isinstance(node, cst.Call) and keyword_arg(node, keyword) is not None):
        node = site.parent(node)
    if node is None:
        return Skip(f"no call with `{keyword}=` at this position")

    def build(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        victim = keyword_arg(updated, keyword)
        return without_arg(updated, victim) if victim is not None else updated

    return _fix(Plan(node, build, f"remove:{keyword}"))


def replace_string(site: Site) -> Outcome:
    value = site.params.get("value")
    if not isinstance(value, str):
        return Skip("the rule's replace-string fix names no 'value'")
    node = site.pick(cst.SimpleString)
    if node is None or string_value(node) is None:
        return Skip("the code at this position is not a string literal")
    new = quote_like(value, node)
    return _fix(Plan(node, lambda updated: new.with_changes(lpar=updated.lpar, rpar=updated.rpar), f"string:{value}"))


# -- legacy default tensor types ---------------------------------------------------------------


def default_tensor_type(site: Site) -> Outcome:
    """`torch.set_default_tensor_type(torch.cuda.FloatTensor)` -> the dtype and the device, each set
    the modern way (`set_default_tensor_type` is deprecated and names CUDA)."""
    node = site.pick(cst.Attribute, cst.SimpleString)
    if node is None:
        return Skip("the code at this position is not a tensor type")
    # The type the matcher matched, named in a string or referenced (where the code spells it).
    name = site.symbol if isinstance(node, cst.SimpleString) or site.spelled(node) else ""
    arg = site.parent(node)
    call = site.parent(arg) if isinstance(arg, cst.Arg) else None
    if (
        not isinstance(call, cst.Call)
        or site.context_name(call.func) != "torch.set_default_tensor_type"
        or len(call.args) != 1
    ):
        return Skip(
            "only `torch.set_default_tensor_type(<CUDA type>)` is rewritten; "
            "elsewhere a CUDA tensor type needs a person"
        )
    dtype = CUDA_TENSOR_TYPES.get(name or "")
    if dtype is None:
        return Skip(f"`{name}` is not a floating-point type, so it cannot be a default type")
    expr = site.parent(call)
    line = site.parent(expr) if isinstance(expr, cst.Expr) else None
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return Skip("the call is not a statement of its own")
    device = site.spelling.device()
    first = f"torch.set_default_dtype({dtype})"
    second = f"torch.set_default_device({device})"

    def build(updated: cst.CSTNode) -> cst.FlattenSentinel[cst.SimpleStatementLine]:
        assert isinstance(updated, cst.SimpleStatementLine)
        return cst.FlattenSentinel(
            [
                updated.with_changes(body=[cst.Expr(parse_expr(first))]),
                cst.SimpleStatementLine(body=[cst.Expr(parse_expr(second))]),
            ]
        )

    return _fix(Plan(line, build, "default-tensor-type"), written=[first, second, device])


# -- pinned memory ------------------------------------------------------------------------------


_PLAIN_PARENTS = (cst.Assign, cst.AnnAssign, cst.Return, cst.Arg, cst.Element, cst.DictElement, cst.Expr)


def _pure(node: cst.CSTNode) -> bool:
    """True for a name, an attribute chain or a subscript by a constant or name: code that can be
    evaluated twice without running anything."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _pure(node.value)
    if isinstance(node, cst.Subscript):
        return _pure(node.value) and all(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.Name, cst.Integer, cst.SimpleString))
            for e in node.slice
        )
    return False


def _guarded_pin(site: Site, call: cst.Call) -> Outcome:
    """`x.pin_memory()` -> `x.pin_memory() if torch.accelerator.is_available() else x`: pinned as
    before wherever an accelerator is (CUDA included), and the tensor itself where none is, where
    `pin_memory()` raises. Only for a receiver that is safe to name twice."""
    assert isinstance(call.func, cst.Attribute)
    receiver = call.func.value
    if call.args:
        return Skip("`.pin_memory(device)` names a device: drop the argument by hand")
    if not _pure(receiver):
        return Skip(
            f"`{code_of(receiver)}.pin_memory()` raises without an accelerator, and `{code_of(receiver)}` "
            "would run twice in a guarded copy: guard it by hand"
        )
    # (`x.pin_memory() if torch.accelerator.is_available() else x` is no finding: the matcher declines it.)
    if _guarded(site, call):
        return Skip("`.pin_memory()` already runs only where an accelerator is")
    guard = "torch.accelerator.is_available()"
    plain = isinstance(site.parent(call), _PLAIN_PARENTS)

    def build(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.Call) and isinstance(updated.func, cst.Attribute)
        inner = updated.with_changes(lpar=[], rpar=[])
        choice = cst.IfExp(test=parse_expr(guard), body=inner, orelse=updated.func.value)
        if plain and not updated.lpar:
            return choice
        parens = updated.lpar or [cst.LeftParen()]
        return choice.with_changes(lpar=parens, rpar=updated.rpar or [cst.RightParen()])

    return _fix(Plan(call, build, "pin-memory-guard"), written=[guard], imports=["torch"])


def pin_memory(site: Site) -> Outcome:
    """`DataLoader(..., pin_memory_device="cuda")` loses the keyword: since 2.9 the loader pins for the
    current accelerator, and before that pinning is skipped with a warning where CUDA is missing.
    `x.pin_memory()` raises without an accelerator: it runs only where one is available, and the
    tensor is used unpinned elsewhere."""
    node = site.pick(cst.Call)
    if node is not None and keyword_arg(node, "pin_memory_device") is None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "pin_memory":
            return _guarded_pin(site, node)
    return remove_keyword(replace(site, params={"keyword": "pin_memory_device"}))


RECIPES: Dict[str, Callable[[Site], Outcome]] = {
    "pin-memory": pin_memory,
    "default-tensor-type": default_tensor_type,
    "device-string": device_string,
    "map-location": device_string,
    "dot-cuda": dot_cuda,
    "device-variable": device_variable,
    "device-compare": device_compare,
    "availability": availability,
    "rename-call": rename_call,
    "autocast": autocast,
    "grad-scaler": grad_scaler,
    "custom-fwd": custom_fwd,
    "process-group-backend": process_group_backend,
    "int-device": int_device,
    "remove-keyword": remove_keyword,
    "replace-string": replace_string,
}
