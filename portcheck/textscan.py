"""Matcher kinds for files that are not Python: dependency lists, Dockerfiles, shell, CMake, CUDA sources.

Each works line by line on text with comments removed, so a `# nvidia/cuda` comment never matches.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Type

from portcheck.filetypes import KINDS
from portcheck.pyscan.matchers import MatcherError, _str_list

# (line, column, end_line, end_column, label); 1-based lines, 1-based columns
TextHit = Tuple[int, int, int, int, str]

_TEXT_KINDS = frozenset(KINDS) | {"setup-py"}
_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_QUOTED = re.compile(r"""(["'])([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;@ ][^"']*)?\1""")
_CONDA_ITEM = re.compile(r"^\s*-\s*(?:[\w.-]+::)?([A-Za-z0-9][A-Za-z0-9._-]*)")


def normalize(name: str) -> str:
    """PEP 503 name normalisation."""
    return re.sub(r"[-_.]+", "-", name).lower()


def strip_comment(line: str, kind: str) -> str:
    """The line without a trailing comment (a `#` at the start or after whitespace)."""
    if kind in ("cuda",):
        return line
    if kind == "cmake" or kind in ("requirements", "dockerfile", "shell", "conda", "pyproject", "setup-py"):
        stripped = line.lstrip()
        if stripped.startswith("#") and not stripped.startswith("#!"):
            return ""
        idx = line.find(" #")
        if idx != -1 and kind in ("requirements", "conda", "dockerfile"):
            return line[:idx]
    return line


class TextMatcher:
    kind = ""
    allowed_keys = frozenset({"files"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        unknown = set(params) - set(self.allowed_keys) - {"kind"}
        if unknown:
            raise MatcherError(f"unknown key '{sorted(unknown)[0]}' for matcher kind '{self.kind}'")
        self.files = frozenset(_str_list(params, "files"))
        bad = self.files - _TEXT_KINDS
        if bad:
            raise MatcherError(f"unknown file kind '{sorted(bad)[0]}' in 'files' (known: {', '.join(sorted(_TEXT_KINDS))})")

    def applies(self, kind: str) -> bool:
        return kind in self.files

    def scan(self, kind: str, lines: Sequence[str]) -> Iterator[TextHit]:
        raise NotImplementedError


class LineMatcher(TextMatcher):
    """A regular expression searched on every line (comments removed)."""

    kind = "line"
    allowed_keys = frozenset({"files", "pattern", "ignore-case"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        pattern = params.get("pattern")
        if not isinstance(pattern, str):
            raise MatcherError("missing key 'pattern'")
        try:
            self.pattern = re.compile(pattern, re.IGNORECASE if params.get("ignore-case") else 0)
        except re.error as exc:
            raise MatcherError(f"'pattern' is not a valid regular expression: {exc}") from None

    def scan(self, kind: str, lines: Sequence[str]) -> Iterator[TextHit]:
        for number, line in enumerate(lines, 1):
            text = strip_comment(line, kind)
            if not text:
                continue
            m = self.pattern.search(text)
            if m:
                yield number, m.start() + 1, number, m.end() + 1, m.group(0)


class RequirementMatcher(TextMatcher):
    """A dependency on one of `packages` in requirements, pyproject, conda or setup.py files."""

    kind = "requirement"
    allowed_keys = frozenset({"files", "packages"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        self.packages = frozenset(normalize(p) for p in _str_list(params, "packages"))
        self._prefixes = tuple(p[:-1] for p in self.packages if p.endswith("*"))

    def _wanted(self, name: str) -> bool:
        norm = normalize(name)
        return norm in self.packages or (bool(self._prefixes) and norm.startswith(self._prefixes))

    def scan(self, kind: str, lines: Sequence[str]) -> Iterator[TextHit]:
        for number, line in enumerate(lines, 1):
            text = strip_comment(line, kind)
            if not text.strip():
                continue
            if kind == "requirements":
                if text.lstrip().startswith("-"):
                    continue
                m = _REQ_NAME.match(text)
                if m and self._wanted(m.group(1)):
                    yield number, m.start(1) + 1, number, m.end(1) + 1, m.group(1)
            elif kind == "conda":
                m = _CONDA_ITEM.match(text)
                if m and self._wanted(m.group(1)):
                    yield number, m.start(1) + 1, number, m.end(1) + 1, m.group(1)
            else:  # pyproject / setup-py: quoted requirement strings
                for m in _QUOTED.finditer(text):
                    if self._wanted(m.group(2)):
                        yield number, m.start(2) + 1, number, m.end(2) + 1, m.group(2)


class FileMatcher(TextMatcher):
    """The whole file is the finding (a `.cu` source): one finding at line 1, labelled with its line count."""

    kind = "file"

    def scan(self, kind: str, lines: Sequence[str]) -> Iterator[TextHit]:
        yield 1, 1, 1, 1, f"{len(lines)} lines"


TEXT_MATCHERS: Dict[str, Type[TextMatcher]] = {m.kind: m for m in (LineMatcher, RequirementMatcher, FileMatcher)}


def build_text(params: Mapping[str, Any]) -> TextMatcher:
    return TEXT_MATCHERS[params["kind"]](params)
