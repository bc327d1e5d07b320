"""A scanned repository cannot steer or poison the result cache.

Issue items 6 (a cache folder that is or holds a link), 7 (stale hits after an edit that keeps size
and mtime) and the cache parts of 14 (a malformed index is a miss; `clean` on a linked folder).
"""

from __future__ import annotations

import marshal
import os
from pathlib import Path

import pytest

from portcheck import __version__, cache
from tests.security.conftest import FIXABLE

CLEAN = "import torch\n\n\ndef train(model, batch):\n    model = model.cpu ()\n    return model(batch.to('cpu'))\n"
ADDED = "import torch\n\n\ndef train(model, batch):\n    model = model.cuda()\n    return model(batch.to('cpu'))\n"


@pytest.fixture
def project(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.portcheck]\n")
    (project / "train.py").write_text(FIXABLE)
    return project


def _files_under(folder: Path):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_a_cache_folder_that_is_a_link_is_not_written_through(tmp_path, project, cli):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / cache.CACHE_DIR).symlink_to(elsewhere, target_is_directory=True)
    first = cli(project, "scan", ".", "-q")
    second = cli(project, "scan", ".", "-q")
    assert _files_under(elsewhere) == []
    assert first.exit_code == second.exit_code == 1 and "DEV002" in second.output
    assert "warning" in second.output and cache.CACHE_DIR in second.output


@pytest.mark.parametrize("inside", ["version", "gitignore", "tag"])
def test_a_cache_folder_holding_links_is_refused(tmp_path, project, cli, inside):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = project / cache.CACHE_DIR
    folder.mkdir()
    if inside == "version":
        (folder / __version__).symlink_to(elsewhere, target_is_directory=True)
    else:  # a link to a file the repository chose, which does not exist yet
        (folder / (".gitignore" if inside == "gitignore" else "CACHEDIR.TAG")).symlink_to(elsewhere / "chosen")
    result = cli(project, "scan", ".", "-q")
    assert result.exit_code == 1 and "DEV002" in result.output
    assert _files_under(elsewhere) == []
    assert "symbolic link" in result.output


def test_an_edit_that_keeps_size_and_mtime_is_not_a_stale_hit(project, cli):
    path = project / "train.py"
    assert len(CLEAN) == len(ADDED)
    path.write_text(CLEAN)
    stamp = 1_600_000_000_000_000_000  # long before the scan: the stat would be "trusted"
    os.utime(path, ns=(stamp, stamp))
    assert cli(project, "scan", ".", "-q").exit_code == 0
    path.write_text(ADDED)  # a newly added .cuda(), then `touch -r` back to the old stamp
    os.utime(path, ns=(stamp, stamp))
    result = cli(project, "scan", ".", "-q")
    assert result.exit_code == 1 and "DEV002" in result.output, result.output


def _index_files(project: Path):
    """The per-file results and the project pass's per-file facts: every index file of the cache."""
    found = sorted((project / cache.CACHE_DIR / __version__).glob("*.bin"))
    assert len(found) == 2 and sum(p.name.startswith("project-") for p in found) == 1, found
    return found


@pytest.mark.parametrize("entry", [5, (1, 2), ("python",), None, "x", (b"", b"", b"", b"", b"", b"", b"")],
                         ids=["int", "short-tuple", "one-string", "none", "str", "long-tuple"])
def test_a_malformed_index_entry_is_a_miss(project, cli, entry):
    assert cli(project, "scan", ".", "-q").exit_code == 1
    key = os.path.abspath(project / "train.py")
    for index in _index_files(project):
        index.write_bytes(marshal.dumps((cache.FORMAT, {key: entry})))
    result = cli(project, "scan", ".", "-q")
    assert result.exit_code == 1 and "DEV002" in result.output, result.output
    assert "internal error" not in result.output


@pytest.mark.parametrize("blob", [marshal.dumps(7), marshal.dumps((1, 2, 3)), b"\x00garbage", b""],
                         ids=["int", "triple", "garbage", "empty"])
def test_a_malformed_index_file_is_a_miss(project, cli, blob):
    assert cli(project, "scan", ".", "-q").exit_code == 1
    for index in _index_files(project):
        index.write_bytes(blob)
    result = cli(project, "scan", ".", "-q")
    assert result.exit_code == 1 and "DEV002" in result.output and "internal error" not in result.output


def test_clean_refuses_a_linked_cache_folder_in_one_line(tmp_path, project, cli):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    (project / cache.CACHE_DIR).symlink_to(elsewhere, target_is_directory=True)
    result = cli(project, "clean")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and cache.CACHE_DIR in lines[0] and "symbolic link" in lines[0], result.output
    assert (elsewhere / "keep.txt").read_text() == "keep"
    assert (project / cache.CACHE_DIR).is_symlink()
