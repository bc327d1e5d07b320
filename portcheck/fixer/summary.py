"""The summary `portcheck fix` ends with: what was fixed per rule, what still needs a person per rule
(and why), and the files it refused to touch."""

from __future__ import annotations

from typing import List, Mapping

from portcheck.fixer.outcome import FixReport
from portcheck.model import Rule

EXPLAIN_HINT = "Run `portcheck explain CODE` to see what a rule finds and how to fix it by hand."


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary_text(report: FixReport, rules: Mapping[str, Rule]) -> str:
    lines: List[str] = []
    applied = report.applied_by_rule()
    verb = "Fixed" if report.write else "Would fix"
    changed = len(report.changed)
    if applied:
        total = sum(applied.values())
        lines.append(f"{verb} {_plural(total, 'finding')} in {_plural(changed, 'file')} (target {report.target}):")
        for code, count in applied.items():
            name = rules[code].name if code in rules else ""
            lines.append(f"  {code:<8} {name:<34} {count:>4}")
    else:
        lines.append(f"Nothing to fix (target {report.target}).")
    left = report.left_by_rule()
    if left:
        total = sum(count for count, _ in left.values())
        lines.append(f"Still needs a person: {_plural(total, 'finding')}:")
        for code, (count, reason) in left.items():
            name = rules[code].name if code in rules else ""
            lines.append(f"  {code:<8} {name:<34} {count:>4}  {reason}")
    refused = report.refused
    if refused:
        lines.append(f"Not changed: {_plural(len(refused), 'file')}:")
        for f in refused:
            lines.append(f"  {f.path}: {f.error}")
    if left:
        lines.append(EXPLAIN_HINT)
    return "\n".join(lines) + "\n"
