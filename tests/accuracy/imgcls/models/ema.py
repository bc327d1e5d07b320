"""Exponential moving average of model weights."""

import copy

import torch


class ModelEma:
    """Keeps a moving average of the weights, optionally on another device.

    ``device="cpu"`` keeps the copy off the GPU to save memory, at the cost of slower updates.
    """

    def __init__(self, model, decay: float = 0.9999, device=None):
        self.module = copy.deepcopy(model).eval()
        self.decay = decay
        self.device = device
        if device is not None:
            self.module.to(device=device)
        for p in self.module.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        msd = model.module.state_dict() if hasattr(model, "module") else model.state_dict()
        for k, ema_v in self.module.state_dict().items():
            model_v = msd[k].detach()
            if self.device is not None:
                model_v = model_v.to(device=self.device)
            if ema_v.dtype.is_floating_point:
                ema_v.mul_(self.decay).add_(model_v, alpha=1.0 - self.decay)
            else:
                ema_v.copy_(model_v)

    def state_dict(self):
        return self.module.state_dict()
