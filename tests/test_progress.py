"""The progress bar: drawn on a terminal's stderr for long scans, never mixed into machine-readable output."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from portcheck.cli import FORMATS
from portcheck.progress import MIN_FILES, progress_bar, wanted


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_shows_the_total_and_reaches_it():
    stream = FakeTerminal()
    with progress_bar(5, stream=stream, min_files=3) as advance:
        for _ in range(5):
            advance(1)
    out = stream.getvalue()
    assert "Scanning" in out
    assert "0/5" in out and "5/5" in out
    assert out.endswith("\x1b[2K")  # the last thing drawn erases the bar's line


@pytest.mark.parametrize(
    "stream,total", [(io.StringIO(), 500), (FakeTerminal(), 2)], ids=["not-a-terminal", "short-scan"]
)
def test_no_bar(stream, total):
    with progress_bar(total, stream=stream, min_files=3) as advance:
        advance(1)
    assert stream.getvalue() == ""


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("output_file", [None, "report.out"])
@pytest.mark.parametrize("quiet", [False, True])
def test_bar_only_for_text_on_the_terminal(fmt, output_file, quiet):
    assert wanted(fmt, output_file, quiet) == (fmt == "text" and output_file is None and not quiet)


def test_bar_does_not_import_rich_when_not_drawn():
    probe = (
        "import io, sys\n"
        "from portcheck.progress import progress_bar\n"
        "with progress_bar(10_000, stream=io.StringIO()) as advance:\n"
        "    advance(1)\n"
        "print('rich' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- the CLI on a real pseudo-terminal ------------------------------------------------------------

needs_pty = pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")


def _run_on_pty(args, cwd: Path):
    """Run portcheck with stderr on a pseudo-terminal; return (exit code, stdout, what the terminal saw)."""
    import pty

    master, slave = pty.openpty()
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="100")
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "portcheck", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=slave, env=env
    )
    os.close(slave)
    chunks = []

    def drain():
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # the other end closed
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    stdout, _ = proc.communicate(timeout=120)
    reader.join(timeout=10)
    os.close(master)
    return proc.returncode, stdout.decode(), b"".join(chunks).decode(errors="replace")


@pytest.fixture(scope="module")
def many_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("many")
    for i in range(MIN_FILES + 10):
        (root / f"m{i:03d}.py").write_text(
            "import torch\nx = torch.ones(2).cuda()\n" if i == 0 else "y = 1\n", encoding="utf-8"
        )
    return root


@needs_pty
def test_cli_draws_a_bar_on_a_terminal(many_files):
    code, stdout, terminal = _run_on_pty(["scan", "--no-cache", "."], many_files)
    assert code == 1
    assert f"/{MIN_FILES + 10}" in terminal and "Scanning" in terminal
    assert "Scanning" not in stdout and "m000.py:2:" in stdout


@needs_pty
@pytest.mark.parametrize(
    "extra", [["--quiet"], ["--output-format", "json"], ["--output-format", "sarif"], ["-o", "report.txt"]]
)
def test_cli_draws_no_bar(many_files, extra, tmp_path):
    args = ["scan", "--no-cache", str(many_files), *extra]
    code, stdout, terminal = _run_on_pty(args, tmp_path)
    assert code == 1
    assert "Scanning" not in terminal and "Scanning" not in stdout
