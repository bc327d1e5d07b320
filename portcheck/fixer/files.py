"""Read a file for fixing and write the fixed text back the way the file was: its encoding and BOM,
its line endings (libcst keeps them, and writes new lines with the file's own), and its mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Optional

from portcheck import limits
from portcheck.fixer.engine import FixError
from portcheck.fsutil import ChangedMeanwhile, atomic_write_bytes, digest
from portcheck.source import SourceText


def read(path: Path, kind: str = "python") -> bytes:
    try:
        too_large = limits.too_large(path.stat().st_size, kind)
        if too_large:
            raise FixError(too_large)
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


def boundary_for(path: Path, project: Optional[Path]) -> Path:
    """The folder a file named on the command line may be written in: the project (the folder of the
    config file) when the file is in it, else the folder the file was named in. Never the working folder
    as such: a link named in `proj/` may not lead to the rest of the machine."""
    folder = path.absolute().parent.resolve()
    if project is not None:
        project = project.resolve()
        if folder == project or project in folder.parents:
            return project
    return folder


def write_target(path: Path, root: Path) -> Path:
    """The file to write for `path`: a symbolic link is written through, but only to a file inside `root`
    (the boundary); a file whose real location is outside it, through a linked folder, is refused too."""
    try:
        real = path.resolve(strict=True)
        root = root.resolve()
        inside = real == root or root in real.parents
    except (OSError, RuntimeError):
        raise FixError("broken symbolic link") from None
    if not inside:
        if path.is_symlink():
            raise FixError("symbolic link to a file outside the project; not followed")
        raise FixError(f"reached through a symbolic link that leads out of {root}; not followed")
    return real if path.is_symlink() else path


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


def write(path: Path, data: bytes, original: Optional[bytes] = None) -> None:
    """Replace the file atomically, keeping its mode, owner and group; when `original` (the bytes the
    fix was computed from) is given and the file no longer holds them, it is left alone."""
    problem = unwritable(path)
    if problem:
        raise FixError(problem)
    try:
        atomic_write_bytes(path, data, expected=digest(original) if original is not None else None)
    except ChangedMeanwhile:
        raise FixError("changed by another program while being fixed; left as it is (run fix again)") from None
    except OSError as exc:
        raise FixError(f"cannot write: {exc.strerror or exc}") from None
