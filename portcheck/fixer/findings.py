"""The findings a fix starts from: exactly what `portcheck scan` reports for the same file and rules."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from portcheck.analyze import analyze_python
from portcheck.catalog import Catalog, select_rules
from portcheck.discover import matches_any
from portcheck.model import Finding, Target
from portcheck.prefilter import Prefilter
from portcheck.scanner import Prepared, _notebook_findings, _text_findings
from portcheck.suppress import skip_file

PerFileIgnores = Tuple[Tuple[str, Tuple[str, ...]], ...]


def prepare(catalog: Catalog, target: Target, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> Prepared:
    rules = select_rules(catalog, target, select, ignore)
    return Prepared(rules=rules, prefilter=Prefilter(rules), text_rules=tuple(r for r in rules if r.text_matchers))


def _ignored(path: str, per_file_ignores: PerFileIgnores, findings: List[Finding]) -> List[Finding]:
    codes = [c.upper() for glob, ignored in per_file_ignores if matches_any(path, (glob,)) for c in ignored]
    if not codes:
        return findings
    return [f for f in findings if not any(f.code.startswith(c) for c in codes)]


def collect(
    text: str, path: str, kind: str, prepared: Prepared, target: Target, per_file_ignores: PerFileIgnores = ()
) -> Tuple[List[Finding], Optional[str]]:
    """(findings, why the file cannot be analysed) for a decoded file of `kind`."""
    error: Optional[str] = None
    if kind == "python":
        if skip_file(text):
            return [], None
        found, problem = analyze_python(text, path, prepared.prefilter, target)
        findings = list(found)
        error = problem.message if problem else None
        if Path(path).name == "setup.py" and prepared.text_rules:
            findings += _text_findings(prepared.text_rules, "setup-py", text, path, target)
    elif kind == "notebook":
        found, problem = _notebook_findings(text, path, prepared, target)
        findings = list(found)
        error = problem.message if problem else None
    else:
        findings = _text_findings(prepared.text_rules, kind, text, path, target)
    findings = _ignored(path, per_file_ignores, findings)
    findings.sort(key=Finding.sort_key)
    return findings, error
