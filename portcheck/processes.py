"""The scan's worker processes: how they start."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (multiprocessing loads only where a scan starts a pool: a one-file scan stays light)
    from multiprocessing.context import BaseContext


def process_context() -> BaseContext:
    """The multiprocessing context for the scan's pools: forked on Linux, so workers inherit what the parent has
    ready (the compiled catalog, the texts to read facts from); the platform's default start method elsewhere."""
    import multiprocessing

    return multiprocessing.get_context("fork" if sys.platform == "linux" else None)
