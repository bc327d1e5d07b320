"""Which kind of file a path is, by name: Python, notebook, dependency list, Dockerfile, shell, run
configuration (YAML, `.env`), CMake, C++, CUDA."""

from __future__ import annotations

import fnmatch
from typing import Optional

# (kind, glob patterns on the file name), first match wins.
_KINDS = (
    ("notebook", ("*.ipynb",)),
    ("python", ("*.py",)),
    ("cuda", ("*.cu", "*.cuh")),
    (
        "requirements",
        ("requirements*.txt", "*requirements*.txt", "*-requirements.txt", "constraints*.txt", "requirements*.in"),
    ),
    ("pyproject", ("pyproject.toml",)),
    ("conda", ("environment*.yml", "environment*.yaml", "conda*.yml", "conda*.yaml", "env*.yml")),
    (
        "dockerfile",
        (
            "Dockerfile",
            "Dockerfile.*",
            "*.Dockerfile",
            "*.dockerfile",
            "Containerfile",
            "docker-compose*.yml",
            "docker-compose*.yaml",
            "compose*.yml",
            "compose*.yaml",
        ),
    ),
    ("shell", ("*.sh", "*.bash", "*.zsh", "*.slurm", "*.sbatch")),
    # Run configurations (YAML, Hydra/OmegaConf) and `.env` files: `device: cuda`, `backend: nccl`.
    # Dot-files such as `.pre-commit-config.yaml` configure tools, not runs.
    ("config", ("[!.]*.yaml", "[!.]*.yml")),
    ("dotenv", (".env", "*.env", ".env.*")),
    ("cmake", ("CMakeLists.txt", "*.cmake")),
    # C++ sources matter where they bind CUDA (extension glue, `TORCH_LIBRARY_IMPL(ns, CUDA, m)`).
    ("cpp", ("*.cpp", "*.cc", "*.cxx", "*.c++", "*.h", "*.hpp", "*.hh", "*.hxx")),
)

KINDS = tuple(k for k, _ in _KINDS)


def classify(name: str) -> Optional[str]:
    """The kind of a file from its base name, or None when portcheck does not read such files."""
    for kind, patterns in _KINDS:
        for pattern in patterns:
            if fnmatch.fnmatchcase(name, pattern):
                return kind
    return None
