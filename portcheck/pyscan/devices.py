"""Matcher kinds that know where a device lives in PyTorch code: device strings, device checks,
integer device indices, and Python control flow on tensor values."""

from __future__ import annotations

import ast
import re
from typing import Any, Dict, FrozenSet, Iterator, List, Mapping, Optional, Set, Tuple

from portcheck.pyscan.context import (
    UNREAD_PARAMETER_NOTE,
    Ctx,
    asks_for_accelerator_api,
    defaulted_parameters,
    is_cuda_check,
    is_flag_device_choice,
    is_host_value,
    reads_stop_token,
    shown_names,
    skips_without_cuda,
    unread_parameters,
)
from portcheck.pyscan.imports import ImportTable, dotted
from portcheck.pyscan.matchers import (
    Attr,
    Clause,
    Hit,
    Label,
    Matcher,
    MatcherError,
    NameSet,
    _str_list,
    call_argument,
    register,
    value_role,
)
from portcheck.pyscan.nodes import children, module_nodes, walk
from portcheck.torchfacts import AMP_CALLS as _AMP_CALLS
from portcheck.torchfacts import DEVICE, DEVICE_IDS, DEVICE_MAP, DEVICE_NAME, RANKISH, STRING
from portcheck.torchfacts import LOAD_CALLS as _LOAD_CALLS
from portcheck.torchfacts import MESH_CALLS as _MESH_CALLS

_DEVICE_CALLS = frozenset({"torch.device"})
_DEFAULT_DEVICE_CALLS = frozenset({"torch.set_default_device"})

POSITIONS = frozenset(
    {
        "to",
        "device-call",
        "device-keyword",
        "map-location",
        "parameter-default",
        "assignment",
        "argparse-default",
        "dict-value",
        "set-default-device",
        "device-mesh",
        "autocast",
    }
)


def _positions(params: Mapping[str, Any], allowed=POSITIONS) -> frozenset:
    value = _str_list(params, "positions")
    bad = [p for p in value if p not in allowed]
    if bad:
        raise MatcherError(f"unknown position '{bad[0]}' in 'positions'")
    return frozenset(value)


def _name_of_target(target: ast.AST) -> Optional[str]:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Subscript):
        key = target.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value
    return None


_STRINGY = (ast.JoinedStr, ast.BinOp, ast.IfExp, ast.BoolOp, ast.List, ast.Tuple, ast.Set)


def _may_hold_string(call: ast.Call) -> bool:
    """Whether any argument could be a device string; most calls pass names, and are decided here once."""
    memo = call.__dict__
    if "_portcheck_stringy" in memo:
        return memo["_portcheck_stringy"]
    values = list(call.args) + [k.value for k in call.keywords]
    answer = any(
        (isinstance(v, ast.Constant) and isinstance(v.value, str))
        or isinstance(v, _STRINGY)
        or (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "format")
        for v in values
    )
    memo["_portcheck_stringy"] = answer
    return answer


def _elements(expr: ast.AST) -> Set[int]:
    """The ids of the elements of the lists, tuples and sets `expr` may evaluate to (through ternaries
    and `or`/`and`), whose strings `DeviceStringMatcher.strings` reports one by one."""
    out: Set[int] = set()
    stack = [expr]
    while stack:
        sub = stack.pop()
        if isinstance(sub, ast.IfExp):
            stack += [sub.body, sub.orelse]
        elif isinstance(sub, ast.BoolOp):
            stack += sub.values
        elif isinstance(sub, (ast.List, ast.Tuple, ast.Set)):
            out.update(id(e) for e in sub.elts)
    return out


def _asks_availability(test: ast.AST, imports: ImportTable) -> bool:
    return any(
        isinstance(n, ast.Call) and imports.resolved(n.func) == "torch.cuda.is_available" for n in walk(test)
    )


