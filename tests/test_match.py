"""Python matching: import aliases, guards, optional imports, messages, loops and the pre-filter."""

from __future__ import annotations

import ast
import textwrap

import pytest
from helpers import scan_snippet

from portcheck.analyze import GUARD_NOTE, OPTIONAL_NOTE
from portcheck.catalog import load_catalog
from portcheck.model import Severity, Target
from portcheck.prefilter import Prefilter
from portcheck.pyscan.imports import ImportTable, import_statements
from portcheck.pyscan.matchers import MatcherError, build

CATALOG = load_catalog()


def codes(source: str, target: str = "neuron") -> list:
    return [f.code for f in scan_snippet(textwrap.dedent(source), target=target)]


def only(source: str, code: str, target: str = "neuron") -> list:
    return [f for f in scan_snippet(textwrap.dedent(source), target=target) if f.code == code]


def severity(code: str, target: str = "neuron") -> Severity:
    return CATALOG.get(code).severity_for(Target(target))


# -- alias-aware resolution ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "import torch\ntorch.cuda.synchronize()",
        "import torch as t\nt.cuda.synchronize()",
        "from torch import cuda\ncuda.synchronize()",
        "from torch.cuda import synchronize as sync\nsync()",
        "import torch.cuda\ntorch.cuda.synchronize()",
        "import torch.cuda as tc\ntc.synchronize()",
    ],
)
def test_every_import_spelling_resolves_to_the_same_api(source):
    assert codes(source).count("RT001") == 1


@pytest.mark.parametrize(
    "source",
    [
        "cuda = get_backend()\ncuda.synchronize()",
        "def synchronize():\n    pass\nsynchronize()",
        "from .cuda import synchronize\nsynchronize()",
        "import numba\nnumba.cuda.synchronize()",
    ],
)
def test_names_that_are_not_torch_cuda_do_not_match(source):
    assert "RT001" not in codes(source)


def test_import_table_resolves_chains_and_ignores_relative_imports():
    module = ast.parse("import torch as t\nfrom torch.cuda import amp\nfrom . import local\nimport os.path\n")
    table = ImportTable.from_module(module)
    expr = ast.parse("t.cuda.synchronize", mode="eval").body
    assert table.resolve(expr) == "torch.cuda.synchronize"
    assert table.resolve(ast.parse("amp.autocast", mode="eval").body) == "torch.cuda.amp.autocast"
    assert table.resolve(ast.parse("local.f", mode="eval").body) is None
    assert table.resolve(ast.parse("os.path.join", mode="eval").body) == "os.path.join"
    assert table.imports_any(["torch"]) and table.imports_any(["os"]) and not table.imports_any(["numpy"])


def test_imports_inside_functions_try_and_if_blocks_are_found():
    module = ast.parse(
        textwrap.dedent(
            """
            def f():
                try:
                    import flash_attn
                except ImportError:
                    pass
                if x:
                    from apex import amp
                else:
                    import xformers
            """
        )
    )
    names = sorted(a.name for node in import_statements(module) for a in node.names)
    assert names == ["amp", "flash_attn", "xformers"]


def test_torch_module_kept_on_an_object_resolves():
    found = codes(
        """
        import torch
        class Tracker:
            def __init__(self):
                self.torch = torch
            def reset(self):
                self.torch.cuda.reset_peak_memory_stats()
        """
    )
    assert "RT003" in found


def test_torch_attribute_on_an_object_without_torch_imported_does_not_resolve():
    assert "RT003" not in codes("class T:\n    def f(self):\n        self.torch.cuda.reset_peak_memory_stats()\n")


# -- guards ---------------------------------------------------------------------------------------


def test_call_in_a_cuda_branch_with_a_non_cuda_else_is_lowered_with_a_note():
    (finding,) = only(
        """
        import torch
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        else:
            time.sleep(0)
        """,
        "RT001",
    )
    assert finding.severity is severity("RT001").lowered()
    assert finding.guarded and finding.note == GUARD_NOTE


def test_cuda_only_call_under_an_availability_check_is_lowered_and_the_check_dropped():
    # The check only keeps CUDA-only code from running elsewhere: the call cannot raise, and the check
    # is no device fallback.
    findings = scan_snippet(
        "import torch\nif torch.cuda.is_available():\n    torch.cuda.synchronize()\n", target="neuron"
    )
    (finding,) = [f for f in findings if f.code == "RT001"]
    assert finding.severity is severity("RT001").lowered() and finding.guarded and finding.note == GUARD_NOTE
    assert not [f for f in findings if f.code == "DEV005"]


