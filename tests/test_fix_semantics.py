"""The semantics contract (docs/fixing.md), case by case with the shipped catalog: on CUDA the fixed
code does what it did; on the CPU and on another accelerator it runs. Each refusal is asserted with
its reason, each rewrite with its exact output."""

from __future__ import annotations

import textwrap

import pytest
from test_fix_catalog import run_fix, skipped_reasons

from portcheck.catalog import load_catalog

CATALOG = load_catalog()
RESOLVE = (
    'DEVICE = torch.device(torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu")'
)


def fix(source: str, target: str = "generic", **options):
    return run_fix(textwrap.dedent(source).lstrip("\n"), target, catalog=CATALOG, unsafe=True, **options)


def reasons(result, code: str):
    return [why for c, why in skipped_reasons(result) if c == code]


def left_alone(source: str, result, code: str, because: str = "") -> bool:
    """The check stays for a stated reason: either the scan does not report it at all (it guards
    CUDA-only work, so it is no fallback to rewrite) or the fixer skipped it saying why."""
    from test_fix_catalog import findings_in

    from portcheck.fixer.engine import FixOptions

    source = textwrap.dedent(source).lstrip("\n")
    reported = [f for f in findings_in(source, FixOptions(target="generic", unsafe=True), CATALOG) if f.code == code]
    return not reported or any(because in why for why in reasons(result, code))


@pytest.mark.parametrize(
    "source,reason",
    [
        (
            "import torch\nif torch.cuda.is_available():\n    print(torch.cuda.max_memory_allocated())\n",
            "max_memory_allocated",
        ),
        ("import torch\nok = torch.cuda.is_available() and torch.cuda.is_bf16_supported()\n", "is_bf16_supported"),
        ("import torch\nbackend = 'nccl' if torch.cuda.is_available() else 'other'\n", "'nccl'"),
        (
            "import unittest\nimport torch\n"
            "@unittest.skipIf(not torch.cuda.is_available(), 'CUDA required')\ndef test(): pass\n",
            "skip",
        ),
        (
            "import pytest\nimport torch\n"
            "@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs a GPU')\ndef test(): pass\n",
            "skip",
        ),
        ("import torch\nassert torch.cuda.is_available(), 'CUDA is required'\n", "assert"),
        (
            "import torch\nfrom torch.utils.cpp_extension import CUDAExtension\n"
            "if torch.cuda.is_available():\n    ext = CUDAExtension('x', ['x.cu'])\n",
            "CUDAExtension",
        ),
    ],
)
def test_an_availability_check_guarding_cuda_only_work_is_not_widened(source, reason):
    result = fix(source)
    assert result.text.count("torch.cuda.is_available()") == source.count("torch.cuda.is_available()")
    assert left_alone(source, result, "DEV005", reason), skipped_reasons(result)


def test_setup_py_checks_decide_extension_builds_and_stay():
    source = "import torch\nif torch.cuda.is_available():\n    ext_modules = []\n"
    from test_fix_catalog import findings_in, rules_of

    from portcheck.fixer.engine import FixOptions, fix_text

    options = FixOptions(target="generic", unsafe=True)
    result = fix_text(
        source, findings_in(source, options, CATALOG, path="setup.py"), rules_of(CATALOG), options, path="setup.py"
    )
    assert result.text == source
    assert any("setup.py" in why for _, why in skipped_reasons(result))


def test_a_check_guarding_only_fixed_work_is_rewritten_with_it():
    result = fix(
        """
        import torch
        if torch.cuda.is_available():
            model = model.cuda()
        """
    )
    assert (
        result.text
        == f"import torch\n\n{RESOLVE}\nif torch.accelerator.is_available():\n    model = model.to(DEVICE)\n"
    )


def test_synchronize_keyword_device_is_passed_by_position():
    # torch.accelerator.synchronize(device, /): a keyword would raise TypeError on every accelerator.
    result = fix("import torch\ntorch.cuda.synchronize(device=dev)\n")
    assert "torch.accelerator.synchronize(dev)" in result.text


def test_a_rename_with_an_argument_the_new_api_lacks_is_refused():
    result = fix("import torch\ntorch.cuda.synchronize(dev, extra=1)\n")
    assert "torch.cuda.synchronize" in result.text
    assert any("no parameter" in why or "at most" in why for why in reasons(result, "RT001"))


def test_synchronize_beside_cuda_memory_statistics_stays():
    source = (
        "import torch\ntorch.cuda.reset_peak_memory_stats()\ntorch.cuda.synchronize()\n"
        "print(torch.cuda.max_memory_allocated())\n"
    )
    result = fix(source)
    assert result.text == source
    assert any("memory" in why and "no fix here rewrites" in why for why in reasons(result, "RT001"))


