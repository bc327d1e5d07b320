"""Whether a module's extension build compiles C++ only, from its text.

YOLOX's `JitOp` builds `CppExtension`s from `glob("cocoeval/*.cpp")` and passes its generic
`extra_cuda_cflags` to `cpp_extension.load`: with no `.cu` source nvcc never runs, so those flags
and the loader are no CUDA lock-in. A module counts when it builds with `CppExtension` and never
with `CUDAExtension`, `cuda_sources=` or `with_cuda=True`, and its literals name C++ sources but no
CUDA source (`.cu`, `.cuh`).
"""

from __future__ import annotations

import re

_CPP_BUILD = re.compile(r"\bCppExtension\b")
_CUDA_BUILD = re.compile(r"\bCUDAExtension\b|\bcuda_sources\b|\bwith_cuda\s*=\s*True\b|\.cuh?['\"]")
_CPP_SOURCE = re.compile(r"\.(?:cpp|cc|cxx)['\"]")

CPP_ONLY_NOTE = (
    "lowered to info: this module builds C++ extensions only (`CppExtension`, C++ sources and no `.cu`), so"
    " nvcc and its flags never run"
)


def builds_cpp_only(text: str) -> bool:
    if "CppExtension" not in text:
        return False
    return bool(_CPP_BUILD.search(text) and _CPP_SOURCE.search(text)) and not _CUDA_BUILD.search(text)
