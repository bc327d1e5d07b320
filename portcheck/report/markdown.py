"""Markdown for a pull-request comment: scores per target, directories worst first, findings folded away."""

from __future__ import annotations

import html
from typing import Any, List

from portcheck.escape import code_span, neutral
from portcheck.report.model import Report
from portcheck.report.text_sections import (
    blocker_lines,
    clean_directories_line,
    directory_rows,
    effort_line,
    kernel_line,
    primary_card,
    rule_rows,
    scored_targets,
    statistics_rows,
    why_groups,
)

TOP_DIRECTORIES = 15
MAX_FINDINGS = 300  # a GitHub comment holds 65,536 characters


def cell(value: Any) -> str:
    """Text safe inside a table cell: no HTML, no line breaks, no column separators."""
    text = html.escape(neutral(" ".join(str(value).split())), quote=False)
    return text.replace("|", "\\|")


def code_cell(value: str) -> str:
    """Source text or a file name as a code span no backtick in it can close."""
    return code_span(value)


def _scores(report: Report) -> List[str]:
    out = ["| Target | Score | Grade | After `portcheck fix` |", "|---|---:|---|---:|"]
    for t, c in scored_targets(report):
        out.append(
            f"| {t.value} | **{c.score:.1f}** | {c.grade} ({c.band}) | {c.score_after_fix:.1f} ({c.grade_after_fix}) |"
        )
    return out


def _effort(report: Report) -> List[str]:
    from portcheck.report.text import baseline_line

    card = primary_card(report)
    out = []
    against = baseline_line(report)
    if against:  # target names and numbers only: nothing to escape
        head, _, rest = against.partition(": ")
        out.append(f"- **{head}:** {rest}")
    out.append(f"- **Effort:** {cell(effort_line(card))}")
    kernel = kernel_line(card)
    if kernel:
        out.append(f"- **Custom kernels:** {cell(kernel)}")
    out.extend(f"- **{label}:** {cell(text)}" for label, text in blocker_lines(report))
    for head, reasons in why_groups(report):
        out.extend([f"- **{head}:**"] + [f"  - {cell(r)}" for r in reasons])
    return out


def _directories(report: Report, level: str) -> List[str]:
    rows, more = directory_rows(report, TOP_DIRECTORIES)
    if not rows:
        return []
    out = [f"{level} Directories, worst first", ""]
    out.append("| Directory | Score | After fix | Grade | Findings | Lines |")
    out.append("|---|---:|---:|---|---:|---:|")
    for d in rows:
        out.append(
            f"| {code_cell(d.path)} | {d.score:.1f} | {d.score_after_fix:.1f} | {d.grade} | {d.findings} | {d.lines} |"
        )
    if more:
        out.append(f"\n_{more} more director{'ies' if more != 1 else 'y'} not shown._")
    if clean_directories_line(report):
        out.append(f"\n_{clean_directories_line(report)}._")
    return out


def _rules(report: Report, level: str) -> List[str]:
    rows = rule_rows(report)
    if not rows:
        return []
    from portcheck.score import FIX_LABELS

    out = [f"{level} Top rules", "", "| Rule | Severity | Findings | Fix | Points |", "|---|---|---:|---|---:|"]
    for r in rows:
        out.append(
            f"| {r.code} {cell(r.name)} | {r.severity.value} | {r.count} | {FIX_LABELS.get(r.fix, r.fix)} "
            f"| {r.points:.1f} |"
        )
    out.append("")
    out.append("_Points: how much the score rises when all of a rule's findings are gone._")
    return out


def _statistics(report: Report, level: str) -> List[str]:
    if not report.statistics:
        return []
    out = [f"{level} Findings per rule", "", "| Rule | Count | Fixable | Name |", "|---|---:|---:|---|"]
    out.extend(f"| {code} | {n} | {fixable} | {cell(name)} |" for n, code, name, fixable in statistics_rows(report))
    return out


def _findings(report: Report, label: str = "", limit: int = MAX_FINDINGS) -> List[str]:
    findings = report.findings
    if not findings and not report.errors:
        return []
    out = [
        f"<details><summary>{len(findings)} finding{'s' if len(findings) != 1 else ''}"
        f"{' for ' + label if label else ''}"
        f" in {len({f.path for f in findings})} file{'s' if len({f.path for f in findings}) != 1 else ''}</summary>",
        "",
    ]
    if findings:
        out.append("| Location | Rule | Severity | Message | Code |")
        out.append("|---|---|---|---|---|")
        for f in findings[:limit]:
            where = f"{f.path}:{f.line}:{f.column}" if f.cell is None else f"{f.path}:cell {f.cell}:{f.line}:{f.column}"
            fix = " (fixable)" if f.fixable else ""
            out.append(
                f"| {code_cell(where)} | {f.code}{fix} | {f.severity.value} | {cell(f.message)} "
                f"| {code_cell(f.source_line)} |"
            )
        if len(findings) > limit:
            out.append(f"\n_{len(findings) - limit} more findings not shown; run `portcheck scan` for all of them._")
    if report.errors:
        out.append("")
        out.append(f"{len(report.errors)} file{'s' if len(report.errors) != 1 else ''} could not be scanned:")
        out.append("")
        out.extend(f"- {code_cell(e.path)}: {cell(e.message)}" for e in report.errors)
    out.extend(["", "</details>"])
    return out


def render(report: Report, **_: Any) -> str:
    """With several targets: the score table for all of them, then a section per target."""
    sections = report.sections()
    multi = len(sections) > 1
    out: List[str] = ["## portcheck readiness", ""]
    if primary_card(report) is not None:
        out.extend(_scores(report))
        out.append("")
    elif not multi:
        out.extend([f"{len(report.findings)} findings.", ""])
    limit = MAX_FINDINGS // len(sections)  # one comment holds every section
    for section in sections:
        level = "####" if multi else "###"
        if multi:
            out.extend([f"### {section.target.value}", ""])
        parts = []
        if primary_card(section) is not None:
            parts += [_effort(section), _directories(section, level), _rules(section, level)]
        parts += [_statistics(section, level), _findings(section, section.target.value if multi else "", limit)]
        for part in parts:
            if part:
                out.extend(part)
                out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
