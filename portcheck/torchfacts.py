"""PyTorch facts that both the matcher (`pyscan/`) and the fixer (`fixer/`) rely on, written once.

Names are fully qualified, as `ImportTable.resolve` and `Bindings.resolve` return them.
"""

from __future__ import annotations

import re
from typing import Dict, FrozenSet, Iterable, Optional, Tuple

# Calls whose second positional argument (or `map_location`) says where a checkpoint is loaded.
LOAD_CALLS: FrozenSet[str] = frozenset(
    {"torch.load", "torch.jit.load", "safetensors.torch.load_file", "safetensors.safe_open"}
)

# Calls that take a device type (a string such as "cuda"), not a device.
MESH_CALLS: FrozenSet[str] = frozenset(
    {
        "torch.distributed.device_mesh.init_device_mesh",
        "torch.distributed.init_device_mesh",
        "torch.distributed.device_mesh.DeviceMesh",
        "torch.distributed.DeviceMesh",
    }
)
AMP_CALLS: FrozenSet[str] = frozenset(
    {
        "torch.autocast",
        "torch.amp.autocast",
        "torch.amp.autocast_mode.autocast",
        "torch.amp.GradScaler",
        "torch.amp.grad_scaler.GradScaler",
        "torch.amp.custom_fwd",
        "torch.amp.custom_bwd",
        "torch.get_autocast_dtype",
        "torch.is_autocast_available",
    }
)
DEVICE_TYPE_CALLS: FrozenSet[str] = AMP_CALLS | MESH_CALLS

# Checks that ask whether CUDA is there; the second set also counts the generic spelling.
CUDA_CHECK_CALLS: FrozenSet[str] = frozenset(
    {"torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.is_initialized"}
)
# Attributes that say whether CUDA is in use: `torch.cuda._initialized` (torch's own `checkpoint.py`, copied
# into many repositories), `torch.cuda.default_generators` (one per CUDA device, empty without one).
CUDA_CHECK_ATTRIBUTES: FrozenSet[str] = frozenset({"torch.cuda._initialized", "torch.cuda.default_generators"})
# Questions about the current CUDA device that raise where there is none (a hint chosen by their answer
# still stops the program there).
RAISING_DEVICE_QUERIES: FrozenSet[str] = frozenset(
    {
        "torch.cuda.get_device_name",
        "torch.cuda.get_device_properties",
        "torch.cuda.get_device_capability",
        "torch.cuda.current_device",
    }
)
AVAILABILITY_CALLS: FrozenSet[str] = frozenset({"torch.cuda.is_available", "torch.accelerator.is_available"})
# Calls that build (or load a built) C++/CUDA extension at run time.
EXTENSION_LOADERS: FrozenSet[str] = frozenset(
    {"torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline"}
)

# The torch.cuda memory-statistics family: numbers about CUDA's caching allocator. They are fixed as
# a unit (every call of a function, or none), and `synchronize`/`empty_cache` beside them only when
# they are fixed too, since a timing or memory report that still needs CUDA gains nothing.
MEMORY_STATS: FrozenSet[str] = frozenset(
    f"torch.cuda.{name}"
    for name in (
        "memory_allocated",
        "max_memory_allocated",
        "memory_reserved",
        "max_memory_reserved",
        "memory_stats",
        "memory_stats_as_nested_dict",
        "reset_peak_memory_stats",
        "reset_accumulated_memory_stats",
        "reset_max_memory_allocated",
        "reset_max_memory_cached",
        "memory_cached",
        "max_memory_cached",
        "memory_summary",
        "memory_snapshot",
        "mem_get_info",
        "list_gpu_processes",
        "memory.mem_get_info",
    )
)
MEMORY_COMPANIONS: FrozenSet[str] = MEMORY_STATS | frozenset({"torch.cuda.synchronize", "torch.cuda.empty_cache"})

# Names with no counterpart off CUDA: code that uses them is CUDA-only work, whatever guards it.
CUDA_ONLY_NAMES: FrozenSet[str] = frozenset(
    {
        "torch.utils.cpp_extension.CUDAExtension",
        "torch.utils.cpp_extension.CUDA_HOME",
        "torch.version.cuda",
        "torch.distributed.Backend.NCCL",
    }
)
CUDA_ONLY_STRINGS: FrozenSet[str] = frozenset({"nccl"})

