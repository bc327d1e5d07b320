"""What a CUDA check protects.

`torch.cuda.is_available()`, `device == "cuda"` and `x.is_cuda` are questions; whether a rewrite keeps
their meaning depends on the code they guard. This module finds that code (the *region*) and the
CUDA-bound constructs in it (the *markers*): a check may only be widened to every accelerator when
each marker is rewritten too (`Marker.fixable`), and a comparison guarding accelerator-generic work
(pinning, non-blocking copies) must stay false on the CPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, List, Mapping, Optional, Sequence, Tuple

import libcst as cst

from portcheck.fixer.names import Bindings
from portcheck.fixer.syntax import code_of, keyword_arg, string_value, walk
from portcheck.torchfacts import CUDA_DEVICE, CUDA_ONLY_NAMES, CUDA_ONLY_STRINGS

# A skip reason or assert message that says the code needs CUDA (or an NVIDIA GPU).
CUDA_MESSAGE = re.compile(r"cuda|gpu|nvidia|nccl", re.IGNORECASE)
_SKIP_DECORATORS = ("skipIf", "skipUnless", "skipif", "skip_if", "skip_unless")
_EXITS = (cst.Return, cst.Raise, cst.Continue, cst.Break)


@dataclass(frozen=True)
class Marker:
    node: cst.CSTNode
    label: str
    fixable: bool  # False: CUDA-only work nothing rewrites (NCCL, CUDA extensions, torch.version.cuda)


@dataclass(frozen=True)
class Protected:
    """The code a check guards: `refusal` when no rewrite can keep its meaning, else the nodes whose
    markers decide (the check's whole condition included)."""

    region: Tuple[cst.CSTNode, ...]
    refusal: Optional[str] = None
    generic_work: bool = False  # the region does accelerator-generic work (pinning, non-blocking copies)


def counted_loop(node: cst.CSTNode, parents: Mapping[int, cst.CSTNode]) -> Optional[cst.CSTNode]:
    """The loop or comprehension `node` bounds, as `range(node)`'s only argument (or `range(0, node)`'s
    last): `for i in range(torch.cuda.device_count()):`, `[f(i) for i in range(torch.cuda.device_count())]`."""
    arg = parents.get(id(node))
    call = parents.get(id(arg)) if isinstance(arg, cst.Arg) else None
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value == "range"
        and call.args
        and call.args[-1] is arg
    ):
        return None
    loop = parents.get(id(call))
    if isinstance(loop, cst.For) and loop.iter is call:
        return loop
    if isinstance(loop, cst.CompFor) and loop.iter is call:
        outer = parents.get(id(loop))
        while isinstance(outer, cst.CompFor):
            outer = parents.get(id(outer))
        return outer
    return None


def condition_top(node: cst.CSTNode, parents: Mapping[int, cst.CSTNode]) -> cst.CSTNode:
    """The whole boolean condition `node` is part of (`a and not b`)."""
    top = node
    parent = parents.get(id(top))
    while (
        isinstance(parent, (cst.BooleanOperation, cst.Comparison))  # `device_count() > 1` asks the same question
        or (isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not))
    ):
        top, parent = parent, parents.get(id(parent))
    return top


def _following(stmt: cst.CSTNode, parents: Mapping[int, cst.CSTNode]) -> List[cst.CSTNode]:
    """The statements after `stmt` in its block."""
    block = parents.get(id(stmt))
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)):
        return []
    for i, sibling in enumerate(body):
        if sibling is stmt:
            return list(body[i + 1:])
    return []


def _statement_of(node: cst.CSTNode, parents: Mapping[int, cst.CSTNode]) -> Optional[cst.CSTNode]:
    current: Optional[cst.CSTNode] = node
    while current is not None and not isinstance(current, cst.BaseStatement):
        current = parents.get(id(current))
    return current


def _message(node: Optional[cst.CSTNode]) -> str:
    return " ".join(s for s in (string_value(n) for n in walk(node)) if s) if node is not None else ""


def _exits(block: cst.BaseSuite) -> bool:
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    last = body[-1] if body else None
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, _EXITS) for s in last.body) or "exit" in code_of(last)
    return isinstance(last, cst.SimpleStatementSuite) and any(isinstance(s, _EXITS) for s in last.body)


def _skips_for_cuda(block: cst.BaseSuite) -> bool:
    """`raise unittest.SkipTest("needs CUDA")`, `pytest.skip("requires a GPU")`, `sys.exit("no CUDA")`."""
    for stmt in walk(block):
        if isinstance(stmt, cst.Raise) and CUDA_MESSAGE.search(_message(stmt.exc)):
            return True
        if isinstance(stmt, cst.Call):
            func = stmt.func
            name = (
                func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            )
            if name.lower() in ("skip", "skiptest", "exit", "fail", "xfail") and CUDA_MESSAGE.search(_message(stmt)):
                return True
    return False


