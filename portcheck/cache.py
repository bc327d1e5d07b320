"""The result cache: each file's scan result, kept under `.portcheck_cache/` and reused while the file's
bytes, the tool, the rule catalog and the scan settings are unchanged.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Set, Tuple

import click

from portcheck import __version__
from portcheck.model import FileError, FileResult, Finding, FixSafety, Severity

CACHE_DIR = ".portcheck_cache"
FORMAT = 1
# A file whose mtime is this close to the scan's start may still change within the same clock tick
# (the "racy timestamp" problem git solves the same way): its stat alone is not trusted next time.
RACY_NS = 2_000_000_000
_GITIGNORE = "# Created by portcheck; the cache is local to this machine.\n*\n"
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by portcheck.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)

# One index entry: (kind, size, mtime_ns, stat_trusted, content digest, encoded result).
Entry = Tuple[str, int, int, bool, bytes, bytes]


@dataclass(frozen=True)
class FileKey:
    """What a scanned file's result depends on: its stat (a fast check) and its bytes (the real one)."""

    size: int
    mtime_ns: int
    digest: bytes


def content_digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def encode_result(result: FileResult) -> bytes:
    """A compact, path-free encoding of a FileResult (the path is supplied again when decoding)."""
    findings = tuple(
        (
            f.line, f.column, f.end_line, f.end_column, f.code, f.name, f.category, f.severity.value,
            f.message, f.fixable, f.fix_safety.value, f.cell, f.source_line, f.guarded, f.note, f.fixes,
        )
        for f in result.findings
    )
    error = None
    if result.error is not None:
        e = result.error
        error = (e.message, e.line, e.column, e.kind)
    # marshal: the fastest stdlib codec for plain tuples, and it cannot run code when loading. Its
    # format may change between Python versions, so the interpreter version is part of the cache key.
    return marshal.dumps((findings, error, result.lines, result.kind))


def decode_result(blob: bytes, path: str) -> FileResult:
    findings, error, lines, kind = marshal.loads(blob)
    return FileResult(
        path=path,
        findings=tuple(
            Finding(
                path=path, line=a, column=b, end_line=c, end_column=d, code=code, name=name, category=cat,
                severity=Severity(sev), message=msg, fixable=fixable, fix_safety=FixSafety(safety), cell=cell,
                source_line=src, guarded=guarded, note=note, fixes=tuple(tuple(pair) for pair in fixes),
            )
            for (a, b, c, d, code, name, cat, sev, msg, fixable, safety, cell, src, guarded, note, fixes) in findings
        ),
        error=FileError(path, error[0], error[1], error[2], error[3]) if error is not None else None,
        lines=lines,
        kind=kind,
    )


def _code_stamp() -> Tuple[Tuple[str, int, int], ...]:
    """Names, sizes and mtimes of portcheck's own modules: an edited checkout never reuses stale results."""
    base = Path(__file__).resolve().parent
    out = []
    stack = [base]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir() and entry.name != "__pycache__":
                stack.append(Path(entry.path))
            elif entry.name.endswith(".py"):
                st = entry.stat()
                out.append((os.path.relpath(entry.path, base), st.st_size, st.st_mtime_ns))
    return tuple(sorted(out))


def find_root(config) -> Path:
    """The folder the cache lives in: the project root (where the config file is), else the current folder."""
    return Path(config.root) if config.root is not None else Path.cwd()