def test_memory_statistics_are_fixed_as_a_unit_where_min_torch_allows():
    source = (
        "import torch\ntorch.cuda.reset_peak_memory_stats()\ntorch.cuda.synchronize()\n"
        "print(torch.cuda.max_memory_allocated() / 1e9)\n"
    )
    result = fix(source, min_torch="2.9")
    assert "torch.cuda" not in result.text
    # Inside an expression the statistic is 0 without an accelerator, so the arithmetic still runs.
    assert "(torch.accelerator.max_memory_allocated() if torch.accelerator.is_available() else 0) / 1e9" in result.text


@pytest.mark.parametrize(
    "source,expected",
    [
        ("import torch\ntorch.manual_seed(0)\ntorch.cuda.manual_seed(0)\n", "import torch\ntorch.manual_seed(0)\n"),
        (
            "import torch\ntorch.cuda.manual_seed(s)\ntorch.cuda.manual_seed_all(s)\n",
            "import torch\ntorch.manual_seed(s)\n",
        ),
        (
            "import torch\ntorch.cuda.manual_seed_all(1)\ntorch.manual_seed(2)\n",
            "import torch\ntorch.manual_seed(1)\ntorch.manual_seed(2)\n",
        ),
    ],
)
def test_seeding_is_not_duplicated(source, expected):
    assert fix(source).text == expected


def test_pinned_memory_branch_stays_false_on_the_cpu():
    result = fix(
        """
        import torch
        def f(x, device_type):
            if device_type == 'cuda':
                x = x.pin_memory().to(device_type, non_blocking=True)
            return x
        """
    )
    assert 'if device_type != "cpu":' in result.text


def test_is_cuda_guarding_pinning_becomes_a_cpu_test():
    result = fix("import torch\ndef f(x):\n    if x.is_cuda:\n        x = x.pin_memory()\n    return x\n")
    assert 'if x.device.type != "cpu":' in result.text


def test_a_comparison_guarding_cuda_only_work_stays():
    source = "import torch\ndef f(device):\n    if device == 'cuda':\n        print(torch.cuda.get_device_name())\n"
    result = fix(source)
    assert "device == 'cuda'" in result.text
    assert left_alone(source, result, "DEV004")


def test_a_device_selection_comparison_is_rewritten():
    result = fix("import torch\ndef f(device):\n    return torch.autocast('cuda') if 'cuda' in device else None\n")
    assert "DEVICE.type in device" in result.text


def test_format_template_names_the_device_type_as_a_field():
    result = fix("import torch\nx = torch.zeros(1).to('cuda:{}'.format(rank))\n")
    assert "'{}:{}'.format(DEVICE.type, rank)" in result.text
    assert "{{" not in result.text


@pytest.mark.parametrize(
    "head",
    [
        "from . import a\nimport os\nfrom .b import c\n",
        "import os\nfrom .b import c\ntry:\n    import yaml\nexcept ImportError:\n    yaml = None\n",
        "from __future__ import annotations\nfrom .b import c\n",
    ],
)
def test_inserted_imports_go_after_every_existing_import(head):
    result = fix(head + "x = c.to('cuda')\n")
    assert result.text.startswith(head + "import torch\n")


def test_nccl_or_gloo_is_the_default_backend_of_the_device():
    result = fix("import torch\nbackend = 'nccl' if torch.cuda.is_available() else 'gloo'\n")
    assert "backend = torch.distributed.get_default_backend_for_device(DEVICE)\n" in result.text


def test_backend_enum_nccl_is_fixed():
    result = fix("import torch.distributed as dist\ndist.init_process_group(dist.Backend.NCCL)\n")
    assert "dist.init_process_group(torch.distributed.get_default_backend_for_device(DEVICE))" in result.text


def test_safetensors_checkpoints_load_on_the_cpu_for_xla():
    result = fix('import safetensors.torch\nsd = safetensors.torch.load_file(p, device="cuda")\n', "xla")
    assert 'load_file(p, device="cpu")' in result.text


def test_a_device_type_derived_from_a_string_keeps_other_accelerators():
    # "neuron" in a config must not turn into "cpu" (autocast silently off).
    result = fix("import torch\ndevice_type = 'cuda' if 'cuda' in device else 'cpu'\n")
    assert result.text == "import torch\ndevice_type = torch.device(device).type\n"


def test_safetensors_gets_the_device_as_a_string():
    result = fix('import safetensors.torch\nsd = safetensors.torch.load_file(p, device="cuda")\n')
    assert "load_file(p, device=DEVICE.type)" in result.text


def test_a_check_guarding_a_cuda_profiler_activity_stays():
    source = (
        "import torch\nactivities = [torch.profiler.ProfilerActivity.CPU]\n"
        "if torch.cuda.is_available():\n    activities.append(torch.profiler.ProfilerActivity.CUDA)\n"
    )
    result = fix(source)
    assert result.text == source
    # the check only adds CUDA's activity to the profiler's: it guards CUDA-only work, no fallback to rewrite
    assert left_alone(source, result, "DEV005", because="ProfilerActivity.CUDA")


