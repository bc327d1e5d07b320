"""CIFAR-10 loaders."""

import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, transforms

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def loaders(root: str, batch_size: int, distributed: bool):
    train_tf = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(), transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
    test_tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
    train = datasets.CIFAR10(root, train=True, download=True, transform=train_tf)
    test = datasets.CIFAR10(root, train=False, download=True, transform=test_tf)
    sampler = DistributedSampler(train) if distributed else None
    workers = 4 if distributed else 4 * torch.cuda.device_count()  # four per GPU
    train_loader = DataLoader(train, batch_size=batch_size, shuffle=sampler is None, sampler=sampler, num_workers=workers, pin_memory=True, drop_last=True)
    test_loader = DataLoader(test, batch_size=512, num_workers=workers, pin_memory=True)
    return train_loader, test_loader, sampler
