"""Baselines: record today's findings, then report and fail only on new ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from portcheck.baseline import (
    Baseline,
    BaselineError,
    Fingerprint,
    baseline_only,
    filter_new,
    fingerprint_all,
    load_baseline,
    write_baseline,
)
from portcheck.cli import main
from portcheck.model import FileError, FileResult, Finding, ScanResult, Severity, Target

ORIGINAL = """\
import torch

model = torch.nn.Linear(2, 2)
x = torch.zeros(3).cuda()
y = torch.ones(3).cuda()
"""


def cli(*args: str):
    return CliRunner().invoke(main, ["scan", "--no-cache", *args])


def json_scan(*args: str) -> dict:
    result = cli("--output-format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "train.py").write_text(ORIGINAL, encoding="utf-8")
    monkeypatch.chdir(root)
    written = cli("--write-baseline", "baseline.json")
    assert written.exit_code == 0, written.output
    return root


def edit(root: Path, text: str) -> None:
    (root / "src" / "train.py").write_text(text, encoding="utf-8")


def test_unchanged_code_passes(project):
    result = cli("--baseline", "baseline.json")
    assert result.exit_code == 0, result.output
    assert "Found 0 findings" in result.stdout


def test_edits_that_shift_or_reindent_lines_keep_findings_known(project):
    shifted = '"""Training."""\nimport os\n\n\n' + ORIGINAL.replace(
        "x = torch.zeros(3).cuda()", "if True:\n    x   =  torch.zeros(3).cuda()"
    )
    edit(project, shifted)
    assert len(json_scan()["findings"]) == 2
    result = cli("--baseline", "baseline.json")
    assert result.exit_code == 0, result.output


def test_only_new_findings_are_reported_and_fail(project):
    edit(project, ORIGINAL + "z = torch.empty(1).cuda()\n")
    result = cli("--baseline", "baseline.json")
    assert result.exit_code == 1
    assert "src/train.py:6:" in result.stdout
    assert "src/train.py:4:" not in result.stdout and "src/train.py:5:" not in result.stdout
    assert "Found 1 finding" in result.stdout


def test_a_changed_line_counts_as_new(project):
    edit(project, ORIGINAL.replace("torch.ones(3).cuda()", "torch.ones(4).cuda()"))
    data = json_scan("--baseline", "baseline.json")
    assert [f["line"] for f in data["findings"]] == [5]


def test_a_repeated_identical_line_is_new_beyond_the_recorded_count(project):
    edit(project, ORIGINAL + "x = torch.zeros(3).cuda()\n")
    data = json_scan("--baseline", "baseline.json")
    assert len(data["findings"]) == 1  # the baseline knew one such line, now there are two
    edit(project, ORIGINAL.replace("x = torch.zeros(3).cuda()\n", ""))
    assert json_scan("--baseline", "baseline.json")["findings"] == []


def test_fail_on_applies_to_new_findings(project):
    edit(project, ORIGINAL + "z = torch.empty(1).cuda()\n")
    new = json_scan("--baseline", "baseline.json")["findings"]
    assert [f["severity"] for f in new] == ["minor"]
    assert cli("--baseline", "baseline.json", "--fail-on", "major").exit_code == 0
    assert cli("--baseline", "baseline.json", "--fail-on", "minor").exit_code == 1


def test_output_shows_the_score_change_against_the_baseline(project):
    before = json_scan()["score"]
    # The new finding goes on an existing line, so the files and their sizes stay the same and the
    # baseline's score is exactly the score the original code had.
    edit(project, ORIGINAL.replace("torch.nn.Linear(2, 2)", "torch.nn.Linear(2, 2).cuda()"))
    after = json_scan()["score"]
    assert after < before
    expected = f"generic readiness {before:.1f} -> {after:.1f}"
    text = cli("--baseline", "baseline.json")
    assert expected in text.stdout
    markdown = cli("--baseline", "baseline.json", "--output-format", "markdown")
    assert expected in markdown.stdout
    assert "Against the baseline" not in cli().stdout


def test_score_change_for_another_target(project):
    before = json_scan("-t", "neuron")["score"]
    edit(project, ORIGINAL.replace("torch.nn.Linear(2, 2)", "torch.nn.Linear(2, 2).cuda()"))
    after = json_scan("-t", "neuron")["score"]
    assert f"neuron readiness {before:.1f} -> {after:.1f}" in cli("-t", "neuron", "--baseline", "baseline.json").stdout


def test_baseline_file_is_versioned_sorted_and_relative(project):
    data = json.loads((project / "baseline.json").read_text(encoding="utf-8"))
    assert data["portcheck-baseline"] == 1
    rows = data["findings"]
    assert rows == sorted(rows, key=lambda r: (r["path"], r["code"], r["source"], r["occurrence"]))
    assert {r["path"] for r in rows} == {"src/train.py"}
    assert {r["source"] for r in rows} == {"x = torch.zeros(3).cuda()", "y = torch.ones(3).cuda()"}
    text = (project / "baseline.json").read_text(encoding="utf-8").splitlines()
    body = text[text.index('  "findings": [') + 1 : text.index("  ]")]
    assert [json.loads(line.rstrip(",")) for line in body] == rows  # one finding per line
    first = (project / "baseline.json").read_bytes()
    assert cli("--write-baseline", "baseline.json").exit_code == 0
    assert (project / "baseline.json").read_bytes() == first  # rewriting is stable


def test_baseline_paths_are_relative_to_the_baseline_file(project, monkeypatch):
    monkeypatch.chdir(project / "src")
    assert cli("--baseline", "../baseline.json").exit_code == 0
    assert cli("train.py", "--baseline", "../baseline.json").exit_code == 0
    assert cli("--write-baseline", "here.json").exit_code == 0
    rows = json.loads((project / "src" / "here.json").read_text(encoding="utf-8"))["findings"]
    assert {r["path"] for r in rows} == {"train.py"}


def test_target_all_records_every_target(project):
    # torch.nonzero (a data-dependent shape) is off for generic but matters for neuron and xla.
    edit(project, ORIGINAL + "idx = torch.nonzero(x)\n")
    assert "XLA004" not in {f["code"] for f in json_scan("-t", "generic")["findings"]}
    assert "XLA004" in {f["code"] for f in json_scan("-t", "neuron")["findings"]}
    assert cli("--target", "all", "--write-baseline", "all.json").exit_code == 0
    for target in ("neuron", "xla", "generic"):
        assert cli("-t", target, "--baseline", "all.json").exit_code == 0
    assert cli("-t", "generic", "--write-baseline", "generic.json").exit_code == 0
    assert cli("-t", "neuron", "--baseline", "generic.json").exit_code == 1  # a one-target baseline misses it


@pytest.mark.parametrize(
    "content,problem",
    [
        ("{not json", "invalid JSON"),
        ("[]", "portcheck-baseline"),
        ('{"portcheck-baseline": 99, "findings": []}', "unsupported format"),
        ('{"portcheck-baseline": 1}', "'findings'"),
        ('{"portcheck-baseline": 1, "findings": [{"path": "a.py"}]}', "findings[0]"),
        (
            '{"portcheck-baseline": 1, "findings": '
            '[{"path": "a.py", "code": "DEV002", "source": "x", "occurrence": "0"}]}',
            "occurrence",
        ),
    ],
)
def test_malformed_baseline_is_an_error_naming_the_file(project, content, problem):
    (project / "broken.json").write_text(content, encoding="utf-8")
    result = cli("--baseline", "broken.json")
    assert result.exit_code == 2
    assert "broken.json" in result.stderr and problem in result.stderr
    assert result.stdout == ""


def test_missing_baseline_is_an_error(project):
    result = cli("--baseline", "nope.json")
    assert result.exit_code == 2
    assert "nope.json" in result.stderr


# --- the functions underneath ------------------------------------------------------------------------


def _finding(path: str, line: int, source: str, code: str = "DEV002") -> Finding:
    return Finding(
        path=path,
        line=line,
        column=1,
        end_line=line,
        end_column=2,
        code=code,
        name="n",
        category="device",
        severity=Severity.MINOR,
        message="m",
        fixable=False,
        source_line=source,
    )


def test_fingerprints_collapse_whitespace_and_count_repeats(tmp_path):
    findings = [
        _finding("a.py", 9, "x  =  t.cuda()"),
        _finding("a.py", 2, "x = t.cuda()"),
        _finding("b.py", 1, "x = t.cuda()"),
    ]
    prints = [fp for _, fp in fingerprint_all(findings, tmp_path, tmp_path)]
    assert prints == [
        Fingerprint("a.py", "DEV002", "x = t.cuda()", 0),
        Fingerprint("a.py", "DEV002", "x = t.cuda()", 1),
        Fingerprint("b.py", "DEV002", "x = t.cuda()", 0),
    ]


def test_union_of_targets_and_errors_kept(tmp_path):
    a = _finding("a.py", 1, "x = t.cuda()")
    b = _finding("a.py", 2, "import apex", code="PKG001")
    generic = ScanResult(Target.GENERIC, (FileResult("a.py", (a,)),))
    neuron = ScanResult(Target.NEURON, (FileResult("a.py", (a, b)),))
    path = tmp_path / "bl.json"
    assert write_baseline(path, [generic, neuron], cwd=tmp_path) == 2
    known = load_baseline(path)
    assert isinstance(known, Baseline) and len(known.fingerprints) == 2
    c = _finding("a.py", 3, "y = t.cuda()")
    broken = FileResult("b.py", error=FileError("b.py", "syntax error"))
    now = ScanResult(Target.GENERIC, (FileResult("a.py", (a, b, c)), broken))
    assert filter_new(now, known, cwd=tmp_path).findings == (c,)
    assert filter_new(now, known, cwd=tmp_path).errors == (broken.error,)
    assert baseline_only(now, known, cwd=tmp_path).findings == (a, b)


def test_load_rejects_an_unreadable_file(tmp_path):
    path = tmp_path / "bl.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(BaselineError, match="bl.json"):
        load_baseline(path)


# --- the CI recipes (README, "CI recipes") run these exact commands -----------------------------------


def test_code_scanning_recipe_writes_sarif_and_never_fails_the_job(project):
    edit(project, ORIGINAL + "z = torch.empty(1).cuda()\n")
    result = cli("--target", "neuron", "--output-format", "sarif", "-o", "portcheck.sarif", "--exit-zero")
    assert result.exit_code == 0, result.output
    sarif = json.loads((project / "portcheck.sarif").read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"
    assert len(sarif["runs"][0]["results"]) == 3


def test_pull_request_recipe_reports_new_findings_and_the_fix_diff(project):
    edit(project, ORIGINAL.replace("torch.nn.Linear(2, 2)", "torch.nn.Linear(2, 2).cuda()"))
    result = cli("--baseline", "baseline.json", "--output-format", "markdown", "-o", "report.md", "--exit-zero")
    assert result.exit_code == 0, result.output
    report = (project / "report.md").read_text(encoding="utf-8")
    assert "Against the baseline" in report and "generic readiness" in report
    assert "1 finding in 1 file" in report
    fix = CliRunner().invoke(main, ["fix", "--diff"])
    assert fix.exit_code == 1  # something would change; the recipe ignores the code
    assert fix.stdout.startswith("--- a/src/train.py\n+++ b/src/train.py\n")
    assert "-model = torch.nn.Linear(2, 2).cuda()" in fix.stdout
    assert ".cuda()" in (project / "src" / "train.py").read_text(encoding="utf-8")  # --diff writes nothing
