"""What a fix run did: per file, the findings it fixed, those left for a person (and why), and files
it refused to touch."""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass
from typing import Dict, Tuple

from portcheck.model import Finding


@dataclass(frozen=True)
class Left:
    """A finding the fix left for a person."""

    finding: Finding
    reason: str


@dataclass(frozen=True)
class FileFix:
    path: str  # as displayed
    kind: str = "python"
    applied: Tuple[Finding, ...] = ()
    left: Tuple[Left, ...] = ()
    error: str = ""  # why the file was left untouched
    old: str = ""  # the text before and after, kept only when it changed
    new: str = ""
    written: bool = False

    @property
    def changed(self) -> bool:
        return not self.error and self.old != self.new

    def diff(self) -> str:
        if not self.changed:
            return ""
        return "".join(
            difflib.unified_diff(
                self.old.splitlines(keepends=True),
                self.new.splitlines(keepends=True),
                fromfile=f"a/{self.path}",
                tofile=f"b/{self.path}",
            )
        )


@dataclass(frozen=True)
class FixReport:
    target: str
    write: bool  # False for --diff and --check
    files: Tuple[FileFix, ...]

    @property
    def changed(self) -> Tuple[FileFix, ...]:
        return tuple(f for f in self.files if f.changed)

    @property
    def refused(self) -> Tuple[FileFix, ...]:
        return tuple(f for f in self.files if f.error)

    @property
    def applied(self) -> Tuple[Finding, ...]:
        return tuple(a for f in self.files for a in f.applied)

    @property
    def left(self) -> Tuple[Left, ...]:
        return tuple(item for f in self.files for item in f.left)

    def applied_by_rule(self) -> Dict[str, int]:
        return dict(sorted(Counter(f.code for f in self.applied).items()))

    def left_by_rule(self) -> Dict[str, Tuple[int, str]]:
        """code -> (count, the first reason given)."""
        out: Dict[str, Tuple[int, str]] = {}
        for item in self.left:
            count, reason = out.get(item.finding.code, (0, item.reason))
            out[item.finding.code] = (count + 1, reason)
        return dict(sorted(out.items()))
