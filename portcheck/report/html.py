"""A self-contained HTML report: score gauges, a directory heat map and a sortable findings table.

Everything is inline (CSS, JS, SVG) and every value from the scan is HTML-escaped, so the file opens offline.
"""

from __future__ import annotations

from html import escape
from typing import Any, List, Sequence

from portcheck.report.model import Report
from portcheck.report.text_sections import (
    blocker_lines,
    clean_directories_line,
    effort_line,
    kernel_line,
    primary_card,
    scored_targets,
    statistics_rows,
    why_groups,
)

GRADE_COLOURS = {"A": "#2e7d32", "B": "#0277bd", "C": "#b26a00", "D": "#c62828"}

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1d232a;
       background: #fafbfc; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.meta { color: #57606a; margin-bottom: 16px; }
.gauges { display: flex; gap: 16px; flex-wrap: wrap; }
.gauge { background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 12px 16px; width: 220px;
         text-align: center; }
.gauge h3 { margin: 0 0 4px; font-size: 15px; text-transform: uppercase; letter-spacing: .05em; color: #57606a; }
.gauge svg { width: 180px; height: 104px; }
.gauge .value { font-size: 30px; font-weight: 700; }
.gauge .band { font-weight: 600; }
.gauge .after { color: #57606a; margin-top: 4px; }
ul.effort { margin: 0; padding-left: 20px; }
.heatmap { display: flex; flex-wrap: wrap; gap: 6px; }
.cell { border-radius: 6px; padding: 6px 8px; min-width: 150px; max-width: 260px; color: #1d232a;
        border: 1px solid rgba(0,0,0,.08); }
.cell .path { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; overflow-wrap: anywhere; }
.cell .num { font-weight: 700; font-size: 16px; }
table { border-collapse: collapse; background: #fff; width: 100%; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f3f6; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort="ascending"]::after { content: " \\25B2"; }
table.sortable th[aria-sort="descending"]::after { content: " \\25BC"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table#statistics { width: auto; min-width: 240px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12px; background: #f6f8fa;
       padding: 1px 4px; border-radius: 4px; white-space: pre-wrap; overflow-wrap: break-word; }
td.src { min-width: 32ch; max-width: 72ch; }
td.where { overflow-wrap: break-word; min-width: 16ch; }
.tabs > input { position: absolute; opacity: 0; pointer-events: none; }
.tabs > label { display: inline-block; padding: 6px 14px; margin: 20px 4px 0 0; border: 1px solid #d0d7de;
                border-bottom: none; border-radius: 6px 6px 0 0; background: #f0f3f6; cursor: pointer;
                font-weight: 600; }
.tabs > input:checked + label { background: #fff; }
.tabs > input:focus-visible + label { outline: 2px solid #0969da; }
.tabs > .panel { display: none; border-top: 1px solid #d0d7de; }
.sev { font-weight: 600; border-radius: 4px; padding: 0 6px; }
.sev-blocker { background: #c62828; color: #fff; } .sev-major { background: #ffcdd2; color: #8e0000; }
.sev-minor { background: #fff3c4; color: #6d4c00; } .sev-info { background: #e1f0fb; color: #01579b; }
.empty { color: #57606a; }
"""

# Clicking a header sorts by that column; `data-sort` holds the sort key when the text is not it.
JS = """
(function () {
  function key(row, col) {
    var c = row.cells[col];
    return c.hasAttribute('data-sort') ? c.getAttribute('data-sort') : c.textContent;
  }
  function sortBy(th) {
    var table = th.closest('table'), body = table.tBodies[0];
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    var numeric = th.getAttribute('data-type') === 'number';
    var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, i) { r._pos = i; });
    rows.sort(function (a, b) {
      var x = key(a, col), y = key(b, col);
      var d = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
      return d !== 0 ? d * dir : a._pos - b._pos;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable th'), function (th) {
    th.addEventListener('click', function () { sortBy(th); });
  });
})();
"""


def heat(score: float) -> str:
    """Red at 0, amber around 50, green at 100."""
    return f"hsl({round(score * 1.2)}, 70%, 82%)"


def _gauge(target: Any, card: Any) -> str:
    colour = GRADE_COLOURS.get(card.grade, "#57606a")
    return (
        f'<div class="gauge" data-target="{escape(target.value)}">'
        f"<h3>{escape(target.value)}</h3>"
        '<svg viewBox="0 0 120 70" role="img" aria-label="score gauge">'
        '<path d="M 10 62 A 50 50 0 0 1 110 62" fill="none" stroke="#e6e9ed" stroke-width="12" stroke-linecap="round"/>'
        f'<path d="M 10 62 A 50 50 0 0 1 110 62" fill="none" stroke="{colour}" stroke-width="12" '
        'stroke-linecap="round" '
        f'pathLength="100" stroke-dasharray="{card.score:.1f} 100"/>'
        "</svg>"
        f'<div class="value score" style="color:{colour}">{card.score:.1f}</div>'
        f'<div class="band">grade {escape(card.grade)}: {escape(card.band)}</div>'
        f'<div class="after">after <code>portcheck fix</code>: <b>{card.score_after_fix:.1f}</b> '
        f"({escape(card.grade_after_fix)})</div>"
        "</div>"
    )


def inline(text: str) -> str:
    """Escaped text with its `code spans` as <code> elements (messages quote code in backticks)."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick is text, not markup
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    return "".join(f"<code>{escape(p)}</code>" if i % 2 else escape(p) for i, p in enumerate(parts))


def _effort(report: Report) -> List[str]:
    from portcheck.report.text import baseline_line

    card = primary_card(report)

    items = [f"<li>{escape(effort_line(card))}</li>"]
    if baseline_line(report):
        items.insert(0, f"<li>{escape(baseline_line(report))}</li>")
    kernel = kernel_line(card)
    if kernel:
        items.append(f"<li>{escape(kernel)}</li>")
    items.extend(f"<li><b>{escape(label)}:</b> {escape(text)}</li>" for label, text in blocker_lines(report))
    items.extend(
        f"<li><b>{escape(head)}:</b><ul>" + "".join(f"<li>{escape(r)}</li>" for r in reasons) + "</ul></li>"
        for head, reasons in why_groups(report)
    )
    return ["<h2>Effort</h2>", '<ul class="effort">', *items, "</ul>"]


def _heatmap(report: Report) -> List[str]:
    card = primary_card(report)
    if not card.directories:
        return []
    out = ["<h2>Directories, worst first</h2>", '<div class="heatmap">']
    for d in card.directories:
        title = (
            f"{d.path}: {report.target.value} {d.score:.1f}; after fix {d.score_after_fix:.1f}; "
            f"{d.findings} findings in {d.files} files"
        )
        out.append(
            f'<div class="cell" style="background:{heat(d.score)}" title="{escape(title)}">'
            f'<div class="num">{d.score:.1f}</div><div class="path">{escape(d.path)}</div></div>'
        )
    out.append("</div>")
    if clean_directories_line(report):
        out.append(f"<p>{escape(clean_directories_line(report))}</p>")
    return out


def _rules(report: Report, suffix: str = "") -> List[str]:
    from portcheck.score import FIX_LABELS

    rules = primary_card(report).effort.rules
    if not rules:
        return []
    out = [
        "<h2>Rules by points</h2>",
        f'<table class="sortable" id="rules{suffix}"><thead><tr>',
        '<th>rule</th><th data-type="number">severity</th><th data-type="number">findings</th>'
        '<th data-type="number">files</th><th>fix</th><th data-type="number">points</th></tr></thead><tbody>',
    ]
    for r in rules:
        out.append(
            f"<tr><td>{escape(r.code)} {escape(r.name)}</td>"
            f'<td data-sort="{r.severity.rank}"><span class="sev sev-{r.severity.value}">{r.severity.value}</span></td>'
            f'<td class="num">{r.count}</td><td class="num">{r.files}</td>'
            f"<td>{escape(FIX_LABELS.get(r.fix, r.fix))}</td>"
            f'<td class="num">{r.points:.1f}</td></tr>'
        )
    out.append("</tbody></table>")
    return out


def _statistics(report: Report, suffix: str = "") -> List[str]:
    if not report.statistics:
        return []
    out = [
        "<h2>Findings per rule</h2>",
        f'<table class="sortable" id="statistics{suffix}"><thead><tr><th>rule</th>'
        '<th data-type="number">count</th><th data-type="number">fixable</th><th>name</th></tr></thead><tbody>',
    ]
    out.extend(
        f'<tr><td>{escape(code)}</td><td class="num">{n}</td><td class="num">{fixable}</td><td>{escape(name)}</td></tr>'
        for n, code, name, fixable in statistics_rows(report)
    )
    out.append("</tbody></table>")
    return out


def _findings(report: Report, suffix: str = "") -> List[str]:
    findings = report.findings
    out = [f"<h2>Findings ({len(findings)})</h2>"]
    if not findings:
        return out + ['<p class="empty">No findings.</p>']
    out.append(
        f'<table class="sortable" id="findings{suffix}"><thead><tr><th>file</th><th data-type="number">line</th>'
        '<th data-type="number">severity</th><th>rule</th><th>message</th><th>code</th></tr></thead><tbody>'
    )
    for f in findings:
        where = f"{f.path}" if f.cell is None else f"{f.path} (cell {f.cell})"
        fix = f" [{f.fix_safety.value} fix]" if f.fixable else ""
        out.append(
            f'<tr><td class="where">{escape(where)}</td>'
            f'<td class="num" data-sort="{f.line}.{f.column:06d}">{f.line}:{f.column}</td>'
            f'<td data-sort="{f.severity.rank}"><span class="sev sev-{f.severity.value}">{f.severity.value}</span></td>'
            f"<td>{escape(f.code)} {escape(f.name)}{escape(fix)}</td>"
            f"<td>{inline(f.message)}</td>"
            f'<td class="src"><code>{escape(f.source_line)}</code></td></tr>'
        )
    out.append("</tbody></table>")
    return out


def _errors(report: Report) -> List[str]:
    if not report.errors:
        return []
    out = [f"<h2>Files that could not be scanned ({len(report.errors)})</h2>", "<ul>"]
    out.extend(f"<li><code>{escape(e.path)}</code>: {inline(e.message)}</li>" for e in report.errors)
    out.append("</ul>")
    return out


def _section(report: Report, suffix: str = "") -> List[str]:
    """Everything about one target: effort, heat map, rules, statistics and findings."""
    out: List[str] = []
    if primary_card(report) is not None:
        for part in (_effort(report), _heatmap(report), _rules(report, suffix)):
            out.extend(part)
    for part in (_statistics(report, suffix), _findings(report, suffix)):
        out.extend(part)
    return out


def _tabs(sections: Sequence[Report]) -> List[str]:
    """One tab per target (radio buttons and CSS, no script needed); the first is open."""
    names = [s.target.value for s in sections]
    css = " ".join(f"#tab-{n}:checked ~ #panel-{n} {{ display: block; }}" for n in names)
    out = [f"<style>{css}</style>", '<div class="tabs">']
    for i, section in enumerate(sections):
        n = section.target.value
        count = len(section.findings)
        out.append(f'<input type="radio" name="target-tab" id="tab-{n}"{" checked" if i == 0 else ""}>')
        out.append(f'<label for="tab-{n}">{escape(n)} ({count} finding{"s" if count != 1 else ""})</label>')
    for section in sections:
        n = section.target.value
        out.append(f'<section class="panel" id="panel-{n}" data-target="{n}">')
        out.extend(_section(section, suffix=f"-{n}"))
        out.append("</section>")
    out.append("</div>")
    return out


def render(report: Report, **_: Any) -> str:
    """With several targets: a gauge per target, then one tab per target with its own tables."""
    sections = report.sections()
    targets = ", ".join(t.value for t in report.targets)
    counts = (
        " / ".join(f"{len(s.findings)} {s.target.value}" for s in sections)
        if len(sections) > 1
        else str(len(report.findings))
    )
    body: List[str] = [
        "<h1>portcheck readiness report</h1>",
        f'<div class="meta">portcheck {escape(report.version)} &middot; '
        f'target{"s" if len(report.targets) > 1 else ""}: '
        f"{escape(targets)} &middot; {report.files_scanned} files scanned &middot; {escape(counts)} findings</div>",
    ]
    if primary_card(report) is not None:
        body.append('<div class="gauges">')
        body.extend(_gauge(t, c) for t, c in scored_targets(report))
        body.append("</div>")
    body.extend(_tabs(sections) if len(sections) > 1 else _section(report))
    body.extend(_errors(report))
    return (
        "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en">',
                "<head>",
                '<meta charset="utf-8">',
                '<meta name="viewport" content="width=device-width, initial-scale=1">',
                "<title>portcheck readiness report</title>",
                f"<style>{CSS}</style>",
                "</head>",
                "<body>",
                *body,
                f"<script>{JS}</script>",
                "</body>",
                "</html>",
            ]
        )
        + "\n"
    )
