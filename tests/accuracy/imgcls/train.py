"""Train an image classifier with mixed precision and DistributedDataParallel.

Launch with torchrun; a single-GPU run works without it:

    torchrun --nproc_per_node=8 -m imgcls.train --arch resnet50 --amp

Everything runs on CUDA by default (use ``--device cuda:1`` to pick another GPU, or call
``model.cuda()`` yourself before handing the model to ``train_one_epoch``).
"""

import argparse
import logging
import math
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast  # expect: amp
from torch.nn.parallel import DistributedDataParallel as DDP

from imgcls.data.loader import build_loaders
from imgcls.models.ema import ModelEma
from imgcls.models.resnet import build_model
from imgcls.utils.checkpoint import load_checkpoint, save_checkpoint
from imgcls.utils.distributed import init_distributed, is_main_process, reduce_sum
from imgcls.utils.metrics import AverageMeter, accuracy

logger = logging.getLogger(__name__)


def parse_args():
    parser = argparse.ArgumentParser(description="ImageNet training on CUDA GPUs")
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--batch-size", type=int, default=256, help="per-GPU batch size")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--device", default="cuda", help="torch device, e.g. cuda or cuda:1")  # expect: device
    parser.add_argument("--amp", action="store_true", help="enable torch.cuda.amp mixed precision")
    parser.add_argument("--channels-last", action="store_true")
    parser.add_argument("--compile", action="store_true", help="wrap the model in torch.compile with CUDA graphs")
    parser.add_argument("--resume", type=str, default=None)
    parser.add_argument("--output-dir", type=str, default="runs/imagenet")
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--deterministic", action="store_true", help="set cudnn.deterministic for reproducible runs")
    return parser.parse_args()


def set_seed(seed, deterministic=False):
    import random

    import numpy as np

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)  # expect: runtime
    if deterministic:
        torch.backends.cudnn.deterministic = True  # expect: backend-flag
        torch.backends.cudnn.benchmark = False  # expect: backend-flag
    else:
        torch.backends.cudnn.benchmark = True  # expect: backend-flag


def train_one_epoch(model, loader, criterion, optimizer, scaler, epoch, args, ema=None):
    model.train()
    loss_meter = AverageMeter("loss")
    top1 = AverageMeter("acc@1")
    end = time.time()
    for step, (images, targets) in enumerate(loader):
        images = images.cuda(non_blocking=True)  # expect: device
        targets = targets.cuda(non_blocking=True)  # expect: device
        if args.channels_last:
            images = images.contiguous(memory_format=torch.channels_last)

        with autocast(enabled=args.amp):  # expect: amp
            output = model(images)
            loss = criterion(output, targets)

        if not math.isfinite(loss.item()):  # expect: xla
            raise RuntimeError(f"non-finite loss at epoch {epoch} step {step}; try disabling --amp")

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        scaler.step(optimizer)
        scaler.update()
        if ema is not None:
            ema.update(model)

        (acc1,) = accuracy(output, targets, topk=(1,))
        loss_meter.update(loss.item(), images.size(0))  # expect: xla
        top1.update(acc1.item(), images.size(0))  # expect: xla

        if step % args.log_every == 0 and is_main_process():
            torch.cuda.synchronize()  # expect: runtime
            elapsed = time.time() - end
            logger.info(
                "epoch %d step %d/%d loss %.4f acc@1 %.2f mem %.1fG %.1f img/s",
                epoch,
                step,
                len(loader),
                loss_meter.avg,
                top1.avg,
                torch.cuda.max_memory_allocated() / 2**30,  # expect: runtime
                args.log_every * images.size(0) / elapsed,
            )
            end = time.time()
    return loss_meter.avg, top1.avg


@torch.no_grad()
def evaluate(model, loader, device, args):
    """Top-1 accuracy; counts stay on the device and are read once at the end."""
    model.eval()
    correct = torch.zeros(1, device=device)
    total = torch.zeros(1, device=device)
    for images, targets in loader:
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):  # expect: amp
            output = model(images)
        correct += (output.argmax(dim=1) == targets).sum()
        total += targets.numel()
    correct, total = reduce_sum(correct), reduce_sum(total)
    return (correct / total).item() * 100.0


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    local_rank, world_size = init_distributed()
    if world_size > 1:
        device = torch.device(f"cuda:{local_rank}")  # expect: device
    else:
        device = torch.device(args.device)
    logger.info("rank %d using %s", local_rank, device)
    set_seed(args.seed + local_rank, args.deterministic)
    torch.backends.cuda.matmul.allow_tf32 = True  # expect: backend-flag
    torch.backends.cudnn.allow_tf32 = True  # expect: backend-flag

    model = build_model(args.arch, num_classes=1000)
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    model = model.cuda()  # expect: device
    ema = ModelEma(model, decay=0.9998)
    if args.compile:
        model = torch.compile(model, mode="reduce-overhead")  # expect: xla
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank)  # expect: distributed

    train_loader, val_loader, train_sampler = build_loaders(args.batch_size, world_size, local_rank)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1).cuda()  # expect: device
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-5, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    scaler = GradScaler(enabled=args.amp)  # expect: amp

    start_epoch = 0
    if args.resume:
        start_epoch = load_checkpoint(args.resume, model, optimizer, scaler, map_location=f"cuda:{local_rank}")  # expect: device

    best_acc = 0.0
    out_dir = Path(args.output_dir)
    for epoch in range(start_epoch, args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        train_loss, train_acc = train_one_epoch(model, train_loader, criterion, optimizer, scaler, epoch, args, ema)
        scheduler.step()
        acc = evaluate(model, val_loader, device, args)
        ema_acc = evaluate(ema.module, val_loader, device, args)
        if is_main_process():
            logger.info("epoch %d: train loss %.4f acc %.2f | val acc %.2f (ema %.2f)", epoch, train_loss, train_acc, acc, ema_acc)
            save_checkpoint(out_dir / "last.pt", model, optimizer, scaler, epoch, ema=ema.module.state_dict())
            if acc > best_acc:
                best_acc = acc
                save_checkpoint(out_dir / "best.pt", model, optimizer, scaler, epoch)
    if is_main_process():
        logger.info("best top-1 accuracy: %.2f", best_acc)
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
