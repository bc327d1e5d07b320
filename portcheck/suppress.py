"""Inline suppressions: `# portcheck: ignore`, `# portcheck: ignore[CODE, ...]`, `# noqa`, `# noqa: CODE`,
and `# portcheck: skip-file` anywhere in a file."""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Optional, Sequence

_IGNORE = re.compile(r"#\s*portcheck\s*:\s*ignore\b(?:\s*\[([^\]]*)\])?", re.IGNORECASE)
_NOQA = re.compile(r"#\s*noqa\b(?:\s*:\s*([A-Za-z0-9_,\s]+))?", re.IGNORECASE)
_SKIP_FILE = re.compile(r"#\s*portcheck\s*:\s*skip-file\b", re.IGNORECASE)

ALL: FrozenSet[str] = frozenset({"*"})


def _codes(group: Optional[str]) -> FrozenSet[str]:
    if not group or not group.strip():
        return ALL
    return frozenset(c.strip().upper() for c in re.split(r"[,\s]+", group) if c.strip())


def suppressions(lines: Sequence[str]) -> Dict[int, FrozenSet[str]]:
    """1-based line number -> codes suppressed on that line ('*' for all)."""
    out: Dict[int, FrozenSet[str]] = {}
    for number, line in enumerate(lines, 1):
        if "#" not in line:
            continue
        codes: FrozenSet[str] = frozenset()
        for m in _IGNORE.finditer(line):
            codes |= _codes(m.group(1))
        for m in _NOQA.finditer(line):
            codes |= _codes(m.group(1))
        if codes:
            out[number] = codes
    return out


def skip_file(text: str) -> bool:
    return "skip-file" in text and bool(_SKIP_FILE.search(text))


def is_suppressed(table: Dict[int, FrozenSet[str]], code: str, *lines: int) -> bool:
    for line in lines:
        codes = table.get(line)
        if codes and ("*" in codes or code in codes or any(code.startswith(c) for c in codes)):
            return True
    return False