def test_availability_check_that_picks_a_device_is_still_reported():
    findings = scan_snippet(
        "import torch\ndevice = 'cpu'\nif torch.cuda.is_available():\n    device = 'cuda'\n", target="neuron"
    )
    assert [f.line for f in findings if f.code == "DEV005"] == [3]


def test_check_whose_other_branch_does_portable_work_is_a_fallback():
    src = "import torch\nif torch.cuda.is_available():\n    torch.cuda.manual_seed(0)\nelse:\n    world_size = 1\n"
    assert [f.code for f in scan_snippet(src, target="neuron") if f.code == "DEV005"] == ["DEV005"]


@pytest.mark.parametrize(
    "src",
    [
        "import torch\nif torch.cuda.is_available():\n    parts.append('max mem: {m}')\n",
        "import torch\nif torch.cuda.is_available():\n    print(torch.cuda.max_memory_allocated())\n"
        "else:\n    print('no gpu')\n",
        "import torch\nif torch.cuda.is_available():\n    torch.cuda.empty_cache()\n"
        "elif torch.xpu.is_available():\n    torch.xpu.empty_cache()\n",
        "import torch\ndef f(x):\n    if not torch.cuda.is_available():\n        return\n"
        "    torch.cuda.synchronize()\n",
        "import torch\nif x.is_cuda:\n    y = torch.cuda.FloatTensor(m)\n",
        "import torch\nif dev.type == 'cuda':\n    torch.cuda.synchronize()\n",
    ],
)
def test_guards_of_cuda_only_or_display_only_code_are_not_device_checks(src):
    assert not [f for f in scan_snippet(src, target="neuron") if f.code in ("DEV004", "DEV005", "DEV006")]


@pytest.mark.parametrize(
    "src",
    [
        "import unittest, torch\n@unittest.skipIf(not torch.cuda.is_available(), 'needs CUDA')\n"
        "def test_x():\n    pass\n",
        "import pytest, torch\n@pytest.mark.skipif(torch.cuda.device_count() < 2, reason='two GPUs')\n"
        "def test_x():\n    pass\n",
        "import torch\ndef test_x(self):\n    if not torch.cuda.is_available():\n        self.skipTest('no CUDA')\n",
        "import torch\ndef test_x():\n    assert state.device.type in ['cuda', 'cpu']\n",
        "import torch\nclass T:\n    def test_x(self):\n        self.assertEqual(out.device.type, 'cuda')\n",
        "import torch\ndef test_x():\n    if torch.cuda.is_available() and torch.cuda.device_count() > 1:\n"
        "        args = ['--multi_gpu']\n",
    ],
)
def test_test_skips_and_assertions_are_not_device_fallbacks(src):
    assert not [f for f in scan_snippet(src, target="neuron") if f.category == "device"]


def test_cuda_call_in_a_test_body_is_still_reported():
    src = "import torch\ndef test_x():\n    torch.cuda.synchronize()\n"
    assert [f.code for f in scan_snippet(src, target="neuron")] == ["RT001"]


@pytest.mark.parametrize("test", ['x.device.type == "cuda"', "x.is_cuda", "args.cuda", "use_cuda"])
def test_device_checks_and_cuda_flags_count_as_guards(test):
    (finding,) = only(f"import torch\nif {test}:\n    torch.cuda.synchronize()\nelse:\n    pass\n", "RT001")
    assert finding.guarded


def test_ternary_with_a_cuda_test_is_a_guard():
    (finding,) = only("import torch\nn = torch.cuda.device_count() if torch.cuda.is_available() else 0\n", "DEV006")
    assert finding.guarded


def test_early_return_without_cuda_guards_the_rest_of_the_function():
    (finding,) = only(
        """
        import torch
        def timed(fn):
            if not torch.cuda.is_available():
                return fn()
            torch.cuda.synchronize()
            return fn()
        """,
        "RT001",
    )
    assert finding.guarded and finding.severity is severity("RT001").lowered()


def test_early_raise_without_cuda_is_no_fallback():
    (finding,) = only(
        """
        import torch
        def timed(fn):
            if not torch.cuda.is_available():
                raise RuntimeError("needs a GPU")
            torch.cuda.synchronize()
        """,
        "RT001",
    )
    assert not finding.guarded


