"""File writes that never leave a half-written file: write a sibling temp file, fsync, rename over."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def new_file_mode() -> int:
    """The mode `open(path, "w")` would give a new file: 0o666 less the process umask."""
    mask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically, keeping the file's mode when it exists; a new file gets
    the mode any other new file would get (the umask applies), not the temp file's 0600."""
    path = Path(path)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = new_file_mode()
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".portcheck-tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
