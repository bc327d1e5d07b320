"""Which non-CUDA accelerators a Python file's code names: the evidence that a project already runs on more
than CUDA (portcheck.score weighs the CUDA-specific code of such a project as one branch among several).

A backend counts when the code uses it as a device type (`"xpu"`, `"mps:0"`), calls its device module
(`torch.xpu`, `torch.backends.mps`, `torch_npu`, `torch_xla`) or asks whether it is there
(`is_npu_available()`). Comments do not count; the search is textual, so a docstring naming `torch.xpu` does.
Code that looks a device module up by type (`torch.get_device_module`, `torch._utils._get_available_device_type`)
or goes through DeepSpeed's `get_accelerator()` names the pseudo-backend ABSTRACTION. `torch.accelerator` does
not: it resolves the one accelerator there is (it is what `portcheck fix` writes), and dispatches nothing.
`PLATFORM_MARKER` tells a dependency declared for some platforms only.
"""

from __future__ import annotations

import re
from typing import AbstractSet, Dict, FrozenSet, Iterable, List, Set, Tuple

ABSTRACTION = "accelerator"

# The backends with a device module of their own in torch (`torch.xpu`, `torch.backends.mps`).
_DEVICE_MODULES = "xpu|npu|mps|hpu|mlu|musa"
# The ways code names a backend, each starting with a literal where it can (a fast search); the group that
# matched gives the backend's name.
_NAMED: Tuple["re.Pattern[str]", ...] = (
    re.compile(r"""["'](xpu|npu|mps|hpu|mlu|musa|xla|neuron)(?::\d+)?["']"""),  # a device type: "xpu", 'mps:0'
    re.compile(r"torch\s*\.\s*(?:backends\s*\.\s*)?(" + _DEVICE_MODULES + r")\b"),  # a device module
    re.compile(r"is_(xpu|npu|mps|hpu|mlu|musa|torch_xla|tpu|torch_neuronx)_available\b"),
    re.compile(r"torch_(xla|npu|mlu|musa|neuronx)\b"),
    re.compile(r"(habana_frameworks|intel_extension_for_pytorch)\b"),
    re.compile(r"(get_accelerator)\s*\("),  # a device abstraction
    re.compile(r"(get_device_module|_get_available_device_type)\b"),
)
_ALIASES = {
    "torch_xla": "xla",
    "tpu": "xla",
    "neuronx": "neuron",
    "torch_neuronx": "neuron",
    "habana_frameworks": "hpu",
    "intel_extension_for_pytorch": "xpu",
    "get_accelerator": ABSTRACTION,
    "get_device_module": ABSTRACTION,
    "_get_available_device_type": ABSTRACTION,
}
# Every match of _NAMED holds one of these: a file without any of them is not searched further.
_WORDS = re.compile(
    r"""[_."'\s](?:xpu|npu|mps|hpu|mlu|musa|xla|neuron|tpu)|get_accelerator|device_module|available_device_type"""
    r"|habana|intel_extension"
)
_QUOTED = re.compile(r"'[^'\n]*'" r'|"[^"\n]*"')


def _in_comment(text: str, start: int) -> bool:
    """Whether position `start` follows a `#` that opens a comment on its line (quoted `#`s aside)."""
    line = text[text.rfind("\n", 0, start) + 1 : start]
    return "#" in line and "#" in _QUOTED.sub("", line)


def named_backends(text: str) -> Tuple[str, ...]:
    """The non-CUDA backends (and ABSTRACTION) that Python source `text` names in code, sorted. A name
    after a `#` on its line is a comment and does not count; a device type counts only as a whole string
    (`"xpu"`, not `"runs on xpu"`)."""
    if not _WORDS.search(text):
        return ()
    found = set()
    for pattern in _NAMED:
        for match in pattern.finditer(text):
            name = _ALIASES.get(match.group(1), match.group(1))
            if name not in found and not _in_comment(text, match.start()):
                found.add(name)
    return tuple(sorted(found))


# How many non-CUDA accelerators code must name to count as already running on more than CUDA: the score
# weighs such a project's CUDA-specific code one level less, and the scanner takes an `if`/`elif` chain over
# as many as the CUDA arm of a dispatch.
SEVERAL_BACKENDS = 2


