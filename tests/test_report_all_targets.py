"""Machine-readable outputs of `--target all` carry every target's own findings, not only the primary one's."""

from __future__ import annotations

import json

from click.testing import CliRunner

from portcheck.cli import main

# `float64` is major on XLA and minor on generic: the targets' findings differ.
SOURCE = "import torch\nx = torch.zeros(3, dtype=torch.float64, device=\"cuda\")\n"


def _scan(tmp_path, monkeypatch, fmt):
    (tmp_path / "m.py").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["scan", ".", "--no-cache", "--target", "all", "--output-format", fmt])
    assert result.exit_code in (0, 1), result.output
    return result.output


def _single(tmp_path, monkeypatch, target):
    result = CliRunner().invoke(main, ["scan", ".", "--no-cache", "--target", target, "--output-format", "json"])
    return json.loads(result.output)["findings"]


def test_json_lists_each_targets_findings(tmp_path, monkeypatch):
    data = json.loads(_scan(tmp_path, monkeypatch, "json"))
    assert set(data["targets"]) == {"neuron", "xla", "generic"}
    for target, section in data["targets"].items():
        assert section["findings"] == _single(tmp_path, monkeypatch, target)
    graded = {t: {(f["code"], f["severity"]) for f in s["findings"]} for t, s in data["targets"].items()}
    assert graded["xla"] != graded["generic"]


def test_sarif_has_one_run_per_target(tmp_path, monkeypatch):
    data = json.loads(_scan(tmp_path, monkeypatch, "sarif"))
    runs = {run["automationDetails"]["id"]: run for run in data["runs"]}
    assert set(runs) == {"portcheck/neuron/", "portcheck/xla/", "portcheck/generic/"}
    for target in ("neuron", "xla", "generic"):
        got = sorted((r["ruleId"], r["properties"]["severity"]) for r in runs[f"portcheck/{target}/"]["results"])
        want = sorted((f["code"], f["severity"]) for f in _single(tmp_path, monkeypatch, target))
        assert got == want


def test_github_annotates_each_place_once_with_every_targets_severity(tmp_path, monkeypatch):
    out = _scan(tmp_path, monkeypatch, "github")
    annotations = [line for line in out.splitlines() if not line.startswith("::notice title=portcheck")]
    places = [line.split("::")[1] for line in annotations]
    assert len(places) == len(set(places))
    union = {(f["code"], f["line"], f["column"]) for t in ("neuron", "xla", "generic")
             for f in _single(tmp_path, monkeypatch, t)}
    assert len(annotations) == len(union)
    assert any("xla: " in line and "generic: " in line for line in annotations)
