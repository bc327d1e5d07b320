"""Inline suppressions on the flagged line."""

import pytest
from helpers import scan_snippet


@pytest.mark.parametrize(
    "comment",
    [
        "# portcheck: ignore",
        "# portcheck: ignore[DEV002]",
        "# noqa: DEV002",
        "# noqa",
        "# noqa:DEV002,DEV001",
        "# portcheck: ignore[DEV]",
    ],
)
def test_suppressed(comment):
    assert scan_snippet(f"model.cuda()  {comment}\n") == []


@pytest.mark.parametrize("comment", ["# portcheck: ignore[DEV001]", "# noqa: E501", "# portcheck is great"])
def test_not_suppressed_by_other_codes(comment):
    found = scan_snippet(f"model.cuda()  {comment}\n")
    assert [f.code for f in found] == ["DEV002"]


def test_suppression_only_applies_to_its_line():
    found = scan_snippet("a.cuda()  # noqa: DEV002\nb.cuda()\n")
    assert [f.line for f in found] == [2]


def test_suppression_on_last_line_of_multiline_call():
    src = "x = torch.zeros(\n    3,\n).cuda(\n)  # portcheck: ignore\n"
    assert scan_snippet("import torch\n" + src) == []


def test_skip_file():
    assert scan_snippet("# portcheck: skip-file\nmodel.cuda()\n") == []
