"""The pre-commit hooks, run by the real pre-commit tool against a throwaway git repository.

The hook source is a git snapshot of this working tree, so uncommitted changes are what gets tested.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from portcheck import filetypes
from portcheck.catalog import load_catalog
from portcheck.filetypes import classify
from portcheck.model import Severity, Target

ROOT = Path(__file__).resolve().parent.parent
HOOKS_FILE = ROOT / ".pre-commit-hooks.yaml"

BAD = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n"
CLEAN = "import torch\nmodel = torch.nn.Linear(2, 2)\n"


def _hooks():
    yaml = pytest.importorskip("yaml")
    return {h["id"]: h for h in yaml.safe_load(HOOKS_FILE.read_text(encoding="utf-8"))}


# --- the hook definitions -------------------------------------------------------------------------

NAMES = [
    "train.py", "stubs.pyi", "nb.ipynb", "kernel.cu", "kernel.cuh", "run.sh", "job.slurm", "job.sbatch", "x.bash",
    "x.zsh", "requirements.txt", "requirements-dev.txt", "dev-requirements.txt", "requirements.in", "constraints.txt",
    "pyproject.toml", "environment.yml", "environment-gpu.yaml", "conda.yml", "env.yml", "Dockerfile",
    "Dockerfile.gpu", "gpu.Dockerfile", "gpu.dockerfile", "Containerfile", "docker-compose.yml", "compose.yaml",
    "CMakeLists.txt", "FindCUDA.cmake", "ext.cpp", "ext.cc", "ops.h", "ops.hpp",
    # and files portcheck does not read
    "README.md", "setup.cfg", "notes.txt", "requirements.md", "Makefile", "env.yaml", "values.yaml", "train.pyc",
    "Dockerfile-old", "cmakelists.txt", "x.py.bak", "pyproject.toml.orig",
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("folder", ["", "src/pkg/"])
def test_files_pattern_selects_exactly_what_portcheck_reads(name, folder):
    pattern = re.compile(_hooks()["portcheck"]["files"])
    reads = classify(name) is not None or name.endswith(".pyi")
    assert bool(pattern.search(folder + name)) == reads


def test_files_pattern_covers_every_file_kind():
    # One example name per glob portcheck classifies by, so a new kind cannot be left out of the hook.
    pattern = re.compile(_hooks()["portcheck"]["files"])
    examples = [glob.replace("*", "x-1") for _, globs in filetypes._KINDS for glob in globs]
    assert examples and all(classify(name) for name in examples)
    assert [name for name in examples if not pattern.search("src/" + name)] == []


def test_scan_hook_runs_serially_and_scans():
    hook = _hooks()["portcheck"]
    assert hook["require_serial"] is True
    assert hook["entry"].split()[:2] == ["portcheck", "scan"]
    assert hook["language"] == "python"


# --- the real tool ---------------------------------------------------------------------------------

# These install the hooks' environment with pip, which fetches portcheck's build backend and
# dependencies from the package index.
needs_tools = pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None or shutil.which("git") is None,
    reason="needs the pre-commit package (test extras) and git",
)


def _git_env(tmp: Path) -> dict:
    env = dict(os.environ)
    empty = tmp / "gitconfig"
    empty.write_text("", encoding="utf-8")
    env.update(
        GIT_CONFIG_GLOBAL=str(empty),  # no user hooksPath, signing or templates leak in
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.com",
        PRE_COMMIT_HOME=str(tmp / "pre-commit-home"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        NO_COLOR="1",
    )
    env.pop("PORTCHECK_DEBUG", None)
    return env


def _run(args, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _git(cwd: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return _run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd, env)


def _snapshot(dest: Path, env: dict) -> str:
    """Copy the working tree's tracked and untracked (not ignored) files into a fresh repository."""
    listed = _git(ROOT, env, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if listed.returncode != 0:
        pytest.skip("the source tree is not a git checkout")
    dest.mkdir()
    for rel in sorted(set(filter(None, listed.stdout.split("\0")))):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    assert _git(dest, env, "init", "-q").returncode == 0
    assert _git(dest, env, "add", "-A").returncode == 0
    assert _git(dest, env, "commit", "-q", "-m", "snapshot").returncode == 0
    return _git(dest, env, "rev-parse", "HEAD").stdout.strip()


def _config(source: Path, rev: str, hooks: str) -> str:
    return f"repos:\n  - repo: {source.as_posix()}\n    rev: {rev}\n    hooks:\n{hooks}"


def _commit(project: Path, env: dict, files: dict, message: str) -> subprocess.CompletedProcess:
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    assert _git(project, env, "add", "-A").returncode == 0
    return _git(project, env, "commit", "-m", message)


def _head(project: Path, env: dict) -> str:
    return _git(project, env, "rev-parse", "--verify", "-q", "HEAD").stdout.strip()


@pytest.fixture(scope="module")
def hook_source(tmp_path_factory):
    """A git snapshot of this tree to use as the hook repository, and the environment to run in.

    Module-scoped, so pre-commit installs the hook environment once for every test here."""
    tmp = tmp_path_factory.mktemp("pre-commit")
    env = _git_env(tmp)
    source = tmp / "hook-source"
    rev = _snapshot(source, env)
    return source, rev, env


def _project(tmp_path: Path, hook_source, hooks: str) -> Path:
    source, rev, env = hook_source
    project = tmp_path / "project"
    project.mkdir()
    assert _git(project, env, "init", "-q").returncode == 0
    (project / ".pre-commit-config.yaml").write_text(_config(source, rev, hooks), encoding="utf-8")
    installed = _run([sys.executable, "-m", "pre_commit", "install"], project, env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return project


@pytest.mark.slow
@needs_tools
def test_scan_hook_blocks_cuda_lock_in_and_lets_clean_commits_through(tmp_path, hook_source):
    source, rev, env = hook_source
    project = _project(tmp_path, hook_source, "      - id: portcheck\n")

    # No file portcheck reads: the hook is skipped and the commit goes through.
    first = _commit(project, env, {"README.md": "# demo\n"}, "docs")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "no files to check" in first.stdout + first.stderr
    docs_head = _head(project, env)
    assert docs_head

    # A `.cuda()` call: blocked, with the finding shown.
    blocked = _commit(project, env, {"src/train.py": BAD}, "add training")
    out = blocked.stdout + blocked.stderr
    assert blocked.returncode != 0, out
    assert "src/train.py:2:" in out and "DEV002" in out
    assert _head(project, env) == docs_head

    # The same file without it: committed.
    clean = _commit(project, env, {"src/train.py": CLEAN}, "add training")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert _head(project, env) != docs_head

    # --fail-on major: a minor finding no longer blocks (the changed config is staged with it).
    assert load_catalog().get("DEV002").severity_for(Target.GENERIC) is Severity.MINOR
    relaxed = _config(source, rev, "      - id: portcheck\n        entry: portcheck scan --fail-on major --\n")
    minor = _commit(project, env, {".pre-commit-config.yaml": relaxed, "src/eval.py": BAD}, "add eval")
    assert minor.returncode == 0, minor.stdout + minor.stderr

    # --fail-under: the score decides; any scored finding keeps it below 100.
    strict = _config(source, rev, "      - id: portcheck\n        entry: portcheck scan --fail-under 100 --\n")
    below = _commit(project, env, {".pre-commit-config.yaml": strict, "src/serve.py": BAD}, "add serving")
    assert below.returncode != 0, below.stdout + below.stderr

    # A baseline: today's findings pass, a new one is blocked.
    written = _run(
        [sys.executable, "-m", "portcheck", "scan", "--no-cache", "--write-baseline", ".portcheck-baseline.json"],
        project,
        env,
    )
    assert written.returncode == 0, written.stderr
    adopted = _config(
        source, rev, "      - id: portcheck\n        entry: portcheck scan --baseline .portcheck-baseline.json --\n"
    )
    known = _commit(project, env, {".pre-commit-config.yaml": adopted}, "adopt portcheck")
    assert known.returncode == 0, known.stdout + known.stderr
    new = _commit(project, env, {"src/serve.py": BAD + "batch = torch.ones(2).cuda()\n"}, "more serving")
    assert new.returncode != 0 and "src/serve.py:3:" in new.stdout + new.stderr
    assert "src/serve.py:2:" not in new.stdout + new.stderr


@pytest.mark.slow
@needs_tools
def test_fix_hook_rewrites_the_file_and_stops_the_commit(tmp_path, hook_source):
    _, _, env = hook_source
    project = _project(tmp_path, hook_source, "      - id: portcheck-fix\n")
    assert _commit(project, env, {"README.md": "# demo\n"}, "docs").returncode == 0
    before = _head(project, env)

    stopped = _commit(project, env, {"train.py": BAD}, "add training")
    assert stopped.returncode != 0, stopped.stdout + stopped.stderr
    assert "files were modified by this hook" in stopped.stdout + stopped.stderr
    fixed = (project / "train.py").read_text(encoding="utf-8")
    assert ".cuda()" not in fixed and ".to(" in fixed
    assert _head(project, env) == before

    # Staging the fixed file lets the commit through.
    again = _git(project, env, "add", "train.py")
    assert again.returncode == 0
    done = _git(project, env, "commit", "-m", "add training")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _head(project, env) != before
