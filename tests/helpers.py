"""Small helpers shared by tests: scan a snippet as a file of a given name, or a small tree of files."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Tuple

from portcheck.catalog import load_catalog
from portcheck.config import Config
from portcheck.filetypes import classify
from portcheck.model import TARGETS, Finding, Severity, Target
from portcheck.runner import scan_paths
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


def scan_tree(root: Path, files: Dict[str, str], top: bool = False) -> Dict[Tuple[str, int, str], Finding]:
    """Write `files` (path -> text) under `root`, scan it whole for neuron, and key the findings by
    (path, line, code). With `top`, `root` is the repository's top (a `.git` folder): nothing above it
    counts as the project's."""
    if top:
        (root / ".git").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    result = scan_paths([root], Config(respect_gitignore=False), target="neuron", cwd=root, jobs=1)
    return {(r.path, f.line, f.code): f for r in result.files for f in r.findings}
