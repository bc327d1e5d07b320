"""Markdown report (pull-request comment): golden output, escaping, and findings folded away."""

from __future__ import annotations

import re
from dataclasses import replace

from test_report_samples import assert_golden, finding, sample_report, sample_report_from

from portcheck.model import TARGETS, FileResult, ScanResult, Target
from portcheck.report import renderer
from portcheck.report.markdown import MAX_FINDINGS, cell

render = renderer("markdown")


def test_markdown_for_one_target_matches_golden():
    assert_golden("markdown_generic.md", render(sample_report()))


def test_markdown_for_neuron_shows_its_blockers():
    assert_golden("markdown_neuron.md", render(sample_report((Target.NEURON,))))


def test_markdown_for_all_targets_matches_golden():
    assert_golden("markdown_all.md", render(sample_report(TARGETS, statistics=True)))


def test_findings_are_folded_in_details():
    out = render(sample_report())
    start, end = out.index("<details>"), out.index("</details>")
    assert "<summary>12 findings in 5 files</summary>" in out
    assert start < out.index("train.py:30:4") < end


def test_table_cells_are_escaped():
    out = render(sample_report())
    row = next(line for line in out.splitlines() if "train.py:30:4" in line)
    # the message's < > are entities, the code's | is escaped, and the row keeps its six column separators
    assert "&lt;x.device.type == \"cuda\"&gt;" in row
    assert "flags \\| MASK" in row
    assert row.replace("\\|", "").count("|") == 6
    assert cell("a|b\nc <d>") == "a\\|b c &lt;d&gt;"


def test_score_table_has_a_row_per_target():
    out = render(sample_report(TARGETS))
    for t in ("neuron", "xla", "generic"):
        assert any(line.startswith(f"| {t} | **") for line in out.splitlines()), t


def test_long_reports_are_cut_with_a_note():
    many = tuple(finding("big.py", i + 1, "DEV002", "x.cuda()") for i in range(MAX_FINDINGS + 5))
    report = sample_report_from(ScanResult(Target.GENERIC, (FileResult("big.py", many, lines=1000),)))
    out = render(report)
    assert sum(1 for line in out.splitlines() if line.startswith("| `big.py:")) == MAX_FINDINGS
    assert "_5 more findings not shown" in out


def test_the_score_change_against_a_baseline_is_shown():
    report = sample_report()
    card = report.scores[Target.GENERIC]
    old = replace(card, score=85.0)
    out = render(replace(report, baseline_scores={Target.GENERIC: old}))
    assert f"- **Against the baseline:** generic readiness 85.0 -> {card.score:.1f}" in out
    assert "Against the baseline" not in render(report)


def test_only_the_worst_directories_are_listed():
    from portcheck.report.markdown import TOP_DIRECTORIES

    files = tuple(
        FileResult(
            f"d{i:02d}/m.py", tuple(finding(f"d{i:02d}/m.py", j + 1, "DEV002", "x.cuda()") for j in range(i)), lines=100
        )
        for i in range(TOP_DIRECTORIES + 5)
    )
    out = render(sample_report_from(ScanResult(Target.GENERIC, files)))
    rows = [line for line in out.splitlines() if re.match(r"^\| `d\d\d` \|", line)]
    assert len(rows) == TOP_DIRECTORIES - 1 == 14  # the root takes the first row
    assert re.search(r"^\| `\.` \|", out, re.MULTILINE)
    assert rows[0].startswith(f"| `d{TOP_DIRECTORIES + 4:02d}`")  # the most findings, the lowest score
    assert "_5 more directories not shown._" in out and "_1 clean directory (100.0) not listed._" in out  # d00
