"""`fix` on notebooks written by other tools (Colab and others): only the changed cells' `source`
values change; every other byte of the JSON stays as the file had it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_fix_catalog import synthetic_catalog

from portcheck.config import Config
from portcheck.fixer.notebook import render_source, source_spans
from portcheck.fixer.paths import fix_paths

GENERIC = (
    'DEVICE = torch.device(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")'
)


def colab_notebook(cells, escape_html: bool = True) -> str:
    """A notebook as Colab saves it: two-space indent, nbformat keys first, `<`, `>` and `&` escaped
    as \\u003c, \\u003e and \\u0026, other non-ASCII text raw, no final newline."""
    doc = {
        "nbformat": 4,
        "nbformat_minor": 0,
        "metadata": {
            "colab": {"provenance": [], "gpuType": "T4"},
            "kernelspec": {"name": "python3", "display_name": "Python 3"},
            "accelerator": "GPU",
        },
        "cells": cells,
    }
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    if escape_html:
        text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return text


def code(source, outputs=()):
    return {
        "cell_type": "code",
        "source": source,
        "metadata": {"id": "c0ffee"},
        "execution_count": None,
        "outputs": list(outputs),
    }


HTML_OUTPUT = {"output_type": "display_data", "data": {"text/html": ['<div class="x">café & co</div>']}, "metadata": {}}


def fix(folder: Path, write: bool = True):
    return fix_paths(
        [folder], target="generic", unsafe=True, write=write, config=Config(), catalog=synthetic_catalog(), cwd=folder
    )


@pytest.mark.parametrize("escape_html", [True, False])
def test_a_colab_notebook_is_fixed_and_keeps_its_layout(tmp_path, escape_html):
    cells = [
        {"cell_type": "markdown", "source": ["# Entraînement <GPU>"], "metadata": {"id": "m1"}},
        code(["import torch\n", "x = y.cuda()  # é < 1"], [HTML_OUTPUT]),
        code(["print('untouched')"]),
    ]
    path = tmp_path / "colab.ipynb"
    original = colab_notebook(cells, escape_html)
    path.write_text(original, encoding="utf-8")
    report = fix(tmp_path)
    assert not report.files[0].error and len(report.changed) == 1
    text = path.read_text(encoding="utf-8")
    fixed = [dict(c) for c in cells]
    fixed[1] = code(["import torch\n", "\n", GENERIC + "\n", "x = y.to(DEVICE)  # é < 1"], [HTML_OUTPUT])
    assert text == colab_notebook(fixed, escape_html)  # byte for byte: escapes, indent, key order, no final newline
    assert json.loads(text)["cells"][1]["source"][-1] == "x = y.to(DEVICE)  # é < 1"
    assert fix(tmp_path).changed == ()


def test_only_the_changed_span_differs(tmp_path):
    # Odd spacing everywhere: nothing but the fixed cell's source may move.
    text = (
        '{ "nbformat" : 4 ,\t"cells" : [ { "cell_type":"code" , "source" : "a = 1" } ,\n'
        '{"cell_type":"code","metadata":{},"outputs":[],"source":[\n      "x = y.cuda()"\n    ]} ] ,"metadata" : { } }'
    )
    path = tmp_path / "odd.ipynb"
    path.write_text(text, encoding="utf-8")
    fix(tmp_path)
    after = path.read_text(encoding="utf-8")
    start, end = source_spans(text)[2]
    new_start, new_end = source_spans(after)[2]
    assert after[:new_start] == text[:start] and after[new_end:] == text[end:]
    assert after[new_start:new_end].startswith('[\n      "import torch\\n",\n') and after[new_start:new_end].endswith(
        '"\n    ]'
    )


def test_source_spans_find_each_cells_source_value():
    text = (
        '{"metadata": {"source": 1}, "cells": [{"source": "a"}, {"cell_type": "markdown", "source": ["b\\n", "c"]}, 3]}'
    )
    spans = source_spans(text)
    assert {k: json.loads(text[s:e]) for k, (s, e) in spans.items()} == {1: "a", 2: ["b\n", "c"]}


def test_render_source_follows_the_old_layout():
    enc = json.dumps
    assert render_source('[\n   "a"\n  ]', ["x\n", "y"], enc) == '[\n   "x\\n",\n   "y"\n  ]'
    assert render_source('[\r\n\t\t"a"\r\n\t]', ["x"], enc) == '[\r\n\t\t"x"\r\n\t]'
    assert render_source('["a","b"]', ["x", "y"], enc) == '["x","y"]'
    assert render_source('"a"', "x\ny", enc) == '"x\\ny"'
