"""Whether a module builds extensions (a package's build script), and whether it compiles C++ only, from
its path and text.

YOLOX's `JitOp` builds `CppExtension`s from `glob("cocoeval/*.cpp")` and passes its generic
`extra_cuda_cflags` to `cpp_extension.load`: with no `.cu` source nvcc never runs, so those flags
and the loader are no CUDA lock-in. A module counts when it builds with `CppExtension` and never
with `CUDAExtension`, `cuda_sources=` or `with_cuda=True`, and its literals name C++ sources but no
CUDA source (`.cu`, `.cuh`).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

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


_BUILD_IMPORT = re.compile(r"^\s*(?:from|import)\s+(?:setuptools|distutils|torch\.utils\.cpp_extension)\b", re.M)


def is_build_script(path: str, text: str) -> bool:
    """A package's `setup.py` that imports setuptools (or torch's extension builder): what it runs decides
    what is compiled and installed. A device check there (`if torch.cuda.is_available():`, `suffix ==
    "cuda"`) picks which extensions to build, and off CUDA the build picks the C++ ones; nothing runs on a
    device."""
    return PurePosixPath(path.replace("\\", "/")).name == "setup.py" and bool(_BUILD_IMPORT.search(text))
