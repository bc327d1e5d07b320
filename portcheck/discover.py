"""Find the files to scan: recurse the given paths, honour .gitignore and exclude globs, skip the usual noise.

Paths named explicitly on the command line are always scanned (unless excluded), like ruff does.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from portcheck.filetypes import classify

SKIP_DIRS = frozenset(
    {
        "build",
        "dist",
        "node_modules",
        "site-packages",
        "__pycache__",
        "venv",
        "env",
        ".venv",
        "__pypackages__",
        ".portcheck_cache",
    }
)


@dataclass(frozen=True)
class Candidate:
    path: Path  # as given/joined (not resolved), for display
    kind: str
    boundary: Optional[Path] = None  # with `contain`: the resolved folder argument it was found under


@dataclass(frozen=True)
class Problem:
    path: Path
    message: str


_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "blank": " \t",
    "cntrl": "\x00-\x1f\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@[-`{-~",
    "space": " \t\n\r\x0b\x0c",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


def _spans(spec: str) -> List[Tuple[int, int]]:
    out, i = [], 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            out.append((ord(spec[i]), ord(spec[i + 2])))
            i += 3
        else:
            out.append((ord(spec[i]), ord(spec[i])))
            i += 1
    return out


def _bracket(pattern: str, start: int) -> Tuple[Optional[str], int]:
    """Git's reading of the bracket expression at `pattern[start]` ("["): the same set written so that
    pathspec passes it on unchanged, and the index after it. None when git gives up on the whole
    pattern (no closing bracket, an unknown [:class:]): such a pattern matches nothing."""
    i, n = start + 1, len(pattern)
    negated = i < n and pattern[i] in "!^"
    i += negated
    spans: List[Tuple[int, int]] = []
    prev: Optional[str] = None
    first = True
    while True:
        if i >= n:
            return None, n
        c = pattern[i]
        if c == "]" and not first:
            i += 1
            break
        first = False
        if c == "\\":
            i += 1
            if i >= n:
                return None, n
            prev = pattern[i]
            spans.append((ord(prev), ord(prev)))
        elif c == "-" and prev is not None and i + 1 < n and pattern[i + 1] != "]":
            i += 1
            end = pattern[i]
            if end == "\\":
                i += 1
                if i >= n:
                    return None, n
                end = pattern[i]
            if ord(prev) <= ord(end):  # a reversed range adds nothing: only its start matched, above
                spans.append((ord(prev), ord(end)))
            prev = None
            i += 1
            continue
        elif c == "[" and pattern.startswith(":", i + 1) and ":]" in pattern[i + 2 :]:
            close = pattern.index(":]", i + 2)
            name = pattern[i + 2 : close]
            if "]" in name:  # no ":]" before the set ends: a plain "["
                prev = c
                spans.append((ord(c), ord(c)))
            else:
                if name not in _POSIX_CLASSES:
                    return None, n
                spans.extend(_spans(_POSIX_CLASSES[name]))
                prev = None
                i = close + 2
                continue
        else:
            prev = c
            spans.append((ord(c), ord(c)))
        i += 1
    return _write_set(spans, negated), i


def _write_set(spans: List[Tuple[int, int]], negated: bool) -> str:
    chars: Set[int] = set()
    for lo, hi in spans:
        chars.update(range(lo, min(hi, 0x10FFFF) + 1))
    chars.discard(ord("/"))  # a bracket never matches "/" in a path, and "/" would split pathspec's segments
    if not chars:
        return "[!/]" if negated else ""  # an empty set: nothing matches
    special = {ord("]"), ord("-"), ord("^"), ord("["), ord("\\")}
    plain = sorted(chars - special)
    body, j = [], 0
    while j < len(plain):
        k = j
        while k + 1 < len(plain) and plain[k + 1] == plain[k] + 1:
            k += 1
        body.append(chr(plain[j]) if k == j else f"{chr(plain[j])}{'-' if k > j + 1 else ''}{chr(plain[k])}")
        j = k + 1
    text = ("]" if ord("]") in chars else "") + "".join(body)
    # "\\" is doubled by pathspec into a literal backslash; "[" and "^" are literal past the start.
    text += (
        ("\\" if ord("\\") in chars else "") + ("[" if ord("[") in chars else "") + ("^" if ord("^") in chars else "")
    )
    text += "-" if ord("-") in chars else ""
    if not negated and text.startswith("^"):
        text = text[1:] + "^" if len(text) > 1 else ""
        if not text:
            return "\\^"
    return f"[{'!' if negated else ''}{text}]"


def git_pattern(line: str) -> Optional[str]:
    """`line` with each bracket expression rewritten to git's meaning (POSIX classes, escapes, a reversed
    range matching only its start); None when git would match nothing with it."""
    if "[" not in line:
        return line
    out, i = [], 0
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line):
            out.append(line[i : i + 2])
            i += 2
        elif c == "[":
            written, i = _bracket(line, i)
            if written is None:
                return None
            if written == "":
                return None  # an empty set: nothing can match
            out.append(written)
        else:
            out.append(c)
            i += 1
    return "".join(out)


class GitIgnore:
    """One .gitignore file, matched with git's own wildmatch semantics (pathspec's gitignore patterns:
    negation, anchors, `**`, dir-only, bracket expressions). A pattern git cannot use matches nothing."""

    def __init__(self, base: Path, lines: Iterable[str]) -> None:
        self.base = base
        self.rules: List[GitIgnoreSpecPattern] = []
        for line in lines:
            rewritten = git_pattern(line)
            if rewritten is None:
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", FutureWarning)  # a literal "[" inside a set
                    pattern = GitIgnoreSpecPattern(rewritten)
            except (ValueError, re.error):
                continue
            if pattern.include is not None and pattern.regex is not None:
                self.rules.append(pattern)

    def ignored(self, rel: str, is_dir: bool) -> Optional[bool]:
        """True/False if a rule decides, None if none applies."""
        # A folder is matched with a trailing slash, so dir-only patterns ("build/") apply to it alone.
        subject = rel + "/" if is_dir else rel
        verdict = None
        for pattern in self.rules:
            if pattern.regex is not None and pattern.regex.match(subject):
                verdict = bool(pattern.include)
        return verdict


def matches_any(rel: str, globs: Sequence[str]) -> bool:
    """Ruff-like exclude semantics: a glob matches the relative path, or any of its parts."""
    if not globs:
        return False
    parts = rel.split("/")
    for glob in globs:
        g = glob.rstrip("/")
        if fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(rel, g + "/*"):
            return True
        if "/" not in g and any(fnmatch.fnmatchcase(p, g) for p in parts):
            return True
        if g.startswith("**/") and fnmatch.fnmatchcase(rel, g[3:]):
            return True
        if g.endswith("/**") and (rel == g[:-3] or rel.startswith(g[:-3] + "/")):
            return True
    return False


def _dangling_reason(path: Path) -> str:
    """Why a symbolic link leads to no file or folder: a loop, a missing target, or a device or FIFO."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
        if exc.errno == errno.ENAMETOOLONG:
            return "path too long"
        return "broken symbolic link"
    return NOT_REGULAR


