"""Cheap fine-tuning: 8-bit linear layers and optimizer states, or DeepSpeed ZeRO-3 with CPU offload."""

import json

import torch
import torch.nn as nn

import bitsandbytes as bnb  # expect: package
from bitsandbytes.optim import AdamW8bit  # expect: package


def replace_linear_with_8bit(model: nn.Module, threshold: float = 6.0, skip=("output",)) -> nn.Module:
    for name, module in model.named_children():
        if isinstance(module, nn.Linear) and name not in skip:
            new = bnb.nn.Linear8bitLt(
                module.in_features,
                module.out_features,
                bias=module.bias is not None,
                has_fp16_weights=False,
                threshold=threshold,
            )
            new.weight = bnb.nn.Int8Params(module.weight.data, requires_grad=False)
            setattr(model, name, new)
        else:
            replace_linear_with_8bit(module, threshold, skip)
    return model


def build_optimizer(model: nn.Module, lr: float, use_8bit: bool = True):
    params = [p for p in model.parameters() if p.requires_grad]
    if use_8bit:
        return AdamW8bit(params, lr=lr, betas=(0.9, 0.95))
    return torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.95))


DS_CONFIG = {
    "train_micro_batch_size_per_gpu": 4,
    "gradient_accumulation_steps": 8,
    "bf16": {"enabled": True},
    "zero_optimization": {
        "stage": 3,
        "offload_optimizer": {"device": "cpu", "pin_memory": True},
        "overlap_comm": True,
        "stage3_gather_16bit_weights_on_model_save": True,
    },
    "gradient_clipping": 1.0,
}


def init_deepspeed(model: nn.Module, config_path: str = ""):
    import deepspeed  # expect: package

    config = json.load(open(config_path)) if config_path else DS_CONFIG
    deepspeed.init_distributed(dist_backend="nccl")  # expect: distributed
    engine, optimizer, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
    return engine, optimizer


def count_trainable(model: nn.Module) -> str:
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    return f"{trainable:,} / {total:,} parameters trainable ({100 * trainable / total:.2f}%)"
