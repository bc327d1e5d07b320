"""Render a benchmark report as plain-text tables (also valid Markdown)."""

from __future__ import annotations

from typing import List, Sequence

from bench.results import Report, Row

_HEAD = ("what", "files", "wall s", "CPU s", "peak RSS MB", "files/s", "findings", "runs", "others' cores")


def _fmt_s(value: float) -> str:
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _spread(row: Row) -> str:
    walls = sorted(r.wall_s for r in row.runs)
    if len(walls) < 2:
        return "1"
    return f"{len(walls)} [{_fmt_s(walls[0])}–{_fmt_s(walls[-1])}]"


def row_cells(row: Row) -> List[str]:
    if not row.ok:
        return [row.label, str(row.files), row.status, "", "", "", "", row.note, ""]
    return [
        row.label,
        f"{row.files:,}",
        _fmt_s(row.wall_s),
        _fmt_s(row.cpu_s),
        f"{row.peak_rss_mb:.0f}",
        f"{row.files_per_s:,.0f}",
        "" if row.findings is None else f"{row.findings:,}",
        _spread(row) + (f"; {row.note}" if row.note else ""),
        f"{row.others_cores:.2f}",
    ]


def markdown(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows)]
    lines = ["| " + " | ".join(str(c).ljust(w) for c, w in zip(head, widths)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        lines.append("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |")
    return "\n".join(lines)


def render(report: Report) -> str:
    out: List[str] = []
    m = report.machine
    out.append(f"portcheck benchmark, {report.started}")
    out.append(
        f"machine: {m.get('cpu_model', '?')}, {m.get('nproc', '?')} cores, {m.get('mem_total_gb', '?')} GB RAM, "
        f"load before {m.get('loadavg', '?')}"
    )
    out.append("versions: " + ", ".join(f"{k} {v}" for k, v in report.versions.items()))
    out.append(
        "wall and CPU: median of the runs; peak RSS: the largest total over all processes of one run; "
        "runs: count [min–max wall];"
    )
    out.append(
        "others' cores: how many cores other processes on the machine kept busy during the runs "
        "(median; near 0 when quiet)"
    )
    out.append("")
    for group, title in (
        ("portcheck", "portcheck on the corpora"),
        ("sample", "the fixed sample, all tools"),
        ("linearity", "linearity (copies of the corpus)"),
    ):
        rows = [r for r in report.rows if r.group == group]
        if not rows:
            continue
        out.append(f"## {title}")
        out.append("")
        out.append(markdown(_HEAD, [row_cells(r) for r in rows]))
        out.append("")
    if report.ratios:
        out.append("## peer / portcheck on the sample (x times more)")
        out.append("")
        out.append(
            markdown(
                ("peer", "wall", "CPU", "peak RSS"),
                [(r.peer, f"{r.wall:,.1f}x", f"{r.cpu:,.1f}x", f"{r.rss:,.1f}x") for r in report.ratios],
            )
        )
        out.append("")
    if report.scaling:
        out.append("## scaling (relative to 1x)")
        out.append("")
        rows = [(label, f"{s:.2f}x", f"{w:.2f}x") for label, s, w in report.scaling]
        out.append(markdown(("input", "size", "wall"), rows))
        out.append("")
    if report.targets:
        out.append("## targets")
        out.append("")
        rows = []
        for t in report.targets:
            verdict = {True: "met", False: "MISSED", None: "not measured"}[t.met]
            measured = "" if t.measured is None else f"{t.measured:,.3g} {t.unit}"
            limit = f"{'≥' if t.higher_is_better else '<'} {t.limit:g} {t.unit}"
            rows.append((t.name, measured, limit, verdict))
        out.append(markdown(("target", "measured", "goal", "verdict"), rows))
        out.append("")
    for note in report.notes:
        out.append(f"note: {note}")
    return "\n".join(out).rstrip() + "\n"
