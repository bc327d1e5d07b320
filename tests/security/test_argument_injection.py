"""File names are never taken for options, and `python -m portcheck` never imports the scanned code.

Issue items 4 (the pre-commit hooks pass staged files that look like options) and 5 (`python -m
portcheck` run inside a repository imports its modules).
"""

from __future__ import annotations

import shlex
import sys
from typing import List

import pytest

from tests.security.conftest import FIXABLE, ROOT, run_script


def _hooks():
    yaml = pytest.importorskip("yaml")
    return {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))}


def hook_command(hook_id: str, filenames: List[str]) -> List[str]:
    """The command pre-commit runs for a hook: its entry, its args, then the staged file names."""
    hook = _hooks()[hook_id]
    try:
        from pre_commit.lang_base import hook_cmd  # pre-commit's own construction
    except ImportError:
        def hook_cmd(entry, args):
            return (*shlex.split(entry), *args)
    return [*hook_cmd(hook["entry"], hook.get("args", [])), *filenames]


def _console(command: List[str]) -> List[str]:
    assert command[0] == "portcheck"
    return command[1:]


def test_a_staged_file_named_like_output_file_does_not_overwrite_another(tmp_path):
    (tmp_path / "victim.py").write_text("VALUE = 1\n")
    (tmp_path / "--output-file=victim.py").write_text(FIXABLE)
    args = _console(hook_command("portcheck", ["--output-file=victim.py", "victim.py"]))
    result = run_script(args, cwd=tmp_path)
    assert (tmp_path / "victim.py").read_text() == "VALUE = 1\n"
    assert result.returncode == 1 and b"DEV002" in result.stdout, result.stdout + result.stderr


def test_a_staged_file_named_like_select_does_not_turn_the_rules_off(tmp_path):
    (tmp_path / "--select=X.py").write_text(FIXABLE)
    result = run_script(_console(hook_command("portcheck", ["--select=X.py"])), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert b"--select=X.py:5:" in result.stdout and b"DEV002" in result.stdout


def test_the_fix_hook_fixes_a_file_named_like_an_option(tmp_path):
    path = tmp_path / "--select=X.py"
    path.write_text(FIXABLE)
    run_script(_console(hook_command("portcheck-fix", ["--select=X.py"])), cwd=tmp_path)
    assert path.read_text() != FIXABLE


@pytest.mark.parametrize("hook_id", ["portcheck", "portcheck-fix"])
def test_hook_entries_end_option_parsing(hook_id):
    assert shlex.split(_hooks()[hook_id]["entry"])[-1] == "--"


def test_the_cli_takes_every_argument_after_a_double_dash_as_a_path(tmp_path, cli):
    (tmp_path / "--output-file=x.py").write_text(FIXABLE)
    result = cli(tmp_path, "scan", "--no-cache", "-q", "--", "--output-file=x.py")
    assert result.exit_code == 1
    assert "--output-file=x.py:5:" in result.output and not (tmp_path / "x.py").exists()


# --- python -m portcheck inside a scanned repository ----------------------------------------

SHADOWS = ("click", "pathlib", "torch", "rich", "libcst", "enum", "typing", "dataclasses", "json", "tomllib", "tomli")


def test_python_m_portcheck_does_not_import_the_repository_modules(tmp_path):
    project, markers = tmp_path / "proj", tmp_path / "markers"
    project.mkdir()
    markers.mkdir()
    for name in SHADOWS:
        (project / f"{name}.py").write_text(f"open({str(markers / name)!r}, 'w').close()\n")
    (project / "train.py").write_text(FIXABLE)
    # The harness works: run as a script from that folder, a shadowing module does get imported.
    probe = run_script(["-c", "import click"], cwd=project, command=[sys.executable])
    assert probe.returncode == 0 and (markers / "click").exists()
    (markers / "click").unlink()

    for args in (["scan", ".", "--no-cache", "-q"], ["fix", ".", "--diff"]):
        result = run_script(["-m", "portcheck", *args], cwd=project, command=[sys.executable])
        assert result.returncode == 1, result.stderr
        assert sorted(p.name for p in markers.iterdir()) == [], args
