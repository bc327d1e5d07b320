"""Config discovery and validation: a broken config names the file and the key and exits 2."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from portcheck.cli import main
from portcheck.config import ConfigError, find_config, load_config


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_pyproject_table_is_found_upward(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.portcheck]\ntarget = "neuron"\nignore = ["DEV002"]\n')
    sub = tmp_path / "pkg" / "deep"
    sub.mkdir(parents=True)
    config = load_config(sub)
    assert config.target == "neuron"
    assert config.ignore == ("DEV002",)
    assert config.root == tmp_path


def test_pyproject_without_table_is_skipped(tmp_path):
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n')
    assert find_config(tmp_path) is None
    assert load_config(tmp_path).target == "generic"


def test_portcheck_toml_wins_over_pyproject_in_same_folder(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.portcheck]\ntarget = "neuron"\n')
    write(tmp_path / "portcheck.toml", 'target = "xla"\n')
    assert load_config(tmp_path).target == "xla"


@pytest.mark.parametrize(
    "body,key",
    [
        ('target = "tpu"\n', "target"),
        ("select = 3\n", "select"),
        ("colour = true\n", "colour"),
        ('per-file-ignores = { "tests/*" = 5 }\n', "per-file-ignores.tests/*"),
        ('fail-under = "high"\n', "fail-under"),
        ("literal-device = 1\n", "literal-device"),
    ],
)
def test_bad_key_is_named(tmp_path, body, key):
    cfg = write(tmp_path / "portcheck.toml", body)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(cfg) in str(info.value)
    assert f"'{key}'" in str(info.value)


def test_invalid_toml_is_an_error_naming_the_file(tmp_path):
    cfg = write(tmp_path / "pyproject.toml", "[tool.portcheck\ntarget = \n")
    # The table header is broken, so it is not recognised by the quick text check: use --config.
    runner = CliRunner()
    result = runner.invoke(main, ["scan", str(tmp_path), "--config", str(cfg)])
    assert result.exit_code == 2
    assert "invalid TOML" in result.output
    assert str(cfg) in result.output


def test_cli_exits_2_on_wrong_type(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.portcheck]\nignore = "DEV001"\nexclude = [1]\n')
    write(tmp_path / "a.py", "x = 1\n")
    result = CliRunner().invoke(main, ["scan", str(tmp_path)])
    assert result.exit_code == 2
    assert "'exclude'" in result.output
    assert "pyproject.toml" in result.output


def test_cli_flags_override_config(tmp_path, monkeypatch):
    write(tmp_path / "pyproject.toml", '[tool.portcheck]\nignore = ["DEV002"]\n')
    write(tmp_path / "a.py", "import torch\nmodel.cuda()\n")
    monkeypatch.chdir(tmp_path)
    quiet = CliRunner().invoke(main, ["scan", "."])
    assert quiet.exit_code == 0, quiet.output
    loud = CliRunner().invoke(main, ["scan", ".", "--ignore", "DEV001"])
    assert loud.exit_code == 1
    assert "DEV002" in loud.output


def test_per_file_ignores(tmp_path, monkeypatch):
    write(tmp_path / "pyproject.toml", '[tool.portcheck]\nper-file-ignores = { "scripts/*" = ["DEV"] }\n')
    write(tmp_path / "scripts" / "a.py", "model.cuda()\n")
    write(tmp_path / "b.py", "model.cuda()\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["scan", ".", "--output-format", "json", "--no-cache"])
    assert "b.py" in result.output
    assert "scripts/a.py" not in result.output


@pytest.mark.parametrize("key", ["exclude", "extend-exclude"])
def test_cli_extend_exclude_adds_to_configured_list(tmp_path, monkeypatch, key):
    write(tmp_path / "pyproject.toml", f'[tool.portcheck]\n{key} = ["vendor"]\n')
    write(tmp_path / "vendor" / "a.py", "model.cuda()\n")
    write(tmp_path / "gen" / "b.py", "model.cuda()\n")
    write(tmp_path / "c.py", "model.cuda()\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["scan", ".", "--extend-exclude", "gen", "--output-format", "json", "--no-cache"])
    assert "c.py" in result.output
    assert "vendor/a.py" not in result.output
    assert "gen/b.py" not in result.output
