"""The report options through the command line: --output-format, -o, --fail-under, --statistics, --target all."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from portcheck.cli import main

TRAIN = """import torch

model = Net().cuda()
batch = batch.to("cuda")
if torch.cuda.is_available():
    torch.backends.cudnn.benchmark = True
"""
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(TRAIN)
    (tmp_path / "pkg" / "clean.py").write_text("def f(x):\n    return x + 1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def scan(*args: str, env=None):
    result = CliRunner().invoke(main, ["scan", "-q", "--no-cache", "-j", "1", *args], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def json_report(*args: str) -> dict:
    return json.loads(scan("--output-format", "json", *args).stdout)


def test_fail_under_is_decided_by_the_score_alone(project):
    data = json_report("pkg")
    score = data["score"]
    assert data["findings"] and score < 100
    assert scan("pkg").exit_code == 1  # findings fail the scan by default...
    assert scan("pkg", "--fail-under", str(score)).exit_code == 0  # ...but not when the score reaches the bar
    assert scan("pkg", "--fail-under", f"{score + 0.1:.1f}").exit_code == 1
    assert scan("pkg", "--fail-under", "0").exit_code == 0


def test_fail_under_100_passes_only_clean_code(project):
    assert scan("pkg/clean.py", "--fail-under", "100").exit_code == 0
    assert scan("pkg/train.py", "--fail-under", "100").exit_code == 1


def test_fail_under_with_all_targets_needs_every_target_to_pass(project, monkeypatch):
    import portcheck.score as score

    real = score.score_scan
    fixed = {"neuron": 40.0, "xla": 60.0, "generic": 90.0}

    def fake(scan, catalog, target, parts=None):
        return dataclasses.replace(real(scan, catalog, target, parts), score=fixed[score.Target(target).value])

    monkeypatch.setattr(score, "score_scan", fake)
    assert scan("pkg", "--target", "all", "--fail-under", "40").exit_code == 0
    assert scan("pkg", "--target", "all", "--fail-under", "50").exit_code == 1
    assert scan("pkg", "--target", "generic", "--fail-under", "50").exit_code == 0


def test_statistics_counts_per_rule_in_every_format(project):
    data = json_report("pkg", "--statistics")
    counts = {}
    for f in data["findings"]:
        counts[f["code"]] = counts.get(f["code"], 0) + 1
    assert {s["code"]: s["count"] for s in data["statistics"]} == counts
    text = scan("pkg", "--statistics").stdout
    for code, n in counts.items():
        assert re.search(rf"^\s+{n}  {code}\s+\d+  [a-z0-9-]+$", text, re.MULTILINE), code
    markdown = scan("pkg", "--statistics", "--output-format", "markdown").stdout
    for code, n in counts.items():
        assert f"| {code} | {n} |" in markdown
    html = scan("pkg", "--statistics", "--output-format", "html").stdout
    assert 'id="statistics"' in html and 'id="statistics"' not in scan("pkg", "--output-format", "html").stdout


def test_every_format_goes_to_the_output_file(project):
    for fmt, check in (
        ("text", lambda s: "Readiness score" in s),
        ("json", lambda s: "score" in json.loads(s)),
        ("sarif", lambda s: json.loads(s)["version"] == "2.1.0"),
        ("github", lambda s: s.startswith("::")),
        ("markdown", lambda s: s.startswith("## portcheck readiness")),
        ("html", lambda s: s.startswith("<!DOCTYPE html>")),
    ):
        out = project / f"report.{fmt}"
        result = scan("pkg", "--output-format", fmt, "-o", str(out))
        assert result.stdout == "" and check(out.read_text(encoding="utf-8")), fmt


def test_sarif_from_a_real_scan_validates(project):
    schema = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    doc = json.loads(scan("pkg", "--output-format", "sarif").stdout)
    jsonschema.Draft4Validator(schema).validate(doc)
    # The availability check only guards a cuDNN switch: the switch is reported (BK001), the check is not.
    assert {r["ruleId"] for r in doc["runs"][0]["results"]} >= {"DEV002", "BK001"}


def test_target_all_shows_three_scores_in_every_human_format(project):
    text = scan("pkg", "--target", "all").stdout
    assert all(re.search(rf"^  {t}\s+\d+\.\d", text, re.MULTILINE) for t in ("neuron", "xla", "generic"))
    markdown = scan("pkg", "--target", "all", "--output-format", "markdown").stdout
    assert all(f"| {t} | **" in markdown for t in ("neuron", "xla", "generic"))
    html = scan("pkg", "--target", "all", "--output-format", "html").stdout
    assert html.count('<div class="gauge" data-target=') == 3
    data = json_report("pkg", "--target", "all")
    assert set(data["targets"]) == {"neuron", "xla", "generic"} and data["score"] == data["targets"]["generic"]["score"]


def test_text_is_plain_unless_colour_is_forced_and_no_color_wins(project):
    assert not ANSI.search(scan("pkg", env={"NO_COLOR": None, "FORCE_COLOR": None}).stdout)  # not a terminal
    forced = scan("pkg", env={"NO_COLOR": None, "FORCE_COLOR": "1"}).stdout
    assert ANSI.search(forced) and "readiness: generic" in ANSI.sub("", forced)
    assert not ANSI.search(scan("pkg", env={"NO_COLOR": "1", "FORCE_COLOR": "1"}).stdout)


@pytest.fixture
def kernel_project(project):
    (project / "pkg" / "attn.cu").write_text("__global__ void k(float *x) { x[0] = 1; }\n")
    return project


def section(text: str, target: str) -> str:
    start = text.index(f"=== {target} ===")
    end = min((text.index(f"=== {t} ===") for t in ("neuron", "xla", "generic") if text.find(f"=== {t} ===") > start),
              default=len(text))
    return text[start:end]


def test_target_all_gives_every_target_its_own_section_in_text(kernel_project):
    text = scan("pkg", "--target", "all").stdout
    for target in ("neuron", "xla", "generic"):
        part = section(text, target)
        assert re.search(rf"^Found \d+ findings? for {target} in ", part, re.MULTILINE), target
        assert re.search(r"^Effort: \d+ blocker", part, re.MULTILINE), target
        assert "Directories, worst first" in part and "pkg/attn.cu:1:1: KRN002" in part
    # the CUDA source file is a blocker for neuron and xla, major for generic: each section says so
    assert "KRN002 [blocker]" in section(text, "neuron") and "KRN002 [blocker]" in section(text, "xla")
    assert "KRN002 [major]" in section(text, "generic") and "[blocker]" not in section(text, "generic")
    assert re.search(r"^Effort: 1 blocker", section(text, "neuron"), re.MULTILINE)
    assert re.search(r"^Effort: 0 blocker", section(text, "generic"), re.MULTILINE)


def test_target_all_gives_every_target_its_own_section_in_markdown(kernel_project):
    markdown = scan("pkg", "--target", "all", "--output-format", "markdown").stdout
    heads = re.findall(r"^### (\w+)$", markdown, re.MULTILINE)
    assert heads == ["neuron", "xla", "generic"]
    for target in heads:
        assert re.search(rf"<summary>\d+ findings? for {target} in \d+ files?</summary>", markdown), target
    neuron = markdown[markdown.index("### neuron"):markdown.index("### xla")]
    assert "| KRN002 | blocker |" in neuron


def test_target_all_fails_on_a_severity_reached_by_any_target(kernel_project):
    # KRN002 is major for generic but a blocker for neuron: --fail-on blocker must fail with every target
    assert scan("pkg", "--target", "generic", "--fail-on", "blocker").exit_code == 0
    assert scan("pkg", "--target", "neuron", "--fail-on", "blocker").exit_code == 1
    assert scan("pkg", "--target", "all", "--fail-on", "blocker").exit_code == 1


def test_target_all_with_a_baseline_filters_every_section(kernel_project):
    baseline = kernel_project / "baseline.json"
    assert scan("pkg", "--target", "all", "--write-baseline", str(baseline)).exit_code == 0
    text = scan("pkg", "--target", "all", "--baseline", str(baseline)).stdout
    for target in ("neuron", "xla", "generic"):
        assert f"Found 0 findings for {target} in" in section(text, target)
    assert scan("pkg", "--target", "all", "--baseline", str(baseline)).exit_code == 0


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_new_report_file_follows_the_umask(project, umask, mode):
    import os

    old = os.umask(umask)
    try:
        out = project / f"report-{umask:o}.html"
        scan("pkg", "--output-format", "html", "-o", str(out))
    finally:
        os.umask(old)
    assert (out.stat().st_mode & 0o777) == mode


def test_an_existing_report_file_keeps_its_mode(project):
    out = project / "report.txt"
    out.write_text("old\n")
    out.chmod(0o640)
    scan("pkg", "-o", str(out))
    assert (out.stat().st_mode & 0o777) == 0o640 and "Readiness score" in out.read_text()
