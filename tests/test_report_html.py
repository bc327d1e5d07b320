"""HTML report: one self-contained, escaped file, checked in a real headless Chromium (DOM and screenshot)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from test_report_samples import sample_report

from portcheck.model import TARGETS, Target
from portcheck.report import renderer

render = renderer("html")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium on PATH (tests/run.sh installs Debian's `chromium`); the browser checks need one")


def run_chromium(tmp_path: Path, page: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,900", *args, page.as_uri(),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


def png_colours(data: bytes, limit: int = 10_000) -> int:
    """Distinct pixel colours of an 8-bit RGB/RGBA PNG (enough of a decoder to tell a blank page from a report)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8 and colour_type in (2, 6) and interlace == 0
    bpp = 3 if colour_type == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    prev, colours, offset = bytearray(stride), set(), 0
    for _ in range(height):
        kind, line = raw[offset], bytearray(raw[offset + 1:offset + 1 + stride])
        offset += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        for x in range(0, stride, bpp * 4):  # every fourth pixel is plenty
            colours.add(bytes(line[x:x + 3]))
        if len(colours) >= limit:
            break
        prev = line
    return len(colours)


def test_the_file_is_self_contained():
    out = render(sample_report(TARGETS, statistics=True))
    assert out.startswith("<!DOCTYPE html>")
    assert not re.search(r"https?://|//cdn|<link\b|<script\s+src|<img\b|@import|url\(", out)


def test_scan_values_are_escaped():
    out = render(sample_report())
    assert '<x.device.type == "cuda">' not in out
    assert "&lt;x.device.type == &quot;cuda&quot;&gt;" in out
    assert "#include &lt;cuda_runtime.h&gt;" in out


def test_a_gauge_per_target_and_a_heat_map_cell_per_directory():
    report = sample_report((Target.NEURON,))
    out = render(report)
    assert len(re.findall(r'<div class="gauge" data-target="', out)) == 1
    cells = re.findall(r'<div class="cell" style="background:hsl\((\d+), ', out)
    card = report.scores[report.target]
    assert len(cells) == len(card.directories)
    assert [int(h) for h in cells] == [round(d.score * 1.2) for d in card.directories]


def test_with_every_target_each_tab_holds_that_targets_heat_map_and_tables():
    report = sample_report(TARGETS, statistics=True)
    out = render(report)
    assert len(re.findall(r'<div class="gauge" data-target="', out)) == 3
    assert len(re.findall(r'<input type="radio" name="target-tab"', out)) == 3
    for target in TARGETS:
        panel = out[out.index(f'<section class="panel" id="panel-{target.value}"'):]
        panel = panel[:panel.index("</section>")]
        card = report.scores[target]
        cells = re.findall(r'<div class="cell" style="background:hsl\((\d+), ', panel)
        assert [int(h) for h in cells] == [round(d.score * 1.2) for d in card.directories], target
        assert f'id="rules-{target.value}"' in panel and f'id="findings-{target.value}"' in panel
        own = report.for_target(target).findings
        severities = re.findall(r'<span class="sev sev-(\w+)">', panel[panel.index(f'id="findings-{target.value}"'):])
        assert severities == [f.severity.value for f in own], target
    # the kernel file is a blocker on neuron and xla, major on generic: the tabs must disagree
    assert "sev-blocker" in out[out.index('id="panel-neuron"'):out.index('id="panel-xla"')]
    assert "sev-blocker" not in out[out.index('id="panel-generic"'):]


def test_messages_show_code_spans_not_backticks():
    out = render(sample_report())
    findings = out[out.index('id="findings"'):]
    assert "`" not in findings
    assert "<code>torch.cuda.is_available()</code> is False off CUDA" in findings
    from portcheck.report.html import inline

    assert inline("a `<b>` and `c") == "a <code>&lt;b&gt;</code> and `c"


