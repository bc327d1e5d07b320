"""Model parts that put their state on the GPU unless told otherwise."""

import torch
import torch.nn as nn


class RunningMean:
    def __init__(self, dim, device="cuda"):
        self.total = torch.zeros(dim, device=device)
        self.count = 0

    def update(self, x):
        self.total += x.sum(dim=0)
        self.count += x.shape[0]
        return self.total / self.count


class Encoder(nn.Module):
    def __init__(self, dim=8, device="cuda:0"):
        super().__init__()
        self.proj = nn.Linear(dim, dim, device=device)
        self.stats = RunningMean(dim, device=device)

    def forward(self, x):
        y = torch.tanh(self.proj(x))
        self.stats.update(y.detach())
        return y


def main():
    encoder = Encoder()
    x = torch.randn(5, 8, device=encoder.proj.weight.device)
    y = encoder(x)
    print(f"encoded {tuple(y.shape)} after {encoder.stats.count} rows")


if __name__ == "__main__":
    main()
