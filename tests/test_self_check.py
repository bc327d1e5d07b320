"""The project checks itself: ruff and mypy, configured in pyproject.toml, pass on its own code.

Both run as subprocesses, as a contributor or `.pre-commit-config.yaml` runs them; the tools come
with the `test` extra, so a missing tool fails here rather than skipping.
"""

from __future__ import annotations

import ast
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUFF = ["ruff", "check", "portcheck", "tests", "bench"]
MYPY = ["mypy", "portcheck"]


def _tool(args, extra):
    command = [sys.executable, "-m", *args, *extra]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    if "No module named" in result.stderr:
        pytest.fail(f"{args[0]} is not installed: pip install -e '.[test]'")
    return result


def test_ruff_passes():
    result = _tool(RUFF, ["--no-cache"])
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_passes(tmp_path):
    result = _tool(MYPY, ["--cache-dir", str(tmp_path / "mypy")])
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_contributor_hooks_run_the_same_checks():
    # .pre-commit-config.yaml runs what this file runs, so a commit that passes its hooks passes here.
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert shlex.split(hooks["ruff"]["entry"]) == RUFF
    assert shlex.split(hooks["mypy"]["entry"]) == MYPY
    assert hooks["ruff"]["pass_filenames"] is False and hooks["mypy"]["pass_filenames"] is False
    examples = shlex.split(hooks["portcheck-examples"]["entry"])
    assert examples[:2] == ["portcheck", "scan"] and examples[-1] == "examples"


def _import_graph() -> dict:
    """portcheck module -> the portcheck modules it imports, at any depth of its code (imports inside
    functions count: they hide a cycle, they do not remove it). `from portcheck import __version__`
    reads the package's first line and is no edge."""
    modules = {}
    for path in (ROOT / "portcheck").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph: dict = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("portcheck"):
                named = (f"{node.module}.{a.name}" for a in node.names)
                graph[name].update(n for n in named if n in modules)
                if node.module in modules and node.module not in ("portcheck", name):  # a package's own submodules
                    graph[name].add(node.module)
            elif isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name in modules and a.name != "portcheck")
    return graph


def _cycle(graph: dict) -> list:
    state: dict = {}
    path: list = []

    def visit(node: str) -> list:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        path.pop()
        return []

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return []


def test_no_import_cycle_between_modules():
    assert _cycle(_import_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