def test_the_code_column_keeps_a_readable_width(tmp_path):
    # A long message used to squeeze the code column to one character per line in a real browser.
    from dataclasses import replace

    report = sample_report()
    wordy = replace(report.findings[0], message="a long message " * 40)
    scan = replace(report.scan, files=(replace(report.scan.files[0], findings=(wordy,)),))
    page = tmp_path / "report.html"
    measure = ("<script>var w = Array.prototype.map.call(document.querySelectorAll('#findings td:last-child code'),"
               " function (c) { return c.getBoundingClientRect().width; });"
               " document.body.setAttribute('data-widths', w.join(','));</script></body>")
    page.write_text(render(replace(report, scan=scan)).replace("</body>", measure), encoding="utf-8")
    dom = run_chromium(tmp_path, page, "--dump-dom").stdout
    widths = [float(w) for w in re.search(r'data-widths="([^"]*)"', dom).group(1).split(",")]
    assert widths and min(widths) > 150, widths  # px: more than a handful of characters


def test_chromium_renders_the_scores(tmp_path):
    report = sample_report(TARGETS, statistics=True)
    page = tmp_path / "report.html"
    page.write_text(render(report), encoding="utf-8")
    dom = run_chromium(tmp_path, page, "--dump-dom").stdout
    for target in TARGETS:
        card = report.scores[target]
        pattern = rf'data-target="{target.value}".*?<div class="value score"[^>]*>{card.score:.1f}</div>'
        assert re.search(pattern, dom, re.S)
    assert dom.count('<tr><td class="where">') == sum(len(report.for_target(t).findings) for t in TARGETS)
    shot = tmp_path / "report.png"
    run_chromium(tmp_path, page, f"--screenshot={shot}")
    assert png_colours(shot.read_bytes()) > 50  # a blank page has 1; the gauges, heat map and badges have hundreds


def test_a_blank_page_is_recognised_as_blank(tmp_path):
    page = tmp_path / "blank.html"
    page.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
    shot = tmp_path / "blank.png"
    run_chromium(tmp_path, page, f"--screenshot={shot}")
    assert png_colours(shot.read_bytes()) <= 2


def test_clicking_a_header_sorts_the_findings(tmp_path):
    # A copy of the report with a click on "severity" appended, as a person would click it.
    html = render(sample_report((Target.NEURON,)))
    click = (
        "<script>document.querySelector('#findings th:nth-child(3)').click();"
        "document.querySelector('#findings th:nth-child(3)').click();</script></body>"
    )
    page = tmp_path / "sorted.html"
    page.write_text(html.replace("</body>", click), encoding="utf-8")
    dom = run_chromium(tmp_path, page, "--dump-dom").stdout
    table = dom[dom.index('id="findings"') :]
    table = table[: table.index("</table>")]
    ranks = [int(r) for r in re.findall(r'<td data-sort="(\d)"><span class="sev', table)]
    assert ranks == sorted(ranks, reverse=True) and ranks[0] == 4  # second click: descending, the blocker first
    assert 'aria-sort="descending"' in table


def test_the_score_change_against_a_baseline_is_shown():
    from dataclasses import replace

    report = sample_report()
    card = report.scores[Target.GENERIC]
    out = render(replace(report, baseline_scores={Target.GENERIC: replace(card, score=85.0)}))
    assert f"<li>Against the baseline: generic readiness 85.0 -&gt; {card.score:.1f}</li>" in out


def test_clicking_a_target_tab_shows_that_target_only(tmp_path):
    html = render(sample_report(TARGETS))
    probe = (
        "<script>function shown() { return ['neuron', 'xla', 'generic'].map(function (t) {"
        " return getComputedStyle(document.getElementById('panel-' + t)).display; }).join(','); }"
        " var before = shown(); document.querySelector('label[for=tab-xla]').click();"
        " document.body.setAttribute('data-before', before); document.body.setAttribute('data-after', shown());"
        "</script></body>"
    )
    page = tmp_path / "tabs.html"
    page.write_text(html.replace("</body>", probe), encoding="utf-8")
    dom = run_chromium(tmp_path, page, "--dump-dom").stdout
    assert 'data-before="block,none,none"' in dom
    assert 'data-after="none,block,none"' in dom
