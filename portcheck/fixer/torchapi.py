"""The PyTorch release that first ships each API a fix may write, so a fix never needs a newer
torch than the project supports (config `min-torch`)."""

from __future__ import annotations

from typing import Iterable, Optional, Tuple

# From `__all__` of `torch/accelerator/__init__.py` across the 2.6-2.15 wheels, plus the few other
# names fixes write. Names under `torch.accelerator` that are not listed arrived in 2.6.
_SINCE = {
    "torch.accelerator": "2.6",
    "torch.accelerator.device_index": "2.8",
    "torch.accelerator.empty_cache": "2.9",
    "torch.accelerator.memory_allocated": "2.9",
    "torch.accelerator.max_memory_allocated": "2.9",
    "torch.accelerator.memory_reserved": "2.9",
    "torch.accelerator.max_memory_reserved": "2.9",
    "torch.accelerator.memory_stats": "2.9",
    "torch.accelerator.reset_accumulated_memory_stats": "2.9",
    "torch.accelerator.reset_peak_memory_stats": "2.9",
    "torch.accelerator.get_memory_info": "2.10",
    "torch.accelerator.get_device_capability": "2.10",
    "torch.accelerator.Graph": "2.12",
    "torch.accelerator.empty_host_cache": "2.12",
    "torch.accelerator.random": "2.14",
    "torch.distributed.get_default_backend_for_device": "2.6",
    "torch.amp.GradScaler": "2.3",
    "torch.amp.custom_fwd": "2.4",
    "torch.amp.custom_bwd": "2.4",
    "torch.Stream": "2.4",
    "torch.Event": "2.4",
    "torch.get_device_module": "2.4",
    # verified on 2.13.0 only (`torch.cuda.OutOfMemoryError is torch.OutOfMemoryError`); the first release
    # with the top-level name was not pinned down, so the rename waits for min-torch 2.13
    "torch.OutOfMemoryError": "2.13",
}

# `current_accelerator(check_available=True)` returns None instead of raising from 2.7 on.
CHECK_AVAILABLE_SINCE = "2.7"


def version_tuple(version: str) -> Tuple[int, ...]:
    parts = []
    for piece in version.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts) or (0,)


def since(name: str) -> Optional[str]:
    """The first torch release with `name` (a dotted API name), or None when no table entry applies."""
    probe = name
    while probe:
        if probe in _SINCE:
            return _SINCE[probe]
        if "." not in probe:
            return None
        probe = probe.rsplit(".", 1)[0]
    return None


def newest(versions: Iterable[str]) -> str:
    """The highest of `versions` ("" when there are none)."""
    best = ""
    for v in versions:
        if v and (not best or version_tuple(v) > version_tuple(best)):
            best = v
    return best


def required(names: Iterable[str]) -> str:
    """The torch release the given API names need together ("" when none is versioned)."""
    return newest(since(n) or "" for n in names)


def at_least(min_torch: str, needed: str) -> bool:
    return not needed or version_tuple(min_torch) >= version_tuple(needed)
