"""One data-parallel training step; launch with torchrun, one process per GPU."""

import atexit
import os
import sys
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
    # Every rank is done communicating before any leaves.
    dist.barrier()


if __name__ == "__main__":
    main()
    # Leave without the interpreter's teardown: gloo's threads can still be joinable when C++ static
    # objects are destroyed at exit (or when the process group is), which aborts a rank with
    # std::terminate after all its work is done. Python's own exit handlers run first.
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(0)
