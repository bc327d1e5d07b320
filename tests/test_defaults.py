"""A private function's CUDA default that every call in its module overrides never takes effect."""

from __future__ import annotations

import ast

import pytest

from portcheck.pyscan.defaults import MAY_HAVE, overridden_defaults

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
