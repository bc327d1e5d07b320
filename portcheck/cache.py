"""The result cache: each file's scan result, kept under `.portcheck_cache/` and reused while the file's
bytes, the tool, the rule catalog and the scan settings are unchanged. The project pass keeps its
per-file facts and findings in `Table`s next to the results (see portcheck.project_cache).
"""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional, Set, Tuple

import click

from portcheck import __version__
from portcheck.model import FileError, FileResult, Finding, FixSafety, Severity

CACHE_DIR = ".portcheck_cache"
FORMAT = 9
_GITIGNORE = "# Created by portcheck; the cache is local to this machine.\n*\n"
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by portcheck.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
# Opened relative to a folder descriptor, never through a symbolic link: a scanned repository that
# ships `.portcheck_cache` as a link, or with links inside, cannot steer where portcheck writes.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_SAFE = _NOFOLLOW != 0 and os.open in os.supports_dir_fd

# One index entry: (kind, content digest, encoded result). A result is reused only for the same bytes.
Entry = Tuple[str, bytes, bytes]


@dataclass(frozen=True)
class FileKey:
    """What a scanned file's result depends on: its bytes (size and mtime_ns are kept for callers)."""

    size: int
    mtime_ns: int
    digest: bytes


def content_digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def encode_findings(findings) -> tuple:
    """Findings as plain tuples, without their path (supplied again by `decode_findings`)."""
    return tuple(
        (
            f.line, f.column, f.end_line, f.end_column, f.code, f.name, f.category, f.severity.value,
            f.message, f.fixable, f.fix_safety.value, f.cell, f.source_line, f.guarded, f.note, f.fixes,
            f.role, f.symbol, f.also, f.lowered_until, f.unlowered and f.unlowered.value, f.manual, f.flag,
            f.unflagged and f.unflagged.value,
        )
        for f in findings
    )


# The fields a row written by an older encoding lacks, at the end of the row: `also`, `lowered_until`,
# `unlowered`, `manual`, `flag`, `unflagged` (their defaults).
_LATER_FIELDS = ((), (), None, "", "", None)


def decode_findings(encoded, path: str) -> Tuple[Finding, ...]:
    out = []
    for row in encoded:
        a, b, c, d, code, name, cat, sev, msg, fixable, safety, cell, src, guarded, note, fixes, role, symbol = row[:18]
        also, until, unlowered, manual, flag, unflagged = tuple(row[18:]) + _LATER_FIELDS[len(row) - 18 :]
        out.append(
            Finding(
                path=path, line=a, column=b, end_line=c, end_column=d, code=code, name=name, category=cat,
                severity=Severity(sev), message=msg, fixable=fixable, fix_safety=FixSafety(safety), cell=cell,
                source_line=src, guarded=guarded, note=note, fixes=tuple(tuple(pair) for pair in fixes),
                role=role, symbol=symbol, also=tuple(tuple(part) for part in also),
                lowered_until=tuple(tuple(place) for place in until),
                unlowered=Severity(unlowered) if unlowered else None, manual=manual, flag=flag,
                unflagged=Severity(unflagged) if unflagged else None,
            )
        )
    return tuple(out)


def encode_result(result: FileResult) -> bytes:
    """A compact, path-free encoding of a FileResult (the path is supplied again when decoding)."""
    findings = encode_findings(result.findings)
    error = None
    if result.error is not None:
        e = result.error
        error = (e.message, e.line, e.column, e.kind)
    # marshal: the fastest stdlib codec for plain tuples, and it cannot run code when loading. Its
    # format may change between Python versions, so the interpreter version is part of the cache key.
    return marshal.dumps((findings, error, result.lines, result.kind, result.backends))


