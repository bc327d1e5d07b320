"""`fix_paths` on real files: bytes, encodings, line endings, modes, links, refusals, notebooks."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from test_fix_catalog import synthetic_catalog

from portcheck.config import Config
from portcheck.fixer import fix_paths

GENERIC = (
    'DEVICE = torch.device(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")'
)


def run(folder: Path, write: bool = True, target: str = "generic", **config):
    return fix_paths(
        [folder],
        target=target,
        unsafe=True,
        write=write,
        config=Config(**config),
        catalog=synthetic_catalog(),
        cwd=folder,
    )


def test_crlf_file_stays_crlf_including_inserted_lines(tmp_path):
    path = tmp_path / "crlf.py"
    path.write_bytes(b"import torch\r\n\r\n\r\ndef f(x):\r\n    # note\r\n    return x.cuda()\r\n")
    report = run(tmp_path)
    data = path.read_bytes()
    assert data == (
        b"import torch\r\n\r\n"
        + GENERIC.encode()
        + b"\r\n\r\n\r\ndef f(x):\r\n    # note\r\n    return x.to(DEVICE)\r\n"
    )
    assert report.files[0].written


def test_crlf_file_gets_crlf_in_added_imports_and_guards(tmp_path):
    path = tmp_path / "sync.py"
    path.write_bytes(b"from torch.cuda import synchronize\r\nsynchronize()\r\n")
    run(tmp_path)
    data = path.read_bytes()
    assert (
        data == b"import torch\r\n\r\nif torch.accelerator.is_available():\r\n    torch.accelerator.synchronize()\r\n"
    )


def test_bom_is_kept(tmp_path):
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbfimport torch\nx = torch.ones(1).to('cuda')  # caf\xc3\xa9\n")
    run(tmp_path)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbfimport torch\n")
    assert data.endswith(b"x = torch.ones(1).to(DEVICE)  # caf\xc3\xa9\n")


def test_latin1_cookie_file_is_written_back_in_latin1(tmp_path):
    path = tmp_path / "latin.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\nimport torch\nname = 'caf\xe9'\nx = torch.ones(1).to('cuda')\n")
    run(tmp_path)
    assert path.read_bytes() == (
        b"# -*- coding: latin-1 -*-\nimport torch\n\n"
        + GENERIC.encode()
        + b"\nname = 'caf\xe9'\nx = torch.ones(1).to(DEVICE)\n"
    )


def test_mode_is_kept(tmp_path):
    path = tmp_path / "tool.py"
    path.write_text("#!/usr/bin/env python\nx = y.cuda()\n")
    path.chmod(0o751)
    run(tmp_path)
    assert "y.to(DEVICE)" in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o751


def test_read_only_file_is_refused_and_untouched(tmp_path):
    path = tmp_path / "locked.py"
    path.write_text("x = y.cuda()\n")
    path.chmod(0o444)
    try:
        report = run(tmp_path)
        assert path.read_text() == "x = y.cuda()\n"
        (item,) = report.files
        assert item.error.startswith("read-only file")
        assert [left.finding.code for left in item.left] == ["TST002"]
    finally:
        path.chmod(0o644)


def test_read_only_file_can_still_be_diffed(tmp_path):
    path = tmp_path / "locked.py"
    path.write_text("x = y.cuda()\n")
    path.chmod(0o444)
    try:
        report = run(tmp_path, write=False)
        assert report.files[0].changed and not report.files[0].error
    finally:
        path.chmod(0o644)


def test_unparsable_file_is_refused_and_untouched(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("x = y.cuda(\n")
    report = run(tmp_path)
    assert path.read_text() == "x = y.cuda(\n"
    assert report.files[0].error.startswith("syntax error")


def test_a_file_python_parses_and_libcst_refuses_is_refused_and_untouched(tmp_path):
    # `assert(a if b else c)` is Python, and libcst's tree refuses it (locuslab/wanda's main.py); the
    # verdicts of a scan parse such a file too (a carriage return makes them)
    text = "x = y.cuda()\r\nassert(x if x else True)\r\n"
    path = tmp_path / "main.py"
    path.write_bytes(text.encode())
    report = run(tmp_path)
    assert path.read_bytes() == text.encode()
    assert report.files[0].error.startswith("cannot parse for rewriting"), report.files[0].error


def test_undecodable_file_is_refused(tmp_path):
    path = tmp_path / "bad.py"
    path.write_bytes(b"x = y.cuda()  # \xff\xfe\n")
    report = run(tmp_path)
    assert report.files[0].error.startswith("cannot decode")
    assert path.read_bytes() == b"x = y.cuda()  # \xff\xfe\n"


def test_file_without_fixable_findings_is_not_rewritten(tmp_path):
    path = tmp_path / "clean.py"
    path.write_text("import torch\nname = torch.cuda.get_device_name(0)\n")
    before = path.stat().st_mtime_ns
    report = run(tmp_path)
    assert path.stat().st_mtime_ns == before
    (item,) = report.files
    assert not item.changed and not item.written
    assert [(left.finding.code, left.reason) for left in item.left] == [("TST019", "no autofix for target generic")]


def test_second_run_changes_nothing(tmp_path):
    (tmp_path / "a.py").write_text(
        "import torch\nfrom torch.cuda.amp import autocast\nwith autocast():\n    x = y.cuda()\n"
        "torch.cuda.synchronize()\n"
    )
    first = run(tmp_path)
    assert first.changed
    text = (tmp_path / "a.py").read_text()
    second = run(tmp_path)
    assert not second.changed and not second.applied
    assert (tmp_path / "a.py").read_text() == text


def test_symlink_inside_the_project_is_written_through(tmp_path):
    real = tmp_path / "real.py"
    real.write_text("x = y.cuda()\n")
    (tmp_path / "sub").mkdir()
    link = tmp_path / "sub" / "link.py"
    link.symlink_to(real)
    fix_paths([link], unsafe=True, config=Config(root=tmp_path), catalog=synthetic_catalog(), cwd=tmp_path)
    assert link.is_symlink()
    assert "y.to(DEVICE)" in real.read_text()


def test_symlink_to_a_file_outside_the_project_is_refused(tmp_path):
    outside = tmp_path / "outside"
    project = tmp_path / "project"
    outside.mkdir()
    project.mkdir()
    target = outside / "shared.py"
    target.write_text("x = y.cuda()\n")
    link = project / "link.py"
    link.symlink_to(target)
    report = fix_paths([link], unsafe=True, config=Config(root=project), catalog=synthetic_catalog(), cwd=project)
    assert target.read_text() == "x = y.cuda()\n"
    assert report.files[0].error == "symbolic link to a file outside the project; not followed"


def test_diff_mode_writes_nothing(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("x = y.cuda()\n")
    report = run(tmp_path, write=False)
    assert path.read_text() == "x = y.cuda()\n"
    diff = report.files[0].diff()
    assert "-x = y.cuda()\n" in diff and "+x = y.to(DEVICE)\n" in diff and diff.startswith("--- a/a.py\n+++ b/a.py\n")


def test_min_torch_and_literal_device_come_from_the_config(tmp_path):
    path = tmp_path / "a.py"
    path.write_text("import torch\nx = y.cuda()\ntorch.cuda.empty_cache()\n")
    run(tmp_path, target="neuron", literal_device=True, min_torch="2.9")
    assert path.read_text() == (
        'import torch\nx = y.to("neuron")\nif torch.accelerator.is_available():\n    torch.accelerator.empty_cache()\n'
    )


# -- notebooks ---------------------------------------------------------------------------------------


def _cell(source, kind="code"):
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _notebook(cells, indent=1, trailing="\n"):
    doc = {
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(doc, indent=indent, ensure_ascii=False) + trailing


NOTEBOOK_CELLS = [
    _cell(["# Données\n", "Notes on cuda."], "markdown"),
    _cell(["%matplotlib inline\n", "import torch\n", "!nvidia-smi"]),
    _cell(
        [
            "model = torch.nn.Linear(2, 2).cuda()\n",
            "for _ in range(2):\n",
            "    !echo step\n",
            'x = torch.zeros(2).to("cuda")',
        ]
    ),
    _cell("%%bash\necho cuda\n"),
    _cell("y = model(x)\ntorch.cuda.synchronize()"),
    _cell(["print(y)"]),
]


def test_notebook_is_fixed_cell_by_cell_keeping_its_layout(tmp_path):
    path = tmp_path / "explore.ipynb"
    original = _notebook(NOTEBOOK_CELLS)
    path.write_text(original, encoding="utf-8")
    run(tmp_path)
    text = path.read_text(encoding="utf-8")
    expected_cells = [
        NOTEBOOK_CELLS[0],
        _cell(["%matplotlib inline\n", "import torch\n", "\n", GENERIC + "\n", "!nvidia-smi"]),
        _cell(
            [
                "model = torch.nn.Linear(2, 2).to(DEVICE)\n",
                "for _ in range(2):\n",
                "    !echo step\n",
                "x = torch.zeros(2).to(DEVICE)",
            ]
        ),
        NOTEBOOK_CELLS[3],
        _cell("y = model(x)\nif torch.accelerator.is_available():\n    torch.accelerator.synchronize()"),
        NOTEBOOK_CELLS[5],
    ]
    assert text == _notebook(expected_cells)
    assert "Données" in text  # ensure_ascii stays off
    assert run(tmp_path).changed == ()


@pytest.mark.parametrize("indent,trailing", [(2, ""), (4, "\n"), (None, "")])
def test_notebook_indentation_and_trailing_newline_are_kept(tmp_path, indent, trailing):
    path = tmp_path / "nb.ipynb"
    path.write_text(
        _notebook([_cell(["import torch\n", "x = y.cuda()"])], indent=indent, trailing=trailing), encoding="utf-8"
    )
    run(tmp_path)
    assert path.read_text(encoding="utf-8") == _notebook(
        [_cell(["import torch\n", "\n", GENERIC + "\n", "x = y.to(DEVICE)"])], indent=indent, trailing=trailing
    )


def test_notebook_key_order_and_ascii_escapes_are_kept(tmp_path):
    path = tmp_path / "nb.ipynb"
    doc = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"title": "Données"}, "cells": [_cell(["x = y.cuda()"])]}
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
    run(tmp_path)
    text = path.read_text(encoding="utf-8")
    assert text.index('"nbformat"') < text.index('"cells"')
    assert "Donn\\u00e9es" in text
    assert json.loads(text)["cells"][0]["source"][-1] == "x = y.to(DEVICE)"


def test_a_notebook_in_a_layout_no_json_dumper_writes_keeps_every_byte_outside_the_changed_cell(tmp_path):
    path = tmp_path / "odd.ipynb"
    head = '{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null,\n  "source": '
    tail = '}],\n "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n'
    path.write_text(head + '["x = y.cuda()"]' + tail, encoding="utf-8")
    report = run(tmp_path)
    assert not report.files[0].error
    fixed = ["import torch\n", "\n", GENERIC + "\n", "\n", "x = y.to(DEVICE)"]
    assert path.read_text(encoding="utf-8") == head + json.dumps(fixed) + tail


def test_notebook_imports_are_not_repeated_and_not_dropped_when_other_cells_use_them(tmp_path):
    path = tmp_path / "nb.ipynb"
    cells = [
        _cell(["import torch\n", "from torch.cuda import synchronize\n", "synchronize()"]),
        _cell(["callback = synchronize"]),
        _cell(["torch.cuda.synchronize()"]),
    ]
    path.write_text(_notebook(cells), encoding="utf-8")
    report = run(tmp_path)
    sources = ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]]
    assert sources == [
        "import torch\nfrom torch.cuda import synchronize\n"
        "if torch.accelerator.is_available():\n    torch.accelerator.synchronize()",
        "callback = synchronize",
        "if torch.accelerator.is_available():\n    torch.accelerator.synchronize()",
    ]
    assert len(report.applied) == 2


def test_output_that_would_not_compile_is_never_written(tmp_path, monkeypatch):
    import libcst as cst

    from portcheck.fixer import recipes
    from portcheck.fixer.recipes import Fix, Plan

    def broken(site):
        node = site.pick(cst.Call)
        # Parses with libcst, but compile() rejects it: assigning to __debug__.
        return Fix((Plan(node, lambda updated: cst.parse_expression("(__debug__ := 1)"), "broken"),))

    monkeypatch.setitem(recipes.RECIPES, "dot-cuda", broken)
    path = tmp_path / "a.py"
    path.write_text("x = y.cuda()\n")
    report = run(tmp_path)
    assert path.read_text() == "x = y.cuda()\n"
    assert "would not parse" in report.files[0].error


def test_a_failed_write_leaves_the_original_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "a.py"
    path.write_text("x = y.cuda()\n")

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    report = run(tmp_path)
    assert path.read_text() == "x = y.cuda()\n"
    assert report.files[0].error == "cannot write: No space left on device"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]


def test_a_file_libcst_cannot_reproduce_exactly_is_refused(tmp_path):
    path = tmp_path / "old_mac.py"
    path.write_bytes(b"import torch\rdef f(y):\r    return y.cuda()\r")
    report = run(tmp_path)
    assert path.read_bytes() == b"import torch\rdef f(y):\r    return y.cuda()\r"
    assert "cannot be reproduced exactly" in report.files[0].error


def test_a_fault_in_rewriting_one_file_is_reported_and_the_run_goes_on(tmp_path, monkeypatch):
    from portcheck.fixer import paths

    real = paths.fix_text

    def faulty(text, *args, **kwargs):
        if "odd" in text:
            raise ValueError("Got an invalid value\nfor default_indent: '\\x0c    '")
        return real(text, *args, **kwargs)

    monkeypatch.setattr(paths, "fix_text", faulty)
    (tmp_path / "a_odd.py").write_text("odd = y.cuda()\n")
    (tmp_path / "b_plain.py").write_text("x = y.cuda()\n")
    report = run(tmp_path)
    assert (tmp_path / "a_odd.py").read_bytes() == b"odd = y.cuda()\n"
    assert (tmp_path / "b_plain.py").read_text() != "x = y.cuda()\n"
    odd, plain = report.files
    assert odd.error == "could not be fixed: ValueError: Got an invalid value for default_indent: '\\x0c    '"
    assert [(left.finding.code, left.reason) for left in odd.left] == [("TST002", odd.error)]
    assert plain.written and not plain.error


def test_a_form_feed_indent_leaves_the_file_byte_for_byte_and_says_why(tmp_path):
    # Valid Python, but libcst cannot write new code for a module whose indent starts with a form feed.
    odd = b'model.to("cuda")\nwith x:\n\x0c    pass\n'
    compile(odd, "odd.py", "exec")
    (tmp_path / "odd.py").write_bytes(odd)
    (tmp_path / "plain.py").write_text("x = y.cuda()\n")
    report = run(tmp_path)
    assert (tmp_path / "odd.py").read_bytes() == odd
    assert (tmp_path / "plain.py").read_text() != "x = y.cuda()\n"
    odd_fix = next(f for f in report.files if f.path == "odd.py")
    assert odd_fix.error.startswith("could not be fixed: ValueError: ")
    assert "default_indent" in odd_fix.error and "\x0c" not in odd_fix.error
    assert [left.finding.code for left in odd_fix.left] == ["TST001"]


def test_keyboard_interrupt_still_stops_the_run(tmp_path, monkeypatch):
    from portcheck.fixer import paths

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(paths, "fix_text", interrupted)
    (tmp_path / "a.py").write_text("x = y.cuda()\n")
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path)
    assert (tmp_path / "a.py").read_text() == "x = y.cuda()\n"


def test_a_long_multiline_message_is_shown_as_one_printable_line():
    from portcheck.fixer.paths import describe

    text = describe(RuntimeError("first\nsecond\x07" + "x" * 300), limit=60)
    assert text.startswith("RuntimeError: first second\\x07xx")
    assert len(text) == 60 and text.endswith("...")
    assert describe(KeyError()) == "KeyError: no details"
