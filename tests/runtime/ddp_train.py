"""One data-parallel training step; launch with torchrun, one process per GPU."""

import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    # A short timeout: a rank that hangs fails the run instead of stalling it.
    dist.init_process_group(backend="nccl", timeout=timedelta(seconds=60))
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.manual_seed(rank)
    model = nn.Linear(4, 2).to(f"cuda:{local_rank}")
    ddp = DDP(model, device_ids=[local_rank], output_device=local_rank)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    x = torch.randn(8, 4).cuda(local_rank)
    loss = ddp(x).pow(2).mean()
    loss.backward()
    optimizer.step()
    ones = torch.ones(1, device=f"cuda:{local_rank}")
    dist.all_reduce(ones)
    if rank == 0:
        print(f"trained on {int(ones.item())} ranks", flush=True)
    # Shut down together: every rank is done communicating before any closes its connections, and
    # the DDP wrapper (which holds the process group) is gone before the group is destroyed, so
    # the backend's threads are joined here and not during interpreter teardown.
    dist.barrier()
    del ddp, optimizer
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