class Bucket:
    """The cached results for one combination of tool, catalog and settings, loaded from one file."""

    def __init__(self, path: Path, started_ns: int) -> None:
        self.path = path
        self.started_ns = started_ns
        self.entries: Dict[str, Entry] = _load_index(path)
        self.seen: Set[str] = set()
        self.dirty = False

    def lookup(self, file: Path, kind: str, display: str) -> Optional[FileResult]:
        """The cached result for `file`, or None when there is none or the file changed."""
        key = os.path.abspath(file)
        self.seen.add(key)
        entry = self.entries.get(key)
        if entry is None or entry[0] != kind:
            return None
        _, size, mtime_ns, trusted, digest, blob = entry
        try:
            st = os.stat(key)
        except OSError:
            return None
        if not (trusted and st.st_size == size and st.st_mtime_ns == mtime_ns):
            if st.st_size != size:
                return None
            try:
                with open(key, "rb") as handle:
                    data = handle.read()
            except OSError:
                return None
            if content_digest(data) != digest:
                return None
            # Same bytes, new stat (a touch, a checkout): remember the stat so the next run skips the read.
            self.entries[key] = (kind, st.st_size, st.st_mtime_ns, self._trusted(st.st_mtime_ns), digest, blob)
            self.dirty = True
        try:
            return decode_result(blob, display)
        except (ValueError, TypeError, EOFError):
            return None

    def store(self, file: Path, kind: str, key: FileKey, result: FileResult) -> None:
        path = os.path.abspath(file)
        self.seen.add(path)
        self.entries[path] = (kind, key.size, key.mtime_ns, self._trusted(key.mtime_ns), key.digest, encode_result(result))
        self.dirty = True

    def _trusted(self, mtime_ns: int) -> bool:
        return mtime_ns < self.started_ns - RACY_NS

    def save(self) -> None:
        """Write the index back when it changed, dropping entries of files that no longer exist."""
        if not self.dirty:
            return
        entries = {k: v for k, v in self.entries.items() if k in self.seen or os.path.exists(k)}
        try:
            _prepare_dir(self.path.parent.parent)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            # No fsync: a cache file lost in a crash is only a slower next run.
            tmp.write_bytes(marshal.dumps((FORMAT, entries)))
            os.replace(tmp, self.path)
        except OSError:
            pass  # a read-only checkout still scans, just without a cache
        self.dirty = False


def _load_index(path: Path) -> Dict[str, Entry]:
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    try:
        fmt, entries = marshal.loads(data)
    except (ValueError, TypeError, EOFError):
        return {}
    if fmt != FORMAT or not isinstance(entries, dict):
        return {}
    return entries


def _prepare_dir(folder: Path) -> None:
    """Create the cache folder so that git and backup tools leave it alone."""
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text(_GITIGNORE, encoding="utf-8")
    tag = folder / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text(_CACHEDIR_TAG, encoding="utf-8")


class Cache:
    """Cached scan results under `<root>/.portcheck_cache/<version>/`, one index file per settings."""

    def __init__(self, root: Path, catalog_digest: str) -> None:
        self.folder = Path(root) / CACHE_DIR
        self.catalog_digest = catalog_digest
        self.started_ns = time.time_ns()
        self._stamp: Optional[tuple] = None

    @classmethod
    def for_config(cls, config, catalog) -> "Cache":
        return cls(find_root(config), catalog.digest)

    def key(self, settings) -> str:
        if self._stamp is None:
            self._stamp = _code_stamp()
        # Per-file ignores match the paths as displayed, which are relative to the working directory.
        where = os.getcwd() if getattr(settings, "per_file_ignores", ()) else ""
        parts = (
            FORMAT, __version__, self.catalog_digest, repr(settings), where, sys.implementation.name,
            sys.version_info[:2], marshal.version, self._stamp,
        )
        return hashlib.blake2b(repr(parts).encode("utf-8"), digest_size=12).hexdigest()

    def bucket(self, settings) -> Bucket:
        return Bucket(self.folder / __version__ / f"{self.key(settings)}.bin", self.started_ns)


def clean(root: Path) -> bool:
    """Remove the cache folder under `root`; True when there was one."""
    folder = Path(root) / CACHE_DIR
    if not folder.is_dir():
        return False
    shutil.rmtree(folder)
    return True


@click.command("clean")
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
def clean_command(path: Optional[Path]) -> None:
    """Remove the result cache (.portcheck_cache) of the project at PATH (default: the current folder)."""
    from portcheck.config import ConfigError, load_config

    start = path or Path(".")
    try:
        config = load_config(start)
    except ConfigError:
        config = None
    root = find_root(config) if config is not None and config.root is not None else start
    folder = Path(root) / CACHE_DIR
    if clean(Path(root)):
        click.echo(f"portcheck: removed {folder}", err=True)
    else:
        click.echo(f"portcheck: no cache at {folder}", err=True)
