"""`nn.DataParallel` that only loads a checkpoint: the model runs through `.module`, never the wrapper."""

from __future__ import annotations

import ast

import pytest

from portcheck.pyscan.unwrapped import unwrapped_wrappers

HEAD = (
    "import torch\n\ndef demo(args):\n    model = torch.nn.DataParallel(RAFT(args))\n    model.load_state_dict(ckpt)\n"
)


@pytest.mark.parametrize(
    "rest,line",
    [
        ("    model = model.module\n    return model(x)\n", 6),  # rebound to the wrapped model, then run
        ("    model.cuda()\n    validate(model.module)\n", 7),  # only ever handed on as `.module`
        ("    return model(x)\n", 0),  # the wrapper runs the model
        ("    train(model)\n    model = model.module\n", 0),  # handed on as it is first
        ("    model.cuda()\n", 0),  # no `.module` anywhere: nothing says it is taken off
        ("    out = model.module(x) + model(x)\n", 0),  # one run through the wrapper is enough
    ],
)
def test_a_wrapper_that_never_runs(rest, line):
    tree = ast.parse(HEAD + rest)
    found = unwrapped_wrappers(list(ast.walk(tree)))
    assert sorted(found.values()) == ([line] if line else [])
