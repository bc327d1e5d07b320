"""Text output for people: findings grouped by file, coloured by severity when the terminal allows it."""

from __future__ import annotations

import io
from itertools import groupby
from typing import Any, List

from portcheck.escape import neutral, neutral_report
from portcheck.model import Severity
from portcheck.report import text_sections
from portcheck.report.model import Report

STYLES = {
    Severity.BLOCKER: "bold white on red",
    Severity.MAJOR: "bold red",
    Severity.MINOR: "yellow",
    Severity.INFO: "cyan",
}


def location(f) -> str:
    if f.cell is not None:
        return f"{f.path}:cell {f.cell}:{f.line}:{f.column}"
    return f"{f.path}:{f.line}:{f.column}"


def summary_line(report: Report, label: str = "") -> str:
    """ "Found N findings in F of M files (...)"; `label` names the target when a report has several."""
    n = len(report.findings)
    files = len({f.path for f in report.findings})
    sev = report.counts_by_severity()
    parts = ", ".join(f"{v} {k}" for k, v in sev.items() if v)
    fixable = sum(1 for f in report.findings if f.fixable)
    text = (
        f"Found {n} finding{'s' if n != 1 else ''}{' for ' + label if label else ''} "
        f"in {files} of {report.files_scanned} file{'s' if report.files_scanned != 1 else ''}"
    )
    if parts:
        text += f" ({parts})"
    if fixable:
        text += f"; {fixable} fixable with `portcheck fix`"
    if report.errors:
        text += f"; {len(report.errors)} file{'s' if len(report.errors) != 1 else ''} could not be scanned"
    return text + "."


def plain_lines(report: Report) -> List[str]:
    out: List[str] = []
    for _path, group in groupby(report.findings, key=lambda f: f.path):
        for f in group:
            fix = " [*]" if f.fixable else ""
            out.append(f"{location(f)}: {f.code}{fix} [{f.severity.value}] {f.message}")
    for e in report.errors:
        pos = f":{e.line}" if e.line else ""
        out.append(f"{e.path}{pos}: error: {e.message}")
    return out


def baseline_line(report: Report) -> str:
    """The score change against a baseline ("neuron readiness 82.0 -> 79.0"), or "" without one."""
    parts = [
        f"{t.value} readiness {report.baseline_scores[t].score:.1f} -> {report.scores[t].score:.1f}"
        for t in report.targets
        if t in report.baseline_scores and t in report.scores
    ]
    return "Against the baseline: " + ", ".join(parts) if parts else ""


def section_heading(report: Report) -> str:
    """The line that opens one target's section when a report covers several targets."""
    return f"=== {report.target.value} ==="


def render(report: Report, color: bool = False, width: int = 100, **_: Any) -> str:
    """Render as text; `color` emits ANSI styles through rich (callers decide from the terminal).

    With several targets: the score table for all of them, then one section per target.
    """
    report = neutral_report(report)  # file names and source lines never reach the terminal raw
    sections = tuple(neutral_report(s) for s in report.sections())
    multi = len(sections) > 1
    if color:
        return _render_rich(report, sections, width)
    lines: List[str] = []
    if multi:
        lines.extend(text_sections.score_lines(report))
        lines.append("")
    for section in sections:
        if multi:
            lines.extend([section_heading(section), ""])
        lines.extend(_plain_section(section, with_scores=not multi, label=section.target.value if multi else ""))
        if multi:
            lines.append("")
    return neutral("\n".join(lines).rstrip("\n") + "\n", keep_newlines=True)


def _plain_section(report: Report, with_scores: bool, label: str) -> List[str]:
    lines = text_sections.plain(report, with_scores=with_scores)
    if baseline_line(report):
        lines.append(baseline_line(report))
    lines.extend(plain_lines(report))
    if report.statistics:
        lines.append("")
        lines.extend(text_sections.statistics_lines(report))
        lines.append("")
    lines.append(summary_line(report, label))
    return lines


def _render_rich(report: Report, sections, width: int) -> str:
    from rich.console import Console
    from rich.text import Text

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, color_system="standard", width=width, highlight=False)
    multi = len(sections) > 1
    if multi:
        text_sections.rich_panels(report, console)
    for section in sections:
        if multi:
            console.rule(Text(section.target.value, style="bold"))
        text_sections.rich(section, console, with_scores=not multi)
        _rich_findings(section, console, label=section.target.value if multi else "")
    return buf.getvalue()


def _rich_findings(report: Report, console: Any, label: str) -> None:
    from rich.text import Text

    if baseline_line(report):
        console.print(Text(baseline_line(report), style="bold"))
    for path, group in groupby(report.findings, key=lambda f: f.path):
        console.print(Text(path, style="bold underline"))
        for f in group:
            line = Text("  ")
            line.append(location(f)[len(path) + 1 :], style="dim")
            line.append(" ")
            line.append(f.code, style="bold")
            if f.fixable:
                line.append(" [*]", style="green")
            line.append(" ")
            line.append(f.severity.value, style=STYLES.get(f.severity, ""))
            line.append(" " + f.message)
            console.print(line)
    for e in report.errors:
        pos = f":{e.line}" if e.line else ""
        console.print(Text(f"{e.path}{pos}: ", style="bold") + Text("error: ", style="red") + Text(e.message))
    if report.statistics:
        console.print()
        head, *rows = text_sections.statistics_lines(report)
        console.print(Text(head, style="bold"))
        for row in rows:
            console.print(Text(row))
        console.print()
    console.print(Text(summary_line(report, label), style="bold"))
