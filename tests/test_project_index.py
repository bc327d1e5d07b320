"""The project-wide pass: summaries, import resolution, CUDA-bound closure, sites and dependents."""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import pytest
from helpers import scan_tree

from portcheck.config import Config
from portcheck.project_index import (
    DEFINER_PATTERN,
    ModuleSummary,
    Project,
    dependents,
    index_project,
    may_define,
    module_name,
    resolve,
    sites,
    summarize,
)
from portcheck.pyscan.testcode import kernel_test_paths
from portcheck.runner import scan_paths

KERNELS = """\
import triton
import triton.language as tl

@triton.jit
def _add_kernel(x_ptr, n):
    pass

def add(x):
    _add_kernel[(1,)](x, x.numel())
    return x

def reference(x):
    return x + x
"""

LAYER = """\
from ..ops.kernels import add, reference

class Layer:
    def forward(self, x):
        return add(x)

def portable(x):
    return reference(x)
"""

MODEL = """\
from pkg.layers.layer import Layer, portable
import pkg.layers.layer as layer_mod

def build():
    return Layer()

y = layer_mod.portable(1)
"""

TEXTS = {
    "pkg/__init__.py": "",
    "pkg/ops/__init__.py": "",
    "pkg/ops/kernels.py": KERNELS,
    "pkg/layers/__init__.py": "",
    "pkg/layers/layer.py": LAYER,
    "pkg/model.py": MODEL,
    "scripts/other.py": "import numpy as np\nprint(np.zeros(3))\n",
}


def test_module_names_from_paths():
    assert module_name("pkg/ops/kernels.py") == ("pkg.ops.kernels", False)
    assert module_name("pkg/__init__.py") == ("pkg", True)
    # scanning `../repo` from a folder beside it: the parent steps are no part of the name
    assert module_name("../../repo/pkg/k.py") == ("repo.pkg.k", False)


def test_closure_over_wrappers_and_classes_across_modules():
    project, resolved, summaries = index_project(TEXTS)
    assert ("pkg.ops.kernels", "_add_kernel") in resolved.kernels
    bound = {s for s in resolved.bound if s[0] != "<ext>"}
    assert bound == {
        ("pkg.ops.kernels", "_add_kernel"),
        ("pkg.ops.kernels", "add"),
        ("pkg.layers.layer", "Layer"),
        ("pkg.model", "build"),
    }
    # Files that cannot take part are never parsed.
    assert "scripts/other.py" not in summaries


def test_sites_are_imports_calls_and_launches_with_positions():
    project, resolved, summaries = index_project(TEXTS)
    by_module = {s.module: sites(s, project, resolved) for s in summaries.values()}
    kernels = by_module["pkg.ops.kernels"]
    assert [(s.kind, s.label, s.span[:2]) for s in kernels] == [("launch", "_add_kernel", (9, 5))]
    layer = by_module["pkg.layers.layer"]
    assert sorted((s.kind, s.span[0]) for s in layer) == [("call", 5), ("import", 1)]
    model = by_module["pkg.model"]
    # `portable` reaches only the reference path: not CUDA-bound, not reported.
    assert [(s.kind, s.label) for s in model] == [("call", "Layer"), ("import", "pkg.layers.layer.Layer")]


def test_a_changed_module_invalidates_its_importers_only():
    summaries = [summarize(t, p) for p, t in TEXTS.items()]
    assert dependents(summaries, ["pkg.ops.kernels"]) == {"pkg.ops.kernels", "pkg.layers.layer", "pkg.model"}
    assert dependents(summaries, ["pkg.model"]) == {"pkg.model"}


def test_summaries_are_reused_from_the_cache():
    cache: dict = {}
    index_project(TEXTS, cache)
    filled = dict(cache)
    assert filled
    index_project(TEXTS, cache)
    assert cache == filled  # nothing parsed again: same keys, same objects
    changed = dict(TEXTS, **{"pkg/model.py": MODEL + "\nz = 2\n"})
    index_project(changed, cache)
    assert len(cache) == len(filled) + 1


def test_a_guarded_use_does_not_make_the_caller_cuda_bound():
    texts = {
        "ops.py": (
            "import selective_scan_cuda\ndef fwd(x):\n    if x.is_cuda:\n        return selective_scan_cuda.fwd(x)\n"
            "    return x\n"
        ),
        "model.py": "from ops import fwd\ny = fwd(1)\n",
    }
    project, resolved, summaries = index_project(texts)
    assert ("ops", "fwd") not in resolved.bound
    (site,) = sites(summaries["ops.py"], project, resolved)[:1]
    assert site.kind == "call" and site.guarded


def test_display_and_fallback_uses_do_not_make_a_function_cuda_bound():
    texts = {
        "det/__init__.py": "",
        "det/ops.py": (
            "from torch.utils.cpp_extension import load\n_ext = load('ops', sources=['ops.cu'])\n"
            "def version():\n    return _ext.version()\n"
        ),
        "det/info.py": (
            "from torch.utils.cpp_extension import CUDA_HOME\n"
            "def collect_env_info():\n    import det._C as _C\n    return _C.get_cuda_version()\n"
            "def compiler():\n    try:\n        import det._C as _C\n    except ImportError:\n        return None\n"
            "    else:\n        return _C.get_compiler_version()\n"
            "def deferred():\n    try:\n        import det._C as _C\n    except ImportError as err:\n"
            "        deferred.err = err\n"
        ),
        "det/engine.py": (
            "import logging\nfrom det.ops import version\nfrom det.info import collect_env_info\n"
            "def default_setup():\n    logging.info('ops %s', version())\n    print(collect_env_info())\n"
            "def build():\n    return version()\n"
        ),
    }
    project, resolved, summaries = index_project(texts)
    bound = {s for s in resolved.bound if s[0] != "<ext>"}
    # Printed or logged values, a display function, an import with a fallback: no dependency of the caller.
    assert ("det.engine", "default_setup") not in bound
    assert ("det.info", "collect_env_info") not in bound
    assert ("det.info", "compiler") not in bound
    # A handler that keeps the error to raise it later is no fallback; a returned value is a real use.
    assert {("det.info", "deferred"), ("det.engine", "build"), ("det.ops", "version")} <= bound


def test_a_module_level_import_with_a_fallback_is_guarded_unless_the_handler_imports_it_again():
    texts = {
        "pkg/__init__.py": "",
        "pkg/ngram.py": (
            "try:\n    from pkg import ngram_cuda\n    BUILT = True\nexcept ImportError:\n    BUILT = False\n"
        ),
        "pkg/builder.py": "try:\n    from pkg import ngram_cuda\nexcept ImportError:\n    import ngram_cuda\n",
    }
    project, resolved, summaries = index_project(texts)

    def imports(path):
        return sorted((s.span[0], s.guarded) for s in sites(summaries[path], project, resolved) if s.kind == "import")

    assert imports("pkg/ngram.py") == [(2, True)]  # the module imports and works without the extension
    assert imports("pkg/builder.py") == [(2, False), (4, False)]  # either way it needs one


def test_a_method_the_class_only_calls_under_a_condition_does_not_bind_the_class():
    ext = "import ngram_cuda\nclass Block:\n    def cuda_path(self, x):\n        return ngram_cuda.forward(x)\n"
    texts = {
        "fast.py": (
            ext
            + "    def forward(self, x):\n        if self.fast:\n"
            + "            return self.cuda_path(x)\n        return x\n"
        ),
        "eager.py": ext + "    def forward(self, x):\n        return self.cuda_path(x)\n",
    }
    project, resolved, summaries = index_project(texts)
    assert ("fast", "Block") not in resolved.bound
    assert ("eager", "Block") in resolved.bound
    (call,) = [s for s in sites(summaries["fast.py"], project, resolved) if s.kind == "call"]
    assert call.guarded  # what the optional fast path calls is lowered, as under a CUDA check


def test_what_a_function_reached_only_under_a_cuda_check_calls_is_lowered_even_when_it_calls_itself():
    # stylegan's ops: `_op_cuda()` builds an autograd class whose methods call the plugin (and whose backward
    # applies `_op_cuda()` again); the product only reaches it under `if x.device.type == "cuda"`.
    plugin = (
        "import torch\nfrom torch.utils import cpp_extension\n_plugin = None\n"
        "def _init():\n    global _plugin\n    _plugin = cpp_extension.load('op_plugin', sources=['op.cu'])\n"
        "    return True\n"
        "def _op_cuda(gain=1):\n    class OpCuda(torch.autograd.Function):\n"
        "        @staticmethod\n        def forward(ctx, x):\n            return _plugin.op(x, gain)\n"
        "        @staticmethod\n        def backward(ctx, dy):\n            return _op_cuda(gain).apply(dy)\n"
        "    return OpCuda\n"
    )
    guarded = (
        "def op(x):\n    if x.device.type == 'cuda' and _init():\n"
        "        return _op_cuda().apply(x)\n    return x * 2\n"
    )
    eager = "def op(x):\n    _init()\n    return _op_cuda().apply(x)\n"
    for entry, expect in ((guarded, True), (eager, False)):
        project, resolved, summaries = index_project({"ops.py": plugin + entry})
        calls = [s for s in sites(summaries["ops.py"], project, resolved) if s.label == "_plugin.op"]
        assert calls and all(s.guarded is expect for s in calls), (expect, calls)


