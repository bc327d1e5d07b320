"""CUDA parameter defaults that every call in an application overrides (portcheck.app_defaults)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

import pytest
from helpers import scan_tree

from portcheck.app_defaults import OVERRIDDEN_NOTE
from portcheck.config import Config
from portcheck.runner import scan_paths

# VideoMAE's layout: `mixup_target(..., device="cuda")` and `RandomErasing(..., device="cuda")`, whose every
# call passes a device of its own.
APP = {
    "mixup.py": (
        "import torch\n\n\n"
        "def mixup_target(target, num_classes, device='cuda'):\n"
        "    return torch.zeros(num_classes, device=device)\n"
    ),
    "random_erasing.py": (
        "import torch\n\n\n"
        "class RandomErasing:\n"
        "    def __init__(self, probability=0.5, device='cuda'):\n"
        "        self.device = device\n"
    ),
    "train.py": (
        "from mixup import mixup_target\nfrom random_erasing import RandomErasing\n\n"
        "y = mixup_target(t, 10, x.device)\ne = RandomErasing(0.25, device='cpu')\n"
    ),
}


def _scan(root: Path, files: Dict[str, str]):
    return scan_tree(root, files, top=True)


def test_a_default_every_call_overrides_is_info(tmp_path: Path):
    found = _scan(tmp_path, APP)
    mixup, erasing = found[("mixup.py", 4, "DEV001")], found[("random_erasing.py", 5, "DEV001")]
    assert mixup.severity.value == "info" and mixup.note == OVERRIDDEN_NOTE.format(
        function="mixup_target", param="device"
    )
    assert erasing.severity.value == "info" and "`RandomErasing`" in erasing.note


NOTEBOOK = '{"cells": [{"cell_type": "code", "source": ["mixup_target(t, 10)\\n"]}]}'
LIBRARY = {"pyproject.toml": "[project]\nname = 'mixup'\n"}
# What keeps the finding, by the files that change.
KEEPS = {
    "a call that uses the default": {"eval.py": "from mixup import mixup_target\nmixup_target(t, 10)\n"},
    "a call through **kwargs": {"eval.py": "from mixup import mixup_target\nmixup_target(t, 10, **kw)\n"},
    "a *args before its position": {"eval.py": "from mixup import mixup_target\nmixup_target(t, *a, dev)\n"},
    "the function handed on": {"eval.py": "from mixup import mixup_target\nrun(callback=mixup_target)\n"},
    "a library that exports it": {**LIBRARY, "__init__.py": "from .mixup import (\n    mixup_target,\n)\n"},
    "a notebook that calls it": {"demo.ipynb": NOTEBOOK},
}


@pytest.mark.parametrize("change", list(KEEPS.values()), ids=list(KEEPS))
def test_a_default_that_may_be_used_keeps_its_finding(tmp_path: Path, change):
    found = _scan(tmp_path, {**APP, **change})
    assert found[("mixup.py", 4, "DEV001")].severity.value != "info", sorted(found)


def test_a_value_by_position_before_kwargs_overrides_the_default(tmp_path: Path):
    # UniWorld's `self.prepare_scoremodel(model, device, cache_dir, **kwargs)`: `**kwargs` cannot pass `device` again
    found = _scan(tmp_path, {**APP, "eval.py": "from mixup import mixup_target\nmixup_target(t, 10, dev, **kw)\n"})
    assert found[("mixup.py", 4, "DEV001")].severity.value == "info", sorted(found)


def test_in_a_library_scanned_whole_a_default_of_a_name_it_does_not_export_is_info(tmp_path: Path):
    """omnivore's `mixup_target(..., device="cuda")` and jepa's `RandomErasing`: packages with a `setup.py`
    whose every call of the name passes a device."""
    found = _scan(tmp_path, {**APP, **LIBRARY, "__init__.py": "from .train import run\n"})
    mixup = found[("mixup.py", 4, "DEV001")]
    assert mixup.severity.value == "info" and "every call of `mixup_target` in this project" in mixup.note, mixup


def test_a_library_scanned_in_part_keeps_its_defaults(tmp_path: Path):
    # only part of the library is scanned: calls elsewhere in it are not seen
    for name, text in {**APP, **LIBRARY}.items():
        path = tmp_path / ("pkg/" + name if name.endswith(".py") else name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    result = scan_paths([tmp_path / "pkg"], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    found = {(r.path, f.line, f.code): f for r in result.files for f in r.findings}
    assert found[("pkg/mixup.py", 4, "DEV001")].severity.value != "info", sorted(found)


def test_a_backend_in_a_dict_nothing_reads_is_info(tmp_path: Path):
    """AudioLDM2's copy of HiFi-GAN's vocoder config: `"dist_config": {"dist_backend": "nccl", ...}`, which its
    inference code never reads; HiFi-GAN's own training reads `h.dist_config["dist_backend"]`."""
    files = {
        "vocoder.py": (
            "def get_config():\n    return {\n        'num_mels': 64,\n        'dist_config': {\n"
            "            'dist_backend': 'nccl',\n            'world_size': 1,\n        },\n    }\n"
        ),
        "infer.py": "from vocoder import get_config\n\nprint(get_config()['num_mels'])\n",
    }
    found = _scan(tmp_path, files)
    entry = found[("vocoder.py", 5, "DIST001")]
    assert entry.severity.value == "info" and "nothing in this project reads `dist_backend`" in entry.note, entry
    files["train.py"] = (
        "import torch.distributed as dist\nfrom vocoder import get_config\n\nh = get_config()\n"
        "dist.init_process_group(backend=h['dist_config']['dist_backend'])\n"
    )
    found = _scan(tmp_path / "read", files)
    assert found[("vocoder.py", 5, "DIST001")].severity.value != "info", sorted(found)


