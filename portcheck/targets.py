"""The target vocabulary that `scan`, `fix`, `rules` and the config file share.

A target name is case-insensitive. `neuron`, `xla` and `generic` are scored and fixed; `all` scores
every backend at once (`scan`, `rules`, config); `cpu` is a fix that resolves every device to the CPU.
"""

from __future__ import annotations

from typing import Optional, Tuple

SCORED: Tuple[str, ...] = ("neuron", "xla", "generic")
ALL = "all"
CPU = "cpu"
SCAN_TARGETS: Tuple[str, ...] = SCORED + (ALL,)
FIX_TARGETS: Tuple[str, ...] = ("generic", CPU, "neuron", "xla")
VOCABULARY: Tuple[str, ...] = SCORED + (CPU, ALL)

# Why a known name is refused where it is refused: said instead of a bare "invalid choice".
_REFUSED = {
    CPU: "'cpu' is a fix target (every device resolved to the CPU); code that runs on the CPU is scored as 'generic'",
    ALL: "'all' scores every backend at once; a fix rewrites for one of them ('generic' runs on every backend)",
}


def normalize(value: str) -> str:
    return value.strip().lower()


def refusal(value: str, accepted: Tuple[str, ...]) -> Optional[str]:
    """None when `value` (any case) is accepted; otherwise the one-line reason it is not."""
    name = normalize(value)
    if name in accepted:
        return None
    reason = _REFUSED.get(name) if name in VOCABULARY else None
    choices = ", ".join(accepted)
    if reason:
        return f"{reason}; use one of {choices}"
    return f"unknown target {value!r}; use one of {choices}"


def fix_target_for(configured: str) -> str:
    """The fix target a configured scan target implies: `all` fixes for `generic`, which runs on every backend."""
    name = normalize(configured)
    return "generic" if name == ALL else name
