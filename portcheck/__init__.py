"""portcheck: how portable is a PyTorch repository off CUDA, where is the lock-in, and what fixes it."""

__version__ = "0.1.0"

__all__ = ["__version__", "fix", "scan"]


def __getattr__(name: str):
    # Imported on first use: `python -m portcheck` must be able to drop the working folder from
    # sys.path (see __main__.py) before anything but this file has been imported.
    if name in ("fix", "scan"):
        from portcheck import api

        return getattr(api, name)
    raise AttributeError(f"module 'portcheck' has no attribute {name!r}")
