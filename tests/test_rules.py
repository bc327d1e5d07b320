"""One generic test runs every rule's embedded valid and invalid cases."""

import pytest

from helpers import first_target, scan_snippet
from portcheck.catalog import load_catalog

CATALOG = load_catalog()
VALID = [(e.rule.code, i, c) for e in CATALOG.rules for i, c in enumerate(e.rule.valid)]
INVALID = [(e.rule.code, i, c) for e in CATALOG.rules for i, c in enumerate(e.rule.invalid)]


@pytest.mark.parametrize("code,index,case", VALID, ids=[f"{c}-valid-{i}" for c, i, _ in VALID])
def test_valid_case_is_not_flagged(code, index, case):
    target = first_target(code)
    found = [f for f in scan_snippet(case.code, case.filename, target.value) if f.code == code]
    assert not found, f"{code} flagged valid case {index}:\n{case.code}\n{found}"


@pytest.mark.parametrize("code,index,case", INVALID, ids=[f"{c}-invalid-{i}" for c, i, _ in INVALID])
def test_invalid_case_is_flagged(code, index, case):
    target = first_target(code)
    found = [f for f in scan_snippet(case.code, case.filename, target.value) if f.code == code]
    assert len(found) == case.count, f"{code} invalid case {index}: expected {case.count}, got {len(found)}:\n{case.code}\n{found}"


def test_every_rule_has_valid_and_invalid_cases():
    missing = [e.rule.code for e in CATALOG.rules if not e.rule.valid or not e.rule.invalid]
    assert not missing, f"rules without both valid and invalid cases: {missing}"
