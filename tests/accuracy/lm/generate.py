"""Sample from a trained checkpoint.

Device selection was moved to ``torch.accelerator`` in v0.4; the CUDA-graph decoder and the timing
code still come from the first, GPU-only version.
"""

import argparse

import torch

from lm.model import ModelArgs, Transformer


def resolve_device() -> torch.device:
    acc = torch.accelerator.current_accelerator(check_available=True)
    return acc if acc is not None else torch.device("cpu")


def encode(text: str) -> list:
    return list(text.encode("utf-8"))


def decode(ids: list) -> str:
    return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")


def sample_top_p(probs: torch.Tensor, p: float) -> torch.Tensor:
    probs_sort, probs_idx = torch.sort(probs, dim=-1, descending=True)
    probs_sum = torch.cumsum(probs_sort, dim=-1)
    probs_sort = probs_sort.masked_fill(probs_sum - probs_sort > p, 0.0)
    probs_sort.div_(probs_sort.sum(dim=-1, keepdim=True))
    next_token = torch.multinomial(probs_sort, num_samples=1)
    return torch.gather(probs_idx, -1, next_token)


@torch.inference_mode()
def generate(model, prompt_tokens, max_new_tokens, temperature=0.8, top_p=0.95, eos_id=2):
    tokens = prompt_tokens
    for _ in range(max_new_tokens):
        logits = model(tokens)[:, -1, :]
        probs = torch.softmax(logits / temperature, dim=-1)
        next_token = sample_top_p(probs, top_p)
        tokens = torch.cat([tokens, next_token], dim=1)
        if (next_token == eos_id).all():  # expect: xla
            break
    return tokens


class CUDAGraphRunner:
    """Captures one decode step in a CUDA graph to remove launch overhead at batch size 1."""

    def __init__(self, model):
        self.model = model
        self.static_tokens = torch.zeros(1, 1, dtype=torch.long, device="cuda")  # expect: device
        self.graph = torch.cuda.CUDAGraph()  # expect: runtime
        side = torch.cuda.Stream()  # expect: runtime
        side.wait_stream(torch.cuda.current_stream())  # expect: runtime
        with torch.cuda.stream(side):  # expect: runtime
            for _ in range(3):
                self.model(self.static_tokens)
        torch.cuda.current_stream().wait_stream(side)  # expect: runtime
        with torch.cuda.graph(self.graph):  # expect: runtime
            self.static_logits = self.model(self.static_tokens)

    def __call__(self, tokens):
        self.static_tokens.copy_(tokens)
        self.graph.replay()
        return self.static_logits


def main():
    parser = argparse.ArgumentParser(description="Sample text from a checkpoint")
    parser.add_argument("--ckpt", required=True)
    parser.add_argument("--prompt", default="Once upon a time")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--cuda-graph", action="store_true", help="capture decoding in a CUDA graph (GPU only)")
    args = parser.parse_args()

    device = resolve_device()
    model = Transformer(ModelArgs(), device="cpu")
    state = torch.load(args.ckpt, map_location="cpu", weights_only=True)
    model.load_state_dict(state)
    model = model.to(device).eval()
    tokens = torch.tensor([encode(args.prompt)], dtype=torch.long).cuda()  # expect: device
    if args.cuda_graph:
        model = CUDAGraphRunner(model)

    start = torch.cuda.Event(enable_timing=True)  # expect: runtime
    end = torch.cuda.Event(enable_timing=True)  # expect: runtime
    start.record()
    out = generate(model, tokens, args.max_new_tokens)
    end.record()
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()
    ms = start.elapsed_time(end)
    n_new = out.shape[1] - tokens.shape[1]
    print(f"{n_new} tokens in {ms:.0f} ms ({1000 * n_new / max(ms, 1e-6):.1f} tok/s)")
    print(decode(out[0].tolist()))
    if torch.accelerator.is_available():
        print(f"peak memory {torch.accelerator.max_memory_allocated() / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
