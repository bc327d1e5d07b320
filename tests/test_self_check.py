"""The project checks itself: ruff and mypy, configured in pyproject.toml, pass on its own code.

Both run as subprocesses, as a contributor or `.pre-commit-config.yaml` runs them; the tools come
with the `test` extra, so a missing tool fails here rather than skipping.
"""

from __future__ import annotations

import ast
import dataclasses
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


# -- matchers decide, recipes rewrite ---------------------------------------------------------------
# What a construct is (where a device string goes, which API a call is, what a `.cuda()` argument
# holds) is decided once, by the matcher, and travels with the finding (`Finding.role`,
# `Finding.symbol`, `Site.role`, `Site.symbol`). The fixer may locate nodes and inspect code around
# the finding, never classify the finding's own code again. Two checks make that precise:
# 1. no module of `portcheck/fixer/` uses a table or pattern the matchers classify with;
# 2. in `fixer/recipes.py`, `resolve(...)` is called only inside `Site.context_name`, which refuses the
#    finding's own nodes at run time (so code around a finding can be named, the finding itself cannot).
MATCHER_TABLES = frozenset(
    {
        "LOAD_CALLS",  # map_location positions
        "DEVICE_TYPE_CALLS",  # device-type positions
        "AMP_CALLS",
        "MESH_CALLS",
        "CUDA_CHECK_CALLS",  # symbol_role: cuda-check
        "SEED_CALLS",  # symbol_role: seed
        "MEMORY_STATS",  # symbol_role: memory-stat
        "MEMORY_COMPANIONS",  # symbol_role: memory-sync
        "RANKISH",  # name_role: rank
        "DEVICE_NAME",  # name_role: device-value
        "_TYPE_CALL_TAILS",
    }
)
MATCHER_MODULES = ("portcheck.pyscan.matchers", "portcheck.pyscan.devices", "portcheck.pyscan.flow",
                   "portcheck.pyscan.keywords")
RESOLVE_ALLOWED_IN = frozenset({"context_name"})


def classification_uses(source: str) -> list:
    """(line, what) for each use of a matcher's classification table or module in `source`."""
    out = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module in MATCHER_MODULES:
                out.append((node.lineno, f"imports {node.module}"))
            out += [(node.lineno, a.name) for a in node.names if a.name in MATCHER_TABLES]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, f"imports {a.name}") for a in node.names if a.name in MATCHER_MODULES]
        elif isinstance(node, ast.Attribute) and node.attr in MATCHER_TABLES:
            out.append((node.lineno, node.attr))  # `torchfacts.LOAD_CALLS`, `facts.SEED_CALLS`
    return out


def resolve_calls_outside_context(source: str) -> list:
    """(line, function) for each `<x>.resolve(...)` call not inside an allowed function of `source`."""
    out = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr == "resolve"
                and function not in RESOLVE_ALLOWED_IN
            ):
                out.append((child.lineno, function or "<module>"))
            visit(child, inner)

    visit(ast.parse(source), "")
    return out


def test_the_fixer_does_not_classify_with_the_matchers_tables():
    found = {
        path.name: uses
        for path in sorted((ROOT / "portcheck" / "fixer").glob("*.py"))
        if (uses := classification_uses(path.read_text(encoding="utf-8")))
    }
    assert found == {}, "the matcher decides; use Site.role / Site.symbol (see docs/architecture.md)"


def test_recipes_name_only_code_around_the_finding():
    source = (ROOT / "portcheck" / "fixer" / "recipes.py").read_text(encoding="utf-8")
    assert resolve_calls_outside_context(source) == []


def test_the_checks_find_a_recipe_that_decides_again():
    bad = (
        "from portcheck.torchfacts import LOAD_CALLS\n"
        "from portcheck import torchfacts as facts\n"
        "def recipe(site):\n"
        "    name = site.names.resolve(site.nodes[0])\n"
        "    return name in LOAD_CALLS or name in facts.SEED_CALLS\n"
        "class Site:\n"
        "    def context_name(self, node):\n"
        "        return self.names.resolve(node)\n"
    )
    assert classification_uses(bad) == [(1, "LOAD_CALLS"), (5, "SEED_CALLS")]
    assert resolve_calls_outside_context(bad) == [(4, "recipe")]


def _findings(code: str):
    from portcheck.catalog import load_catalog
    from portcheck.model import Target
    from portcheck.scanner import Settings, analyze_text, prepare_rules

    prepared = prepare_rules(load_catalog(), Target.GENERIC, (), ())
    found, _, _ = analyze_text(code, "m.py", "python", prepared, Settings(target="generic"), verdicts=False)
    return {(f.code, f.source_line): (f.role, f.symbol) for f in found}


def test_a_finding_carries_what_the_matcher_decided():
    code = (
        "import torch\n"
        "from safetensors.torch import load_file\n"
        "def f(x, p, local_rank):\n"
        "    a = torch.load(p, map_location='cuda:0')\n"
        "    b = load_file(p, device='cuda')\n"
        "    c = torch.device('cuda')\n"
        "    x = x.to('cuda')\n"
        "    x = x.cuda(local_rank)\n"
        "    torch.cuda.manual_seed(1)\n"
        "    torch.cuda.max_memory_allocated()\n"
        "    with torch.autocast('cuda'):\n"
        "        pass\n"
    )
    assert _findings(code) == {
        ("DEV011", "a = torch.load(p, map_location='cuda:0')"): ("map-location", "torch.load"),
        ("DEV003", "b = load_file(p, device='cuda')"): ("map-location", "safetensors.torch.load_file"),
        ("DEV001", "c = torch.device('cuda')"): ("device-call", "torch.device"),
        ("DEV001", "x = x.to('cuda')"): ("device", ""),
        ("DEV002", "x = x.cuda(local_rank)"): ("rank", ""),
        ("RT005", "torch.cuda.manual_seed(1)"): ("seed", "torch.cuda.manual_seed"),
        ("RT003", "torch.cuda.max_memory_allocated()"): ("memory-stat", "torch.cuda.max_memory_allocated"),
        ("AMP001", "with torch.autocast('cuda'):"): ("device-type", "torch.autocast"),
    }


def test_the_payload_stays_out_of_reports():
    from portcheck.model import Finding, Severity

    plain = Finding("a.py", 1, 1, 1, 2, "DEV001", "n", "device", Severity.MAJOR, "m", True)
    payload = dataclasses.replace(plain, role="device", symbol="torch.device")
    assert payload.to_dict() == plain.to_dict() and payload == plain


def test_a_recipe_cannot_name_the_findings_own_code():
    import libcst as cst

    from portcheck.fixer.names import Bindings
    from portcheck.fixer.recipes import Site

    module = cst.parse_module("import torch\ntorch.cuda.synchronize()\n")
    call = module.body[1].body[0].value
    parents = {id(call.func): call}
    site = Site((call.func,), {}, None, parents, Bindings.of(module), "generic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="the finding's own code"):
        site.context_name(call.func)
    assert site.context_name(call.func.value) == "torch.cuda"  # code around it: fine