@pytest.mark.parametrize("guarded", [True, False])
def test_a_kernel_built_only_where_cuda_is_available_has_a_path_without_it(tmp_path: Path, guarded):
    # yangxy/GPEN `face_model/op/upfirdn2d.py`: the extension is built only under `torch.cuda.is_available()`,
    # and `upfirdn2d()` runs `upfirdn2d_native()` elsewhere
    load = "op = load('upfirdn2d', sources=[os.path.join(path, 'upfirdn2d_kernel.cu')])\n"
    build = f"if torch.cuda.is_available():\n    {load}" if guarded else load
    (tmp_path / ".git").mkdir()
    (tmp_path / "op").mkdir()
    (tmp_path / "op" / "__init__.py").write_text("")
    (tmp_path / "op" / "upfirdn2d.py").write_text(
        "import os\nimport torch\nfrom torch.utils.cpp_extension import load\npath = os.path.dirname(__file__)\n"
        + build
        + "def upfirdn2d(x):\n    if torch.cuda.is_available() and x.device.type != 'cpu':\n"
        "        return op.upfirdn2d(x)\n    return x * 2\n"
    )
    (tmp_path / "op" / "upfirdn2d_kernel.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n")
    (tmp_path / "run.py").write_text("from op.upfirdn2d import upfirdn2d\nprint(upfirdn2d(1))\n")
    result = scan_paths([tmp_path], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    (kernel,) = [f for r in result.files if r.path == "op/upfirdn2d_kernel.cu" for f in r.findings]
    assert kernel.code == "KRN002" and (kernel.severity.value == "major") is guarded, kernel


def test_a_name_each_branch_imports_from_another_module_is_the_import_before_it():
    # cszn/KAIR `models/select_network.py`: `from models.network_rvrt import RVRT as net` in one branch,
    # `from models.network_rrdb import RRDB as net` in another; `init_weights(net)` takes a parameter
    texts = {
        "models/__init__.py": "",
        "models/ops.py": "from torch.utils.cpp_extension import load\next = load('op', sources=['op.cu'])\n",
        "models/network_rvrt.py": (
            "from models.ops import ext\nclass RVRT:\n    def forward(self, x):\n        return ext.op(x)\n"
        ),
        "models/network_rrdb.py": "class RRDB:\n    def forward(self, x):\n        return x\n",
        "models/select_network.py": (
            "def define_G(name):\n"
            "    if name == 'rrdb':\n        from models.network_rrdb import RRDB as net\n        g = net()\n"
            "    elif name == 'rvrt':\n        from models.network_rvrt import RVRT as net\n        g = net()\n"
            "    return g\n"
            "def init_weights(net):\n    net.apply(1)\n"
        ),
    }
    project, resolved, summaries = index_project(texts)
    found = sorted((s.kind, s.span[0]) for s in sites(summaries["models/select_network.py"], project, resolved))
    assert found == [("call", 7), ("import", 6)], found


def test_an_absolute_import_does_not_resolve_to_a_nested_package_of_the_same_name():
    # `import triton` in a project with `pkg/ops/triton/` is the third-party package.
    summaries = [
        summarize("", "pkg/__init__.py"),
        summarize("", "pkg/ops/__init__.py"),
        summarize("", "pkg/ops/triton/__init__.py"),
    ]
    project = Project(summaries)
    assert project.find_module("triton") is None
    assert project.find_module("pkg.ops.triton") == "pkg.ops.triton"
    assert resolve(summaries).bound == frozenset()


def test_package_findings_on_the_projects_own_imports_are_dropped(tmp_path: Path):
    (tmp_path / "mamba_ssm").mkdir()
    (tmp_path / "mamba_ssm" / "__init__.py").write_text("")
    (tmp_path / "mamba_ssm" / "ops.py").write_text("def f():\n    return 1\n")
    (tmp_path / "use.py").write_text("from mamba_ssm.ops import f\nimport triton\n")
    result = scan_paths([tmp_path], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    found = [(f.line, f.code) for r in result.files if r.path == "use.py" for f in r.findings]
    assert (2, "PKG006") in found and not [c for line, c in found if line == 1]


def test_package_findings_naming_the_project_in_notebooks_and_requirements_are_dropped(tmp_path: Path):
    # NVIDIA/TransformerEngine: its docs notebooks import `transformer_engine`, an example's requirements
    # install it; a notebook's `import triton` and another package's pin are still reported
    import json

    (tmp_path / "transformer_engine").mkdir()
    (tmp_path / "transformer_engine" / "__init__.py").write_text("")
    (tmp_path / "docs").mkdir()
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "source": ["import transformer_engine.pytorch as te\n", "import triton\n"]}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "docs" / "primer.ipynb").write_text(json.dumps(notebook))
    (tmp_path / "docs" / "requirements.txt").write_text("transformer_engine[pytorch]>=2.0\nflash-attn\n")
    result = scan_paths([tmp_path], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    found = sorted((r.path, f.line, f.code) for r in result.files for f in r.findings if f.category == "package")
    assert found == [("docs/primer.ipynb", 2, "PKG006"), ("docs/requirements.txt", 2, "PKG002")], found


def test_imports_of_a_package_that_builds_an_extension_at_import_are_reported():
    texts = {
        "op/__init__.py": "from .fused_act import fused_act\n",
        "op/fused_act.py": (
            "from torch.utils.cpp_extension import load\nfused = load('f', sources=['f.cpp', 'f.cu'])\n"
            "def fused_act(x):\n    if x.device.type == 'cpu':\n        return x\n    return fused.act(x)\n"
        ),
        "swagan.py": "from op import fused_act\ny = 1\n",
    }
    project, resolved, summaries = index_project(texts)
    assert "op" in resolved.at_import and "swagan.py" in summaries
    assert [(s.kind, s.span[0]) for s in sites(summaries["swagan.py"], project, resolved)] == [("import", 1)]


@pytest.mark.parametrize("guarded", [True, False])
def test_a_package_that_tries_to_import_a_building_module_builds_nothing_when_imported(guarded):
    # NVIDIA/NeMo: `nemo.lightning` and `nemo.collections.*` import their fused kernels in `try:` blocks whose
    # `except ImportError:` carries on; importing the package does not need the build
    importing = "from .fused_act import fused_act\n"
    if guarded:
        importing = "try:\n    from .fused_act import fused_act\nexcept ImportError:\n    fused_act = None\n"
    texts = {
        "op/__init__.py": importing,
        "op/fused_act.py": (
            "from torch.utils.cpp_extension import load\nfused = load('f', sources=['f.cpp', 'f.cu'])\n"
            "def fused_act(x):\n    return fused.act(x)\n"
        ),
        "generate.py": "import op\ny = 1\n",
    }
    project, resolved, summaries = index_project(texts)
    assert "op.fused_act" in resolved.at_import
    assert ("op" in resolved.at_import) is not guarded


@pytest.mark.parametrize("switched", [True, False])
def test_a_build_behind_an_environment_switch_is_optional(switched):
    # BlinkDL/ChatRWKV's `rwkv/model.py`: the kernels build only with `RWKV_CUDA_ON=1`; torch code otherwise
    load = "load('wkv', sources=['wkv.cu'])\n"
    build = f"if os.environ.get('RWKV_CUDA_ON') == '1':\n    {load}" if switched else load
    texts = {
        "rwkv/__init__.py": "",
        "rwkv/model.py": "import os\nfrom torch.utils.cpp_extension import load\n" + build + "class RWKV:\n    pass\n",
        "chat.py": "from rwkv.model import RWKV\ny = 1\n",
    }
    project, resolved, summaries = index_project(texts)
    assert ("rwkv.model" in resolved.at_import) is not switched
    found = sites(summaries["chat.py"], project, resolved) if "chat.py" in summaries else []
    assert bool(found) is not switched


def test_the_message_of_an_import_of_a_module_that_builds_at_import_says_why(tmp_path: Path):
    (tmp_path / "op").mkdir()
    (tmp_path / "op" / "__init__.py").write_text("from .fused_act import fused_act\n")
    (tmp_path / "op" / "fused_act.py").write_text(
        "from torch.utils.cpp_extension import load\nfused = load('f', sources=['f.cpp', 'f.cu'])\n"
        "def fused_act(x):\n    if x.device.type == 'cpu':\n        return x * 2\n"
        "    else:\n        return fused.act(x)\n"
    )
    result = scan_paths([tmp_path], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    messages = [f.message for r in result.files if r.path == "op/__init__.py" for f in r.findings]
    assert messages and all(m.count("`") % 2 == 0 for m in messages), messages
    assert "`op.fused_act` (import; it builds or loads a CUDA extension when imported)" in messages[0], messages


@pytest.mark.parametrize(
    "text",
    [
        "import triton\n",
        "x = 'tritonic'\n",
        "from torch.utils import cpp_extension\n",
        "importlib.import_module(name)\n",
        "from . import _C\n",
        "import os, my_cuda_ops\n",
        "reimport _C\n",
        "from pkg import _ext\n",
        "_C = 1\nimport os\n",
        "import foo_C\n",
        "x = 1\n",
        "import _Cx\n",
        "import\t_ext\n",
        "from torch.utils.ffi import _wrap_function\n",
    ],
)
def test_the_fast_definer_test_agrees_with_its_pattern(text):
    assert may_define(text) == bool(DEFINER_PATTERN.search(text))


# whisper's layout: a Triton kernel module, and a wrapper the product calls only in a `try` that falls
# back to the CPU (or under `x.is_cuda`); a test calls the wrapper directly.
FALLBACK_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/triton_ops.py": (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef dtw_kernel(x, n):\n    pass\n"
    ),
    "pkg/timing.py": (
        "import subprocess\nimport warnings\n\n\n"
        "def dtw_cuda(x):\n    from .triton_ops import dtw_kernel\n\n    dtw_kernel[(1,)](x, 1)\n    return x\n\n\n"
        "def dtw(x):\n    if x.is_cuda:\n        try:\n            return dtw_cuda(x)\n"
        "        except (RuntimeError, subprocess.CalledProcessError):\n"
        "            warnings.warn('falling back')\n    return x.cpu()\n"
    ),
    "tests/test_timing.py": "from pkg.timing import dtw_cuda\n\n\ndef test_dtw():\n    dtw_cuda(1)\n",
}


def _fallback_findings(tmp_path: Path, texts):
    for name, text in texts.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = scan_paths([tmp_path], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    return {(r.path, f.line, f.code): f for r in result.files for f in r.findings}


def test_a_kernel_reached_only_from_a_fallback_is_lowered_where_it_is_imported_launched_and_defined(tmp_path: Path):
    found = _fallback_findings(tmp_path, FALLBACK_PROJECT)
    kernel = [f for (path, _, _), f in found.items() if path in ("pkg/timing.py", "pkg/triton_ops.py")]
    assert {(p, line) for p, line, _ in found if p != "tests/test_timing.py"} >= {
        ("pkg/timing.py", 6), ("pkg/timing.py", 8), ("pkg/triton_ops.py", 1), ("pkg/triton_ops.py", 5)
    }, sorted(found)
    assert kernel and all(f.guarded and f.severity.value != "blocker" and "lowered" in f.note for f in kernel)


def test_a_kernel_the_product_also_calls_without_a_fallback_keeps_its_severity(tmp_path: Path):
    texts = dict(FALLBACK_PROJECT)
    texts["pkg/align.py"] = "from .timing import dtw_cuda\n\n\ndef align(x):\n    return dtw_cuda(x)\n"
    found = _fallback_findings(tmp_path, texts)
    for key in (("pkg/timing.py", 6, "KRN009"), ("pkg/triton_ops.py", 5, "KRN003")):
        assert key in found and not found[key].guarded and found[key].severity.value == "blocker", key
    # the launch is another use of the kernel the import at line 6 brings in
    launch = found[("pkg/timing.py", 8, "KRN009")]
    assert not launch.guarded and launch.severity.value == "info" and "first on line 6" in launch.note, launch


# stylegan's layout: a plugin loader, and an op module whose `_init()` builds `act.cu` only under a CUDA
# check, before the reference implementation.
PLUGIN_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/custom_ops.py": (
        "import os\nimport torch.utils.cpp_extension\n\n\ndef get_plugin(name, sources, **kw):\n"
        "    os.environ['TORCH_CUDA_ARCH_LIST'] = ''\n"
        "    return torch.utils.cpp_extension.load(name=name, sources=sources, **kw)\n"
    ),
    "pkg/ops/__init__.py": "",
    "pkg/ops/act.py": (
        "import os\nimport torch\nfrom .. import custom_ops\n\n_plugin = None\n\n\ndef _init():\n    global _plugin\n"
        "    _plugin = custom_ops.get_plugin('act', sources=['act.cpp', 'act.cu'], headers=['act.h'],\n"
        "        extra_cuda_cflags=['--use_fast_math'])\n    return True\n\n\n"
        "def act(x):\n    if x.device.type == 'cuda' and _init():\n        return _plugin.act(x)\n"
        "    return torch.relu(x)\n"
    ),
    "pkg/ops/act.cu": "#include <cuda_runtime.h>\n__global__ void act(float* x) {}\n",
    "pkg/ops/act.cpp": "#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n",
    "pkg/ops/act.h": "#include <cuda_runtime.h>\n",
    "pkg/model.py": "from pkg.ops.act import act\n\n\ndef forward(x):\n    return act(x)\n",
}


def test_sources_built_only_where_a_reference_path_runs_are_lowered_with_their_loader(tmp_path: Path):
    found = _fallback_findings(tmp_path, PLUGIN_PROJECT)
    expected = {
        ("pkg/ops/act.cu", 1, "KRN002"): "builds this file only",
        ("pkg/ops/act.cpp", 2, "KRN008"): "builds this file only",
        ("pkg/ops/act.h", 1, "KRN008"): "builds this file only",
        ("pkg/ops/act.py", 3, "KRN009"): "lowered one level",  # the import is used only in `_init`
        ("pkg/ops/act.py", 11, "KRN007"): "lowered one level",  # `--use_fast_math` inside `_init`
        ("pkg/custom_ops.py", 6, "KRN007"): "lowered one level",  # only `_init` calls `get_plugin`
    }
    for key, note in expected.items():
        assert key in found, (key, sorted(found))
        assert found[key].guarded and note in found[key].note and found[key].severity.value != "blocker", key


def test_a_source_the_build_also_names_without_a_fallback_keeps_its_severity(tmp_path: Path):
    texts = dict(PLUGIN_PROJECT)
    texts["setup.py"] = (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "setup(ext_modules=[CUDAExtension('act', ['pkg/ops/act.cpp', 'pkg/ops/act.cu'])])\n"
    )
    found = _fallback_findings(tmp_path, texts)
    assert not found[("pkg/ops/act.cu", 1, "KRN002")].guarded
    assert found[("pkg/ops/act.cu", 1, "KRN002")].severity.value == "blocker"
    assert found[("pkg/ops/act.h", 1, "KRN008")].guarded  # setup.py does not name the header


def test_an_import_also_used_as_a_value_is_not_lowered_by_its_guarded_calls(tmp_path: Path):
    texts = dict(PLUGIN_PROJECT)
    texts["pkg/ops/act.py"] += "\n\nLOADER = custom_ops\n"
    found = _fallback_findings(tmp_path, texts)
    assert not found[("pkg/ops/act.py", 3, "KRN009")].guarded


# LLaMA-Factory's layout: vendored Triton kernels (one module importing the other at top level) that only
# a patch for Ascend NPUs imports.
PLATFORM_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/third_party/utils.py": "import triton\n\n\n\n@triton.jit\ndef helper(x):\n    pass\n",
    "pkg/third_party/rule.py": (
        "import triton\nfrom .utils import helper\n\n\n@triton.jit\ndef rule_kernel(x):\n    pass\n\n\n"
        "def rule(x):\n    rule_kernel[(1,)](x)\n    return helper\n"
    ),
    "pkg/patcher.py": (
        "import torch\n\n\ndef patch_forward_npu(model):\n    from .third_party.rule import rule\n\n"
        "    model.rule = rule\n    torch.cuda.synchronize()\n\n\n"
        "def patch_forward(model):\n    torch.cuda.synchronize()\n"
    ),
    "train.py": "from pkg.patcher import patch_forward, patch_forward_npu\n\npatch_forward_npu(patch_forward(None))\n",
}


def test_modules_imported_only_from_another_platforms_code_are_not_reported(tmp_path: Path):
    found = _fallback_findings(tmp_path, PLATFORM_PROJECT)
    # the vendored kernels only the NPU patch loads are that platform's code, as a file named for it is
    assert not [key for key in found if key[0].startswith("pkg/third_party/")], sorted(found)
    # inside the NPU patch: not reported; the same call in a function for every platform is
    assert ("pkg/patcher.py", 8, "RT001") not in found
    assert found[("pkg/patcher.py", 12, "RT001")].severity.value != "info"
    # without the patch's platform word the kernels are the project's own lock-in
    plain = dict(PLATFORM_PROJECT)
    plain["pkg/patcher.py"] = plain["pkg/patcher.py"].replace("patch_forward_npu", "patch_forward_fast")
    plain["train.py"] = plain["train.py"].replace("patch_forward_npu", "patch_forward_fast")
    kept = _fallback_findings(tmp_path / "plain", plain)
    assert [key for key in kept if key[0].startswith("pkg/third_party/")], sorted(kept)


