"""Modules of an application nothing runs: their findings are `info`, with the note that says why."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest

from portcheck.cache import Cache
from portcheck.catalog import load_catalog
from portcheck.config import Config
from portcheck.project_index import TextSources
from portcheck.pyscan.definitions import top_level_constants, top_level_definitions
from portcheck.pyscan.loading import (
    IDLE,
    IMPORTS,
    LOADS_ANY,
    LOADS_CONFIG,
    LOADS_NAMED,
    MAIN,
    RUNS,
    SYS_PATH,
    SYS_PATH_DIR,
    TESTS,
    loading_facts,
)
from portcheck.pyscan.spellings import may_lead_to
from portcheck.reach import (
    HELD_UNUSED_NOTE,
    SWITCHED_OFF_NOTE,
    UNREACHED_NOTE,
    UNUSED_NOTE,
    _below,
    is_application,
    switched_off,
    unreached,
    unused_definitions,
)
from portcheck.runner import scan_paths

OP = "import torch\n\n\ndef fused(x):\n    torch.cuda.synchronize()\n    return x.cuda()\n"

# CodeFormer's layout: scripts at the top, a vendored library whose op folders the scripts never import,
# and a registry that imports its architectures by computed name below a literal package.
APP = {
    "inference.py": "from vendor.utils import load\nfrom vendor.archs import build\n\nbuild(load())\n",
    "vendor/__init__.py": "",
    "vendor/utils.py": "def load():\n    return 1\n",
    "vendor/archs/__init__.py": (
        "import importlib\n\nNAMES = ['net_arch']\n"
        "_mods = [importlib.import_module(f'vendor.archs.{n}') for n in NAMES]\n\n\ndef build(x):\n    return x\n"
    ),
    "vendor/archs/net_arch.py": "from vendor.ops.dcn import deform\n\n\ndef net(x):\n    return deform(x)\n",
    "vendor/ops/__init__.py": "",
    "vendor/ops/dcn.py": OP.replace("fused", "deform"),
    "vendor/ops/fused_act/__init__.py": "from .fused_act import fused\n",
    "vendor/ops/fused_act/fused_act.py": OP,
}


def _scan(root: Path, files: Dict[str, str], paths=(".",)):
    (root / ".git").mkdir(parents=True, exist_ok=True)  # the repository's top: nothing above it counts
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    result = scan_paths([root / p for p in paths], Config(respect_gitignore=False), target="neuron", cwd=root, jobs=1)
    return {(r.path, f.line, f.code): f for r in result.files for f in r.findings}


def _severities(found, path):
    return {(line, code): f.severity.value for (p, line, code), f in found.items() if p == path}


def test_a_vendored_op_no_script_imports_is_info_and_the_one_a_model_uses_is_not(tmp_path: Path):
    found = _scan(tmp_path, APP)
    unused = _severities(found, "vendor/ops/fused_act/fused_act.py")
    assert unused == {(5, "RT001"): "info", (6, "DEV002"): "info"}, unused
    assert all(f.note == UNREACHED_NOTE for (p, _, _), f in found.items() if p.startswith("vendor/ops/fused_act/"))
    # imported through the registry's computed import: as reported without the pass
    used = _severities(found, "vendor/ops/dcn.py")
    assert used and "info" not in used.values(), used


def test_torch_imports_name_no_module_of_the_project_and_unrun_modules_report_no_xla_costs(tmp_path: Path):
    # XMem: `from torch.nn import functional as F` in a script, and a copied SyncBN package whose
    # `modules/functional/` nothing of the application imports
    files = {
        "demo.py": "from torch.nn import functional as F\nfrom app.model import net\n\nnet(F)\n",
        "app/__init__.py": "",
        "app/model.py": "def net(x):\n    return x\n",
        "app/syncbn/__init__.py": "",
        "app/syncbn/modules/__init__.py": "",
        "app/syncbn/modules/functional/__init__.py": "from .syncbn import sync\n",
        "app/syncbn/modules/functional/syncbn.py": (
            "import torch\n\n\ndef sync(model, loader, opt):\n    for batch in loader:\n        loss = model(batch)\n"
            "        loss.backward()\n        opt.step()\n        print(loss.item())\n    return model.cuda()\n"
        ),
    }
    found = _severities(_scan(tmp_path, files), "app/syncbn/modules/functional/syncbn.py")
    assert found == {(10, "DEV002"): "info"}, found  # lock-in at info; no host sync of a loop nothing runs
    # imported by the application, the same module reports both
    files["demo.py"] += "from app.syncbn.modules.functional import sync\n\nsync(net, [], None)\n"
    found = _severities(_scan(tmp_path, files), "app/syncbn/modules/functional/syncbn.py")
    assert (9, "XLA005") in found and found[(10, "DEV002")] != "info", found


def test_a_notebook_or_a_script_that_imports_the_op_reaches_it(tmp_path: Path):
    notebook = '{"cells": [{"cell_type": "code", "source": ["from vendor.ops.fused_act import fused\\n"]}]}'
    found = _scan(tmp_path, {**APP, "demo.ipynb": notebook})
    assert "info" not in _severities(found, "vendor/ops/fused_act/fused_act.py").values()
    runs = {**APP, "vendor/tools/bench.py": "from vendor.ops.fused_act import fused\n\nprint(fused(1))\n"}
    found = _scan(tmp_path / "b", runs)
    assert "info" not in _severities(found, "vendor/ops/fused_act/fused_act.py").values()


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"pyproject.toml": "[project]\nname = 'vendor'\n"}, id="a library"),
        pytest.param({"setup.py": "from setuptools import setup\nsetup()\n"}, id="a library with setup.py"),
        pytest.param({"setup.cfg": "[metadata]\nname = vendor\n"}, id="a library with setup.cfg"),
        pytest.param({"vendor/utils.py": "import importlib\nload = lambda name: importlib.import_module(name)\n"},
                     id="a computed import"),
        pytest.param({"vendor/utils.py": "from hydra.utils import instantiate\nload = lambda c: instantiate(c)\n",
                      "configs/ops.yaml": "act:\n  _target_: vendor.ops.fused_act.fused_act.fused\n"},
                     id="hydra, a config naming it"),
        pytest.param({"vendor/utils.py": (
            "import glob, importlib\nmods = [importlib.import_module(p) for p in glob.glob('vendor/*')]\n"
            "from hydra.utils import get_class\nload = lambda c: get_class(c)\n")},
                     id="a loader beside a listing of files"),
    ],
)
def test_nothing_is_called_unreached_where_any_module_may_be_imported(tmp_path: Path, change):
    found = _scan(tmp_path, {**APP, **change})
    assert set(_severities(found, "vendor/ops/fused_act/fused_act.py").values()) - {"info"}


NO_IMPORT = {"inference.py": "print('no import of the package')\n"}


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"run.sh": "python -m vendor.tools.export\n"}, id="a script names it"),
        pytest.param({"configs/model.yaml": "arch: vendor.archs.net_arch\n"}, id="a config names it"),
        pytest.param({"inference.py": "import sys\nsys.path.insert(0, 'vendor')\n"}, id="a module spells it"),
        pytest.param({"vendor/tools/export.py": "print('exporting')\n"}, id="it holds work at module level"),
    ],
)
def test_a_package_nothing_outside_it_names_is_unreached_in_a_whole_project(tmp_path: Path, change):
    # StyleNAT carries a copy of StyleGAN3's `torch_utils/` that none of its scripts, configs or modules names
    found = _scan(tmp_path / "whole", {**APP, **NO_IMPORT})
    assert set(_severities(found, "vendor/ops/fused_act/fused_act.py").values()) == {"info"}
    assert set(_severities(found, "vendor/ops/dcn.py").values()) == {"info"}
    # named or run from outside, it may be what the project runs
    found = _scan(tmp_path / "named", {**APP, **NO_IMPORT, **change})
    assert set(_severities(found, "vendor/ops/fused_act/fused_act.py").values()) - {"info"}


def test_a_source_only_modules_nothing_runs_build_is_unreached_too(tmp_path: Path):
    # StyleNAT's unused `torch_utils/ops/filtered_lrelu.py` builds `filtered_lrelu*.cu` through `get_plugin`
    build = (
        "import os\nfrom torch.utils.cpp_extension import load\n\n\ndef _init():\n"
        "    return load(name='fused_plugin', sources=[os.path.join(os.path.dirname(__file__), 'fused_kernel.cu')])\n"
    )
    kernel = "__global__ void fused(float* x) { x[0] = 1.0f; }\n"
    files = {**APP, "vendor/ops/fused_act/fused_act.py": OP + build, "vendor/ops/fused_act/fused_kernel.cu": kernel}
    found = _scan(tmp_path / "unused", files)
    assert set(_severities(found, "vendor/ops/fused_act/fused_kernel.cu").values()) == {"info"}, sorted(found)
    # built by a reached module as well (`vendor/ops/dcn.py`, which the registry's architecture imports): at its
    # own severity
    also = (
        "from torch.utils.cpp_extension import load\n\n\ndef _build():\n"
        "    return load(name='dcn_plugin', sources=['vendor/ops/fused_act/fused_kernel.cu'])\n"
    )
    both = {**files, "vendor/ops/dcn.py": files["vendor/ops/dcn.py"] + also}
    found = _scan(tmp_path / "both", both)
    assert set(_severities(found, "vendor/ops/fused_act/fused_kernel.cu").values()) - {"info"}, sorted(found)
    # built by a module a script imports: at its own severity
    files["vendor/archs/net_arch.py"] += "from vendor.ops.fused_act.fused_act import fused\n"
    found = _scan(tmp_path / "used", files)
    assert set(_severities(found, "vendor/ops/fused_act/fused_kernel.cu").values()) - {"info"}, sorted(found)


def test_a_package_nothing_imports_in_a_folder_of_a_repository_may_be_used_from_outside_it(tmp_path: Path):
    # a scan of part of a repository (its top, holding `.git`, lies above): a script outside the scan may import it
    files = {f"app/{name}": text for name, text in {**APP, **NO_IMPORT}.items()}
    found = _scan(tmp_path, files, paths=("app",))
    assert set(_severities(found, "app/vendor/ops/fused_act/fused_act.py").values()) - {"info"}


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param({"setup.cfg": "[flake8]\nmax-line-length = 120\n\n[yapf]\nbased_on_style = pep8\n"},
                     id="setup.cfg"),
        pytest.param({"pyproject.toml": "[tool.black]\nline-length = 120\n"}, id="pyproject.toml"),
    ],
)
def test_a_file_of_linter_settings_is_no_packaging_metadata(tmp_path: Path, settings):
    # RelightableAvatar's `setup.cfg` holds only `[pdbr]`, ArcNerf's `[flake8]` and `[yapf]`: applications
    found = _scan(tmp_path, {**APP, **settings})
    assert set(_severities(found, "vendor/ops/fused_act/fused_act.py").values()) == {"info"}


def test_a_package_module_named_test_and_commented_out_imports_reach_nothing(tmp_path: Path):
    # NeuSample: mmdetection's `apis/test.py` (a module of helpers, no `__main__` block) and `apis/inference.py`,
    # whose imports `apis/__init__.py` comments out, and a class whose only use is commented out
    files = {
        "train.py": "from pkg.apis import train\n\ntrain()\n",
        "pkg/__init__.py": "",
        "pkg/apis/__init__.py": "# from .test import single_gpu_test\nfrom .train import train\n",
        "pkg/apis/train.py": (
            "import torch\n\n\nclass Rotary:\n    def f(self, x):\n        return x.cuda()\n\n\n"
            "def train():\n    # r = Rotary()\n    return 1\n"
        ),
        "pkg/apis/test.py": OP.replace("fused", "single_gpu_test"),
    }
    found = _scan(tmp_path, files)
    assert set(_severities(found, "pkg/apis/test.py").values()) == {"info"}, sorted(found)
    assert found[("pkg/apis/train.py", 6, "DEV002")].note == UNUSED_NOTE.format(name="Rotary")
    # imported, it is reached
    files["pkg/apis/__init__.py"] = "from .test import single_gpu_test\nfrom .train import train\n"
    found = _scan(tmp_path / "b", files)
    assert "info" not in _severities(found, "pkg/apis/test.py").values()


def test_a_scan_of_single_files_sees_part_of_the_project_only(tmp_path: Path):
    found = _scan(tmp_path, APP, paths=("vendor/ops/fused_act/fused_act.py", "inference.py"))
    severities = _severities(found, "vendor/ops/fused_act/fused_act.py")
    assert severities and "info" not in severities.values(), severities
    assert not is_application([tmp_path / "inference.py"])


def test_a_warm_scan_gives_what_a_cold_one_does(tmp_path: Path, monkeypatch):
    _scan(tmp_path, APP)
    monkeypatch.chdir(tmp_path)
    config = Config(root=tmp_path)
    runs = [
        scan_paths([Path(".")], config, target="neuron", jobs=1, cache=Cache(tmp_path, load_catalog().digest))
        for _ in range(2)
    ]
    fresh = scan_paths([Path(".")], config, target="neuron", jobs=1, cache=None)
    assert runs[0] == runs[1] == fresh
    assert any(f.note == UNREACHED_NOTE for r in fresh.files for f in r.findings)


def _loading(text: str):
    return {f for f in loading_facts(text) if not f.startswith(IMPORTS) and f != IDLE}


@pytest.mark.parametrize(
    "text,holds",
    [
        ("def test_forward():\n    pass\n", True),
        ("class T(unittest.TestCase):\n    def check(self):\n        pass\n", True),
        ("import pytest\n", True),
        ("from torch.testing import assert_close\n", True),
        ("import argparse\n\ndef main():\n    pass\n\nif __name__ == '__main__':\n    main()\n", False),
        ("def tester():\n    pass\n", True),  # `test*`, as the runner's default pattern
        ("# def test_x():\nx = 'import pytest'\n", False),
    ],
)
def test_the_tests_fact(text: str, holds: bool):
    assert (TESTS in loading_facts(text)) is holds


def test_per_file_facts():
    assert _loading("import importlib\nm = importlib.import_module(f'pkg.archs.{n}')\n") == {"loads:pkg.archs."}
    assert LOADS_ANY in loading_facts("import importlib\nm = importlib.import_module(name)\n")
    # a module's own name, its class's, its top package, or a config file copied into a temporary folder:
    # nothing the run has not imported (mmcv's `Config`, DAB-DETR's `util/slconfig.py`)
    for loaded in ("__name__", "type(self).__module__", "__name__.split('.')[0]", "temp_module_name"):
        assert LOADS_ANY not in loading_facts(f"import importlib\nm = importlib.import_module({loaded})\n")
    assert LOADS_ANY in loading_facts("import importlib\nm = importlib.import_module(__name__.split('.')[0] + n)\n")
    assert LOADS_ANY in loading_facts("import importlib\nm = importlib.import_module(build_name)\n")
    # a loader imported under another name (sail-sg/GP-Nerf's `impm(cfg.render.file)`); the alias spelt alone is no call
    aliased = "from importlib import import_module as impm\n\nmodel = getattr(impm(cfg.render.file), 'build')(cfg)\n"
    assert LOADS_ANY in loading_facts(aliased)
    assert _loading(aliased.replace("impm(cfg.render.file)", "impm")) == set()
    # detectron2's lazy configs (detrex, Stable-DINO): the Python config file a command line names runs, and its imports
    lazy = "from detectron2.config import LazyConfig\ncfg = LazyConfig.load(args.config_file)\n"
    assert LOADS_CONFIG in loading_facts(lazy) and LOADS_ANY not in loading_facts(lazy)
    # a loader of what configs name beside a listing of data files (SparseTrack's `track.py` globs its result
    # files) loads what configs name; beside a listing of Python files, any module
    named = "from hydra.utils import instantiate\nmodel = instantiate(cfg.model)\n"
    assert _loading(named + "files = glob.glob('results/*.txt')\n") == {LOADS_NAMED}
    assert LOADS_ANY in loading_facts(named + "files = glob.glob('plugins/*.py')\n")
    assert LOADS_ANY in loading_facts(named + "mods = pkgutil.iter_modules(path)\n")
    two = "from importlib import reload, import_module as im\nm = im('pkg.archs.' + n)\n"
    assert _loading(two) == {"loads:pkg.archs."}
    # HyperPyYAML builds `!new:pkg.mod.Class` from a YAML file, as Hydra's `instantiate` does `_target_`
    # (what a config or a string of the project names: `loads-named`, with each dotted string a `named:` fact)
    facts = loading_facts("from hyperpyyaml import load_hyperpyyaml\nconfigs = load_hyperpyyaml(f)\nm = 'a.b:C'\n")
    assert LOADS_NAMED in facts and "named:a.b" in facts and LOADS_ANY not in facts, facts
    # a Hydra override inside a longer string names what it builds (SAM 2's video predictor)
    override = "overrides = ['++model._target_=sam2.sam2_video_predictor.SAM2VideoPredictor']\n"
    assert "named:sam2.sam2_video_predictor.SAM2VideoPredictor" in loading_facts(override)
    # a name the function's caller gives (a parameter, or bound from one): what a config or a string names, as
    # LDM's `get_obj_from_str` of `instantiate_from_config` and mmcv's `import_modules_from_strings`
    ldm = (
        "import importlib\n\n\ndef get_obj_from_str(string, reload=False):\n    module, cls = string.rsplit('.', 1)\n"
        "    return getattr(importlib.import_module(module, package=None), cls)\n"
    )
    mmcv = (
        "from importlib import import_module\n\n\ndef imports(names):\n    for imp in names:\n"
        "        import_module(imp)\n"
    )
    # (and a path: wetectron's `import_file(module_name, file_path)`, mmcv's test helper `run_path(args[0])`)
    wetectron = (
        "import importlib.util\n\n\ndef import_file(module_name, file_path):\n"
        "    spec = importlib.util.spec_from_file_location(module_name, file_path)\n    return spec\n"
    )
    helper = "from runpy import run_path\n\n\ndef check(cmd):\n    args = cmd.split()\n    run_path(args[0])\n"
    for text in (ldm, mmcv, wetectron, helper):
        assert _loading(text) == {LOADS_NAMED}, text
    # a name built below a package from the caller's (snap-research/CAT's `find_distiller_using_name`): a module
    # one level below it too
    cat = (
        "import importlib\n\n\ndef find(distiller_name):\n"
        "    distiller_filename = 'distillers.' + distiller_name + '_distiller'\n"
        "    return importlib.import_module(distiller_filename)\n"
    )
    assert _loading(cat) == {LOADS_NAMED, "loads:distillers."}
    assert LOADS_ANY in loading_facts("from runpy import run_path\nrun_path(sys.argv[1])\n")
    # not one the function makes (`build_name` above), nor one of a module that lists files (plugins)
    made = "import importlib\n\n\ndef load(x):\n    name = make()\n    importlib.import_module(name)\n"
    assert LOADS_ANY in loading_facts(made)
    assert LOADS_ANY in loading_facts(mmcv + "names = os.listdir(here)\n")
    # bound from it over several lines, and spelt in an expression (StyleGAN's `dnnlib.util.get_module_from_obj_name`,
    # TF StyleGAN's `tfutil.import_module`, whose own `def import_module(` is no call); a listing in another function of
    # the module feeds nothing it loads (`list_dir_recursively_with_ignore` walks a run's sources to copy them)
    dnnlib = (
        "import importlib\nimport os\n\n\ndef get_module_from_obj_name(obj_name):\n    parts = obj_name.split('.')\n"
        "    name_pairs = [('.'.join(parts[:i]), '.'.join(parts[i:])) for i in range(len(parts), 0, -1)]\n"
        "    for module_name, local_obj_name in name_pairs:\n        module = importlib.import_module(module_name)\n"
        "\n\ndef import_module(module_or_obj_name):\n    parts = module_or_obj_name.split('.')\n"
        "    for i in range(len(parts), 0, -1):\n        module = importlib.import_module('.'.join(parts[:i]))\n"
        "\n\ndef list_dir(dir_path):\n    for root, dirs, files in os.walk(dir_path):\n        pass\n"
    )
    assert _loading(dnnlib) == {LOADS_NAMED}
    # a listing beside the call that gives something else: StyleGAN's `custom_ops.get_plugin` hashes the sources it
    # lists, then imports the extension it built under the name its caller gives
    plugin = (
        "import importlib\n\n\ndef get_plugin(module_name, sources):\n"
        "    files = sorted(x for x in Path(sources[0]).iterdir() if x.is_file())\n    build(files)\n"
        "    return importlib.import_module(module_name)\n"
    )
    assert _loading(plugin) == {LOADS_NAMED}
    # a listing the name comes from, beside the call or in a function that calls it: plugins found in a folder
    listed = (
        "import importlib\n\n\ndef load(folder):\n    for f in os.listdir(folder):\n"
        "        importlib.import_module(f[:-3])\n"
    )
    caller = (
        "import importlib\n\n\ndef load(name):\n    return importlib.import_module(name)\n\n\n"
        "def load_all(folder):\n    for f in os.listdir(folder):\n        load(f)\n"
    )
    for text in (listed, caller):
        assert LOADS_ANY in loading_facts(text), text
    # Python files listed and handed to a loader of the project's own in another module (HyperCUT's
    # `models/__init__.py`: `glob('backbones/*.py')`, each to `load_module_from_file`): any module; not a listed
    # checkpoint handed to `torch.load`, nor sources copied to a run's folder
    handed = (
        "import glob\nfrom utils.common import load_module_from_file\n\n\ndef get_backbone(name):\n"
        "    files = sorted(glob.glob(osp.join(folder, '*.py')))\n    mods = []\n    for f in files:\n"
        "        mods.append(load_module_from_file(f))\n"
    )
    assert LOADS_ANY in loading_facts(handed)
    checkpoints = "import glob, torch\nfor f in glob.glob('ckpt/*.pth'):\n    torch.load(f)\nname = 'a.py'\n"
    copied = "import glob, shutil\nfor f in glob.glob('*.py'):\n    shutil.copy(f, 'out')\n"
    for text in (checkpoints, copied):
        assert LOADS_ANY not in loading_facts(text), text
    assert _loading("def main():\n    pass\n\n\nif __name__ == '__main__':\n    main()\n") == {MAIN}
    # sacred's `@ex.automain` (TencentARC/GVT's `run.py`): the script's entry point
    sacred = "from sacred import Experiment\nex = Experiment('x')\n\n\n@ex.automain\ndef main(_config):\n    pass\n"
    assert MAIN in _loading(sacred)
    assert _loading("import torch\n\n\ndef f(x):\n    return g(x)\n") == set()
    assert _loading("import sys\nsys.path.append('.')\nfor x in y:\n    pass\n") == {RUNS, SYS_PATH}
    # a loader's name in a comment loads nothing (yolo2-pytorch's "# locate the cell of each gt_boxe")
    assert _loading("def f(x):\n    # locate the cell of each box\n    return x\n") == set()
    # calls that only configure libraries are no work (YOLOv4's `utils/utils.py`); `print(...)` is
    assert _loading("import torch, cv2\ntorch.set_printoptions(linewidth=320)\ncv2.setNumThreads(0)\n") == set()
    assert _loading("print('building')\n") == {RUNS}
    # `async def` defines (NeuSample's copy of mmdetection's `apis/inference.py`); `async with` at the top runs
    assert _loading("import asyncio\n\n\nasync def infer(model, img):\n    return await model(img)\n") == set()
    assert _loading("async with lock:\n    pass\n") == {RUNS}
    # what the import statements name, relative ones with their dots; none of PyTorch's own
    imports = {f[len(IMPORTS) :] for f in loading_facts(
        "from utils import torch_utils\nfrom . import x as y\nimport a.b as c, d\nfrom torch.nn import functional\n"
        "from ..ops import (\n    e,\n    f,  # why\n)\nimport os; import g.h\n"
    ) if f.startswith(IMPORTS)}
    assert imports == {"utils", "utils.torch_utils", ".", ".x", "a.b", "d", "..ops", "..ops.e", "..ops.f", "os", "g.h"}
    sources = TextSources({"pkg/__init__.py": "", "pkg/a.py": "", "run.py": "import pkg\n"})
    assert unreached(sources) == {"pkg/a.py": UNREACHED_NOTE}
    # an import commented out on its own line that binds what an import of the file binds is an alternative one
    # edit away (cvlab-epfl's PA-net picks its model so: `from configs import unet_config as config` above `# from
    # configs import panet_config as config`); a comment that only reads like one is prose
    run = "import pkg\nfrom pkg import b as model\n# from pkg import a as model\n# import this first\n"
    sources = TextSources({"pkg/__init__.py": "", "pkg/a.py": "", "pkg/b.py": "", "run.py": run})
    assert unreached(sources) == {}
    files = {"pkg/__init__.py": "", "pkg/a.py": "", "pkg/b.py": "", "run.py": run.replace("# from", "# see")}
    sources = TextSources(files)
    assert unreached(sources) == {"pkg/a.py": UNREACHED_NOTE}


# An application's module with a function nothing calls (SadTalker's `normalize_kp`), one its script calls,
# one a config names, and a decorated one (a registry).
UNUSED_APP = {
    "inference.py": "from pkg.model import run\n\nrun(1)\n",
    "pkg/__init__.py": "",
    "pkg/model.py": (
        "import torch\n\n\n"
        "def run(x):\n    return x.to(torch.device('cpu'))\n\n\n"
        "def normalize_kp(kp):\n"
        "    if kp.sum().item() > 0:\n        return kp.cuda()\n    return kp\n\n\n"
        "class FromConfig:\n    def __call__(self, x):\n        return x.cuda()\n\n\n"
        "@REGISTRY.register()\ndef registered(x):\n    return x.cuda()\n"
    ),
    "configs/run.yaml": "model:\n  target: pkg.model.FromConfig\n",
}


def test_a_function_nothing_in_an_application_names_is_info(tmp_path: Path):
    found = _scan(tmp_path, UNUSED_APP)
    inside = {(line, code): f for (p, line, code), f in found.items() if p == "pkg/model.py" and 8 <= line <= 11}
    # the `.cuda()` at info; how the branch on a tensor would run on an XLA-like device (line 9) says nothing
    # of code that never runs
    assert set(inside) == {(10, "DEV002")}, sorted(found)
    note = UNUSED_NOTE.format(name="normalize_kp")
    assert all(f.severity.value == "info" and f.note == note for f in inside.values())
    # named by a config, decorated: as they were
    assert found[("pkg/model.py", 16, "DEV002")].severity.value != "info"
    assert found[("pkg/model.py", 21, "DEV002")].severity.value != "info"


# What makes `normalize_kp` count as used, by the file that changes.
MAY_BE_USED = {
    "imported": ("inference.py", "from pkg.model import run, normalize_kp\n\nrun(normalize_kp(1))\n"),
    "a notebook": ("demo.ipynb", '{"cells": [{"cell_type": "code", "source": ["normalize_kp(kp)\\n"]}]}'),
    "a computed import in its folder": ("pkg/other.py", "import importlib\nm = importlib.import_module(name)\n"),
    # Depth-Anything's `getattr(import_module(f"zoedepth.trainers.{config.trainer}_trainer"), 'Trainer')`
    "a computed import below a package": (
        "builder.py",
        "from importlib import import_module\n\n\ndef get(name):\n"
        "    return getattr(import_module(f'pkg.{name}'), 'Model')\n",
    ),
    # score_sde_pytorch: `--config=configs/ve/x.py`, whose `get_config()` ml_collections runs
    "a config file loaded by path": (
        "main.py",
        "from ml_collections.config_flags import config_flags\n\nconfig_flags.DEFINE_config_file('config')\n",
    ),
    "globals": ("pkg/model.py", UNUSED_APP["pkg/model.py"] + "\n\nf = globals()['normalize_kp']\n"),
    "globals by a computed name": ("pkg/model.py", UNUSED_APP["pkg/model.py"] + "\n\nf = globals()[name]\n"),
    # zju3dv's `run.py`: `globals()['run_' + args.type]()`
    "globals by a built name": ("pkg/model.py", UNUSED_APP["pkg/model.py"] + "\n\nf = globals()['normal' + kind]\n"),
    "the module by a computed name": (
        "pkg/model.py", UNUSED_APP["pkg/model.py"] + "\n\nimport sys\nf = getattr(sys.modules[__name__], name)\n"
    ),
}


@pytest.mark.parametrize("change", [dict([c]) for c in MAY_BE_USED.values()], ids=list(MAY_BE_USED))
def test_a_function_that_may_be_used_keeps_its_findings(tmp_path: Path, change):
    found = _scan(tmp_path, {**UNUSED_APP, **change})
    assert found[("pkg/model.py", 10, "DEV002")].severity.value != "info", sorted(found)
    assert any(p == "pkg/model.py" and line == 9 and code.startswith("XLA") for p, line, code in found), sorted(found)


# What looks no definition up by a computed name: another object's attributes, a key the string spells, the
# namespace handed to `timeit` for a statement that spells its names (EfficientPose's latency helper).
NO_LOOKUP = {
    "vars of another object": "\n\nsettings = vars(args)\n",
    "a literal key": "\n\nglobals()['model'] = run\n",
    "timeit's namespace": "\n\nimport timeit\nt = timeit.timeit('run(1)', globals=globals(), number=3)\n",
    # megvii-research/PMN: a number read out of EXIF text, and a method named `eval`
    "eval of a string's text": "\n\niso = eval(str(tags['ISO']))\n",
    "a method named eval": "\n\nclass Trainer:\n    def eval(self, epoch=-1):\n        return epoch\n",
}


@pytest.mark.parametrize("tail", list(NO_LOOKUP.values()), ids=list(NO_LOOKUP))
def test_a_namespace_use_that_looks_up_no_name_leaves_a_function_unused(tmp_path: Path, tail):
    found = _scan(tmp_path, {**UNUSED_APP, "pkg/model.py": UNUSED_APP["pkg/model.py"] + tail})
    assert found[("pkg/model.py", 10, "DEV002")].note == UNUSED_NOTE.format(name="normalize_kp"), sorted(found)


def test_a_module_named_like_a_test_that_the_product_imports_and_re_exports_has_unused_definitions(tmp_path: Path):
    # det3d's `torchie/trainer/parallel_test.py` (CenterPoint, copied into FocalsConv): `parallel_test` and its
    # `worker_func`, imported and listed in `__all__` by the package's `__init__.py`, and called by nothing
    files = {
        "tools/train.py": "from det.trainer import load\n\nload(1)\n",
        "det/__init__.py": "",
        "det/trainer/__init__.py": (
            "from .checkpoint import load\nfrom .parallel_test import parallel_test\n\n"
            "__all__ = [\n    'load',\n    'parallel_test',\n]\n"
        ),
        "det/trainer/checkpoint.py": "def load(x):\n    return x\n",
        "det/trainer/parallel_test.py": (
            "import torch\n\n\ndef worker_func(gpu_id):\n    torch.cuda.set_device(gpu_id)\n\n\n"
            "def parallel_test(gpus):\n    return [worker_func(g) for g in gpus]\n"
        ),
    }
    found = _scan(tmp_path, files)
    inside = found[("det/trainer/parallel_test.py", 5, "DIST002")]
    # (only the unused `parallel_test` calls it: the note names that)
    held = HELD_UNUSED_NOTE.format(name="worker_func", users="`parallel_test`")
    assert inside.severity.value == "info" and inside.note == held, inside
    # called by the product: used
    files["tools/train.py"] = "from det.trainer import load, parallel_test\n\nparallel_test(load([0]))\n"
    found = _scan(tmp_path / "used", files)
    assert found[("det/trainer/parallel_test.py", 5, "DIST002")].severity.value != "info", sorted(found)


def test_what_only_an_unused_class_calls_through_a_star_import_is_unused(tmp_path: Path):
    # spc's `modules/bn.py`: `from .functions import *` brings `inplace_abn_sync`, which only its unused
    # `InPlaceABNSync` class calls; the autograd function behind it (and the import only it uses) is unused too
    files = {
        "train.py": "import torch\nfrom modules import InPlaceABN\n\nm = InPlaceABN()\nm(torch.zeros(2))\n",
        "modules/__init__.py": "from .bn import ABN, InPlaceABN, InPlaceABNSync\n",
        "modules/bn.py": (
            "import torch.nn as nn\nfrom .functions import *\n\n\nclass ABN(nn.Module):\n    pass\n\n\n"
            "class InPlaceABN(ABN):\n    def forward(self, x):\n        return inplace_abn(x)\n\n\n"
            "class InPlaceABNSync(ABN):\n    def forward(self, x):\n        return inplace_abn_sync(x)\n"
        ),
        "modules/functions.py": (
            "import torch.autograd as autograd\nimport torch.cuda.comm as comm\n\n\n"
            "class InPlaceABN(autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n\n\n"
            "class InPlaceABNSync(autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
            "        return comm.reduce_add([x])\n\n\n"
            "inplace_abn = InPlaceABN.apply\ninplace_abn_sync = InPlaceABNSync.apply\n"
        ),
    }
    found = _scan(tmp_path, files)
    assert found[("modules/functions.py", 14, "RT000")].severity.value == "info", sorted(found)
    assert found[("modules/functions.py", 2, "RT000")].severity.value == "info", sorted(found)
    # the product builds the class: used
    files["train.py"] = "import torch\nfrom modules import InPlaceABNSync\n\nm = InPlaceABNSync()\nm(torch.zeros(2))\n"
    found = _scan(tmp_path / "used", files)
    assert found[("modules/functions.py", 14, "RT000")].severity.value != "info", sorted(found)


@pytest.mark.parametrize(
    "lookup",
    ["models.__dict__[args.arch]()", "getattr(models, args.arch)()"],
    ids=["dict", "getattr"],
)
def test_a_module_another_looks_up_whole_by_computed_name_is_used(tmp_path: Path, lookup):
    # skipnet's `train_base.py`: `model = models.__dict__[args.arch](args.pretrained)`, the names of `models.py`
    # offered as `--arch` choices; `RNNGate`, which only `cifar10_rnn_gate_38`'s network builds, is used
    files = {
        "train.py": f"import models\n\nmodel = {lookup}\n",
        "models.py": (
            "import torch\nimport torch.nn as nn\n\n\nclass RNNGate(nn.Module):\n    def forward(self, x):\n"
            "        return torch.zeros(1).cuda()\n\n\ndef cifar10_rnn_gate_38():\n    return RNNGate()\n\n\n"
            "def resnet():\n    return nn.Identity()\n"
        ),
    }
    found = _scan(tmp_path, files)
    assert found[("models.py", 7, "DEV002")].severity.value != "info", sorted(found)
    # a name spelt in code takes that one: the rest stays unused
    files["train.py"] = "import models\n\nmodel = models.resnet()\n"
    found = _scan(tmp_path / "literal", files)
    assert found[("models.py", 7, "DEV002")].severity.value == "info", sorted(found)


def test_a_lazy_config_runs_any_module_but_looks_up_no_definition_by_name(tmp_path: Path):
    # SparseTrack's `train.py`: `LazyConfig.load(args.config_file)` runs a Python config and what it imports (no
    # module is unreached), and the config spells what it builds (`L(Model)(...)`); `DataPrefetcher`, which
    # nothing spells, stays unused
    lazy = ("train.py", "from detectron2.config import LazyConfig\n\ncfg = LazyConfig.load(args.config_file)\n")
    found = _scan(tmp_path, {**UNUSED_APP, **dict([lazy])})
    assert found[("pkg/model.py", 10, "DEV002")].note == UNUSED_NOTE.format(name="normalize_kp"), sorted(found)
    found = _scan(tmp_path / "app", {**APP, **dict([lazy])})
    assert "info" not in _severities(found, "vendor/ops/fused_act/fused_act.py").values()


def test_top_level_definitions():
    lines = (
        "import torch\n\n\ndef f(\n    a,\n):\n    return a\n\n\n@dec\ndef g():\n    pass\n\n\n"
        "class C:\n    x = '''\ndoc at column 0\n'''\n\n\nif __name__ == '__main__':\n    f(1)\n"
    ).splitlines()
    assert top_level_definitions(lines) == [(4, 7, "f"), (15, 16, "C")]
    # a decorator that only wraps the function (`@triton.autotune(...)` over `@triton.jit`) is part of it
    kernel = (
        "import triton\n\n\n@triton.autotune(\n    configs=[],\n    key=['n'],\n)\n@triton.jit\ndef k(x):\n    pass\n"
    )
    assert top_level_definitions(kernel.splitlines()) == [(4, 10, "k")]


def test_a_triton_kernel_nothing_launches_is_unused_and_one_launched_keeps_its_severity(tmp_path: Path):
    # flash-linear-attention's `ops/utils.py` (copied into mmMamba): the `recurrent_*cumsum*` kernels, autotuned,
    # which nothing launches, beside the chunked kernels the wrappers launch
    kernels = (
        "import torch\nimport triton\nimport triton.language as tl\n\n\n"
        "@triton.autotune(\n    configs=[triton.Config({'BS': 16})],\n    key=['S'],\n)\n@triton.jit\n"
        "def recurrent_kernel(s, z, S: tl.constexpr):\n    pass\n\n\n"
        "@triton.jit\ndef chunk_kernel(s, z):\n    pass\n\n\n"
        "def cumsum(s):\n    z = torch.empty_like(s)\n    chunk_kernel[(1,)](s, z)\n    return z\n"
    )
    files = {"train.py": "from ops.utils import cumsum\n\ncumsum(1)\n", "ops/__init__.py": "", "ops/utils.py": kernels}
    found = _scan(tmp_path, files)
    unused = found[("ops/utils.py", 10, "KRN003")]
    assert unused.severity.value == "info" and unused.note == UNUSED_NOTE.format(name="recurrent_kernel"), unused
    assert found[("ops/utils.py", 15, "KRN003")].severity.value == "blocker", sorted(found)


def test_a_definition_naming_itself_is_still_unused():
    text = (
        "import torch\n\n\nclass OKSLoss(torch.nn.Module):\n    def __init__(self):\n"
        "        super(OKSLoss, self).__init__()\n        self.w = torch.ones(1).cuda()\n\n\n"
        "def walk(n):\n    return walk(n - 1) if n else 0\n"
    )
    sources = TextSources({"app.py": "import pkg.loss\n", "pkg/__init__.py": "", "pkg/loss.py": text})
    found = unused_definitions(sources, ["pkg/loss.py"], {})
    # (and `import torch`, which only they use)
    assert [(a, b) for a, b, _ in found["pkg/loss.py"]] == [(4, 7), (10, 11), (1, 1)]
    # the name spelt outside its statement, in its module or another: used
    assert not unused_definitions(
        TextSources({"pkg/loss.py": text + "\nLOSSES = [OKSLoss, walk]\n"}), ["pkg/loss.py"], {}
    )


def test_what_only_unused_definitions_use_is_unused_too():
    # InstantMesh's `DMTetGeometry`, which nothing uses, and the `marching_tets_tetmesh` only it calls
    text = (
        "import torch\n\n\ndef marching(x):\n    return x.cuda()\n\n\n"
        "class Geometry:\n    def run(self, x):\n        return marching(x)\n\n\n"
        "def shared(x):\n    return x.cuda()\n\n\n"
        "def used(x):\n    return shared(x)\n"
    )
    files = {"app.py": "from pkg.geo import used\nused(1)\n", "pkg/__init__.py": "", "pkg/geo.py": text}
    found = unused_definitions(TextSources(files), ["pkg/geo.py"], {})
    assert [(a, b) for a, b, _ in found["pkg/geo.py"]] == [(4, 5), (8, 10)]
    # also spelt by a definition that is used: used
    two = "        return marching(x)\n\n\ndef two(x):\n    return marching(x)\n"
    text = text.replace("        return marching(x)\n", two)
    files = {"app.py": "from pkg.geo import used, two\nused(two(1))\n", "pkg/__init__.py": "", "pkg/geo.py": text}
    found = unused_definitions(TextSources(files), ["pkg/geo.py"], {})
    assert [(a, b) for a, b, _ in found["pkg/geo.py"]] == [(8, 10)]


def test_a_name_only_imported_or_re_exported_is_unused():
    # Bert-Chinese-Text-Classification's vendored `pytorch_pretrained`: its `__init__.py` re-exports every
    # model, the scripts use BERT only
    model = "import torch\n\n\nclass TransfoXLModel:\n    def run(self, x):\n        return x.cuda()\n"
    files = {
        "run.py": "from pkg import BertModel\nBertModel()\n",
        "pkg/__init__.py": "from .modeling import BertModel\nfrom .modeling_xl import TransfoXLModel\n",
        "pkg/modeling.py": "class BertModel:\n    pass\n",
        "pkg/modeling_xl.py": model,
    }
    found = unused_definitions(TextSources(files), ["pkg/modeling_xl.py"], {})
    assert [(a, b) for a, b, _ in found["pkg/modeling_xl.py"]] == [(4, 6)]
    # imported by a script that never uses it: still unused
    never = {**files, "run.py": files["run.py"] + "from pkg import TransfoXLModel\n"}
    assert unused_definitions(TextSources(never), ["pkg/modeling_xl.py"], {})
    # used where imported, under its own name or another; named in a registry beside the re-export: used
    for run in ("from pkg import TransfoXLModel\nTransfoXLModel()\n", "from pkg import TransfoXLModel as XL\nXL()\n"):
        assert not unused_definitions(TextSources({**files, "run.py": run}), ["pkg/modeling_xl.py"], {})
    registry = files["pkg/__init__.py"] + "MODELS = {'xl': TransfoXLModel}\n"
    assert not unused_definitions(TextSources({**files, "pkg/__init__.py": registry}), ["pkg/modeling_xl.py"], {})


# textual_inversion's layout: a library (setup.py) with `modules_bak.py` kept beside `modules.py`.
LIBRARY = {
    "setup.py": "from setuptools import setup\n\nsetup(name='ldm')\n",
    "ldm/__init__.py": "",
    # (what the package exports is its users' to call: only the backups' findings are lowered)
    "ldm/modules/__init__.py": (
        "from . import bak, model_backup, model_backup_used, modules\nfrom .modules import fused\n"
    ),
    "ldm/modules/modules.py": OP,
    "ldm/modules/modules_bak.py": OP,
    "ldm/modules/train_copy.py": OP,
    "ldm/modules/model_backup.py": OP,
    "ldm/modules/model_backup_used.py": OP,
    "ldm/modules/bak.py": OP,
    "ldm/modules/gelu_bwd.py": OP,
    "ldm/modules/gelu_bwd_legacy.py": OP,
    "main.py": "from ldm.modules.train_copy import fused\n",
}


def test_a_backup_copy_nothing_imports_is_info_in_a_library_too(tmp_path: Path):
    found = _scan(tmp_path, LIBRARY)
    backup = _severities(found, "ldm/modules/modules_bak.py")
    assert backup == {(5, "RT001"): "info", (6, "DEV002"): "info"}, backup
    note = found[("ldm/modules/modules_bak.py", 5, "RT001")].note
    assert "`modules_bak.py` is a backup or older copy of `modules.py`" in note
    assert set(_severities(found, "ldm/modules/gelu_bwd_legacy.py").values()) == {"info"}
    # the original; a copy something imports; a copy of nothing beside it; a name that is only the word
    for path in ("modules.py", "train_copy.py", "model_backup.py", "model_backup_used.py", "bak.py"):
        kept = _severities(found, f"ldm/modules/{path}")
        assert kept and "info" not in kept.values(), (path, kept)


# Two evaluation scripts of an application, each with its own `DEVICE` (QwenLM/Qwen's eval folder).
SCRIPTS = {
    "eval/evaluate_a.py": 'import torch\n\nDEVICE = "cuda:0"\n\n\ndef main():\n    return torch.ones(2)\n\n\nmain()\n',
    "eval/evaluate_b.py": (
        'import torch\n\nDEVICE = "cuda:0"\n\n\ndef main():\n    return torch.ones(2, device=DEVICE)\n\n\nmain()\n'
    ),
}


def test_a_constant_nothing_reads_is_info_whatever_other_scripts_spell(tmp_path: Path):
    found = _scan(tmp_path, SCRIPTS)
    unused = found[("eval/evaluate_a.py", 3, "DEV001")]
    assert unused.severity.value == "info" and unused.note == UNUSED_NOTE.format(name="DEVICE"), unused
    assert found[("eval/evaluate_b.py", 3, "DEV001")].severity.value != "info"


def test_a_constant_another_module_may_import_keeps_its_findings(tmp_path: Path):
    found = _scan(tmp_path, {**SCRIPTS, "eval/run.py": "from evaluate_a import DEVICE\n\nprint(DEVICE)\n"})
    assert found[("eval/evaluate_a.py", 3, "DEV001")].severity.value != "info"


def test_top_level_constants():
    lines = 'DEVICE = "cuda:0"\nx: int = 3\nh = torch.cuda.set_device(0)\nd = torch.device("cuda")\n__all__ = []\n'
    assert top_level_constants(lines.splitlines()) == [(1, 1, "DEVICE"), (2, 2, "x"), (4, 4, "d")]


def test_a_function_only_wrapped_by_a_decorator_is_still_unused_when_nothing_names_it(tmp_path: Path):
    # CALM's poselib: `@torch.jit.script def quat_norm_check(x)` compiles the function and registers it nowhere
    files = dict(UNUSED_APP)
    files["pkg/model.py"] += (
        "\n\n@torch.jit.script\ndef norm_check(x):\n    assert bool((x.norm() - 1 < 1e-3).all())\n    return x.cuda()\n"
    )
    found = _scan(tmp_path, files)
    assert found[("pkg/model.py", 27, "DEV002")].note == UNUSED_NOTE.format(name="norm_check")
    assert ("pkg/model.py", 26, "XLA006") not in found
    assert found[("pkg/model.py", 21, "DEV002")].severity.value != "info"  # the registered one, as it was


def test_a_module_named_on_a_continuation_line_of_an_import_is_reached():
    # giraffe's `from im2scene.giraffe.models import (` with `bounding_box_generator` on the next line
    sources = TextSources(
        {
            "pkg/__init__.py": "",
            "pkg/models/__init__.py": "from pkg.models import (\n    decoder, bounding_box_generator)\n",
            "pkg/models/decoder.py": "",
            "pkg/models/bounding_box_generator.py": "",
            "pkg/models/unused.py": "",
            "run.py": "import pkg.models\n",
        }
    )
    assert unreached(sources) == {"pkg/models/unused.py": UNREACHED_NOTE}


def test_imports_are_resolved_by_their_dotted_names():
    # YOLOv4's layout: `utils/utils.py` beside the modules the scripts import from the package `utils`;
    # only a dotted name that ends in `utils.utils` imports it
    files = {
        "train.py": "from utils.general import box\nfrom utils import torch_utils\nimport utils.nms.cpu_nms\n",
        "utils/__init__.py": "",
        "utils/general.py": "from utils.metrics import fitness\nimport torch\ntorch.set_printoptions(precision=5)\n",
        "utils/metrics.py": "import helpers\n",  # Python 2's implicit relative import: `utils/helpers.py`
        "utils/helpers.py": "",
        "utils/torch_utils.py": "",
        "utils/utils.py": "import torch\ntorch.set_printoptions(linewidth=320)\n",
        "utils/nms/__init__.py": "from .gpu import nms\n",  # `cpu_nms` is compiled: its package still runs
        "utils/nms/gpu.py": "",
        "utils/nms/old.py": "",
    }
    assert set(unreached(TextSources(files))) == {"utils/utils.py", "utils/nms/old.py"}
    # the same names spelt by a module that puts another folder on `sys.path`: any module they may name
    files["train.py"] = "import sys\nsys.path.insert(0, 'utils')\n" + files["train.py"] + "import utils\n"
    assert set(unreached(TextSources(files))) == {"utils/nms/old.py"}
    # scanned from the folder above: the project's folder is no package, so its top still resolves the names
    above = {f"repo/{path}": text for path, text in files.items()}
    above["repo/train.py"] = "from utils.general import box\nfrom utils import torch_utils\nimport utils.nms.cpu_nms\n"
    assert set(unreached(TextSources(above))) == {"repo/utils/utils.py", "repo/utils/nms/old.py"}


def test_a_folder_put_on_sys_path_from_the_module_s_own_file_is_where_its_imports_resolve():
    # Get3DHuman: `diff_render/renderer_deepsdf.py` puts its own folder on `sys.path` and imports `renderer` beside
    # it; `training/volumetric_rendering/renderer.py`, which only an unused module imports, is not that `renderer`
    files = {
        "train.py": "from training import generator\n",
        "training/__init__.py": "",
        "training/generator.py": "",
        "training/triplane.py": "from training.volumetric_rendering.renderer import Renderer\n",
        "training/volumetric_rendering/__init__.py": "",
        "training/volumetric_rendering/renderer.py": "",
        "diff_render/renderer.py": "",
        "diff_render/renderer_deepsdf.py": (
            "import os, sys\nsys.path.append(os.path.dirname(os.path.abspath(__file__)))\nfrom renderer import R\n"
        ),
    }
    found = set(unreached(TextSources(files)))
    assert "training/volumetric_rendering/renderer.py" in found and "diff_render/renderer.py" not in found, found
    # `Path(__file__).resolve().parents[1] / "training"`: the folder it names, whichever module is there
    files["diff_render/renderer_deepsdf.py"] = (
        "import sys\nfrom pathlib import Path\nROOT = Path(__file__).resolve().parents[1]\n"
        "sys.path.insert(0, str(ROOT / 'training' / 'volumetric_rendering'))\nfrom renderer import R\n"
    )
    found = set(unreached(TextSources(files)))
    assert "training/volumetric_rendering/renderer.py" not in found, found
    # a folder the text does not tell (a literal path is the working folder's): any module of that name
    files["diff_render/renderer_deepsdf.py"] = "import sys\nsys.path.append('.')\nfrom renderer import R\n"
    assert "training/volumetric_rendering/renderer.py" not in set(unreached(TextSources(files)))


def test_the_folders_a_module_adds_to_sys_path():
    # (an edit of `sys.path` only prepares the imports: no work)
    assert _loading("import sys, os\nsys.path.append(os.path.dirname(__file__))\n") == {SYS_PATH_DIR + "."}
    text = "import sys, os\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'lib'))\n"
    assert _loading(text) == {SYS_PATH_DIR + "../lib"}
    yolo = (
        "FILE = Path(__file__).resolve()\nROOT = FILE.parents[1]\n"
        "if str(ROOT) not in sys.path:\n    sys.path.append(str(ROOT))\n"
    )
    assert SYS_PATH_DIR + ".." in _loading(yolo) and SYS_PATH not in _loading(yolo)
    unknowns = ("sys.path.append(args.root)\n", "for p in ps:\n    sys.path.append(p)\n", "sys.path.append('..')\n")
    for unknown in unknowns:
        assert SYS_PATH in _loading(unknown), unknown
    # an edit in a comment edits nothing
    assert _loading("import os\n# sys.path.append('..')\n") == set()


def test_a_notebook_reaches_what_its_code_imports_not_what_its_text_mentions():
    # lama's LaMa_inpainting.ipynb: its prose and outputs spell `data` and `utils`, its code imports neither
    notebook = (
        '{"cells": [{"cell_type": "markdown", "source": ["The fused_act op is not used here.\\n"]},'
        ' {"cell_type": "code", "source": ["from vendor.utils import load\\n", "load()\\n"]}]}'
    )
    sources = TextSources({k: v for k, v in APP.items() if k != "inference.py"})
    assert "vendor/ops/fused_act/fused_act.py" in unreached(sources, [notebook])
    assert "vendor/utils.py" not in unreached(sources, [notebook])
    # one that edits `sys.path` (or is no notebook JSON) reaches every module its words name
    edits = notebook.replace('"from vendor', '"import sys\\n", "sys.path.append(\\"..\\")\\n", "from vendor')
    assert "vendor/ops/fused_act/fused_act.py" not in unreached(sources, [edits])
    assert "vendor/ops/fused_act/fused_act.py" not in unreached(sources, ["fused_act is {not json"])


def test_a_class_named_by_a_string_may_be_looked_up_by_it():
    # ST-P3's CARLA agent: the leaderboard calls `get_entry_point()` and builds the class it names
    text = (
        "import torch\n\n\ndef get_entry_point():\n    return 'MVPAgent'\n\n\n"
        "class MVPAgent:\n    def tick(self, x):\n        return x.to('cuda')\n\n\n"
        "class Unused:\n    def tick(self, x):\n        return x.to('cuda')\n"
    )
    files = {"run.py": "import agents.carla\n", "agents/__init__.py": "", "agents/carla.py": text}
    found = unused_definitions(TextSources(files), ["agents/carla.py"], {})
    assert [name for _, _, name in found["agents/carla.py"]] == [
        UNUSED_NOTE.format(name="get_entry_point"),
        UNUSED_NOTE.format(name="Unused"),
    ]


def test_a_loader_of_what_configs_name_reaches_those_only(tmp_path: Path):
    """hyena-dna: `hydra.utils.get_class(registry[name])` over a registry of dotted strings, and Hydra configs;
    `src/ops/krylov.py`, in a folder without an `__init__.py` that the project imports through, is named by
    neither and nothing imports it."""
    files = {
        "train.py": "from src.utils.config import load\n\nload('s4')\n",
        "src/utils/__init__.py": "",
        "src/utils/config.py": (
            "import hydra\n\nREGISTRY = {'s4': 'src.models.s4.S4'}\n\n\n"
            "def load(name):\n    return hydra.utils.get_class(REGISTRY[name])\n"
        ),
        "src/models/s4.py": (
            "from src.ops.vandermonde import log_vandermonde\n\n\n"
            "class S4:\n    def forward(self, x):\n        return log_vandermonde(x)\n"
        ),
        "src/ops/vandermonde.py": OP.replace("fused", "log_vandermonde"),
        "src/ops/krylov.py": OP.replace("fused", "krylov"),
    }
    found = _scan(tmp_path, files)
    assert set(_severities(found, "src/ops/krylov.py").values()) == {"info"}, sorted(found)
    assert "info" not in _severities(found, "src/ops/vandermonde.py").values(), sorted(found)
    # a config that names it: reached
    files["configs/model.yaml"] = "kernel:\n  _target_: src.ops.krylov.krylov\n"
    found = _scan(tmp_path / "named", files)
    assert "info" not in _severities(found, "src/ops/krylov.py").values(), sorted(found)


def test_a_use_inside_another_modules_unused_function_is_no_use(tmp_path: Path):
    """H3: `toeplitz.py`'s `causal_convolution` is called only by `krylov.py`'s `krylov_toeplitz`, which nothing
    calls; `causal_convolution` calls an alias of an autograd Function (`mult = Mult.apply`)."""
    files = {
        "train.py": "from src.ops.krylov import power\n\nprint(power(2))\n",
        "src/ops/krylov.py": (
            "from src.ops.toeplitz import causal_convolution\n\n\ndef power(x):\n    return x * x\n\n\n"
            "def krylov_toeplitz(u, v):\n    return causal_convolution(u, v)\n"
        ),
        "src/ops/toeplitz.py": (
            "import torch\n\n\nclass Mult(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, u, v):\n"
            "        return torch.fft.irfft(torch.fft.rfft(u) * torch.fft.rfft(v))\n\n\nmult = Mult.apply\n\n\n"
            "def causal_convolution(u, v):\n    return mult(u, v).cuda()\n"
        ),
    }
    found = _scan(tmp_path, files)
    inside = _severities(found, "src/ops/toeplitz.py")
    assert inside and set(inside.values()) == {"info"}, sorted(found)  # the `.cuda()`; no XLA costs there
    assert not [k for k in inside if k[1].startswith("XLA")], inside
    # called from code that runs: used
    files["train.py"] = "from src.ops.krylov import power, krylov_toeplitz\n\nprint(power(2), krylov_toeplitz(1, 2))\n"
    found = _scan(tmp_path / "used", files)
    assert "info" not in _severities(found, "src/ops/toeplitz.py").values(), sorted(found)


def test_a_setup_scripts_function_it_never_calls_is_unused(tmp_path: Path):
    """H3's `csrc/fftconv/setup.py` defines a CUDA version check it never calls; pip runs the script, and
    nothing looks its functions up by name (torch.hub does a `hubconf.py`'s, which keep theirs)."""
    setup = (
        "import torch\nfrom setuptools import setup\n\n\ndef check_cuda(x):\n    return x.cuda()\n\n\n"
        "setup(name='fftconv')\n"
    )
    hubconf = setup.replace("check_cuda", "resnet")
    found = _scan(tmp_path, {"train.py": "print(1)\n", "csrc/fftconv/setup.py": setup, "hubconf.py": hubconf})
    assert found[("csrc/fftconv/setup.py", 6, "DEV002")].severity.value == "info", sorted(found)
    assert found[("hubconf.py", 6, "DEV002")].severity.value != "info", sorted(found)


def test_a_function_only_tests_use_is_test_support(tmp_path: Path):
    """H3's `fftconv_ref`: the reference only the test of its CUDA kernel calls."""
    files = {
        "train.py": "from src.ops.fftconv import fftconv\n\nprint(fftconv(1))\n",
        "src/ops/fftconv.py": (
            "import torch\n\n\ndef fftconv(u):\n    return u\n\n\n"
            "def fftconv_ref(u):\n    return torch.fft.rfft(u).cuda()\n"
        ),
        "tests/test_fftconv.py": "from src.ops.fftconv import fftconv, fftconv_ref\n\n\ndef test_it():\n"
        "    assert fftconv(1) == fftconv_ref(1)\n",
    }
    found = _scan(tmp_path, files)
    ref = found[("src/ops/fftconv.py", 9, "DEV002")]
    assert ref.severity.value == "info" and "only tests use `fftconv_ref`" in ref.note, ref
    # a script that calls it too: used
    files["bench.py"] = "from src.ops.fftconv import fftconv_ref\n\nprint(fftconv_ref(1))\n"
    found = _scan(tmp_path / "used", files)
    assert found[("src/ops/fftconv.py", 9, "DEV002")].severity.value != "info", sorted(found)


def test_a_class_a_config_file_names_is_used_and_so_is_what_it_builds(tmp_path: Path):
    """lioryariv/idr: `model_class = model.renderer.IDRNetwork` in a HOCON `.conf` file, loaded by a
    `get_class` helper; `IDRNetwork` builds `RayTracing` from another module."""
    files = {
        "code/training/train.py": (
            "from utils.general import get_class\n\nmodel = get_class(conf.get_string('train.model_class'))()\n"
        ),
        "code/utils/__init__.py": "",
        "code/utils/general.py": "def get_class(kls):\n    return __import__(kls)\n",
        "code/model/__init__.py": "",
        "code/model/ray_tracing.py": "class RayTracing:\n    def __call__(self, x):\n        return x.cuda()\n",
        "code/model/renderer.py": (
            "from model.ray_tracing import RayTracing\n\n\nclass IDRNetwork:\n    def __init__(self):\n"
            "        self.ray_tracer = RayTracing()\n"
        ),
        "code/confs/dtu.conf": "train {\n    model_class = model.renderer.IDRNetwork\n}\n",
    }
    found = _scan(tmp_path, files)
    assert found[("code/model/ray_tracing.py", 3, "DEV002")].severity.value != "info", sorted(found)
    # without the config file, a class holds what it names all the same: no guess passes through it
    del files["code/confs/dtu.conf"]
    found = _scan(tmp_path / "bare", files)
    assert found[("code/model/ray_tracing.py", 3, "DEV002")].severity.value != "info", sorted(found)


def test_a_function_only_a_gin_or_json_config_names_is_used(tmp_path: Path):
    files = {
        "train.py": "import gin\nfrom model import builders\n\nprint(builders)\n",
        "model/__init__.py": "",
        "model/builders.py": "def build_net(x):\n    return x.cuda()\n",
        "configs/train.gin": "train.builder = @build_net\n",
    }
    found = _scan(tmp_path, files)
    assert found[("model/builders.py", 2, "DEV002")].severity.value != "info", sorted(found)
    files["configs/train.gin"] = "train.builder = @other\n"
    found = _scan(tmp_path / "unnamed", files)
    assert found[("model/builders.py", 2, "DEV002")].severity.value == "info", sorted(found)


def test_a_test_script_that_evaluates_a_model_is_no_test_suite(tmp_path: Path):
    """CloserLookFewShot's `test.py` evaluates the trained model by building `BaselineFinetune`: a script,
    not a test runner's module, so what it uses is used."""
    files = {
        "train.py": "print(1)\n",
        "methods/__init__.py": "",
        "methods/finetune.py": "class BaselineFinetune:\n    def adapt(self, x):\n        return x.cuda()\n",
        "test.py": "from methods.finetune import BaselineFinetune\n\nprint(BaselineFinetune().adapt(1))\n",
    }
    found = _scan(tmp_path, files)
    assert found[("methods/finetune.py", 3, "DEV002")].severity.value != "info", sorted(found)


def test_a_class_only_a_parameter_off_by_default_builds_is_unused():
    # taming-transformers' `ActNorm`, copied with its discriminator into VQGAN and MAGVIT repositories
    # (Open-MAGVIT2 holds two copies): built only with `use_actnorm=True`, which nothing sets
    util = "import torch\n\n\nclass ActNorm(torch.nn.Module):\n    def forward(self, x):\n        return x.cuda()\n"
    disc = (
        "from pkg.util import ActNorm\nimport torch.nn as nn\n\n\nclass Disc(nn.Module):\n"
        "    def __init__(self, n=3, use_actnorm=False):\n        super().__init__()\n        if not use_actnorm:\n"
        "            norm = nn.BatchNorm2d\n        else:\n            norm = ActNorm\n        self.norm = norm(n)\n"
    )
    loss = (
        "from pkg.disc import Disc\n\n\nclass Loss:\n    def __init__(self, use_actnorm=False):\n"
        "        self.d = Disc(use_actnorm=use_actnorm)\n"
    )
    files = {
        "train.py": "from pkg.loss import Loss\nLoss()\n",
        "pkg/util.py": util,
        "pkg/disc.py": disc,
        "pkg/loss.py": loss,
        "copy/util.py": util,
        "copy/disc.py": disc.replace("pkg.util", "copy.util"),
        "copy/loss.py": loss.replace("pkg.disc", "copy.disc"),
        "sample.py": "from copy.loss import Loss\nLoss()\n",
    }
    found = unused_definitions(TextSources(files), ["pkg/util.py", "copy/util.py"], {})
    assert {p: [(a, b) for a, b, _ in spans] for p, spans in found.items()} == {
        "pkg/util.py": [(4, 6), (1, 1)], "copy/util.py": [(4, 6), (1, 1)]
    }
    # turned on anywhere (a call, a config, a command-line option), or switched by a flag that is no parameter
    for path, text in (
        ("train.py", "from pkg.loss import Loss\nLoss(use_actnorm=True)\n"),
        ("train.py", "from pkg.loss import Loss\nLoss(use_actnorm=args.actnorm)\n"),
        ("run.sh", None),
        ("pkg/disc.py", disc.replace("use_actnorm=False)", "use_actnorm=True)")),
        ("pkg/disc.py", disc.replace(", use_actnorm=False)", ")").replace("if not use_actnorm", "if not USE")),
        # handed on (`use_actnorm=use_actnorm`) from a parameter without a default, which every caller sets (dap-cl's
        # `forward_one_batch(self, inputs, targets, is_train)`, called with `True` in its training loop)
        ("pkg/loss.py", loss.replace("def __init__(self, use_actnorm=False):", "def __init__(self, use_actnorm):")),
        ("pkg/loss.py", loss.replace("use_actnorm=False):", "use_actnorm: bool, n=2):")),
        # a dict's item set, the dict then handed over as keywords (GSVA's `input_dict["reeval"] = True`)
        ("train.py", "from pkg.loss import Loss\nkw = {}\nkw['use_actnorm'] = True\nLoss(**kw)\n"),
    ):
        texts = ["python train.py --use_actnorm\n"] if text is None else []
        changed = files if text is None else {**files, path: text}
        assert "pkg/util.py" not in unused_definitions(TextSources(changed), ["pkg/util.py"], {}, texts), path
    config = ["model:\n  params:\n    use_actnorm: true\n"]
    assert not unused_definitions(TextSources(files), ["pkg/util.py"], {}, config)
    assert unused_definitions(TextSources(files), ["pkg/util.py"], {}, ["model:\n  use_actnorm: false\n"])


def test_code_a_parameter_off_by_default_switches_on_is_info_where_nothing_turns_it_on():
    # nv-tlabs/XCube's `Timer(enabled=True, cuda_sync=False)`: `if self.cuda_sync: torch.cuda.synchronize()`, and no
    # caller sets `cuda_sync` (an annotation, `cuda_sync: bool`, and a docstring's `:param cuda_sync:` set nothing)
    exp = (
        "import torch\n\n\nclass Timer:\n    def __init__(self, enabled=True, cuda_sync: bool = False):\n"
        "        self.cuda_sync = cuda_sync\n\n    def toc(self):\n        if self.cuda_sync:\n"
        "            torch.cuda.synchronize()\n\n\ndef step(x, sync=False):\n    if sync:\n"
        "        torch.cuda.synchronize()\n    return x\n"
    )
    timers = (
        "from exp import Timer\n\n\ndef enable(name, cuda_sync: bool):\n"
        "    \"\"\":param cuda_sync: whether to sync cuda\"\"\"\n    return Timer(cuda_sync=cuda_sync)\n"
    )
    files = {"exp.py": exp, "timers.py": timers, "train.py": "from exp import step\nstep(1)\n"}
    found = switched_off(TextSources(files), {"exp.py": {10, 15}})
    assert {p: [(a, flag) for a, _, flag in spans] for p, spans in found.items()} == {
        "exp.py": [(10, SWITCHED_OFF_NOTE.format(flag="cuda_sync")), (15, SWITCHED_OFF_NOTE.format(flag="sync"))]
    }
    # turned on by a call, a dict's key, or a command-line option; or set by a class line besides `__init__`
    for path, text in (
        ("train.py", "from exp import Timer, step\nstep(1, sync=True)\nTimer(cuda_sync=True)\n"),
        ("train.py", "from exp import Timer, step\nopts = {'sync': 1, 'cuda_sync': True}\n"),
        ("train.py", "import argparse\np = argparse.ArgumentParser()\np.add_argument('--sync')\n"
         "p.add_argument('--cuda_sync')\n"),
    ):
        assert switched_off(TextSources({**files, path: text}), {"exp.py": {10, 15}}) == {}, text
    moved = exp.replace("    def toc(self):", "    def on(self):\n        self.cuda_sync = True\n\n    def toc(self):")
    found = switched_off(TextSources({**files, "exp.py": moved}), {"exp.py": {13, 18}})
    assert [a for a, _, _ in found["exp.py"]] == [18]


def test_a_count_zero_by_default_switches_off_its_positive_branch():
    # UltraShape's `sample_points(..., min_samples_per_face: int = 0)`: `if min_samples_per_face > 0:` runs only
    # where a caller gives a count, and its only caller does not
    sampling = (
        "import torch\n\n\ndef sample(faces, n, min_per_face: int = 0):\n    if min_per_face > 0:\n"
        "        base = torch.bincount(faces, minlength=n)\n        return base\n    return faces\n"
    )
    files = {"sampling.py": sampling, "run.py": "from sampling import sample\nsample(f, 4)\n"}
    found = switched_off(TextSources(files), {"sampling.py": {6}})
    assert [(a, note) for a, _, note in found["sampling.py"]] == [(6, SWITCHED_OFF_NOTE.format(flag="min_per_face"))]
    # a caller that gives a count turns it on; a default of 0.5 or 1 is on already
    given = {**files, "run.py": "from sampling import sample\nsample(f, 4, min_per_face=2)\n"}
    assert switched_off(TextSources(given), {"sampling.py": {6}}) == {}
    for default in ("0.5", "1"):
        on = {**files, "sampling.py": sampling.replace("min_per_face: int = 0", f"min_per_face: int = {default}")}
        assert switched_off(TextSources(on), {"sampling.py": {6}}) == {}, default


def test_a_switch_holds_the_blocks_inside_it_and_a_signature_black_spread_over_lines():
    # IDEA-Research/Stable-DINO's `DINO`: `dn_select_min_noise_as_pos: bool = False` in an `__init__` whose `):` sits
    # alone, and the use in an `else:` inside `if self.dn_select_min_noise_as_pos:`
    dino = (
        "import torch\n\n\nclass DINO:\n    def __init__(\n        self,\n        first: bool = False,\n"
        "        pick_min: bool = False,\n    ):\n        self.first = first\n        self.pick_min = pick_min\n\n"
        "    def prepare(\n        self,\n        x,\n    ):\n        if self.pick_min:\n            if self.first:\n"
        "                return x\n            else:\n                return x.cuda()\n        return x\n"
    )
    files = {"dino.py": dino, "train.py": "from dino import DINO\nDINO().prepare(1)\n"}
    found = switched_off(TextSources(files), {"dino.py": {21}})
    assert [(a, note) for a, _, note in found["dino.py"]] == [(21, SWITCHED_OFF_NOTE.format(flag="pick_min"))]
    # the `else:` of `if not self.first:` is switched by `first` too; a block no flag switches is not
    flipped = dino.replace("            if self.first:\n", "            if not self.first:\n")
    assert switched_off(TextSources({**files, "dino.py": flipped}), {"dino.py": {21}})["dino.py"][0][0] == 21
    off_first = dino.replace("        if self.pick_min:\n", "        if True:\n")
    assert switched_off(TextSources({**files, "dino.py": off_first}), {"dino.py": {21}}) == {}


def test_a_name_only_its_modules_all_lists_is_unused():
    # ali-vilab/videocomposer's `artist/ops/utils.py`: `detect_duplicates` is exported and called nowhere
    utils = (
        "import torch\n\n__all__ = [\n    'detect_duplicates',\n    'rescale',\n]\n\n\n"
        "def detect_duplicates(x):\n    torch.cuda.synchronize()\n    return x\n\n\ndef rescale(x):\n    return x\n"
    )
    files = {"train.py": "from ops.utils import *\nrescale(1)\n", "ops/utils.py": utils}
    found = unused_definitions(TextSources(files), ["ops/utils.py"], {})
    assert [(a, b) for a, b, _ in found["ops/utils.py"]] == [(9, 11), (1, 1)]
    called = {**files, "train.py": files["train.py"] + "detect_duplicates(2)\n"}
    assert not unused_definitions(TextSources(called), ["ops/utils.py"], {})


def test_a_module_another_looks_up_by_computed_name_through_star_imports_is_used():
    # showlab/videollm-online: `data/__init__.py` does `from .ego4d import *` (which does `from .lta import *`)
    # and builds datasets with `globals()[f"build_{dataset}"]`, named on command lines only
    lta = "import torch\n\n\ndef build_ego4d_lta_train(**kwargs):\n    return torch.cuda.current_device()\n"
    files = {
        "train.py": "from data import build\nbuild(['ego4d_lta_train'])\n",
        "data/__init__.py": (
            "from .ego4d import *\n\n\ndef build(names):\n    return [globals()[f'build_{n}']() for n in names]\n"
        ),
        "data/ego4d/__init__.py": "from .lta import *\n",
        "data/ego4d/lta.py": lta,
    }
    assert not unused_definitions(TextSources(files), ["data/ego4d/lta.py"], {})
    # without the lookup, nothing names the builder
    plain = {**files, "data/__init__.py": "from .ego4d import *\n\n\ndef build(names):\n    return names\n"}
    assert unused_definitions(TextSources(plain), ["data/ego4d/lta.py"], {})
    # a lookup of the name a configuration gives as it is (megvii-research/PMN's `globals()[self.arch["name"]]`):
    # spelt in that configuration, where it counts; the builder nothing spells stays unused
    given = "from .ego4d import *\n\n\ndef build(cfg):\n    return globals()[cfg['dataset']['name']]()\n"
    assert unused_definitions(TextSources({**files, "data/__init__.py": given}), ["data/ego4d/lta.py"], {})
    texts = ["dataset:\n  name: build_ego4d_lta_train\n"]  # configs/lta.yaml
    sources = TextSources({**files, "data/__init__.py": given})
    assert not unused_definitions(sources, ["data/ego4d/lta.py"], {}, texts=texts)


# ControlNet's vendored `annotator/uniformer/mmcv` (thu-ml/controlvideo): its extension loader imports
# `mmcv.<name>` by a computed name (its compiled `mmcv._ext`), and `ops/__init__.py` re-exports every op; the
# segmentation model the scripts run uses one of them.
VENDORED_MMCV = {
    "run.py": "from annotator.uniformer.mmcv.ops import point_sample\n\nprint(point_sample(1))\n",
    "annotator/uniformer/__init__.py": "",
    "annotator/uniformer/mmcv/__init__.py": "",
    "annotator/uniformer/mmcv/utils/__init__.py": "",
    "annotator/uniformer/mmcv/utils/ext_loader.py": (
        "import importlib\n\n\ndef load_ext(name, funcs):\n    return importlib.import_module('mmcv.' + name)\n"
    ),
    "annotator/uniformer/mmcv/ops/__init__.py": (
        "from .knn import knn\nfrom .point_sample import point_sample\n\n__all__ = ['knn', 'point_sample']\n"
    ),
    "annotator/uniformer/mmcv/ops/point_sample.py": "def point_sample(x):\n    return x.cuda()\n",
    "annotator/uniformer/mmcv/ops/knn.py": (
        "import torch\nfrom torch.autograd import Function\n\n\nclass KNN(Function):\n"
        '    """KNN (CUDA): the k nearest points, found by the knn kernel."""\n\n'
        "    @staticmethod\n    def forward(ctx, k, xyz):\n        torch.cuda.set_device(xyz.device)\n"
        "        return xyz\n\n\nknn = KNN.apply\n"
    ),
}


def test_a_computed_import_below_a_package_loads_its_children_not_every_module_further_down(tmp_path: Path):
    found = _scan(tmp_path, VENDORED_MMCV)
    # the op the scripts use keeps its finding; the op nothing uses (its alias and its class name each other
    # only) is info, whatever the loader's `mmcv.` prefix
    assert found[("annotator/uniformer/mmcv/ops/point_sample.py", 2, "DEV002")].severity.value != "info"
    assert found[("annotator/uniformer/mmcv/ops/knn.py", 10, "DIST002")].severity.value == "info", sorted(found)
    # a loader of `mmcv.ops.` modules may load `knn`: any of its names may be the one looked up
    loader = "import importlib\n\n\ndef load_op(name):\n    return importlib.import_module('mmcv.ops.' + name)\n"
    found = _scan(tmp_path / "ops", {**VENDORED_MMCV, "annotator/uniformer/mmcv/utils/ext_loader.py": loader})
    assert found[("annotator/uniformer/mmcv/ops/knn.py", 10, "DIST002")].severity.value != "info", sorted(found)


def test_below_is_one_level_under_the_package_a_prefix_names():
    assert _below("zoedepth.trainers.", "metric_depth.zoedepth.trainers.zoedepth_trainer")
    assert _below("models.arch_", "src.models.arch_vit") and not _below("models.arch_", "src.models.vit")
    assert not _below("mmcv.", "annotator.uniformer.mmcv.ops.knn") and _below("mmcv.", "annotator.uniformer.mmcv.ops")


def test_in_a_library_scanned_whole_what_nothing_uses_or_exports_is_info(tmp_path: Path):
    """Vchitect/Optix (a `setup.py` at its top): `optix/utils.py`'s `Timer`, which nothing imports, calls or
    exports, is unused code; a name an `__init__.py` or the module's `__all__` exports, that a test calls or
    its documentation names, is the library's users' to call."""
    library = {**UNUSED_APP, "setup.py": "from setuptools import setup\nsetup()\n"}
    found = _scan(tmp_path / "bare", library)
    unused = found[("pkg/model.py", 10, "DEV002")]
    assert unused.severity.value == "info" and "no `__init__.py` or `__all__` exports it" in unused.note, unused
    exports = {
        "pkg/__init__.py": "from .model import normalize_kp\n",
        "pkg/model.py": "__all__ = ['normalize_kp', 'run']\n" + UNUSED_APP["pkg/model.py"],
        "tests/test_model.py": "from pkg.model import normalize_kp\n\n\ndef test_kp():\n    normalize_kp(1)\n",
        # (its documentation names what users import: SAM2-Plus's README and `build_sam2_plus`)
        "README.md": "```python\nfrom pkg.model import normalize_kp\n```\n",
    }
    for name, text in exports.items():
        found = _scan(tmp_path / name.replace("/", "_"), {**library, name: text})
        line = 11 if name == "pkg/model.py" else 10
        assert found[("pkg/model.py", line, "DEV002")].severity.value != "info", (name, sorted(found))
    # an application's tests are test support: what only they call is info; its README names nothing
    for name in ("tests/test_model.py", "README.md"):
        found = _scan(tmp_path / f"app-{name.replace('/', '_')}", {**UNUSED_APP, name: exports[name]})
        assert found[("pkg/model.py", 10, "DEV002")].severity.value == "info", name


def test_an_import_only_unused_code_uses_goes_with_it(tmp_path: Path):
    """Vchitect/CineTrans's `wan/image2video.py`: `import torch.cuda.amp as amp`, used only inside `WanI2V`,
    which nothing uses; `text2video.py`'s own import, used by what the script runs, keeps its finding."""
    model = (
        "import torch\nimport torch.cuda.amp as amp\n\n\nclass {name}:\n    def generate(self, x):\n"
        "        with amp.autocast():\n            return x\n"
    )
    files = {
        "generate.py": "from wan.text2video import WanT2V\n\nWanT2V().generate(1)\n",
        "wan/__init__.py": "from .image2video import WanI2V\nfrom .text2video import WanT2V\n",
        "wan/image2video.py": model.format(name="WanI2V"),
        "wan/text2video.py": model.format(name="WanT2V"),
    }
    found = _scan(tmp_path, files)
    unused = found[("wan/image2video.py", 2, "AMP001")]
    assert unused.severity.value == "info" and "(`amp`) is used only inside `WanI2V`" in unused.note, unused
    assert found[("wan/text2video.py", 2, "AMP001")].severity.value != "info"
    # an import of a package runs, and fails where it is missing, whatever uses what it binds
    files["wan/image2video.py"] = "import triton\n" + model.format(name="WanI2V").replace("amp.autocast", "triton.x")
    found = _scan(tmp_path / "package", files)
    assert found[("wan/image2video.py", 1, "PKG006")].severity.value == "blocker", sorted(found)
    # an import something else in the module uses too stays
    files["wan/image2video.py"] = model.format(name="WanI2V") + "\n\nprint(amp.autocast)\n"
    found = _scan(tmp_path / "kept", files)
    assert found[("wan/image2video.py", 2, "AMP001")].severity.value != "info"


def test_a_method_nothing_calls_of_a_class_that_derives_from_nothing_is_unused(tmp_path: Path):
    """snap-research/T2Bs's `GaussianModel` (no base class): `load_ply` and `densify_and_prune` are called
    nowhere, and `densify_and_clone` only by `densify_and_prune`; `training_setup`, which the script calls, and
    a method of a class with a base (a framework may call it) keep their findings."""
    model = (
        "import torch\n\n\nclass GaussianModel:\n"
        "    def training_setup(self):\n        self.x = torch.zeros(1, device='cuda')\n\n"
        "    def load_ply(self, path):\n        self.x = torch.zeros(1, device='cuda')\n\n"
        "    def densify_and_clone(self):\n        self.x = torch.zeros(1, device='cuda')\n\n"
        "    def densify_and_prune(self):\n        self.densify_and_clone()\n\n\n"
        "class Hooked(torch.nn.Module):\n    def on_step(self):\n        return torch.zeros(1, device='cuda')\n"
    )
    files = {
        "train.py": (
            "from scene.gaussian_model import GaussianModel, Hooked\n\nGaussianModel().training_setup()\nHooked()\n"
        ),
        "scene/__init__.py": "",
        "scene/gaussian_model.py": model,
    }
    found = _severities(_scan(tmp_path, files), "scene/gaussian_model.py")
    assert found == {
        (6, "DEV003"): "minor", (9, "DEV003"): "info", (12, "DEV003"): "info", (20, "DEV003"): "minor"
    }, found
    # in a library, its users call the methods of the classes it hands them
    library = {**files, "setup.py": "from setuptools import setup\nsetup()\n"}
    found = _severities(_scan(tmp_path / "lib", library), "scene/gaussian_model.py")
    assert set(found.values()) == {"minor"}, found


def test_a_script_named_like_a_test_that_holds_no_test_is_a_user(tmp_path: Path):
    """FSSD_OoD_Detection's `test_maha.py`: the evaluation script its README runs, named for what it evaluates and
    holding no test, so what it calls is used."""
    files = {
        "lib/inference/maha.py": "import torch\n\n\ndef sample_estimator(model):\n    return model.cuda()\n",
        "test_maha.py": (
            "import argparse\nfrom lib.inference.maha import sample_estimator\n\n"
            "parser = argparse.ArgumentParser()\nprint(sample_estimator(parser.parse_args()))\n"
        ),
    }
    found = _scan(tmp_path, files)
    assert found[("lib/inference/maha.py", 5, "DEV002")].severity.value != "info", sorted(found)
    # the same file holding a test: only tests use it
    files["test_maha.py"] += "\n\ndef test_estimator():\n    assert sample_estimator(1)\n"
    found = _scan(tmp_path / "test", files)
    ref = found[("lib/inference/maha.py", 5, "DEV002")]
    assert ref.severity.value == "info" and "only tests use" in ref.note, ref


# apple/ml-nvas3d's layout: two modules named `audio_utils`, each with an `fft_conv`; the script that calls one
# imports the other copy, and another module's local variable shares the name of a helper nothing calls.
COPIES = {
    "nvas3d/__init__.py": "",
    "nvas3d/utils/__init__.py": "",
    "nvas3d/utils/audio_utils.py": (
        "import torch\n\n\ndef clip(x):\n    return x.clamp(-1, 1)\n\n\n"
        "def fft_conv(x, ir):\n    return torch.fft.irfft(torch.fft.rfft(x.cuda()) * ir)\n\n\n"
        "def deconv_and_sum(xs):\n    return torch.stack(xs).cuda().mean(0)\n"
    ),
    "nvas3d/baseline.py": (
        "from nvas3d.utils.audio_utils import clip\n\n\ndef run(xs):\n"
        "    deconv_and_sum = clip(xs).mean(0)\n    return deconv_and_sum\n"
    ),
    "soundspaces/__init__.py": "",
    "soundspaces/utils/__init__.py": "",
    "soundspaces/utils/audio_utils.py": "import torch\n\n\ndef fft_conv(x, ir):\n    return x * ir\n",
    "soundspaces/render.py": "from soundspaces.utils import audio_utils\n\nout = audio_utils.fft_conv(1, 2)\n",
    "main.py": "from nvas3d.baseline import run\n\nrun([1])\n",
}


def test_a_name_spelt_only_as_another_modules_or_a_local_is_no_use(tmp_path: Path):
    found = _scan(tmp_path, COPIES)
    copy = {(line, code): f for (p, line, code), f in found.items() if p == "nvas3d/utils/audio_utils.py"}
    assert copy[(9, "DEV002")].note == UNUSED_NOTE.format(name="fft_conv"), sorted(found)
    assert copy[(13, "DEV002")].note == UNUSED_NOTE.format(name="deconv_and_sum"), sorted(found)


# What makes `nvas3d/utils/audio_utils.py`'s `fft_conv` count as used, by the file that changes.
COPY_USES = {
    "its module by its package": "from nvas3d.utils import audio_utils\n\nout = audio_utils.fft_conv(1, 2)\n",
    "its module by a relative import": "from ..nvas3d.utils import audio_utils\n\nout = audio_utils.fft_conv(1, 2)\n",
    "a star import": (
        "from soundspaces.utils.audio_utils import *\nfrom nvas3d.utils.audio_utils import *\n\nfft_conv(1, 2)\n"
    ),
    "a string": "from soundspaces.utils import audio_utils\n\nout = getattr(audio_utils, 'fft_conv')(1, 2)\n",
    "an attribute of a value": "def render(ops):\n    return ops.fft_conv(1, 2)\n",
}


@pytest.mark.parametrize("render", list(COPY_USES.values()), ids=list(COPY_USES))
def test_a_spelling_that_may_lead_to_the_definition_is_a_use(tmp_path: Path, render: str):
    found = _scan(tmp_path, {**COPIES, "soundspaces/render.py": render})
    assert found[("nvas3d/utils/audio_utils.py", 9, "DEV002")].severity.value != "info", sorted(found)


@pytest.mark.parametrize(
    "source,importer,package,leads",
    [
        (".audio_utils", "nvas3d.utils.baseline", False, True),
        (".audio_utils", "nvas3d.utils", True, True),
        (".", "nvas3d.utils", True, True),  # the package that may re-export it
        ("soundspaces_nvas3d.utils.audio_utils", "run", False, False),
        ("nvas3d.utils.audio_utils", "run", False, True),
        ("utils.audio_utils", "run", False, True),  # a scan that starts above `nvas3d/`
        ("other.audio_utils", "nvas3d.utils.baseline", False, False),
    ],
)
def test_where_an_import_may_lead(source: str, importer: str, package: bool, leads: bool):
    assert may_lead_to(source, importer, "nvas3d.utils.audio_utils", package) is leads


# Get3DHuman: `diff_render/` (no `__init__.py`) holds renderers the models once imported; the imports are commented
# out, and each module only defines (one with an empty `__main__` block, one putting its folder on `sys.path`).
LOOSE = {
    "train.py": "from models import Net\n\n\nif __name__ == '__main__':\n    Net().cuda()\n",
    "models.py": "import torch\n\n\nclass Net(torch.nn.Module):\n    pass\n",
    "diff_render/profiler.py": "import torch\n\n\ndef sync():\n    torch.cuda.synchronize()\n",
    "diff_render/renderer.py": (
        "import os, sys\nsys.path.append(os.path.dirname(os.path.abspath(__file__)))\nimport torch\n"
        "from profiler import sync\n\n\nclass Renderer:\n    def run(self, x):\n        return x.cuda()\n\n\n"
        "if __name__ == '__main__':\n    pass\n"
    ),
}


def _notes(found, path):
    return {f.note for (p, _, _), f in found.items() if p == path}


def test_a_loose_module_that_only_defines_and_that_nothing_imports_is_unreached_in_a_whole_project(tmp_path: Path):
    found = _scan(tmp_path / "whole", LOOSE)
    for path in ("diff_render/profiler.py", "diff_render/renderer.py"):
        assert _notes(found, path) == {UNREACHED_NOTE}, (path, sorted(found))
    # `models.py` only defines too: `train.py` imports it
    assert UNREACHED_NOTE not in _notes(found, "models.py") | _notes(found, "train.py")


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"run.py": "from diff_render.renderer import Renderer\n"}, id="a script imports it"),
        # VDIGPKU/SAMPLING's `from Sampling.synthesis_task_kitti import SynthesisTask`: the repository's folder, as
        # cloned, imported from the folder above
        pytest.param({"run.py": "from MyRepo.diff_render.renderer import Renderer\n"},
                     id="a script imports it through the repository's folder"),
        pytest.param({"diff_render/renderer.py": LOOSE["diff_render/renderer.py"].replace("pass", "Renderer()")},
                     id="its main block does work"),
        pytest.param({"diff_render/renderer.py": LOOSE["diff_render/renderer.py"] + "sync()\n"},
                     id="it calls at module level"),
        pytest.param({"diff_render/renderer.py": LOOSE["diff_render/renderer.py"] + "R = Renderer()\n"},
                     id="it builds something at module level"),
        pytest.param({"diff_render/test_renderer.py": LOOSE["diff_render/renderer.py"]}, id="it is a test"),
        # GP-UNIT's `cog.yaml`: `predict: "predict.py:Predictor"`, a class Cog builds
        pytest.param({"cog.yaml": 'predict: "diff_render/renderer.py:Renderer"\n'},
                     id="a tool's configuration names it"),
        pytest.param({"Procfile.sh": "uvicorn renderer:Renderer\n"}, id="a script hands it to a tool"),
    ],
)
def test_a_loose_module_that_may_run_keeps_its_findings(tmp_path: Path, change):
    found = _scan(tmp_path, {**LOOSE, **change})
    path = next((p for p in change if p.startswith("diff_render/")), "diff_render/renderer.py")
    assert _notes(found, path) and UNREACHED_NOTE not in _notes(found, path), sorted(found)


