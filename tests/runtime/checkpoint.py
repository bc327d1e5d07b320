"""Save a checkpoint on the GPU, then resume from it."""

import os
import tempfile

import torch
import torch.nn as nn


def build():
    return nn.Linear(3, 3).cuda()


def main():
    torch.cuda.manual_seed(1)
    model = build()
    path = os.path.join(tempfile.mkdtemp(), "last.pt")
    torch.save({"model": model.state_dict(), "step": 7}, path)
    state = torch.load(path, map_location="cuda")
    resumed = build()
    resumed.load_state_dict(state["model"])
    again = torch.load(path, map_location="cuda:0")
    same = all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), resumed.state_dict().values()))
    print(f"resumed at step {state['step']}, weights equal: {same and again['step'] == 7}")


if __name__ == "__main__":
    main()
