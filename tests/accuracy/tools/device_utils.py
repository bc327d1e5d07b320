"""Device helpers that work on any backend through torch.accelerator (PyTorch 2.6+).

Replaces the old ``cuda_utils.py``: nothing here assumes CUDA, so the same training code runs on
NVIDIA GPUs, Trainium, Intel GPUs, Apple silicon or the CPU.
"""

import contextlib
import os
import random

import numpy as np
import torch
import torch.distributed as dist


def get_device() -> torch.device:
    """The current accelerator, or the CPU when there is none."""
    acc = torch.accelerator.current_accelerator(check_available=True)
    return acc if acc is not None else torch.device("cpu")


def local_device() -> torch.device:
    """The device this process should use under torchrun (one device per process)."""
    device = get_device()
    if device.type == "cpu":
        return device
    index = int(os.environ.get("LOCAL_RANK", 0)) % torch.accelerator.device_count()
    torch.accelerator.set_device_index(index)
    return torch.device(device.type, index)


def init_process_group() -> None:
    device = get_device()
    backend = dist.get_default_backend_for_device(device)
    dist.init_process_group(backend=backend)


def synchronize() -> None:
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()


def autocast_context(device: torch.device, enabled: bool = True, dtype: torch.dtype = torch.bfloat16):
    return torch.autocast(device_type=device.type, dtype=dtype, enabled=enabled)


def grad_scaler(device: torch.device, enabled: bool) -> torch.amp.GradScaler:
    # bf16 autocast needs no loss scaling; the scaler stays for fp16 runs.
    return torch.amp.GradScaler(device.type, enabled=enabled)


def memory_summary_mb() -> dict:
    if not torch.accelerator.is_available():
        return {}
    return {
        "allocated": torch.accelerator.memory_allocated() / 2**20,
        "peak": torch.accelerator.max_memory_allocated() / 2**20,
    }


def seed_everything(seed: int) -> None:
    """Seeds Python, numpy and torch (torch.manual_seed seeds every device type)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@contextlib.contextmanager
def device_index(i: int):
    with torch.accelerator.device_index(i):
        yield


def to_device(batch, device: torch.device, non_blocking: bool = True):
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        return {k: to_device(v, device, non_blocking) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device, non_blocking) for v in batch)
    return batch


def on_accelerator(t: torch.Tensor) -> bool:
    return t.device.type != "cpu"


def compile_for(model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """torch.compile with the default backend for the device; plain eager on the CPU."""
    if device.type == "cpu":
        return model
    return torch.compile(model, fullgraph=True)