# optimum-quanto's layout: a per-backend extension package star-imported only under a CUDA check, its ops
# registered for the CUDA dispatch key (other devices run the ops' default implementations).
STAR_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/ext/__init__.py": "import torch\n\nif torch.cuda.is_available():\n    from .cuda import *\n",
    "pkg/ext/extension.py": (
        "from torch.utils.cpp_extension import load\n\n\nclass Extension:\n    def __init__(self, name, sources):\n"
        "        self.name, self.sources = name, sources\n\n    @property\n    def lib(self):\n"
        "        return load(name=self.name, sources=self.sources, extra_cuda_cflags=['-O3'])\n"
    ),
    "pkg/ext/cuda/__init__.py": (
        "import torch\nfrom ..extension import Extension\n\next = Extension('pkg_cuda', sources=['unpack.cu'])\n\n\n"
        "@torch.library.impl('pkg::unpack', ['CUDA'])\ndef unpack_cuda(t):\n    return ext.lib.unpack(t)\n"
    ),
    "pkg/ext/cuda/unpack.cu": '#include "marlin/dequant.cuh"\n__global__ void unpack(int *x) {}\n',
    "pkg/ext/cuda/marlin/dequant.cuh": "__device__ inline int dequant(int x) { return x; }\n",
}


def test_an_extension_package_star_imported_only_under_a_cuda_check_is_lowered(tmp_path: Path):
    found = _fallback_findings(tmp_path, STAR_PROJECT)
    # the source the extension names, the header beside it that it includes (named by no build list), and
    # the extension's uses in the module imported only there
    lowered = [("pkg/ext/cuda/unpack.cu", 1, "KRN002"), ("pkg/ext/cuda/marlin/dequant.cuh", 1, "KRN002")]
    lowered += [k for k in found if k[0] == "pkg/ext/cuda/__init__.py" and k[2] == "KRN009" and not found[k].also]
    lowered = [k for k in lowered if "another use" not in found[k].note]  # repeats point at the first, at info
    assert len(lowered) >= 3, sorted(found)
    for key in lowered:
        assert found[key].guarded and found[key].severity.value == "major", found[key]
    # imported without the check, the same sources are the project's blockers
    plain = dict(STAR_PROJECT)
    plain["pkg/ext/__init__.py"] = "from .cuda import *\n"
    kept = _fallback_findings(tmp_path / "plain", plain)
    for key in lowered:
        assert kept[key].severity.value == "blocker", kept[key]


# bitsandbytes' layout: a Triton backend's ops (and the kernel modules they import) that only the XPU
# backend's module imports, at its top, to register them for "xpu".
XPU_FOLDER_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/backends/__init__.py": "",
    "pkg/backends/triton/__init__.py": "",
    "pkg/backends/triton/kernels.py": "import triton\n\n\n@triton.jit\ndef quant_kernel(x):\n    pass\n",
    "pkg/backends/triton/ops.py": "from . import kernels\n\n\ndef quantize(x):\n    kernels.quant_kernel[(1,)](x)\n",
    "pkg/backends/xpu/__init__.py": "",
    "pkg/backends/xpu/ops.py": (
        "from torch.library import register_kernel\n\nif triton_available:\n"
        "    from ..triton import ops as triton_ops\n\n"
        "    register_kernel('pkg::quantize', 'xpu')(triton_ops.quantize)\n"
    ),
}


def test_modules_only_a_platform_folders_module_imports_are_that_platforms(tmp_path: Path):
    found = _fallback_findings(tmp_path, XPU_FOLDER_PROJECT)
    assert not [key for key in found if key[0].startswith("pkg/backends/triton/")], sorted(found)
    # the same backend imported from a module of no platform's folder is the project's own lock-in
    plain = {p.replace("/xpu/", "/fast/"): t for p, t in XPU_FOLDER_PROJECT.items()}
    kept = _fallback_findings(tmp_path / "plain", plain)
    assert [key for key in kept if key[0].startswith("pkg/backends/triton/")], sorted(kept)


# fla's layout: a Triton backend for Ascend NPUs beside the CUDA one, both registered in the package.
ASCEND_PROJECT = {
    "pkg/__init__.py": "",
    "pkg/backends/__init__.py": (
        "from pkg.backends.triton_ascend import AscendBackend\nfrom pkg.backends.cuda import CudaBackend\n\n"
        "registry = []\nregistry.append(AscendBackend())\nregistry.append(CudaBackend())\n"
    ),
    "pkg/backends/triton_ascend.py": (
        "import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\nclass AscendBackend:\n"
        "    def run(self, x):\n        k[(1,)](x)\n        x.cuda()\n"
    ),
    "pkg/backends/cuda.py": (
        "import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\nclass CudaBackend:\n"
        "    def run(self, x):\n        k[(1,)](x)\n"
    ),
}


def test_another_platforms_code_and_what_uses_it_are_no_lock_in(tmp_path: Path):
    found = _fallback_findings(tmp_path, ASCEND_PROJECT)
    assert not [key for key in found if key[0] == "pkg/backends/triton_ascend.py"], sorted(found)
    # the package registers both: the CUDA backend is reported there, the Ascend one is not
    assert ("pkg/backends/__init__.py", 2, "KRN009") in found and ("pkg/backends/__init__.py", 6, "KRN009") in found
    assert not [k for k in found if k[0] == "pkg/backends/__init__.py" and k[1] in (1, 5)], sorted(found)
    assert ("pkg/backends/cuda.py", 4, "KRN003") in found


def test_a_test_that_calls_the_projects_kernels_is_not_reported_for_it(tmp_path: Path):
    # no KRN009 there, and none of the test's own devices either: they are how the kernel is tested
    texts = {
        "pkg/__init__.py": "",
        "pkg/ops.py": "import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\ndef op(x):\n    k[(1,)](x)\n",
        "pkg/model.py": "from pkg.ops import op\n\n\ndef forward(x):\n    return op(x)\n",
        "tests/test_ops.py": "import torch\nfrom pkg.ops import op\n\n\ndef test_op():\n    op(torch.ones(2).cuda())\n",
        "tests/test_other.py": "import torch\n\n\ndef test_sum():\n    op(torch.ones(2).cuda())\n",
        # a benchmark that times the kernel (torchao's `bench_colwise_block_configs.py`) is its harness too
        "benchmarks/bench_op.py": "import torch\nfrom pkg.ops import op\n\nop(torch.ones(2).cuda())\n",
        "benchmarks/bench_sum.py": "import torch\n\nprint(torch.ones(2).cuda().sum())\n",
    }
    found = _fallback_findings(tmp_path, texts)
    assert ("pkg/model.py", 1, "KRN009") in found and ("pkg/model.py", 5, "KRN009") in found, sorted(found)
    assert not [k for k in found if k[0] in ("tests/test_ops.py", "benchmarks/bench_op.py")], sorted(found)
    assert ("tests/test_other.py", 5, "DEV002") in found, sorted(found)
    assert ("benchmarks/bench_sum.py", 3, "DEV002") in found, sorted(found)


def test_a_test_beside_cuda_sources_is_the_kernels_test(tmp_path: Path):
    # s4's `extensions/kernels/test_cauchy.py` and `benchmark_cauchy.py` beside `cauchy_cuda.cu`; nvdiffrec's
    # `renderutils/tests/test_bsdf.py` for `renderutils/c_src/bsdf.cu`
    kernel, test = "__global__ void k() {}\n", "import torch\n\n\ndef test_k():\n    x = torch.ones(2, device='cuda')\n"
    paths = ["ext/kernels/test_cauchy.py", "ext/kernels/benchmark_cauchy.py", "render/ru/tests/test_bsdf.py"]
    texts = dict.fromkeys(paths + ["tests/test_model.py"], test)
    texts.update(dict.fromkeys(["ext/kernels/cauchy_cuda.cu", "render/ru/c_src/bsdf.cu"], kernel))
    found = _fallback_findings(tmp_path, texts)
    assert not [k for k in found if k[0].endswith(("test_cauchy.py", "test_bsdf.py", "benchmark_cauchy.py"))], found
    assert [k for k in found if k[0] == "tests/test_model.py"], sorted(found)  # the top-level suite is not one


def test_a_flag_that_says_whether_the_extension_loaded_is_no_extension(tmp_path: Path):
    # InternImage: `try: import DCNv3; has_cuda_kernel = True` / `except ImportError: has_cuda_kernel = False`
    func = (
        "try:\n    from . import dcn_cuda\n    has_cuda_kernel = True\nexcept ImportError:\n"
        "    has_cuda_kernel = False\n"
    )
    texts = {
        "pkg/__init__.py": "",
        "pkg/func.py": func,
        "pkg/model.py": "from .func import has_cuda_kernel\n\n\ndef forward(x):\n    return has_cuda_kernel\n",
        "pkg/ops.py": "from .func import dcn_cuda\n\n\ndef op(x):\n    return dcn_cuda.forward(x)\n",
    }
    found = _fallback_findings(tmp_path, texts)
    assert not [k for k in found if k[0] == "pkg/model.py"], sorted(found)
    assert ("pkg/ops.py", 1, "KRN009") in found, sorted(found)


@pytest.mark.parametrize(("build", "reported"), [("CppExtension", False), ("CUDAExtension", True)])
def test_a_generic_C_is_an_extension_unless_its_setup_builds_cpp_only(tmp_path: Path, build, reported):
    # stable-fast-3d's `uv_unwrapper`: `CppExtension(name="uv_unwrapper._C", sources=glob("csrc/*.cpp"))`
    setup = (
        f"from glob import glob\nfrom torch.utils.cpp_extension import BuildExtension, {build}\n"
        f"ext = {build}(name='uvw._C', sources=glob('uvw/csrc/*.cpp'))\n"
    )
    texts = {"setup.py": setup, "uvw/__init__.py": "from . import _C\n\n\ndef unwrap(x):\n    return _C.unwrap(x)\n"}
    found = _fallback_findings(tmp_path, texts)
    assert (("uvw/__init__.py", 1, "KRN009") in found) is reported, sorted(found)


@pytest.mark.parametrize(
    ("tests", "sources", "expected"),
    [
        (["a/b/test_x.py"], ["a/b/x.cu"], {"a/b/test_x.py"}),
        (["a/b/tests/test_x.py"], ["a/b/src/cuda/x.cu"], {"a/b/tests/test_x.py"}),
        (["a/b/test_x.py"], ["a/b/c/d/e/x.cu"], set()),  # too deep to be this folder's kernel
        (["tests/test_x.py", "test_y.py"], ["csrc/x.cu"], set()),  # the repository's own suite
        (["a/test_x.py"], ["b/x.cu"], set()),
        # beside the sources' folder (Stratified-Transformer's `lib/pointops2/functions/` and `lib/pointops2/src/`)
        (["lib/ops/functions/test_x.py"], ["lib/ops/src/x/x.cu"], {"lib/ops/functions/test_x.py"}),
        (["a/models/test_x.py"], ["a/csrc/x.cu"], set()),  # (only below a folder two deep)
        (["tests/suite/models/test_x.py"], ["tests/suite/csrc/x.cu"], set()),  # (nor in a test folder)
    ],
)
def test_kernel_test_paths(tests, sources, expected):
    assert kernel_test_paths(tests, sources) == expected


def test_a_module_also_imported_for_every_platform_keeps_its_severity(tmp_path: Path):
    texts = dict(PLATFORM_PROJECT)
    texts["pkg/model.py"] = "from .third_party.rule import rule\n\n\ndef forward(x):\n    return rule(x)\n"
    found = _fallback_findings(tmp_path, texts)
    assert found[("pkg/third_party/rule.py", 5, "KRN003")].severity.value == "blocker"


def test_a_loader_that_builds_cpp_only_binds_nothing(tmp_path: Path):
    # YOLOX: `JitOp` builds `CppExtension`s from `*.cpp` and hands generic nvcc flags to `load()`
    jit = (
        "import glob\nfrom torch.utils.cpp_extension import CppExtension, load\n\n\nclass JitOp:\n"
        "    def build_op(self):\n        return CppExtension('op', sources=self.sources())\n\n"
        "    def jit_load(self):\n        return load('op', sources=self.sources(), extra_cuda_cflags=['-O3'])\n\n"
        "    def sources(self):\n        return glob.glob('pkg/cocoeval/*.cpp')\n"
    )
    texts = {"pkg/__init__.py": "from .jit_ops import JitOp\n", "pkg/jit_ops.py": jit}
    found = _fallback_findings(tmp_path, texts)
    assert not [key for key in found if key[2] == "KRN009"], sorted(found)
    assert found[("pkg/jit_ops.py", 10, "KRN001")].severity.value == "info"
    # the same loader with a CUDA source is an extension its importers depend on
    cuda = {"pkg/__init__.py": texts["pkg/__init__.py"], "pkg/jit_ops.py": jit.replace("*.cpp", "*.cu")}
    found = _fallback_findings(tmp_path / "cuda", cuda)
    assert ("pkg/__init__.py", 1, "KRN009") in found, sorted(found)


