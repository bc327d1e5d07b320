"""Save and restore training state (model, optimizer, grad scaler, epoch)."""

import logging
import os
from pathlib import Path

import torch

logger = logging.getLogger(__name__)


def unwrap(model):
    """The bare module under DDP/DataParallel wrappers."""
    return model.module if hasattr(model, "module") else model


def save_checkpoint(path, model, optimizer, scaler, epoch, **extra):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {
        "model": unwrap(model).state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict() if scaler is not None else None,
        "epoch": epoch,
        **extra,
    }
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    # An interrupted save must never leave a truncated "last.pt" behind.
    os.replace(tmp, path)
    logger.info("saved checkpoint to %s", path)


def load_checkpoint(path, model, optimizer=None, scaler=None, map_location="cuda"):  # expect: device
    state = torch.load(path, map_location=map_location, weights_only=False)
    missing, unexpected = unwrap(model).load_state_dict(state["model"], strict=False)
    if missing or unexpected:
        logger.warning("checkpoint mismatch: %d missing, %d unexpected keys", len(missing), len(unexpected))
    if optimizer is not None and "optimizer" in state:
        optimizer.load_state_dict(state["optimizer"])
    if scaler is not None and state.get("scaler"):
        scaler.load_state_dict(state["scaler"])
    return state.get("epoch", -1) + 1


def load_pretrained(path, model):
    """Load weights saved on any device; the tensors land on the CPU first."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    state = {k.removeprefix("module."): v for k, v in state.items()}
    unwrap(model).load_state_dict(state)
    return model


def load_for_inference(path, model, gpu: int = 0):
    """Load straight onto one GPU, skipping the host copy (saves time on 10 GB checkpoints)."""
    state = torch.load(path, map_location=lambda storage, loc: storage.cuda(gpu))  # expect: device
    unwrap(model).load_state_dict(state["model"])
    return model.eval()


def average_checkpoints(paths):
    """Uniform average of several checkpoints' weights (computed on the CPU)."""
    avg = None
    for p in paths:
        state = torch.load(p, map_location="cpu", weights_only=True)["model"]
        if avg is None:
            avg = {k: v.clone().float() for k, v in state.items()}
        else:
            for k, v in state.items():
                avg[k] += v.float()
    return {k: v / len(paths) for k, v in avg.items()}
