"""Read a file for fixing and write the fixed text back the way the file was: its encoding and BOM,
its line endings (libcst keeps them, and writes new lines with the file's own), and its mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Optional

from portcheck.fixer.engine import FixError
from portcheck.fsutil import atomic_write_bytes
from portcheck.source import SourceText

MAX_BYTES = 50 * 1024 * 1024


def read(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise FixError(f"file too large ({size} bytes)")
        return path.read_bytes()
    except FileNotFoundError:
        raise FixError("file disappeared") from None
    except PermissionError:
        raise FixError("permission denied") from None
    except OSError as exc:
        raise FixError(exc.strerror or str(exc)) from None


def encode(source: SourceText, text: str) -> bytes:
    """`text` in the file's encoding, with its BOM when it had one."""
    try:
        return source.encode(text)
    except UnicodeEncodeError as exc:
        raise FixError(f"the fixed text cannot be written as {source.encoding}: {exc.reason}") from None


def write_target(path: Path, root: Path) -> Path:
    """The file to write for `path`: a symbolic link is written through, but only to a file inside `root`."""
    if not path.is_symlink():
        return path
    try:
        real = path.resolve(strict=True)
        inside = real == root.resolve() or root.resolve() in real.parents
    except (OSError, RuntimeError):
        raise FixError("broken symbolic link") from None
    if not inside:
        raise FixError("symbolic link to a file outside the project; not followed")
    return real


def unwritable(path: Path) -> Optional[str]:
    """Why `path` must not be rewritten, or None. A file without write permission is refused even
    for a user (such as root) who could replace it anyway."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        return exc.strerror or str(exc)
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return "read-only file; make it writable to fix it"
    if not os.access(path, os.W_OK):
        return "permission denied"
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return "its folder is not writable"
    return None


def write(path: Path, data: bytes) -> None:
    """Replace the file atomically, keeping its mode."""
    problem = unwritable(path)
    if problem:
        raise FixError(problem)
    try:
        atomic_write_bytes(path, data)
    except OSError as exc:
        raise FixError(f"cannot write: {exc.strerror or exc}") from None