# torch-ngp's layout: the op module imports a prebuilt extension or, failing that, the JIT-built one, and
# wraps each op in an autograd Function that moves its inputs to CUDA first.
WRAPPER_PROJECT = {
    "raymarching/__init__.py": "from .raymarching import near_far\n",
    "raymarching/backend.py": (
        "from torch.utils.cpp_extension import load\n\n_backend = load(name='_rm', sources=['src/rm.cu'])\n"
    ),
    "raymarching/raymarching.py": (
        "import torch\nfrom torch.autograd import Function\n\ntry:\n    import _raymarching as _backend\n"
        "except ImportError:\n    from .backend import _backend\n\n\nclass _NearFar(Function):\n"
        "    @staticmethod\n    def forward(ctx, rays):\n        if not rays.is_cuda:\n            rays = rays.cuda()\n"
        "        return _backend.near_far(rays)\n\n\nnear_far = _NearFar.apply\n\n\n"
        "def helper(x):\n    return x.cuda()\n"
    ),
    "train.py": (
        "from raymarching import near_far\nfrom raymarching.raymarching import helper\n\n\n"
        "def step(rays):\n    return helper(near_far(rays))\n\n\nstep(None)\n"
    ),
}


def test_details_inside_an_extensions_wrapper_are_info_and_the_extension_is_reported(tmp_path: Path):
    found = _fallback_findings(tmp_path, WRAPPER_PROJECT)
    inside = {key: f for key, f in found.items() if key[0] == "raymarching/raymarching.py" and 10 <= key[1] <= 15}
    # (`if not rays.is_cuda: rays = rays.cuda()` only skips a copy already made: the `.cuda()` is the finding)
    assert {(line, code) for _, line, code in inside} == {(14, "DEV002"), (15, "KRN009")}, sorted(found)
    for (_, line, code), f in inside.items():
        if code == "KRN009":
            # the call into the extension: another use of what the import at line 5 brings in
            assert f.severity.value == "info" and "another use of `_backend`" in f.note, f
        else:
            assert f.severity.value == "info" and "wrapper of the CUDA extension `_backend`" in f.note, (line, code)
    # outside the wrapper, and where the application calls it
    assert found[("raymarching/raymarching.py", 22, "DEV002")].severity.value != "info"
    assert ("train.py", 1, "KRN009") in found, sorted(found)


def test_a_wrapper_that_calls_its_extension_in_a_while_true_loop_is_a_wrapper(tmp_path: Path):
    # HAIS's `BallQueryBatchP`: asserts its inputs are on CUDA, then calls the extension in `while True:` until
    # the buffers it allocated are large enough; the body of `while True:` runs, so the class wraps the op
    texts = dict(WRAPPER_PROJECT)
    texts["raymarching/raymarching.py"] = (
        "import torch\nfrom torch.autograd import Function\n\ntry:\n    import _raymarching as _backend\n"
        "except ImportError:\n    from .backend import _backend\n\n\nclass _NearFar(Function):\n"
        "    @staticmethod\n    def forward(ctx, rays, n):\n        assert rays.is_cuda\n"
        "        while True:\n            out = torch.cuda.IntTensor(n).zero_()\n"
        "            if _backend.near_far(rays, out) <= n:\n                break\n            n *= 2\n"
        "        return out\n\n\nnear_far = _NearFar.apply\n"
    )
    found = _fallback_findings(tmp_path, texts)
    # the assert is the extension's own precondition (not reported); the buffer's CUDA type a detail at info
    assert not [k for k in found if k[0] == "raymarching/raymarching.py" and k[1] == 13], sorted(found)
    buffer = [f for k, f in found.items() if k[0] == "raymarching/raymarching.py" and k[1] == 15]
    assert buffer and all(f.severity.value == "info" and "wrapper of the CUDA extension" in f.note for f in buffer)
    # a loop that may not run is no such proof: `while n < 8:` leaves the class a path without the extension
    texts["raymarching/raymarching.py"] = texts["raymarching/raymarching.py"].replace("while True:", "while n < 8:")
    found = _fallback_findings(tmp_path / "maybe", texts)
    buffer = [f for k, f in found.items() if k[0] == "raymarching/raymarching.py" and k[1] == 15]
    assert buffer and all("wrapper of the CUDA extension" not in f.note for f in buffer), buffer


# GPTQ-for-LLaMa's kernel modules: the kernels are defined inside `try: import triton`, and the layer that
# launches them moves its own weights with `.cuda()` for them.
TRY_KERNEL_PROJECT = {
    "quant/__init__.py": "from .fused import FusedMLP\n",
    "quant/fused.py": (
        "import torch\n\n"
        "try:\n    import triton\n\n    @triton.jit\n    def fused_kernel(a_ptr, n):\n        pass\n"
        "except ImportError:\n    print('triton not installed.')\n\n\n"
        "class FusedMLP(torch.nn.Module):\n"
        "    def forward(self, x):\n        idx = x.nonzero()\n        fused_kernel[(1,)](x, idx)\n        return x\n\n"
        "    def to_cuda(self):\n        self.weight = self.weight.cuda()\n"
    ),
    "run.py": "from quant import FusedMLP\n\nmodel = FusedMLP()\nmodel.to_cuda()\n",
}


def test_a_kernel_defined_in_a_try_is_launched_across_modules_and_its_launcher_details_are_info(tmp_path: Path):
    found = _fallback_findings(tmp_path, TRY_KERNEL_PROJECT)
    assert ("quant/fused.py", 16, "KRN009") in found, sorted(found)  # the launch `fused_kernel[(1,)](...)`
    launch = found[("quant/fused.py", 16, "KRN009")]  # of a kernel its own module defines (reported there)
    assert launch.severity.value == "info" and "a Triton kernel this module defines" in launch.note, launch
    assert ("quant/__init__.py", 1, "KRN009") in found, sorted(found)  # the import of the launcher
    moved = found[("quant/fused.py", 20, "DEV002")]
    assert moved.severity.value == "info" and "launches the Triton kernel `fused_kernel`" in moved.note
    # how the launcher would run on an XLA-like device is moot: the port replaces it with the kernel
    assert not [k for k in found if k[0] == "quant/fused.py" and k[2].startswith("XLA")], sorted(found)


def test_a_function_that_launches_a_kernel_under_any_condition_but_a_cuda_check_is_its_launcher(tmp_path: Path):
    # unsloth's cross-entropy forward (in lit-gpt's thunder extension): one kernel or the chunked one, by size
    kernels = (
        "import torch\nimport triton\n\n\n@triton.jit\ndef one(x):\n    pass\n\n\n@triton.jit\ndef chunked(x):\n"
        "    pass\n\n\ndef forward(logits, n, chunks):\n    losses = torch.empty(n, device='cuda')\n"
        "    if chunks == 1:\n        one[(n,)](logits, losses)\n"
        "    else:\n        chunked[(n, chunks)](logits, losses)\n    return losses\n"
    )
    run = "from ops.kernels import forward\n\nforward(None, 1, 1)\n"
    found = _fallback_findings(tmp_path, {"ops/kernels.py": kernels, "run.py": run})
    device = found[("ops/kernels.py", 16, "DEV003")]
    assert device.severity.value == "info" and "launches the Triton kernel `one`" in device.note, device
    # a launch only under a CUDA check has a path without the kernel: its function is no launcher
    guarded = kernels.replace("    if chunks == 1:", "    if logits.is_cuda:")
    found = _fallback_findings(tmp_path / "b", {"ops/kernels.py": guarded, "run.py": run})
    assert "launches the Triton kernel" not in found[("ops/kernels.py", 16, "DEV003")].note
    # an assert of a CUDA check in the launcher (MPT's Triton flash attention, `assert q.is_cuda`) is the kernel's own
    # precondition: not reported; the device the launcher picks still is
    asserted = kernels.replace("    losses = torch.empty", "    assert logits.is_cuda\n    losses = torch.empty")
    found = _fallback_findings(tmp_path / "c", {"ops/kernels.py": asserted, "run.py": run})
    assert not [k for k in found if k[0] == "ops/kernels.py" and k[1] == 16], sorted(found)
    assert "launches the Triton kernel `one`" in found[("ops/kernels.py", 17, "DEV003")].note


# RAFT's layout: an extension built by its own setup.py, imported optionally (`except: pass`) by the module
# that calls it; an option picks that path.
OPTIONAL_EXTENSION = {
    "alt_cuda_corr/setup.py": (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
        "setup(name='correlation', ext_modules=[CUDAExtension('alt_cuda_corr', sources=['correlation_kernel.cu'])],"
        " cmdclass={'build_ext': BuildExtension})\n"
    ),
    "alt_cuda_corr/correlation_kernel.cu": "__global__ void corr(float* x) {}\n",
    "core/corr.py": (
        "import torch\n\ntry:\n    import alt_cuda_corr\nexcept:\n    pass\n\n\n"
        "class AltCudaCorr(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a, b):\n"
        "        corr, = alt_cuda_corr.forward(a, b)\n        return corr\n"
    ),
    "core/raft.py": "from corr import AltCudaCorr\n",
}


def test_calls_through_an_optional_import_are_lowered_with_it(tmp_path: Path):
    found = _fallback_findings(tmp_path, OPTIONAL_EXTENSION)
    imported, called = found[("core/corr.py", 4, "KRN009")], found[("core/corr.py", 12, "KRN009")]
    assert imported.guarded and called.guarded and imported.severity.value == "major", (imported, called)
    assert "imported optionally, line 4" in called.message, called
    # the call is another use of what the import brings in: info, pointing at the import
    assert called.severity.value == "info" and "another use of `alt_cuda_corr`" in called.note, called
    # imported without a fallback, the import keeps its weight and the call still points at it
    texts = dict(OPTIONAL_EXTENSION)
    texts["core/corr.py"] = texts["core/corr.py"].replace(
        "try:\n    import alt_cuda_corr\nexcept:\n    pass\n", "import alt_cuda_corr\n"
    )
    found = _fallback_findings(tmp_path / "plain", texts)
    assert found[("core/corr.py", 3, "KRN009")].severity.value == "blocker", sorted(found)
    assert "first on line 3" in found[("core/corr.py", 9, "KRN009")].note, sorted(found)


# rosinality's stylegan2 `op/fused_act.py` (vendored by DragGAN and others): the extension is built in a `try`
# whose handler binds it to `None`, and the model asks `if fused is not None:` to pick the native op.
OPTIONAL_LOAD = {
    "op/fused_act.py": (
        "import os\nfrom torch.utils.cpp_extension import load\n\ntry:\n    fused = load(\n        'fused',\n"
        "        sources=[os.path.join('op', 'fused_bias_act.cpp'), os.path.join('op', 'fused_bias_act_kernel.cu')],\n"
        "    )\nexcept:\n    fused = None\n\n\n"
        "def fused_leaky_relu(x, bias):\n    return fused.fused_bias_act(x, bias)\n"
    ),
    "op/fused_bias_act.cpp": "int f() { return 0; }\n",
    "op/fused_bias_act_kernel.cu": "__global__ void act(float* x) {}\n",
    "model.py": (
        "from op.fused_act import fused\n\nif fused is not None:\n    from op.fused_act import fused_leaky_relu\n"
        "else:\n    from op.native import fused_leaky_relu\n\n\n"
        "def act(x, bias):\n    return fused_leaky_relu(x, bias)\n"
    ),
    "op/native.py": "def fused_leaky_relu(x, bias):\n    return x + bias\n",
    "train.py": "from model import act\n\ny = act(1, 2)\n",
}


def test_an_extension_a_handler_binds_to_none_is_optional_where_it_is_used(tmp_path: Path):
    found = _fallback_findings(tmp_path, OPTIONAL_LOAD)
    imported, called = found[("model.py", 1, "KRN009")], found[("op/fused_act.py", 14, "KRN009")]
    assert imported.guarded and imported.severity.value == "major", imported
    assert "loaded optionally, op.fused_act line 4" in imported.message, imported
    assert called.guarded and called.severity.value == "major", called
    assert "loaded optionally, line 4" in called.message, called
    kernel = found[("op/fused_bias_act_kernel.cu", 1, "KRN002")]
    assert kernel.severity.value == "major", kernel  # built only where the `try` carries on without it
    # a handler that reports and re-raises leaves no path without the extension
    texts = dict(OPTIONAL_LOAD)
    texts["op/fused_act.py"] = texts["op/fused_act.py"].replace("    fused = None\n", "    fused = None\n    raise\n")
    found = _fallback_findings(tmp_path / "raise", texts)
    assert found[("model.py", 1, "KRN009")].severity.value == "blocker", sorted(found)
    assert found[("op/fused_act.py", 15, "KRN009")].severity.value == "blocker", sorted(found)  # a line lower
    assert found[("op/fused_bias_act_kernel.cu", 1, "KRN002")].severity.value == "blocker", sorted(found)


