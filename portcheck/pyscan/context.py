"""What the walker knows about where a node sits: in a loop, under a CUDA guard, inside a message."""

from __future__ import annotations

import ast
from typing import NamedTuple, Optional

from portcheck.pyscan.imports import ImportTable, dotted

# Callees whose string arguments are messages for people, never device strings.
_MESSAGE_FUNCS = frozenset({"print", "warn", "warning", "info", "debug", "error", "exception", "critical", "log", "fatal", "echo", "secho", "write"})
_LOGGER_HINTS = ("log", "logger", "logging", "warnings", "click", "sys.stdout", "sys.stderr", "console", "rich", "tqdm")
_CUDA_CHECK_CALLS = frozenset({"torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.is_initialized"})
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"})


class Ctx(NamedTuple):
    in_loop: bool = False
    guarded: bool = False  # inside a branch of a CUDA check that has a non-CUDA alternative
    message: bool = False  # inside a log/print/raise/assert message
    optional_import: bool = False  # inside `try: ... except ImportError:` or an `if is_x_available():`
    in_function: bool = False
    cuda_context: bool = True  # the file mentions CUDA somewhere, so bare integers are CUDA devices


def is_message_call(node: ast.Call) -> bool:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id in ("print", "warn")
    if isinstance(func, ast.Attribute) and func.attr in _MESSAGE_FUNCS:
        owner = dotted(func.value) or ""
        owner_l = owner.lower()
        if func.attr == "write":
            return owner_l in ("sys.stdout", "sys.stderr")
        if func.attr in ("warn", "warning", "info", "debug", "error", "exception", "critical", "fatal", "log"):
            return any(h in owner_l for h in _LOGGER_HINTS) or owner_l in ("self", "warnings", "")
        return any(h in owner_l for h in _LOGGER_HINTS)
    return False


def is_cuda_check(test: ast.AST, imports: ImportTable) -> bool:
    """True when an `if` test asks whether CUDA (or a CUDA device) is in use."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            if imports.resolve(node.func) in _CUDA_CHECK_CALLS:
                return True
        elif isinstance(node, ast.Attribute):
            if node.attr == "is_cuda":
                return True
        elif isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                if isinstance(side, ast.Constant) and isinstance(side.value, str) and side.value.startswith("cuda"):
                    return True
        elif isinstance(node, ast.Name) and node.id in ("use_cuda", "USE_CUDA", "cuda_available", "has_cuda", "HAS_CUDA"):
            return True
    return False


def is_availability_check(test: ast.AST) -> bool:
    """`if is_flash_attn_available():`, `if importlib.util.find_spec("apex"):` and friends."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            last = name.rsplit(".", 1)[-1]
            if "available" in last or last in ("find_spec", "find_loader"):
                return True
        elif isinstance(node, ast.Name) and (node.id.startswith(("HAS_", "has_", "_HAS_")) or "AVAILABLE" in node.id.upper()):
            return True
    return False


def catches_import_error(handler: ast.ExceptHandler) -> bool:
    exc: Optional[ast.AST] = handler.type
    if exc is None:
        return True
    names = exc.elts if isinstance(exc, ast.Tuple) else [exc]
    for item in names:
        name = dotted(item) or ""
        if name.rsplit(".", 1)[-1] in _IMPORT_ERRORS:
            return True
    return False