NOT_REGULAR = "not a regular file or folder (a device, FIFO or socket); skipped"


def _is_venv(path: Path) -> bool:
    try:
        return (path / "pyvenv.cfg").is_file() or (path / "conda-meta").is_dir()
    except OSError:  # a path too long to stat: not a venv, and the walk reports the folder itself
        return False


def discover(
    paths: Sequence[Path],
    root: Path,
    exclude: Sequence[str] = (),
    respect_gitignore: bool = True,
    contain: bool = False,
) -> Tuple[List[Candidate], List[Problem]]:
    """Files to scan (sorted, unique) and paths that could not be read.

    Symbolic links that lead out of `root` are never followed. With `contain` (for `fix`), each
    folder argument is its own boundary: links out of it are skipped and reported as problems.
    """
    found: List[Candidate] = []
    problems: List[Problem] = []
    seen = set()
    root = root.resolve()

    def rel_to_root(p: Path) -> str:
        try:
            return p.resolve().relative_to(root).as_posix()
        except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop before Python 3.13
            return p.as_posix()

    def add(p: Path, kind: str, boundary: Optional[Path] = None) -> None:
        try:
            key = p.resolve()
        except (OSError, RuntimeError):
            key = p.absolute()
        if key not in seen:
            seen.add(key)
            found.append(Candidate(p, kind, boundary))

    for given in paths:
        try:
            st = given.stat()
        except OSError as exc:
            if given.is_symlink():
                problems.append(Problem(given, _dangling_reason(given)))
            elif exc.errno == errno.ENAMETOOLONG:
                problems.append(Problem(given, "path too long"))
            else:
                problems.append(Problem(given, "no such file or directory"))
            continue
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            problems.append(Problem(given, NOT_REGULAR))
            continue
        if stat.S_ISREG(st.st_mode):
            kind = classify(given.name)
            if given.suffix == ".py" or kind is None:
                kind = kind or ("python" if given.suffix in (".py", ".pyi") else None)
            if kind is None:
                continue
            if exclude and matches_any(rel_to_root(given), exclude):
                continue
            add(given, kind)
            continue
        limit = given.resolve() if contain else None
        for path, kind in _walk(given, root, exclude, respect_gitignore, problems, limit):
            add(path, kind, limit)
    found.sort(key=lambda c: c.path.as_posix())
    return found, problems


