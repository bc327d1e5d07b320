"""JSON output: the existing keys stay, and the scores, grade, effort, files and directories are added."""

from __future__ import annotations

import json

from test_report_samples import sample_report

from portcheck.model import TARGETS, Target
from portcheck.report import renderer

render = renderer("json")


def test_existing_keys_are_kept():
    data = json.loads(render(sample_report()))
    assert {"version", "schema", "target", "files_scanned", "findings", "errors"} <= set(data)
    assert data["target"] == "generic" and data["files_scanned"] == 7 and len(data["findings"]) == 12
    assert data["findings"][0] == sample_report().findings[0].to_dict()


def test_top_level_scores_are_numbers_for_the_chosen_target():
    report = sample_report((Target.NEURON,))
    data = json.loads(render(report))
    card = report.scores[Target.NEURON]
    assert isinstance(data["score"], float) and isinstance(data["score_after_fix"], float)
    assert (data["score"], data["score_after_fix"], data["grade"]) == (card.score, card.score_after_fix, card.grade)
    assert data["effort"]["by_severity"]["blocker"] == 1
    assert data["effort"]["blockers"][0]["code"] == "KRN002"
    assert data["effort"]["kernel_lines"] == 800
    assert {"safe", "unsafe", "manual"} == set(data["effort"]["by_fix"])


def test_per_file_and_per_directory_scores():
    data = json.loads(render(sample_report()))
    files = {f["path"]: f for f in data["files"]}
    assert files["train.py"]["score"] < files["train.py"]["score_after_fix"]
    assert files["train.py"]["lines"] == 120 and files["train.py"]["findings"] == 4
    dirs = [d["path"] for d in data["directories"]]
    assert dirs == [".", "csrc", "csrc/kernels", "models", "notebooks"]  # the root first: it holds every finding
    assert [d["score"] for d in data["directories"]] == sorted(d["score"] for d in data["directories"])


def test_all_targets_side_by_side():
    report = sample_report(TARGETS)
    data = json.loads(render(report))
    assert data["target"] == "generic" and data["score"] == report.scores[Target.GENERIC].score
    assert set(data["targets"]) == {"neuron", "xla", "generic"}
    assert data["targets"]["neuron"]["score"] == report.scores[Target.NEURON].score
    assert data["targets"]["neuron"]["score"] < data["targets"]["generic"]["score"]


def test_statistics_only_when_asked():
    assert "statistics" not in json.loads(render(sample_report()))
    stats = json.loads(render(sample_report(statistics=True)))["statistics"]
    assert stats[0] == {"code": "DEV001", "count": 3} and sum(s["count"] for s in stats) == 12
