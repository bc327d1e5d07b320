"""Every fixable rule's own invalid examples, fixed for every target the rule has a fix for: the result
compiles, a second fix changes nothing, the fixed findings are gone, and where the rule states the
expected output (`fixed`), the fix produces exactly that."""

from __future__ import annotations

import pytest

from portcheck.catalog import load_catalog
from portcheck.filetypes import classify
from portcheck.fixer.engine import FixOptions
from test_fix_catalog import findings_in, run_fix

CATALOG = load_catalog()
CASES = [
    (entry.rule.code, target, i, case)
    for entry in CATALOG.rules
    if entry.rule.fixable
    for target in entry.rule.autofix
    for i, case in enumerate(entry.rule.invalid)
    if (classify(case.filename) or "python") == "python"
]


@pytest.mark.parametrize("code,target,index,case", CASES, ids=[f"{c}-{t}-{i}" for c, t, i, _ in CASES])
def test_fixing_a_rules_invalid_example(code, target, index, case):
    result = run_fix(case.code, target, catalog=CATALOG)
    out = result.text
    compile(out, case.filename, "exec")
    assert run_fix(out, target, catalog=CATALOG).text == out, f"not idempotent:\n{out}"
    if case.fixed.get(target) is not None:
        assert out == case.fixed[target]
    if any(f.code == code for f in result.applied):
        options = FixOptions(target=target, unsafe=True)
        before = [f for f in findings_in(case.code, options, CATALOG, path=case.filename) if f.code == code]
        after = [f for f in findings_in(out, options, CATALOG, path=case.filename) if f.code == code]
        assert len(after) < len(before), f"{code} still reported after its fix:\n{out}"


def test_catalog_has_fixable_cases():
    assert len({c for c, *_ in CASES}) >= 5
