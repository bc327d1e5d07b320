"""File writes that never leave a half-written file, never replace what is not a regular file, and
never overwrite an edit made while portcheck worked: write a sibling temp file, fsync, check, rename over.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Optional


class ChangedMeanwhile(OSError):
    """The file's bytes are no longer the ones portcheck read: another process edited it."""


class NotARegularFile(OSError):
    """The path names a folder, socket or something else portcheck will not write to."""


def digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def current_umask() -> int:
    # os.umask can only be read by setting it; the value is put back at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_file_mode() -> int:
    """The mode `open(path, "w")` would give a new file: 0o666 less the process umask."""
    return 0o666 & ~current_umask()


def _unchanged(path: Path, expected: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            return digest(handle.read()) == expected
    except OSError:
        return False


def atomic_write_bytes(path: Path, data: bytes, expected: Optional[bytes] = None, mode: Optional[int] = None) -> None:
    """Replace `path` with `data` atomically, keeping the file's mode, owner and group when it exists.

    `expected` is the digest (`digest()`) of the bytes the caller read: when the file no longer holds
    them, nothing is written and ChangedMeanwhile is raised. A new file gets the mode the umask allows;
    `mode` (a private cache file: 0o600) is used instead, new file or not.
    """
    path = Path(path)
    try:
        before = os.stat(path)
    except FileNotFoundError:
        before = None
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".portcheck-tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        elif before is not None:
            os.chmod(tmp, stat.S_IMODE(before.st_mode))
            if (before.st_uid, before.st_gid) != (os.geteuid(), os.getegid()):
                try:  # root can always; others only to a group they belong to
                    os.chown(tmp, before.st_uid, before.st_gid)
                except OSError:
                    pass
        else:
            os.chmod(tmp, new_file_mode())
        # The last moment before the rename: an edit made while the fix was computed is not lost.
        if expected is not None and not _unchanged(path, expected):
            raise ChangedMeanwhile(f"{path} changed while portcheck was working on it")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def write_output(path: Path, text: str) -> None:
    """Write a report or baseline the user named: a regular file (or a new one) is replaced atomically;
    a character device or FIFO (`/dev/stdout`, `/dev/null`, a pipe) is written as a stream and never
    replaced; anything else is refused. The text is always written as valid UTF-8."""
    path = Path(path)
    data = text.encode("utf-8", errors="backslashreplace")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is None or stat.S_ISREG(st.st_mode):
        # Through a link (`/dev/stdout` redirected to a file, a link in the project): replace the file
        # it leads to and keep the link.
        atomic_write_bytes(Path(os.path.realpath(path)) if os.path.islink(path) else path, data)
        return
    if not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        raise NotARegularFile(f"{path}: not a regular file; refusing to write to it")
    # No O_CREAT: if the node vanished meanwhile, fail rather than create a file in its place.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
