"""Notebooks: every code cell is scanned as one module, and findings carry the cell and the line in it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import scan_snippet

from portcheck.api import scan
from portcheck.cli import main


def notebook(*cells, source_as_list: bool = True) -> str:
    """nbformat 4 JSON from (cell_type, source) pairs or ready-made cell dicts."""
    out = []
    for cell in cells:
        if isinstance(cell, tuple):
            kind, source = cell
            cell = {
                "cell_type": kind,
                "metadata": {},
                "source": source.splitlines(keepends=True) if source_as_list else source,
            }
            if kind == "code":
                cell.update(execution_count=None, outputs=[])
        out.append(cell)
    return json.dumps({"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def located(findings, code):
    return sorted((f.cell, f.line, f.column) for f in findings if f.code == code)


@pytest.mark.parametrize("source_as_list", [True, False], ids=["source-list", "source-string"])
def test_findings_give_the_cell_number_and_the_line_inside_the_cell(source_as_list):
    printed = {
        "cell_type": "code",
        "metadata": {},
        "execution_count": 3,
        "source": "print(model)",
        "outputs": [{"output_type": "stream", "name": "stdout", "text": ["model = model.cuda()\n"]}],
    }
    src = notebook(
        ("markdown", "# Title\nCall `model.cuda()` first.\n"),
        ("code", "import torch\nmodel = Net()\nmodel = model.cuda()\n"),
        ("raw", "x = x.cuda()\n"),
        printed,
        ("markdown", "More prose."),
        ("code", "y = 1\n\n\nbatch = batch.cuda()"),
        source_as_list=source_as_list,
    )
    found = scan_snippet(src, "explore.ipynb")
    # Cells count as they appear in the file, markdown and raw ones included.
    assert located(found, "DEV002") == [(2, 3, 9), (6, 4, 9)]
    assert all(f.end_line == f.line for f in found if f.code == "DEV002")


def test_an_import_in_an_earlier_cell_resolves_names_in_later_cells():
    imported = notebook(
        ("code", "from torch import cuda\n"), ("markdown", "Check the GPU."), ("code", "ok = cuda.is_available()\n")
    )
    own_name = notebook(("code", "cuda = load_settings()\n"), ("code", "ok = cuda.is_available()\n"))
    assert located(scan_snippet(imported, "a.ipynb"), "DEV005") == [(3, 1, 6)]
    assert located(scan_snippet(own_name, "b.ipynb"), "DEV005") == []


def test_magics_and_shell_escapes_do_not_break_parsing():
    src = notebook(
        ("code", "%matplotlib inline\n%load_ext autoreload\n!pip install -q torchvision\nimport torch\n"),
        ("code", "%%time\nx = torch.zeros(3).cuda()\n"),
        ("code", "%%bash\nfor f in *.csv; do echo $f; done\n"),
        ("code", "files = !ls data\nif files:\n    !nvidia-smi\n    y = x.cuda()\n"),
        ("code", "%time z = 1\n?torch.zeros\ntorch.cuda.synchronize()\n"),
    )
    found = scan_snippet(src, "magics.ipynb")  # asserts that the file has no error
    assert located(found, "DEV002") == [(2, 2, 5), (4, 4, 9)]
    assert located(found, "RT001") == [(5, 3, 1)]


def test_shell_escapes_and_shell_cells_are_scanned_with_the_shell_rules():
    src = notebook(
        ("code", "import os\n!CUDA_VISIBLE_DEVICES=0 python train.py\nout = !CUDA_VISIBLE_DEVICES=1 python eval.py\n"),
        ("markdown", "Set `CUDA_VISIBLE_DEVICES` before launching."),
        ("code", "%%bash\nexport CUDA_VISIBLE_DEVICES=2\necho $CUDA_VISIBLE_DEVICES\n"),
        ("code", "# CUDA_VISIBLE_DEVICES is set by the scheduler: Python lines are not shell\n!echo done\n"),
        ("code", "%%sh\nCUDA_VISIBLE_DEVICES=3 python eval.py\n"),
    )
    # Columns are those of the cell, past the `!` or `out = !` prefix. `echo $CUDA_VISIBLE_DEVICES` only
    # prints the variable: prose, as in a shell script.
    assert located(scan_snippet(src, "shell.ipynb"), "DEV007") == [
        (1, 2, 2),
        (1, 3, 8),
        (3, 2, 8),
        (5, 2, 1),
    ]


def test_a_notebook_that_shows_nvidia_smi_output_gets_info_and_one_that_uses_it_does_not():
    src = notebook(
        ("code", "# make sure a GPU is attached\n!nvidia-smi --query-gpu=name,memory.total --format=csv,noheader\n"),
        ("code", "gpus = !nvidia-smi -L\n!nvidia-smi | grep MiB\n"),
        ("code", "%%bash\nnvidia-smi\n"),
    )
    found = {(f.cell, f.line): f for f in scan_snippet(src, "demo.ipynb") if f.code == "ENV001"}
    assert set(found) == {(1, 2), (2, 1), (2, 2), (3, 2)}, sorted(found)
    assert found[(1, 2)].severity.value == "info" and "to show the GPUs" in found[(1, 2)].note
    assert all(f.severity.value != "info" for key, f in found.items() if key != (1, 2))


def test_a_cell_that_does_not_parse_does_not_hide_the_other_cells():
    src = notebook(
        ("code", "import torch\n"),
        ("code", "def broken(:\n    pass\n"),
        ("code", "torch.cuda.synchronize()\nx = x.cuda()\n"),
        ("code", "print 'written for Python 2'\n"),
        ("code", "y = y.cuda()\n"),
    )
    found = scan_snippet(src, "broken_cell.ipynb")
    # `torch` comes from cell 1, across the broken cell 2.
    assert located(found, "RT001") == [(3, 1, 1)]
    assert located(found, "DEV002") == [(3, 2, 5), (5, 1, 5)]


def test_a_notebook_that_is_not_valid_json_is_reported_and_the_scan_goes_on(tmp_path):
    (tmp_path / "truncated.ipynb").write_text('{"cells": [{"cell_type": "code", "source": ["x.cuda()"')
    (tmp_path / "not_a_notebook.ipynb").write_text("[1, 2, 3]")
    (tmp_path / "good.ipynb").write_text(notebook(("code", "x = x.cuda()\n")))
    (tmp_path / "train.py").write_text("model = model.cuda()\n")
    result = scan([tmp_path], jobs=1)
    errors = {Path(e.path).name: e for e in result.errors}
    assert sorted(errors) == ["not_a_notebook.ipynb", "truncated.ipynb"]
    assert all(e.message.strip() and "\n" not in e.message for e in errors.values())
    assert "JSON" in errors["truncated.ipynb"].message
    assert "notebook" in errors["not_a_notebook.ipynb"].message
    assert {Path(f.path).name for f in result.findings if f.code == "DEV002"} == {"good.ipynb", "train.py"}


def test_an_inline_suppression_in_a_cell_applies_to_its_line():
    src = notebook(("code", "import torch\n"), ("code", "a = a.cuda()  # portcheck: ignore[DEV002]\nb = b.cuda()\n"))
    assert located(scan_snippet(src, "s.ipynb"), "DEV002") == [(2, 2, 5)]


def test_text_report_names_the_cell_line_and_column(tmp_path):
    path = tmp_path / "explore.ipynb"
    path.write_text(notebook(("markdown", "# t"), ("code", "import torch\nt = t.cuda()\n")))
    result = CliRunner().invoke(main, ["scan", str(path), "--select", "DEV002"])
    assert "explore.ipynb:cell 2:2:5: DEV002" in result.output, result.output


def test_json_report_carries_the_cell(tmp_path):
    path = tmp_path / "nb.ipynb"
    path.write_text(notebook(("markdown", "# t"), ("code", "import torch\nt = t.cuda()\n")))
    result = CliRunner().invoke(main, ["scan", str(path), "--output-format", "json"])
    assert result.exit_code == 1, result.output
    findings = [f for f in json.loads(result.output)["findings"] if f["code"] == "DEV002"]
    assert [(f["cell"], f["line"], f["column"]) for f in findings] == [(2, 2, 5)]
