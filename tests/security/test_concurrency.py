"""`fix` never loses an edit made while it worked, and a rewritten file keeps its identity.

Issue items 3 (concurrent edits) and 15 (owner and group kept; what happens to hard links).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from portcheck.fixer import files
from tests.security.conftest import FIXABLE

APPENDED = "print('written by another program while fix was running')\n"


def _appending_reader(monkeypatch, victim: Path):
    """Make `fix`'s read of `victim` be followed at once by another program's append to it."""
    real_read = files.read

    def read(path: Path, *args) -> bytes:
        data = real_read(path, *args)
        if Path(path).name == victim.name:
            with open(victim, "a") as handle:
                handle.write(APPENDED)
        return data

    monkeypatch.setattr(files, "read", read)


def test_an_edit_made_while_fix_runs_is_kept(tmp_path, cli, monkeypatch):
    victim = tmp_path / "train.py"
    victim.write_text(FIXABLE)
    (tmp_path / "other.py").write_text(FIXABLE)
    _appending_reader(monkeypatch, victim)
    result = cli(tmp_path, "fix", ".")
    assert victim.read_text() == FIXABLE + APPENDED, "the concurrent edit was lost"
    said = [line for line in result.output.splitlines() if "train.py" in line]
    assert said and any("changed" in line for line in said), result.output
    # The other file is still fixed, and no temporary file is left behind.
    assert (tmp_path / "other.py").read_text() != FIXABLE
    assert [p.name for p in tmp_path.iterdir() if "portcheck-tmp" in p.name] == []


def test_the_check_compares_bytes_right_before_the_rename(tmp_path):
    from portcheck.fsutil import ChangedMeanwhile, atomic_write_bytes, digest

    path = tmp_path / "a.py"
    path.write_text("old\n")
    expected = digest(b"old\n")
    path.write_text("new\n")  # same size, edited after the read
    with pytest.raises(ChangedMeanwhile):
        atomic_write_bytes(path, b"fixed\n", expected=expected)
    assert path.read_text() == "new\n"
    atomic_write_bytes(path, b"fixed\n", expected=digest(b"new\n"))
    assert path.read_text() == "fixed\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing a file's owner needs root")
def test_fix_as_root_keeps_owner_and_group(tmp_path, cli):
    path = tmp_path / "train.py"
    path.write_text(FIXABLE)
    os.chown(path, 4321, 4322)
    cli(tmp_path, "fix", ".")
    st = path.stat()
    assert path.read_text() != FIXABLE
    assert (st.st_uid, st.st_gid) == (4321, 4322)


def test_a_hard_link_keeps_the_old_bytes(tmp_path, cli):
    # Documented in docs/safety.md: the atomic rename gives the named path a new inode, so another
    # hard link to the old file keeps the bytes it had.
    path = tmp_path / "train.py"
    path.write_text(FIXABLE)
    other = tmp_path / "backup" / "train.py.orig"
    other.parent.mkdir()
    os.link(path, other)
    cli(tmp_path, "fix", "train.py")
    assert path.read_text() != FIXABLE
    assert other.read_text() == FIXABLE
    assert path.stat().st_nlink == 1 and other.stat().st_nlink == 1
