"""Markdown for a pull-request comment: scores per target, directories worst first, findings folded away."""

from __future__ import annotations

import html
from typing import Any, List

from portcheck.escape import code_span, neutral
from portcheck.report.model import Report
from portcheck.report.text_sections import (
    blocker_lines,
    directory_rows,
    directory_score,
    effort_line,
    kernel_line,
    primary_card,
    rule_rows,
    scored_targets,
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
        out.append(f"| {t.value} | **{c.score:.1f}** | {c.grade} ({c.band}) | {c.score_after_fix:.1f} ({c.grade_after_fix}) |")
    return out


def _effort(report: Report) -> List[str]:
    from portcheck.report.text import baseline_line

    card = primary_card(report)
    label = f" ({report.target.value})" if len(report.targets) > 1 else ""
    out = []
    against = baseline_line(report)
    if against:  # target names and numbers only: nothing to escape
        head, _, rest = against.partition(": ")
        out.append(f"- **{head}:** {rest}")
    out.append(f"- **Effort{label}:** {cell(effort_line(card))}")
    kernel = kernel_line(card)
    if kernel:
        out.append(f"- **Custom kernels:** {cell(kernel)}")
    out.extend(f"- **{label}:** {cell(text)}" for label, text in blocker_lines(report))
    return out


def _directories(report: Report) -> List[str]:
    rows, more = directory_rows(report, TOP_DIRECTORIES)
    if not rows:
        return []
    targets = [t for t, _ in scored_targets(report)]
    out = ["### Directories, worst first", ""]
    if len(targets) > 1:
        out.append("| Directory | " + " | ".join(t.value for t in targets) + " | Findings |")
        out.append("|---|" + "---:|" * len(targets) + "---:|")
        for d in rows:
            scores = []
            for t in targets:
                other = directory_score(report, t, d.path)
                scores.append(f"{other.score:.1f}" if other is not None else "-")
            out.append(f"| {code_cell(d.path)} | " + " | ".join(scores) + f" | {d.findings} |")
    else:
        out.append("| Directory | Score | After fix | Grade | Findings | Lines |")
        out.append("|---|---:|---:|---|---:|---:|")
        for d in rows:
            out.append(f"| {code_cell(d.path)} | {d.score:.1f} | {d.score_after_fix:.1f} | {d.grade} | {d.findings} | {d.lines} |")
    if more:
        out.append(f"\n_{more} more director{'ies' if more != 1 else 'y'} not shown._")
    return out


def _rules(report: Report) -> List[str]:
    rows = rule_rows(report)
    if not rows:
        return []
    from portcheck.score import FIX_LABELS

    out = ["### Top rules", "", "| Rule | Severity | Findings | Fix | Points |", "|---|---|---:|---|---:|"]
    for r in rows:
        out.append(f"| {r.code} {cell(r.name)} | {r.severity.value} | {r.count} | {FIX_LABELS.get(r.fix, r.fix)} | {r.points:.1f} |")
    out.append("")
    out.append("_Points: how much the score rises when all of a rule's findings are gone._")
    return out


def _statistics(report: Report) -> List[str]:
    if not report.statistics:
        return []
    out = ["### Findings per rule", "", "| Rule | Count |", "|---|---:|"]
    out.extend(f"| {code} | {n} |" for code, n in report.counts_by_rule())
    return out


def _findings(report: Report) -> List[str]:
    findings = report.findings
    if not findings and not report.errors:
        return []
    out = [f"<details><summary>{len(findings)} finding{'s' if len(findings) != 1 else ''}"
           f" in {len({f.path for f in findings})} file{'s' if len({f.path for f in findings}) != 1 else ''}</summary>", ""]
    if findings:
        out.append("| Location | Rule | Severity | Message | Code |")
        out.append("|---|---|---|---|---|")
        for f in findings[:MAX_FINDINGS]:
            where = f"{f.path}:{f.line}:{f.column}" if f.cell is None else f"{f.path}:cell {f.cell}:{f.line}:{f.column}"
            fix = " (fixable)" if f.fixable else ""
            out.append(f"| {code_cell(where)} | {f.code}{fix} | {f.severity.value} | {cell(f.message)} | {code_cell(f.source_line)} |")
        if len(findings) > MAX_FINDINGS:
            out.append(f"\n_{len(findings) - MAX_FINDINGS} more findings not shown; run `portcheck scan` for all of them._")
    if report.errors:
        out.append("")
        out.append(f"{len(report.errors)} file{'s' if len(report.errors) != 1 else ''} could not be scanned:")
        out.append("")
        out.extend(f"- {code_cell(e.path)}: {cell(e.message)}" for e in report.errors)
    out.extend(["", "</details>"])
    return out


def render(report: Report, **_: Any) -> str:
    out: List[str] = ["## portcheck readiness", ""]
    if primary_card(report) is not None:
        for section in (_scores(report), _effort(report), _directories(report), _rules(report)):
            if section:
                out.extend(section)
                out.append("")
    else:
        out.extend([f"{len(report.findings)} findings.", ""])
    for section in (_statistics(report), _findings(report)):
        if section:
            out.extend(section)
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
