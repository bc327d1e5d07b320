"""Train a small ViT on CIFAR-10 with mixed precision, on one GPU or on every GPU of a node.

    python train.py --amp
    torchrun --nproc_per_node=4 train.py --amp
"""

import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from data import loaders
from model import ViT


def parse_args():
    parser = argparse.ArgumentParser(description="CIFAR-10 ViT training")
    parser.add_argument("--device", default="cuda", help="device to train on")
    parser.add_argument("--data", default="./data")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--amp", action="store_true", help="mixed precision (float16)")
    parser.add_argument("--resume", default="")
    parser.add_argument("--out", default="checkpoint.pt")
    return parser.parse_args()


def setup_distributed():
    """torchrun sets LOCAL_RANK; without it this is a single-process run."""
    if "LOCAL_RANK" not in os.environ:
        return 0, 1
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
    return local_rank, dist.get_world_size()


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            correct += (model(images).argmax(1) == labels).sum()
            total += labels.numel()
    return 100.0 * correct.item() / total


def main():
    args = parse_args()
    local_rank, world_size = setup_distributed()
    torch.backends.cudnn.benchmark = True

    model = ViT(device=args.device)
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    criterion = nn.CrossEntropyLoss()
    train_loader, test_loader, sampler = loaders(args.data, args.batch_size, world_size > 1)

    start_epoch = 0
    if args.resume:
        state = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start_epoch = state["epoch"] + 1

    for epoch in range(start_epoch, args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        torch.cuda.synchronize()
        t0 = time.time()
        for images, labels in train_loader:
            images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            with torch.cuda.amp.autocast(enabled=args.amp):
                loss = criterion(model(images), labels)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        torch.cuda.synchronize()
        if local_rank == 0:
            acc = evaluate(model, test_loader)
            print(f"epoch {epoch}: loss {loss.item():.3f}, test acc {acc:.1f}%, {time.time() - t0:.0f}s")
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}, args.out)

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
