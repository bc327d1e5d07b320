"""One generic test runs every rule's embedded valid and invalid cases."""

import re
from pathlib import Path

import pytest
from helpers import first_target, scan_snippet

from portcheck.catalog import load_catalog
from portcheck.config import Config
from portcheck.runner import scan_paths

CATALOG = load_catalog()
# Rules whose findings come from the project-wide pass: their cases are scanned as a project.
PROJECT_RULES = frozenset(e.rule.code for e in CATALOG.rules if any(m.kind == "project" for m in e.text_matchers))
_FILE_MARK = re.compile(r"^# file: (\S+)\n", re.MULTILINE)


def split_files(code: str, filename: str):
    """A case's files: `# file: path` lines start each one; without them the case is one file."""
    parts = _FILE_MARK.split(code)
    if len(parts) == 1:
        return {filename: code}
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def scan_case(case, code: str, target: str, tmp_path: Path):
    """Findings of rule `code` in the case's file (`case.filename`)."""
    files = split_files(case.code, case.filename)
    if code not in PROJECT_RULES and len(files) == 1:
        return [f for f in scan_snippet(case.code, case.filename, target) if f.code == code]
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    result = scan_paths([tmp_path], Config(respect_gitignore=False), target=target, cwd=tmp_path, jobs=1)
    return [f for r in result.files if r.path == case.filename for f in r.findings if f.code == code]
VALID = [(e.rule.code, i, c) for e in CATALOG.rules for i, c in enumerate(e.rule.valid)]
INVALID = [(e.rule.code, i, c) for e in CATALOG.rules for i, c in enumerate(e.rule.invalid)]


@pytest.mark.parametrize("code,index,case", VALID, ids=[f"{c}-valid-{i}" for c, i, _ in VALID])
def test_valid_case_is_not_flagged(code, index, case, tmp_path):
    target = first_target(code)
    found = scan_case(case, code, target.value, tmp_path)
    assert not found, f"{code} flagged valid case {index}:\n{case.code}\n{found}"


@pytest.mark.parametrize("code,index,case", INVALID, ids=[f"{c}-invalid-{i}" for c, i, _ in INVALID])
def test_invalid_case_is_flagged(code, index, case, tmp_path):
    target = first_target(code)
    found = scan_case(case, code, target.value, tmp_path)
    assert len(found) == case.count, (
        f"{code} invalid case {index}: expected {case.count}, got {len(found)}:\n{case.code}\n{found}"
    )
    if case.note:
        assert all(case.note in f.note for f in found), f"{code} invalid case {index}: notes {[f.note for f in found]}"


def test_every_rule_has_valid_and_invalid_cases():
    missing = [e.rule.code for e in CATALOG.rules if not e.rule.valid or not e.rule.invalid]
    assert not missing, f"rules without both valid and invalid cases: {missing}"
