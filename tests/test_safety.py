"""Safety guarantees: scanned code never runs, reports hold no absolute paths, no network, and `fix`
never loses data (atomic writes, modes kept, read-only files refused, no links out of the project).

The command runs in a subprocess where a process-wide effect (a marker file, a socket, a crash) is
the thing under test; each harness is first shown to detect what it looks for.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import pytest
from click.testing import CliRunner

from portcheck.cli import main
from portcheck.filetypes import classify
from portcheck.report import FORMATS

ROOT = Path(__file__).resolve().parent.parent


def _has_fix() -> bool:
    """`portcheck fix` is part of every build: a broken import fails here, loudly, instead of skipping."""
    from portcheck.fixer.command import fix  # noqa: F401

    return True


HAS_FIX = _has_fix()
needs_fix = pytest.mark.skipif(not HAS_FIX, reason="`portcheck fix` is not part of this build")

CUDA_CODE = "import torch\nmodel = model.cuda()\nx = torch.zeros(3, device='cuda')\n"


def portcheck_command() -> List[str]:
    """How a user runs portcheck: the console script, whose sys.path does not include the working folder."""
    script = Path(sys.executable).parent / "portcheck"
    if script.is_file():
        return [str(script)]
    # Without the script, drop the working folder from sys.path the same way.
    return [sys.executable, "-c", "import sys; sys.path.pop(0); from portcheck.cli import main; main()"]


def run_portcheck(args: Sequence[str], cwd: Path, env: Optional[Dict[str, str]] = None, timeout: int = 120):
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in (full_env.get("PYTHONPATH", ""), str(ROOT)) if p)
    return subprocess.run(
        [*portcheck_command(), *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout
    )


def python_with(sitedir: Path, code: str, cwd: Path, env: Dict[str, str]):
    full_env = {**os.environ, **env, "PYTHONPATH": str(sitedir)}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=60
    )


# --- Scanned code is read, never run ---------------------------------------------------------


def marker_payload(markers: Path, name: str) -> str:
    return f"import pathlib\npathlib.Path({str(markers / name)!r}).write_text('ran')\n"


def hostile_project(project: Path, markers: Path) -> List[str]:
    """Files that leave a marker in `markers` if anything imports or executes them; their names."""
    files = {
        "evil.py": marker_payload(markers, "evil.py") + CUDA_CODE,
        "setup.py": marker_payload(markers, "setup.py") + "from setuptools import setup\nsetup(name='x')\n" + CUDA_CODE,
        "conftest.py": marker_payload(markers, "conftest.py") + CUDA_CODE,
        "sitecustomize.py": marker_payload(markers, "sitecustomize.py"),
        "usercustomize.py": marker_payload(markers, "usercustomize.py"),
        "pkg/__init__.py": marker_payload(markers, "pkg-init") + CUDA_CODE,
        "pkg/__main__.py": marker_payload(markers, "pkg-main") + CUDA_CODE,
        # Modules named like portcheck's own dependencies, in case the working folder were on sys.path.
        "click.py": marker_payload(markers, "click.py"),
        "rich.py": marker_payload(markers, "rich.py"),
        "libcst.py": marker_payload(markers, "libcst.py"),
        "torch.py": marker_payload(markers, "torch.py"),
    }
    for name, text in files.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    cell_source = marker_payload(markers, "notebook") + CUDA_CODE
    notebook = {
        "cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": cell_source},
            {
                "cell_type": "code",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
                "source": f"!touch {markers / 'shell-escape'}\n%run evil.py\nmodel = model.cuda()\n",
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (project / "analysis.ipynb").write_text(json.dumps(notebook))
    (project / "requirements.txt").write_text("-e .\ntorch\n")
    return sorted(files)


def test_marker_payload_works(tmp_path):
    # The harness itself: running one of the files does leave its marker.
    project, markers = tmp_path / "proj", tmp_path / "markers"
    markers.mkdir()
    project.mkdir()
    hostile_project(project, markers)
    subprocess.run([sys.executable, "-I", "-c", (project / "sitecustomize.py").read_text()], check=True, timeout=60)
    assert (markers / "sitecustomize.py").exists()


@pytest.mark.parametrize(
    "command",
    [["scan", "."], ["scan", ".", "--output-format", "json", "--no-cache"]]
    + ([["fix", ".", "--target", "generic"], ["fix", ".", "--target", "neuron", "--unsafe-fixes"]] if HAS_FIX else []),
    ids=lambda c: "-".join(c[:1] + c[2:]).replace("--", ""),
)
def test_scanned_code_never_runs(tmp_path, command):
    project, markers = tmp_path / "proj", tmp_path / "markers"
    markers.mkdir()
    project.mkdir()
    hostile_project(project, markers)
    result = run_portcheck(command, cwd=project)
    assert result.returncode in (0, 1), result.stderr
    assert "DEV002" in result.stdout or command[0] == "fix", result.stdout
    assert sorted(p.name for p in markers.iterdir()) == []


@needs_fix
def test_fix_changed_the_hostile_files_without_running_them(tmp_path):
    project, markers = tmp_path / "proj", tmp_path / "markers"
    markers.mkdir()
    project.mkdir()
    hostile_project(project, markers)
    before = (project / "evil.py").read_text()
    result = run_portcheck(["fix", ".", "--target", "generic"], cwd=project)
    assert result.returncode in (0, 1), result.stderr
    # The fix did real work on the files, so it read them with care rather than skipping them.
    assert (project / "evil.py").read_text() != before
    assert list(markers.iterdir()) == []


# --- Reports name files relative to where portcheck runs ------------------------------------


def relative_path_project(root: Path) -> Path:
    project = root / "proj"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "train.py").write_text(CUDA_CODE)
    (project / "pkg" / "broken.py").write_text("def f(:\n    model.cuda()\n")
    (project / "pkg" / "latin.py").write_bytes(b"x = '\xe9'\nmodel.cuda()\n")
    (project / "gone.py").symlink_to(project / "pkg" / "nowhere.py")  # an absolute link target
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": CUDA_CODE}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (project / "nb.ipynb").write_text(json.dumps(notebook))
    (project / "requirements.txt").write_text("torch\ncupy-cuda12x\n")
    return project


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("where", ["from-parent", "from-inside"])
def test_reports_hold_relative_paths_only(tmp_path, monkeypatch, fmt, where):
    project = relative_path_project(tmp_path)
    cwd, arg = (tmp_path, "proj") if where == "from-parent" else (project, ".")
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(main, ["scan", arg, "--output-format", fmt, "--no-cache", "-j", "1", "-q"])
    assert result.exit_code == 1, (result.output, result.exception)
    output = result.output
    prefix = "proj/" if where == "from-parent" else ""
    assert f"{prefix}pkg/train.py" in output and f"{prefix}pkg/broken.py" in output and f"{prefix}gone.py" in output
    for absolute in {str(tmp_path), str(tmp_path.resolve()), str(project.resolve())}:
        assert absolute not in output, f"{fmt} report names {absolute}"


# --- No network ------------------------------------------------------------------------------

NO_NETWORK_SITE = '''
"""Loaded at interpreter start: any attempt at the network leaves a marker and fails."""
import os
import socket

_MARK = os.environ["PORTCHECK_TEST_NET_MARK"]
open(os.environ["PORTCHECK_TEST_SITE_LOADED"], "a").close()


def _record(what):
    with open(_MARK, "a") as fh:
        fh.write(what + "\\n")


def _deny(name):
    def deny(*args, **kwargs):
        _record(f"{name}{args!r}")
        raise OSError(f"network access attempted: {name}")
    return deny


_real_init = socket.socket.__init__


def _init(self, family=-1, *args, **kwargs):
    if family in (socket.AF_INET, socket.AF_INET6):
        _record(f"socket({family!r})")
    _real_init(self, family, *args, **kwargs)


socket.socket.__init__ = _init
for _name in ("connect", "connect_ex", "sendto", "sendmsg"):
    setattr(socket.socket, _name, _deny(f"socket.{_name}"))
for _name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex"):
    setattr(socket, _name, _deny(_name))
'''


def no_network_env(tmp_path: Path) -> Dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(NO_NETWORK_SITE)
    return {
        "PYTHONPATH": str(site),
        "PORTCHECK_TEST_NET_MARK": str(tmp_path / "net-attempts"),
        "PORTCHECK_TEST_SITE_LOADED": str(tmp_path / "site-loaded"),
    }


def test_network_guard_detects_a_connection(tmp_path):
    env = no_network_env(tmp_path)
    probe = (
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 9), timeout=1)\nexcept OSError:\n    pass\n"
    )
    python_with(Path(env["PYTHONPATH"]), probe, cwd=tmp_path, env=env)
    assert (tmp_path / "site-loaded").exists()
    assert "create_connection" in (tmp_path / "net-attempts").read_text()


@pytest.mark.parametrize(
    "command",
    [["scan", ".", "-j", "2", "--output-format", "sarif"]] + ([["fix", ".", "--target", "generic"]] if HAS_FIX else []),
    ids=lambda c: c[0],
)
def test_no_network_connection(tmp_path, command):
    env = no_network_env(tmp_path)
    project = tmp_path / "proj"
    project.mkdir()
    # Enough files for the process pool, whose workers inherit the guard.
    for i in range(70):
        (project / f"mod_{i:02d}.py").write_text(CUDA_CODE)
    (project / "requirements.txt").write_text("torch --index-url https://download.pytorch.org/whl/cu121\n")
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\ndependencies = ['torch']\n")
    result = run_portcheck(command, cwd=project, env=env)
    assert result.returncode in (0, 1), result.stderr
    assert (tmp_path / "site-loaded").exists(), "the guard did not load"
    attempts = tmp_path / "net-attempts"
    assert not attempts.exists(), attempts.read_text()


# --- `fix` never loses data ------------------------------------------------------------------

KILL_SITE = '''
"""Loaded at interpreter start: SIGKILL this process at one step of writing a file in the project."""
import builtins
import io
import os
import signal

_PROJECT = os.path.realpath(os.environ["PORTCHECK_TEST_PROJECT"])
_AT = os.environ["PORTCHECK_TEST_KILL_AT"]
_LOG = os.environ["PORTCHECK_TEST_KILL_LOG"]


def _in_project(path):
    try:
        return os.path.dirname(os.path.realpath(os.fspath(path))) == _PROJECT
    except TypeError:
        return False


def _fd_in_project(fd):
    try:
        return _in_project(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return False


def _die(what):
    with builtins.open(_LOG, "w") as fh:
        fh.write(what)
    os.kill(os.getpid(), signal.SIGKILL)


_real_open = io.open
_real_write = os.write


class _HalfWriter:
    """A file object that writes half of the first data it is given, then the process dies."""

    def __init__(self, f):
        self._f = f

    def write(self, data):
        self._f.write(data[: max(1, len(data) // 2)])
        self._f.flush()
        _die("write")

    def __enter__(self):
        self._f.__enter__()
        return self

    def __exit__(self, *exc):
        return self._f.__exit__(*exc)

    def __iter__(self):
        return iter(self._f)

    def __getattr__(self, name):
        return getattr(self._f, name)


def _open(file, mode="r", *args, **kwargs):
    handle = _real_open(file, mode, *args, **kwargs)
    if any(c in mode for c in "wax+"):
        hit = _fd_in_project(file) if isinstance(file, int) else _in_project(file)
        if hit:
            return _HalfWriter(handle)
    return handle


def _os_write(fd, data):
    if _fd_in_project(fd):
        _real_write(fd, bytes(data)[: max(1, len(data) // 2)])
        _die("write")
    return _real_write(fd, data)


def _at_sync(real):
    def sync(fd):
        if _fd_in_project(fd):
            _die("fsync")
        return real(fd)
    return sync


def _at_rename(real):
    def rename(src, dst, *args, **kwargs):
        if _in_project(dst):
            _die("replace")
        return real(src, dst, *args, **kwargs)
    return rename


if _AT == "write":
    io.open = builtins.open = _open
    os.write = _os_write
elif _AT == "fsync":
    os.fsync = _at_sync(os.fsync)
    os.fdatasync = _at_sync(os.fdatasync)
elif _AT == "replace":
    os.replace = _at_rename(os.replace)
    os.rename = _at_rename(os.rename)
'''

FIXABLE = "import torch\n\n\ndef train(model, batch):\n    model = model.cuda()\n    return model(batch.to('cuda'))\n"


# The kill harness finds out which file a descriptor writes to through /proc.
needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd (Linux)")


def kill_env(tmp_path: Path, project: Path, at: str) -> Dict[str, str]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(KILL_SITE)
    return {
        "PYTHONPATH": str(site),
        "PORTCHECK_TEST_PROJECT": str(project),
        "PORTCHECK_TEST_KILL_AT": at,
        "PORTCHECK_TEST_KILL_LOG": str(tmp_path / "killed-at"),
    }


@needs_proc
@pytest.mark.parametrize("at", ["write", "replace"])
def test_kill_harness_destroys_a_plain_write(tmp_path, at):
    # The harness itself: a naive in-place write dies half-way and loses the original.
    project = tmp_path / "proj"
    project.mkdir()
    target = project / "train.py"
    target.write_text(FIXABLE)
    env = kill_env(tmp_path, project, at)
    naive = (
        f"import os, pathlib\np = pathlib.Path({str(target)!r})\np.write_text(p.read_text().replace('cuda', 'xla'))\n"
    )
    if at == "replace":
        naive = (
            f"import os\nopen({str(project / 'tmp')!r}, 'w').write('new')\n"
            f"os.replace({str(project / 'tmp')!r}, {str(target)!r})\n"
        )
    result = python_with(Path(env["PYTHONPATH"]), naive, cwd=tmp_path, env=env)
    assert result.returncode == -signal.SIGKILL
    assert (tmp_path / "killed-at").read_text() == at
    if at == "write":
        assert target.read_text() != FIXABLE


def _source_like(name: str) -> bool:
    return classify(name) is not None or name.endswith((".py", ".pyi", ".ipynb"))


@needs_fix
@needs_proc
@pytest.mark.parametrize("at", ["write", "fsync", "replace"])
def test_fix_killed_mid_write_keeps_the_original(tmp_path, at):
    project = tmp_path / "proj"
    project.mkdir()
    target = project / "train.py"
    target.write_text(FIXABLE)
    (project / "data.ipynb").write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    original = target.read_bytes()
    before = set(os.listdir(project))
    result = run_portcheck(["fix", ".", "--target", "generic"], cwd=project, env=kill_env(tmp_path, project, at))
    log = tmp_path / "killed-at"
    assert log.exists() and log.read_text() == at, (
        f"fix never reached the {at} step: rc={result.returncode} {result.stderr}"
    )
    assert result.returncode == -signal.SIGKILL
    assert target.read_bytes() == original
    leftovers = set(os.listdir(project)) - before
    assert not [n for n in leftovers if _source_like(n)], leftovers
    # Whatever was left behind is not mistaken for source by the next run, which then succeeds.
    scan = run_portcheck(["scan", ".", "--output-format", "json", "--no-cache"], cwd=project)
    assert {f["path"] for f in json.loads(scan.stdout)["findings"]} == {"train.py"}
    again = run_portcheck(["fix", ".", "--target", "generic"], cwd=project)
    assert again.returncode in (0, 1), again.stderr
    fixed = target.read_text()
    assert fixed != FIXABLE and ".cuda()" not in fixed
    compile(fixed, "train.py", "exec")


@needs_fix
@pytest.mark.parametrize("mode", [0o755, 0o600, 0o640])
def test_fix_keeps_the_file_mode(tmp_path, mode):
    project = tmp_path / "proj"
    project.mkdir()
    target = project / "train.py"
    target.write_text(FIXABLE)
    target.chmod(mode)
    result = run_portcheck(["fix", ".", "--target", "generic"], cwd=project)
    assert result.returncode in (0, 1), result.stderr
    assert target.read_text() != FIXABLE
    assert target.stat().st_mode & 0o7777 == mode


@needs_fix
def test_fix_refuses_a_read_only_file(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    locked, open_ = project / "locked.py", project / "open.py"
    locked.write_text(FIXABLE)
    open_.write_text(FIXABLE)
    locked.chmod(0o444)
    try:
        result = run_portcheck(["fix", ".", "--target", "generic"], cwd=project)
        assert locked.read_text() == FIXABLE
        assert locked.stat().st_mode & 0o777 == 0o444
    finally:
        locked.chmod(0o644)
    said = (result.stdout + result.stderr).lower()
    lines = [line for line in said.splitlines() if "locked.py" in line]
    assert lines and any("read-only" in line or "permission" in line for line in lines), said
    # The rest of the project is still fixed.
    assert open_.read_text() != FIXABLE


@needs_fix
def test_fix_never_follows_links_out_of_the_project(tmp_path):
    outside = tmp_path / "outside"
    (outside / "lib").mkdir(parents=True)
    victim, lib_victim = outside / "victim.py", outside / "lib" / "shared.py"
    victim.write_text(FIXABLE)
    lib_victim.write_text(FIXABLE)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "own.py").write_text(FIXABLE)
    (project / "link.py").symlink_to(victim)
    (project / "vendored").symlink_to(outside / "lib", target_is_directory=True)
    result = run_portcheck(["fix", ".", "--target", "generic"], cwd=project)
    assert result.returncode in (0, 1), result.stderr
    assert victim.read_text() == FIXABLE and lib_victim.read_text() == FIXABLE
    assert (project / "link.py").is_symlink() and (project / "vendored").is_symlink()
    assert (project / "own.py").read_text() != FIXABLE


@needs_fix
def test_fix_through_a_link_inside_the_project_keeps_the_link(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    real = project / "real.py"
    real.write_text(FIXABLE)
    (project / "alias.py").symlink_to("real.py")  # sorts before its target
    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "real.py").write_text(FIXABLE)
    run_portcheck(["fix", ".", "--target", "generic"], cwd=reference)
    result = run_portcheck(["fix", ".", "--target", "generic"], cwd=project)
    assert result.returncode in (0, 1), result.stderr
    assert (project / "alias.py").is_symlink() and os.readlink(project / "alias.py") == "real.py"
    # Fixed once, exactly as the file alone would be.
    assert real.read_text() == (reference / "real.py").read_text() != FIXABLE


@needs_fix
@pytest.mark.parametrize("flag", ["--diff", "--check"])
def test_fix_preview_writes_nothing(tmp_path, flag):
    project = tmp_path / "proj"
    project.mkdir()
    target = project / "train.py"
    target.write_text(FIXABLE)
    stat_before = target.stat()
    result = run_portcheck(["fix", ".", "--target", "generic", flag], cwd=project)
    assert result.returncode in (0, 1), result.stderr
    assert target.read_text() == FIXABLE
    assert target.stat().st_mtime_ns == stat_before.st_mtime_ns
    assert sorted(os.listdir(project)) == ["train.py"]


@needs_fix
def test_fix_over_bad_input_loses_nothing(tmp_path):
    """Files fix cannot read or rewrite exactly stay byte for byte; the others keep encoding, BOM and line endings."""
    untouchable = {
        "syntax.py": b"def f(:\n    return x.cuda()\n",
        "py2.py": b'print "to gpu"\nx = x.cuda()\n',
        "nul.py": b"x = x.cuda()\x00\n",
        "badutf.py": b"x = x.cuda()\ns = '\xff'\n",
        "deep.py": ("x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\ny = y.cuda()\n").encode(),
        "chain.py": ("x = " + " + ".join(["a"] * 100_000) + "\ny = y.cuda()\n").encode(),
        "broken.ipynb": b'{"cells": [{"cell_type": "code", "source": "x.cuda()"\n',
    }
    fixable = {
        "latin1.py": ('# -*- coding: latin-1 -*-\ns = "caf\u00e9"; m.to("cuda")\n'.encode("latin-1"), "latin-1", "\n"),
        "bom.py": (b"\xef\xbb\xbfimport torch\nx = x.cuda()\n", "utf-8-sig", "\n"),
        "crlf.py": (b"import torch\r\nx = y.cuda()\r\nz.to('cuda')\r\n", "utf-8", "\r\n"),
        "tabs.py": (b"if a:\n\tx = y.cuda()\n", "utf-8", "\n"),
        "separator.py": ('s = "a\u2028b"\nm.to("cuda")\nn.cuda()\n'.encode(), "utf-8", "\n"),
    }
    project = tmp_path / "proj"
    project.mkdir()
    for name, data in untouchable.items():
        (project / name).write_bytes(data)
    for name, (data, _, _) in fixable.items():
        (project / name).write_bytes(data)
    result = run_portcheck(["fix", ".", "--target", "generic"], cwd=project)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    for name, data in untouchable.items():
        assert (project / name).read_bytes() == data, name
    for name, (data, encoding, newline) in fixable.items():
        after = (project / name).read_bytes()
        assert after != data, f"{name} was not fixed"
        assert after.startswith(b"\xef\xbb\xbf") == data.startswith(b"\xef\xbb\xbf"), name
        text = after.decode(encoding)  # still in its own encoding
        assert ".cuda()" not in text and "'cuda'" not in text and '"cuda"' not in text, (name, text)
        endings = set(re.findall(r"\r\n|\r|\n", text))
        assert endings == {newline}, (name, endings)
        compile(after, name, "exec")


@needs_fix
def test_fix_keeps_comments_above_an_import_it_replaces(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    source = "import os\n\n# Keep the CUDA helpers here.\nfrom torch import cuda\n\ncuda.synchronize()\n"
    (project / "helpers.py").write_text(source)
    result = run_portcheck(["fix", ".", "--target", "generic"], cwd=project)
    assert result.returncode in (0, 1), result.stderr
    fixed = (project / "helpers.py").read_text()
    assert "cuda.synchronize()" not in fixed  # the fix happened
    assert "# Keep the CUDA helpers here." in fixed


@needs_fix
def test_fix_goes_on_past_a_file_its_parser_rejects(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    odd = b'model.to("cuda")\nwith x:\n\x0c    pass\n'  # valid Python: a form feed may lead an indent
    compile(odd, "odd.py", "exec")
    (project / "odd.py").write_bytes(odd)
    (project / "plain.py").write_text(FIXABLE)
    result = run_portcheck(["fix", ".", "--target", "generic"], cwd=project)
    assert result.returncode in (0, 1), result.stderr
    assert (project / "plain.py").read_text() != FIXABLE
    after = (project / "odd.py").read_bytes()
    if after == odd:
        assert "odd.py" in result.stdout + result.stderr  # left alone, and said so
    else:
        compile(after, "odd.py", "exec")
        assert b'"cuda"' not in after
