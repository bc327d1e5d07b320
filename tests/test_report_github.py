"""GitHub Actions annotations: the workflow-command syntax, levels, escaping, and the score notice."""

from __future__ import annotations

import re

from test_report_samples import finding, sample_report, sample_report_from

from portcheck.model import TARGETS, FileResult, ScanResult, Target
from portcheck.report import renderer
from portcheck.report.github import escape_data, escape_property

render = renderer("github")
COMMAND = re.compile(r"^::(error|warning|notice)( [^:]*)?::(.*)$")


def test_one_annotation_per_finding_in_the_documented_form():
    report = sample_report_from(ScanResult(Target.GENERIC, (
        FileResult("src/m.py", (finding("src/m.py", 7, "DEV002", "y = x.cuda()", column=5),), lines=10),)))
    lines = render(report).splitlines()
    assert lines[0] == ("::warning file=src/m.py,line=7,col=5,endLine=7,endColumn=11,"
                        "title=DEV002 dot-cuda-call::[minor] Dot cuda call")


def test_levels_follow_severity_and_the_worst_come_first():
    report = sample_report((Target.NEURON,))
    lines = render(report).splitlines()
    assert all(COMMAND.match(line) for line in lines)
    kinds = [COMMAND.match(line).group(1) for line in lines if "file=" in line and "could not scan" not in line]
    assert (
        kinds[0] == "error" and kinds.count("error") == 4
    )  # KRN002 blocker, KRN003 (major when guarded), DEV004, DEV005
    assert kinds == sorted(kinds, key=["error", "warning", "notice"].index)
    info = next(line for line in lines if "BK001" in line)
    assert info.startswith("::notice ")


def test_data_and_properties_are_escaped():
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    report = sample_report_from(
        ScanResult(
            Target.GENERIC,
            (
                FileResult(
                    "dir,1/a:b.py",
                    (finding("dir,1/a:b.py", 2, "DEV004", "if a:", message="50% off\nsecond line"),),
                    lines=3,
                ),
            ),
        )
    )
    line = render(report).splitlines()[0]
    assert "file=dir%2C1/a%3Ab.py," in line
    assert line.endswith("::[major] 50%25 off%0Asecond line")
    assert line.count("::") == 2  # the opening `::` and the one before the message


def test_scores_are_reported_as_notices_per_target():
    report = sample_report(TARGETS)
    notices = [line for line in render(report).splitlines() if "title=portcheck score" in line]
    assert len(notices) == 3
    neuron = report.scores[Target.NEURON]
    assert any(f"readiness for neuron: {neuron.score:.1f} ({neuron.grade}" in n for n in notices)


def test_statistics_add_one_notice():
    out = render(sample_report(statistics=True))
    stats = [line for line in out.splitlines() if "title=portcheck statistics" in line]
    assert stats == [
        "::notice title=portcheck statistics::findings per rule: "
        "DEV001 3, DEV002 3, BK001 1, DEV004 1, DEV005 1, KRN002 1, KRN003 1, PKG008 1"
    ]
