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
        # meetps/pytorch-semseg's `pspnet.py`: wrapped only to save a checkpoint with the `module.` prefix
        ("    torch.save({'model_state': model.state_dict()}, path)\n", 6),
        ("    torch.save(model.state_dict(), path)\n    model.forward(x)\n", 0),  # a method that runs it
        # soobinseo/Transformer-TTS's training loop: `forward` runs the wrapper, whatever reads `.module` beside it
        ("    out = model.forward(x)\n    log(model.module.encoder.alpha)\n", 0),
    ],
)
def test_a_wrapper_that_never_runs(rest, line):
    tree = ast.parse(HEAD + rest)
    found = unwrapped_wrappers(tree)
    assert set(found.values()) == ({line} if line else set())


@pytest.mark.parametrize(
    "source,line",
    [
        # gmflow's main.py: wrapped in a branch, then run by the training loop after it
        (
            "def main(model):\n    if n > 1:\n        model = torch.nn.DataParallel(model)\n"
            "        model_without_ddp = model.module\n    for batch in loader:\n        loss = model(batch)\n",
            0,
        ),
        # RAFT's evaluate.py: the block ends the script, so nothing runs the wrapper after it
        (
            "if __name__ == '__main__':\n    model = torch.nn.DataParallel(RAFT(args))\n"
            "    model.load_state_dict(ckpt)\n    validate(model.module)\n",
            4,
        ),
        # what follows the block mentions the model only through another name
        (
            "def main(model):\n    if n > 1:\n        model = torch.nn.DataParallel(model)\n"
            "        inner = model.module\n    run(inner)\n",
            4,
        ),
        # the `finally` of a `try` runs after its body: it runs the wrapper
        (
            "def main(model):\n    try:\n        model = torch.nn.DataParallel(model)\n"
            "        inner = model.module\n    finally:\n        model(x)\n",
            0,
        ),
        # in a loop the block runs again, after whatever the loop did with the wrapper
        (
            "def main(models):\n    for m in models:\n        w = torch.nn.DataParallel(m)\n"
            "        w.load_state_dict(ckpt)\n        run(w.module)\n",
            0,
        ),
    ],
)
def test_what_runs_after_the_block_counts(source, line):
    found = unwrapped_wrappers(ast.parse(source))
    assert set(found.values()) == ({line} if line else set())