def test_a_handler_that_imports_the_same_name_by_another_path_is_no_fallback(tmp_path: Path):
    """flownet2-pytorch's `models.py`: `try: from networks.resample2d import Resample2d` / `except: from
    .networks.resample2d import Resample2d`; the model needs the extension either way."""
    texts = dict(OPTIONAL_EXTENSION)
    texts["core/resample.py"] = (
        "import alt_cuda_corr\n\n\ndef resample(a, b):\n    return alt_cuda_corr.forward(a, b)\n"
    )
    texts["core/models.py"] = (
        "try:\n    from core.resample import resample\nexcept:\n    from .core.resample import resample\n\n\n"
        "def run(a, b):\n    return resample(a, b)\n"
    )
    found = _fallback_findings(tmp_path, texts)
    tried = found[("core/models.py", 2, "KRN009")]
    assert tried.severity.value == "blocker" and not tried.guarded, tried
    assert "optionally" not in found[("core/models.py", 8, "KRN009")].message, sorted(found)
    # a handler that binds something else is a fallback: the import is lowered
    texts["core/models.py"] = texts["core/models.py"].replace(
        "    from .core.resample import resample\n", "    resample = None\n"
    )
    found = _fallback_findings(tmp_path / "b", texts)
    assert found[("core/models.py", 2, "KRN009")].guarded, sorted(found)


def test_one_finding_per_name_and_file_keeps_its_severity(tmp_path: Path):
    """VILA's fp8 Qwen2 imports `fp8_silu_forward` once and calls it in many places: the import stands for it."""
    texts = {
        "pkg/__init__.py": "",
        "pkg/kernels.py": "import triton\n\n\n@triton.jit\ndef silu_kernel(x):\n    pass\n\n\n"
        "def fp8_silu_forward(x):\n    silu_kernel[(1,)](x)\n    return x\n",
        "pkg/model.py": "from pkg.kernels import fp8_silu_forward, fp8_gelu\n\n\ndef mlp(x):\n"
        "    x = fp8_silu_forward(x)\n    x = fp8_gelu(x)\n    return fp8_silu_forward(x)\n",
    }
    texts["pkg/kernels.py"] += "\n\ndef fp8_gelu(x):\n    silu_kernel[(1,)](x)\n    return x\n"
    found = _fallback_findings(tmp_path, texts)
    sites = {line: f for (path, line, code), f in found.items() if path == "pkg/model.py" and code == "KRN009"}
    assert sorted(sites) == [1, 5, 6, 7], sorted(found)
    assert sites[1].severity.value == "blocker", sites[1]
    # each call points at the statement that imports its name, whichever name the statement is reported for
    assert all(sites[n].severity.value == "info" and "first on line 1" in sites[n].note for n in (5, 6, 7)), sites


def test_a_packages_init_re_exporting_its_own_kernels_is_info(tmp_path: Path):
    texts = {
        "pkg/__init__.py": "from .kernels import fp8_gelu\nfrom .kernels import fp8_silu\n",
        "pkg/kernels.py": "import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\n"
        "def fp8_gelu(x):\n    k[(1,)](x)\n\n\ndef fp8_silu(x):\n    k[(1,)](x)\n",
        "model.py": "from pkg import fp8_gelu\n\n\ndef mlp(x):\n    return fp8_gelu(x)\n",
    }
    found = _fallback_findings(tmp_path, texts)
    init = [f for (path, _, code), f in found.items() if path == "pkg/__init__.py" and code == "KRN009"]
    assert len(init) == 2 and all(f.severity.value == "info" and "re-exports" in f.note for f in init), init
    assert found[("model.py", 1, "KRN009")].severity.value == "blocker", sorted(found)



def test_a_triton_kernel_imported_into_a_module_of_triton_kernels_is_info(tmp_path: Path):
    """fouroversix's `kernels/triton/quantize.py` imports the `@triton.jit` helpers of `fp4.py` for its own kernels."""
    texts = {
        "pkg/__init__.py": "",
        "pkg/fp4.py": "import triton\n\n\n@triton.jit\ndef to_e2m1(x):\n    return x\n",
        "pkg/quantize.py": "import triton\nfrom pkg.fp4 import to_e2m1\n\n\n@triton.jit\ndef quantize_kernel(x):\n"
        "    return to_e2m1(x)\n",
        "pkg/model.py": "from pkg.fp4 import to_e2m1\n\n\ndef mlp(x):\n    return to_e2m1(x)\n",
    }
    found = _fallback_findings(tmp_path, texts)
    inside = found[("pkg/quantize.py", 2, "KRN009")]
    assert inside.severity.value == "info" and "module of Triton kernels" in inside.note, inside
    assert found[("pkg/model.py", 1, "KRN009")].severity.value == "blocker", sorted(found)

_UNRELATED_MODULE = "import torch\n\n\ndef main():\n    return torch.ones(2)\n"


def _pinned(name: str, pins: List[str], word: str) -> Tuple[str, int]:
    """A conda export (`environment.yml`) or a pip freeze (`requirements.txt`) of `pins` after torch, and the
    line of the first pin naming `word`."""
    lines = ["torch==2.0.1", *pins]
    if name == "environment.yml":
        lines = ["name: env", "dependencies:", "  - pip:"] + [f"    - {p}" for p in lines]
    return "\n".join(lines) + "\n", next(i for i, s in enumerate(lines, 1) if word in s)


@pytest.mark.parametrize("name", ["environment.yml", "requirements.txt"])
def test_a_pin_of_torchs_own_triton_nothing_imports_is_info(tmp_path: Path, name):
    # a conda export or a pip freeze pins triton beside torch: it comes with the CUDA build of torch
    pins, line = _pinned(name, ["triton==2.0.0", "xformers==0.0.22"], "triton")
    found = _fallback_findings(tmp_path, {name: pins, "train.py": _UNRELATED_MODULE, "attn.py": "import xformers\n"})
    pin = found[(name, line, "PKG006")]
    assert pin.severity.value == "info" and "nothing in the project imports triton" in pin.note, pin
    assert found[(name, line + 1, "PKG003")].severity.value != "info"
    # once a module imports triton, the pin is the project's own dependency again
    (tmp_path / "kernels.py").write_text("import triton\n")
    found = _fallback_findings(tmp_path, {})
    assert found[(name, line, "PKG006")].severity.value == "blocker"


@pytest.mark.parametrize("name", ["environment.yml", "requirements.txt"])
def test_a_pin_of_a_cuda_package_nothing_uses_is_info(tmp_path: Path, name):
    # PVC's `deepspeed==0.13.5`: evaluation code that never imports, launches or configures it
    pins, line = _pinned(name, ["deepspeed==0.13.5", "bitsandbytes==0.41.0"], "deepspeed")
    found = _fallback_findings(tmp_path, {name: pins, "train.py": _UNRELATED_MODULE})
    for at, code, package in ((line, "PKG005", "deepspeed"), (line + 1, "PKG004", "bitsandbytes")):
        pin = found[(name, at, code)]
        assert pin.severity.value == "info" and f"launches or names {package};" in pin.note, pin
    # a list named for a feature pins what that feature needs (gpt-neox's `requirements-onebitadam.txt`: cupy for
    # DeepSpeed's 1-bit Adam, which a config switches on): not judged by what the code spells
    (tmp_path / "requirements-onebitadam.txt").write_text("cupy-cuda111>=8.6.0\n")
    found = _fallback_findings(tmp_path, {})
    assert found[("requirements-onebitadam.txt", 1, "PKG007")].severity.value == "major"
    # launched from a script, or used through another library's option: the project's own dependency again
    (tmp_path / "run.sh").write_text("deepspeed --num_gpus 8 train.py\n")
    (tmp_path / "load.py").write_text("model = AutoModel.from_pretrained(path, load_in_8bit=True)\n")
    found = _fallback_findings(tmp_path, {})
    assert found[(name, line, "PKG005")].severity.value == "major"
    assert found[(name, line + 1, "PKG004")].severity.value == "major"


@pytest.mark.parametrize("name", ["environment.yml", "requirements.txt"])
def test_a_pin_of_an_nvml_monitor_nothing_imports_reports_nothing(tmp_path: Path, name):
    # SimPO's conda export pins `pynvml` as another package's dependency: no code monitors a GPU with it
    pins, line = _pinned(name, ["pynvml==11.5.0", "nvidia-ml-py==12.535"], "pynvml")
    found = _fallback_findings(tmp_path, {name: pins, "train.py": _UNRELATED_MODULE})
    assert not [k for k in found if k[0] == name and k[2] == "PKG012"], sorted(found)
    # once a module imports pynvml (which both distributions install), both pins are the project's own
    (tmp_path / "monitor.py").write_text("from pynvml import nvmlInit\n")
    found = _fallback_findings(tmp_path, {})
    assert found[(name, line, "PKG012")].severity.value == "minor"
    assert found[(name, line + 1, "PKG012")].severity.value == "minor"


def test_a_name_imported_from_a_module_file_is_a_definition_whatever_it_is_called():
    # detectron2's `from ..utils.memory import retry_if_cuda_oom`: a plain function of a module file (here one
    # the index did not read: nothing in it can define a CUDA-bound name), named like an extension
    # (`*_cuda_*`); only a package can hold a compiled submodule
    # (accelerate's `from accelerate.utils import check_cuda_p2p_ib_support`, re-exported by the package)
    model = (
        "import torch\nfrom .utils.memory import retry_if_cuda_oom\nfrom .ops import _C\n"
        "from pkg.utils import check_cuda_p2p_ib_support\n"
    )
    project = Project(
        [
            summarize(model, "pkg/model.py"),
            summarize("from .environment import check_cuda_p2p_ib_support\n", "pkg/utils/__init__.py"),
            ModuleSummary(*module_name("pkg/utils/environment.py"), (), (), (), ""),
            ModuleSummary(*module_name("pkg/utils/memory.py"), (), (), (), ""),
            ModuleSummary(*module_name("pkg/ops/__init__.py"), (), (), (), ""),
            ModuleSummary(*module_name("pkg/__init__.py"), (), (), (), ""),
        ]
    )
    assert project.target("pkg.model", "retry_if_cuda_oom") is None
    assert project.target("pkg.model", "check_cuda_p2p_ib_support") is None
    # Cream's `from utils.pyt_utils import to_cuda` (a module the index does not know): a helper's name
    helper = summarize("from pkg.missing import to_cuda, fused_cuda\n", "pkg/helper.py")
    assert Project([helper, ModuleSummary(*module_name("pkg/__init__.py"), (), (), (), "")]).target(
        "pkg.helper", "to_cuda"
    ) is None
    assert project.target("pkg.model", "_C") == ("<ext>", "pkg.ops._C")


def test_kernels_calling_kernels_are_one_kernel_not_uses(tmp_path: Path):
    # Megatron's symmetric-memory barrier: a `@triton.jit` helper called inside another kernel
    helpers = (
        "import triton\nimport triton.language as tl\n\n@triton.jit\ndef get_flat_tid():\n    return tl.program_id(0)\n"
    )
    barrier = (
        "import triton\nimport triton.language as tl\nfrom .utils import get_flat_tid\n\n"
        "@triton.jit\ndef barrier_kernel(ptr):\n    tid = get_flat_tid()\n    tl.store(ptr + tid, 1)\n"
    )
    found = scan_tree(
        tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": helpers, "pkg/barrier.py": barrier}, top=True
    )
    assert ("pkg/barrier.py", 3, "KRN009") in found  # the import says the module needs the kernel
    assert ("pkg/barrier.py", 7, "KRN009") not in found  # the call inside a kernel is the kernel's workings


@pytest.mark.parametrize(
    "build,cuda_bound",
    [
        # ColBERT's search extensions: C++ only, built for the CPU path
        ("load(name='filter_pids_cpp', sources=[os.path.join(here, 'filter_pids.cpp')], extra_cflags=['-O3'])", False),
        ("load(name='ops', sources=[os.path.join(here, 'ops.cpp'), os.path.join(here, 'ops.cu')])", True),
        ("load(name='ops', sources=['ops.cpp'], extra_cuda_cflags=['-O3'])", True),
        ("load(name='ops', sources=['ops.cpp'], with_cuda=True)", True),
        ("load(name='ops', sources=srcs)", True),  # what it builds is not written here
    ],
)
def test_a_cpu_only_extension_build_binds_nothing_cuda_bound(build, cuda_bound):
    texts = {
        "pkg/__init__.py": "",
        "pkg/ext.py": f"import os\nfrom torch.utils.cpp_extension import load\nhere = '.'\next = {build}\n",
        "pkg/use.py": "from pkg.ext import ext\n\n\ndef run(x):\n    return ext.op(x)\n",
    }
    project, resolved, summaries = index_project(texts)
    use = summaries.get("pkg/use.py")  # (a module that names nothing CUDA-bound may not be summarized)
    found = list(sites(use, project, resolved)) if use is not None else []
    assert bool(found) is cuda_bound, found


