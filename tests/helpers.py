"""Small helpers shared by tests: scan a snippet as a file of a given name."""

from __future__ import annotations

from typing import List, Optional

from portcheck.catalog import load_catalog
from portcheck.filetypes import classify
from portcheck.model import TARGETS, Finding, Severity, Target
from portcheck.scanner import Settings, scan_bytes


def first_target(code: str) -> Target:
    rule = load_catalog().get(code)
    for t in TARGETS:
        if rule.severity_for(t) is not Severity.OFF:
            return t
    return Target.GENERIC


def scan_snippet(source: str, filename: str = "example.py", target: Optional[str] = None, select=()) -> List[Finding]:
    kind = classify(filename) or "python"
    settings = Settings(target=target or "generic", select=tuple(select))
    result = scan_bytes(source.encode("utf-8"), filename, kind, settings)
    assert result.error is None, result.error
    return list(result.findings)
