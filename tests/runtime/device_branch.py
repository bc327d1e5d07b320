"""Take a half-precision fast path on the GPU and a plain path elsewhere."""

import torch


def gram(x):
    if x.device.type == "cuda":
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            y = x @ x.T
        return "accelerated", y.float()
    return "reference", x @ x.T


def main():
    x = torch.randn(4, 4, device="cuda")
    path, y = gram(x)
    on_accelerator = x.is_cuda
    print(f"path={path} on_accelerator={on_accelerator} shape={tuple(y.shape)}")


if __name__ == "__main__":
    main()
