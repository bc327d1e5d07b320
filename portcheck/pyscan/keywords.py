"""Matcher kinds for settings passed by keyword, whatever the callee is called.

`keyword`: a keyword argument that switches on a CUDA-only library or mode through configuration:
`load_in_8bit=True` (bitsandbytes through transformers), `optim="paged_adamw_8bit"` (bitsandbytes
optimizers by name), `fp16=True` on training arguments (CUDA AMP with a GradScaler). The callee is
often a project's own wrapper, so it is matched by the end of its name (`callees`), not resolved.

`autocast-off`: `torch.autocast("cuda", enabled=False)` / `@autocast("cuda", enabled=False)`: a
region forced to fp32 inside CUDA autocast. It is not autocast silently switched off elsewhere; it is
an fp32 island whose `device_type` must follow the device so it keeps disabling the right autocast.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Iterator, List, Mapping, Optional

from portcheck.pyscan.context import defaulted_parameters, fp32_island_spelling
from portcheck.pyscan.imports import ImportTable, dotted
from portcheck.pyscan.matchers import Hit, Label, Matcher, MatcherError, _str_list, call_argument, register, value_role
from portcheck.pyscan.nodes import walk

_AUTOCASTS = frozenset(
    {"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast", "torch.cuda.amp.autocast"}
)


class KeywordMatcher(Matcher):
    """A keyword argument named in `names` whose value is a true constant (`values` absent), one of
    `values`, or a string matching `pattern`; optionally only in calls whose callee's last name matches
    `callees` (a regular expression). The keyword itself is reported."""

    kind = "keyword"
    node_types = (ast.Call,)
    allowed_keys = frozenset({"names", "values", "pattern", "callees"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.names = frozenset(_str_list(params, "names"))
        self.values: Optional[List[Any]] = params.get("values")
        try:
            self.pattern = re.compile(params["pattern"]) if params.get("pattern") else None
            self.callees = re.compile(params["callees"]) if params.get("callees") else None
        except re.error as exc:
            raise MatcherError(f"not a valid regular expression: {exc}") from None

    def own_tokens(self) -> List[str]:
        return sorted(self.names)

    def _wanted(self, value: ast.AST) -> bool:
        if not isinstance(value, ast.Constant):
            # `load_in_8bit=args.bits == 8`: a switch computed at run time still names the library.
            return self.values is None and self.pattern is None and not isinstance(value, ast.Constant)
        if self.pattern is not None:
            return isinstance(value.value, str) and bool(self.pattern.search(value.value))
        if self.values is not None:
            return value.value in self.values and type(value.value) in {type(v) for v in self.values}
        return bool(value.value) and value.value is not None

    def match(self, node: ast.Call, parent, ctx, imports: ImportTable) -> Iterator[Hit]:
        if not any(k.arg in self.names for k in node.keywords):
            return
        if self.callees is not None:
            name = dotted(node.func) or ""
            if not self.callees.search(name.rsplit(".", 1)[-1]):
                return
        if any(
            isinstance(k.value, ast.Call) and (dotted(k.value.func) or "").endswith("BitsAndBytesConfig")
            for k in node.keywords
        ):
            # `dict(load_in_4bit=..., quantization_config=BitsAndBytesConfig(...))` (LLaVA's `train.py` and its
            # copies): the configuration's own finding stands for the call's switches
            return
        for kw in node.keywords:
            if isinstance(kw.value, ast.Name) and kw.value.id == kw.arg:
                continue  # `load_in_4bit=load_in_4bit`: a caller's choice passed on; reported where it is made
            if kw.arg in self.names and self._wanted(kw.value):
                # `from_pretrained(name, load_in_4bit=a, load_in_8bit=b)`: one switch of the call, reported once
                reported = kw if getattr(kw, "lineno", None) is not None else kw.value
                off = _parameter_off_by_default(kw.value, ctx.scope)
                if off:
                    yield reported, f"{kw.arg}=", ctx._replace(lowered_by=OFF_BY_DEFAULT_NOTE.format(name=off))
                else:
                    yield reported, f"{kw.arg}="
                return


OFF_BY_DEFAULT_NOTE = (
    "opt-in: `{name}` is a parameter off by default; the library loads only where a caller turns it on"
)


def _parameter_off_by_default(value: ast.AST, scope: Optional[ast.AST]) -> str:
    """The name of the enclosing function's parameter `value` reads, when its default is `False` or `None`
    and the function never rebinds it (ToolBench's `def __init__(..., load_8bit: bool = False)`, then
    `from_pretrained(..., load_in_8bit=load_8bit)`); "" otherwise."""
    if not isinstance(value, ast.Name) or not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ""
    for arg, default in defaulted_parameters(scope.args):
        if arg.arg == value.id:
            if not (isinstance(default, ast.Constant) and (default.value is False or default.value is None)):
                return ""
            stored = any(
                isinstance(n, ast.Name) and n.id == value.id and not isinstance(n.ctx, ast.Load)
                for n in walk(scope)
            )
            return "" if stored else value.id
    return ""


class AutocastOffMatcher(Matcher):
    """`autocast("cuda", enabled=False)`: an fp32 island inside CUDA autocast (see the module docstring)."""

    kind = "autocast-off"
    node_types = (ast.Call,)
    allowed_keys = frozenset({"devices"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.devices = frozenset(_str_list(params, "devices"))

    def own_tokens(self) -> List[str]:
        return ["autocast"]  # (`enabled=False`, or the legacy `torch.cuda.amp.autocast(False)`)

    def match(self, node: ast.Call, parent, ctx, imports: ImportTable) -> Iterator[Hit]:
        name = imports.resolved(node.func)
        if name not in _AUTOCASTS:
            return
        spelling = fp32_island_spelling(node)
        if spelling is None:
            return
        if name == "torch.cuda.amp.autocast":
            yield node, Label(name, "", name)
            return
        device = call_argument(node, "device_type", 0)
        if isinstance(device, ast.Constant) and device.value in self.devices:
            yield device, Label(f"{name}({device.value!r}, {spelling})", value_role(node, name, device), name)


for _cls in (KeywordMatcher, AutocastOffMatcher):
    register(_cls)
