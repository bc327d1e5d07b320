"""The README's claims that no other test covers: the two commands, the example output, the config
example, and the JSON schema example."""

import json
import re
from pathlib import Path

from click.testing import CliRunner

from portcheck.cli import main
from portcheck.config import parse_table

ROOT = Path(__file__).resolve().parent.parent
README = "\n".join(
    p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
)


def fenced(after_heading: str, lang: str) -> str:
    """The first ```lang block after a heading."""
    start = README.index(after_heading)
    m = re.compile(rf"```{lang}\n(.*?)```", re.DOTALL).search(README, start)
    assert m, f"no {lang} block after {after_heading!r}"
    return m.group(1)


def test_two_commands_and_ci():
    quick = fenced("## Quick start", "bash")
    assert "pip install ." in quick and "portcheck scan examples/" in quick
    assert "bash tests/run.sh" in README
    ci = (ROOT / ".ci" / "run").read_text()
    assert "exec bash tests/run.sh" in ci


def test_example_output_matches_a_real_scan(monkeypatch):
    block = fenced("What `portcheck scan examples/` prints", "console")
    shown = [line for line in block.splitlines() if re.match(r"^examples/\S+:\d", line)]
    assert len(shown) >= 20
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["scan", "examples/", "--no-cache"])
    assert result.exit_code == 1
    actual = set(result.output.splitlines())
    missing = [line for line in shown if line not in actual]
    assert not missing, f"README example lines no longer printed: {missing}"
    summary = [line for line in block.splitlines() if line.startswith("Found ")]
    assert summary and summary[0] in actual


def test_config_example_is_valid(tmp_path):
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    text = fenced("## Configuration", "toml")
    table = tomllib.loads(text)["tool"]["portcheck"]
    config = parse_table(tmp_path / "pyproject.toml", table)
    assert config.target == "neuron" and config.min_torch == "2.6"


def test_config_error_example_format(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.portcheck]\nexclude = 3\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["scan", "."])
    assert result.exit_code == 2
    shown = re.search(r"portcheck: error: /repo/pyproject.toml: (key 'exclude': .*)", README).group(1)
    assert shown in result.output


def test_json_schema_example_keys(monkeypatch):
    example = json.loads(fenced("## JSON schema", "json"))
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["scan", "examples/", "--no-cache", "--output-format", "json"])
    data = json.loads(result.output)
    assert set(example) <= set(data)
    assert set(example["findings"][0]) <= set(data["findings"][0]) | {"cell", "guarded", "note"}