# Seeding: `torch.manual_seed` seeds every device, so a CUDA seed beside it with the same argument is
# the same statement once fixed.
SEED_CALLS: FrozenSet[str] = frozenset(
    {
        "torch.manual_seed",
        "torch.random.manual_seed",
        "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all",
        "torch.cuda.random.manual_seed",
        "torch.cuda.random.manual_seed_all",
    }
)


def device_pattern(devices: Iterable[str]) -> "re.Pattern[str]":
    """A device string naming one of `devices`, optionally with an index: "cuda", "cuda:0"."""
    alternatives = "|".join(re.escape(d) for d in sorted(devices))
    return re.compile(rf"^(?:{alternatives})(?::(\d+))?$")


CUDA_DEVICE = device_pattern(["cuda"])


# Parameters of the APIs a fix writes that cannot be passed by keyword (`name(x, /)`), from the
# signatures of torch 2.13; a renamed call passes these positionally.
POSITIONAL_ONLY: Dict[str, Tuple[str, ...]] = {
    "torch.accelerator.synchronize": ("device",),
    "torch.accelerator.current_stream": ("device",),
    "torch.accelerator.set_device_index": ("device",),
    "torch.accelerator.set_device_idx": ("device",),
    "torch.accelerator.device_index": ("device",),
    "torch.accelerator.get_memory_info": ("device_index",),
    "torch.accelerator.get_device_capability": ("device",),
    "torch.accelerator.memory_allocated": ("device_index",),
    "torch.accelerator.max_memory_allocated": ("device_index",),
    "torch.accelerator.memory_reserved": ("device_index",),
    "torch.accelerator.max_memory_reserved": ("device_index",),
    "torch.accelerator.memory_stats": ("device_index",),
    "torch.accelerator.reset_accumulated_memory_stats": ("device_index",),
    "torch.accelerator.reset_peak_memory_stats": ("device_index",),
    "torch.set_default_dtype": ("d",),
}
# APIs a fix writes that take no argument at all.
NO_ARGUMENTS: FrozenSet[str] = frozenset(
    {
        "torch.accelerator.device_count",
        "torch.accelerator.current_device_index",
        "torch.accelerator.is_available",
        "torch.accelerator.empty_cache",
        "torch_xla.sync",
    }
)

# What an accelerator-only query stands for where there is no accelerator, when the call is guarded
# inside an expression (`x if torch.accelerator.is_available() else <fallback>`).
GUARD_FALLBACK: Dict[str, str] = {
    "torch.accelerator.memory_allocated": "0",
    "torch.accelerator.max_memory_allocated": "0",
    "torch.accelerator.memory_reserved": "0",
    "torch.accelerator.max_memory_reserved": "0",
    "torch.accelerator.memory_stats": "{}",
}
# Queries whose value nothing can stand in for on the CPU (a tuple someone divides by).
NO_FALLBACK: FrozenSet[str] = frozenset({"torch.accelerator.get_memory_info"})

# Legacy CUDA tensor types and the dtype each one stands for (`torch.set_default_tensor_type`).
CUDA_TENSOR_TYPES: Dict[str, str] = {
    f"torch.cuda.{name}Tensor": dtype
    for name, dtype in (
        ("Float", "torch.float32"),
        ("Double", "torch.float64"),
        ("Half", "torch.float16"),
        ("BFloat16", "torch.bfloat16"),
    )
}


