"""Pre-train the decoder with FSDP on a multi-node GPU cluster.

    torchrun --nnodes=4 --nproc_per_node=8 -m lm.train_fsdp --data /data/tokens.bin
"""

import argparse
import functools
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import MixedPrecision, ShardingStrategy
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

from lm.model import ModelArgs, Transformer, TransformerBlock


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True, help="flat uint16 token file")
    parser.add_argument("--seq-len", type=int, default=2048)
    parser.add_argument("--batch-size", type=int, default=8, help="sequences per GPU")
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--tp", type=int, default=1, help="tensor-parallel degree inside a node")
    parser.add_argument("--exact-loss", action="store_true", help="accumulate the loss in float64 (slow, for debugging)")
    return parser.parse_args()


def pick_dtype(name: str) -> torch.dtype:
    if name == "bf16" and not torch.cuda.is_bf16_supported():  # expect: runtime
        print("bf16 is not supported on this GPU, falling back to fp16")
        return torch.float16
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[name]


class TokenDataset(torch.utils.data.IterableDataset):
    def __init__(self, path: str, seq_len: int, rank: int, world: int, seed: int = 0):
        self.data = np.memmap(path, dtype=np.uint16, mode="r")
        self.seq_len = seq_len
        self.rng = np.random.default_rng(seed + rank)

    def __iter__(self):
        while True:
            start = int(self.rng.integers(0, len(self.data) - self.seq_len - 1))
            chunk = torch.from_numpy(self.data[start : start + self.seq_len + 1].astype(np.int64))
            yield chunk[:-1], chunk[1:]


def exact_cross_entropy(logits, labels):
    # Reference loss from the paper's appendix, accumulated in double precision.
    return F.cross_entropy(logits.double(), labels, ignore_index=-100)  # expect: xla


def main():
    args = get_args()
    dist.init_process_group("nccl")  # expect: distributed
    rank = dist.get_rank()
    world = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)  # expect: device, distributed
    mesh = init_device_mesh("cuda", (world // args.tp, args.tp), mesh_dim_names=("dp", "tp"))  # expect: distributed
    dtype = pick_dtype(args.dtype)

    with torch.device("meta"):
        model = Transformer(ModelArgs(max_seq_len=args.seq_len), device="meta")
    wrap_policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={TransformerBlock})
    model = FSDP(
        model,
        device_mesh=mesh["dp"],
        auto_wrap_policy=wrap_policy,
        mixed_precision=MixedPrecision(param_dtype=dtype, reduce_dtype=torch.float32, buffer_dtype=dtype),
        sharding_strategy=ShardingStrategy.FULL_SHARD,
        device_id=torch.cuda.current_device(),  # expect: device, distributed
        sync_module_states=True,
        param_init_fn=lambda m: m.to_empty(device=torch.device("cuda"), recurse=False),  # expect: device
        limit_all_gathers=True,
    )
    if args.compile:
        model = torch.compile(model, mode="max-autotune", dynamic=True)  # expect: xla
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    loader = torch.utils.data.DataLoader(TokenDataset(args.data, args.seq_len, rank, world), batch_size=args.batch_size, num_workers=2)

    torch.cuda.reset_peak_memory_stats()  # expect: runtime
    t0 = time.perf_counter()
    model.train()
    for step, (tokens, labels) in enumerate(loader):
        tokens = tokens.to(local_rank, non_blocking=True)  # expect: device
        labels = labels.to(local_rank, non_blocking=True)  # expect: device
        logits = model(tokens)
        if args.exact_loss:
            loss = exact_cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))
        else:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)
        loss.backward()
        norm = model.clip_grad_norm_(1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if torch.isnan(loss):  # expect: xla
            raise RuntimeError(f"NaN loss at step {step}")
        if step % 10 == 0 and rank == 0:
            torch.cuda.synchronize()  # expect: runtime
            dt = time.perf_counter() - t0
            tok_s = 10 * tokens.numel() * world / dt
            mem = torch.cuda.max_memory_allocated() / 1e9  # expect: runtime
            print(f"step {step} loss {loss.item():.3f} norm {norm.item():.2f} {tok_s:,.0f} tok/s mem {mem:.1f}GB")
            t0 = time.perf_counter()
        if step + 1 == args.steps:
            break
    if rank == 0:
        print(torch.cuda.memory_summary())  # expect: runtime
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
