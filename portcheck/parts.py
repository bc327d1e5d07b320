"""Which part of a project a path belongs to: product code, or tests, examples, benchmarks and docs.

The readiness headline is the product code's; the other parts are scored beside it. Parts are told
apart by path conventions, which `[tool.portcheck.parts]` can replace per part. A pattern without a
slash matches any one path segment (a folder or the file name: `tests`, `test_*.py`); a pattern with
a slash matches the whole path or any tail of it that starts at a segment (`src/*/testing/*`).
"""

from __future__ import annotations

import posixpath
import re
from fnmatch import translate
from functools import lru_cache
from typing import List, Mapping, Optional, Pattern, Sequence, Tuple

PRODUCT = "product"
# Checked in this order: a test under examples/ is a test.
OTHER_PARTS: Tuple[str, ...] = ("tests", "benchmarks", "examples", "docs")
PARTS: Tuple[str, ...] = (PRODUCT,) + OTHER_PARTS

DEFAULT_PATTERNS: Mapping[str, Tuple[str, ...]] = {
    "tests": ("test", "tests", "testing", "unittests", "test_*", "*_test.py", "conftest.py"),
    "benchmarks": ("bench", "benchmark", "benchmarks", "perf"),
    "examples": ("example", "examples", "demo", "demos", "tutorial", "tutorials", "notebooks", "samples"),
    "docs": ("doc", "docs", "documentation", "*.md", "*.rst"),
}


Table = Tuple[Tuple[str, Tuple[str, ...]], ...]
Compiled = Tuple[Tuple[str, Optional[Pattern[str]], Optional[Pattern[str]]], ...]


@lru_cache(maxsize=16)
def _compiled(table: Table) -> Compiled:
    """Per part, in order: one expression for its segment patterns and one for its path patterns
    (a scan asks for thousands of paths, so every pattern of a kind is tried at once)."""
    by_part = dict(table)
    out = []
    for part in OTHER_PARTS:
        stripped = [p.strip("/") for p in by_part.get(part, ())]
        segment = [translate(p) for p in stripped if "/" not in p]
        tail = [translate(p) for p in stripped if "/" in p]
        out.append(
            (part, re.compile("|".join(segment)) if segment else None, re.compile("|".join(tail)) if tail else None)
        )
    return tuple(out)


def part_of(path: str, patterns: Optional[Mapping[str, Sequence[str]]] = None) -> str:
    """The part `path` belongs to; `patterns` replaces the default patterns of the parts it names."""
    table = dict(DEFAULT_PATTERNS)
    if patterns:
        table.update({k: tuple(v) for k, v in patterns.items()})
    segments = [s for s in path.replace("\\", "/").split("/") if s not in ("", ".")]
    for part, segment, tail in _compiled(tuple(sorted((k, tuple(v)) for k, v in table.items()))):
        if segment is not None and any(segment.match(s) for s in segments):
            return part
        if tail is not None and any(tail.match("/".join(segments[i:])) for i in range(len(segments))):
            return part
    return PRODUCT


def folders_above(path: str) -> List[str]:
    """The folders holding the display path `path`, the nearest first, the root ("") left out:
    `a/b/c.py` -> ["a/b", "a"]."""
    out: List[str] = []
    current = posixpath.dirname(path)
    while current and current not in (".", "/") and current not in out:
        out.append(current)
        parent = posixpath.dirname(current)
        if parent == current:
            break
        current = parent
    return out
