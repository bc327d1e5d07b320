"""Training configuration for the image classifier, with defaults for an 8-GPU node."""

from dataclasses import dataclass, field
from typing import List, Optional


@dataclass
class OptimConfig:
    lr: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 5e-5
    nesterov: bool = True
    warmup_epochs: int = 5
    milestones: List[int] = field(default_factory=lambda: [30, 60, 80])


@dataclass
class DataConfig:
    root: str = "/data/imagenet"
    image_size: int = 224
    eval_crop_pct: float = 0.875
    batch_size: int = 256  # per GPU
    num_workers: int = 8
    mixup_alpha: float = 0.2


@dataclass
class TrainConfig:
    arch: str = "resnet50"
    epochs: int = 90
    device: str = "cuda"  # expect: device
    amp: bool = True
    channels_last: bool = True
    seed: int = 42
    output_dir: str = "runs/default"
    resume: Optional[str] = None
    log_every: int = 50
    optim: OptimConfig = field(default_factory=OptimConfig)
    data: DataConfig = field(default_factory=DataConfig)


# Evaluation jobs run on a single card.
EVAL_DEVICE = "cuda:0"  # expect: device

PRESETS = {
    "resnet50": {"arch": "resnet50", "epochs": 90, "lr": 0.1},
    "resnet18-debug": {"arch": "resnet18", "epochs": 2, "lr": 0.05, "device": "cuda"},  # expect: device
    "cpu-smoke": {"arch": "resnet18", "epochs": 1, "lr": 0.01, "device": "cpu"},
}


def from_preset(name: str) -> TrainConfig:
    preset = dict(PRESETS[name])
    cfg = TrainConfig(arch=preset.pop("arch"), epochs=preset.pop("epochs"))
    cfg.optim.lr = preset.pop("lr")
    if "device" in preset:
        cfg.device = preset.pop("device")
    return cfg
