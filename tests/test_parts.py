"""Which part of a project a path belongs to: the compiled patterns answer as fnmatch does, pattern by pattern."""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest

from portcheck.parts import DEFAULT_PATTERNS, OTHER_PARTS, PRODUCT, part_of


def _reference(path, patterns=None):
    table = dict(DEFAULT_PATTERNS)
    table.update({k: tuple(v) for k, v in (patterns or {}).items()})
    segments = [s for s in path.replace("\\", "/").split("/") if s not in ("", ".")]

    def matches(pattern):
        pattern = pattern.strip("/")
        if "/" not in pattern:
            return any(fnmatchcase(s, pattern) for s in segments)
        return any(fnmatchcase("/".join(segments[i:]), pattern) for i in range(len(segments)))

    for part in OTHER_PARTS:
        if any(matches(p) for p in table.get(part, ())):
            return part
    return PRODUCT


PATHS = [
    "pkg/model.py", "tests/test_model.py", "pkg/tests/helpers.py", "test_x.py", "x_test.py", "conftest.py",
    "examples/train.py", "examples/tests/test_a.py", "docs/index.md", "README.md", "bench/run.py",
    "src/pkg/testing/util.py", "./pkg/demo.py", "pkg\\win\\tests\\a.py", "notebooks/a.ipynb", "latest.py",
    "contest/a.py", "testament.py", "pkg/benchmarks/x/y.py", "a/b/c.rst",
]
CUSTOM = [None, {"tests": ["src/*/testing/*", "qa"]}, {"examples": []}, {"docs": ["/guide/"], "benchmarks": ["perf*"]}]


@pytest.mark.parametrize("patterns", CUSTOM)
def test_part_of_answers_as_fnmatch_does(patterns):
    for path in PATHS:
        assert part_of(path, patterns) == _reference(path, patterns), path


def test_the_usual_parts():
    assert part_of("pkg/model.py") == PRODUCT
    assert part_of("examples/tests/test_a.py") == "tests"  # a test under examples/ is a test
    assert part_of("src/pkg/testing/util.py", {"tests": ["src/*/testing/*"]}) == "tests"