def test_cuda_work_inside_an_f_string_and_a_cuda_helper_keep_the_check():
    for source in (
        "import torch\nif torch.cuda.is_available():\n    print(f'capability {torch.cuda.get_device_capability()}')\n",
        "import torch\nif torch.cuda.is_available() and not check_cuda_fp8_capability():\n    pass\n",
    ):
        result = fix(source)
        assert result.text == source, result.text
        assert left_alone(source, result, "DEV005")


def test_device_count_is_a_cuda_check_and_is_classified_like_one():
    source = "import torch\nif torch.cuda.device_count() > 1:\n    devices.append(f'cuda:{n}')\n"
    result = fix(source)
    assert result.text == source, result.text
    assert left_alone(source, result, "DEV006")


def test_a_check_that_skips_because_cuda_is_required_stays():
    source = (
        "import torch\nimport unittest\ndef test():\n    if not torch.cuda.is_available():\n"
        "        raise unittest.SkipTest('requires CUDA')\n    run()\n"
    )
    result = fix(source)
    assert result.text == source
    assert left_alone(source, result, "DEV005", "CUDA itself")


# -- CUDA device strings held in a variable, and pinned memory: the fixed code runs on this CPU torch ----


def _run_fixed(source: str, target: str = "generic") -> dict:
    """Fix `source`, then execute it here (CPU-only torch); returns its globals."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available() or torch.accelerator.is_available():
        pytest.skip("the CPU path is what this checks")
    result = fix(source, target)
    scope: dict = {}
    exec(compile(result.text, "<fixed>", "exec"), scope)
    return {"text": result.text, **scope}


@pytest.mark.parametrize(
    "assignment",
    ['loc = f"cuda:{rank}"', 'loc = "cuda:" + str(rank)', 'loc = "cuda:{}".format(rank)', 'loc = "cuda:0"'],
)
@pytest.mark.parametrize("target", ["generic", "cpu"])
def test_a_cuda_device_variable_reaching_map_location_loads_on_the_cpu(assignment, target):
    source = f"""
    import io
    import torch


    def load(rank):
        buffer = io.BytesIO()
        torch.save(torch.ones(2), buffer)
        buffer.seek(0)
        {assignment}
        return torch.load(buffer, map_location=loc).to(loc)


    result = load(0)
    """
    out = _run_fixed(source, target)
    assert 'if DEVICE.type != "cpu" else "cpu"' in out["text"]
    assert out["result"].device.type == "cpu"


def test_a_device_variable_also_read_as_a_string_is_left_with_the_reason():
    result = fix(
        """
        import torch
        def load(path, rank):
            loc = f"cuda:{rank}"
            print(loc)
            return torch.load(path, map_location=loc)
        """
    )
    assert "loc = f\"cuda:{rank}\"" in result.text
    assert reasons(result, "DEV013") == ["`loc` is also used where its value is read as a string"]


def test_pinned_batches_are_pinned_only_where_an_accelerator_is():
    out = _run_fixed(
        """
        import torch
        x, y = torch.ones(2), torch.zeros(2)
        batch = {"a": torch.ones(3)}
        x, y = x.pin_memory().to("cuda", non_blocking=True), y.pin_memory()
        batch = {k: v.pin_memory() for k, v in batch.items()}
        """
    )
    assert "x.pin_memory() if torch.accelerator.is_available() else x" in out["text"]
    assert out["x"].device.type == "cpu" and not out["y"].is_pinned() and not out["batch"]["a"].is_pinned()


@pytest.mark.parametrize(
    "source",
    [
        (
            "import torch\ncaps = []\nfor i in range(torch.cuda.device_count()):\n"
            "    caps.append(torch.cuda.get_device_capability(i))\n"
        ),
        "import torch\ncaps = [torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())]\n",
    ],
)
def test_a_device_count_bounding_a_loop_of_cuda_only_work_stays(source):
    # a loop over the CUDA devices never runs without CUDA; over the accelerator's, the CUDA query would raise
    result = fix(source, "neuron")
    assert "torch.cuda.device_count()" in result.text, result.text
    assert any("get_device_capability" in why for why in reasons(result, "DEV006")), skipped_reasons(result)


def test_a_device_count_bounding_a_loop_of_fixed_work_is_rewritten_with_it():
    result = fix(
        """
        import torch
        for i in range(torch.cuda.device_count()):
            torch.cuda.set_device(i)
        """,
        "neuron",
    )
    assert result.text == (
        "import torch\nfor i in range(torch.accelerator.device_count()):\n"
        "    if torch.accelerator.is_available():\n        torch.accelerator.set_device_index(i)\n"
    ), result.text
