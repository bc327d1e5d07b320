"""The small Python API the CLI is a thin layer over."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence, Union

from portcheck.model import ScanResult

PathLike = Union[str, Path]


def scan(
    paths: Sequence[PathLike] = (".",),
    target: Optional[str] = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    config_file: Optional[PathLike] = None,
    jobs: Optional[int] = 1,
) -> ScanResult:
    """Scan `paths` and return findings per file. Configuration is read as the CLI reads it."""
    from portcheck.config import load_config
    from portcheck.runner import scan_paths

    resolved = [Path(p) for p in paths] or [Path(".")]
    config = load_config(resolved[0], Path(config_file) if config_file else None)
    config = config.merged(select=tuple(select) or None, ignore=tuple(ignore) or None)
    return scan_paths(resolved, config, target=target, jobs=jobs)


def fix(paths: Sequence[PathLike] = (".",), target: str = "generic", unsafe: bool = False, write: bool = True):
    """Apply autofixes to `paths`; returns the fix summary (see portcheck.fixer)."""
    from portcheck.fixer import fix_paths

    return fix_paths([Path(p) for p in paths], target=target, unsafe=unsafe, write=write)
