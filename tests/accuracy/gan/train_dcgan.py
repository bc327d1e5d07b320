"""DCGAN on CelebA, in the style of the original PyTorch-GAN scripts (module-level script, apex AMP)."""

import argparse
import os

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable
from torchvision import datasets, transforms
from torchvision.utils import save_image

try:
    from apex import amp  # expect: package

    APEX_AVAILABLE = True
except ImportError:
    APEX_AVAILABLE = False

parser = argparse.ArgumentParser()
parser.add_argument("--n_epochs", type=int, default=200, help="number of epochs of training")
parser.add_argument("--batch_size", type=int, default=64, help="size of the batches")
parser.add_argument("--lr", type=float, default=0.0002, help="adam: learning rate")
parser.add_argument("--latent_dim", type=int, default=100, help="dimensionality of the latent space")
parser.add_argument("--img_size", type=int, default=64, help="size of each image dimension")
parser.add_argument("--channels", type=int, default=3, help="number of image channels")
parser.add_argument("--sample_interval", type=int, default=400, help="interval between image samples")
parser.add_argument("--gpu_ids", type=str, default="0,1", help="comma-separated CUDA device ids")
parser.add_argument("--opt_level", type=str, default="O1", help="apex amp optimisation level")
opt = parser.parse_args()
print(opt)

os.makedirs("images", exist_ok=True)
os.environ["CUDA_VISIBLE_DEVICES"] = opt.gpu_ids  # expect: device

cuda = True if torch.cuda.is_available() else False  # expect: device
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor  # expect: device


def weights_init_normal(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm2d") != -1:
        torch.nn.init.normal_(m.weight.data, 1.0, 0.02)
        torch.nn.init.constant_(m.bias.data, 0.0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.init_size = opt.img_size // 4
        self.l1 = nn.Sequential(nn.Linear(opt.latent_dim, 128 * self.init_size**2))
        self.conv_blocks = nn.Sequential(
            nn.BatchNorm2d(128),
            nn.Upsample(scale_factor=2),
            nn.Conv2d(128, 128, 3, stride=1, padding=1),
            nn.BatchNorm2d(128, 0.8),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Upsample(scale_factor=2),
            nn.Conv2d(128, 64, 3, stride=1, padding=1),
            nn.BatchNorm2d(64, 0.8),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(64, opt.channels, 3, stride=1, padding=1),
            nn.Tanh(),
        )

    def forward(self, z):
        out = self.l1(z)
        out = out.view(out.shape[0], 128, self.init_size, self.init_size)
        return self.conv_blocks(out)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()

        def discriminator_block(in_filters, out_filters, bn=True):
            block = [nn.Conv2d(in_filters, out_filters, 3, 2, 1), nn.LeakyReLU(0.2, inplace=True), nn.Dropout2d(0.25)]
            if bn:
                block.append(nn.BatchNorm2d(out_filters, 0.8))
            return block

        self.model = nn.Sequential(
            *discriminator_block(opt.channels, 16, bn=False),
            *discriminator_block(16, 32),
            *discriminator_block(32, 64),
            *discriminator_block(64, 128),
        )
        ds_size = opt.img_size // 2**4
        self.adv_layer = nn.Sequential(nn.Linear(128 * ds_size**2, 1), nn.Sigmoid())

    def forward(self, img):
        out = self.model(img)
        return self.adv_layer(out.view(out.shape[0], -1))


adversarial_loss = torch.nn.BCELoss()
generator = Generator()
discriminator = Discriminator()

if cuda:
    generator.cuda()  # expect: device
    discriminator.cuda()  # expect: device
    adversarial_loss.cuda()  # expect: device

generator.apply(weights_init_normal)
discriminator.apply(weights_init_normal)

optimizer_G = torch.optim.Adam(generator.parameters(), lr=opt.lr, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=opt.lr, betas=(0.5, 0.999))

if APEX_AVAILABLE:
    [generator, discriminator], [optimizer_G, optimizer_D] = amp.initialize(
        [generator, discriminator], [optimizer_G, optimizer_D], opt_level=opt.opt_level, num_losses=2
    )

n_gpu = len(opt.gpu_ids.split(","))
if n_gpu > 1:
    generator = nn.DataParallel(generator, device_ids=list(range(n_gpu)))  # expect: distributed
    discriminator = nn.DataParallel(discriminator, device_ids=list(range(n_gpu)))  # expect: distributed

dataloader = torch.utils.data.DataLoader(
    datasets.ImageFolder(
        "/data/celeba",
        transform=transforms.Compose(
            [transforms.Resize(opt.img_size), transforms.CenterCrop(opt.img_size), transforms.ToTensor(), transforms.Normalize([0.5] * 3, [0.5] * 3)]
        ),
    ),
    batch_size=opt.batch_size,
    shuffle=True,
    num_workers=4,
    pin_memory=True,
)


def backward(loss, optimizer, loss_id):
    if APEX_AVAILABLE:
        with amp.scale_loss(loss, optimizer, loss_id=loss_id) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()


for epoch in range(opt.n_epochs):
    for i, (imgs, _) in enumerate(dataloader):
        valid = Variable(Tensor(imgs.shape[0], 1).fill_(1.0), requires_grad=False)
        fake = Variable(Tensor(imgs.shape[0], 1).fill_(0.0), requires_grad=False)
        real_imgs = Variable(imgs.type(Tensor))

        optimizer_G.zero_grad()
        z = Variable(Tensor(np.random.normal(0, 1, (imgs.shape[0], opt.latent_dim))))
        gen_imgs = generator(z)
        g_loss = adversarial_loss(discriminator(gen_imgs), valid)
        backward(g_loss, optimizer_G, 0)
        optimizer_G.step()

        optimizer_D.zero_grad()
        real_loss = adversarial_loss(discriminator(real_imgs), valid)
        fake_loss = adversarial_loss(discriminator(gen_imgs.detach()), fake)
        d_loss = (real_loss + fake_loss) / 2
        backward(d_loss, optimizer_D, 1)
        optimizer_D.step()

        print(
            "[Epoch %d/%d] [Batch %d/%d] [D loss: %f] [G loss: %f]"
            % (epoch, opt.n_epochs, i, len(dataloader), d_loss.item(), g_loss.item())  # expect: xla
        )
        batches_done = epoch * len(dataloader) + i
        if batches_done % opt.sample_interval == 0:
            save_image(gen_imgs.data[:25], "images/%d.png" % batches_done, nrow=5, normalize=True)