def device_generic(backends: FrozenSet[str], several: int) -> bool:
    """Whether code naming `backends` already runs on more than CUDA: it goes through a device abstraction,
    or it names at least `several` non-CUDA accelerators."""
    return ABSTRACTION in backends or len(backends - {ABSTRACTION}) >= several


# The device types of accelerators other than CUDA that code dispatches to, with the names their
# availability probes use (`is_torch_xla_available`, `is_tpu_available`, `is_torch_neuronx_available`).
DEVICE_TYPES = frozenset({"xpu", "npu", "mps", "hpu", "mlu", "musa", "xla", "neuron", "sdaa", "mtia"})
_PROBE_NAMES = {**_ALIASES, "torch_tpu": "xla", "neuron_core": "neuron", "neuroncore": "neuron"}
_PROBE = re.compile(r"^_?is_(\w+?)_(?:available|installed)$")


def probed_backend(callee: str) -> str:
    """The accelerator a call asks to be there, by the callee's dotted name: `is_npu_available` -> npu,
    `is_torch_tpu_available` and `is_xla_installed` -> xla, `torch.xpu.is_available` and
    `torch.backends.mps.is_available` -> xpu, mps; "" for any other callee (CUDA's own probes among them)."""
    parts = callee.split(".")
    if len(parts) >= 2 and parts[-1] == "is_available" and parts[-2] in DEVICE_TYPES:
        return parts[-2]
    match = _PROBE.match(parts[-1])
    if match is None:
        return ""
    name = match.group(1)
    name = _PROBE_NAMES.get(name, name)
    if name not in DEVICE_TYPES and name.startswith("torch_"):
        name = _PROBE_NAMES.get(name[6:], name[6:])
    return name if name in DEVICE_TYPES else ""


def device_type_of(value: object) -> str:
    """The accelerator a device string names (`"xpu"`, `"mps:0"`); "" for CUDA, the CPU or any other value."""
    if not isinstance(value, str):
        return ""
    head = value.split(":", 1)[0]
    return head if head in DEVICE_TYPES else ""


# A dotted name in another backend's device module or extension (`torch.xpu.current_device`, `torch_npu.npu`).
_OTHER_MODULE = re.compile(
    r"^(?:torch\.(?:backends\.)?(?:" + _DEVICE_MODULES + r")|torch_npu|torch_mlu|torch_musa"
    r"|intel_extension_for_pytorch|habana_frameworks)(?:\.|$)"
)


def in_other_backend(name: str) -> bool:
    """Whether the resolved dotted `name` belongs to a non-CUDA backend's device module or extension."""
    return bool(_OTHER_MODULE.match(name))


# A dependency declared with an environment marker (`triton; sys_platform == "linux"`) is installed only on
# the platforms the marker names: the project has a path without it (the scanner lowers the finding, the
# score weighs it one level less again after capping environment evidence).
PLATFORM_MARKER = re.compile(r";[^#]*\b(?:sys_platform|platform_system|platform_machine|os_name|implementation_name)\b")


# NVIDIA's inference runtime (`demo/TensorRT/`, `flux/trt/`, `trtllm_causallms.py`): CUDA-only by design,
# a deployment path a port replaces (torch-neuronx, ONNX Runtime) instead of changing it.
DEPLOYMENT_WORDS = frozenset({"tensorrt", "trt", "trtllm"})
# Platforms that run PyTorch as lazy tensors, whose code has the XLA rules' idioms (a legacy `device_neuron.py`).
LAZY_PLATFORM_WORDS = frozenset({"xla", "tpu", "neuron"})


# Words that name a platform other than CUDA in a file, folder or function name (`requirements_xpu.txt`,
# `csrc/attention/hip_fmha/`, `patch_qwen3_5_forward_npu`, Intel's `ipex/` and `openvino/` paths, Apple's
# MLX ports `mdx23c_mlx.py`): what lives there is that platform's code.
OTHER_PLATFORM_WORDS = (
    frozenset("xpu rocm hip npu hpu mps mlx tpu xla neuron cpu mlu musa gaudi habana ascend ipex openvino".split())
    | DEPLOYMENT_WORDS
)


# The same words, less those that also name other things in code (`left_hip`, `neuron.py` of a spiking
# network): in a function or module name, these alone say "another platform".
PLATFORM_NAME_WORDS = OTHER_PLATFORM_WORDS - {"cpu", "hip", "neuron"}


