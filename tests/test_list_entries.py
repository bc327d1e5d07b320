"""The entries of one list are one finding: `default=["cuda:0", ..., "cuda:7"]` is one device list to change."""

from __future__ import annotations

import json
from pathlib import Path

from portcheck.cache import decode_findings, encode_findings
from portcheck.config import Config
from portcheck.runner import scan_paths

DEVICES = (
    "import argparse\n"
    "import torch\n"
    "\n"
    "parser = argparse.ArgumentParser()\n"
    "parser.add_argument(\n"
    "    '--devices',\n"
    "    nargs='+',\n"
    "    default=['cuda:0', 'cuda:1',  # the first node\n"
    "             'cuda:2', 'cuda:3'],\n"
    ")\n"
    "x = torch.ones(2).to('cuda:0'), torch.ones(2).to('cuda:1')\n"
)


def _findings(root: Path, name: str, text: str):
    (root / name).write_text(text, encoding="utf-8")
    result = scan_paths([root / name], Config(respect_gitignore=False), target="generic", cwd=root, jobs=1)
    return [f for r in result.files for f in r.findings]


def test_entries_of_one_list_are_one_finding_that_names_the_others(tmp_path: Path):
    found = [f for f in _findings(tmp_path, "train.py", DEVICES) if f.code == "DEV001"]
    listed = [(f.line, f.column) for f in found]
    # the list across two lines and a comment is one finding; two `.to()` calls in a tuple are two
    assert listed == [(8, 14), (11, 22), (11, 50)], listed
    head = found[0]
    assert head.also == ((8, 24, 8, 32), (9, 14, 9, 22), (9, 24, 9, 32)), head.also
    assert "stands for 4 entries of one list (lines 8-9)" in head.note and "rewrites them together" in head.note
    assert [(p.line, p.column) for p in head.parts()] == [(8, 14), (8, 24), (9, 14), (9, 24)]
    assert all(not f.also for f in found[1:])
    assert head.to_dict()["also"] == [[8, 24, 8, 32], [9, 14, 9, 22], [9, 24, 9, 32]]


def test_what_is_no_list_of_entries(tmp_path: Path):
    # calls in one list are two changes (only literals are entries); two rules on one line are two findings
    found = _findings(tmp_path, "ops.py", "import apex, xformers\nimport torch\n\nx = [a.cuda(), b.cuda()]\n")
    assert sorted((f.line, f.code) for f in found) == [(1, "PKG001"), (1, "PKG003"), (4, "DEV002"), (4, "DEV002")], (
        found
    )
    assert all(not f.also for f in found)


def test_the_entries_survive_the_cache_and_a_notebook_cell(tmp_path: Path):
    head = next(f for f in _findings(tmp_path, "train.py", DEVICES) if f.also)
    assert decode_findings(encode_findings([head]), head.path) == (head,)
    # an entry of the cache written before `also` existed decodes with none
    old = tuple(row[:18] for row in encode_findings([head]))
    assert decode_findings(old, head.path)[0].also == ()
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# title\n"]},
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": DEVICES.splitlines(True),
        },
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    found = [f for f in _findings(tmp_path, "nb.ipynb", json.dumps(notebook)) if f.code == "DEV001"]
    first = found[0]
    assert (first.cell, first.line, first.column) == (2, 8, 14) and first.also == head.also, first
