"""Image transforms and batch-level augmentation; all of it runs on the CPU or on the batch's own device."""

import numpy as np
import torch
import torch.nn.functional as F
from torchvision import transforms

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def build_train_transform(size: int = 224):
    return transforms.Compose(
        [
            transforms.RandomResizedCrop(size, scale=(0.08, 1.0)),
            transforms.RandomHorizontalFlip(),
            transforms.ColorJitter(0.4, 0.4, 0.4),
            transforms.ToTensor(),
            transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
        ]
    )


def build_eval_transform(size: int = 224, crop_pct: float = 0.875):
    resize = int(round(size / crop_pct))
    return transforms.Compose(
        [
            transforms.Resize(resize),
            transforms.CenterCrop(size),
            transforms.ToTensor(),
            transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
        ]
    )


class Mixup:
    """Mixup (Zhang et al., 2018) on a batch, on whatever device the batch is on."""

    def __init__(self, alpha: float = 0.2, num_classes: int = 1000, seed: int = 0):
        self.alpha = alpha
        self.num_classes = num_classes
        self.rng = np.random.default_rng(seed)

    def __call__(self, images: torch.Tensor, targets: torch.Tensor):
        lam = float(self.rng.beta(self.alpha, self.alpha))
        index = torch.randperm(images.size(0), device=images.device)
        mixed = lam * images + (1 - lam) * images[index]
        onehot = F.one_hot(targets, self.num_classes).float()
        return mixed, lam * onehot + (1 - lam) * onehot[index]


def dataset_mean_std(images: np.ndarray):
    """Per-channel statistics of a uint8 NHWC array, accumulated in float64 for accuracy."""
    pixels = images.reshape(-1, images.shape[-1]).astype(np.float64) / 255.0
    return pixels.mean(axis=0), pixels.std(axis=0)
