"""Bad input, one case per test: the scan reports a one-line reason for the bad file and goes on.

Every test scans a project holding the bad file and `good.py` (one known finding) through the CLI
with JSON output, and checks that `good.py` still gets its finding.
"""

from __future__ import annotations

import builtins
import io
import json
import os
from pathlib import Path
from typing import Dict, List

import pytest
from click.testing import CliRunner

import portcheck.runner
from portcheck.cli import main

GOOD = "import torch\nmodel = model.cuda()\n"


def run_scan(project: Path, monkeypatch, *args: str) -> dict:
    """Scan `project` from inside it with relative paths; the parsed JSON report (exit code under `_exit`)."""
    monkeypatch.chdir(project)
    flags = ["--output-format", "json", "-j", "1", "-q"]
    if "--cache" in args:
        args = tuple(a for a in args if a != "--cache")
    else:
        flags.append("--no-cache")
    result = CliRunner().invoke(main, ["scan", *(args or (".",)), *flags])
    assert result.exit_code in (0, 1), (result.exit_code, result.output, result.exception)
    data = json.loads(result.stdout)
    data["_exit"] = result.exit_code
    return data


def project_with(tmp_path: Path, files: Dict[str, bytes]) -> Path:
    (tmp_path / "good.py").write_text(GOOD)
    for name, data in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return tmp_path


def assert_good_file_scanned(report: dict) -> None:
    hits = [(f["path"], f["line"], f["code"]) for f in report["findings"] if f["path"] == "good.py"]
    assert hits == [("good.py", 2, "DEV002")], report["findings"]
    assert report["_exit"] == 1


def error_for(report: dict, path: str) -> dict:
    errors = [e for e in report["errors"] if e["path"] == path]
    assert len(errors) == 1, report["errors"]
    message = errors[0]["message"]
    assert message and "\n" not in message and len(message) < 200, message
    assert "Traceback" not in message
    return errors[0]


def findings_for(report: dict, path: str) -> List[dict]:
    return [f for f in report["findings"] if f["path"] == path]


def no_errors(report: dict) -> None:
    assert report["errors"] == [], report["errors"]


# --- Python files that cannot be parsed or decoded ------------------------------------------


def test_syntax_error(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"broken.py": b"def f(:\n    return x.cuda()\n"})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    err = error_for(report, "broken.py")
    assert err["kind"] == "parse" and err["message"].startswith("syntax error")
    assert (err["line"], err["column"]) == (1, 7)


def test_python2_code(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"old.py": b'print "moving to gpu"\nmodel = model.cuda()\n'})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    assert "Python 2" in error_for(report, "old.py")["message"]


def test_null_bytes(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"blob.py": b"model = model.cuda()\x00\x01\x02\n"})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    assert "null bytes" in error_for(report, "blob.py")["message"]


@pytest.mark.parametrize("line", [1, 3], ids=["first-lines", "later-line"])
def test_invalid_utf8(tmp_path, monkeypatch, line):
    # Python looks for a coding cookie on the first two lines only, so both places take a different path.
    lines = [b"import torch", b"model = model.cuda()", b"x = 1", b"y = 2"]
    lines.insert(line - 1, b's = "\xff\xfe"')
    project = project_with(tmp_path, {"bad.py": b"\n".join(lines) + b"\n"})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    err = error_for(report, "bad.py")
    assert err["kind"] == "decode"
    assert "UTF-8" in err["message"] or "utf-8" in err["message"]


def test_latin1_coding_cookie(tmp_path, monkeypatch):
    text = '# -*- coding: latin-1 -*-\ns = "caf\u00e9 cr\u00e8me"; m.to("cuda")\n'
    project = project_with(tmp_path, {"legacy.py": text.encode("latin-1")})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    no_errors(report)
    [hit] = findings_for(report, "legacy.py")
    line = text.splitlines()[1]
    start = line.index('"cuda"')
    assert (hit["code"], hit["line"], hit["column"], hit["end_column"]) == (
        "DEV001",
        2,
        start + 1,
        start + len('"cuda"') + 1,
    )


