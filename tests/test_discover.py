"""File discovery: .gitignore, hidden folders, virtualenvs, build output, excludes, file kinds."""

from pathlib import Path

from portcheck.discover import discover, matches_any
from portcheck.filetypes import classify


def touch(root: Path, rel: str, text: str = "x = 1\n") -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def names(found, root):
    return sorted(c.path.relative_to(root).as_posix() for c in found)


def test_skips_noise_and_respects_gitignore(tmp_path):
    (tmp_path / ".git").mkdir()
    touch(tmp_path, ".gitignore", "generated/\n*.tmp.py\n!keep.tmp.py\n/rootonly.py\n")
    for rel in [
        "src/a.py", "src/b.tmp.py", "src/keep.tmp.py", "generated/c.py", "rootonly.py", "src/rootonly.py",
        ".hidden/d.py", "build/e.py", "dist/f.py", "node_modules/g.py", "venv/h.py", "pkg.egg-info/i.py",
        "myenv/lib/j.py", "README.md", "requirements.txt", "Dockerfile", "k.cu", "nb.ipynb", "run.sh",
        "CMakeLists.txt", "environment.yml", "pyproject.toml",
    ]:
        touch(tmp_path, rel)
    touch(tmp_path, "myenv/pyvenv.cfg", "home = /usr\n")
    found, problems = discover([tmp_path], tmp_path)
    assert problems == []
    assert names(found, tmp_path) == sorted(
        [
            "src/a.py", "src/keep.tmp.py", "src/rootonly.py", "requirements.txt", "Dockerfile", "k.cu", "nb.ipynb",
            "run.sh", "CMakeLists.txt", "environment.yml", "pyproject.toml",
        ]
    )


def test_nested_gitignore_applies_below_its_folder(tmp_path):
    (tmp_path / ".git").mkdir()
    touch(tmp_path, "a/.gitignore", "skip.py\n")
    touch(tmp_path, "a/skip.py")
    touch(tmp_path, "b/skip.py")
    found, _ = discover([tmp_path], tmp_path)
    assert names(found, tmp_path) == ["b/skip.py"]


def test_gitignore_can_be_disabled(tmp_path):
    (tmp_path / ".git").mkdir()
    touch(tmp_path, ".gitignore", "*.py\n")
    touch(tmp_path, "a.py")
    assert discover([tmp_path], tmp_path)[0] == []
    assert len(discover([tmp_path], tmp_path, respect_gitignore=False)[0]) == 1


def test_exclude_globs(tmp_path):
    for rel in ["a/x.py", "b/y.py", "tests/data/z.py", "keep.py"]:
        touch(tmp_path, rel)
    found, _ = discover([tmp_path], tmp_path, exclude=["a", "tests/**", "*/y.py"])
    assert names(found, tmp_path) == ["keep.py"]


def test_explicit_file_is_scanned_even_in_skipped_folder(tmp_path):
    touch(tmp_path, "build/gen.py")
    found, _ = discover([tmp_path / "build" / "gen.py"], tmp_path)
    assert len(found) == 1 and found[0].kind == "python"


def test_missing_path_is_a_problem_not_a_crash(tmp_path):
    found, problems = discover([tmp_path / "nope"], tmp_path)
    assert found == [] and "no such file" in problems[0].message


def test_matches_any():
    assert matches_any("a/b/c.py", ["b"])
    assert matches_any("a/b/c.py", ["a/**"])
    assert matches_any("a/b/c.py", ["*.py"])
    assert not matches_any("a/b/c.py", ["c"])


def test_classify():
    assert classify("x.py") == "python"
    assert classify("requirements-dev.txt") == "requirements"
    assert classify("Dockerfile.gpu") == "dockerfile"
    assert classify("kernel.cuh") == "cuda"
    assert classify("notes.txt") is None
