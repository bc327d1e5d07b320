"""Time inference of a small network on the GPU."""

import time

import torch
import torch.nn as nn


@torch.no_grad()
def bench(model, batch, iters=20):
    for _ in range(3):
        model(batch)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        model(batch)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / iters


def main():
    gpus = torch.cuda.device_count()
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 8)).cuda().eval()
    batch = torch.randn(16, 32).cuda()
    seconds = bench(model, batch)
    print(f"measured latency: {seconds >= 0} (devices seen: {gpus >= 0})")


if __name__ == "__main__":
    main()
