"""Kernels testaccel adds in Python: operators the CPU fallback cannot run because they have no CPU kernel.

ATen sends a GRU cell on any device other than the CPU (CUDA, XPU, PrivateUse1) to
`aten::_thnn_fused_gru_cell`, and its gradient to `_thnn_fused_gru_cell_backward`; both have CUDA
and XPU kernels only, so `torch.nn.GRU` on testaccel failed with "Could not run
'aten::_thnn_fused_gru_cell' with arguments from the 'CPU' backend". These compute the same thing
as CUDA's kernels (aten/src/ATen/native/cuda/RNN.cu), on CPU copies, and return device tensors;
the workspace keeps CUDA's layout `[r, z, n, hx, hn + b_hn]`.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import torch

_libraries: List[Any] = []


def _gru_cell(
    input_gates: torch.Tensor,
    hidden_gates: torch.Tensor,
    hx: torch.Tensor,
    input_bias: Optional[torch.Tensor] = None,
    hidden_bias: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    device = hx.device
    ig, hg, h = input_gates.cpu(), hidden_gates.cpu(), hx.cpu()
    if input_bias is not None:
        ig = ig + input_bias.cpu()
    if hidden_bias is not None:
        hg = hg + hidden_bias.cpu()
    ir, iz, i_n = ig.chunk(3, 1)
    hr, hz, h_n = hg.chunk(3, 1)
    r = torch.sigmoid(ir + hr)
    z = torch.sigmoid(iz + hz)
    n = torch.tanh(i_n + r * h_n)
    hy = n + z * (h - n)
    workspace = torch.cat([r, z, n, h, h_n], 1)
    return hy.to(device), workspace.to(device)


def _gru_cell_backward(
    grad_hy: torch.Tensor, workspace: torch.Tensor, has_bias: bool
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, Optional[torch.Tensor], Optional[torch.Tensor]]:
    device = grad_hy.device
    g = grad_hy.cpu()
    r, z, n, h, h_n = workspace.cpu().chunk(5, 1)
    grad_z = g * (h - n) * z * (1 - z)
    grad_hx = g * z
    grad_n = g * (1 - z) * (1 - n * n)
    grad_r = grad_n * h_n * r * (1 - r)
    grad_input_gates = torch.cat([grad_r, grad_z, grad_n], 1)
    grad_hidden_gates = torch.cat([grad_r, grad_z, grad_n * r], 1)
    grad_input_bias = grad_input_gates.sum(0).to(device) if has_bias else None
    grad_hidden_bias = grad_hidden_gates.sum(0).to(device) if has_bias else None
    return (
        grad_input_gates.to(device),
        grad_hidden_gates.to(device),
        grad_hx.to(device),
        grad_input_bias,
        grad_hidden_bias,
    )


def register() -> None:
    """Register the kernels for the PrivateUse1 key (testaccel). Idempotent."""
    if _libraries:
        return
    library = torch.library.Library("aten", "IMPL")
    library.impl("_thnn_fused_gru_cell", _gru_cell, "PrivateUse1")
    library.impl("_thnn_fused_gru_cell_backward", _gru_cell_backward, "PrivateUse1")
    _libraries.append(library)
