"""A small rule catalog with one rule per autofix kind, so fix tests do not depend on how the shipped
catalog words its rules; plus checks that the shipped catalog only asks for fixes that exist."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from portcheck.catalog import Catalog, load_catalog, load_files
from portcheck.fixer.engine import FixOptions, TextFix, fix_text
from portcheck.fixer.findings import collect, prepare
from portcheck.fixer.recipes import RECIPES
from portcheck.model import Finding, Rule

_HEAD = """
[[rule]]
code = "{code}"
name = "{name}"
category = "{category}"
severity = "major"
summary = "{name}"
why = "test rule"
bad = "x"
good = "y"
fix = "z"
fix-safety = "{safety}"
"""

_ALL = ("generic", "cpu", "neuron", "xla")


def _rule(
    code: str, name: str, match: str, autofix: Optional[Dict[str, str]], safety: str = "safe", category: str = "device"
) -> str:
    text = _HEAD.format(code=code, name=name, category=category, safety=safety) + f"match = {match}\n"
    if autofix:
        text += "autofix = { " + ", ".join(f"{t} = {spec}" for t, spec in autofix.items()) + " }\n"
    return text


def _same(spec: str, targets=_ALL) -> Dict[str, str]:
    return {t: spec for t in targets}


_POSITIONS = (
    '["to", "device-call", "parameter-default", "assignment", "argparse-default", "dict-value", '
    '"set-default-device", "device-keyword"]'
)

CATALOG_TOML = "".join(
    [
        _rule(
            "TST001",
            "device-string",
            f'{{ kind = "device-string", devices = ["cuda"], positions = {_POSITIONS} }}',
            _same('{ kind = "device-string" }'),
        ),
        _rule("TST002", "dot-cuda", '{ kind = "method", names = ["cuda"] }', _same('{ kind = "dot-cuda" }')),
        _rule(
            "TST003",
            "device-compare",
            '[{ kind = "device-compare", devices = ["cuda"] }, { kind = "attribute", names = ["is_cuda"] }]',
            _same('{ kind = "device-compare" }'),
            safety="unsafe",
        ),
        _rule(
            "TST004",
            "availability",
            '{ kind = "call", names = ["torch.cuda.is_available"] }',
            _same('{ kind = "availability" }'),
            category="runtime",
        ),
        _rule(
            "TST005",
            "synchronize",
            '{ kind = "call", names = ["torch.cuda.synchronize"] }',
            {
                **_same(
                    '{ kind = "rename-call", to = "torch.accelerator.synchronize", guard = true }',
                    ("generic", "cpu", "neuron"),
                ),
                "xla": '{ kind = "rename-call", to = "torch_xla.sync" }',
            },
            category="runtime",
        ),
        _rule(
            "TST006",
            "seed",
            '{ kind = "reference", names = ["torch.cuda.manual_seed", "torch.cuda.manual_seed_all"] }',
            _same('{ kind = "rename-call", to = "torch.manual_seed" }'),
            category="runtime",
        ),
        _rule(
            "TST007",
            "empty-cache",
            '{ kind = "call", names = ["torch.cuda.empty_cache"] }',
            _same(
                '{ kind = "rename-call", to = "torch.accelerator.empty_cache", guard = true }',
                ("generic", "cpu", "neuron"),
            ),
            category="runtime",
        ),
        _rule(
            "TST008",
            "set-device",
            '{ kind = "reference", names = ["torch.cuda.set_device"] }',
            _same(
                '{ kind = "rename-call", to = "torch.accelerator.set_device_index", guard = true }',
                ("generic", "cpu", "neuron"),
            ),
            category="distributed",
        ),
        _rule(
            "TST009",
            "old-autocast",
            '{ kind = "reference", names = ["torch.cuda.amp.autocast"] }',
            _same('{ kind = "autocast" }'),
            category="amp",
        ),
        _rule(
            "TST010",
            "autocast-device",
            '{ kind = "device-string", devices = ["cuda"], positions = ["autocast"] }',
            _same('{ kind = "autocast" }'),
            category="amp",
        ),
        _rule(
            "TST011",
            "old-grad-scaler",
            '{ kind = "reference", names = ["torch.cuda.amp.GradScaler"] }',
            {"all": '{ kind = "grad-scaler" }'},
            category="amp",
        ),
        _rule(
            "TST012",
            "old-custom-fwd",
            '{ kind = "reference", names = ["torch.cuda.amp.custom_fwd", "torch.cuda.amp.custom_bwd"] }',
            _same('{ kind = "custom-fwd" }'),
            category="amp",
        ),
        _rule(
            "TST013",
            "nccl",
            '{ kind = "call", names = ["torch.distributed.init_process_group"], '
            'argument = { keyword = "backend", position = 0, values = ["nccl"] } }',
            _same('{ kind = "process-group-backend" }'),
            category="distributed",
        ),
        _rule(
            "TST014",
            "int-device",
            '{ kind = "int-device", positions = ["to", "device-call", "device-keyword", "device-map", "device-ids"] }',
            _same('{ kind = "int-device" }'),
            safety="unsafe",
        ),
        _rule(
            "TST015",
            "pin-memory-device",
            '{ kind = "call", names = ["torch.utils.data.DataLoader"], '
            'argument = { keyword = "pin_memory_device", present = true } }',
            _same('{ kind = "remove-keyword", keyword = "pin_memory_device" }'),
            category="runtime",
        ),
        _rule(
            "TST016",
            "cudagraphs",
            '{ kind = "call", names = ["torch.compile"], argument = { keyword = "backend", values = ["cudagraphs"] } }',
            _same('{ kind = "replace-string", value = "inductor" }'),
            category="runtime",
        ),
        _rule(
            "TST017",
            "map-location",
            '{ kind = "device-string", devices = ["cuda"], positions = ["map-location"] }',
            _same('{ kind = "map-location" }'),
        ),
        _rule(
            "TST018",
            "current-stream",
            '{ kind = "call", names = ["torch.cuda.current_stream"] }',
            _same(
                '{ kind = "rename-call", to = "torch.accelerator.current_stream", drop-args = true }',
                ("generic", "cpu"),
            ),
            category="runtime",
        ),
        _rule(
            "TST019",
            "device-name",
            '{ kind = "call", names = ["torch.cuda.get_device_name"] }',
            None,
            safety="none",
            category="runtime",
        ),
        _rule(
            "TST020",
            "tensor-type",
            '{ kind = "reference", names = ["torch.cuda.FloatTensor", "torch.cuda.HalfTensor"] }',
            {"all": '{ kind = "default-tensor-type" }'},
        ),
        _rule(
            "TST021",
            "pin-memory",
            '{ kind = "call", names = ["torch.utils.data.DataLoader"], '
            'argument = { keyword = "pin_memory_device", present = true } }',
            {"all": '{ kind = "pin-memory" }'},
            category="runtime",
        ),
        _rule(
            "TST022",
            "device-variable",
            '{ kind = "string", pattern = "^cuda:(?:\\\\d+|\\\\{[^}]*\\\\}|%[sd])?$" }',
            {"all": '{ kind = "device-variable" }'},
        ),
    ]
)


@lru_cache(maxsize=1)
def synthetic_catalog() -> Catalog:
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="portcheck-fix-catalog-"))
    path = folder / "fixtest.toml"
    path.write_text(CATALOG_TOML, encoding="utf-8")
    return load_files([path])


def rules_of(catalog: Catalog) -> Dict[str, Rule]:
    return {e.rule.code: e.rule for e in catalog.rules}


_PREPARED: Dict[Tuple[int, str], Tuple[Catalog, object]] = {}


def _prepared(catalog: Catalog, target):
    key = (id(catalog), target.value)
    if key not in _PREPARED:
        _PREPARED[key] = (catalog, prepare(catalog, target))  # the catalog is kept so its id stays unique
    return _PREPARED[key][1]


def findings_in(
    source: str, options: FixOptions, catalog: Optional[Catalog] = None, kind: str = "python", path: str = "example.py"
) -> List[Finding]:
    catalog = catalog or synthetic_catalog()
    found, error = collect(source, path, kind, _prepared(catalog, options.scan_target), options.scan_target)
    assert error is None, error
    return found


def run_fix(
    source: str, target: str = "generic", unsafe: bool = True, catalog: Optional[Catalog] = None, **options
) -> TextFix:
    """Fix `source` with the synthetic catalog (or `catalog`)."""
    catalog = catalog or synthetic_catalog()
    opts = FixOptions(target=target, unsafe=unsafe, **options)
    return fix_text(source, findings_in(source, opts, catalog), rules_of(catalog), opts)


def fixed(source: str, target: str = "generic", **options) -> str:
    return run_fix(source, target, **options).text


def skipped_reasons(result: TextFix) -> List[Tuple[str, str]]:
    return [(f.code, reason) for f, reason in result.skipped]


# -- the catalogs ----------------------------------------------------------------------------------


def test_synthetic_catalog_covers_every_recipe_kind():
    kinds = {spec["kind"] for e in synthetic_catalog().rules for spec in e.rule.autofix.values()}
    assert kinds == set(RECIPES)


SHIPPED = [(e.rule.code, t, spec) for e in load_catalog().rules for t, spec in e.rule.autofix.items()]


@pytest.mark.parametrize("code,target,spec", SHIPPED, ids=[f"{c}-{t}" for c, t, _ in SHIPPED])
def test_shipped_autofix_names_a_known_recipe_with_its_parameters(code, target, spec):
    assert isinstance(spec, dict) and spec.get("kind") in RECIPES, f"{code}: autofix.{target} has unknown kind {spec!r}"
    required = {"rename-call": "to", "remove-keyword": "keyword", "replace-string": "value"}.get(spec["kind"])
    if required:
        assert isinstance(spec.get(required), str) and spec[required], f"{code}: autofix.{target} lacks '{required}'"


# -- the catalog refuses recipe settings it cannot honour ---------------------------------------------


def _load_one(tmp_path, autofix: str):
    from portcheck.catalog import CatalogError

    path = tmp_path / "bad.toml"
    path.write_text(
        _rule("BAD001", "bad", '{ kind = "call", names = ["torch.cuda.synchronize"] }', None)
        + f"autofix = {autofix}\n",
        encoding="utf-8",
    )
    with pytest.raises(CatalogError) as info:
        load_files([path])
    return str(info.value)


@pytest.mark.parametrize(
    "autofix,key,words",
    [
        (
            '{ generic = { kind = "rename-call", tto = "torch.accelerator.synchronize" } }',
            "autofix.generic.tto",
            "no parameter 'tto'",
        ),
        ('{ generic = { kind = "rename-call" } }', "autofix.generic.to", "needs 'to'"),
        ('{ generic = { kind = "rename-call", to = "x", guard = "yes" } }', "autofix.generic.guard", "expected a bool"),
        ('{ gpu = { kind = "dot-cuda" } }', "autofix.gpu", "unknown fix target"),
        ('{ generic = { kind = "no-such-recipe" } }', "autofix.generic.kind", "unknown recipe"),
        ('{ xla = { kind = "grad-scaler" } }', "autofix.xla", "does not support target 'xla'"),
    ],
)
def test_the_catalog_refuses_bad_recipe_settings_with_file_rule_and_key(tmp_path, autofix, key, words):
    message = _load_one(tmp_path, autofix)
    assert message.startswith("bad.toml: rule BAD001: ") and f"key '{key}'" in message and words in message, message


def test_the_catalog_refuses_a_device_recipe_for_devices_it_cannot_rewrite(tmp_path):
    # The matcher's pattern comes from the rule's `devices`; the device-string recipe rewrites CUDA strings
    # only, so a rule that also matches "mps" strings and names that recipe would promise fixes never made.
    from portcheck.catalog import CatalogError

    path = tmp_path / "bad.toml"
    match = '{ kind = "device-string", devices = ["cuda", "mps"], positions = ["to"] }'
    path.write_text(_rule("BAD001", "bad", match, None) + 'autofix = { all = { kind = "device-string" } }\n', "utf-8")
    with pytest.raises(CatalogError) as info:
        load_files([path])
    message = str(info.value)
    assert message.startswith("bad.toml: rule BAD001: key 'autofix.") and "'mps'" in message, message
    path.write_text(path.read_text("utf-8").replace('"cuda", "mps"', '"cuda", "cuda:0"'), "utf-8")
    assert load_files([path])  # CUDA spellings with an index are the recipe's own


def test_all_is_the_same_recipe_on_every_target_it_supports_and_a_named_target_overrides_it():
    from portcheck.fixkinds import expand

    table = expand({"all": {"kind": "grad-scaler"}})
    assert set(table) == {"generic", "cpu", "neuron"}  # the scaler recipe has no XLA rewrite
    table = expand({"all": {"kind": "dot-cuda"}, "xla": {"kind": "rename-call", "to": "torch_xla.sync"}})
    assert table["generic"] == {"kind": "dot-cuda"} and table["xla"]["kind"] == "rename-call"


def test_every_declared_recipe_kind_has_a_transform():
    from portcheck.fixkinds import KINDS

    assert set(KINDS) == set(RECIPES)
