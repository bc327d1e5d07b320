"""`portcheck fix`: rewrite device code so it runs off CUDA, as a transform over the scan's findings."""

from portcheck.fixer.engine import FixError, FixOptions, fix_text
from portcheck.fixer.outcome import FileFix, FixReport, Left
from portcheck.fixer.paths import fix_paths

__all__ = ["FileFix", "FixError", "FixOptions", "FixReport", "Left", "fix_paths", "fix_text"]
