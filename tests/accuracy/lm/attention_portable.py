"""Attention and rotary embeddings that run on any backend: SDPA and real-valued cos/sin tables.

This is the replacement for the flash-attn / complex-number code paths in ``model.py``.
"""

from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def causal_attention(q, k, v, dropout_p: float = 0.0, training: bool = False):
    return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p if training else 0.0, is_causal=True)


def sliding_window_mask(seq_len: int, window: int, device: Optional[torch.device] = None) -> torch.Tensor:
    i = torch.arange(seq_len, device=device)
    return (i[None, :] <= i[:, None]) & (i[:, None] - i[None, :] < window)


def attention_math_only(q, k, v, mask):
    """Pin SDPA to the math backend (bit-for-bit comparisons in tests)."""
    with sdpa_kernel([SDPBackend.MATH]):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def rotary_cos_sin(dim: int, seq_len: int, theta: float = 10000.0, device=None, dtype=torch.float32) -> Tuple[torch.Tensor, torch.Tensor]:
    """Real-valued rotary tables (cos, sin); no complex numbers, so it compiles everywhere."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim))
    t = torch.arange(seq_len, device=device, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(q, k, cos, sin):
    cos = cos[None, :, None, :]
    sin = sin[None, :, None, :]
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def pad_to_multiple(x: torch.Tensor, multiple: int, dim: int = 1, value: float = 0.0) -> torch.Tensor:
    """Pad a sequence dimension so every batch has one of a few static shapes (no recompiles)."""
    size = x.shape[dim]
    target = -(-size // multiple) * multiple
    if target == size:
        return x
    pad = [0, 0] * (x.dim() - dim - 1) + [0, target - size]
    return F.pad(x, pad, value=value)


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over valid positions with a static shape (no boolean indexing)."""
    mask = mask.to(x.dtype)
    return (x * mask).sum() / mask.sum().clamp_min(1.0)