def test_utf8_bom(tmp_path, monkeypatch):
    text = 'x = y.to("cuda")  # \u00e9\n'
    project = project_with(tmp_path, {"bom.py": b"\xef\xbb\xbf" + text.encode("utf-8")})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    no_errors(report)
    [hit] = findings_for(report, "bom.py")
    # The BOM is not a character of the line: columns count from the first real character.
    assert (hit["line"], hit["column"]) == (1, text.index('"cuda"') + 1)


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_foreign_line_endings(tmp_path, monkeypatch, newline):
    lines = ["import torch", "", 'x = y.to("cuda")', "z = w.cuda()"]
    project = project_with(tmp_path, {"win.py": (newline.join(lines) + newline).encode()})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    no_errors(report)
    hits = [(f["code"], f["line"], f["column"], f["end_line"]) for f in findings_for(report, "win.py")]
    assert hits == [("DEV001", 3, lines[2].index('"cuda"') + 1, 3), ("DEV002", 4, lines[3].index("w.cuda") + 1, 4)]


@pytest.mark.parametrize(
    "separator", ["\u2028", "\x0c", "\x1c", "\x85"], ids=["line-separator", "form-feed", "file-separator", "next-line"]
)
def test_characters_that_are_not_python_line_ends(tmp_path, monkeypatch, separator):
    # str.splitlines() ends a line at these; Python does not, so line numbers must not shift.
    text = f's = "a{separator}b"  # {separator}\nm.to("cuda")  # noqa\nx = "\u00e9"; n.to("cuda")\n'
    project = project_with(tmp_path, {"odd.py": text.encode()})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    no_errors(report)
    third = 'x = "\u00e9"; n.to("cuda")'
    hits = [(f["code"], f["line"], f["column"]) for f in findings_for(report, "odd.py")]
    # Line 2 is suppressed by its own comment; line 3 keeps its place and its character column.
    assert hits == [("DEV001", 3, third.index('"cuda"') + 1)]


def test_mixed_tabs_and_spaces_that_python_accepts(tmp_path, monkeypatch):
    text = "if a:\n\tx = y.to('cuda')\nif b:\n    z = w.cuda()\n"
    project = project_with(tmp_path, {"tabs.py": text.encode()})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    no_errors(report)
    hits = [(f["code"], f["line"], f["column"]) for f in findings_for(report, "tabs.py")]
    lines = text.splitlines()
    # A tab is one character.
    assert hits == [("DEV001", 2, lines[1].index("'cuda'") + 1), ("DEV002", 4, lines[3].index("w.cuda") + 1)]


def test_inconsistent_tabs_and_spaces(tmp_path, monkeypatch):
    text = "if a:\n        x = 1\n\ty = w.cuda()\n"
    project = project_with(tmp_path, {"tabs.py": text.encode()})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    err = error_for(report, "tabs.py")
    assert "tab" in err["message"] and err["line"] == 3


def test_five_megabyte_file(tmp_path, monkeypatch):
    padding = "# " + "generated table row " * 12 + "\n"
    body = "".join(f"ROW_{i} = ({i}, {i * 7 % 13})  " + padding for i in range(20000))
    text = "import torch\n" + body + "model.to('cuda')\n"
    assert len(text) > 5 * 1024 * 1024
    project = project_with(tmp_path, {"big.py": text.encode()})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    no_errors(report)
    assert [(f["code"], f["line"]) for f in findings_for(report, "big.py")] == [("DEV001", text.count("\n"))]


DEEP = {
    "parentheses": "x = " + "(" * 100_000 + "1" + ")" * 100_000,
    "brackets": "x = " + "[" * 100_000 + "]" * 100_000,
    "plus-chain": "x = " + " + ".join(["a"] * 100_000),
    "unary-chain": "x = " + "-" * 100_000 + "a",
    "attribute-chain": "x = a" + ".b" * 100_000,
    "call-chain": "x = a" + "()" * 100_000,
    "not-chain": "x = " + "not " * 100_000 + "a",
}


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_deeply_nested_expression(tmp_path, monkeypatch, shape):
    # The file mentions CUDA, so it is parsed rather than skipped by the textual pre-filter.
    project = project_with(tmp_path, {"deep.py": (DEEP[shape] + "\nmodel = model.cuda()\n").encode()})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    err = error_for(report, "deep.py")
    assert err["kind"] == "parse"
    assert "nested" in err["message"]


def test_nesting_python_accepts_is_analyzed(tmp_path, monkeypatch):
    # Just under the parser's limits, the tree is deep; the one-pass walk must not recurse on it.
    deep = "x = " + "(" * 190 + "y.cuda()" + ")" * 190 + "\nz = " + " + ".join(["a"] * 1500) + " + w.cuda()\n"
    project = project_with(tmp_path, {"deep.py": deep.encode()})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    no_errors(report)
    assert [(f["code"], f["line"]) for f in findings_for(report, "deep.py")] == [("DEV002", 1), ("DEV002", 2)]


