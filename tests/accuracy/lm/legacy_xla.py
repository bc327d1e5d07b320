"""Training loop from the torch-neuronx (PyTorch/XLA) era, still used for the Inf2/Trn1 jobs."""

import os

import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm  # expect: xla
import torch_xla.distributed.parallel_loader as pl  # expect: xla
import torch_xla.distributed.xla_multiprocessing as xmp  # expect: xla

# Downcast everything to bf16 on the device (the old Neuron recipe).
os.environ["XLA_USE_BF16"] = "1"  # expect: xla
os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer --optlevel=2"  # expect: xla


def build_model() -> nn.Module:
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10))


def make_loader(batch_size: int):
    from torchvision import datasets, transforms

    ds = datasets.MNIST("/data/mnist", train=True, download=True, transform=transforms.ToTensor())
    return torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=True, drop_last=True)


def train_fn(index, flags):
    device = xm.xla_device()  # expect: xla
    model = build_model().to(device)
    loader = pl.MpDeviceLoader(make_loader(flags["batch_size"]), device)  # expect: xla
    optimizer = torch.optim.AdamW(model.parameters(), lr=flags["lr"])
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(flags["epochs"]):
        for step, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            loss = loss_fn(model(x.view(x.size(0), -1)), y)
            loss.backward()
            xm.optimizer_step(optimizer)  # expect: xla
        xm.master_print(f"epoch {epoch} done")  # expect: xla
    xm.save(model.state_dict(), "model.pt")  # expect: xla


def export_for_inf2(model: nn.Module, example: torch.Tensor):
    import torch_neuronx

    traced = torch_neuronx.trace(model, example)  # expect: xla
    torch.jit.save(traced, "model_neuron.pt")


if __name__ == "__main__":
    xmp.spawn(train_fn, args=({"lr": 1e-3, "batch_size": 128, "epochs": 3},))  # expect: xla
