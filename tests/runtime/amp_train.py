"""Train a small regression model with mixed precision on the GPU."""

import torch
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast

torch.manual_seed(0)
torch.cuda.manual_seed_all(0)
device = torch.device("cuda")


def main():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = GradScaler()
    x = torch.randn(64, 8, device=device)
    y = x.sum(dim=1, keepdim=True)
    first = None
    for _step in range(40):
        optimizer.zero_grad(set_to_none=True)
        with autocast():
            loss = nn.functional.mse_loss(model(x).float(), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        first = loss.item() if first is None else first
    print(f"loss went down: {loss.item() < first}")


if __name__ == "__main__":
    main()