def test_empty_file(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"empty.py": b"", "__init__.py": b""})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    no_errors(report)
    assert report["files_scanned"] == 3


# --- Things on disk that are not plain readable files ---------------------------------------


def test_directory_named_like_a_python_file(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"x.py/inner.py": b"y = y.cuda()\n"})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    no_errors(report)
    assert [(f["path"], f["code"]) for f in findings_for(report, "x.py/inner.py")] == [("x.py/inner.py", "DEV002")]
    # Named explicitly, it is still a folder to walk, not a file to read.
    report = run_scan(project, monkeypatch, "x.py", "good.py")
    assert_good_file_scanned(report)
    no_errors(report)


def test_broken_symlink(tmp_path, monkeypatch):
    project = project_with(tmp_path, {})
    (project / "gone.py").symlink_to(project / "missing.py")
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    assert "broken symbolic link" in error_for(report, "gone.py")["message"]


def test_symlink_loop(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"pkg/mod.py": b"a = a.cuda()\n"})
    (project / "a.py").symlink_to("b.py")
    (project / "b.py").symlink_to("a.py")
    (project / "pkg" / "again").symlink_to("..")  # a folder link back up the tree
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    for name in ("a.py", "b.py"):
        assert "loop" in error_for(report, name)["message"]
    # The folder loop is walked once: every real file is reported exactly once.
    assert sorted(f["path"] for f in report["findings"]) == ["good.py", "pkg/mod.py"]
    # Named explicitly, the looping link is an error too, not a crash.
    report = run_scan(project, monkeypatch, "a.py", "good.py")
    assert_good_file_scanned(report)
    assert "loop" in error_for(report, "a.py")["message"]


def test_unreadable_file(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"secret.py": b"x = x.cuda()\n"})
    secret = project / "secret.py"
    secret.chmod(0)
    try:
        with open(secret, "rb"):
            readable = True
    except PermissionError:
        readable = False
    if readable:
        # Permission bits do not stop root; make opening the file fail the way it fails for other users.
        real_open = io.open

        def guarded_open(file, *args, **kwargs):
            if not isinstance(file, int) and os.path.basename(os.fspath(file)) == "secret.py":
                raise PermissionError(13, "Permission denied", os.fspath(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(io, "open", guarded_open)
        monkeypatch.setattr(builtins, "open", guarded_open)
    try:
        for args in ((".",), (".", "--cache")):  # with and without the result cache, which read files differently
            report = run_scan(project, monkeypatch, *args)
            assert_good_file_scanned(report)
            err = error_for(report, "secret.py")
            assert err["kind"] == "read" and "permission denied" in err["message"]
    finally:
        secret.chmod(0o644)


def test_file_deleted_during_scan(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"vanishing.py": b"x = x.cuda()\n"})
    real_discover = portcheck.runner.discover

    def discover_then_delete(*args, **kwargs):
        found = real_discover(*args, **kwargs)
        (project / "vanishing.py").unlink()
        return found

    monkeypatch.setattr(portcheck.runner, "discover", discover_then_delete)
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    assert "disappeared" in error_for(report, "vanishing.py")["message"]


def test_path_that_does_not_exist(tmp_path, monkeypatch):
    # A named path that does not exist is a usage error (exit 2), not an empty, passing scan.
    project = project_with(tmp_path, {})
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["scan", "good.py", "nowhere.py", "--no-cache", "-q"])
    assert result.exit_code == 2
    assert result.stderr == "portcheck: error: nowhere.py: no such file or directory\n" and not result.stdout


# --- Other file kinds -----------------------------------------------------------------------


def test_notebook_that_is_not_json(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"broken.ipynb": b'{"cells": [{"cell_type": "code", "source": "x.cuda()"\n'})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    err = error_for(report, "broken.ipynb")
    assert "JSON" in err["message"]


