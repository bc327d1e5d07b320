"""Imports a fix adds and drops: the comments above and beside a dropped import stay in the file."""

from __future__ import annotations

import textwrap

import libcst as cst
from test_fix_catalog import fixed

from portcheck.fixer.imports import fix_imports
from portcheck.fixer.names import Binding

CUDA = Binding("cuda", "torch.cuda", "torch", "cuda")


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def drop_cuda(source: str) -> str:
    return fix_imports(cst.parse_module(src(source)), set(), [CUDA], frozenset()).code


def test_comments_of_a_replaced_import_land_on_the_import_that_replaces_it():
    source = src(
        """
        import os

        # Keep the CUDA helpers here.
        from torch import cuda  # the module, not torch

        cuda.synchronize()
        """
    )
    out = fixed(source)
    assert out == src(
        """
        import os

        # Keep the CUDA helpers here.
        # the module, not torch
        import torch

        if torch.accelerator.is_available():
            torch.accelerator.synchronize()
        """
    )
    assert fixed(out) == out


def test_a_trailing_comment_of_a_dropped_import_becomes_a_line_of_its_own():
    source = src(
        """
        import torch
        from torch.cuda import synchronize  # old spelling


        def step():
            synchronize()
        """
    )
    assert fixed(source) == src(
        """
        import torch
        # old spelling


        def step():
            if torch.accelerator.is_available():
                torch.accelerator.synchronize()
        """
    )


def test_an_import_without_comments_goes_with_its_blank_lines_as_before():
    assert fixed("import os\n\nfrom torch import cuda\n\ncuda.synchronize()\n") == src(
        """
        import os
        import torch

        if torch.accelerator.is_available():
            torch.accelerator.synchronize()
        """
    )


def test_comments_of_a_dropped_import_move_onto_the_next_statement():
    assert drop_cuda(
        """
        x = 1

        # why
        from torch import cuda  # beside

        y = 2
        """
    ) == src(
        """
        x = 1

        # why
        # beside

        y = 2
        """
    )


def test_comments_of_the_last_statement_of_a_block_stay_in_the_block():
    assert drop_cuda(
        """
        def f():
            x = 1
            # why
            from torch import cuda

        # module level
        y = 2
        """
    ) == src(
        """
        def f():
            x = 1
            # why

        # module level
        y = 2
        """
    )


def test_a_block_left_empty_keeps_its_comments_after_a_pass():
    assert drop_cuda(
        """
        try:
            # why
            from torch import cuda  # beside
        except ImportError:
            pass
        """
    ) == src(
        """
        try:
            pass
            # why
            # beside
        except ImportError:
            pass
        """
    )


def test_comments_of_the_last_statement_of_a_module_end_the_module():
    assert drop_cuda("import os\n# last\nfrom torch import cuda  # beside\n") == "import os\n# last\n# beside\n"


def test_a_line_that_keeps_other_imports_keeps_its_comment_in_place():
    assert drop_cuda("from torch import cuda, nn  # both\nnn.Linear\n") == "from torch import nn  # both\nnn.Linear\n"