@pytest.mark.parametrize(
    "guard,cuda_bound",
    [
        # ColBERT's `ResidualCodec.try_load_torch_extensions`: a CPU run returns before the build
        ("if hasattr(cls, 'loaded') or not use_gpu:\n            return\n", False),
        ("if not torch.cuda.is_available():\n            return\n", False),
        ("if not use_gpu:\n            raise RuntimeError('needs a GPU')\n", True),  # no path without it
        ("if not use_gpu:\n            print('no GPU')\n", True),  # no exit: the build runs anyway
        ("", True),
    ],
)
def test_a_build_after_an_early_return_without_cuda_binds_nothing(guard, cuda_bound):
    codec = (
        "import torch\nfrom torch.utils.cpp_extension import load\n\n\nclass Codec:\n"
        "    def __init__(self, use_gpu):\n        Codec.try_load(use_gpu)\n\n"
        f"    @classmethod\n    def try_load(cls, use_gpu):\n        {guard}"
        "        cls.ext = load(name='pack', sources=['pack.cpp', 'pack.cu'])\n"
    )
    texts = {
        "pkg/__init__.py": "",
        "pkg/codec.py": codec,
        "pkg/use.py": "from pkg.codec import Codec\n\n\ndef run(x):\n    return Codec(False)\n",
    }
    project, resolved, summaries = index_project(texts)
    use = summaries.get("pkg/use.py")
    found = list(sites(use, project, resolved)) if use is not None else []
    assert bool(found) is cuda_bound, found


def test_cudas_variant_among_per_backend_variants_is_info_but_its_kernels_are_not(tmp_path: Path):
    # (its Python code's own CUDA calls are how it works there: not reported, and not rewritten)
    compose = (
        "services:\n  app:\n    deploy:\n      resources:\n        reservations:\n"
        "          devices:\n            - driver: nvidia\n"
    )
    files = {
        "docker/nvidia/docker-compose.yml": compose,
        "docker/amd/docker-compose.yml": "services:\n  app:\n    image: rocm/pytorch\n",
        "docker/intel/docker-compose.yml": "services:\n  app:\n    image: intel/xpu\n",
        "pkg/__init__.py": "",
        "pkg/backends/__init__.py": "",
        "pkg/backends/cuda.py": (
            "import torch\nfrom torch.utils.cpp_extension import load\n"
            "ext = load(name='k', sources=['k.cu'])\n\n\ndef put(x):\n    return x.cuda()\n"
        ),
        "pkg/backends/cpu.py": "def put(x):\n    return x\n",
        "pkg/backends/mps.py": "def put(x):\n    return x.to('mps')\n",
    }
    found = scan_tree(tmp_path, files, top=True)
    compose_finding = found[("docker/nvidia/docker-compose.yml", 7, "ENV003")]
    assert compose_finding.severity.value == "info" and "variant" in (compose_finding.note or "")
    assert ("pkg/backends/cuda.py", 7, "DEV002") not in found, sorted(found)
    assert found[("pkg/backends/cuda.py", 3, "KRN001")].severity.value == "blocker"
    # with one other backend beside it, it is no set of variants: its `.cuda()` is the project's lock-in
    alone = {p: t for p, t in files.items() if p != "pkg/backends/mps.py"}
    kept = scan_tree(tmp_path / "alone", alone, top=True)
    assert "variant" not in kept[("pkg/backends/cuda.py", 7, "DEV002")].note


@pytest.mark.parametrize("with_source", [False, True])
def test_a_build_setting_in_a_repository_that_builds_no_cuda_is_info(tmp_path: Path, with_source):
    launcher = 'INSTALL_ENV_DIR="$(pwd)/env"\nexport CUDA_HOME="$INSTALL_ENV_DIR"\npython one_click.py\n'
    files = {"start_linux.sh": launcher}
    if with_source:
        files["csrc/ops.cu"] = "__global__ void k(float* x) { x[0] = 1; }\n"
    found = scan_tree(tmp_path, files, top=True)
    setting = found[("start_linux.sh", 2, "KRN007")]
    assert (setting.severity.value == "info") is not with_source, setting


def test_a_build_setting_scanned_alone_keeps_its_severity(tmp_path: Path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "start_linux.sh").write_text('export CUDA_HOME="$PWD/env"\n', encoding="utf-8")
    (tmp_path / "ops.cu").write_text("__global__ void k(float* x) { x[0] = 1; }\n", encoding="utf-8")
    # a pre-commit hook hands the changed file alone: the sources it does not see are still there
    result = scan_paths([tmp_path / "start_linux.sh"], Config(respect_gitignore=False), target="neuron", cwd=tmp_path)
    (setting,) = [f for r in result.files for f in r.findings if f.code == "KRN007"]
    assert setting.severity.value == "major"


# AutoGPTQ's Marlin layer: the extension import's handler binds the name again to a function that raises,
# `mul` calls the extension, and the layer class calls `mul` (a wrapper of the same module).
MARLIN_PROJECT = {
    "gptq/qlinear_marlin.py": (
        "import torch\n\n"
        "try:\n    import gptq_marlin_cuda\nexcept ImportError as e:\n"
        "    def error_raiser(*args, **kwargs):\n        raise ValueError(str(e))\n\n"
        "    gptq_marlin_cuda = error_raiser\n\n\n"
        "def mul(A, B, C):\n    gptq_marlin_cuda.mul(A, B, C)\n\n\n"
        "class QuantLinear(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        if not torch.cuda.get_device_capability()[0] >= 8:\n            raise ValueError('needs sm80')\n\n"
        "    def forward(self, A):\n        mul(A, self.B, A)\n        return A\n\n\n"
        "def unrelated(x):\n    return x.cuda()\n"
    ),
    "run.py": "from gptq.qlinear_marlin import QuantLinear, unrelated\n\nlayer = QuantLinear()\nunrelated(layer)\n",
}


def test_the_class_around_a_modules_own_extension_wrapper_is_a_wrapper_too(tmp_path: Path):
    found = _fallback_findings(tmp_path, MARLIN_PROJECT)
    capability = found[("gptq/qlinear_marlin.py", 19, "RT007")]
    assert capability.severity.value == "info", capability
    assert "wrapper of the CUDA extension `gptq_marlin_cuda`" in capability.note, capability
    # a function of the module that calls no wrapper keeps its severity
    assert found[("gptq/qlinear_marlin.py", 28, "DEV002")].severity.value != "info", sorted(found)


def test_cuda_sources_and_their_build_under_a_test_folder_report_nothing(tmp_path: Path):
    found = scan_tree(
        tmp_path,
        {
            "csrc/mlp.cu": "__global__ void mlp(float* x) {}\n",
            "tests/cpp/test_mlp.cu": "__global__ void check(float* x) {}\n",
            "tests/group/tile.cuh": "#include <cuda_runtime.h>\n__device__ void tile(float* x) {}\n",
            "tests/cpp/CMakeLists.txt": "project(t LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 90a)\n",
            # test programs beside the kernels, by their names: ShadowKV's `kernels/test_gather_copy.cu` (its own
            # `main()`) and AsyncReasoning's `src/test.cpp`
            "csrc/test_mlp_copy.cu": "#include <cuda_runtime.h>\nint main() { return 0; }\n",
            "src/test.cpp": "#include <cuda_runtime.h>\nint main() { cudaDeviceSynchronize(); }\n",
            "src/kernel_test.cu": "__global__ void check(float* x) {}\n",
        },
        top=True,
    )
    assert found[("csrc/mlp.cu", 1, "KRN002")].severity.value == "blocker", sorted(found)
    # the kernels' own tests (a `.cu`, a `.cuh` and their CMake build) run only where the kernels do
    assert not [k for k in found if k[0] != "csrc/mlp.cu"], sorted(found)


def test_an_extension_built_in_place_is_imported_from_its_folder(tmp_path: Path):
    # cloud_transformers' `emd_linear/setup.py` builds `CUDAExtension('emd', ...)` beside `emd_module.py`, which
    # imports it as `from emd_linear import emd`
    found = scan_tree(
        tmp_path,
        {
            "emd_linear/setup.py": (
                "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
                "setup(name='emd', ext_modules=[CUDAExtension('emd', ['emd.cpp', 'emd_cuda.cu'])],"
                " cmdclass={'build_ext': BuildExtension})\n"
            ),
            "emd_linear/emd.cpp": "#include <torch/extension.h>\n",
            "emd_linear/emd_cuda.cu": "__global__ void emd(float* x) {}\n",
            "emd_linear/emd_module.py": (
                "import torch\nfrom torch.autograd import Function\nfrom emd_linear import emd\n\n\n"
                "class EmdFunction(Function):\n    @staticmethod\n    def forward(ctx, xyz1, xyz2):\n"
                "        xyz1 = xyz1.contiguous().float().cuda()\n        dist = torch.zeros(4, device='cuda')\n"
                "        emd.forward(xyz1, xyz2, dist)\n        return dist\n"
            ),
            "train.py": "from emd_linear.emd_module import EmdFunction\n\nEmdFunction.apply(a, b)\n",
        },
        top=True,
    )
    assert found[("emd_linear/emd_module.py", 3, "KRN009")].severity.value == "blocker", sorted(found)
    moved = found[("emd_linear/emd_module.py", 9, "DEV002")]
    assert moved.severity.value == "info" and "wrapper of the CUDA extension `emd`" in moved.note, moved


def test_a_portable_function_bound_in_the_handler_is_a_fallback_not_the_extension(tmp_path: Path):
    found = _fallback_findings(
        tmp_path,
        {
            "ops/layer.py": (
                "import torch\n\n"
                "def reference_op(x):\n    return x * 2\n\n\n"
                "try:\n    from fused_cuda import op\nexcept ImportError:\n    op = reference_op\n\n\n"
                "class Layer(torch.nn.Module):\n"
                "    def forward(self, x):\n        return op(x.cuda())\n"
            ),
            "run.py": "from ops.layer import Layer\n\nLayer()(x)\n",
        },
    )
    moved = found[("ops/layer.py", 15, "DEV002")]
    assert moved.severity.value != "info", moved  # the layer runs the reference op where the extension is absent


# AutoGPTQ: `setup.py` builds `CUDAExtension("exllama_kernels", ...)`, a name no extension pattern knows;
# a layer module imports its functions (behind a handler that binds raisers) and calls them.
BUILT_NAME_PROJECT = {
    "setup.py": (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
        "setup(name='gptq', ext_modules=[CUDAExtension('exllama_kernels', ['exllama/q4_matmul.cu'])],"
        " cmdclass={'build_ext': BuildExtension})\n"
    ),
    "exllama/q4_matmul.cu": "__global__ void q4(float* x) {}\n",
    "gptq/qlinear_exllama.py": (
        "import torch\n\n"
        "try:\n    from exllama_kernels import make_q4, q4_matmul\nexcept ImportError as e:\n"
        "    def error_raiser(*args, **kwargs):\n        raise ValueError(str(e))\n\n"
        "    make_q4 = error_raiser\n\n\n"
        "class QuantLinear(torch.nn.Module):\n"
        "    def post_init(self):\n        assert self.qweight.device.type == 'cuda'\n"
        "        self.q4 = make_q4(self.qweight)\n\n"
        "    def forward(self, x):\n        return q4_matmul(x, self.q4)\n"
    ),
    "run.py": "from gptq.qlinear_exllama import QuantLinear\n\nQuantLinear().post_init()\n",
}


def test_an_extension_the_build_script_names_is_one_wherever_it_is_imported(tmp_path: Path):
    found = _fallback_findings(tmp_path, BUILT_NAME_PROJECT)
    assert ("gptq/qlinear_exllama.py", 4, "KRN009") in found, sorted(found)
    # the wrapper's `assert self.qweight.device.type == 'cuda'` is the extension's own precondition: not reported
    assert ("gptq/qlinear_exllama.py", 14, "DEV004") not in found, sorted(found)
    # what else the wrapper does for the extension is its working, at info
    texts = dict(BUILT_NAME_PROJECT)
    texts["gptq/qlinear_exllama.py"] = texts["gptq/qlinear_exllama.py"].replace(
        "assert self.qweight.device.type == 'cuda'", "self.qweight = self.qweight.cuda()"
    )
    moved = _fallback_findings(tmp_path / "b", texts)[("gptq/qlinear_exllama.py", 14, "DEV002")]
    assert moved.severity.value == "info" and "wrapper of the CUDA extension" in moved.note, moved


LEGACY_SYNC_BN = {
    # HRNet's `bn_helper.py`: a CUDA sync-BN extension for torch 0.x, `nn.SyncBatchNorm` on any later torch
    "lib/__init__.py": "",
    "lib/models/__init__.py": "",
    "lib/models/bn_helper.py": (
        "import torch\n\nif torch.__version__.startswith('0'):\n"
        "    from .sync_bn.inplace_abn.bn import InPlaceABNSync\n    BatchNorm2d = InPlaceABNSync\n"
        "else:\n    BatchNorm2d = torch.nn.SyncBatchNorm\n"
    ),
    "lib/models/net.py": "from .bn_helper import BatchNorm2d\n\n\ndef norm(c):\n    return BatchNorm2d(c)\n",
    "lib/models/sync_bn/__init__.py": "from .inplace_abn import bn\n",
    "lib/models/sync_bn/inplace_abn/__init__.py": "from .bn import InPlaceABNSync\nfrom .functions import ACT_RELU\n",
    "lib/models/sync_bn/inplace_abn/bn.py": (
        "from .functions import inplace_abn_sync\n\n\nclass InPlaceABNSync:\n"
        "    def forward(self, x):\n        return inplace_abn_sync(x)\n"
    ),
    "lib/models/sync_bn/inplace_abn/functions.py": (
        "import torch\nfrom torch.utils.cpp_extension import load\n\n"
        "_backend = load(name='inplace_abn', sources=['src/inplace_abn.cpp', 'src/inplace_abn_cuda.cu'])\n"
        "ACT_RELU = 'relu'\n\n\ndef inplace_abn_sync(x):\n"
        "    torch.cuda.synchronize()\n    return _backend.forward(x)\n"
    ),
    "lib/models/sync_bn/inplace_abn/src/inplace_abn.cpp": "#include <torch/extension.h>\n",
    "lib/models/sync_bn/inplace_abn/src/inplace_abn_cuda.cu": "__global__ void forward_kernel(float* x) {}\n",
    "lib/models/sync_bn/inplace_abn/src/common.h": "#include <cuda_runtime.h>\n",
}


