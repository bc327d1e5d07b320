"""Messages quote what a text rule matched: whole tokens, closed brackets and quotes, never cut mid-token."""

from __future__ import annotations

import pytest
from helpers import scan_snippet

from portcheck.textscan import excerpt


@pytest.mark.parametrize(
    "line, matched, shown",
    [
        ('torchrun --nproc_per_node="$NGPU" train.py', 'nproc_per_node="$NGPU', '--nproc_per_node="$NGPU"'),
        ("            - capabilities: [ gpu ]", "            - capabilities: [ gpu", "- capabilities: [ gpu ]"),
        ("runtime: nvidia  # the GPU runtime", "runtime: nvidia", "runtime: nvidia"),
        (
            "FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04 AS base",
            "FROM nvidia/cuda",
            "FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04",
        ),
    ],
)
def test_the_excerpt_is_whole_tokens(line, matched, shown):
    start = line.index(matched)
    assert excerpt(line, start, start + len(matched)) == shown


def test_a_long_excerpt_is_cut_between_words():
    line = "RUN " + " ".join(f"word{i}" for i in range(40))
    out = excerpt(line, 0, len(line))
    assert out.endswith(" ...") and len(out) <= 84
    assert out[:-4].split()[-1].startswith("word") and line.startswith(out[:-4])


def test_a_real_scan_quotes_the_whole_launcher_argument():
    findings = scan_snippet('NGPU=8\ntorchrun --nproc_per_node="$NGPU" train.py\n', filename="run.sh")
    messages = [f.message for f in findings if f.code == "DIST006"]
    assert messages == ['Processes per node derived from the GPU count (--nproc_per_node="$NGPU")']


def test_a_compose_file_quotes_the_closed_list():
    source = (
        "services:\n  app:\n    deploy:\n      resources:\n        reservations:\n"
        "          devices:\n            - capabilities: [ gpu ]\n"
    )
    findings = scan_snippet(source, filename="compose.yaml")
    assert any(f.message.endswith("(- capabilities: [ gpu ])") for f in findings), [f.message for f in findings]