def _load_gitignores(folder: Path) -> Optional[GitIgnore]:
    gi = folder / ".gitignore"
    try:
        if gi.is_file():
            return GitIgnore(folder, gi.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return None
    return None


def _git_root(start: Path) -> Optional[Path]:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _walk(
    top: Path,
    root: Path,
    exclude: Sequence[str],
    respect_gitignore: bool,
    problems: List[Problem],
    limit: Optional[Path] = None,
) -> Iterator[Tuple[Path, str]]:
    # .gitignore files from the git root down to `top` apply too.
    ignores: List[GitIgnore] = []
    if respect_gitignore:
        top_abs = top.resolve()
        git_root = _git_root(top_abs)
        if git_root is not None:
            chain = [git_root] + [p for p in reversed(top_abs.parents) if git_root in p.parents] + [top_abs]
            seen = set()
            for folder in chain:
                if folder in seen or folder == top_abs:
                    continue
                seen.add(folder)
                gi = _load_gitignores(folder)
                if gi:
                    ignores.append(gi)
    visited = set()
    stack: List[Tuple[Path, List[GitIgnore]]] = [(top, ignores)]
    while stack:
        folder, active = stack.pop()
        try:
            real = folder.resolve()
        except (OSError, RuntimeError) as exc:
            too_long = isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG
            problems.append(Problem(folder, "path too long" if too_long else "symbolic link loop"))
            continue
        if real in visited:
            continue
        visited.add(real)
        if respect_gitignore:
            gi = _load_gitignores(folder)
            if gi:
                active = active + [gi]
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except PermissionError:
            problems.append(Problem(folder, "permission denied"))
            continue
        except OSError as exc:
            problems.append(Problem(folder, exc.strerror or str(exc)))
            continue
        subdirs = []
        for entry in entries:
            path = Path(folder, entry.name)
            name = entry.name
            try:
                is_dir = entry.is_dir()
                is_file = entry.is_file()
            except OSError as exc:
                # A link that points at itself (directly or through others) fails to stat with ELOOP.
                reason = "symbolic link loop" if exc.errno == errno.ELOOP else f"cannot stat: {exc.strerror or exc}"
                problems.append(Problem(path, reason))
                continue
            if entry.is_symlink() and not is_dir and not is_file:
                reason = _dangling_reason(path)
                if reason != NOT_REGULAR or classify(name) is not None:
                    problems.append(Problem(path, reason))
                continue
            if entry.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):
                    problems.append(Problem(path, "symbolic link loop"))
                    continue
                if limit is not None and limit not in target.parents and target != limit:
                    if is_dir or classify(name) is not None:
                        problems.append(Problem(path, f"symbolic link leads out of {top}; not followed"))
                    continue
                if root not in target.parents and target != root:
                    continue  # never follow links out of the scanned project
            rel = rel_to(path, root)
            if _ignored(active, path, is_dir):
                continue
            if exclude and matches_any(rel, exclude):
                continue
            if is_dir:
                if name.startswith(".") or name in SKIP_DIRS or name.endswith(".egg-info") or _is_venv(path):
                    continue
                subdirs.append(path)
            elif is_file:
                kind = classify(name)
                if kind is not None:
                    yield path, kind
        for sub in reversed(subdirs):
            stack.append((sub, active))


def rel_to(path: Path, root: Path) -> str:
    try:
        return path.absolute().relative_to(root).as_posix()
    except ValueError:
        try:
            return path.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            return path.as_posix()


def _ignored(active: List[GitIgnore], path: Path, is_dir: bool) -> bool:
    verdict = False
    for gi in active:
        try:
            rel = path.absolute().relative_to(gi.base.absolute()).as_posix()
        except ValueError:
            continue
        decided = gi.ignored(rel, is_dir)
        if decided is not None:
            verdict = decided
    return verdict