# -- roles ------------------------------------------------------------------------------------------
# What a matcher recognised the code it reports as; it travels with the finding (`Finding.role`, beside
# `Finding.symbol`, the qualified name the matcher matched) to the fixer, whose recipes branch on it
# instead of deciding again. Where a value goes (the role of a call's argument):
DEVICE = "device"  # a device: `.to(x)`, `device=x`, `torch.set_default_device(x)`
DEVICE_CALL = "device-call"  # the type argument of `torch.device(x)`
MAP_LOCATION = "map-location"  # where a checkpoint is loaded: `map_location=x`, `torch.load(f, x)`
DEVICE_TYPE = "device-type"  # a device type string: autocast, GradScaler, device meshes, `device_type=x`
STRING = "string"  # kept as a string: stored, a default, an argparse default, an element of a list
DEVICE_IDS = "device-ids"  # DDP's `device_ids=` / `output_device=`
DEVICE_MAP = "device-map"  # a `device_map` entry
# What a device argument is (`x.cuda(<argument>)`):
DEFAULT_DEVICE = "default-device"  # `None`: the current device
INDEX = "index"  # an integer literal
RANK = "rank"  # a name that holds a device index (`local_rank`, `gpu_id`)
DEVICE_VALUE = "device-value"  # a name that holds a device (`device`, `self.dev`)
UNKNOWN = "unknown"  # anything else
# What a called or referenced name is:
CUDA_CHECK = "cuda-check"  # asks whether CUDA is there (`is_available`, `device_count`)
SEED = "seed"  # seeds a random generator
MEMORY_STAT = "memory-stat"  # a CUDA caching-allocator statistic
MEMORY_SYNC = "memory-sync"  # `synchronize` / `empty_cache`, which go with the statistics
# What the code around a reported check makes of it:
SPEEDUP_SWITCH = "speedup-switch"  # a CUDA check that only turns on a speed-up (`fused=`, `use_triton = ...`)

ROLES: FrozenSet[str] = frozenset(
    {
        DEVICE, DEVICE_CALL, MAP_LOCATION, DEVICE_TYPE, STRING, DEVICE_IDS, DEVICE_MAP, DEFAULT_DEVICE, INDEX, RANK,
        DEVICE_VALUE, UNKNOWN, CUDA_CHECK, SEED, MEMORY_STAT, MEMORY_SYNC, SPEEDUP_SWITCH,
    }
)

# Names that hold a device, and names that hold a device index.
DEVICE_NAME = re.compile(
    r"^(?:\w+_)?(?:device|dev|devices|device_type|device_str|device_name)(?:_\w+)?$", re.IGNORECASE
)
RANKISH = re.compile(
    r"^(?:local_?rank|rank|gpu|gpus?_?ids?|gpu_?idx|gpu_?index|gpu_?num|local_gpu|device_?id|device_?idx|cuda_?device|cuda_?id|dev_?id)$",
    re.IGNORECASE,
)

_TYPE_CALL_TAILS = frozenset(name.rsplit(".", 1)[-1] for name in DEVICE_TYPE_CALLS)


def argument_role(callee: str, method: Optional[str], keyword: Optional[str], position: Optional[int]) -> str:
    """Where a value passed to a call goes: `callee` is the call's qualified name ("" when it is not an
    imported name), `method` the attribute called (`add_argument` in `parser.add_argument`), `keyword`
    the keyword it is passed by, else `position` its index among the positional arguments (`*args` not
    counted)."""
    if method == "add_argument":
        return STRING
    if callee == "torch.device":
        return DEVICE_CALL if keyword in (None, "type") else STRING
    if keyword == "map_location" or (
        callee in LOAD_CALLS and (keyword == "device" or (keyword is None and position == 1))
    ):
        return MAP_LOCATION
    if keyword == "device_type" or callee in DEVICE_TYPE_CALLS or callee.rsplit(".", 1)[-1] in _TYPE_CALL_TAILS:
        return DEVICE_TYPE
    return DEVICE


def symbol_role(symbol: Optional[str]) -> str:
    """What a called or referenced qualified name is, as far as a fix cares; "" for anything else."""
    if symbol in CUDA_CHECK_CALLS:
        return CUDA_CHECK
    if symbol in SEED_CALLS:
        return SEED
    if symbol in MEMORY_STATS:
        return MEMORY_STAT
    if symbol in MEMORY_COMPANIONS:
        return MEMORY_SYNC
    return ""


def name_role(name: str) -> str:
    """What a variable or attribute name holds, by its spelling: a device index or a device."""
    if RANKISH.match(name):
        return RANK
    if DEVICE_NAME.match(name):
        return DEVICE_VALUE
    return UNKNOWN
