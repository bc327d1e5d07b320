"""DDPM noise schedules (Ho et al., 2020). Schedules are computed in float64 with numpy, then stored as float32 buffers."""

import math

import numpy as np
import torch
import torch.nn as nn


def linear_betas(timesteps: int, beta_start: float = 1e-4, beta_end: float = 2e-2) -> np.ndarray:
    return np.linspace(beta_start, beta_end, timesteps, dtype=np.float64)


def cosine_betas(timesteps: int, s: float = 0.008) -> np.ndarray:
    steps = np.arange(timesteps + 1, dtype=np.float64) / timesteps
    alphas_cumprod = np.cos((steps + s) / (1 + s) * math.pi / 2) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - alphas_cumprod[1:] / alphas_cumprod[:-1]
    return np.clip(betas, 0, 0.999)


class NoiseSchedule(nn.Module):
    def __init__(self, timesteps: int = 1000, kind: str = "cosine"):
        super().__init__()
        betas = cosine_betas(timesteps) if kind == "cosine" else linear_betas(timesteps)
        alphas_cumprod = np.cumprod(1.0 - betas, axis=0)
        alphas_cumprod_prev = np.append(1.0, alphas_cumprod[:-1])
        posterior_variance = betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)

        def buffer(name, values):
            self.register_buffer(name, torch.tensor(values, dtype=torch.float32), persistent=False)

        buffer("betas", betas)
        buffer("sqrt_alphas_cumprod", np.sqrt(alphas_cumprod))
        buffer("sqrt_one_minus_alphas_cumprod", np.sqrt(1.0 - alphas_cumprod))
        buffer("sqrt_recip_alphas", np.sqrt(1.0 / (1.0 - betas)))
        buffer("posterior_variance", posterior_variance)
        self.timesteps = timesteps

    def q_sample(self, x0: torch.Tensor, t: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
        a = self.sqrt_alphas_cumprod[t].view(-1, 1, 1, 1)
        b = self.sqrt_one_minus_alphas_cumprod[t].view(-1, 1, 1, 1)
        return a * x0 + b * noise