def test_a_loose_module_nothing_imports_in_part_of_a_repository_keeps_its_findings(tmp_path: Path):
    files = {f"app/{name}": text for name, text in LOOSE.items()}
    found = _scan(tmp_path, files, paths=("app",))
    notes = _notes(found, "app/diff_render/renderer.py")
    assert notes and UNREACHED_NOTE not in notes, sorted(found)


def test_what_a_module_run_by_path_does():
    assert IDLE in loading_facts("import torch\n\n\nclass P:\n    pass\n")
    # constants, an optional import, a decorator, a `sys.path` edit and an empty main block do nothing
    text = (
        '"""Doc."""\nimport sys\nsys.path.append("..")\ntry:\n    import apex\nexcept ImportError:\n    apex = None\n'
        "X: int = 1\nA, B = 1, 2\n\n\n@dataclass\nclass C:\n    x: int = 0\n\n\nif __name__ == '__main__':\n    pass\n"
    )
    assert {IDLE} <= loading_facts(text) and not {RUNS, MAIN} & loading_facts(text), loading_facts(text)
    for works in (
        "def f():\n    pass\n\n\nf()\n",
        "def f():\n    pass\n\n\nlogger = logging.getLogger(__name__)\n",
        "def f():\n    pass\n\n\nif torch.cuda.is_available():\n    X = 1\n",
        "def f():\n    pass\n\n\nif __name__ == '__main__':\n    f()\n",
        "X = 1\nY = [2]\n",  # no definition: a config file some loader reads
    ):
        assert IDLE not in loading_facts(works), works


def test_a_submodule_its_package_spells_by_name_is_loaded_by_that_name():
    # an lmms-eval plugin (GlimpsePrune's `my_lmms_eval/models/__init__.py`): `AVAILABLE_MODELS =
    # {"qwen2_5_vl_visionzip": "Qwen2_5_VL_VisionZip"}`, which lmms-eval imports by name; a submodule the package
    # names nowhere is unused
    files = {
        "run.py": "from plugin.models import gp\n",
        "plugin/__init__.py": "",
        "plugin/models/__init__.py": 'AVAILABLE_MODELS = {\n    "gp": "GP",\n    "visionzip": "VisionZip",\n}\n',
        "plugin/models/gp.py": "",
        "plugin/models/visionzip.py": "",
        "plugin/models/old.py": "",
    }
    assert set(unreached(TextSources(files))) == {"plugin/models/old.py"}
