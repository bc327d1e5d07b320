"""The score sections of the text report: a panel per target, directories worst first, the rules that cost most.

`plain` returns lines for files and pipes; `rich` prints the same content styled to a terminal console.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Tuple

from portcheck.report.model import Report

if TYPE_CHECKING:
    from rich.console import JustifyMethod

TOP_DIRECTORIES = 10
TOP_RULES = 10
GRADE_STYLES = {"A": "bold green", "B": "bold cyan", "C": "bold yellow", "D": "bold red"}


def primary_card(report: Report) -> Any:
    return report.scores.get(report.target)


def scored_targets(report: Report) -> List[Tuple[Any, Any]]:
    """(target, card) for every target with a score, in the report's order."""
    return [(t, report.scores[t]) for t in report.targets if t in report.scores]


def effort_line(card: Any) -> str:
    sev = ", ".join(f"{n} {name}" for name, n in card.effort.by_severity.items())
    fix = card.effort.by_fix
    return (f"{sev}; {fix['safe']} safe autofix, {fix['unsafe']} unsafe autofix, "
            f"{fix['manual']} need{'s' if fix['manual'] == 1 else ''} a person")


def kernel_line(card: Any) -> str:
    e = card.effort
    if not e.kernel_files:
        return ""
    return (
        f"{e.kernel_lines:,} lines of custom kernel code in {e.kernel_files} file{'s' if e.kernel_files != 1 else ''}"
    )


def blocker_text(blocker: Any) -> str:
    files = len(blocker.files)
    text = f"{blocker.code} {blocker.name} ({blocker.count} in {files} file{'s' if files != 1 else ''})"
    return text if blocker.caps else text + ", has a fallback"


def blocker_lines(report: Report) -> List[Tuple[str, str]]:
    """(label, text) per distinct list of blockers; targets with the same blockers share a line."""
    groups: List[Tuple[List[str], str]] = []
    for target, card in scored_targets(report):
        if not card.effort.blockers:
            continue
        text = "; ".join(blocker_text(b) for b in card.effort.blockers)
        for names, existing in groups:
            if existing == text:
                names.append(target.value)
                break
        else:
            groups.append(([target.value], text))
    if len(report.targets) == 1:
        return [("Blockers", text) for _, text in groups]
    return [(f"Blockers ({', '.join(names)})", text) for names, text in groups]


def why_groups(report: Report) -> List[Tuple[str, List[str]]]:
    """("Why neuron 42.0 C", reasons) per scored target: the caps that bind and the top contributors."""
    return [
        (f"Why {target.value} {card.score:.1f} {card.grade}", list(getattr(card, "why", ())))
        for target, card in scored_targets(report)
        if getattr(card, "why", ())
    ]


def clean_directories_line(report: Report) -> str:
    n = getattr(primary_card(report), "clean_directories", 0)
    return f"{n} clean director{'ies' if n != 1 else 'y'} (100.0) not listed" if n else ""


def directory_rows(report: Report, limit: Optional[int] = TOP_DIRECTORIES) -> Tuple[List[Any], int]:
    """The primary target's directories worst first (at most `limit`), and how many were left out."""
    card = primary_card(report)
    dirs = list(card.directories)
    shown = dirs if limit is None else dirs[:limit]
    return shown, len(dirs) - len(shown)


def score_lines(report: Report) -> List[str]:
    out = ["Readiness score (0-100; 100 = nothing left to change)"]
    out.append(f"  {'target':8} {'score':>5}  {'grade':24}  after `portcheck fix`")
    for target, card in scored_targets(report):
        out.append(
            f"  {target.value:8} {card.score:5.1f}  {card.grade} {card.band:22}  "
            f"{card.score_after_fix:5.1f}  {card.grade_after_fix} {card.band_after_fix}"
        )
    return out


def _effort_lines(report: Report) -> List[str]:
    card = primary_card(report)
    label = f" ({report.target.value})" if len(report.targets) > 1 else ""
    out = [f"Effort{label}: {effort_line(card)}"]
    kernel = kernel_line(card)
    if kernel:
        out.append(f"Custom kernels: {kernel}")
    out.extend(f"{label}: {text}" for label, text in blocker_lines(report))
    for head, reasons in why_groups(report):
        out.extend([f"{head}:"] + [f"  - {r}" for r in reasons])
    return out


def _directory_lines(report: Report) -> List[str]:
    rows, more = directory_rows(report)
    if not rows:
        return []
    out = [
        "Directories, worst first",
        f"  {'score':>5}  {'after fix':>9}  grade  {'findings':>8}  {'lines':>7}  directory",
    ]
    for d in rows:
        out.append(f"  {d.score:5.1f}  {d.score_after_fix:9.1f}  {d.grade:5}  {d.findings:8d}  {d.lines:7d}  {d.path}")
    if more:
        out.append(f"  ... {more} more director{'ies' if more != 1 else 'y'}")
    if clean_directories_line(report):
        out.append(f"  {clean_directories_line(report)}")
    return out