def test_modules_imported_only_for_an_old_torch_report_nothing(tmp_path: Path):
    # the sync-BN package, its extension build and its CUDA sources serve torch 0.x only: no port touches them
    found = scan_tree(tmp_path / "legacy", LEGACY_SYNC_BN, top=True)
    assert not [key for key in found if key[0].startswith("lib/models/sync_bn/")], sorted(found)
    # imported on every torch, the same package is the project's lock-in
    current = dict(LEGACY_SYNC_BN)
    current["lib/models/bn_helper.py"] = (
        "import torch\nfrom .sync_bn.inplace_abn.bn import InPlaceABNSync\nBatchNorm2d = InPlaceABNSync\n"
    )
    kept = scan_tree(tmp_path / "current", current, top=True)
    assert ("lib/models/sync_bn/inplace_abn/functions.py", 4, "KRN001") in kept, sorted(kept)
    assert [key for key in kept if key[0].endswith("inplace_abn_cuda.cu")], sorted(kept)


# An old `torch.utils.ffi` extension (LinearStyleTransfer's pytorch_spn, faster_rcnn_pytorch's roi_pooling): the
# build script names `_ext.<name>` and may build it with CUDA; `create_extension` generates `_ext/<name>/__init__.py`,
# which binds the compiled library's functions at run time; an autograd Function calls them.
FFI_EXTENSION = {
    "spn/__init__.py": "",
    "spn/build.py": (
        "import torch\nfrom torch.utils.ffi import create_extension\n\nsources, with_cuda = [], False\n"
        "if torch.cuda.is_available():\n    sources += ['src/gate_cuda.c']\n    with_cuda = True\n\n"
        "ffi = create_extension('_ext.gate', headers=[], sources=sources, relative_to=__file__, with_cuda=with_cuda)\n"
    ),
    "spn/_ext/__init__.py": "",
    "spn/_ext/gate/__init__.py": (
        "from torch.utils.ffi import _wrap_function\nfrom ._gate import lib as _lib, ffi as _ffi\n\n__all__ = []\n\n\n"
        "def _import_symbols(locals):\n    for symbol in dir(_lib):\n"
        "        locals[symbol] = _wrap_function(getattr(_lib, symbol), _ffi)\n        __all__.append(symbol)\n\n\n"
        "_import_symbols(locals())\n"
    ),
    "spn/functions/__init__.py": "",
    "spn/functions/gate.py": (
        "import torch\nfrom torch.autograd import Function\nfrom .._ext import gate as gate_lib\n\n\n"
        "class GateFunction(Function):\n    def forward(self, x):\n        output = torch.zeros(x.size()).cuda()\n"
        "        gate_lib.gate_forward_cuda(x, output)\n        return output\n"
    ),
    "train.py": "from spn.functions.gate import GateFunction\n\nGateFunction()(None)\n",
}


def test_an_old_ffi_extension_is_an_extension_and_its_wrapper_a_kernel_wrapper(tmp_path: Path):
    found = _fallback_findings(tmp_path, FFI_EXTENSION)
    imported = found[("spn/functions/gate.py", 3, "KRN009")]
    assert imported.severity.value == "blocker" and "spn._ext.gate" in imported.message, imported
    # the autograd Function's own `.cuda()` is a detail of the extension it wraps
    assert found[("spn/functions/gate.py", 8, "DEV002")].severity.value == "info", sorted(found)
    assert ("train.py", 1, "KRN009") in found, sorted(found)
    # built without CUDA, the library is plain C: its callers are not bound to CUDA
    texts = dict(FFI_EXTENSION)
    texts["spn/build.py"] = texts["spn/build.py"].replace("with_cuda=with_cuda", "with_cuda=False")
    found = _fallback_findings(tmp_path / "cpu", texts)
    assert ("train.py", 1, "KRN009") not in found, sorted(found)


def test_an_extension_built_below_its_setup_folder_is_a_cuda_one(tmp_path: Path):
    """zju3dv/snake: `lib/csrc/extreme_utils/setup.py` builds `CUDAExtension(name="_ext", ...)`, imported as
    `from lib.csrc.extreme_utils import _ext`; a `_ext` of another folder, built by no CUDA build, is not."""
    texts = {
        "lib/__init__.py": "",
        "lib/csrc/__init__.py": "",
        "lib/csrc/extreme_utils/__init__.py": "",
        "lib/csrc/extreme_utils/setup.py": (
            "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension, BuildExtension\n\n"
            "setup(ext_modules=[CUDAExtension(name='_ext', sources=['nms.cu'])],\n"
            "      cmdclass={'build_ext': BuildExtension})\n"
        ),
        "lib/csrc/other/__init__.py": "",
        "lib/utils.py": "from lib.csrc.extreme_utils import _ext\n\n\ndef decode(x):\n    return _ext.nms(x)\n",
        "lib/plain.py": "from lib.csrc.other import _ext\n\n\ndef collect(x):\n    return _ext.collect(x)\n",
        "train.py": "from lib.utils import decode\nfrom lib.plain import collect\n\ndecode(1)\ncollect(1)\n",
    }
    found = _fallback_findings(tmp_path, texts)
    assert ("train.py", 1, "KRN009") in found, sorted(found)  # `decode` runs only where the CUDA `_ext` does
    assert ("train.py", 2, "KRN009") not in found, sorted(found)


def test_an_extension_built_through_a_name_bound_to_cuda_extension_is_a_cuda_one(tmp_path: Path):
    """DCNv4's `setup.py` (and detectron2's): `extension = CppExtension`, `extension = CUDAExtension` where CUDA
    is, then `extension("DCNv4.ext", sources, ...)`; its functions import `from DCNv4 import ext`."""
    texts = {
        "DCNv4/__init__.py": "",
        "setup.py": (
            "import torch\nfrom setuptools import setup\n"
            "from torch.utils.cpp_extension import CppExtension, CUDAExtension, BuildExtension\n\n\n"
            "def get_extensions():\n    extension = CppExtension\n    sources = ['src/vision.cpp']\n"
            "    if torch.cuda.is_available():\n        extension = CUDAExtension\n"
            "        sources += ['src/cuda/dcnv4_cuda.cu']\n"
            "    else:\n        raise NotImplementedError('Cuda is not available')\n"
            "    return [extension('DCNv4.ext', sources)]\n\n\n"
            "setup(name='DCNv4', ext_modules=get_extensions(), cmdclass={'build_ext': BuildExtension})\n"
        ),
        "DCNv4/functions.py": "from DCNv4 import ext\n\n\ndef dcnv4(x):\n    return ext.dcnv4_forward(x)\n",
        "train.py": "from DCNv4.functions import dcnv4\n\ny = dcnv4(1)\n",
    }
    found = _fallback_findings(tmp_path, texts)
    assert ("DCNv4/functions.py", 1, "KRN009") in found, sorted(found)
    assert ("train.py", 1, "KRN009") in found, sorted(found)
    # a name bound to `CppExtension` only builds C++: no CUDA extension
    cpp = dict(texts, **{"setup.py": texts["setup.py"].replace("        extension = CUDAExtension\n", "")})
    found = _fallback_findings(tmp_path / "cpp", cpp)
    assert ("DCNv4/functions.py", 1, "KRN009") not in found, sorted(found)
    # detectron2's `_C`: built with `CppExtension` where CUDA is not (its COCOeval and CPU ops), so the name is
    # no CUDA-only build (an `ext` no name pattern knows is then no extension)
    raising = "    else:\n        raise NotImplementedError('Cuda is not available')\n"
    without_raise = texts["setup.py"].replace(raising, "")
    dual = dict(texts, **{"setup.py": without_raise})
    found = _fallback_findings(tmp_path / "dual", dual)
    assert ("DCNv4/functions.py", 1, "KRN009") not in found, sorted(found)


def test_a_model_class_that_calls_an_extension_outside_its_forward_is_no_wrapper(tmp_path: Path):
    """gaussian-splatting's `GaussianModel`: `create_from_pcd` calls `distCUDA2` once to initialise its scales
    among lines that build parameters on "cuda"; those are model code a port changes, not details of the op."""
    model = (
        "import torch\nfrom simple_knn._C import distCUDA2\n\n\nclass GaussianModel:\n"
        "    def create_from_pcd(self, points):\n        xyz = torch.tensor(points).float().cuda()\n"
        "        dist2 = distCUDA2(xyz)\n        return xyz, dist2\n"
    )
    texts = {
        "simple_knn/setup.py": (
            "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n\n"
            "setup(ext_modules=[CUDAExtension('simple_knn._C', sources=['knn.cu'])])\n"
        ),
        "scene/model.py": model,
        "train.py": "from scene.model import GaussianModel\n\nGaussianModel().create_from_pcd([])\n",
    }
    found = _fallback_findings(tmp_path, texts)
    assert found[("scene/model.py", 7, "DEV002")].severity.value == "minor", sorted(found)
    # the same call in the class's `forward`: the class is the op's wrapper, its devices are details
    texts["scene/model.py"] = model.replace("def create_from_pcd(self, points)", "def forward(self, points)")
    texts["train.py"] = "from scene.model import GaussianModel\n\nGaussianModel().forward([])\n"
    found = _fallback_findings(tmp_path / "op", texts)
    assert found[("scene/model.py", 7, "DEV002")].severity.value == "info", sorted(found)


# anycost-gan's layout: the ops module tries the CUDA ops and, failing that, imports a native module's
# classes of the same names; a block built on them runs anywhere.
NATIVE_FALLBACK_PROJECT = {
    "cuda_op/__init__.py": "",
    "cuda_op/fused_act.py": (
        "import os\nfrom torch.utils.cpp_extension import load\n\n"
        "fused = load('fused', sources=[os.path.join(os.path.dirname(__file__), 'fused_bias_act_kernel.cu')])\n\n\n"
        "class FusedLeakyReLU:\n    def forward(self, x):\n        return fused.fused_bias_act(x)\n"
    ),
    "cuda_op/op_native.py": (
        "import torch.nn.functional as F\n\n\nclass FusedLeakyReLU:\n    def forward(self, x):\n"
        "        return F.leaky_relu(x)\n"
    ),
    "cuda_op/fused_bias_act_kernel.cu": "__global__ void act(float* x) {}\n",
    "models/ops.py": (
        "import os\n\ntry:\n    assert not os.environ.get('FORCE_NATIVE')\n"
        "    from cuda_op.fused_act import FusedLeakyReLU\nexcept Exception as e:\n    print(e)\n"
        "    from cuda_op.op_native import FusedLeakyReLU\n\n\nclass Block:\n    def __init__(self):\n"
        "        self.act = FusedLeakyReLU()\n"
    ),
    "train.py": "from models.ops import Block\n\nBlock()\n",
}


def test_a_name_a_handler_imports_again_from_a_native_module_has_a_portable_path(tmp_path: Path):
    found = _fallback_findings(tmp_path, NATIVE_FALLBACK_PROJECT)
    # the `try:` import of the CUDA op is reported, lowered; the handler's native import is no use of it
    assert found[("models/ops.py", 5, "KRN009")].severity.value == "major", sorted(found)
    assert ("models/ops.py", 8, "KRN009") not in found, sorted(found)
    # a class built on the name runs with the native op: neither it nor its importers are CUDA-bound
    assert not [key for key in found if key[0] == "train.py"], sorted(found)
    # with a handler that imports another CUDA op, the block needs CUDA either way
    texts = dict(NATIVE_FALLBACK_PROJECT)
    texts["models/ops.py"] = texts["models/ops.py"].replace("cuda_op.op_native", "cuda_op.fused_act_jit")
    texts["cuda_op/fused_act_jit.py"] = texts["cuda_op/fused_act.py"]
    found = _fallback_findings(tmp_path / "cuda", texts)
    assert ("train.py", 1, "KRN009") in found, sorted(found)


