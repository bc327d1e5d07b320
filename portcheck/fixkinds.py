"""The fix recipes a rule's `autofix` table may name: each kind declares its parameters, the fix
targets it supports and the torch release it needs, so the catalog refuses a misspelt parameter or a
target the recipe cannot serve when it loads, not at fix time.

This module knows no libcst: the catalog loads it for every scan. The transforms live in
`portcheck.fixer.recipes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Mapping, Optional, Tuple

FIX_TARGETS: Tuple[str, ...] = ("generic", "cpu", "neuron", "xla")
ALL = "all"  # `autofix = { all = { kind = "dot-cuda" } }`: the same recipe on every target it supports
_EVERY = frozenset(FIX_TARGETS)
_NOT_XLA = frozenset({"generic", "cpu", "neuron"})
_CUDA = frozenset({"cuda"})  # the recipes rewrite CUDA device strings (torchfacts.CUDA_DEVICE), no other


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    required: bool = False


@dataclass(frozen=True)
class RecipeKind:
    kind: str
    targets: FrozenSet[str]
    params: Tuple[Param, ...] = ()
    min_torch: str = ""  # the oldest torch any output of the recipe may need ("" when it varies by output)
    # The device strings the recipe knows how to rewrite (`cuda`, `cuda:N`): a rule whose matcher finds
    # other devices (its `devices` list) cannot name this recipe. Empty: the recipe rewrites no device string.
    devices: FrozenSet[str] = frozenset()

    def param(self, name: str) -> Optional[Param]:
        return next((p for p in (*self.params, *_COMMON) if p.name == name), None)


# Every kind takes these: `kind` itself, and a floor for the whole fix (`min-torch`).
_COMMON = (Param("kind", str, True), Param("min-torch", str))

KINDS: Dict[str, RecipeKind] = {
    k.kind: k
    for k in (
        RecipeKind("device-string", _EVERY, min_torch="2.6", devices=_CUDA),
        RecipeKind("map-location", _EVERY, min_torch="2.6", devices=_CUDA),
        RecipeKind("dot-cuda", _EVERY, min_torch="2.6"),
        # XLA drops device indices; a device held in a variable there is a person's call.
        RecipeKind("device-variable", _NOT_XLA, min_torch="2.6", devices=_CUDA),
        RecipeKind("device-compare", _EVERY, min_torch="2.6", devices=_CUDA),
        RecipeKind("availability", _EVERY, min_torch="2.6"),
        RecipeKind("rename-call", _EVERY, (Param("to", str, True), Param("guard", bool), Param("drop-args", bool))),
        RecipeKind("autocast", _EVERY, min_torch="2.6", devices=_CUDA),
        # XLA autocast runs in bfloat16, which needs no gradient scaler: nothing to rewrite it to.
        RecipeKind("grad-scaler", _NOT_XLA, min_torch="2.6"),
        RecipeKind("custom-fwd", _EVERY, min_torch="2.4"),
        RecipeKind("process-group-backend", _EVERY, min_torch="2.6"),
        RecipeKind("int-device", _EVERY, min_torch="2.6"),
        RecipeKind("remove-keyword", _EVERY, (Param("keyword", str, True),)),
        RecipeKind("replace-string", _EVERY, (Param("value", str, True),)),
        RecipeKind("default-tensor-type", _EVERY, min_torch="2.6"),
        RecipeKind("pin-memory", _EVERY, min_torch="2.6"),
    )
}


class RecipeError(ValueError):
    """An `autofix` table names a recipe, a parameter or a target that does not exist. `key` is the
    dotted key at fault (`autofix.generic.to`)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def _check(target: str, spec: Any) -> Dict[str, Any]:
    key = f"autofix.{target}"
    if not isinstance(spec, dict):
        raise RecipeError(key, "expected a table with a 'kind'")
    named = spec.get("kind")
    kind = KINDS.get(named) if isinstance(named, str) else None  # a TOML array or table is no recipe name
    if kind is None:
        raise RecipeError(f"{key}.kind", f"unknown recipe {spec.get('kind')!r} (known: {', '.join(sorted(KINDS))})")
    for name, value in spec.items():
        param = kind.param(name)
        if param is None:
            known = ", ".join(p.name for p in kind.params) or "none"
            raise RecipeError(
                f"{key}.{name}", f"recipe {kind.kind!r} has no parameter {name!r} (its parameters: {known})"
            )
        if not isinstance(value, param.type) or (param.type is str and not value):
            raise RecipeError(
                f"{key}.{name}", f"expected a {'non-empty string' if param.type is str else param.type.__name__}"
            )
    for param in kind.params:
        if param.required and param.name not in spec:
            raise RecipeError(f"{key}.{param.name}", f"recipe {kind.kind!r} needs {param.name!r}")
    return dict(spec)


def expand(autofix: Any) -> Dict[str, Dict[str, Any]]:
    """The per-target recipes of an `autofix` table, validated. `all` applies to every target its
    recipe supports; a target named beside it overrides it. A target the recipe does not support is
    refused: the report would promise a fix that is never made."""
    if not isinstance(autofix, dict):
        raise RecipeError("autofix", f"expected a table keyed by {ALL!r} or {', '.join(FIX_TARGETS)}")
    out: Dict[str, Dict[str, Any]] = {}
    if ALL in autofix:
        spec = _check(ALL, autofix[ALL])
        for target in FIX_TARGETS:
            if target in KINDS[spec["kind"]].targets:
                out[target] = spec
    for target, spec in autofix.items():
        if target == ALL:
            continue
        if target not in FIX_TARGETS:
            raise RecipeError(f"autofix.{target}", f"unknown fix target (known: {ALL}, {', '.join(FIX_TARGETS)})")
        checked = _check(target, spec)
        if target not in KINDS[checked["kind"]].targets:
            raise RecipeError(f"autofix.{target}", f"recipe {checked['kind']!r} does not support target {target!r}")
        out[target] = checked
    return out


def check_devices(autofix: Mapping[str, Mapping[str, Any]], devices: Tuple[str, ...]) -> None:
    """Refuse a recipe for a matcher that finds device strings the recipe cannot rewrite: the matcher
    builds its pattern from the rule's `devices`, the recipe knows only its own (`RecipeKind.devices`)."""
    for target, spec in autofix.items():
        kind = KINDS[spec["kind"]]
        if not kind.devices:
            continue
        for device in devices:
            if device.split(":", 1)[0].lower() not in kind.devices:
                raise RecipeError(
                    f"autofix.{target}.kind",
                    f"recipe {kind.kind!r} rewrites only {', '.join(sorted(kind.devices))} device strings,"
                    f" but the matcher also finds {device!r}",
                )


def kind_of(spec: Mapping[str, Any]) -> RecipeKind:
    return KINDS[spec["kind"]]
