"""Ancestral sampling from a trained DDPM, writing a PNG grid."""

import argparse

import torch
from torchvision.utils import save_image

from diffusion.schedule import NoiseSchedule


def get_args():
    parser = argparse.ArgumentParser(description="Sample images from a DDPM checkpoint")
    parser.add_argument("--ckpt", required=True)
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", type=str, default="cuda:0")  # expect: device
    parser.add_argument("--fp64", action="store_true", help="run the sampler in float64 to compare with the reference")
    return parser.parse_args()


@torch.no_grad()
def sample(model, schedule: NoiseSchedule, shape, generator, device):
    x = torch.randn(shape, generator=generator, device=device)
    for i in reversed(range(schedule.timesteps)):
        t = torch.full((shape[0],), i, device=device, dtype=torch.long)
        eps = model(x, t)
        beta = schedule.betas[t].view(-1, 1, 1, 1)
        mean = schedule.sqrt_recip_alphas[t].view(-1, 1, 1, 1) * (x - beta / schedule.sqrt_one_minus_alphas_cumprod[t].view(-1, 1, 1, 1) * eps)
        noise = torch.randn(shape, generator=generator, device=device) if i > 0 else torch.zeros_like(x)
        x = mean + schedule.posterior_variance[t].sqrt().view(-1, 1, 1, 1) * noise
    return x.clamp(-1, 1)


def main():
    args = get_args()
    if args.fp64:
        torch.set_default_dtype(torch.float64)  # expect: xla
    device = torch.device(args.device)
    generator = torch.Generator(device="cuda").manual_seed(args.seed)  # expect: device
    model = torch.load(args.ckpt, map_location=device, weights_only=False)
    model.eval()
    schedule = NoiseSchedule().to(device)
    images = sample(model, schedule, (args.n, 3, args.size, args.size), generator, device)
    save_image((images + 1) / 2, "samples.png", nrow=8)
    print(f"wrote {args.n} samples to samples.png")


if __name__ == "__main__":
    main()
