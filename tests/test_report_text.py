"""Text report: golden output for one target and for all three, plain unless colour is asked for."""

from __future__ import annotations

import re

from test_report_samples import assert_golden, clean_report, sample_report

from portcheck.model import TARGETS, Target
from portcheck.report import renderer
from portcheck.report.text_sections import plain

ANSI = re.compile(r"\x1b\[[0-9;]*m")
render = renderer("text")


def test_text_report_for_one_target_matches_golden():
    assert_golden("text_generic.txt", render(sample_report()))


def test_text_report_for_neuron_shows_its_blockers():
    assert_golden("text_neuron.txt", render(sample_report((Target.NEURON,))))


def test_text_report_for_all_targets_matches_golden():
    assert_golden("text_all.txt", render(sample_report(TARGETS, statistics=True)))


def test_sections_come_in_order_score_directories_rules_findings():
    out = render(sample_report())
    positions = [
        out.index(s)
        for s in ("Readiness score", "Directories, worst first", "Top rules", "train.py:12:10", "Found 12 findings")
    ]
    assert positions == sorted(positions)


def test_directories_are_listed_worst_first():
    rows = [line for line in plain(sample_report()) if re.match(r"^\s+\d+\.\d\s+\d+\.\d\s+[ABCD]\s", line)]
    scores = [float(line.split()[0]) for line in rows]
    assert scores and scores == sorted(scores)


def test_all_targets_are_shown_side_by_side():
    out = render(sample_report(TARGETS))
    for target in ("neuron", "xla", "generic"):
        assert re.search(rf"^  {target}\s+\d+\.\d", out, re.MULTILINE), target


def test_plain_text_has_no_escape_codes_and_colour_has_them():
    report = sample_report()
    assert "\x1b[" not in render(report, color=False)
    coloured = render(report, color=True)
    assert ANSI.search(coloured)
    text = ANSI.sub("", coloured)
    card = report.scores[report.target]
    assert f"{card.score:.1f}" in text and "readiness: generic" in text and "Directories, worst first" in text


def test_a_clean_project_reads_100():
    out = render(clean_report())
    assert re.search(r"^  generic\s+100\.0  A mechanical changes only", out, re.MULTILINE)
