"""Text output for people: findings grouped by file, coloured by severity when the terminal allows it."""

from __future__ import annotations

import io
from itertools import groupby
from typing import Any, List

from portcheck.model import Severity
from portcheck.escape import neutral, neutral_report
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


def summary_line(report: Report) -> str:
    n = len(report.findings)
    files = len({f.path for f in report.findings})
    sev = report.counts_by_severity()
    parts = ", ".join(f"{v} {k}" for k, v in sev.items() if v)
    fixable = sum(1 for f in report.findings if f.fixable)
    text = f"Found {n} finding{'s' if n != 1 else ''} in {files} of {report.files_scanned} file{'s' if report.files_scanned != 1 else ''}"
    if parts:
        text += f" ({parts})"
    if fixable:
        text += f"; {fixable} fixable with `portcheck fix`"
    if report.errors:
        text += f"; {len(report.errors)} file{'s' if len(report.errors) != 1 else ''} could not be scanned"
    return text + "."


def plain_lines(report: Report) -> List[str]:
    out: List[str] = []
    for path, group in groupby(report.findings, key=lambda f: f.path):
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


def render(report: Report, color: bool = False, width: int = 100, **_: Any) -> str:
    """Render as text; `color` emits ANSI styles through rich (callers decide from the terminal)."""
    report = neutral_report(report)  # file names and source lines never reach the terminal raw
    try:
        from portcheck.report import text_sections  # score panels, tables (optional)
    except ImportError:
        text_sections = None
    if not color:
        lines = []
        if text_sections is not None:
            lines.extend(text_sections.plain(report))
        if baseline_line(report):
            lines.append(baseline_line(report))
        lines.extend(plain_lines(report))
        if report.statistics:
            lines.append("")
            lines.extend(f"{n:6d}  {c}" for c, n in report.counts_by_rule())
        lines.append(summary_line(report))
        return neutral("\n".join(lines) + "\n", keep_newlines=True)
    from rich.console import Console
    from rich.text import Text

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, color_system="standard", width=width, highlight=False)
    if text_sections is not None:
        text_sections.rich(report, console)
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
        for c, n in report.counts_by_rule():
            console.print(f"{n:6d}  {c}")
    console.print(Text(summary_line(report), style="bold"))
    return buf.getvalue()
