"""How a fixed module names its device: resolved once per module into a variable (generic, cpu),
written as a literal (`literal-device`), or asked of torch_xla at each use (xla)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Tuple

import libcst as cst

from portcheck.fixer.syntax import small_statements
from portcheck.fixer.torchapi import CHECK_AVAILABLE_SINCE, at_least

# `check_available=True` makes `current_accelerator` return None without an accelerator (2.7+).
RESOLVE_CHECKED = 'torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")'
# The tutorial idiom that works from 2.6 on, where `current_accelerator()` takes no argument.
RESOLVE_COMPAT = (
    'torch.device(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")'
)
RESOLVE_CPU = 'torch.device("cpu")'
RESOLVERS = (RESOLVE_CHECKED, RESOLVE_COMPAT, RESOLVE_CPU)
ACCELERATOR_SINCE = "2.6"

NAME_CANDIDATES = ("DEVICE", "ACCELERATOR_DEVICE", "TORCH_DEVICE", "_DEVICE")
XLA_DEVICE = "torch_xla.device()"
AVAILABLE = "torch.accelerator.is_available()"


@dataclass(frozen=True)
class Spelling:
    """The code a fix writes wherever a device, a device type or a backend is needed."""

    style: str  # "variable" | "literal" | "xla"
    name: str = ""  # the module-level device variable (variable style)
    resolver: str = ""  # its value
    literal: str = ""  # the device type written out (literal style)
    requires: str = ""  # the torch release the resolver needs

    def device(self) -> str:
        if self.style == "variable":
            return self.name
        if self.style == "xla":
            return XLA_DEVICE
        return f'"{self.literal}"'

    def device_type(self) -> str:
        """A string expression naming the device type."""
        if self.style == "variable":
            return f"{self.name}.type"
        if self.style == "xla":
            return '"xla"'
        return f'"{self.literal}"'

    def indexed(self, index: str) -> str:
        """A device with an explicit index; XLA runs one device per process, so the index goes."""
        if self.style == "xla":
            return XLA_DEVICE
        return f"torch.device({self.device_type()}, {index})"

    def type_prefix(self) -> Optional[Tuple[str, str]]:
        """How to rewrite a leading "cuda" inside a device string: ("expr", code) or ("text", text).
        None: the whole string becomes the device (XLA keeps no index)."""
        if self.style == "variable":
            return ("expr", self.device_type())
        if self.style == "literal":
            return ("text", self.literal)
        return None

    def location(self) -> str:
        """A `map_location`: the device without an index, since `torch.load` cannot restore to "cpu:0".
        XLA checkpoints load on the CPU and move with the model."""
        return '"cpu"' if self.style == "xla" else self.device()

    def guard(self) -> Optional[str]:
        """The test that makes an accelerator-only call safe, or None where none is needed."""
        return None if self.style == "xla" else AVAILABLE

    def backend(self) -> str:
        if self.style == "variable":
            return f"torch.distributed.get_default_backend_for_device({self.name})"
        if self.style == "xla":
            return '"xla"'
        return f'"{self.literal}"'

    @property
    def device_is_object(self) -> bool:
        """True when `device()` is a torch.device (so `torch.device("cuda")` can become it)."""
        return self.style != "literal"


def spelling_for(target: str, min_torch: str, literal_device: bool, name: str) -> Spelling:
    if target == "xla":
        return Spelling("xla")
    if target == "neuron" and literal_device:
        return Spelling("literal", literal="neuron")
    if target == "cpu":
        return Spelling("variable", name=name, resolver=RESOLVE_CPU)
    if at_least(min_torch, CHECK_AVAILABLE_SINCE):
        return Spelling("variable", name=name, resolver=RESOLVE_CHECKED, requires=CHECK_AVAILABLE_SINCE)
    return Spelling("variable", name=name, resolver=RESOLVE_COMPAT, requires=ACCELERATOR_SINCE)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEFINITION = re.compile(
    r"^([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[ \t]*(" + "|".join(re.escape(r) for r in RESOLVERS) + r")[ \t]*(?:#.*)?$",
    re.MULTILINE,
)


def existing_name(texts: Iterable[str]) -> Optional[str]:
    """The name of a device variable an earlier fix defined (`NAME = <resolver>` at top level)."""
    for text in texts:
        m = _DEFINITION.search(text)
        if m:
            return m.group(1)
    return None


def choose_name(texts: Sequence[str]) -> Tuple[str, bool]:
    """(name, already defined): reuse an earlier fix's variable, else the first unused candidate."""
    found = existing_name(texts)
    if found:
        return found, True
    used = set()
    for text in texts:
        used.update(_IDENT.findall(text))
    for candidate in NAME_CANDIDATES:
        if candidate not in used:
            return candidate, False
    n = 2
    while f"DEVICE_{n}" in used:
        n += 1
    return f"DEVICE_{n}", False


def _is_import(stmt: cst.CSTNode) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine):
        return any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)
    if isinstance(stmt, (cst.Try, cst.If)):
        return any(isinstance(n, (cst.Import, cst.ImportFrom)) for n in small_statements(stmt))
    return False


def _is_preamble(stmt: cst.CSTNode, index: int) -> bool:
    """A module docstring or a `from __future__` import: nothing may precede them."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    if (
        index == 0
        and isinstance(small, cst.Expr)
        and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))
    ):
        return True
    return (
        isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and small.module.value == "__future__"
    )


def insert_definition(tree: cst.Module, spelling: Spelling) -> cst.Module:
    """`tree` with `NAME = <resolver>` after its imports and before the first use of NAME."""
    body = list(tree.body)
    # A textual search is enough (a mention in a comment only moves the definition up) and avoids
    # walking every expression of the module.
    word = re.compile(rf"\b{re.escape(spelling.name)}\b")
    first_use = next((i for i, s in enumerate(body) if word.search(tree.code_for_node(s))), len(body))
    at = 0
    for i, stmt in enumerate(body[:first_use]):
        if _is_import(stmt) or _is_preamble(stmt, i):
            at = i + 1
    stmt = cst.parse_statement(f"{spelling.name} = {spelling.resolver}\n")
    if at > 0:
        stmt = stmt.with_changes(leading_lines=[cst.EmptyLine()])
    body.insert(at, stmt)
    return tree.with_changes(body=body)


def defines(tree: cst.Module, name: str) -> bool:
    """True when a top-level statement assigns `name`."""
    for stmt in tree.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets
                ):
                    return True
                if (
                    isinstance(small, cst.AnnAssign)
                    and isinstance(small.target, cst.Name)
                    and small.target.value == name
                ):
                    return True
    return False
