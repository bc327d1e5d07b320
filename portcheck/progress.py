"""A progress bar on stderr for long scans: only on a terminal, only for human-readable output, and
rich is imported only when a bar is actually drawn.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, TextIO

# Fewer files than this scan in about a second: a bar would only flicker.
MIN_FILES = 200

Advance = Callable[[int], None]


def wanted(fmt: str, output_file: Optional[str], quiet: bool) -> bool:
    """Whether a scan may draw a bar: never with --quiet, -o, or a machine-readable format."""
    return not quiet and fmt == "text" and not output_file


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _ignore(n: int = 1) -> None:
    return None


@contextmanager
def progress_bar(total: int, stream: Optional[TextIO] = None, min_files: int = MIN_FILES) -> Iterator[Advance]:
    """Yield `advance(n)`; draw a bar of `total` steps on `stream` (stderr) when it is a terminal and
    the job is long enough. The bar is removed when the block ends."""
    stream = sys.stderr if stream is None else stream
    if total < min_files or not _is_terminal(stream):
        yield _ignore
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(file=stream)
    columns = (TextColumn("Scanning"), BarColumn(), MofNCompleteColumn(), TextColumn("files"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("scan", total=total)

        def advance(n: int = 1) -> None:
            bar.advance(task, n)

        yield advance


# The name the CLI looks up.
maybe_progress = progress_bar