def test_a_config_setting_nothing_reads_is_info(tmp_path: Path):
    """CenterPoint's configs (copied into FocalsConv): `dist_params = dict(backend="nccl", ...)` at the top of each
    config `Config.fromfile` loads, which nothing reads (its `train.py` starts NCCL itself); mmdet's `train.py`
    reads `cfg.dist_params`."""
    config = "total_epochs = 20\ndist_params = dict(backend='nccl', init_method='env://')\nlog_level = 'INFO'\n"
    files = {
        "configs/a.py": config,
        "configs/b.py": config,
        "tools/train.py": "import sys\nfrom det.config import Config\n\ncfg = Config.fromfile(sys.argv[1])\n",
    }
    found = _scan(tmp_path, files)
    entry = found[("configs/a.py", 2, "DIST001")]
    assert entry.severity.value == "info" and "nothing in this project reads `dist_params`" in entry.note, entry
    files["tools/train.py"] += "init_dist('pytorch', **cfg.dist_params)\n"
    found = _scan(tmp_path / "read", files)
    assert found[("configs/a.py", 2, "DIST001")].severity.value != "info", sorted(found)


def test_a_device_set_in_the_main_block_and_never_read_is_info(tmp_path: Path):
    """Q-LLM's `benchmark/pred.py`: `device = torch.device('cuda' if ... else 'cpu')` in its `__main__` block, and
    the model loaded with `device_map` elsewhere; a read below it keeps it."""
    script = (
        "import torch\n\n\ndef run(model):\n    return model\n\n\nif __name__ == '__main__':\n"
        "    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n    run(None)\n"
    )
    found = _scan(tmp_path, {"pred.py": script})
    unread = found[("pred.py", 9, "DEV005")]
    assert unread.severity.value == "info" and "nothing reads `device`" in unread.note, unread
    found = _scan(tmp_path / "read", {"pred.py": script.replace("run(None)", "run(device)")})
    assert "nothing reads" not in found[("pred.py", 9, "DEV005")].note, sorted(found)


@pytest.mark.parametrize(
    "user,read",
    [
        ("from geom import check\n\nprint(check(1))\n", False),
        ("from geom import check, device\n\nprint(check(1), device)\n", True),  # imported by name
        ("import geom\n\nx = torch.zeros(1).to(geom.device)\n", True),  # read through the module
        ("from geom import *\n\nprint(check(1))\n", True),  # a star import may read it
    ],
)
def test_a_device_constant_nothing_reads_is_info(tmp_path: Path, user: str, read: bool):
    """nv-tlabs/DefTet's `check_condition_tetrahedron_base/utils.py`: `device = torch.device("cuda" if
    torch.cuda.is_available() else "cpu")` at module level, while its tensors follow their inputs' device
    (`device=points.device` is a keyword and an attribute, no read of the name)."""
    files = {
        "geom.py": (
            "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
            "def check(points):\n    return torch.ones(1, device=points.device)\n"
        ),
        "run.py": user,
    }
    found = _scan(tmp_path, files)
    constant = found[("geom.py", 3, "DEV005")]
    assert (constant.severity.value == "info") is not read, constant
    assert read or "nothing reads `device`" in constant.note, constant


