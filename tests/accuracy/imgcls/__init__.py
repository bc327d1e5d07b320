"""Image classification recipes (ResNet, ViT) trained with DistributedDataParallel."""

__version__ = "1.4.0"