def test_notebook_with_one_broken_cell(tmp_path, monkeypatch):
    cells = [
        {"cell_type": "code", "source": ["import torch\n"], "metadata": {}, "outputs": [], "execution_count": None},
        {"cell_type": "code", "source": ["def f(:\n"], "metadata": {}, "outputs": [], "execution_count": None},
        {
            "cell_type": "code",
            "source": ["%matplotlib inline\n", "m = m.cuda()\n"],
            "metadata": {},
            "outputs": [],
            "execution_count": None,
        },
    ]
    doc = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    project = project_with(tmp_path, {"nb.ipynb": json.dumps(doc).encode()})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    no_errors(report)
    assert [(f["code"], f.get("cell"), f["line"]) for f in findings_for(report, "nb.ipynb")] == [("DEV002", 3, 2)]


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_notebook_cells_with_foreign_line_endings(tmp_path, monkeypatch, newline):
    cells = [
        {
            "cell_type": "code",
            "source": f"import torch{newline}x = x.cuda(){newline}",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
        },
        {
            "cell_type": "code",
            "source": f"y = y.cuda(){newline}",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
        },
    ]
    doc = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    project = project_with(tmp_path, {"nb.ipynb": json.dumps(doc).encode()})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    no_errors(report)
    # Every cell counts its own lines, however the one before it ended them.
    assert [(f.get("cell"), f["line"]) for f in findings_for(report, "nb.ipynb")] == [(1, 2), (2, 1)]


ODD_REQUIREMENTS = """\
# comment line
-e .
--index-url https://download.pytorch.org/whl/cu121
--extra-index-url=https://example.invalid/simple
-r other-requirements.txt
-c constraints.txt
torch==2.3.0+cu121 ; python_version >= "3.9" and platform_system == "Linux"
numpy>=1.24,<3 --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000
mypkg @ git+https://github.com/example/mypkg.git@v1.0#egg=mypkg
local-pkg @ file:///tmp/local-pkg
./vendored/wheel-1.0-py3-none-any.whl
https://example.invalid/pkg-1.0.tar.gz
scipy \\
    >=1.10
  requests[socks,security] ~= 2.31   # trailing comment
\tpyyaml
cupy-cuda12x \\
    >=12.0 ; sys_platform == "linux"
"""


def test_requirements_with_odd_syntax(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"requirements.txt": ODD_REQUIREMENTS.encode(), "requirements-empty.txt": b"\n\n"})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    no_errors(report)
    assert report["files_scanned"] == 3
    lines = ODD_REQUIREMENTS.splitlines()
    flagged = {hit["line"] for hit in findings_for(report, "requirements.txt")}
    # Only lines that name a CUDA build or package are findings; options, paths and URLs around
    # them do not hide them.
    assert all("cu" in lines[n - 1].lower() for n in flagged), [lines[n - 1] for n in flagged]
    assert {lines.index(line) + 1 for line in lines if line.startswith(("torch==", "cupy"))} <= flagged


def test_requirements_that_are_not_utf8(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"requirements.txt": b"torch\n# caf\xe9\n"})
    report = run_scan(project, monkeypatch)
    assert_good_file_scanned(report)
    assert error_for(report, "requirements.txt")["kind"] == "decode"


# --- Configuration --------------------------------------------------------------------------


def run_config(project: Path, monkeypatch):
    monkeypatch.chdir(project)
    return CliRunner().invoke(main, ["scan", ".", "--output-format", "json", "--no-cache", "-j", "1", "-q"])


def one_line_error(result) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in lines[0]
    return lines[0]


def test_config_invalid_toml(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"portcheck.toml": b'target = "neuron"\nselect = ["DEV"\n'})
    line = one_line_error(run_config(project, monkeypatch))
    assert "portcheck.toml" in line and "invalid TOML" in line


@pytest.mark.parametrize(
    "body,key",
    [
        ("target = 3\n", "target"),
        ("select = 7\n", "select"),
        ("fail-under = 'high'\n", "fail-under"),
        ("respect-gitignore = 'yes'\n", "respect-gitignore"),
        ("[per-file-ignores]\n'tests/*' = 5\n", "per-file-ignores.tests/*"),
        ("no-such-key = 1\n", "no-such-key"),
    ],
)
def test_config_wrong_type(tmp_path, monkeypatch, body, key):
    project = project_with(tmp_path, {"portcheck.toml": body.encode()})
    line = one_line_error(run_config(project, monkeypatch))
    assert "portcheck.toml" in line and f"'{key}'" in line


def test_pyproject_wrong_type(tmp_path, monkeypatch):
    project = project_with(
        tmp_path, {"pyproject.toml": b'[project]\nname = "x"\n[tool.portcheck]\nexclude = {a = 1}\n'}
    )
    line = one_line_error(run_config(project, monkeypatch))
    assert "pyproject.toml" in line and "'exclude'" in line


def test_config_not_utf8(tmp_path, monkeypatch):
    project = project_with(tmp_path, {"portcheck.toml": b'target = "caf\xe9"\n'})
    line = one_line_error(run_config(project, monkeypatch))
    assert "portcheck.toml" in line
