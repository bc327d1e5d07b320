"""Evaluate a model on the device given on the command line."""

import argparse

import torch


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cuda", help="device to run on, e.g. cuda or cuda:1")
    parser.add_argument("--batch", type=int, default=4)
    return parser.parse_args(argv)


def main():
    args = parse_args()
    device = torch.device(args.device)
    model = torch.nn.Linear(5, 1).to(device)
    out = model(torch.ones(args.batch, 5, device=args.device))
    print(f"evaluated {out.shape[0]} rows on {device.type == out.device.type}")


if __name__ == "__main__":
    main()