def decode_result(blob: bytes, path: str) -> FileResult:
    findings, error, lines, kind, backends = marshal.loads(blob)
    return FileResult(
        path=path,
        findings=decode_findings(findings, path),
        error=FileError(path, error[0], error[1], error[2], error[3]) if error is not None else None,
        lines=lines,
        kind=kind,
        backends=tuple(backends),
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


def _valid(entry: object) -> bool:
    return (
        isinstance(entry, tuple) and len(entry) == 3 and isinstance(entry[0], str)
        and isinstance(entry[1], bytes) and isinstance(entry[2], bytes)
    )


class Bucket:
    """The cached results for one combination of tool, catalog and settings, loaded from one file."""

    def __init__(self, cache: "Cache", name: str) -> None:
        self.cache = cache
        self.name = name
        self.entries: Dict[str, Entry] = _decode_index(cache.read(name))
        self.seen: Set[str] = set()
        self.dirty = False
        # The digest of each file's bytes as read by `lookup` or given to `store`, by absolute path:
        # the project pass takes its per-file facts from the cache when they belong to the same bytes.
        self.digests: Dict[str, bytes] = {}

    def lookup(self, file: Path, kind: str, display: str) -> Optional[FileResult]:
        """The cached result for `file`, or None when there is none or the file's bytes changed."""
        key = os.path.abspath(file)
        self.seen.add(key)
        entry = self.entries.get(key)
        if entry is None or not _valid(entry) or entry[0] != kind:
            return None
        _, digest, blob = entry
        try:
            with open(key, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        # Keyed on the bytes, not the stat: `touch -r`, a checkout in the same second or a restored
        # mtime cannot bring back a stale result.
        current = self.digests[key] = content_digest(data)
        if current != digest:
            return None
        try:
            return decode_result(blob, display)
        except Exception:  # a malformed entry is a miss, whatever its shape
            return None

    def store(self, file: Path, kind: str, key: FileKey, result: FileResult) -> None:
        path = os.path.abspath(file)
        self.seen.add(path)
        self.entries[path] = (kind, key.digest, encode_result(result))
        self.digests[path] = key.digest
        self.dirty = True

    def save(self) -> None:
        """Write the index back when it changed, dropping entries of files that no longer exist."""
        if self.dirty:
            _write_entries(self.cache, self.name, self.entries, self.seen)
            self.dirty = False


def _write_entries(cache: "Cache", name: str, entries: Mapping[str, Any], seen: Set[str]) -> None:
    """Write one index file of `cache`: the entries of files seen by this scan or still there."""
    kept = {k: v for k, v in entries.items() if k in seen or os.path.exists(k)}
    cache.write(name, marshal.dumps((FORMAT, kept)))


def _read_entries(data: Optional[bytes], valid: Callable[[Any], bool]) -> Dict[str, Any]:
    """The entries of an index file that `valid` accepts; {} for anything that is not this format."""
    if not data:
        return {}
    try:
        fmt, entries = marshal.loads(data)
    except Exception:  # not marshal data, or not a pair: a miss, never an error
        return {}
    if fmt != FORMAT or not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(k, str) and valid(v)}


def _decode_index(data: Optional[bytes]) -> Dict[str, Entry]:
    return _read_entries(data, _valid)


class Table:
    """Entries of the project pass kept in one file of the cache folder, by absolute path: each a
    plain tuple whose first item is the digest of the file's bytes it was made from (see
    portcheck.project_cache). Entries of files that no longer exist are dropped when it is saved."""

    def __init__(self, cache: "Cache", name: str) -> None:
        self.cache = cache
        self.name = name
        self.entries: Dict[str, tuple] = _decode_table(cache.read(name))
        self.seen: Set[str] = set()
        self.dirty = False

    def get(self, path: str, digest: bytes) -> Optional[tuple]:
        """The entry for the absolute `path` when it was made from bytes with `digest`."""
        self.seen.add(path)
        entry = self.entries.get(path)
        if entry is None or entry[0] != digest:
            return None
        return entry

    def put(self, path: str, entry: tuple) -> None:
        self.seen.add(path)
        if self.entries.get(path) != entry:
            self.entries[path] = entry
            self.dirty = True

    def save(self) -> None:
        if self.dirty:
            _write_entries(self.cache, self.name, self.entries, self.seen)
            self.dirty = False


def _decode_table(data: Optional[bytes]) -> Dict[str, tuple]:
    return _read_entries(data, lambda v: isinstance(v, tuple) and bool(v) and isinstance(v[0], bytes))


class CacheRefused(Exception):
    """The cache folder is a symbolic link, holds links, or is not a folder: it is not used."""


class Cache:
    """Cached scan results under `<root>/.portcheck_cache/<version>/`, one index file per settings.

    Every access goes through folder descriptors opened without following links; a cache folder that
    is a link or contains one is refused (`refused` says why) and the scan runs without a cache.
    """

    def __init__(self, root: Path, catalog_digest: str) -> None:
        self.root = Path(root)
        self.folder = self.root / CACHE_DIR
        self.catalog_digest = catalog_digest
        self._stamp: Optional[tuple] = None
        self.refused: Optional[str] = None

    @classmethod
    def for_config(cls, config, catalog) -> "Cache":
        return cls(find_root(config), catalog.digest)

    def _digest(self, *extra: object) -> str:
        """A name for what the cached data depends on: the tool (format, version, catalog, interpreter,
        marshal format, code) and `extra`."""
        if self._stamp is None:
            self._stamp = _code_stamp()
        parts = (
            FORMAT, __version__, self.catalog_digest, sys.implementation.name, sys.version_info[:2],
            marshal.version, self._stamp, *extra,
        )
        return hashlib.blake2b(repr(parts).encode("utf-8"), digest_size=12).hexdigest()

    def key(self, settings) -> str:
        # Per-file ignores match the paths as displayed, which are relative to the working directory.
        where = os.getcwd() if getattr(settings, "per_file_ignores", ()) else ""
        return self._digest(repr(settings), where)

    def bucket(self, settings) -> Bucket:
        return Bucket(self, f"{self.key(settings)}.bin")

    def project_table(self) -> Table:
        """The project pass's per-file facts (summaries): they depend on a file's bytes and on the
        tool, not on the scan settings, so every target and every settings share one table."""
        return Table(self, f"project-{self._digest()}.bin")

    def findings_table(self, settings) -> Table:
        """The project pass's findings per file for one settings (they depend on its severities)."""
        return Table(self, f"{self.key(settings)}.project.bin")

    def _open(self, create: bool) -> Optional[int]:
        """A descriptor of `<root>/.portcheck_cache/<version>`, or None (absent, or refused)."""
        if not _SAFE:
            self.refused = "this platform cannot open files without following links"
            return None
        try:
            fd = os.open(self.root, os.O_RDONLY | _DIRECTORY)
        except OSError:
            return None
        try:
            for name in (CACHE_DIR, __version__):
                if create:
                    try:
                        os.mkdir(name, 0o777, dir_fd=fd)
                    except FileExistsError:
                        pass
                try:
                    sub = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
                except FileNotFoundError:
                    os.close(fd)
                    return None
                except OSError as exc:
                    raise CacheRefused(f"{self.folder}: not a plain folder ({exc.strerror})") from None
                os.close(fd)
                fd = sub
                _refuse_links(fd, self.folder)
                if name == CACHE_DIR and create:
                    _create(fd, ".gitignore", _GITIGNORE)
                    _create(fd, "CACHEDIR.TAG", _CACHEDIR_TAG)
            return fd
        except CacheRefused as exc:
            os.close(fd)
            self.refused = str(exc)
            return None
        except OSError:
            os.close(fd)
            return None

    def read(self, name: str) -> Optional[bytes]:
        fd = self._open(create=False)
        if fd is None:
            return None
        try:
            handle = os.open(name, os.O_RDONLY | _NOFOLLOW, dir_fd=fd)
        except OSError:
            return None
        finally:
            os.close(fd)
        with os.fdopen(handle, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            return f.read()

    def write(self, name: str, data: bytes) -> None:
        """Replace the index `name` (a crash may lose it: that only makes the next run slower)."""
        if self.refused:
            return
        fd = self._open(create=True)
        if fd is None:
            return
        tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        try:
            handle = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=fd)
            with os.fdopen(handle, "wb") as f:
                f.write(data)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError:
            try:
                os.unlink(tmp, dir_fd=fd)
            except OSError:
                pass  # a read-only checkout still scans, just without a cache
        finally:
            os.close(fd)


def _refuse_links(fd: int, folder: Path) -> None:
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_symlink():
                raise CacheRefused(f"{folder}: holds a symbolic link ({entry.name}); the cache is not used")


def _create(fd: int, name: str, text: str) -> None:
    """Create a small file in the cache folder once; never through a link, never over another file."""
    try:
        handle = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=fd)
    except FileExistsError:
        return
    with os.fdopen(handle, "w", encoding="utf-8") as f:
        f.write(text)


class CleanError(Exception):
    """The cache folder cannot be removed safely."""


def clean(root: Path) -> bool:
    """Remove the cache folder under `root`; True when there was one. A folder that is a symbolic
    link is not followed: CleanError says so."""
    folder = Path(root) / CACHE_DIR
    if folder.is_symlink():
        raise CleanError(f"{folder} is a symbolic link; not removed (remove the link yourself)")
    if not folder.is_dir():
        if os.path.lexists(folder):
            raise CleanError(f"{folder} is not a folder; not removed")
        return False
    try:
        shutil.rmtree(folder)  # removes links inside as links, never what they point to
    except OSError as exc:
        raise CleanError(f"{folder}: cannot remove: {exc.strerror or exc}") from None
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
    try:
        removed = clean(Path(root))
    except CleanError as exc:
        click.echo(f"portcheck: error: {exc}", err=True)
        raise click.exceptions.Exit(2) from None
    if removed:
        click.echo(f"portcheck: removed {folder}", err=True)
    else:
        click.echo(f"portcheck: no cache at {folder}", err=True)