def statistics_rows(report: Report) -> List[Tuple[int, str, str, int]]:
    """(count, code, name, how many fixable) per rule, most findings first: the `--statistics` table."""
    fixable: dict = {}
    for f in report.findings:
        if f.fixable:
            fixable[f.code] = fixable.get(f.code, 0) + 1
    rows = []
    for code, n in report.counts_by_rule():
        rule = report.rules.get(code)
        rows.append((n, code, rule.name if rule is not None else "", fixable.get(code, 0)))
    return rows


def statistics_lines(report: Report) -> List[str]:
    rows = statistics_rows(report)
    if not rows:
        return ["Findings per rule: none"]
    out = ["Findings per rule", f"  {'count':>5}  {'code':8} {'fixable':>7}  name"]
    for n, code, name, fixable in rows:
        out.append(f"  {n:5d}  {code:8} {fixable:7d}  {name}")
    return out


def rule_rows(report: Report, limit: int = TOP_RULES) -> List[Any]:
    return list(primary_card(report).effort.rules[:limit])


def _rule_lines(report: Report) -> List[str]:
    rows = rule_rows(report)
    if not rows:
        return []
    out = [
        "Top rules (points: how much the score rises when all of a rule's findings are gone)",
        f"  {'points':>6}  {'count':>5}  {'severity':8}  {'fix':14}  rule",
    ]
    for r in rows:
        out.append(f"  {r.points:6.1f}  {r.count:5d}  {r.severity.value:8}  {_fix_label(r.fix):14}  {r.code} {r.name}")
    return out


def _fix_label(fix: str) -> str:
    from portcheck.score import FIX_LABELS

    return FIX_LABELS.get(fix, fix)


def plain(report: Report, with_scores: bool = True) -> List[str]:
    """The score sections of a one-target report; `with_scores=False` leaves out the score table
    (a report over several targets prints it once, above the per-target sections)."""
    if primary_card(report) is None:
        return []
    out: List[str] = []
    scores = score_lines(report) if with_scores else []
    for section in (scores, _effort_lines(report), _directory_lines(report), _rule_lines(report)):
        if section:
            out.extend(section)
            out.append("")
    return out


def _panel_body(card: Any):
    from rich.text import Text

    style = GRADE_STYLES.get(card.grade, "")
    body = Text(f"{card.score:.1f}", style=style)
    body.append(f"  grade {card.grade}\n", style=style)
    body.append(f"{card.band}\n")
    body.append(
        f"after fix {card.score_after_fix:.1f} ({card.grade_after_fix})",
        style=GRADE_STYLES.get(card.grade_after_fix, ""),
    )
    return body


def rich_panels(report: Report, console: Any) -> None:
    """A score panel per scored target, side by side."""
    from rich.panel import Panel
    from rich.table import Table

    panels = Table.grid(padding=(0, 2))
    cells = []
    for target, c in scored_targets(report):
        panels.add_column()
        cells.append(Panel(_panel_body(c), title=f"readiness: {target.value}", expand=False))
    panels.add_row(*cells)
    console.print(panels)


def rich(report: Report, console: Any, with_scores: bool = True) -> None:
    """Print the score sections of a one-target report to a rich console (`with_scores` as in `plain`)."""
    from rich.table import Table
    from rich.text import Text

    if primary_card(report) is None:
        return
    if with_scores:
        rich_panels(report, console)
    for line in _effort_lines(report):
        console.print(Text(line))
    rows, more = directory_rows(report)
    if rows:
        table = Table(title="Directories, worst first", title_justify="left", show_edge=False)
        table.add_column("score", justify="right")
        table.add_column("after fix", justify="right")
        table.add_column("findings", justify="right")
        table.add_column("directory")
        for d in rows:
            table.add_row(
                Text(f"{d.score:.1f}", style=GRADE_STYLES.get(d.grade, "")),
                Text(f"{d.score_after_fix:.1f}"),
                str(d.findings),
                d.path,
            )
        console.print(table)
        if more:
            console.print(Text(f"... {more} more director{'ies' if more != 1 else 'y'}", style="dim"))
        if clean_directories_line(report):
            console.print(Text(clean_directories_line(report), style="dim"))
    rules = rule_rows(report)
    if rules:
        table = Table(title="Top rules", title_justify="left", show_edge=False)
        columns: Tuple[Tuple[str, JustifyMethod], ...] = (
            ("points", "right"),
            ("count", "right"),
            ("severity", "left"),
            ("fix", "left"),
            ("rule", "left"),
        )
        for name, justify in columns:
            table.add_column(name, justify=justify)
        for r in rules:
            table.add_row(f"{r.points:.1f}", str(r.count), r.severity.value, _fix_label(r.fix), f"{r.code} {r.name}")
        console.print(table)
    console.print()
