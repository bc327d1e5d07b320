"""portcheck: how portable is a PyTorch repository off CUDA, where is the lock-in, and what fixes it."""

__version__ = "0.1.0"

from portcheck.api import fix, scan  # noqa: E402

__all__ = ["__version__", "fix", "scan"]
