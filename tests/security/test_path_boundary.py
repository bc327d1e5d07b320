"""Writes stay inside the path the user named and never replace what is not a regular file.

Issue items 1 (links out of the named folder), 2 (device nodes and FIFOs as -o / --write-baseline)
and 16 (new output files follow the umask).
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from tests.security.conftest import FIXABLE


@pytest.fixture
def linked_project(tmp_path):
    """proj/ holds its own file, a link to a file outside it and a link to a folder outside it."""
    outside = tmp_path / "outside"
    (outside / "lib").mkdir(parents=True)
    (outside / "victim.py").write_text(FIXABLE)
    (outside / "lib" / "shared.py").write_text(FIXABLE)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "own.py").write_text(FIXABLE)
    (project / "link.py").symlink_to(outside / "victim.py")
    (project / "vendored").symlink_to(outside / "lib", target_is_directory=True)
    return project, outside


def test_fix_from_the_parent_without_config_does_not_follow_links_out_of_the_named_folder(
    tmp_path, linked_project, cli
):
    # No [tool.portcheck] anywhere: the working folder (tmp_path) holds the link targets too.
    project, outside = linked_project
    result = cli(tmp_path, "fix", "proj")
    assert (outside / "victim.py").read_text() == FIXABLE
    assert (outside / "lib" / "shared.py").read_text() == FIXABLE
    assert (project / "own.py").read_text() != FIXABLE
    assert (project / "link.py").is_symlink() and (project / "vendored").is_symlink()
    said = result.output
    assert "proj/link.py" in said and "proj/vendored" in said and "not followed" in said, said


def test_fix_of_a_named_link_to_a_file_outside_its_folder_is_refused(tmp_path, linked_project, cli):
    project, outside = linked_project
    result = cli(tmp_path, "fix", "proj/link.py")
    assert (outside / "victim.py").read_text() == FIXABLE
    assert "proj/link.py" in result.output and "outside" in result.output, result.output


def test_fix_still_writes_through_a_link_inside_the_named_folder(tmp_path, cli):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "real.py").write_text(FIXABLE)
    (project / "alias.py").symlink_to("real.py")
    cli(tmp_path, "fix", "proj")
    assert (project / "alias.py").is_symlink()
    assert (project / "real.py").read_text() != FIXABLE


# --- -o and --write-baseline over things that are not regular files ---------------------------


def _fifo_with_reader(path: Path):
    os.mkfifo(path)
    got = []

    def read():
        with open(path, "rb") as handle:
            got.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, got


@pytest.mark.parametrize("option", ["-o", "--write-baseline"])
def test_a_fifo_is_written_as_a_stream_and_stays_a_fifo(tmp_path, cli, option):
    (tmp_path / "train.py").write_text(FIXABLE)
    fifo = tmp_path / "out.pipe"
    reader, got = _fifo_with_reader(fifo)
    result = cli(tmp_path, "scan", ".", "--no-cache", "-q", "--output-format", "json", option, str(fifo))
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a regular file"
    assert got and b"DEV002" in got[0], result.output


@pytest.mark.parametrize("option", ["-o", "--write-baseline"])
def test_a_character_device_is_never_replaced(tmp_path, cli, option):
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # the numbers of /dev/null
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot create a device node here: {exc}")
    before = os.lstat(device)
    (tmp_path / "train.py").write_text(FIXABLE)
    cli(tmp_path, "scan", ".", "--no-cache", "-q", option, str(device))
    after = os.lstat(device)
    assert stat.S_ISCHR(after.st_mode), "the device node was replaced by a regular file"
    assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode, before.st_rdev)


@pytest.mark.parametrize("option", ["-o", "--write-baseline"])
def test_a_socket_is_refused_with_one_line(tmp_path, cli, option):
    import socket

    (tmp_path / "train.py").write_text(FIXABLE)
    sock_path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(sock_path))
        result = cli(tmp_path, "scan", ".", "--no-cache", "-q", option, str(sock_path))
    finally:
        server.close()
    assert result.exit_code == 2
    assert stat.S_ISSOCK(os.lstat(sock_path).st_mode)
    assert "s.sock" in result.output and "internal error" not in result.output, result.output


# --- new files follow the umask ---------------------------------------------------------------


@pytest.mark.parametrize("option", ["-o", "--write-baseline"])
@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_new_output_files_follow_the_umask(tmp_path, cli, option, umask):
    (tmp_path / "train.py").write_text(FIXABLE)
    old = os.umask(umask)
    try:
        cli(tmp_path, "scan", ".", "--no-cache", "-q", option, "report.out")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "report.out").st_mode) == 0o666 & ~umask


def test_an_existing_output_file_keeps_its_mode(tmp_path, cli):
    (tmp_path / "train.py").write_text(FIXABLE)
    out = tmp_path / "report.out"
    out.write_text("old")
    out.chmod(0o640)
    cli(tmp_path, "scan", ".", "--no-cache", "-q", "-o", "report.out")
    assert stat.S_IMODE(out.stat().st_mode) == 0o640 and "DEV002" in out.read_text()
