"""Matcher kinds that follow a value through the names of one scope.

`int-device-flow`: an integer that can only be a CUDA device index (`int(os.environ["LOCAL_RANK"])`,
`rank % torch.cuda.device_count()`, `torch.cuda.current_device()`) is bound to a name, and the name
is passed on where a device goes: `.to(local_rank)`, `device=local_rank`, `torch.device(local_rank)`,
`device_ids=[local_rank]`, `device_map={"": local_rank}`. The name can be anything, so the
name-based `int-device` kind misses it; here the binding is what makes it a device.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Set

from portcheck.pyscan.context import OFF_SWITCH_ATTR, unread_locals
from portcheck.pyscan.devices import DeviceIndexMatcher
from portcheck.pyscan.environ import variable_read
from portcheck.pyscan.imports import ImportTable, dotted, none_operand
from portcheck.pyscan.matchers import Hit, Label, register, value_role
from portcheck.pyscan.nodes import children
from portcheck.torchfacts import DEVICE, DEVICE_IDS, DEVICE_MAP, STRING

# Environment variables that hold a process's local device index.
LOCAL_INDEX_VARS = frozenset(
    {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK"}
)
# The CUDA spellings and the device-generic ones `portcheck fix` writes in their place: the index they
# derive is the same bare integer, so fixing the call must not hide the integer device it flows into.
_COUNT_CALLS = frozenset({"torch.cuda.device_count", "torch.accelerator.device_count"})
_INDEX_CALLS = frozenset(
    {"torch.cuda.current_device", "torch.accelerator.current_device_index", "torch.accelerator.current_device_idx"}
)
# On a name read where a device goes, bound from `torch.cuda.current_device()`: that call's line. The call is
# reported where it is, and a port that makes it the device (`torch.accelerator.current_device_index()`, an
# index each accelerator reads as its own) ports the reads with it (sail-sg/oat's `device =
# torch.cuda.current_device()` and the `.to(device)` after it).
INDEX_SOURCE_ATTR = "_portcheck_index_source"
# On a value bound to a name its function never reads: it picks nothing.
UNREAD_VALUE_ATTR = "_portcheck_unread_value"
_CUDA_INDEX_CALL = "torch.cuda.current_device"
_SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def is_device_index(expr: ast.AST, imports: ImportTable, known: Set[str]) -> bool:
    """Whether `expr` can only be a CUDA device index."""
    if isinstance(expr, ast.Name):
        return expr.id in known
    if isinstance(expr, ast.Call):
        name = imports.resolve(expr.func)
        if name in _INDEX_CALLS:
            return True
        if isinstance(expr.func, ast.Name) and expr.func.id == "int" and expr.args:
            return variable_read(expr.args[0], imports) in LOCAL_INDEX_VARS
        return False
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mod):
        right = expr.right
        return isinstance(right, ast.Call) and imports.resolve(right.func) in _COUNT_CALLS
    if isinstance(expr, ast.IfExp):
        # `torch.accelerator.current_device_index() if torch.accelerator.is_available() else None`: an
        # index, or no device at all on the other side.
        sides = (expr.body, expr.orelse)
        return any(is_device_index(s, imports, known) for s in sides) and all(
            is_device_index(s, imports, known) or (isinstance(s, ast.Constant) and s.value is None) for s in sides
        )
    return False


def _process_index(expr: ast.AST) -> bool:
    """`Accelerator().process_index`, `state.local_process_index`: the process's device index, which
    `device_map` takes as a CUDA device."""
    return isinstance(expr, ast.Attribute) and expr.attr in ("process_index", "local_process_index")


def _statements(body: List[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of one scope in source order, nested blocks included, nested scopes excluded."""
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, _NESTED):
            continue
        children: List[ast.stmt] = []
        for field in ("body", "orelse", "finalbody"):
            if field == "body" and isinstance(stmt, ast.If) and getattr(stmt.test, OFF_SWITCH_ATTR, False):
                continue  # `USE_TORCH_DDP = False`, then `if USE_TORCH_DDP:`: switched off in the code (ru-gpts)
            children.extend(getattr(stmt, field, None) or [])
        for handler in getattr(stmt, "handlers", None) or []:
            children.extend(handler.body)
        for case in getattr(stmt, "cases", None) or []:
            children.extend(case.body)
        stack.extend(reversed(children))


def _params(scope: ast.AST) -> Set[str]:
    """The parameter names of a function scope; none for a module."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    args = scope.args
    return {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}


def _default_fills(stmt: ast.stmt, params: Set[str]) -> Iterator[int]:
    """`if device is None: device = torch.cuda.current_device()` in a function taking `device`: the ids of
    the assignments of `stmt` (an `if`) that only fill in a parameter's default (TransformerEngine's
    `GroupedTensorStorage`). A caller may pass a `torch.device` there, so the name does not hold only an
    index; the default itself is reported where it is made."""
    if not (params and isinstance(stmt, ast.If)):
        return
    test = stmt.test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        asked: Optional[ast.AST] = test.operand
    else:
        asked = none_operand(test, (ast.Is, ast.Eq))  # `device is None`, `device == None`
    if not (isinstance(asked, ast.Name) and asked.id in params):
        return
    for inner in stmt.body:
        if (
            isinstance(inner, ast.Assign)
            and len(inner.targets) == 1
            and isinstance(inner.targets[0], ast.Name)
            and inner.targets[0].id == asked.id
        ):
            yield id(inner)


def _expressions(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The expression nodes of one statement (not of the statements nested in it)."""
    stack: List[ast.AST] = []
    for field, value in ast.iter_fields(stmt):
        if field in ("body", "orelse", "finalbody", "handlers", "cases", "decorator_list"):
            continue
        if isinstance(value, ast.AST):
            stack.append(value)
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, ast.AST) and not isinstance(v, ast.stmt))
    while stack:
        node = stack.pop()
        if isinstance(node, _NESTED):
            continue
        yield node
        stack.extend(children(node))


