"""Packaging for the training recipes (pure Python; the fused CUDA ops live in csrc/ and are optional)."""

from setuptools import find_packages, setup

setup(
    name="portable-lab",
    version="1.4.0",
    description="Image classification, language-model and RL training recipes",
    packages=find_packages(exclude=("tests", "notebooks", "scripts")),
    python_requires=">=3.9",
    install_requires=["torch>=2.6", "torchvision", "numpy", "tqdm", "pyyaml"],
    extras_require={"dev": ["pytest", "ruff"], "rl": ["gymnasium>=0.29"]},
    entry_points={"console_scripts": ["imgcls-train=imgcls.train:main", "lm-generate=lm.generate:main"]},
)