def protected(node: cst.CSTNode, parents: Mapping[int, cst.CSTNode]) -> Protected:
    """The region a check at `node` guards, or why it is left alone."""
    top = condition_top(node, parents)
    parent = parents.get(id(top))
    if isinstance(parent, (cst.If, cst.While)) and parent.test is top:
        if isinstance(parent, cst.If) and _skips_for_cuda(parent.body):
            return Protected((), "the branch skips or stops because CUDA itself is required (its message says so)")
        if isinstance(parent, cst.If) and isinstance(parent.orelse, cst.Else) and _skips_for_cuda(parent.orelse.body):
            # `if torch.cuda.is_available(): <the CUDA build> else: raise ValueError("CUDA is not available")`
            return Protected((), "the other branch stops because CUDA itself is required (its message says so)")
        region: List[cst.CSTNode] = [parent]
        if isinstance(parent, cst.If) and _exits(parent.body):
            region += _following(parent, parents)  # `if not available: return` guards the rest
        return Protected(tuple(region))
    if isinstance(parent, cst.IfExp) and parent.test is top:
        return Protected((parent,))
    if isinstance(parent, cst.Assert) and parent.test is top:
        if CUDA_MESSAGE.search(_message(parent.msg)):
            return Protected((), "the assert says CUDA itself is required")
        return Protected((top, *_following(_statement_of(parent, parents) or parent, parents)))
    loop = counted_loop(top, parents)
    if loop is not None:
        # `for i in range(torch.cuda.device_count()):`: the loop runs once per device, and never without CUDA
        return Protected((loop,))
    if isinstance(parent, cst.Arg):
        call = parents.get(id(parent))
        decorator = parents.get(id(call)) if isinstance(call, cst.Call) else None
        if isinstance(decorator, cst.Decorator) and isinstance(call, cst.Call):
            func = call.func
            name = (
                func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            )
            if name in _SKIP_DECORATORS:
                reason = keyword_arg(call, "reason") or (call.args[1] if len(call.args) > 1 else None)
                if CUDA_MESSAGE.search(_message(reason)):
                    return Protected((), "the test is skipped because it needs CUDA itself (the skip reason says so)")
                return Protected((parents.get(id(decorator)) or decorator,))
    if isinstance(parent, (cst.Assign, cst.AnnAssign)):
        # A flag: what it guards comes later in the same block.
        stmt = _statement_of(parent, parents)
        return Protected((top, *(_following(stmt, parents) if stmt is not None else [])))
    return Protected((top,))


_GENERIC_KEYWORDS = ("non_blocking", "pin_memory")
# A name any of whose parts is CUDA's own (outside `torch.cuda`, whose calls may have fixes).
_CUDA_WORD = re.compile(r"cuda", re.IGNORECASE)
_CUDA_NAMED = re.compile(r"(?:^|\.)(?:cuda|CUDA|cudnn|nccl|NCCL|nvtx)\w*(?:\.|$)")


def _is_generic_work(node: cst.CSTNode, names: Bindings) -> bool:
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "pin_memory":
            return True
        for key in _GENERIC_KEYWORDS:
            arg = keyword_arg(node, key)
            if arg is not None and not (isinstance(arg.value, cst.Name) and arg.value.value == "False"):
                return True
    return False


def markers(region: Sequence[cst.CSTNode], names: Bindings, skip: cst.CSTNode) -> Iterator[Marker]:
    """CUDA-bound constructs in `region` (not inside `skip`, the check itself)."""
    stack: List[cst.CSTNode] = list(reversed(region))
    while stack:
        node = stack.pop()
        if node is skip or isinstance(node, (cst.Import, cst.ImportFrom)):
            continue
        if isinstance(node, (cst.Attribute, cst.Name)):
            name = names.resolve(node)
            if name is not None:
                if name in CUDA_ONLY_NAMES:
                    yield Marker(node, name, False)
                    continue
                if name.startswith("torch.cuda.") or name == "torch.cuda":
                    yield Marker(node, name, True)
                    continue
                if _CUDA_NAMED.search(name):
                    # `ProfilerActivity.CUDA`, `torch.backends.cudnn.*`, `CUDA_HOME`: CUDA's own, no fix.
                    yield Marker(node, name, False)
                    continue
            if isinstance(node, cst.Attribute) and node.attr.value == "is_cuda":
                yield Marker(node, code_of(node), True)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "cuda":
            yield Marker(node, code_of(node.func) + "()", True)
        elif isinstance(node, cst.FormattedString):
            first = node.parts[0] if node.parts else None
            if isinstance(first, cst.FormattedStringText) and CUDA_DEVICE.match(first.value.split(":", 1)[0]):
                yield Marker(node, code_of(node), True)  # f"cuda:{i}"
                continue
        elif isinstance(node, cst.SimpleString):
            value = string_value(node)
            if value in CUDA_ONLY_STRINGS:
                yield Marker(node, repr(value), False)
            elif value is not None and CUDA_DEVICE.match(value):
                yield Marker(node, repr(value), True)
            continue
        elif (
            isinstance(node, cst.Call)
            and names.resolve(node.func) is None
            and _CUDA_WORD.search(_callee_name(node.func))
        ):
            # The project's own CUDA helper (`check_cuda_fp8_capability()`): a question only CUDA answers.
            yield Marker(node, code_of(node.func) + "()", False)
            continue
        if isinstance(node, cst.Attribute):
            # `m.cuda` names no binding by its `cuda`: a module's `from pytext.utils import cuda` is not that
            stack.extend(reversed([c for c in node.children if c is not node.attr]))
            continue
        stack.extend(reversed(node.children))


def _callee_name(func: cst.BaseExpression) -> str:
    """The called name itself (`check_cuda_fp8_capability`, `x.cuda_stats`), "" for anything else."""
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return ""


def generic_work(region: Sequence[cst.CSTNode], names: Bindings) -> bool:
    return any(_is_generic_work(n, names) for root in region for n in walk(root))
