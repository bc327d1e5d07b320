"""Baselines for incremental adoption: record today's findings in a file, then report only new ones.

A finding is recognised by its rule code, its source line with whitespace collapsed, its path and its
place among identical (code, line, path) findings, so edits that only shift lines keep it known.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

from portcheck import __version__
from portcheck.model import Finding, ScanResult

FORMAT = 1
_KEYS = ("path", "code", "source", "occurrence")


class BaselineError(Exception):
    """A baseline file is missing or malformed."""


class Fingerprint(NamedTuple):
    path: str  # relative to the baseline file's folder, forward slashes
    code: str
    source: str  # the source line, whitespace collapsed
    occurrence: int  # 0 for the first (code, source, path) match in the file, 1 for the next, ...


@dataclass(frozen=True)
class Baseline:
    path: Path
    fingerprints: FrozenSet[Fingerprint]

    @property
    def root(self) -> Path:
        """Paths in the baseline are relative to the folder it sits in."""
        return self.path.absolute().parent


def normalize_source(line: str) -> str:
    return " ".join(line.split())


def _relative(path: str, root: Path, cwd: Path) -> str:
    # Finding paths are relative to the working directory; the baseline's, to its own folder, so the
    # same file works whichever folder portcheck runs from.
    full = os.path.normpath(os.path.join(cwd, path))
    try:
        rel = os.path.relpath(full, root)
    except ValueError:  # another drive on Windows
        rel = full
    return rel.replace(os.sep, "/")


def fingerprint_all(
    findings: Iterable[Finding], root: Path, cwd: Optional[Path] = None
) -> List[Tuple[Finding, Fingerprint]]:
    """Each finding with its fingerprint; occurrence indexes follow the findings' sorted order."""
    cwd = cwd or Path.cwd()
    counts: Dict[Tuple[str, str, str], int] = {}
    rel_cache: Dict[str, str] = {}
    out = []
    for f in sorted(findings, key=Finding.sort_key):
        rel = rel_cache.get(f.path)
        if rel is None:
            rel = rel_cache[f.path] = _relative(f.path, root, cwd)
        source = normalize_source(f.source_line)
        triple = (rel, f.code, source)
        n = counts.get(triple, 0)
        counts[triple] = n + 1
        out.append((f, Fingerprint(rel, f.code, source, n)))
    return out


def dumps(fingerprints: Iterable[Fingerprint]) -> str:
    """The baseline file's text: versioned, sorted, one finding per line so diffs stay readable."""
    rows = sorted(set(fingerprints))
    lines = ["{", f'  "portcheck-baseline": {FORMAT},', f'  "tool-version": {json.dumps(__version__)},']
    if not rows:
        lines.append('  "findings": []')
    else:
        lines.append('  "findings": [')
        body = [
            "    "
            + json.dumps(
                {"path": r.path, "code": r.code, "source": r.source, "occurrence": r.occurrence}, ensure_ascii=False
            )
            for r in rows
        ]
        lines.append(",\n".join(body))
        lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_baseline(path: Path, scans: Union[ScanResult, Sequence[ScanResult]], cwd: Optional[Path] = None) -> int:
    """Record the findings of `scans` (one scan, or one per target) in `path`; returns how many."""
    from portcheck.fsutil import write_output

    path = Path(path)
    root = path.absolute().parent
    if isinstance(scans, ScanResult):
        scans = [scans]
    prints = {fp for scan in scans for _, fp in fingerprint_all(scan.findings, root, cwd)}
    write_output(path, dumps(prints))
    return len(prints)


def loads(text: str, origin: Path) -> Baseline:
    def bad(problem: str) -> BaselineError:
        return BaselineError(f"{origin}: not a valid portcheck baseline: {problem}")

    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise bad(f"invalid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise bad("JSON nested too deeply") from None
    except ValueError as exc:  # a number too long to convert, for one
        raise bad(f"invalid JSON ({exc})") from None
    if not isinstance(doc, dict) or "portcheck-baseline" not in doc:
        raise bad("no 'portcheck-baseline' key")
    if doc["portcheck-baseline"] != FORMAT:
        raise bad(f"unsupported format {doc['portcheck-baseline']!r} (this portcheck reads format {FORMAT})")
    rows = doc.get("findings")
    if not isinstance(rows, list):
        raise bad("'findings' must be a list")
    prints = set()
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or set(row) != set(_KEYS):
            raise bad(f"findings[{i}] must have exactly the keys {', '.join(_KEYS)}")
        path, code, source, occurrence = (row[k] for k in _KEYS)
        if not all(isinstance(v, str) for v in (path, code, source)):
            raise bad(f"findings[{i}]: path, code and source must be strings")
        if isinstance(occurrence, bool) or not isinstance(occurrence, int) or occurrence < 0:
            raise bad(f"findings[{i}]: occurrence must be a whole number >= 0")
        prints.add(Fingerprint(path, code, source, occurrence))
    return Baseline(path=origin, fingerprints=frozenset(prints))


def load_baseline(path: Path) -> Baseline:
    """Read a baseline: a regular file of at most MAX_BASELINE_BYTES (a FIFO or a device is refused,
    never waited on or read without end)."""
    from portcheck.limits import MAX_BASELINE_BYTES

    path = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not hang; it is refused below.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such baseline file (create one with --write-baseline)") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise BaselineError(f"{path}: not a regular file; a baseline must be one")
        if st.st_size > MAX_BASELINE_BYTES:
            raise BaselineError(
                f"{path}: baseline too large ({st.st_size:,} bytes; the limit is {MAX_BASELINE_BYTES:,})"
            )
        try:
            data = handle.read(MAX_BASELINE_BYTES + 1)
        except OSError as exc:
            raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
    if len(data) > MAX_BASELINE_BYTES:
        raise BaselineError(f"{path}: baseline too large (more than {MAX_BASELINE_BYTES:,} bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc}") from None
    return loads(text, path)


def _split(scan: ScanResult, baseline: Baseline, keep_new: bool, cwd: Optional[Path]) -> ScanResult:
    known = baseline.fingerprints
    files = []
    for fr in scan.files:
        if not fr.findings:
            files.append(fr)
            continue
        kept = tuple(f for f, fp in fingerprint_all(fr.findings, baseline.root, cwd) if (fp not in known) == keep_new)
        files.append(replace(fr, findings=kept))
    return ScanResult(target=scan.target, files=tuple(files))


def filter_new(scan: ScanResult, baseline: Baseline, cwd: Optional[Path] = None) -> ScanResult:
    """The scan with only the findings the baseline does not know (files and errors kept)."""
    return _split(scan, baseline, keep_new=True, cwd=cwd)


def baseline_only(scan: ScanResult, baseline: Baseline, cwd: Optional[Path] = None) -> ScanResult:
    """The scan without its new findings: the code as the baseline knew it, for the 'before' score."""
    return _split(scan, baseline, keep_new=False, cwd=cwd)
