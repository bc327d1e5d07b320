"""Build the benchmark corpora: the `.py` files of pinned PyPI wheels, a fixed sample of them for
the slow peers, and 1x/2x/4x copies for the linearity check."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import List, Sequence, Tuple

# Each corpus directory is a project root for every tool: trailrunner (Fixit) stops at a
# pyproject.toml, and without this file Fixit, ruff and portcheck would all honour the
# repository's .gitignore, which ignores bench/corpora/.
ROOT_PYPROJECT = """\
# A benchmark corpus: the root of its own project, so no outer .gitignore or config applies.
[tool.portcheck]
respect-gitignore = false

[tool.ruff]
respect-gitignore = false
"""


@dataclass(frozen=True)
class Wheel:
    name: str
    version: str

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def slug(self) -> str:
        return f"{self.name}-{self.version}"


TRANSFORMERS = Wheel("transformers", "5.23.0")
TORCH = Wheel("torch", "2.13.0")


@dataclass(frozen=True)
class Corpus:
    """A folder holding Python files, and what is in it."""

    root: Path  # the project root (has ROOT_PYPROJECT)
    paths: Tuple[Path, ...]  # what to pass on the command line, inside root
    files: int
    bytes: int
    lines: int


def python_files(top: Path) -> List[Path]:
    """Every .py file under `top`, sorted by relative POSIX path (the order sampling uses)."""
    found = [p for p in top.rglob("*.py") if p.is_file()]
    return sorted(found, key=lambda p: p.relative_to(top).as_posix())


def describe(root: Path, paths: Sequence[Path]) -> Corpus:
    files = [f for p in paths for f in python_files(p)]
    size = 0
    lines = 0
    for f in files:
        data = f.read_bytes()
        size += len(data)
        lines += data.count(b"\n")
    return Corpus(root=root, paths=tuple(paths), files=len(files), bytes=size, lines=lines)


def mark_root(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(ROOT_PYPROJECT, encoding="utf-8")


def download(wheel: Wheel, wheels_dir: Path, python: str = sys.executable) -> Path:
    """The wheel file for `wheel`, fetched with `pip download --no-deps` unless already there."""
    wheels_dir.mkdir(parents=True, exist_ok=True)
    existing = sorted(wheels_dir.glob(f"{wheel.name}-{wheel.version}*.whl"))
    if existing:
        return existing[0]
    subprocess.run(
        [python, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "-q",
         "--only-binary=:all:", "-d", str(wheels_dir), wheel.requirement],
        check=True,
    )
    existing = sorted(wheels_dir.glob(f"{wheel.name}-{wheel.version}*.whl"))
    if not existing:
        raise RuntimeError(f"pip download {wheel.requirement} left no wheel in {wheels_dir}")
    return existing[0]


def unpack_python(wheel_file: Path, dest: Path) -> None:
    """Extract only the `.py` members of a wheel into `dest` (skipping the .dist-info folder)."""
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    with zipfile.ZipFile(wheel_file) as zf:
        for member in zf.namelist():
            if (
                not member.endswith(".py")
                or ".dist-info/" in member
                or member.startswith("/")
                or ".." in member.split("/")
            ):
                continue
            target = tmp / member
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(member))
    mark_root(tmp)
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)


def wheel_corpus(wheel: Wheel, base: Path) -> Corpus:
    """The unpacked sources of `wheel` under `base/<name>-<version>/<name>/`."""
    dest = base / wheel.slug
    if not (dest / wheel.name).is_dir():
        unpack_python(download(wheel, base / "wheels"), dest)
    return describe(dest, [dest / wheel.name])


def every_kth(files: Sequence[Path], n: int) -> List[Path]:
    """A deterministic, evenly spread sample of `n` files: every k-th of the sorted list, k = len // n."""
    if n <= 0:
        return []
    if n >= len(files):
        return list(files)
    k = len(files) // n
    return list(files[::k][:n])


def _link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def sample_corpus(source: Corpus, n: int, base: Path) -> Corpus:
    """`n` files of `source` (see every_kth), copied with their relative paths into their own project."""
    (top,) = source.paths
    dest = base / f"sample-{source.root.name}-{n}"
    chosen = every_kth(python_files(top), n)
    wanted = {p.relative_to(source.root).as_posix() for p in chosen}
    have = (
        {p.relative_to(dest).as_posix() for p in python_files(dest / top.name)} if (dest / top.name).is_dir() else set()
    )
    if wanted != have:
        shutil.rmtree(dest, ignore_errors=True)
        for p in chosen:
            _link_or_copy(p, dest / p.relative_to(source.root))
        mark_root(dest)
    return describe(dest, [dest / top.name])


def copies(source: Corpus, count: int, base: Path) -> Corpus:
    """`count` copies of `source` in differently named folders (copy1/, copy2/, ...) of one project."""
    (top,) = source.paths
    dest = base / f"copies-{source.root.name}"
    mark_root(dest)
    paths = []
    for i in range(1, count + 1):
        folder = dest / f"copy{i}"
        if not folder.is_dir():
            tmp = dest / f"copy{i}.partial"
            shutil.rmtree(tmp, ignore_errors=True)
            for p in python_files(top):
                _link_or_copy(p, tmp / top.name / p.relative_to(top))
            tmp.rename(folder)
        paths.append(folder)
    return describe(dest, paths)
