"""`torch.testaccel`: the Python device module torch looks up for the testaccel device
(torch.accelerator, autocast, seeding and DDP call into it)."""

from __future__ import annotations

from typing import Any, List, Optional

import torch

_native: Any = None


def bind(native: Any) -> None:
    global _native
    _native = native


def is_available() -> bool:
    return _native is not None and _native.device_count() > 0


def device_count() -> int:
    return _native.device_count() if _native is not None else 0


def current_device() -> int:
    return _native.current_device()


def set_device(device: Any) -> None:
    index = torch.accelerator._get_device_index(device, optional=True) if not isinstance(device, int) else device
    if index >= 0:
        _native.set_device(index)


def synchronize(device: Any = None) -> None:
    torch.accelerator.synchronize(device)


def is_initialized() -> bool:
    return _native is not None


def init() -> None:
    pass


def _lazy_init() -> None:
    pass


def _is_in_bad_fork() -> bool:
    return False


# Random numbers on the device come from the CPU generator (random operators run through the CPU
# fallback), which torch.manual_seed already seeds.
def manual_seed(seed: int) -> None:
    pass


def manual_seed_all(seed: int) -> None:
    pass


def seed() -> None:
    pass


def seed_all() -> None:
    pass


def initial_seed() -> int:
    return torch.initial_seed()


def get_rng_state(device: Any = None) -> torch.Tensor:
    return torch.get_rng_state()


def set_rng_state(state: torch.Tensor, device: Any = None) -> None:
    torch.set_rng_state(state)


def get_amp_supported_dtype() -> List[torch.dtype]:
    return [torch.float16, torch.bfloat16]


class device:
    """Context manager that selects a device index, as torch.cuda.device does."""

    def __init__(self, index: Optional[Any]) -> None:
        self.index = torch.accelerator._get_device_index(index, optional=True)
        self.previous = -1

    def __enter__(self) -> None:
        self.previous = current_device()
        if self.index >= 0:
            set_device(self.index)

    def __exit__(self, *exc: object) -> bool:
        set_device(self.previous)
        return False
