"""Helpers for torchrun-launched DistributedDataParallel training."""

import datetime
import logging
import os

import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)


def init_distributed(timeout_minutes: int = 30):
    """Initialise the NCCL process group from torchrun's environment variables.

    Returns (local_rank, world_size). Without torchrun this is a single-process run on GPU 0.
    """
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        logger.info("not launched with torchrun; running on a single GPU")
        return 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    # Fail fast instead of hanging when one rank dies.
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")  # expect: distributed
    os.environ.setdefault("NCCL_IB_TIMEOUT", "22")  # expect: distributed
    torch.cuda.set_device(local_rank)  # expect: device, distributed
    dist.init_process_group(
        backend="nccl",  # expect: distributed
        init_method="env://",
        world_size=world_size,
        rank=rank,
        timeout=datetime.timedelta(minutes=timeout_minutes),
    )
    dist.barrier(device_ids=[local_rank])  # expect: distributed
    if rank == 0:
        logger.info("initialised NCCL with %d processes", world_size)
    return local_rank, world_size


def is_main_process() -> bool:
    return not dist.is_initialized() or dist.get_rank() == 0


def get_world_size() -> int:
    return dist.get_world_size() if dist.is_initialized() else 1


def reduce_sum(tensor: torch.Tensor) -> torch.Tensor:
    if not dist.is_initialized():
        return tensor
    out = tensor.clone()
    dist.all_reduce(out, op=dist.ReduceOp.SUM)
    return out


def reduce_mean(tensor: torch.Tensor) -> torch.Tensor:
    return reduce_sum(tensor) / get_world_size()


def all_gather_object(obj):
    if not dist.is_initialized():
        return [obj]
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, obj)
    return gathered


def broadcast_seed(seed: int, device) -> int:
    """Make every rank use rank 0's seed."""
    t = torch.tensor([seed], dtype=torch.int64, device=device)
    if dist.is_initialized():
        dist.broadcast(t, src=0)
    return int(t[0])


def cleanup():
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
