"""`portcheck fix`: rewrite device code so it runs off CUDA, as a transform over the scan's findings.

`fix_paths` (files and folders) sits above the scanner, which itself asks this package's engine what
is fixable; it is loaded on first use so that importing the engine never imports the scanner.
"""

from typing import Any

from portcheck.fixer.engine import FixError, FixOptions, fix_text
from portcheck.fixer.outcome import FileFix, FixReport, Left

__all__ = ["FileFix", "FixError", "FixOptions", "FixReport", "Left", "fix_paths", "fix_text"]


def __getattr__(name: str) -> Any:
    if name == "fix_paths":
        from portcheck.fixer.paths import fix_paths

        return fix_paths
    raise AttributeError(f"module 'portcheck.fixer' has no attribute {name!r}")
