"""Evaluate a checkpoint on the validation set, with optional horizontal-flip test-time augmentation."""

import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from imgcls.data.loader import build_loaders
from imgcls.models.resnet import build_model
from imgcls.utils.checkpoint import load_pretrained
from imgcls.utils.metrics import confusion_matrix, expected_calibration_error, per_class_accuracy


def get_args():
    parser = argparse.ArgumentParser(description="Evaluate a trained classifier on one GPU")
    parser.add_argument("checkpoint")
    parser.add_argument("--arch", default="resnet50")
    parser.add_argument("--gpu", type=int, default=0, help="index of the CUDA device to use")
    parser.add_argument("--tta", action="store_true", help="average the predictions of the image and its mirror")
    parser.add_argument("--report", default="eval.json")
    return parser.parse_args()


@torch.no_grad()
def predict(model, loader, device, tta=False):
    probs, labels = [], []
    for images, targets in loader:
        images = images.to(device, non_blocking=True)
        logits = model(images)
        if tta:
            logits = (logits + model(torch.flip(images, dims=[3]))) / 2
        probs.append(F.softmax(logits, dim=1).cpu())  # expect: xla
        labels.append(targets)
    return torch.cat(probs).numpy(), torch.cat(labels).numpy()


def main():
    args = get_args()
    torch.backends.cudnn.benchmark = True  # expect: backend-flag
    device = torch.device(args.gpu)  # expect: device
    model = build_model(args.arch)
    load_pretrained(args.checkpoint, model)
    model = model.to(device).eval()
    _, val_loader, _ = build_loaders(batch_size=200, world_size=1, rank=0)
    with torch.cuda.device(args.gpu):  # expect: device
        probs, labels = predict(model, val_loader, device, tta=args.tta)

    preds = probs.argmax(axis=1)
    cm = confusion_matrix(preds, labels, num_classes=probs.shape[1])
    report = {
        "top1": float((preds == labels).mean() * 100.0),
        "ece": expected_calibration_error(probs, labels),
        "worst_classes": np.argsort(per_class_accuracy(cm))[:10].tolist(),
        "checkpoint": str(Path(args.checkpoint).resolve()),
    }
    Path(args.report).write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