# UniWorld's t2v_metrics: `ScoreModel.__init__(self, model, device='cuda')`, built only through its subclass, whose
# `__init__` hands `device` on with `super().__init__(...)`.
BASE = {
    "score.py": (
        "import torch\n\n\n"
        "class ScoreModel:\n"
        "    def __init__(self, model, device='cuda'):\n"
        "        self.model = torch.nn.Linear(2, 2).to(device)\n\n\n"
        "class CLIPScore(ScoreModel):\n"
        "    def __init__(self, model, device):\n"
        "        super().__init__(model, device=device)\n"
    ),
    "run.py": "from score import CLIPScore\ns = CLIPScore('clip', device='cpu')\n",
}


def test_a_default_every_subclass_hands_on_is_info(tmp_path: Path):
    found = _scan(tmp_path, BASE)
    base = found[("score.py", 5, "DEV001")]
    assert base.severity.value == "info" and "`ScoreModel`" in base.note, base


@pytest.mark.parametrize(
    "subclass",
    [
        "class CLIPScore(ScoreModel):\n    def __init__(self, model, device):\n        super().__init__(model)\n",
        # built with the base's own `__init__`, by calls of the subclass
        "class CLIPScore(ScoreModel):\n    pass\n",
    ],
)
def test_a_subclass_that_uses_the_base_default_keeps_it(tmp_path: Path, subclass: str):
    score = BASE["score.py"].split("class CLIPScore")[0] + subclass
    found = _scan(tmp_path, {**BASE, "score.py": score})
    assert found[("score.py", 5, "DEV001")].severity.value != "info"


@pytest.mark.parametrize(
    "user,read",
    [
        # `batch.data.device` in a file that imports no module `data`: an attribute of a value
        ("from pkg.para.utils.data import FewShot\n\n\ndef f(batch):\n    return batch.data.device\n", False),
        ("import torch.utils.data\n\n\ndef f(batch):\n    return batch.data.device\n", False),
        # a star import of another module of the same name (the package's own `pkg/utils/data.py`)
        ("from pkg.para.utils.data import FewShot\nfrom pkg.utils import *\n", False),
        ("from pkg.para.utils.data import *\n", True),
        ("from pkg.para.utils import data as d\n\nprint(d.device)\n", True),
    ],
)
def test_a_device_constant_of_a_module_named_like_an_attribute(tmp_path: Path, user: str, read: bool):
    """amazon-science/intent-aware-encoder's `paraphrase/utils/data.py`: `device = torch.device("cuda") if
    torch.cuda.is_available() else torch.device("cpu")` that nothing reads, in a module named `data`; both of the
    line's findings say so, the one already at info for its CUDA check too."""
    files = {
        "pkg/para/utils/data.py": (
            "import torch\n\ndevice = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')\n\n\n"
            "class FewShot:\n    pass\n"
        ),
        "pkg/utils/__init__.py": "from .data import *\n",
        "pkg/utils/data.py": "def load(path):\n    return open(path)\n",
        "run.py": user,
    }
    found = _scan(tmp_path, files)
    line = [f for (path, number, _), f in found.items() if path == "pkg/para/utils/data.py" and number == 3]
    assert {f.code for f in line} == {"DEV001", "DEV005"}, sorted(found)
    for finding in line:
        assert ("nothing reads `device`" in finding.note) is not read, finding
    assert read or all(f.severity.value == "info" for f in line)


def test_a_call_of_another_module_s_own_function_of_that_name_is_no_call_of_it(tmp_path: Path):
    # locotrack: the JAX `locotrack_model.py` calls its own `get_alibi_slope(n)`; the PyTorch port's
    # `get_alibi_slope(n, device='cuda')` is always called with a device
    files = {
        **APP,
        "jax_model.py": "def mixup_target(target, num_classes):\n    return target\n\n\ny = mixup_target(t, 10)\n",
    }
    found = _scan(tmp_path, files)
    assert found[("mixup.py", 4, "DEV001")].severity.value == "info"
    # a module that imports the function and calls it without a device keeps the finding
    files["eval.py"] = "from mixup import mixup_target\n\ny = mixup_target(t, 10)\n"
    found = _scan(tmp_path / "used", files)
    assert found[("mixup.py", 4, "DEV001")].severity.value != "info"


