"""The README and docs/ as a newcomer reads them: every `portcheck` command they show runs, the output
they show is what a real run prints, and their config and JSON examples are valid."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest
from click.testing import CliRunner

from portcheck.cli import main
from portcheck.config import parse_table

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def blocks(page: Path, lang: str) -> List[str]:
    return [body for kind, body in FENCE.findall(text(page)) if kind == lang]


def shown_commands(page: Path) -> Iterator[Tuple[str, List[str]]]:
    """(command, the output lines shown under it) for every `$ portcheck ...` in a console block and
    every `run: portcheck ...` in a YAML block (CI recipes)."""
    for kind, body in FENCE.findall(text(page)):
        if kind == "console":
            current, output = None, []
            for line in body.splitlines():
                if line.startswith("$ "):
                    if current:
                        yield current, output
                    current, output = (line[2:] if line[2:].startswith("portcheck ") else None), []
                elif current:
                    output.append(line)
            if current:
                yield current, output
        elif kind == "yaml":
            for m in re.finditer(r"^\s*(?:- )?run: (portcheck .*)$", body, re.MULTILINE):
                yield m.group(1), []


def argv(command: str) -> List[str]:
    """The arguments of a shown command: no trailing comment, nothing after a pipe."""
    command = re.sub(r"\s+#.*$", "", command).split(" | ")[0]
    words = shlex.split(command)
    assert words[0] == "portcheck", command
    return words[1:]


def sandbox(tmp_path: Path) -> Path:
    """A folder with the example project under the names the docs use (examples/, src/, train.py)."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copytree(ROOT / "examples", tmp_path / "src")
    shutil.copy(ROOT / "examples" / "train.py", tmp_path / "train.py")
    return tmp_path


def pages_with_commands() -> List[Path]:
    return [p for p in PAGES if any(True for _ in shown_commands(p))]


def test_the_docs_show_commands_at_all():
    shown = {p.name for p in pages_with_commands()}
    assert {"README.md", "cli.md", "getting-started.md", "fixing.md", "ci.md"} <= shown


@pytest.mark.parametrize("page", pages_with_commands(), ids=lambda p: p.name)
def test_every_command_shown_runs_and_prints_what_is_shown(page, tmp_path, monkeypatch):
    monkeypatch.chdir(sandbox(tmp_path))
    for command, shown in shown_commands(page):  # in page order: a baseline is written before it is used
        result = CliRunner().invoke(main, argv(command), env={"NO_COLOR": "1", "FORCE_COLOR": None})
        assert result.exception is None or isinstance(result.exception, SystemExit), (command, result.output)
        actual = {line.rstrip() for line in result.output.splitlines()}
        expects_error = any(line.startswith("portcheck: error:") for line in shown)
        if expects_error:
            assert result.exit_code == 2, (command, result.output)
        else:
            assert result.exit_code in (0, 1), (command, result.output)
            assert "error:" not in result.stderr, (command, result.stderr)
        missing = [line for line in shown if line.strip() and line.strip() != "..." and line.rstrip() not in actual]
        assert not missing, f"{page.name}: `{command}` no longer prints {missing}"


def test_the_readme_sample_output_is_a_real_scan(monkeypatch):
    block = next(b for b in blocks(ROOT / "README.md", "console") if b.startswith("$ portcheck scan examples/"))
    shown = [line for line in block.splitlines() if re.match(r"^examples/\S+:\d", line)]
    assert len(shown) >= 3  # and test_every_command_shown_runs... checks each of them
    assert any(line.startswith("Found ") for line in block.splitlines())


def test_the_readme_is_a_front_page():
    readme = text(ROOT / "README.md")
    assert len(readme.splitlines()) < 250
    for heading in (
        "## Install",
        "## Scan",
        "## Explain",
        "## Fix",
        "## Targets",
        "## Configure",
        "## CI in five lines",
    ):
        assert heading in readme, heading
    ci = re.search(r"## CI in five lines\n.*?```yaml\n(.*?)```", readme, re.DOTALL).group(1)
    assert len(ci.strip().splitlines()) == 5
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).is_file(), link


def test_ci_runs_the_documented_test_command():
    assert "bash tests/run.sh" in text(ROOT / "README.md")
    assert "exec bash tests/run.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", [ROOT / "README.md", ROOT / "docs" / "configuration.md"], ids=lambda p: p.name)
def test_config_examples_are_valid(page, tmp_path):
    examples = [b for b in blocks(page, "toml") if "[tool.portcheck]" in b]
    assert examples
    for example in examples:
        table = tomllib.loads(example)["tool"]["portcheck"]
        config = parse_table(tmp_path / "pyproject.toml", table)
        assert config.target in ("neuron", "xla", "generic", "all")


def test_config_error_example_format(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.portcheck]\nexclude = 3\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["scan", "."])
    assert result.exit_code == 2
    shown = re.search(
        r"portcheck: error: /repo/pyproject.toml: (key 'exclude': .*)", text(ROOT / "docs" / "configuration.md")
    )
    assert shown.group(1) in result.output


def test_json_schema_example_keys(monkeypatch):
    example = json.loads(blocks(ROOT / "docs" / "output-formats.md", "json")[0])
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["scan", "examples/", "--no-cache", "--output-format", "json"])
    data = json.loads(result.output)
    assert set(example) <= set(data)
    assert set(example["findings"][0]) <= set(data["findings"][0]) | {"cell", "guarded", "note"}
