"""`portcheck fix`: rewrite device code so it runs off CUDA, as a transform over the scan's findings.

The names below load on first use, so that a scan with nothing to fix never loads libcst, and
because `fix_paths` sits above the scanner, which itself asks this package's engine for verdicts.
"""

from importlib import import_module
from typing import Any

_HOMES = {
    "FileFix": "portcheck.fixer.outcome",
    "FixReport": "portcheck.fixer.outcome",
    "Left": "portcheck.fixer.outcome",
    "FixError": "portcheck.fixer.engine",
    "FixOptions": "portcheck.fixer.engine",
    "fix_text": "portcheck.fixer.engine",
    "fix_paths": "portcheck.fixer.paths",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'portcheck.fixer' has no attribute {name!r}")
    return getattr(import_module(home), name)
