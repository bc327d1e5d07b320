"""The engine end to end on snippets: positions, prose exclusions, parse errors, the JSON schema."""

import json

import pytest
from click.testing import CliRunner
from helpers import scan_snippet

from portcheck.cli import main
from portcheck.scanner import Settings, scan_bytes


def test_positions_are_one_based_character_columns():
    found = scan_snippet('import torch\nname = "é"; x = x.to("cuda")\n')
    (f,) = [f for f in found if f.code == "DEV001"]
    assert (f.line, f.column, f.end_line, f.end_column) == (2, 22, 2, 28)


@pytest.mark.parametrize(
    "src",
    [
        "# model.cuda()\n",
        '"""Call model.cuda() to move it."""\n',
        "def f():\n    '''device='cuda' is the default.'''\n",
        "logger.info('moving model to cuda')\n",
        "print(f'device: {\"cuda\"}')\n",
        "raise ValueError(\"device must be 'cuda'\")\n",
        "parser.add_argument('--x', help='e.g. cuda:0')\n",
        (
            "import torch\n"
            "device = torch.accelerator.current_accelerator(check_available=True) or torch.device('cpu')\n"
            "model.to(device)\n"
        ),
    ],
)
def test_prose_and_portable_code_are_not_flagged(src):
    assert scan_snippet(src) == []


def test_syntax_error_is_reported_and_scan_goes_on(tmp_path, monkeypatch):
    # Files that cannot hold a finding are never parsed (the pre-filter), so these mention CUDA.
    (tmp_path / "bad.py").write_text("def f(:\n    model.cuda()\n")
    (tmp_path / "py2.py").write_text('print "moving to cuda"\nmodel.cuda()\n')
    (tmp_path / "good.py").write_text("model.cuda()\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["scan", ".", "--output-format", "json", "--no-cache"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    errors = {e["path"]: e for e in data["errors"]}
    assert set(errors) == {"bad.py", "py2.py"}
    assert "syntax error" in errors["bad.py"]["message"]
    assert errors["bad.py"]["line"] == 1
    assert "Python 2" in errors["py2.py"]["message"]
    assert [f["path"] for f in data["findings"]] == ["good.py"]


def test_a_file_libcst_refuses_is_scanned_and_reported_not_fixable(tmp_path, monkeypatch):
    # `assert(a if b else c)` parses in Python and not in libcst's tree (locuslab/wanda's main.py): the scan
    # reports the file's findings, none of them fixable, instead of stopping with an internal error
    (tmp_path / "main.py").write_bytes(b"import torch\r\nmodel.cuda()\r\nassert(x if x else True)\r\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["scan", ".", "--output-format", "json", "--no-cache"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert [(f["path"], f["code"]) for f in data["findings"]] == [("main.py", "DEV002")]
    assert not data["findings"][0]["fixable"]


def test_binary_and_undecodable_files_are_errors():
    binary = scan_bytes(b"\x00\x01import torch", "a.py", "python", Settings())
    assert binary.error is not None and "binary" in binary.error.message
    latin = scan_bytes(b"x = '\xe9'\nmodel.cuda()\n", "b.py", "python", Settings())
    assert latin.error is not None and "decode" in latin.error.message


def test_coding_cookie_is_honoured():
    data = "# -*- coding: latin-1 -*-\nname = 'é'; model.cuda()\n".encode("latin-1")
    result = scan_bytes(data, "c.py", "python", Settings())
    assert result.error is None
    assert [(f.code, f.line, f.column) for f in result.findings] == [("DEV002", 2, 13)]


JSON_FINDING_KEYS = {
    "path",
    "line",
    "column",
    "end_line",
    "end_column",
    "code",
    "name",
    "category",
    "severity",
    "message",
    "fixable",
}


def test_json_schema(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("import torch\nmodel.cuda()\nx = torch.zeros(2, device='cuda')\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["scan", "pkg", "--output-format", "json", "--no-cache"])
    data = json.loads(result.output)
    assert {"version", "target", "files_scanned", "findings", "errors"} <= set(data)
    assert data["target"] == "generic"
    assert data["files_scanned"] == 1
    for f in data["findings"]:
        assert JSON_FINDING_KEYS <= set(f)
        assert f["path"] == "pkg/a.py"
        assert isinstance(f["line"], int) and f["line"] >= 1
        assert isinstance(f["column"], int) and f["column"] >= 1
        assert f["severity"] in {"blocker", "major", "minor", "info"}
        assert isinstance(f["fixable"], bool)


def test_exit_codes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "clean.py").write_text("import torch\nx = torch.ones(2)\n")
    assert CliRunner().invoke(main, ["scan", "clean.py", "--no-cache"]).exit_code == 0
    (tmp_path / "dirty.py").write_text("model.cuda()\n")
    assert CliRunner().invoke(main, ["scan", "dirty.py", "--no-cache"]).exit_code == 1
    assert CliRunner().invoke(main, ["scan", "dirty.py", "--no-cache", "--exit-zero"]).exit_code == 0
    assert CliRunner().invoke(main, ["scan", "--target", "gpu"]).exit_code == 2


def test_text_output_has_no_ansi_when_not_a_terminal(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dirty.py").write_text("model.cuda()\n")
    result = CliRunner().invoke(main, ["scan", "dirty.py", "--no-cache"])
    assert "\x1b[" not in result.output
    assert "dirty.py:1:1: DEV002" in result.output


def test_rules_and_explain_commands():
    runner = CliRunner()
    listed = runner.invoke(main, ["rules", "--target", "neuron"])
    assert listed.exit_code == 0 and "DEV001" in listed.output
    page = runner.invoke(main, ["explain", "dev002"])
    assert page.exit_code == 0
    for section in ("What it finds", "Why it matters", "Example", "Use instead", "Fix safety"):
        assert section in page.output
    assert runner.invoke(main, ["explain", "NOPE999"]).exit_code == 2
