"""Every rule's own examples, run by one generic test.

- `bad` must produce the rule and `good` must not (the explanation shown by `portcheck explain`);
- every invalid example of a rule with an autofix is fixed for every target the rule has a fix for,
  unless the case says that target leaves it (`fixed = { xla = false }`): the fix must then not be
  applied, so a case expecting a fix fails when none is applied;
- where a case gives the expected output (`fixed = { generic = "..." }`), the fix produces exactly that;
- the result compiles, a second fix changes nothing, and the fixed finding is gone.

Cases run at the rule's own `min-torch` when it is newer than the default floor: the fix is shown
where the project allows it (and refused below it, see test_fix_recipes).
"""

from __future__ import annotations

import re

import pytest
from test_fix_catalog import _prepared, findings_in, run_fix, skipped_reasons

from portcheck.catalog import load_catalog
from portcheck.filetypes import classify
from portcheck.fixer.engine import FixOptions
from portcheck.fixer.findings import collect
from portcheck.fixer.torchapi import newest
from portcheck.fixkinds import KINDS
from portcheck.model import Target

CATALOG = load_catalog()
CASES = [
    (entry.rule.code, target, i, case)
    for entry in CATALOG.rules
    if entry.rule.autofix
    for target in entry.rule.autofix
    for i, case in enumerate(entry.rule.invalid)
    if (classify(case.filename) or "python") == "python"
]
RULES = {entry.rule.code: entry.rule for entry in CATALOG.rules}


def _min_torch(code: str) -> str:
    return newest(["2.6", RULES[code].min_torch])


@pytest.mark.parametrize("code,target,index,case", CASES, ids=[f"{c}-{t}-{i}" for c, t, i, _ in CASES])
def test_fixing_a_rules_invalid_example(code, target, index, case):
    result = run_fix(case.code, target, catalog=CATALOG, min_torch=_min_torch(code))
    out = result.text
    applied = any(f.code == code for f in result.applied)
    expected = case.fixed.get(target)
    if expected is False:
        assert not applied, f"{code} case {index} says {target} leaves it, but it was fixed:\n{out}"
        return
    assert applied, f"{code} case {index} was not fixed for {target}: {skipped_reasons(result)}"
    compile(out, case.filename, "exec")
    assert run_fix(out, target, catalog=CATALOG, min_torch=_min_torch(code)).text == out, f"not idempotent:\n{out}"
    if isinstance(expected, str):
        assert out == expected
    options = FixOptions(target=target, unsafe=True)
    before = [f for f in findings_in(case.code, options, CATALOG, path=case.filename) if f.code == code]
    after = [f for f in findings_in(out, options, CATALOG, path=case.filename) if f.code == code]
    assert len(after) < len(before), f"{code} still reported after its fix:\n{out}"


def test_every_shipped_recipe_has_an_example_with_its_exact_output():
    shown = {
        RULES[code].autofix[target]["kind"]
        for code, target, _, case in CASES
        if isinstance(case.fixed.get(target), str)
    }
    used = {spec["kind"] for rule in RULES.values() for spec in rule.autofix.values()}
    assert used <= set(KINDS)
    assert used - shown == set(), f"recipes without an example of their exact output: {sorted(used - shown)}"


def _python_rules():
    return [
        code for code, rule in RULES.items()
        if any((classify(case.filename) or "python") == "python" for case in rule.invalid)
    ]


def _scan_target(rule) -> str:
    """A target the rule is on for (XLA rules are off for the generic scan)."""
    from portcheck.model import Severity

    return next(
        t.value for t in (Target.GENERIC, Target.NEURON, Target.XLA) if rule.severity_for(t) is not Severity.OFF
    )


# The explanations show fragments; they run after the imports such code has. Findings on the
# prelude's own lines do not count.
PRELUDE = (
    "import torch\nimport torch.nn as nn\nimport torch.distributed as dist\n"
    "import triton\nimport triton.language as tl\n"
    "import torch_xla\nimport torch_xla.core.xla_model as xm\nfrom torch.utils.data import DataLoader\n"
    "from torch.distributed.device_mesh import init_device_mesh\n"
    "from torch.utils.cpp_extension import CUDAExtension, load_inline\n"
)
LIGHTNING = "import pytorch_lightning as pl\n"
XLA_LOADER = "import torch_xla.distributed.parallel_loader as pl\n"


_FILE_HEADER = re.compile(r"^# (\S+\.py)\n", re.MULTILINE)


def _found_in_project(rule, files: dict) -> list:
    """Findings of `rule` when the example's modules are scanned together as one project."""
    import tempfile
    from pathlib import Path

    from portcheck.config import load_config
    from portcheck.runner import scan_paths

    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            (Path(root) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(root) / name).write_text(text)
        result = scan_paths([Path(root)], load_config(Path(root)), target=_scan_target(rule), cwd=Path(root))
    return [f for f in result.findings if f.code == rule.code]


def _found(rule, snippet: str) -> list:
    """Findings of `rule` in an explanation snippet: Python after the prelude, or, where the snippet is
    not Python (a shell line beside an `os.environ` one), the file kinds of the rule's own cases."""
    files = _FILE_HEADER.split(snippet)
    if len(files) > 1:  # `# pkg/mod.py` lines start each module of a project-wide example
        return _found_in_project(rule, dict(zip(files[1::2], files[2::2])))
    prelude = PRELUDE + (XLA_LOADER if rule.category == "xla" else LIGHTNING)
    skip = prelude.count("\n")
    options = FixOptions(target=_scan_target(rule))
    prepared = _prepared(CATALOG, options.scan_target)
    found, error = collect(prelude + snippet, "example.py", "python", prepared, options.scan_target)
    if error is None:
        return [f for f in found if f.code == rule.code and f.line > skip]
    out = []
    for name in {case.filename for case in rule.invalid} | {"run.sh"}:
        kind = classify(name) or "python"
        if kind != "python":
            out += [f for f in collect(snippet, name, kind, prepared, options.scan_target)[0] if f.code == rule.code]
    return out


@pytest.mark.parametrize("code", _python_rules())
def test_the_explained_bad_example_is_found_and_the_good_one_is_not(code):
    rule = RULES[code]
    assert _found(rule, rule.bad), f"{code}: its `bad` example is not reported:\n{rule.bad}"
    assert not _found(rule, rule.good), f"{code}: its `good` example is reported:\n{rule.good}"
