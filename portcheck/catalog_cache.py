"""The parsed rule files, kept in the user's cache folder so a run does not parse TOML again.

Parsing the catalog's TOML is most of what loading it costs; compiling the parsed tables into
matchers is cheap. So the cache holds only plain data: each rule file's parsed document, keyed by
a hash of the file's bytes, written with `marshal` (which cannot run code when it loads) into one
file per interpreter version. It lives in the user's cache folder (`$XDG_CACHE_HOME/portcheck`,
`~/.cache/portcheck`, `%LOCALAPPDATA%\\portcheck`), never in a scanned project, and is read only
from a folder and a file that the user owns and nobody else can write. Every failure to read or
write it falls back to parsing: the cache can only make loading faster, never change its result.
`PORTCHECK_NO_CATALOG_CACHE=1` turns it off.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import stat
import sys
from pathlib import Path
from typing import Any, Dict, Optional

FORMAT = 1
MAX_ENTRIES = 64  # rule files of several catalogs (checkouts, versions) side by side, bounded

_entries: Optional[Dict[str, Any]] = None  # this process's view of the cache file


def cache_folder() -> Optional[Path]:
    """Where the user's cache for portcheck goes, or None when it is turned off or unknown."""
    if os.environ.get("PORTCHECK_NO_CATALOG_CACHE"):
        return None
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or (
            os.path.join(os.path.expanduser("~"), ".cache") if os.path.expanduser("~") != "~" else None
        )
    return Path(base) / "portcheck" if base else None


def cache_file(folder: Path) -> Path:
    impl = sys.implementation
    return folder / f"catalog-v{FORMAT}-{impl.name}-{impl.version.major}.{impl.version.minor}.marshal"


def _private(st: os.stat_result, kind: int) -> bool:
    """Of `kind` (a folder or a regular file), owned by this user, writable by nobody else."""
    if stat.S_IFMT(st.st_mode) != kind:
        return False
    if not hasattr(os, "getuid"):  # Windows: the per-user LOCALAPPDATA folder is private by default
        return True
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _read(path: Path) -> Dict[str, Any]:
    try:
        if not _private(os.lstat(path.parent), stat.S_IFDIR):
            return {}
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags)
    except OSError:
        return {}
    try:
        with os.fdopen(fd, "rb") as handle:
            if not _private(os.fstat(handle.fileno()), stat.S_IFREG):
                return {}
            data = marshal.load(handle)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, dict) for k, v in data.items()):
        return {}
    return data


def _write(path: Path, entries: Dict[str, Any]) -> None:
    from portcheck.fsutil import atomic_write_bytes  # only when the cache is written, not on every start

    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(os.lstat(path.parent), stat.S_IFDIR):
            return
        atomic_write_bytes(path, marshal.dumps(entries), mode=0o600)
    except (OSError, ValueError):
        pass  # a cache that cannot be written only costs the next run the parse


def _parse(raw: bytes) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on older interpreters only
        import tomli as tomllib
    return tomllib.loads(raw.decode("utf-8"))


def parse_rule_file(raw: bytes) -> Dict[str, Any]:
    """`tomllib.loads(raw.decode("utf-8"))`, from the cache when this exact file was parsed before.

    Raises what parsing raises (UnicodeDecodeError, tomllib.TOMLDecodeError) for a bad file.
    """
    global _entries
    folder = cache_folder()
    if folder is None:
        return _parse(raw)
    path = cache_file(folder)
    if _entries is None:
        _entries = _read(path)
    key = hashlib.blake2b(raw, digest_size=16).hexdigest()
    doc = _entries.get(key)
    if doc is not None:
        return doc
    doc = _parse(raw)
    try:
        marshal.dumps(doc)
    except ValueError:
        return doc  # holds a value marshal cannot write (a date): not cached
    if len(_entries) >= MAX_ENTRIES:
        _entries = {}
    _entries[key] = doc
    _write(path, _entries)
    return doc
