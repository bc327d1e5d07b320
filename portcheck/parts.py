"""Which part of a project a path belongs to: product code, or tests, examples, benchmarks and docs.

The readiness headline is the product code's; the other parts are scored beside it. Parts are told
apart by path conventions, which `[tool.portcheck.parts]` can replace per part. A pattern without a
slash matches any one path segment (a folder or the file name: `tests`, `test_*.py`); a pattern with
a slash matches the whole path or any tail of it that starts at a segment (`src/*/testing/*`).
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Mapping, Optional, Sequence, Tuple

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


def _matches(path: str, pattern: str) -> bool:
    segments = [s for s in path.replace("\\", "/").split("/") if s not in ("", ".")]
    if "/" not in pattern.strip("/"):
        return any(fnmatchcase(s, pattern.strip("/")) for s in segments)
    pattern = pattern.strip("/")
    return any(fnmatchcase("/".join(segments[i:]), pattern) for i in range(len(segments)))


def part_of(path: str, patterns: Optional[Mapping[str, Sequence[str]]] = None) -> str:
    """The part `path` belongs to; `patterns` replaces the default patterns of the parts it names."""
    table = dict(DEFAULT_PATTERNS)
    if patterns:
        table.update({k: tuple(v) for k, v in patterns.items()})
    for part in OTHER_PARTS:
        if any(_matches(path, p) for p in table.get(part, ())):
            return part
    return PRODUCT
