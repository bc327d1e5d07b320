"""The parsed rule files cached in the user's cache folder: the same catalog, read only when safe."""

from __future__ import annotations

import os
import sys

import pytest

import portcheck.catalog_cache as cc
from portcheck.catalog import load_files, rules_dir

posix_only = pytest.mark.skipif(not hasattr(os, "getuid"), reason="ownership and mode bits are POSIX")


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("PORTCHECK_NO_CATALOG_CACHE", raising=False)
    monkeypatch.setattr(cc, "_entries", None)
    return tmp_path / "cache" / "portcheck"


@pytest.fixture
def parses(monkeypatch):
    """How many rule files were parsed from TOML (not served from the cache)."""
    calls = []
    real = cc._parse

    def counted(raw):
        calls.append(raw)
        return real(raw)

    monkeypatch.setattr(cc, "_parse", counted)
    return calls


def _fresh_process(monkeypatch):
    monkeypatch.setattr(cc, "_entries", None)


def _catalog():
    return load_files(rules_dir().glob("*.toml"))


def _summary(catalog):
    return catalog.digest, [
        (r.rule, r.message, r.fallback, r.guard, len(r.matchers), len(r.text_matchers)) for r in catalog.rules
    ]


def test_a_second_run_parses_no_toml_and_builds_the_same_catalog(cache_home, parses, monkeypatch):
    first = _catalog()
    files = len(list(rules_dir().glob("*.toml")))
    assert len(parses) == files
    assert cc.cache_file(cache_home).is_file()
    _fresh_process(monkeypatch)
    parses.clear()
    second = _catalog()
    assert parses == []
    assert _summary(second) == _summary(first)
    monkeypatch.setenv("PORTCHECK_NO_CATALOG_CACHE", "1")
    assert _summary(_catalog()) == _summary(first)


@posix_only
def test_the_cache_is_private_to_the_user(cache_home):
    _catalog()
    assert cache_home.stat().st_mode & 0o077 == 0
    assert cc.cache_file(cache_home).stat().st_mode & 0o077 == 0


@posix_only
@pytest.mark.parametrize("loosen", ["folder", "file"])
def test_a_cache_others_can_write_is_not_read(cache_home, parses, monkeypatch, loosen):
    _catalog()
    target = cache_home if loosen == "folder" else cc.cache_file(cache_home)
    target.chmod(target.stat().st_mode | 0o022)
    _fresh_process(monkeypatch)
    parses.clear()
    _catalog()
    assert parses, "a group- or world-writable cache was trusted"


@posix_only
def test_a_symlinked_cache_file_is_not_read(cache_home, parses, monkeypatch, tmp_path):
    _catalog()
    real = cc.cache_file(cache_home)
    elsewhere = tmp_path / "elsewhere.marshal"
    real.rename(elsewhere)
    real.symlink_to(elsewhere)
    _fresh_process(monkeypatch)
    parses.clear()
    _catalog()
    assert parses


@pytest.mark.parametrize("content", [b"", b"not marshal at all", b"\xe9\x00\x00\x00"])
def test_a_damaged_cache_falls_back_to_parsing(cache_home, parses, monkeypatch, content):
    expected = _summary(_catalog())
    cc.cache_file(cache_home).write_bytes(content)
    _fresh_process(monkeypatch)
    parses.clear()
    assert _summary(_catalog()) == expected
    assert parses


def test_a_cache_that_cannot_be_written_changes_nothing(tmp_path, monkeypatch, parses):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr(cc, "_entries", None)
    expected = cc._parse((rules_dir() / "device.toml").read_bytes())
    assert cc.parse_rule_file((rules_dir() / "device.toml").read_bytes()) == expected


def test_the_cache_never_goes_into_the_scanned_project(cache_home, tmp_path, monkeypatch):
    import subprocess

    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("import torch\nx = torch.zeros(1).cuda()\n", encoding="utf-8")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("PORTCHECK_NO_CATALOG_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-m", "portcheck", "scan", "--no-cache", "train.py"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert sorted(p.name for p in project.iterdir()) == ["train.py"]
    assert cc.cache_file(cache_home).is_file()