def test_the_triton_of_before_its_mlir_rewrite_defines_kernels_whose_launcher_details_are_info(tmp_path: Path):
    # MPT's `flash_attn_triton.py`, copied into LLaVA forks (LITA, MoE-LLaVA): `import triton_pre_mlir as triton`
    kernels = (
        "import torch\nimport triton_pre_mlir as triton\n\n\n@triton.jit\ndef _fwd_kernel(Q, Out):\n    pass\n\n\n"
        "def _flash_attn_forward(q):\n    assert q.is_cuda\n    o = torch.empty_like(q)\n"
        "    _fwd_kernel[(1,)](q, o)\n    return o\n"
    )
    run = "from mpt.flash_attn_triton import _flash_attn_forward\n\n_flash_attn_forward(None)\n"
    found = _fallback_findings(tmp_path, {"mpt/flash_attn_triton.py": kernels, "run.py": run})
    assert ("mpt/flash_attn_triton.py", 5, "KRN003") in found, sorted(found)
    # the launcher's `assert q.is_cuda` is the kernel's own precondition: not reported (readers rejected it at info)
    assert ("mpt/flash_attn_triton.py", 11, "DEV004") not in found, sorted(found)
    # what else it does to run the kernel is its working, at info
    kernels = kernels.replace("    assert q.is_cuda\n", "    q = q.cuda()\n")
    found = _fallback_findings(tmp_path / "b", {"mpt/flash_attn_triton.py": kernels, "run.py": run})
    moved = found[("mpt/flash_attn_triton.py", 11, "DEV002")]
    assert moved.severity.value == "info" and "launches the Triton kernel `_fwd_kernel`" in moved.note, moved


# detectron2's layout (copied into BMaskR-CNN, SparseR-CNN, RegionCLIP): `setup.py` builds `_C` with `CppExtension`
# and with `CUDAExtension` where CUDA is; `ROIAlign` has a CPU kernel beside its CUDA one, `deform_conv` has none.
DUAL_BUILD_PROJECT = {
    "setup.py": (
        "import glob\nimport torch\nfrom setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension\n\n\n"
        "def get_extensions():\n    sources = glob.glob('det/layers/csrc/**/*.cpp')\n    extension = CppExtension\n"
        "    if torch.cuda.is_available() and CUDA_HOME is not None:\n        extension = CUDAExtension\n"
        "        sources += glob.glob('det/layers/csrc/**/*.cu')\n"
        "    return [extension('det._C', sources)]\n\n\nsetup(name='det', ext_modules=get_extensions())\n"
    ),
    "det/__init__.py": "",
    "det/layers/__init__.py": "",
    "det/layers/roi_align.py": (
        "from det import _C\n\n\ndef roi_align(x, boxes):\n    return _C.roi_align_forward(x, boxes)\n"
    ),
    "det/layers/csrc/ROIAlign/ROIAlign_cuda.cu": "__global__ void roi_align_kernel(float* x) {}\n",
    "det/layers/csrc/ROIAlign/ROIAlign_cpu.cpp": "#include <ATen/ATen.h>\nat::Tensor roi_align_cpu(at::Tensor x);\n",
    "det/layers/csrc/deformable/deform_conv_cuda.cu": "__global__ void deform_kernel(float* x) {}\n",
    "det/layers/csrc/vision.cpp": "#include <torch/extension.h>\n",
}


def test_an_extension_built_without_cuda_too_is_one_level_lower_and_a_kernel_with_a_cpu_twin_too(tmp_path: Path):
    found = scan_tree(tmp_path, DUAL_BUILD_PROJECT, top=True)
    twin = found[("det/layers/csrc/ROIAlign/ROIAlign_cuda.cu", 1, "KRN002")]
    assert twin.severity.value == "major" and "`ROIAlign_cpu.cpp` beside it" in twin.note, twin
    # a kernel with no CPU twin still needs its port
    assert found[("det/layers/csrc/deformable/deform_conv_cuda.cu", 1, "KRN002")].severity.value == "blocker"
    imported = found[("det/layers/roi_align.py", 1, "KRN009")]
    assert imported.severity.value == "major" and "without CUDA too" in imported.note, imported
    # a build script that raises where CUDA is not builds nothing there: as it was
    raising = dict(DUAL_BUILD_PROJECT)
    raising["setup.py"] = raising["setup.py"].replace(
        "        sources += glob.glob('det/layers/csrc/**/*.cu')\n",
        "        sources += glob.glob('det/layers/csrc/**/*.cu')\n"
        "    else:\n        raise NotImplementedError('CUDA')\n",
    )
    found = scan_tree(tmp_path / "raising", raising, top=True)
    assert found[("det/layers/csrc/ROIAlign/ROIAlign_cuda.cu", 1, "KRN002")].severity.value == "blocker"
    assert found[("det/layers/roi_align.py", 1, "KRN009")].severity.value == "blocker"
    # a CPU build with no CPU kernel (RND-SCI's `roll_optim`: `vision.cpp` and one `.cu`) runs no op there
    stub = {p: text for p, text in DUAL_BUILD_PROJECT.items() if not p.endswith("_cpu.cpp")}
    found = scan_tree(tmp_path / "stub", stub, top=True)
    assert found[("det/layers/roi_align.py", 1, "KRN009")].severity.value == "blocker"


def test_a_precondition_inside_an_unused_wrapper_is_still_not_reported(tmp_path: Path):
    # det3d's `ModulatedDeformConvFunction` (CenterPoint in FocalsConv), which nothing uses: its `assert x.is_cuda`
    # is the extension's precondition wherever the wrapper is, unused or not
    files = {
        "train.py": "from ops.dcn import deform\n\ndeform(1)\n",
        "ops/__init__.py": "",
        "ops/dcn.py": (
            "from torch.autograd import Function\nimport dcn_cuda\n\n\ndef deform(x):\n    return x\n\n\n"
            "class ModulatedDeform(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
            "        assert x.is_cuda\n        return dcn_cuda.modulated_forward(x)\n"
        ),
    }
    found = scan_tree(tmp_path, files, top=True)
    assert not [k for k in found if k[0] == "ops/dcn.py" and k[1] == 12], sorted(found)
    assert found[("ops/dcn.py", 13, "KRN009")].severity.value == "info", sorted(found)


# tencent-ailab/GrndPodcastSum's layout: a package whose `__init__` star-imports its modules, one of which defines
# a function named like a compiled module (`prepare_data_cuda`, which only calls `.cuda()`)
STAR_REEXPORT_PROJECT = {
    "utility/__init__.py": "from .input_output import *\nfrom .prepare_data import *\n",
    "utility/input_output.py": "import pickle\n\n\ndef load_from_pkl(path):\n    return pickle.load(path)\n",
    "utility/prepare_data.py": (
        "import torch\n\n\ndef prepare_data_cuda(batch):\n    return tuple(t.cuda() for t in batch)\n"
    ),
    "train.py": (
        "from utility import prepare_data_cuda, load_from_pkl\n\n\ndef train_ext(loader):\n"
        "    for batch in loader:\n        x = prepare_data_cuda(batch)\n    return x\n"
    ),
    "run.py": "from train import train_ext\n\ntrain_ext([])\n",
}


def _scan_repo(tmp_path: Path, files, above: bool):
    """Write `files` into `tmp_path/repo` and scan it from inside, or from the folder above it (`portcheck scan
    repo`); the findings keyed by (path in the repository, line, code)."""
    root = tmp_path / "repo"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    cwd = tmp_path if above else root
    result = scan_paths([root], Config(respect_gitignore=False), target="neuron", cwd=cwd, jobs=1)
    prefix = "repo/" if above else ""
    return {(r.path[len(prefix) :], f.line, f.code): f for r in result.files for f in r.findings}


@pytest.mark.parametrize("above", [False, True])
def test_a_function_a_package_star_imports_is_no_compiled_module(tmp_path: Path, above: bool):
    found = _scan_repo(tmp_path, STAR_REEXPORT_PROJECT, above)
    codes = {(Path(path).name, code) for path, _, code in found}
    assert ("prepare_data.py", "DEV002") in codes, sorted(codes)  # the `.cuda()` is the lock-in
    assert not any(code == "KRN009" for _, code in codes), sorted(codes)


# apple/ml-sigmoid-attention's flash-attention fork: an optional extension with its own build script, which only a
# module nothing in the application imports loads.
OPTIONAL_BUILD = {
    "main.py": "from pkg.model import run\n\nrun()\n",
    "pkg/__init__.py": "",
    "pkg/model.py": "import torch\n\n\ndef run():\n    return torch.ones(2)\n",
    "pkg/ops/__init__.py": "",
    "pkg/ops/layer_norm.py": "import dropout_layer_norm\n\n\ndef ln(x):\n    return dropout_layer_norm.fwd(x)\n",
    "csrc/layer_norm/setup.py": (
        "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
        "setup(\n    name='dropout_layer_norm',\n    ext_modules=[\n        CUDAExtension(\n"
        "            name='dropout_layer_norm',\n            sources=['ln_api.cpp', 'ln_fwd_256.cu'],\n        )\n"
        "    ],\n    cmdclass={'build_ext': BuildExtension},\n)\n"
    ),
    "csrc/layer_norm/ln_api.cpp": "#include <torch/extension.h>\n#include <cuda_runtime.h>\n",
    "csrc/layer_norm/ln_fwd_256.cu": '#include "ln.h"\n__global__ void ln_fwd(float *x) {}\n',
    "csrc/layer_norm/ln.h": "#include <cuda_fp16.h>\n",
}


@pytest.mark.parametrize("imported", [False, True])
def test_an_extension_only_unreached_modules_import_is_an_optional_build(tmp_path: Path, imported: bool):
    files = dict(OPTIONAL_BUILD)
    if imported:
        files["main.py"] = "from pkg.model import run\nfrom pkg.ops.layer_norm import ln\n\nrun()\nln(1)\n"
    found = scan_tree(tmp_path, files, top=True)
    build = {k: f for k, f in found.items() if k[0].startswith("csrc/layer_norm/")}
    assert {k[0] for k in build} >= {"csrc/layer_norm/setup.py", "csrc/layer_norm/ln_fwd_256.cu"}, sorted(found)
    if imported:
        assert any(f.severity.value == "blocker" for f in build.values()), sorted(found)
    else:
        assert all(f.severity.value == "info" and "`dropout_layer_norm`" in f.note for f in build.values()), build


# apple/ml-gsn's StyleGAN2 ops: the package's `__init__` imports the CUDA ops in a `try` whose handler imports
# native ones, and the model imports the names from the package.
NATIVE_FALLBACK_OPS = {
    "models/__init__.py": "",
    "models/op/__init__.py": (
        "try:\n    from .upfirdn2d import upfirdn2d\nexcept Exception as e:\n    print(e)\n"
        "    from .native_ops import upfirdn2d\n"
    ),
    "models/op/upfirdn2d.py": (
        "from torch.utils.cpp_extension import load\n\n"
        "upfirdn2d_op = load('upfirdn2d', sources=['models/op/upfirdn2d.cpp', 'models/op/upfirdn2d_kernel.cu'])\n\n\n"
        "def upfirdn2d(x, k):\n    return upfirdn2d_op.upfirdn2d(x, k)\n"
    ),
    "models/op/native_ops.py": "import torch\n\n\ndef upfirdn2d(x, k):\n    return torch.nn.functional.conv2d(x, k)\n",
    "models/op/upfirdn2d.cpp": "#include <torch/extension.h>\n",
    "models/op/upfirdn2d_kernel.cu": "__global__ void upfirdn2d_kernel(float *x) {}\n",
    "models/layers.py": "from .op import upfirdn2d\n\n\ndef blur(x, k):\n    return upfirdn2d(x, k)\n",
    "train.py": "from models.layers import blur\n\nblur(1, 2)\n",
}


@pytest.mark.parametrize("above", [False, True])
def test_ops_a_package_imports_with_a_native_fallback_are_no_blockers(tmp_path: Path, above: bool):
    found = _scan_repo(tmp_path, NATIVE_FALLBACK_OPS, above)
    for key in [("models/layers.py", 1, "KRN009"), ("models/op/upfirdn2d_kernel.cu", 1, "KRN002")]:
        assert key in found and found[key].guarded and found[key].severity.value == "major", (key, sorted(found))
    assert not any(f.severity.value == "blocker" for f in found.values()), sorted(found)


# Triton-distributed's layout: kernels per GPU vendor, chosen by the model at import.
def test_what_a_vendor_folder_defines_is_that_vendors_code(tmp_path: Path):
    kernel = (
        "import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\n"
        "class Attn:\n    def __call__(self, x):\n        k[(1,)](x)\n"
    )
    files = {
        "pkg/__init__.py": "",
        "pkg/layers/__init__.py": "",
        "pkg/layers/amd/__init__.py": "",
        "pkg/layers/amd/attn.py": kernel,
        "pkg/layers/nvidia/__init__.py": "",
        "pkg/layers/nvidia/attn.py": kernel,
        "pkg/model.py": (
            "import torch\n\nif torch.version.cuda:\n    from pkg.layers.nvidia.attn import Attn\n"
            "elif torch.version.hip:\n    from pkg.layers.amd.attn import Attn\n"
        ),
    }
    found = scan_tree(tmp_path, files, top=True)
    assert ("pkg/model.py", 4, "KRN009") in found, sorted(found)  # NVIDIA's kernel: the lock-in
    assert ("pkg/model.py", 6, "KRN009") not in found, sorted(found)
    assert not any(path.startswith("pkg/layers/amd/") for path, _, _ in found), sorted(found)