def test_the_checks_themselves_are_never_lowered():
    (finding,) = only("import torch\nif torch.cuda.is_available():\n    pass\nelse:\n    pass\n", "DEV005")
    assert finding.severity is severity("DEV005") and not finding.guarded
    nested = "import torch\nif torch.cuda.is_available():\n    on_gpu = x.is_cuda\nelse:\n    on_gpu = False\n"
    (check,) = only(nested, "DEV004")
    assert check.severity is severity("DEV004") and not check.guarded


def test_the_cuda_or_cpu_ternary_is_one_availability_finding_not_a_device_string_too():
    found = codes("import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n")
    assert found.count("DEV005") == 1 and "DEV001" not in found


def test_a_user_flag_ternary_is_a_choice_and_keeps_the_device_strings_severity():
    # `--cuda` picks CUDA or the CPU: elsewhere the only choice is the CPU, and nothing else reports it
    (finding,) = only("device = 'cuda' if args.cuda else 'cpu'\n", "DEV001")
    assert not finding.guarded and finding.severity is severity("DEV001")
    (finding,) = only("device = 'cpu' if args.no_cuda else 'cuda'\n", "DEV001")
    assert not finding.guarded and finding.severity is severity("DEV001")


# -- optional imports -------------------------------------------------------------------------------


def test_import_with_an_import_error_fallback_is_one_level_lower():
    (finding,) = only(
        """
        try:
            from flash_attn import flash_attn_func
        except ImportError:
            flash_attn_func = None
        """,
        "PKG002",
    )
    assert finding.severity is severity("PKG002").lowered()
    assert finding.note == OPTIONAL_NOTE


@pytest.mark.parametrize(
    "test",
    [
        "is_flash_attn_2_available()",
        "importlib.util.find_spec('flash_attn')",
        "is_deepspeed_zero3_enabled()",
        "HAS_FLASH_ATTN",
    ],
)
def test_import_under_an_availability_or_config_check_is_one_level_lower(test):
    source = f"if {test}:\n    from flash_attn import flash_attn_func\n"
    source += "\ndef attend(q):\n    return flash_attn_func(q, q, q)\n"  # used: an unused import is `info`
    (finding,) = only(source, "PKG002")
    assert finding.severity is severity("PKG002").lowered()


def test_unconditional_import_keeps_its_severity():
    (finding,) = only("import flash_attn\n", "PKG002")
    assert finding.severity is severity("PKG002") and not finding.guarded


def test_blocker_import_with_a_fallback_is_no_longer_a_blocker():
    (finding,) = only("try:\n    import triton\nexcept ImportError:\n    triton = None\n", "PKG006")
    assert severity("PKG006") is Severity.BLOCKER and finding.severity is Severity.MAJOR


# -- messages, docstrings, comments, annotations -----------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "print('set CUDA_VISIBLE_DEVICES=0')",
        "logger.warning('CUDA_VISIBLE_DEVICES is ignored')",
        "raise RuntimeError('CUDA_VISIBLE_DEVICES must be set')",
        "parser.add_argument('--gpus', help='like CUDA_VISIBLE_DEVICES')",
        "@pytest.mark.skipif(True, reason='needs CUDA_VISIBLE_DEVICES')\ndef test_x():\n    pass",
        "def f():\n    'Reads CUDA_VISIBLE_DEVICES.'\n",
        "# os.environ['CUDA_VISIBLE_DEVICES'] = '0'\nx = 1",
        "assert ok, 'CUDA_VISIBLE_DEVICES is empty'",
    ],
)
def test_prose_strings_are_not_matched(source):
    assert "DEV007" not in codes(source)


def test_memory_figures_only_shown_are_lowered():
    # Memory readers return 0 without CUDA: a figure printed or formatted for people is still reported,
    # one level lower, and the fallback rule does not report it again.
    for source in (
        "import torch\nprint(f'peak {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB')",
        "import torch\nmem = f'{torch.cuda.memory_reserved() / 1e9:.3g}G'",
    ):
        found = [f for f in scan_snippet(source, "example.py", "neuron") if f.code in ("RT003", "RT000")]
        assert [(f.code, f.severity.value) for f in found] == [("RT003", "info")], (source, found)
        assert "only shown" in found[0].note
    found = [f for f in scan_snippet("import torch\nif torch.cuda.max_memory_allocated() > 9:\n    shrink()")]
    assert [(f.code, f.severity.value, f.note) for f in found] == [("RT003", "minor", "")]


def test_the_same_string_in_code_is_matched():
    assert "DEV007" in codes("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'")