class DeviceStringMatcher(Matcher):
    """A device string such as "cuda", "cuda:0" or f"cuda:{rank}" in a position that holds a device.

    `names` (a regular expression) says which variables, parameters, keywords and dict keys hold a
    device; it defaults to device-like names, and lets the same positions find other values, such
    as a process-group backend held in `backend = "nccl"`.
    """

    kind = "device-string"
    node_types = (ast.Call, ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef, ast.Dict, ast.Lambda)
    allowed_keys = frozenset({"devices", "positions", "names"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.devices = _str_list(params, "devices")
        alt = "|".join(re.escape(d) for d in self.devices)
        self.exact = re.compile(rf"^(?:{alt})(?::\d+)?$")
        self.prefix = re.compile(rf"^(?:{alt})(?::|$)")
        self.positions = _positions(params)
        names = params.get("names")
        if names is not None and not isinstance(names, str):
            raise MatcherError("'names' must be a regular expression")
        try:
            self.holder = re.compile(names, re.IGNORECASE) if names else DEVICE_NAME
        except re.error as exc:
            raise MatcherError(f"'names' is not a valid regular expression: {exc}") from None

    def own_tokens(self) -> List[str]:
        return list(self.devices)

    def _holds(self, name: Optional[str]) -> bool:
        return bool(name) and bool(self.holder.match(name or ""))

    # -- which expressions are device strings -------------------------------------------------
    def strings(self, expr: Optional[ast.AST], ctx: Ctx, imports: ImportTable) -> Iterator[Tuple[ast.AST, Ctx]]:
        if expr is None:
            return
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, str) and self.exact.match(expr.value):
                yield expr, ctx
        elif isinstance(expr, ast.JoinedStr):
            first = expr.values[0] if expr.values else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and self.prefix.match(first.value):
                yield expr, ctx
        elif isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Mod)):
            left = expr.left
            if isinstance(left, ast.Constant) and isinstance(left.value, str) and self.prefix.match(left.value):
                yield expr, ctx
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "format":
            base = expr.func.value
            if isinstance(base, ast.Constant) and isinstance(base.value, str) and self.prefix.match(base.value):
                yield expr, ctx
        elif isinstance(expr, ast.IfExp):
            old_torch = asks_for_accelerator_api(expr.test, imports)
            if old_torch is not None:
                # `... if hasattr(torch, "accelerator") else "cuda"`: the CUDA spelling serves old torch only.
                yield from self.strings(expr.orelse if not old_torch else expr.body, ctx, imports)
                return
            if is_cuda_check(expr.test, imports) and not is_flag_device_choice(expr):
                # `"cuda" if torch.cuda.is_available() else "cpu"` is the availability idiom (its own
                # rule fixes the whole ternary); any other CUDA-checked ternary has a non-CUDA branch.
                if _asks_availability(expr.test, imports) and (
                    self._other_device(expr.body) or self._other_device(expr.orelse)
                ):
                    return
                ctx = ctx._replace(guarded=True, flag="")
            yield from self.strings(expr.body, ctx, imports)
            yield from self.strings(expr.orelse, ctx, imports)
        elif isinstance(expr, ast.BoolOp):
            for value in expr.values:
                yield from self.strings(value, ctx, imports)
        elif isinstance(expr, (ast.List, ast.Tuple, ast.Set)) and expr.elts:
            # `devices = ["cuda:0", "cuda:1"]`; a list that also names other devices is a table of
            # supported backends, not a choice of CUDA.
            if all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) and self.exact.match(e.value)
                for e in expr.elts
            ):
                for value in expr.elts:
                    yield from self.strings(value, ctx, imports)

    @staticmethod
    def _other_device(expr: ast.AST) -> bool:
        return isinstance(expr, ast.Constant) and expr.value == "cpu"

    # -- positions ------------------------------------------------------------------------------
    def match(self, node, parent, ctx, imports) -> Iterator[Hit]:
        pos = self.positions
        if isinstance(node, ast.Call):
            yield from self._call(node, ctx, imports)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and "assignment" in pos:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            # (or named for an index, given a device's name: FlashFace's `gpu = 'cuda'`, then `.to(gpu)`)
            if any(
                self._holds(name) or (self.holder is DEVICE_NAME and RANKISH.match(name or ""))
                for name in map(_name_of_target, targets)
            ):
                # `device = "cpu" if n < 0 else f"cuda:{n}"`, then only `tqdm(desc=f"({device}) ...")`: shown
                shown = (
                    not self.in_display
                    and ctx.scope is not None
                    and isinstance(node, ast.Assign)
                    and len(targets) == 1
                    and isinstance(targets[0], ast.Name)
                    and targets[0].id in shown_names(ctx.scope)
                )
                for hit, hctx in self.strings(node.value, ctx, imports):
                    yield hit, Label("assignment", STRING), hctx._replace(declined=True) if shown else hctx
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and "parameter-default" in pos:
            if not isinstance(node, ast.Lambda) and skips_without_cuda(node, imports):
                return  # `@pytest.mark.gpu def test_nope(device="cuda")`: the default is used only with CUDA
            unread: Optional[FrozenSet[str]] = None
            for arg, default in defaulted_parameters(node.args):
                if self._holds(arg.arg):
                    if unread is None:
                        unread = unread_parameters(node)
                    # (MaskingDepth's `MLPHead.__init__(..., device="cuda")`, whose body never names `device`)
                    here = ctx._replace(info_note=UNREAD_PARAMETER_NOTE) if arg.arg in unread else ctx
                    for hit, hctx in self.strings(default, here, imports):
                        yield hit, Label("parameter default", STRING), hctx
        elif isinstance(node, ast.Dict) and "dict-value" in pos:
            for key, value in zip(node.keys, node.values):
                if (
                    key is not None
                    and isinstance(key, ast.Constant)
                    and isinstance(key.value, str)
                    and self._holds(key.value)
                ):
                    for hit, hctx in self.strings(value, ctx, imports):
                        yield hit, Label("config dict", STRING), hctx

    def _call(self, node: ast.Call, ctx: Ctx, imports: ImportTable) -> Iterator[Hit]:
        if not _may_hold_string(node):
            return
        pos = self.positions
        func = node.func
        name = imports.resolved(func)
        seen = set()

        def emit(expr, text):
            if expr is None:
                return
            # Where the value goes is where the argument goes, unless it is an element of a list there.
            role = value_role(node, name, expr)
            listed = _elements(expr)
            for hit, hctx in self.strings(expr, ctx, imports):
                if id(hit) not in seen:
                    seen.add(id(hit))
                    yield hit, Label(text, STRING if id(hit) in listed else role, name), hctx

        if name in _AMP_CALLS:
            # A GradScaler's device is its own rule's (AMP002), not an autocast's.
            if "autocast" in pos and not name.endswith("GradScaler"):
                text = "autocast" if name.endswith("autocast") else name.rsplit(".", 1)[-1]
                yield from emit(call_argument(node, "device_type", 0), text)
                yield from emit(call_argument(node, "device", None), text)
            return
        if name in _MESH_CALLS:
            if "device-mesh" in pos:
                yield from emit(call_argument(node, "device_type", 0), "device mesh")
            return
        if "to" in pos and isinstance(func, ast.Attribute) and func.attr in ("to", "to_empty") and name is None:
            yield from emit(call_argument(node, "device", 0), "`.to()`")
        if "device-call" in pos and name in _DEVICE_CALLS:
            yield from emit(call_argument(node, "type", 0), "`torch.device()`")
        if "set-default-device" in pos and name in _DEFAULT_DEVICE_CALLS:
            yield from emit(call_argument(node, "device", 0), "`torch.set_default_device()`")
        if "map-location" in pos:
            position = 1 if name in _LOAD_CALLS else None
            yield from emit(call_argument(node, "map_location", position), "`map_location`")
        if "argparse-default" in pos and isinstance(func, ast.Attribute) and func.attr == "add_argument":
            yield from emit(call_argument(node, "default", None), "argparse default")
        if "device-keyword" in pos and not (
            isinstance(func, ast.Attribute) and func.attr in ("to", "to_empty") and name is None
        ):
            for kw in node.keywords:
                # `device_types=` registers kernels for device types (its own rule), it picks no device.
                if kw.arg and kw.arg not in ("map_location", "device_type", "device_types") and self._holds(kw.arg):
                    yield from emit(kw.value, f"`{kw.arg}=`")