def name_words(name: str) -> List[str]:
    """`attention_forward_generic_ck_tiled.cpp` -> its words, lower case, split at `_`, `-`, `.`, and at a `2`
    between letters, a conversion's "to" (mmdetection's `onnx2tensorrt.py`, `torch2trt`)."""
    return [w for w in re.split(r"[-_.]+|(?<=[a-z])2(?=[a-z])", name.lower()) if w]


def identifier_words(name: str) -> List[str]:
    """`TrtContextWrapper`, `NPUAttention`, `patch_qwen3_5_forward_npu` -> their words: `name_words` of a Python
    name whose CamelCase parts are split too."""
    return name_words(re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)))


def is_deployment_name(name: str) -> bool:
    """`trt_engine`, `TRTModule`, `TrtContextWrapper`: a name with a word for TensorRT deployment."""
    return any(w in DEPLOYMENT_WORDS for w in identifier_words(name))


# A file or folder name that names CUDA (`docker/nvidia/`, `requirements_cuda131.txt`, `Dockerfile.cu121`,
# `accelerators/cuda.py`), and the words that name the other members of a set of per-backend variants beside
# it (`docker/amd/`, `requirements_cpu_only.txt`, `requirements_apple_silicon.txt`, `Dockerfile.rocm`).
_CUDA_VARIANT_WORD = re.compile(r"^(?:cuda\d*|cu\d{3}|nvidia|gpu)$")
VARIANT_WORDS = (OTHER_PLATFORM_WORDS - DEPLOYMENT_WORDS - {"hip"}) | {"amd", "intel", "apple", "vulkan", "metal"}


def cuda_variants(paths: Iterable[str]) -> Dict[str, Tuple[str, Tuple[str, ...]]]:
    """Of `paths` (every file of a scan), those inside a file or folder named for CUDA that has siblings named
    for at least SEVERAL_BACKENDS other backends (text-generation-webui's `docker/nvidia/` beside
    `docker/amd/`, `docker/cpu/`, `docker/intel/`): CUDA's member of a set of per-backend variants, which a
    port extends with one more rather than changes. Each with the CUDA-named part and the other backends."""
    split = [re.split(r"[\\/]", p) for p in paths]
    children: Dict[Tuple[str, ...], Set[str]] = {}
    for parts in split:
        for i, part in enumerate(parts):
            children.setdefault(tuple(parts[:i]), set()).add(part)
    out: Dict[str, Tuple[str, Tuple[str, ...]]] = {}
    for path, parts in zip(paths, split):
        for i, part in enumerate(parts):
            if not any(_CUDA_VARIANT_WORD.match(w) for w in name_words(part)):
                continue
            others = {
                w
                for sibling in children.get(tuple(parts[:i]), ())
                if sibling != part
                for w in name_words(sibling)
                if w in VARIANT_WORDS
            }
            if len(others) >= SEVERAL_BACKENDS:
                out[path] = (part, tuple(sorted(others)))
            break
    return out


def other_platform_part(path: str, words: AbstractSet[str]) -> str:
    """The first folder of `path` (or its file name, extension aside) with a word in `words` for a platform
    other than CUDA (`csrc/attention/hip_fmha/x.cpp` -> `hip_fmha`, `op_builder/npu/builder.py` -> `npu`,
    `devices/device_tpu.py` -> `device_tpu.py`); "" for none."""
    parts = re.split(r"[\\/]", path)
    for i, part in enumerate(parts):
        stem = part.rsplit(".", 1)[0] if i == len(parts) - 1 else part
        if any(w in words for w in name_words(stem)) or (i < len(parts) - 1 and part.lower() in VENDOR_FOLDERS):
            return part
    return ""


# Folders named for another GPU vendor (Triton-distributed's `kernels/amd/`, `layers/amd/`, `test/metax/`) or its
# toolkit (the FP8 emulation toolkit's `pytquant/hip/`, beside `cuda/` and `cpp/`); as a word in a file name `amd`
# names a method as often (MCG-NJU's AMD distillation, `run_amd_pretrain.py`), and `hip` a joint.
VENDOR_FOLDERS = frozenset({"amd", "metax", "hip"})
