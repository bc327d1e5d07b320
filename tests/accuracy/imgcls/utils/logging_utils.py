"""Logging set-up and a start-up banner describing the environment."""

import logging
import platform
import sys

import torch


def setup_logging(rank: int, level: int = logging.INFO) -> logging.Logger:
    """Only rank 0 logs at INFO; the other ranks log warnings, so an 8-GPU job is not 8x as noisy."""
    fmt = f"[rank{rank}] %(asctime)s %(levelname)s %(name)s: %(message)s"
    logging.basicConfig(level=level if rank == 0 else logging.WARNING, format=fmt, stream=sys.stdout)
    return logging.getLogger("imgcls")


def log_environment(logger: logging.Logger) -> None:
    """Log versions; on CUDA machines the CUDA version is included."""
    logger.info("python %s on %s", sys.version.split()[0], platform.platform())
    logger.info("torch %s, CUDA %s", torch.__version__, torch.version.cuda)
    if torch.accelerator.is_available():
        acc = torch.accelerator.current_accelerator()
        logger.info("accelerator: %s x%d", acc.type, torch.accelerator.device_count())
    else:
        logger.warning("no accelerator found (expected cuda, neuron or xla); training on the CPU will be slow")


def check_batch_size(batch_size: int, world_size: int) -> None:
    if batch_size % world_size:
        raise ValueError(f"batch size {batch_size} is not divisible by the number of CUDA devices ({world_size})")


def warn_slow_path(logger: logging.Logger, name: str) -> None:
    # Kept as a warning rather than an error: the fallback is correct, only slower.
    logger.warning("%s: fused CUDA kernel unavailable, using the PyTorch implementation (call .cuda() first?)", name)