def test_a_default_that_picks_cuda_where_it_is_available_is_overridden_too(tmp_path: Path):
    # CLIP's `load(name, device="cuda" if torch.cuda.is_available() else "cpu")`, always called with a device
    files = {
        **APP,
        "mixup.py": (
            "import torch\n\n\n"
            "def mixup_target(target, num_classes, device='cuda' if torch.cuda.is_available() else 'cpu'):\n"
            "    return torch.zeros(num_classes, device=device)\n"
        ),
    }
    found = _scan(tmp_path, files)
    at_default = {code: f.severity.value for (path, line, code), f in found.items() if (path, line) == ("mixup.py", 4)}
    assert at_default and set(at_default.values()) == {"info"}, at_default


@pytest.mark.parametrize(
    "spelling",
    [
        # Gazeformer's `super(PositionEmbeddingSine2d, self).__init__()`: Python 2's `super()` names the class
        "super(RandomErasing, self).__init__()",
        "assert not isinstance(self, (RandomErasing, list))",
    ],
)
def test_a_class_named_where_nothing_can_call_it_is_still_overridden(tmp_path: Path, spelling: str):
    erasing = APP["random_erasing.py"] + f"        {spelling}\n"
    found = _scan(tmp_path, {**APP, "random_erasing.py": erasing})
    assert found[("random_erasing.py", 5, "DEV001")].severity.value == "info", sorted(found)


# LoFA's `WanPrompter.encode_prompt(..., device="cuda")`, called with a device through `self.prompter`, beside
# pipelines with their own `encode_prompt` that call `self.encode_prompt(prompt)`.
PROMPTER = {
    "prompter.py": (
        "import torch\n\n\n"
        "class Prompter(Base):\n"
        "    def encode(self, prompt, positive=True, device='cuda'):\n"
        "        return torch.zeros(3, device=device)\n"
    ),
    "pipeline.py": (
        "from prompter import Prompter\n\n\n"
        "class Pipeline:\n"
        "    def __init__(self):\n        self.prompter = Prompter()\n\n"
        "    def encode(self, prompt):\n        return self.prompter.encode(prompt, device=self.device)\n\n"
        "    def __call__(self, prompt):\n        return self.encode(prompt)\n"
    ),
    "run.py": "from pipeline import Pipeline\n\nPipeline()('a cat')\n",
}


def test_a_call_of_a_class_s_own_method_of_that_name_is_no_call_of_another(tmp_path: Path):
    found = _scan(tmp_path, PROMPTER)
    assert found[("prompter.py", 5, "DEV001")].severity.value == "info", sorted(found)


@pytest.mark.parametrize(
    "caller",
    [
        # a subclass without `encode` of its own runs the default's
        "class Sub(Prompter):\n    def run(self, prompt):\n        return self.encode(prompt)\n",
        # a base class calling `self.encode` runs the subclass's override: the default's class derives from it
        "class Base:\n    def encode(self, prompt):\n        return prompt\n\n"
        "    def run(self, prompt):\n        return self.encode(prompt)\n",
    ],
)
def test_a_self_call_that_may_run_the_default_s_method_keeps_it(tmp_path: Path, caller: str):
    files = {**PROMPTER, "other.py": "from prompter import Prompter\n\n\n" + caller}
    found = _scan(tmp_path, files)
    assert found[("prompter.py", 5, "DEV001")].severity.value != "info", sorted(found)


@pytest.mark.parametrize(
    "call,overridden",
    [
        # a keyword the function does not take, or more arguments by position than it has: another `encode`
        ("self.pipe.encode(text, clip_skip=2)", True),
        ("self.pipe.encode(text, True, 'cpu', 77)", True),
        # one it could be, passing no device
        ("self.pipe.encode(text, positive=False)", False),
        ("self.pipe.encode(*texts)", False),
    ],
)
def test_a_call_that_cannot_be_of_the_function_does_not_use_its_default(tmp_path: Path, call: str, overridden: bool):
    trainer = f"class Trainer:\n    def step(self, text):\n        return {call}\n"
    found = _scan(tmp_path, {**PROMPTER, "trainer.py": trainer})
    assert (found[("prompter.py", 5, "DEV001")].severity.value == "info") is overridden, sorted(found)
