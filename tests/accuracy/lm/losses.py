"""Memory-lean losses for large vocabularies, and the fp16 fine-tuning step that uses them."""

import torch
import torch.nn.functional as F


class ChunkedCrossEntropy(torch.autograd.Function):
    """Cross-entropy over the vocabulary in chunks of rows, so the full softmax never materialises."""

    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)  # expect: amp
    def forward(ctx, logits, labels, chunk: int = 4096):
        losses = []
        for start in range(0, logits.size(0), chunk):
            losses.append(F.cross_entropy(logits[start : start + chunk], labels[start : start + chunk], reduction="none"))
        ctx.save_for_backward(logits, labels)
        ctx.chunk = chunk
        return torch.cat(losses).mean()

    @staticmethod
    @torch.cuda.amp.custom_bwd  # expect: amp
    def backward(ctx, grad_out):
        logits, labels = ctx.saved_tensors
        grad = torch.empty_like(logits)
        n = logits.size(0)
        for start in range(0, n, ctx.chunk):
            part = logits[start : start + ctx.chunk]
            probs = part.softmax(dim=-1)
            probs[torch.arange(part.size(0), device=part.device), labels[start : start + ctx.chunk]] -= 1.0
            grad[start : start + ctx.chunk] = probs * (grad_out / n)
        return grad, None, None


def z_loss(logits: torch.Tensor, weight: float = 1e-4) -> torch.Tensor:
    """Penalise the log-partition function (PaLM's auxiliary loss); keeps logits from drifting in bf16."""
    return weight * torch.logsumexp(logits.float(), dim=-1).pow(2).mean()


def label_smoothed_nll(logits: torch.Tensor, labels: torch.Tensor, eps: float = 0.1, ignore_index: int = -100) -> torch.Tensor:
    logprobs = F.log_softmax(logits.float(), dim=-1)
    valid = labels != ignore_index
    safe = labels.clamp_min(0)
    nll = -logprobs.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    smooth = -logprobs.mean(dim=-1)
    loss = (1.0 - eps) * nll + eps * smooth
    return (loss * valid).sum() / valid.sum().clamp_min(1)


class Fp16Step:
    """One optimisation step in float16 with dynamic loss scaling."""

    def __init__(self, model, optimizer, max_norm: float = 1.0):
        self.model = model
        self.optimizer = optimizer
        self.max_norm = max_norm
        self.scaler = torch.amp.GradScaler()  # expect: amp

    def __call__(self, tokens, labels):
        with torch.autocast(device_type=tokens.device.type, dtype=torch.float16):
            logits = self.model(tokens)
            loss = ChunkedCrossEntropy.apply(logits.flatten(0, 1), labels.flatten())
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.detach()