class DeviceCompareMatcher(Matcher):
    """A check of a device against "cuda": `dev.type == "cuda"`, `"cuda" in str(dev)`, `.startswith("cuda")`."""

    kind = "device-compare"
    node_types = (ast.Compare, ast.Call)
    allowed_keys = frozenset({"devices"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.devices = _str_list(params, "devices")
        alt = "|".join(re.escape(d) for d in self.devices)
        self.exact = re.compile(rf"^(?:{alt})(?::\d+)?$")

    def own_tokens(self) -> List[str]:
        return list(self.devices)

    def _is_dev(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(self.exact.match(node.value))

    def _holds_dev(self, node: ast.AST) -> bool:
        """A literal collection of device names with "cuda" among them (`("cuda", "xpu")`); one holding the name
        of a reference implementation (`impl in ["ref", "cuda"]`, StudioGAN's `bias_act`) lists implementations."""
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            strings = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            return any(self._is_dev(e) for e in node.elts) and not any(v in _IMPLEMENTATIONS for v in strings)
        return False

    def match(self, node, parent, ctx, imports) -> Iterator[Hit]:
        if isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "startswith"
                and node.args
                and self._is_dev(node.args[0])
            ):
                if not isinstance(func.value, ast.Constant):
                    yield node, "startswith"
            return
        sides = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, sides, sides[1:]):
            if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
                if (self._is_dev(left) and not isinstance(right, ast.Constant)) or (
                    self._is_dev(right) and not isinstance(left, ast.Constant)
                ):
                    yield node, "compare"
                    return
            elif isinstance(op, (ast.In, ast.NotIn)):
                if self._is_dev(left) and not isinstance(right, (ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict)):
                    yield node, "contains"
                    return
                if self._holds_dev(right) and not isinstance(left, ast.Constant):
                    yield node, "membership"
                    return


# Names of an operator's implementations beside its CUDA one: `impl in ["ref", "cuda"]` (StudioGAN's
# `bias_act`) picks an implementation, not a device. (Vendor names, `["cuda", "ascend", "maca"]`, are devices.)
_IMPLEMENTATIONS = frozenset({"ref", "reference", "naive", "python", "torch", "pytorch", "native", "eager", "triton"})


class DeviceIndexMatcher(Matcher):
    """A matcher of device indexes, limited by `positions` to the places where one goes."""

    allowed_keys = frozenset({"positions"})
    _ALLOWED = frozenset({"to", "device-call", "device-keyword", "device-map", "device-ids"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.positions = _positions(params, self._ALLOWED)


def _index_value(value: ast.AST) -> bool:
    """What a device index is bound from: an integer, arithmetic (`rank % n`), `int(...)`, a rank-like name or
    attribute, a subscript (`os.environ["LOCAL_RANK"]`), a call of a rank or device-index getter."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, int) and not isinstance(value.value, bool)
    if isinstance(value, ast.BinOp) and _builds_text(value):
        return False  # `cudaid = "cuda:" + str(args.dev)` (GCNII): a device string, reported as one
    if isinstance(value, (ast.BinOp, ast.Subscript, ast.IfExp)):
        return True
    if isinstance(value, (ast.Name, ast.Attribute)):
        return bool(RANKISH.match(value.id if isinstance(value, ast.Name) else value.attr))
    if isinstance(value, ast.Call):
        last = (dotted(value.func) or "").rsplit(".", 1)[-1]
        return last in ("int", "get_rank", "get_local_rank", "current_device", "current_device_index") or bool(
            RANKISH.match(last.replace("get_", ""))
        )
    return False


def _builds_text(expr: ast.BinOp) -> bool:
    """`"cuda:" + str(i)`, `prefix + "%d" % i`: a sum whose operands include a string literal."""
    while isinstance(expr, ast.BinOp):
        if any(isinstance(x, ast.JoinedStr) or (isinstance(x, ast.Constant) and isinstance(x.value, str))
               for x in (expr.left, expr.right)):
            return True
        if not isinstance(expr.left, ast.BinOp):
            return False
        expr = expr.left
    return False


# Callees whose `output_device=`/`device_id=` name the device a replica runs on (DDP, FSDP, DataParallel,
# `init_process_group(device_id=...)`); elsewhere a `device_id=` is the callee's own business (Wan's
# `WanT2V(config, device_id=0)`, reported where it makes its device).
_WRAPS_FOR_DEVICES = re.compile(r"(?:DataParallel|DDP|FSDP|fully_shard|init_process_group)$")


def _bound_to_non_index(name: str, scope: ast.AST) -> bool:
    """Whether `scope`'s own statements (nested functions aside) bind `name`, and only to values that are no
    device index (`device_id = init_distributed_device(args)`, `device_id = torch.device(...)`)."""
    values: List[ast.AST] = []
    stack: List[ast.AST] = list(getattr(scope, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            values.append(node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            if node.target.id == name:
                values.append(node.value if node.value is not None else ast.Constant(0))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.comprehension)):
            targets = (
                [node.target]
                if not isinstance(node, (ast.With, ast.AsyncWith))
                else [i.optional_vars for i in node.items if i.optional_vars is not None]
            )
            if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in walk(t)):
                values.append(ast.Constant(0))  # a loop counter or a context value: may well be an index
        stack.extend(children(node))
    return bool(values) and not any(_index_value(v) for v in values)


STRING_NAME_ATTR = "_portcheck_string_name"  # on a read of a name like an index the module binds only to strings


def mark_string_globals(module: ast.Module) -> None:
    """Mark (`STRING_NAME_ATTR`) the reads of a name read as an index (`RANKISH`) that the module's own statements
    (not its functions' or classes') bind only to a device's name (`_names_a_device`), and that no `global`
    statement rebinds: FlashFace's notebook sets `gpu = 'cuda'` at the top and moves tensors with `.to(gpu)` in
    its functions; a device name, not an index."""
    values: Dict[str, List[ast.AST]] = {}
    stack: List[ast.AST] = list(module.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in walk(target):
                    if isinstance(name, ast.Name):
                        # (`a, b = ...` binds each to what it cannot tell: no string)
                        values.setdefault(name.id, []).append(node.value if target is name else node)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
            for name in walk(node.target):
                if isinstance(name, ast.Name):
                    values.setdefault(name.id, []).append(node)
        stack.extend(children(node))
    # (only a name read as an index asks: `IntDeviceMatcher._index`)
    names = {
        name for name, bound in values.items()
        if RANKISH.match(name) and all(_names_a_device(v) for v in bound)
    }
    if not names:
        return
    for node in module_nodes(module):
        if isinstance(node, ast.Global):
            names.difference_update(node.names)
    for node in module_nodes(module):
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
            setattr(node, STRING_NAME_ATTR, True)


RESOLVED_ATTRIBUTE_ATTR = "_portcheck_resolved_device"  # on a read of `self.cuda_device` its class binds to no index


def mark_resolved_attributes(module: ast.Module) -> None:
    """Mark (`RESOLVED_ATTRIBUTE_ATTR`) the reads of an instance attribute named like an index (`RANKISH`) that
    its class binds, in every method, only to values that are no index (allennlp's readers: `self.cuda_device =
    int_to_device(cuda_device)`, a `torch.device`): a resolved device, reported where it is chosen."""
    for cls in module_nodes(module):
        if not isinstance(cls, ast.ClassDef):
            continue
        values: Dict[str, List[ast.AST]] = {}
        reads: List[ast.Attribute] = []
        for node in walk(cls):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if (name := _self_attribute(target)) is not None:
                        values.setdefault(name, []).append(node.value)
                    elif isinstance(target, (ast.Tuple, ast.List)):
                        for part in walk(target):  # `self.a, self.b = ...`: what each is, it cannot tell
                            if (name := _self_attribute(part)) is not None:
                                values.setdefault(name, []).append(ast.Constant(0))
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and (name := _self_attribute(node.target)):
                values.setdefault(name, []).append(node.value if node.value is not None else ast.Constant(0))
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                if (name := _self_attribute(node)) and RANKISH.match(name):
                    reads.append(node)
        resolved = {name for name, bound in values.items() if not any(_index_value(v) for v in bound)}
        for read in reads:
            if read.attr in resolved:
                setattr(read, RESOLVED_ATTRIBUTE_ATTR, True)


def _self_attribute(node: ast.AST) -> Optional[str]:
    """`cuda_device` of `self.cuda_device`; None for anything else."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _names_a_device(value: ast.AST) -> bool:
    """A string constant (`'cuda'`), or a device's type (`DEVICE.type`, what `portcheck fix` writes for it)."""
    return (isinstance(value, ast.Constant) and isinstance(value.value, str)) or (
        isinstance(value, ast.Attribute) and value.attr == "type"
    )


def _binds(name: str, scope: ast.AST) -> bool:
    """Whether `scope` (a function) takes `name` as a parameter or binds it in its own statements."""
    args = getattr(scope, "args", None)
    if isinstance(args, ast.arguments) and any(
        a.arg == name for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a
    ):
        return True
    stack: List[ast.AST] = list(getattr(scope, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
        stack.extend(children(node))
    return False


class IntDeviceMatcher(DeviceIndexMatcher):
    """An integer used as a CUDA device index, where the context makes it one."""

    kind = "int-device"
    node_types = (ast.Call,)

    def own_tokens(self) -> List[str]:
        out = []
        if "device-ids" in self.positions:
            out += ["device_ids", "device_id"]
        if self.positions & {"to", "device-call", "device-keyword", "device-map"}:
            out += ["cuda", "nccl"]  # an integer is a CUDA device only where the file uses CUDA
        return out

    @staticmethod
    def _index(expr: Optional[ast.AST], scope: Optional[ast.AST] = None, imports: Optional[ImportTable] = None) -> bool:
        """An integer constant, or a name that reads as a device index (`local_rank`, `device_id`) and that
        the enclosing function does not bind to anything else (`device_id = init_distributed_device(args)`
        returns a `torch.device`) nor imports (FramePack's `from diffusers_helper.memory import gpu` is a
        `torch.device`, reported where that module makes it)."""
        if expr is None:
            return False
        if isinstance(expr, ast.Constant):
            return isinstance(expr.value, int) and not isinstance(expr.value, bool)
        name = expr.id if isinstance(expr, ast.Name) else expr.attr if isinstance(expr, ast.Attribute) else None
        if not (name and RANKISH.match(name)) or getattr(expr, RESOLVED_ATTRIBUTE_ATTR, False):
            return False
        if isinstance(expr, ast.Name) and imports is not None and expr.id in imports.aliases:
            return False
        if isinstance(expr, ast.Name) and getattr(expr, STRING_NAME_ATTR, False):
            # `gpu = 'cuda'` at the module's top, read in a function that does not bind `gpu` itself
            return scope is not None and _binds(expr.id, scope) and not _bound_to_non_index(expr.id, scope)
        return not (isinstance(expr, ast.Name) and scope is not None and _bound_to_non_index(expr.id, scope))

    def match(self, node: ast.Call, parent, ctx, imports) -> Iterator[Hit]:
        pos = self.positions
        scope = ctx.scope
        name = imports.resolved(node.func)
        func = node.func
        if "device-ids" in pos:
            for kw in node.keywords:
                if kw.arg == "device_ids" and isinstance(kw.value, (ast.List, ast.Tuple)):
                    if kw.value.elts and all(self._index(e, scope, imports) for e in kw.value.elts):
                        yield kw.value, Label("`device_ids`", DEVICE_IDS, name)
                elif (
                    kw.arg in ("output_device", "device_id")
                    and _WRAPS_FOR_DEVICES.search(dotted(func) or "")
                    and self._index(kw.value, scope, imports)
                ):
                    # FSDP's `device_id=local_rank` too, which takes a device
                    role = DEVICE_IDS if kw.arg == "output_device" else value_role(node, name, kw.value)
                    yield kw.value, Label(f"`{kw.arg}`", role, name)
        if not ctx.cuda_context:
            return
        if "device-map" in pos:
            for kw in node.keywords:
                if kw.arg != "device_map":
                    continue
                if self._index(kw.value, scope, imports):
                    yield kw.value, Label("`device_map`", DEVICE_MAP, name)
                elif isinstance(kw.value, ast.Dict):
                    for key, value in zip(kw.value.keys, kw.value.values):
                        if isinstance(key, ast.Constant) and key.value == "" and self._index(value, scope, imports):
                            yield value, Label("`device_map`", DEVICE_MAP, name)
        if "to" in pos and isinstance(func, ast.Attribute) and func.attr == "to" and name is None and node.args:
            if self._index(node.args[0], scope, imports) and not (
                isinstance(node.args[0], ast.Constant) and len(node.args) > 1
            ):
                yield node.args[0], Label("`.to()`", value_role(node, name, node.args[0]), name)
        if (
            "device-call" in pos
            and name == "torch.device"
            and len(node.args) == 1
            and self._index(node.args[0], scope, imports)
        ):
            yield node.args[0], Label("`torch.device()`", value_role(node, name, node.args[0]), name)
        if "device-keyword" in pos and name != "torch.device":
            for kw in node.keywords:
                if kw.arg == "device" and self._index(kw.value, scope, imports):
                    # an index passed as `device=` names a device, whatever the call
                    yield kw.value, Label("`device=`", DEVICE, name)


class TensorControlFlowMatcher(Matcher):
    """`if`/`while`/`assert` whose test forces a tensor value to the host (`.item()`, `.any()`, `torch.equal`)."""

    kind = "control-flow"
    node_types = (ast.If, ast.While, ast.Assert)
    allowed_keys = frozenset({"methods", "calls"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.methods = frozenset(_str_list(params, "methods"))
        self.calls = frozenset(_str_list(params, "calls", required=False))

    def own_tokens(self) -> List[str]:
        return sorted(self.methods) + [c.rsplit(".", 1)[-1] for c in sorted(self.calls)]

    def own_clauses(self) -> Tuple[Clause, ...]:
        # A method is written after its dot; a call needs every segment of its name.
        methods = tuple((Attr(m),) for m in sorted(self.methods))
        return (methods + NameSet(sorted(self.calls)).clause(),)

    def match(self, node, parent, ctx, imports) -> Iterator[Hit]:
        if type(node) is ast.Assert and not ctx.in_loop and (ctx.in_init or not ctx.in_function):
            # `assert not torch.isnan(self.weights).any()` in a constructor or a script's top level: a
            # one-off check, run once, neither a sync per step nor a traced branch.
            return
        if type(node) is ast.Assert and ctx.bench_file:
            return  # `assert torch.allclose(out1, out2)` in a benchmark: the timed variants agree, checked once
        if ctx.error_path:
            return  # `except OverflowError:` then a look for the parameter that overflowed: a rare error path
        if ctx.periodic:
            return  # `if step % eval_every == 0:` then a NaN check per parameter: once every k steps
        if reads_stop_token(node.test, None, ctx.loop, ctx.scope):
            return  # `if topi.item() == EOS_token: break`: a decoder's stop; it leaves the loop and branches no graph
        for sub in walk(node.test):
            if isinstance(sub, ast.Call):
                func = sub.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr in self.methods
                    and imports.resolved(func.value) is None
                    and not is_host_value(func.value, ctx.scope, imports, copies=False)
                ):
                    # numpy arrays and pandas values have .any()/.all() too: in a module that uses them,
                    # require a torch call inside the receiver.
                    if (
                        func.attr == "item"
                        or _mentions_torch(func.value, imports)
                        or not (imports.imports_any(_ARRAY_LIBRARIES) or _builds_array(func.value))
                    ):
                        yield node.test, func.attr
                        return
                if imports.resolved(func) in self.calls and not (
                    sub.args and is_host_value(sub.args[0], ctx.scope, imports, copies=False)
                ):
                    yield node.test, imports.resolved(func) or ""
                    return


_ARRAY_LIBRARIES = ("numpy", "pandas", "jax", "tensorflow", "cupy", "scipy", "polars")


# The names numpy and pandas go by, for a notebook cell that uses them after another cell imports them.
_ARRAY_ALIASES = frozenset({"np", "numpy", "pd", "pandas"})


def _builds_array(expr: ast.AST) -> bool:
    """`(np.array(lang_cur)[:, -k:] == pad)`: the value is built by numpy or pandas (by their usual names)."""
    return any(
        isinstance(sub, ast.Call) and (dotted(sub.func) or "").split(".", 1)[0] in _ARRAY_ALIASES
        for sub in walk(expr)
    )


def _mentions_torch(expr: ast.AST, imports) -> bool:
    for sub in walk(expr):
        if isinstance(sub, ast.Call):
            name = imports.resolved(sub.func) or ""
            if name.startswith("torch."):
                return True
    return False


for _cls in (DeviceStringMatcher, DeviceCompareMatcher, IntDeviceMatcher, TensorControlFlowMatcher):
    register(_cls)

__all__ = ["DEVICE_NAME", "RANKISH", "DeviceStringMatcher", "DeviceCompareMatcher", "IntDeviceMatcher", "dotted"]
