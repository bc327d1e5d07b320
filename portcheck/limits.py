"""Per-file resource limits for `scan` and `fix`, and the one-line message a file over a limit gets.

A file over a limit is reported (the run goes on); nothing is silently dropped. Measured costs and the
reasons for each number are in docs/safety.md ("Limits").
"""

from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Tuple, TypeVar

from portcheck.pyscan.nodes import walk

# Bytes per file. Source and text files: 8 MiB is 6x the largest file in torch and 25x the largest
# Python file in the development corpus; notebooks keep their outputs (images) in the same file.
MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_NOTEBOOK_BYTES = 50 * 1024 * 1024
# Findings per file: enough for any real file (the corpus maximum is in docs/safety.md); a file with
# more reports the first ones and says how many there were, so reports stay small.
MAX_FINDINGS_PER_FILE = 1_000
# Syntax nodes (Python's ast) in a file `fix` rewrites: libcst takes about 0.25 ms per node.
MAX_FIX_NODES = 100_000
# A baseline file: far above one line per finding of any real project.
MAX_BASELINE_BYTES = 64 * 1024 * 1024

T = TypeVar("T")


def max_bytes(kind: str) -> int:
    return MAX_NOTEBOOK_BYTES if kind == "notebook" else MAX_FILE_BYTES


def too_large(size: int, kind: str) -> Optional[str]:
    """The message for a file of `size` bytes, or None when it is within the limit."""
    limit = max_bytes(kind)
    if size <= limit:
        return None
    return f"file too large ({size:,} bytes; the limit is {limit:,}); not read"


def cap_findings(findings: Sequence[T]) -> Tuple[List[T], Optional[str]]:
    """At most MAX_FINDINGS_PER_FILE findings, and the message when some were left out."""
    if len(findings) <= MAX_FINDINGS_PER_FILE:
        return list(findings), None
    return list(findings[:MAX_FINDINGS_PER_FILE]), (
        f"{len(findings):,} findings; only the first {MAX_FINDINGS_PER_FILE:,} are reported (the limit per file)"
    )


def too_many_to_fix(findings: int) -> Optional[str]:
    if findings <= MAX_FINDINGS_PER_FILE:
        return None
    return (
        f"{findings:,} findings to fix; the limit is {MAX_FINDINGS_PER_FILE:,} per file, so the file was left unchanged"
    )


def too_big_to_fix(text: str) -> Optional[str]:
    """The message for Python source with more syntax nodes than `fix` rewrites, or None."""
    try:
        nodes = sum(1 for _ in walk(ast.parse(text)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the fixer's own parse reports why
    if nodes <= MAX_FIX_NODES:
        return None
    return f"too large to rewrite ({nodes:,} syntax nodes; the limit is {MAX_FIX_NODES:,}); the file was left unchanged"
