"""GitHub Actions workflow commands: one annotation per finding, most severe first, then the score as a notice.

GitHub shows only the first few annotations of each level per step, hence the ordering.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from portcheck.escape import neutral
from portcheck.model import Finding, Severity
from portcheck.report.model import Report

COMMANDS = {
    Severity.BLOCKER: "error",
    Severity.MAJOR: "error",
    Severity.MINOR: "warning",
    Severity.INFO: "notice",
}


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: Any) -> str:
    props = ",".join(f"{k}={escape_property(str(v))}" for k, v in properties.items() if v is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(f: Finding, severities: str = "") -> str:
    message = f"[{severities or f.severity.value}] {f.message}"
    if f.cell is not None:
        message += f" (notebook cell {f.cell})"
    return command(
        COMMANDS.get(f.severity, "notice"),
        message,
        file=f.path,
        line=f.line,
        col=f.column,
        endLine=max(f.end_line, f.line),
        endColumn=f.end_column,
        title=f"{f.code} {f.name}",
    )


def _merged(report: Report) -> List[Tuple[Finding, str]]:
    """Each finding once, most severe first. With several targets, a finding reported for more than one
    is annotated once at its highest severity, its message naming the severity per target."""
    sections = report.sections()
    if len(sections) == 1:
        return [(f, "") for f in sorted(report.findings, key=lambda f: (-f.severity.rank,) + f.sort_key())]
    by_place: Dict[Tuple[Any, ...], List[Tuple[str, Finding]]] = {}
    for section in sections:
        for f in section.findings:
            by_place.setdefault((f.path, f.cell, f.line, f.column, f.code), []).append((section.target.value, f))
    merged = []
    for found in by_place.values():
        worst = max((f for _, f in found), key=lambda f: f.severity.rank)
        merged.append((worst, ", ".join(f"{t}: {f.severity.value}" for t, f in found)))
    return sorted(merged, key=lambda pair: (-pair[0].severity.rank,) + pair[0].sort_key())


def render(report: Report, **_: Any) -> str:
    lines: List[str] = [annotation(f, severities) for f, severities in _merged(report)]
    for e in report.errors:
        lines.append(command("warning", f"could not scan: {e.message}", file=e.path, line=e.line, title="portcheck"))
    for target in report.targets:
        card = report.scores.get(target)
        if card is None:
            continue
        lines.append(command(
            "notice",
            f"readiness for {target.value}: {card.score:.1f} ({card.grade}, {card.band}); "
            f"after `portcheck fix`: {card.score_after_fix:.1f} ({card.grade_after_fix})",
            title=f"portcheck score ({target.value})",
        ))
    if report.statistics and report.findings:
        counts = ", ".join(f"{code} {n}" for code, n in report.counts_by_rule())
        lines.append(command("notice", f"findings per rule: {counts}", title="portcheck statistics"))
    # Workflow commands escape line breaks; every other control character is made visible.
    return neutral("\n".join(lines) + ("\n" if lines else ""), keep_newlines=True)