def test_calls_inside_a_message_still_run_and_are_matched():
    assert "RT007" in codes("import torch\nprint(f'gpu {torch.cuda.get_device_properties(0).name}')")
    assert "RT000" in codes("import torch\nlogger.info('summary: %s', torch.cuda.memory_summary())")


def test_a_rule_can_opt_out_of_messages():
    assert "ENV002" not in codes("import torch\nprint('cuda', torch.version.cuda)")
    assert "ENV002" in codes("import torch\nok = torch.version.cuda >= '11.8'")


def test_type_annotations_are_not_uses():
    found = codes("import torch\ndef f(stream: torch.cuda.Stream) -> torch.cuda.Event:\n    return None\n")
    assert "RT006" not in found
    assert "RT006" in codes("import torch\ns: torch.cuda.Stream = torch.cuda.Stream()\n")


# -- loops -----------------------------------------------------------------------------------------------


TRAIN = """
import torch
for step, batch in enumerate(loader):
    loss = model(batch)
    loss.backward()
    optimizer.step()
    {line}
"""


def test_host_sync_in_a_training_loop_is_reported():
    assert len(only(TRAIN.format(line="total += loss.item()"), "XLA005")) == 1


def test_host_sync_every_k_steps_is_not():
    assert not only(TRAIN.format(line="if step % 100 == 0:\n        print(loss.item())"), "XLA005")


def test_host_sync_outside_loops_is_not():
    assert not only("import torch\nacc = (pred == y).float().mean().item()\n", "XLA005")


def test_a_chain_of_syncs_is_one_finding():
    assert len(only(TRAIN.format(line="out = loss.detach().cpu().numpy()"), "XLA005")) == 1


def test_host_sync_rule_is_off_for_the_generic_target():
    assert not only(TRAIN.format(line="total += loss.item()"), "XLA005", target="generic")


# -- integer devices ------------------------------------------------------------------------------------


def test_integer_device_counts_only_where_the_file_uses_cuda():
    assert only("import torch\ntorch.cuda.set_device(local_rank)\nmodel.to(local_rank)\n", "DEV008")
    assert not only("model.to(local_rank)\n", "DEV008")


def test_integer_device_semantics_on_the_installed_torch():
    """DEV008's explanation says a bare ordinal means the current accelerator on current torch."""
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "accelerator") or not hasattr(torch.accelerator, "current_accelerator"):
        pytest.skip("torch.accelerator is missing (torch < 2.6)")
    if torch.accelerator.is_available():
        assert torch.device(0).type == torch.accelerator.current_accelerator().type
    else:
        with pytest.raises(RuntimeError):
            torch.device(0)


# -- targets ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code,neuron,xla,generic",
    [
        ("KRN003", "blocker", "blocker", "major"),  # Triton runs on AMD GPUs, not on Neuron or XLA
        ("PKG004", "major", "major", "minor"),  # bitsandbytes has AMD/XPU/Apple/CPU backends, no Neuron or XLA
        ("XLA004", "major", "major", "off"),  # only static-shape compilers recompile per shape
        ("XLA013", "major", "off", "info"),  # torch_xla's own API is right on the XLA target
    ],
)
def test_severity_depends_on_the_target(code, neuron, xla, generic):
    rule = CATALOG.get(code)
    assert [rule.severity_for(Target(t)).value for t in ("neuron", "xla", "generic")] == [neuron, xla, generic]


def test_a_rule_off_for_a_target_does_not_run_for_it():
    source = "import torch\nidx = torch.nonzero(mask)\n"
    assert "XLA004" in codes(source, target="neuron") and "XLA004" not in codes(source, target="generic")


# -- the pre-filter and matcher validation ----------------------------------------------------------------


def test_every_rule_has_prefilter_tokens():
    open_ended = [e.rule.code for e in CATALOG.rules for m in e.matchers if not m.tokens()]
    assert not open_ended, f"rules that would force every Python file to be parsed: {open_ended}"


@pytest.mark.parametrize("entry", [e for e in CATALOG.rules if e.matchers], ids=lambda e: e.rule.code)
def test_prefilter_keeps_every_invalid_example_of_a_rule(entry):
    """A rule's tokens must be necessary: each of its own Python examples contains one."""
    prefilter = Prefilter([entry])
    for case in entry.rule.invalid:
        if case.filename.endswith(".py"):
            assert prefilter.candidates(case.code), f"{entry.rule.code}: no token found in\n{case.code}"


