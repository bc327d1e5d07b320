"""A private function's CUDA default that every call in its module overrides never takes effect."""

from __future__ import annotations

import ast

import pytest

from portcheck.config import Config
from portcheck.pyscan.defaults import MAY_HAVE, overridden_defaults
from portcheck.runner import scan_paths

FUNCTION = (
    "import torch\n\ndef _pixels(shape, dtype=torch.float32, device='cuda'):\n"
    "    return torch.empty(shape, device=device)\n"
)


def _overridden(text: str):
    nodes = list(ast.walk(ast.parse(text)))
    found = overridden_defaults(nodes)
    return sorted(n.value for n in nodes if id(n) in found)


@pytest.mark.parametrize(
    "calls,expected",
    [
        ("x = _pixels(s, device=d)\ny = _pixels(s, torch.half, d)\n", ["cuda"]),  # by keyword and by position
        ("x = _pixels(s, device=d)\ny = _pixels(s)\n", []),  # one call takes the default
        ("", []),  # never called here: nothing says what its callers pass
        ("x = _pixels(s, device=d)\ny = _pixels(*args)\n", []),  # `*args` may or may not reach it
        ("x = _pixels(s, device=d)\nf = _pixels\n", []),  # handed on as a value: other calls unseen
    ],
)
def test_a_default_every_call_overrides(calls, expected):
    assert MAY_HAVE.search(FUNCTION + calls)
    assert _overridden(FUNCTION + calls) == expected


def test_methods_count_self_and_public_functions_keep_their_default():
    method = (
        "class A:\n    def _move(self, x, device='cuda:0'):\n        return x.to(device)\n"
        "    def run(self, x):\n        return self._move(x, self.device)\n"
    )
    assert _overridden(method) == ["cuda:0"]
    public = FUNCTION.replace("_pixels", "pixels") + "x = pixels(s, device=d)\n"
    assert _overridden(public) == [] and not MAY_HAVE.search(public)


@pytest.mark.parametrize(
    "body,unread",
    [
        ("    self.proj = nn.Linear(d_model, d_model)\n", True),  # Informer2020's `__init__`: `device` unused
        ("    self.proj = nn.Linear(d_model, d_model).to(device)\n", False),
        ("    raise NotImplementedError\n", False),  # a stub: its defaults describe an interface
        ("    '''Build.'''\n", False),
        ("    self.__dict__.update(locals())\n", False),  # read by name
    ],
)
def test_the_default_of_a_parameter_the_function_never_reads_picks_nothing(tmp_path, body, unread):
    text = "import torch\nfrom torch import nn\ndef build(self, d_model=512, device=torch.device('cuda:0')):\n" + body
    (tmp_path / "model.py").write_text(text, encoding="utf-8")
    result = scan_paths([tmp_path], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    (finding,) = [f for r in result.files for f in r.findings if f.code == "DEV001"]
    assert ("never reads this parameter" in finding.note) is unread


SCRIPT = (
    "import argparse\nimport torch\nfrom pkg import model_init, build\n\n\n"
    "def run(cfg):\n    model = model_init(cfg.model_path)\n{body}\n\n\n"
    "if __name__ == '__main__':\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('--model-path', type=str)\n"
    "    parser.add_argument('--device', type=str, default='cuda:0')\n"
    "    args = parser.parse_args()\n    run(args)\n"
)


@pytest.mark.parametrize(
    "body,unread",
    [
        ("    return model", True),  # VideoLLaMA2's eval scripts: `--device` declared, never read
        ("    return model.to(accelerator.device)", True),  # VGT's: another object's `device` (accelerate's)
        ("    return model.to(cfg.device if cfg else accelerator.device)", False),
        ("    return model.to(cfg.device)", False),
        ("    return build(model, cfg)", False),  # the parsed arguments go to another module's function
        ("    return model, vars(cfg)", False),
        ("    return getattr(cfg, 'device')", False),  # read by name
        ("    return cfg", False),  # handed back to a caller that may read it
    ],
)
def test_the_default_of_an_option_nothing_reads_picks_nothing(tmp_path, body, unread):
    (tmp_path / "infer.py").write_text(SCRIPT.format(body=body), encoding="utf-8")
    result = scan_paths([tmp_path], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    (finding,) = [f for r in result.files for f in r.findings if f.code == "DEV001"]
    assert ("nothing in this module reads the option" in finding.note) is unread, finding
    assert (finding.severity.value == "info") is unread
