"""Command-line inputs that used to pass a CI gate silently: a missing path, an unknown rule pattern,
a target spelled in another case, and the help texts that describe them."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from portcheck.cli import main

TRAIN = "import torch\nmodel = Net().cuda()\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "train.py").write_text(TRAIN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def scan(*args: str):
    return run("scan", "-q", "--no-cache", "-j", "1", *args)


@pytest.mark.parametrize("command", ["scan", "fix"])
def test_a_missing_path_is_an_error_naming_it(project, command):
    result = run(command, "train.py", "nonexist/")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == ["portcheck: error: nonexist: no such file or directory"]
    assert not result.stdout  # no score, no "100.0 A"


def test_a_named_dangling_symlink_is_a_per_file_diagnostic_not_a_usage_error(project):
    (project / "gone.py").symlink_to(project / "nowhere.py")
    result = scan("gone.py", "train.py")
    assert "portcheck: error:" not in result.stderr and "DEV002" in result.stdout


@pytest.mark.parametrize("flag", ["--select", "--ignore"])
@pytest.mark.parametrize("command", ["scan", "fix"])
def test_an_unknown_rule_pattern_on_the_command_line_is_an_error(project, command, flag):
    result = run(command, flag, "DEV002,DEVV", "train.py")
    assert result.exit_code == 2
    line = result.stderr.strip()
    assert "\n" not in line and f"{flag}: " in line and "'DEVV'" in line
    assert re.search(r"closest known: \S+", line)


def test_the_closest_codes_are_named(project):
    line = scan("--select", "DEV0O2", "train.py").stderr  # a letter O for a zero
    assert "DEV002" in line.split("closest known:")[1]
    line = scan("--ignore", "dot-cuda-cal", "train.py").stderr
    assert "closest known: dot-cuda-call" in line


@pytest.mark.parametrize(
    "table, where",
    [
        ('select = ["FOO"]', "key 'select'"),
        ('ignore = ["DEV002", "XYZ9"]', "key 'ignore'"),
        ('[tool.portcheck.per-file-ignores]\n"*.py" = ["device"]', "key 'per-file-ignores.*.py'"),
    ],
)
def test_an_unknown_rule_pattern_in_the_config_is_an_error_naming_the_file(project, table, where):
    (project / "pyproject.toml").write_text(f"[tool.portcheck]\n{table}\n")
    result = scan("train.py")
    assert result.exit_code == 2
    assert f"{project / 'pyproject.toml'}: {where}: unknown" in result.stderr


@pytest.mark.parametrize("pattern", ["DEV", "dev002", "device", "dot-cuda-call", "ALL", "all"])
def test_known_patterns_still_select(project, pattern):
    result = scan("--select", pattern, "train.py")
    assert result.exit_code == 1 and "DEV002" in result.stdout


@pytest.mark.parametrize("spelling", ["neuron", "Neuron", "NEURON", " neuron"])
def test_targets_are_case_insensitive(project, spelling):
    result = scan("--target", spelling, "--output-format", "json", "train.py")
    assert result.exit_code == 1 and '"target": "neuron"' in result.stdout


def test_target_all_any_case_and_in_the_config(project):
    assert '"neuron"' in scan("-t", "ALL", "--output-format", "json", "train.py").stdout
    (project / "pyproject.toml").write_text('[tool.portcheck]\ntarget = "XLA"\n')
    assert '"target": "xla"' in scan("--output-format", "json", "train.py").stdout


def test_a_bad_config_target_names_every_accepted_value(project):
    (project / "pyproject.toml").write_text('[tool.portcheck]\ntarget = "tpu"\n')
    result = scan("train.py")
    assert result.exit_code == 2 and "one of neuron, xla, generic, all" in result.stderr


def test_each_command_explains_a_target_it_refuses(project):
    result = run("fix", "--diff", "-t", "all", "train.py")
    assert result.exit_code == 2 and "a fix rewrites for one of them" in result.output
    result = scan("-t", "CPU", "train.py")
    assert result.exit_code == 2 and "'cpu' is a fix target" in result.output
    assert run("fix", "--diff", "-t", "CPU", "train.py").exit_code == 1


def test_fix_takes_its_default_target_from_the_config(project):
    (project / "pyproject.toml").write_text('[tool.portcheck]\ntarget = "xla"\n')
    xla = run("fix", "--diff", "train.py").stdout
    assert xla == run("fix", "--diff", "-t", "xla", "train.py").stdout
    assert xla != run("fix", "--diff", "-t", "generic", "train.py").stdout
    (project / "pyproject.toml").write_text('[tool.portcheck]\ntarget = "all"\n')
    assert run("fix", "--diff", "train.py").stdout == run("fix", "--diff", "-t", "generic", "train.py").stdout


@pytest.mark.parametrize("key", ["DEV002", "dev002", "dot-cuda-call", "Dot-Cuda-Call"])
def test_explain_takes_a_code_or_a_name(key):
    result = run("explain", key)
    assert result.exit_code == 0 and result.stdout.startswith("DEV002 dot-cuda-call")


def test_explain_an_unknown_rule_names_the_closest():
    result = run("explain", "dot-cuda")
    assert result.exit_code == 2 and "closest known: dot-cuda-call" in result.stderr


def test_statistics_have_a_header_and_rule_names(project):
    out = scan("--statistics", "train.py").stdout
    head = out.index("Findings per rule")
    assert re.search(r"^\s+count\s+code\s+fixable\s+name$", out[head:], re.MULTILINE)
    assert re.search(r"^\s+1\s+DEV002\s+1\s+dot-cuda-call$", out, re.MULTILINE)


def test_help_is_never_cut_and_every_option_says_what_it_does():
    top = run("--help").stdout
    commands = top[top.index("Commands:"):]
    assert "..." not in commands
    for name in ("scan", "fix", "rules", "explain", "clean"):
        command = main.get_command(None, name)
        bare = [p.name for p in command.params if isinstance(p, click.Option) and not p.help and p.name != "help"]
        assert not bare, (name, bare)
    scan_help = run("scan", "--help").stdout
    assert re.search(r"--output-format\s+\[[^\]]+\]\s*\n\s+text for people", scan_help)


def test_the_fix_engine_and_the_cli_share_one_target_list():
    from portcheck.fixer.engine import FIX_TARGETS as ENGINE
    from portcheck.model import TARGETS
    from portcheck.targets import FIX_TARGETS, SCORED

    assert set(ENGINE) == set(FIX_TARGETS)
    assert tuple(t.value for t in TARGETS) == SCORED