@pytest.mark.parametrize(
    "table,problem",
    [
        ({"kind": "call"}, "names"),
        ({"kind": "call", "names": ["a.b"], "argument": {"keyword": "x", "colour": 1}}, "argument.colour"),
        ({"kind": "reference", "names": ["a"], "context": "sideways"}, "context"),
        ({"kind": "method", "names": ["x"], "inside": "class"}, "inside"),
        ({"kind": "string", "pattern": "("}, "pattern"),
        ({"kind": "device-string", "devices": ["cuda"], "positions": ["nowhere"]}, "nowhere"),
        ({"kind": "nonsense"}, "nonsense"),
        ({"kind": "reference", "names": ["a"], "in-guards": "no"}, "in-guards"),
        ({"kind": "reference", "names": ["a"], "messages": "sometimes"}, "messages"),
        ({"kind": "reference", "names": ["a"], "in_compare": 0}, "in_compare"),
    ],
)
def test_malformed_matcher_tables_name_the_problem(table, problem):
    with pytest.raises(MatcherError, match=problem):
        build(table)


def test_method_call_spanning_lines_is_reported_at_the_method_name():
    (finding,) = only("import torch\nloss = Loss(\n    dim,\n    temp,\n).cuda()\n", "DEV002")
    assert (finding.line, finding.column, finding.end_line) == (5, 3, 5)


def test_method_call_on_one_line_keeps_its_span():
    (finding,) = only("import torch\nmodel = Net().cuda()\n", "DEV002")
    assert (finding.line, finding.column) == (2, 9)


@pytest.mark.parametrize(
    "src",
    [
        "import unittest, torch\nclass T(unittest.TestCase):\n"
        "    @unittest.skipIf(not torch.cuda.is_available(), 'CUDA')\n"
        "    def test_x(self):\n        m = Net().cuda()\n",
        "import torch\n@require_torch_gpu\nclass T:\n    def test_x(self):\n"
        "        x = torch.randn(3, device='cuda')\n",
        "import torch\ndef test_x():\n    assert torch.allclose(a.cpu(), b)\n",
        "import torch\ndef _test_merge(a, b):\n    assert torch.isfinite(a).all()\n",
    ],
)
def test_code_of_tests_that_only_run_with_cuda_is_not_reported(src):
    assert not scan_snippet(src, target="neuron")


def test_a_skip_for_another_reason_keeps_the_findings():
    src = (
        "import sys, unittest\n@unittest.skipIf(sys.platform == 'win32', 'posix only')\n"
        "def test_x():\n    m = Net().cuda()\n"
    )
    assert [f.code for f in scan_snippet(src, target="neuron")] == ["DEV002"]


_TPU_BRANCH = """from transformers.utils import is_torch_tpu_available
if is_torch_tpu_available(check_device=False):
    import torch_xla.core.xla_model as xm
class Trainer:
    def log(self):
        if is_torch_tpu_available():
            xm.mark_step()
"""


def test_xla_rules_in_a_torch_xla_branch_speak_to_the_xla_target_only():
    # The branch only runs with torch_xla: no lock-in for native Neuron, but the XLA target still uses it.
    assert [f.code for f in scan_snippet(_TPU_BRANCH, target="neuron") if f.code == "XLA011"] == []
    assert [f.code for f in scan_snippet(_TPU_BRANCH, target="xla") if f.code == "XLA011"] == ["XLA011"]


@pytest.mark.parametrize(
    "source,lowered",
    [
        ("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = ''", True),
        ("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '-1'", True),
        ("def test_cpu(monkeypatch):\n    monkeypatch.setenv('CUDA_VISIBLE_DEVICES', '')", True),
        ("cmd = 'CUDA_VISIBLE_DEVICES= python t.py'", True),
        ("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'", False),
        ("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = gpus", False),
        ("import os\ngpus = os.environ.get('CUDA_VISIBLE_DEVICES', '')", False),
        ("cmd = f'CUDA_VISIBLE_DEVICES={gpu} python t.py'", False),
        ("cmd = 'CUDA_VISIBLE_DEVICES=1 python t.py'", False),
    ],
)
def test_a_key_set_to_a_value_that_turns_cuda_off_is_lowered(source, lowered):
    [found] = [f for f in scan_snippet(source, target="neuron") if f.code == "DEV007"]
    assert (found.severity is Severity.INFO) == lowered, found
    assert ("turns the CUDA setting off" in found.note) == lowered, found.note
