"""SARIF output: valid against the official 2.1.0 schema and shaped the way GitHub code scanning reads it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from test_report_samples import finding, sample_report, sample_report_from

from portcheck.model import TARGETS, FileResult, ScanResult, Severity, Target
from portcheck.report import renderer
from portcheck.report.sarif import line_hash

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def sarif(report) -> dict:
    return json.loads(renderer("sarif")(report))


@pytest.mark.parametrize("targets", [(Target.GENERIC,), (Target.NEURON,), TARGETS], ids=["generic", "neuron", "all"])
def test_validates_against_the_official_schema(targets):
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(
        sarif(sample_report(targets))
    )


def test_an_empty_scan_validates_too():
    report = sample_report_from(ScanResult(Target.GENERIC, (FileResult("a.py", (), lines=3),)))
    doc = sarif(report)
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    assert doc["runs"][0]["results"] == [] and doc["runs"][0]["tool"]["driver"]["rules"] == []


def test_the_schema_rejects_a_broken_log():
    doc = sarif(sample_report())
    doc["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SCHEMA).validate(doc)


def test_rules_carry_what_github_shows():
    driver = sarif(sample_report())["runs"][0]["tool"]["driver"]
    assert driver["name"] == "portcheck"
    by_id = {r["id"]: r for r in driver["rules"]}
    assert sorted(by_id) == ["BK001", "DEV001", "DEV002", "DEV004", "DEV005", "KRN002", "KRN003", "PKG008"]
    for r in driver["rules"]:
        assert r["name"] and r["shortDescription"]["text"] and r["fullDescription"]["text"]
        assert r["help"]["text"] and r["help"]["markdown"]
        assert "portability" in r["properties"]["tags"]
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert by_id["DEV001"]["helpUri"] == "https://docs.pytorch.org/docs/stable/accelerator.html"
    assert by_id["KRN002"]["defaultConfiguration"]["level"] == "error"  # major on generic
    assert by_id["BK001"]["defaultConfiguration"]["level"] == "note"


def test_results_point_at_rules_and_map_levels():
    report = sample_report((Target.NEURON,))
    run = sarif(report)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    expected = {Severity.BLOCKER: "error", Severity.MAJOR: "error", Severity.MINOR: "warning", Severity.INFO: "note"}
    assert len(run["results"]) == len(report.findings)
    for result, f in zip(run["results"], report.findings):
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == f.code
        assert result["level"] == expected[f.severity]
        assert result["message"]["text"].startswith(f.message)
    assert {r["level"] for r in run["results"]} == {"error", "warning", "note"}


def test_locations_are_relative_to_the_checkout_with_full_regions():
    report = sample_report()
    results = sarif(report)["runs"][0]["results"]
    f = next(f for f in report.findings if f.code == "DEV004")
    r = next(r for r in results if r["ruleId"] == "DEV004")
    loc = r["locations"][0]["physicalLocation"]
    assert sarif(report)["runs"][0]["columnKind"] == "unicodeCodePoints"  # portcheck counts columns in characters
    assert loc["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 30, "startColumn": 4, "endLine": 30, "endColumn": f.end_column}


def test_uris_are_percent_encoded():
    report = sample_report_from(
        ScanResult(
            Target.GENERIC,
            (FileResult("my dir/a#1.py", (finding("my dir/a#1.py", 1, "DEV002", "x.cuda()"),), lines=3),),
        )
    )
    loc = sarif(report)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc["uri"] == "my%20dir/a%231.py"


def test_notebook_results_name_their_cell():
    results = sarif(sample_report())["runs"][0]["results"]
    nb = next(r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(".ipynb"))
    assert nb["properties"]["cell"] == 3 and "cell 3" in nb["message"]["text"]


def fingerprints(findings) -> list:
    report = sample_report_from(ScanResult(Target.GENERIC, (FileResult("m.py", tuple(findings), lines=50),)))
    return [r["partialFingerprints"]["primaryLocationLineHash"] for r in sarif(report)["runs"][0]["results"]]


def test_fingerprints_survive_moved_lines_and_spacing():
    before = fingerprints([finding("m.py", 3, "DEV002", "y = x.cuda()")])
    after = fingerprints([finding("m.py", 40, "DEV002", "y  =  x.cuda( )", column=9)])
    assert before == after


def test_fingerprints_tell_repeated_lines_apart_and_change_with_the_code():
    same = fingerprints([finding("m.py", 3, "DEV002", "y = x.cuda()"), finding("m.py", 9, "DEV002", "y = x.cuda()")])
    assert len(set(same)) == 2 and same[0].endswith(":1") and same[1].endswith(":2")
    other = fingerprints([finding("m.py", 3, "DEV002", "z = x.cuda()")])
    assert other[0] != same[0]
    f = finding("m.py", 3, "DEV002", "y = x.cuda()")
    assert line_hash(f) != line_hash(replace(f, path="n.py")) != line_hash(replace(f, code="DEV001"))


def test_file_errors_become_tool_notifications():
    run = sarif(sample_report())["runs"][0]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == 1 and "broken.py" in notes[0]["message"]["text"]
    assert notes[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 3}


def test_scores_ride_along_as_run_properties():
    report = sample_report(TARGETS)
    runs = sarif(report)["runs"]
    assert [r["automationDetails"]["id"] for r in runs] == [f"portcheck/{t.value}/" for t in TARGETS]
    for run, target in zip(runs, TARGETS):
        assert run["properties"]["target"] == target.value
        assert run["properties"]["scores"] == {
            target.value: {
                "score": report.scores[target].score,
                "score_after_fix": report.scores[target].score_after_fix,
                "grade": report.scores[target].grade,
            }
        }
