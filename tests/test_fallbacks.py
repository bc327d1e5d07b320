"""Fallbacks are real: an optional import lowers a finding only when its `except` lets the program go on."""

from __future__ import annotations

import textwrap

import pytest

from portcheck.api import scan

CONTINUES = """
try:
    import flash_attn
except ImportError:
    flash_attn = None
"""

RERAISES = """
try:
    import flash_attn
except ImportError:
    raise
"""

RAISES_NEW = """
try:
    import flash_attn
except ImportError as exc:
    raise ImportError("pip install flash-attn") from exc
"""

EXITS = """
import sys
try:
    import flash_attn
except ImportError:
    print("flash-attn is required")
    sys.exit(1)
"""

WARNS_THEN_RAISES_LATER = """
try:
    import flash_attn
except ImportError:
    if STRICT:
        raise
    flash_attn = None
"""

# the handler imports the same thing by another path (a vendored copy): the program needs it either way
IMPORTS_AGAIN = """
try:
    import flash_attn
except ImportError:
    from third_party import flash_attn
"""

# the handler imports another module's class under the same local name: a real fallback
ANOTHER_MODULE = """
try:
    from flash_attn.modules.mha import MHA as Attention
except ImportError:
    from torch.nn import MultiheadAttention as Attention

attention = Attention(64, 8)
"""


def finding(tmp_path, monkeypatch, source: str):
    (tmp_path / "m.py").write_text(textwrap.dedent(source), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    hits = [f for f in scan(["m.py"], target="neuron", jobs=1).findings if f.code == "PKG002"]
    assert len(hits) == 1
    return hits[0]


@pytest.mark.parametrize("source", [CONTINUES, ANOTHER_MODULE], ids=["binds-none", "another-module"])
def test_an_except_that_continues_is_a_fallback(tmp_path, monkeypatch, source):
    f = finding(tmp_path, monkeypatch, source)
    assert f.guarded and f.severity.value == "minor"  # major on neuron, lowered


@pytest.mark.parametrize(
    "source", [RERAISES, RAISES_NEW, EXITS, IMPORTS_AGAIN], ids=["raise", "raise-new", "sys-exit", "imports-again"]
)
def test_an_except_that_reraises_or_exits_is_not_optional(tmp_path, monkeypatch, source):
    f = finding(tmp_path, monkeypatch, source)
    assert not f.guarded and f.severity.value == "major"


def test_a_conditional_raise_still_leaves_a_path_that_continues(tmp_path, monkeypatch):
    assert finding(tmp_path, monkeypatch, WARNS_THEN_RAISES_LATER).guarded


RUNTIME_FALLBACK = """
import subprocess
import warnings

import torch


def run(x):
    try:
        torch.cuda.synchronize()
    except (RuntimeError, subprocess.CalledProcessError):
        warnings.warn("no CUDA; going on without it")
    return x
"""

RUNTIME_RERAISES = """
import torch


def run(x):
    try:
        torch.cuda.synchronize()
    except RuntimeError:
        raise
    return x
"""

OTHER_ERROR = """
import torch


def run(x):
    try:
        torch.cuda.synchronize()
    except KeyError:
        pass
    return x
"""


def _synchronize(tmp_path, monkeypatch, source: str):
    (tmp_path / "m.py").write_text(textwrap.dedent(source), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    hits = [f for f in scan(["m.py"], target="neuron", jobs=1).findings if f.code == "RT001"]
    assert len(hits) == 1
    return hits[0]


def test_a_try_whose_handler_carries_on_is_a_fallback_for_the_cuda_code_it_tries(tmp_path, monkeypatch):
    f = _synchronize(tmp_path, monkeypatch, RUNTIME_FALLBACK)
    assert f.guarded and f.severity.value == "minor" and "`try`" in f.note  # major on neuron, lowered


# THUDM/CodeGeeX2's `evaluation/generation.py`: the handler logs and goes on, but what follows needs what
# the `try` built
NEEDED_AFTER = """
import logging
import torch


def run(x):
    try:
        torch.cuda.synchronize()
        model = x.eval()
    except Exception as e:
        logging.error(e)
    return model(x)
"""


@pytest.mark.parametrize(
    "source", [RUNTIME_RERAISES, OTHER_ERROR, NEEDED_AFTER], ids=["reraises", "other-error", "needed-after"]
)
def test_a_try_that_reraises_or_catches_something_else_is_no_fallback(tmp_path, monkeypatch, source):
    f = _synchronize(tmp_path, monkeypatch, source)
    assert not f.guarded and f.severity.value == "major"