class IntDeviceFlowMatcher(DeviceIndexMatcher):
    """A name bound to a CUDA device index and passed where a device goes (see the module docstring)."""

    kind = "int-device-flow"
    node_types = _SCOPES

    def own_tokens(self) -> List[str]:
        # A file without one of these binds no device index (the pre-filter keeps such files).
        tokens = sorted(LOCAL_INDEX_VARS - {"OMPI_COMM_WORLD_LOCAL_RANK"}) + ["device_count", "current_device"]
        return tokens + (["process_index"] if "device-map" in self.positions else [])

    def match(self, node, parent, ctx, imports) -> Iterator[Hit]:
        body = node.body
        known: Set[str] = set()
        sources: Dict[str, int] = {}  # name -> the line of the `torch.cuda.current_device()` it holds
        pos = self.positions
        params = _params(node)
        fills: Set[int] = set()
        for stmt in _statements(body):
            fills.update(_default_fills(stmt, params))  # an `if` comes before the statements of its body
            if isinstance(stmt, _NESTED):
                continue
            for expr in _expressions(stmt):
                if isinstance(expr, ast.Call) and known:
                    for hit in self._uses(expr, imports, known, pos):
                        if isinstance(hit[0], ast.Name) and hit[0].id in sources:
                            setattr(hit[0], INDEX_SOURCE_ATTR, sources[hit[0].id])
                        yield hit
            if "device-map" in pos and isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Dict):
                targets = [t.id if isinstance(t, ast.Name) else getattr(t, "attr", "") for t in stmt.targets]
                if any(t.endswith("device_map") for t in targets):
                    # (bound to a name the function never reads: sail-sg/VeriFree's `device_map = {"": local_rank}`
                    # beside `from_pretrained(..., device_map="auto")`)
                    single = len(targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    unread = single and targets[0] in unread_locals(node)
                    for key, value in zip(stmt.value.keys, stmt.value.values):
                        if (
                            isinstance(key, ast.Constant)
                            and key.value == ""
                            and (is_device_index(value, imports, known) or _process_index(value))
                        ):
                            if unread:
                                setattr(value, UNREAD_VALUE_ATTR, True)
                            yield value, Label("`device_map`", DEVICE_MAP)
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                sources.pop(name, None)
                if id(stmt) in fills:
                    known.discard(name)  # callers may pass a device: the name is not only an index
                elif is_device_index(stmt.value, imports, known):
                    known.add(name)
                    value = stmt.value
                    if isinstance(value, ast.Call) and imports.resolve(value.func) == _CUDA_INDEX_CALL:
                        sources[name] = stmt.lineno
                elif not (isinstance(stmt.value, ast.Constant) and type(stmt.value.value) is int):
                    known.discard(name)  # `local_rank = 0` in the other branch is an index too

    def _uses(self, call: ast.Call, imports: ImportTable, known: Set[str], pos) -> Iterator[Hit]:
        def held(expr: Optional[ast.AST]) -> bool:
            return isinstance(expr, ast.Name) and expr.id in known

        func = call.func
        qualified = imports.resolve(func)
        if (
            "to" in pos
            and isinstance(func, ast.Attribute)
            and func.attr == "to"
            and qualified is None
            and call.args
            and held(call.args[0])
        ):
            yield call.args[0], Label("`.to()`", value_role(call, qualified, call.args[0]), qualified)
        if "device-call" in pos and qualified == "torch.device" and len(call.args) == 1 and held(call.args[0]):
            yield call.args[0], Label("`torch.device()`", value_role(call, qualified, call.args[0]), qualified)
        for kw in call.keywords:
            if "device-keyword" in pos and kw.arg == "device" and held(kw.value) and qualified != "torch.device":
                yield kw.value, Label("`device=`", DEVICE, qualified)
            elif "device-ids" in pos and kw.arg in ("device_ids", "output_device", "device_id"):
                values = kw.value.elts if isinstance(kw.value, (ast.List, ast.Tuple)) else [kw.value]
                for value in values:
                    if held(value):
                        role = _index_role(call, qualified, kw.arg, kw.value, value)
                        yield value, Label(f"`{kw.arg}=`", role, qualified)
            elif "device-map" in pos and kw.arg == "device_map":
                if held(kw.value):
                    yield kw.value, Label("`device_map`", DEVICE_MAP, qualified)
                elif isinstance(kw.value, ast.Dict):
                    for key, value in zip(kw.value.keys, kw.value.values):
                        if isinstance(key, ast.Constant) and key.value == "" and (held(value) or _process_index(value)):
                            yield value, Label("`device_map`", DEVICE_MAP, qualified)


def _index_role(call: ast.Call, callee: Optional[str], keyword: str, given: ast.AST, value: ast.AST) -> str:
    """The role of an index passed to `keyword` (as `given`, or as the element `value` of a list there)."""
    if value is not given:
        return DEVICE_IDS if keyword == "device_ids" else STRING  # only `device_ids` takes a list
    return DEVICE_IDS if keyword in ("device_ids", "output_device") else value_role(call, callee, value)


register(IntDeviceFlowMatcher)

__all__ = [
    "INDEX_SOURCE_ATTR",
    "UNREAD_VALUE_ATTR",
    "IntDeviceFlowMatcher",
    "LOCAL_INDEX_VARS",
    "is_device_index",
    "dotted",
]
