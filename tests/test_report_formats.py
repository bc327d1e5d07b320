"""Every format renders from the same report object: repeatably, without scores, and with nothing shared between
runs."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_report_samples import sample_report

from portcheck.model import TARGETS
from portcheck.report import FORMATS, renderer


@pytest.mark.parametrize("fmt", FORMATS)
def test_rendering_is_repeatable_and_leaves_the_report_alone(fmt):
    report = sample_report(TARGETS, statistics=True)
    before = repr(report)
    first = renderer(fmt)(report)
    assert renderer(fmt)(report) == first
    assert repr(report) == before
    assert renderer(fmt)(sample_report(TARGETS, statistics=True)) == first  # a fresh, equal report renders the same


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_report_without_scores_still_renders(fmt):
    report = replace(sample_report(), scores={})
    out = renderer(fmt)(report)
    assert "train.py" in out
    assert "Readiness score" not in out and "readiness for" not in out


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_score_shown_is_the_score_card_s(fmt):
    report = sample_report()
    card = report.scores[report.target]
    doctored = replace(report, scores={report.target: replace(card, score=12.3)})
    assert "12.3" in renderer(fmt)(doctored) and "12.3" not in renderer(fmt)(report)
