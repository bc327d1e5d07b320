"""ImageNet-style data loading with a DistributedSampler and an optional CUDA prefetcher."""

import os

import torch
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import datasets

from imgcls.data.transforms import build_eval_transform, build_train_transform


def build_loaders(batch_size, world_size, rank, root="/data/imagenet", workers=8):
    train_set = datasets.ImageFolder(os.path.join(root, "train"), build_train_transform())
    val_set = datasets.ImageFolder(os.path.join(root, "val"), build_eval_transform())
    train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank) if world_size > 1 else None
    train_loader = DataLoader(
        train_set,
        batch_size=batch_size,
        shuffle=train_sampler is None,
        sampler=train_sampler,
        num_workers=workers,
        pin_memory=True,
        drop_last=True,
        persistent_workers=workers > 0,
    )
    val_loader = DataLoader(
        val_set,
        batch_size=batch_size,
        shuffle=False,
        num_workers=workers,
        pin_memory=True,
        pin_memory_device="cuda",  # expect: runtime, device
    )
    return train_loader, val_loader, train_sampler


def build_debug_loader(dataset, batch_size=32):
    """A single-process loader for notebooks and unit tests."""
    return DataLoader(dataset, batch_size=batch_size, shuffle=False, num_workers=0)


class CudaPrefetcher:
    """Overlaps host-to-device copies with compute using a side CUDA stream."""

    def __init__(self, loader):
        self.loader = loader
        self.stream = torch.cuda.Stream()  # expect: runtime

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        first = True
        current = None
        for images, targets in self.loader:
            with torch.cuda.stream(self.stream):  # expect: runtime
                next_images = images.cuda(non_blocking=True)  # expect: device
                next_targets = targets.cuda(non_blocking=True)  # expect: device
            if not first:
                yield current
            first = False
            torch.cuda.current_stream().wait_stream(self.stream)  # expect: runtime
            next_images.record_stream(torch.cuda.current_stream())  # expect: runtime
            current = (next_images, next_targets)
        if current is not None:
            yield current


def collate_with_paths(batch):
    """Keep file paths next to the tensors, for error analysis."""
    images = torch.stack([b[0] for b in batch])
    targets = torch.tensor([b[1] for b in batch], dtype=torch.long)
    paths = [b[2] for b in batch]
    return images, targets, paths
