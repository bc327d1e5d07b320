"""testaccel: a non-CUDA accelerator for tests, written for this project.

A small PrivateUse1 backend (testaccel.cpp) with host memory underneath, a device guard, an
allocator, copies to and from the CPU and a CPU fallback for every other operator. `build()`
compiles it with torch.utils.cpp_extension into a cache folder keyed by the source and the torch
version; `activate()` loads it and registers it so that `torch.accelerator`, autocast and
`torch.distributed` treat it as the machine's accelerator.

Child processes get it from `bootstrap_env()`: a sitecustomize.py on PYTHONPATH activates it before
the script runs, and writes the device's counters to a report file when the process exits.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Dict, Optional

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "testaccel.cpp"
NAME = "testaccel"
LIBRARY_ENV = "TESTACCEL_LIBRARY"  # path of the built extension, read by sitecustomize.py
REPORT_ENV = "TESTACCEL_REPORT"  # folder where each process writes its counters at exit
CACHE_ENV = "TESTACCEL_CACHE"  # folder for builds (default: the system's temp folder)

_state: Dict[str, object] = {}


def _key() -> str:
    from importlib.metadata import version

    digest = hashlib.sha1(SOURCE.read_bytes())
    digest.update(f"{version('torch')} {sys.version_info[:2]} {sys.executable}".encode())
    return digest.hexdigest()[:16]


def build_dir() -> Path:
    root = Path(os.environ.get(CACHE_ENV) or Path(tempfile.gettempdir()) / "portcheck-testaccel")
    return root / _key()


def _compile(verbose: bool = False) -> Path:
    from torch.utils import cpp_extension

    folder = build_dir()
    folder.mkdir(parents=True, exist_ok=True)
    module = cpp_extension.load(
        name=f"{NAME}_{_key()}",
        sources=[str(SOURCE)],
        build_directory=str(folder),
        extra_cflags=["-O1", "-g0"],
        verbose=verbose,
    )
    (folder / "complete").write_text(module.__file__, encoding="utf-8")
    return Path(module.__file__)


def build(verbose: bool = False) -> Path:
    """Compile the extension once per source and torch version; return the shared library's path.

    The compiler runs in a child process, so the caller's torch never loads the backend (that
    cannot be undone). Concurrent callers wait on torch's build lock and reuse the result.
    """
    import subprocess

    started = time.perf_counter()
    complete = build_dir() / "complete"  # written after a successful build
    if complete.is_file() and Path(complete.read_text(encoding="utf-8")).is_file():
        _state["build_seconds"] = time.perf_counter() - started
        return Path(complete.read_text(encoding="utf-8"))
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import accel; "
        "print(accel._compile(verbose=sys.argv[2] == '1'))"
    )
    result = subprocess.run([sys.executable, "-c", code, str(HERE.parent), "1" if verbose else "0"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"building testaccel failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    _state["build_seconds"] = time.perf_counter() - started
    return Path(result.stdout.strip().splitlines()[-1])


def build_seconds() -> Optional[float]:
    """Seconds the last `build()` in this process took (a cache hit takes a few seconds)."""
    value = _state.get("build_seconds")
    return float(value) if value is not None else None


def _import_library(path: Path) -> ModuleType:
    name = path.name.split(".")[0]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


def activate(library: Optional[Path] = None) -> ModuleType:
    """Load the built extension and register `testaccel` as this process's accelerator.

    Returns the Python device module (`torch.testaccel`). Idempotent.
    """
    import torch

    if "device_module" in _state:
        return _state["device_module"]  # type: ignore[return-value]
    native = _import_library(Path(library) if library else build())
    from . import device_module, kernels, relay

    device_module.bind(native)
    torch.utils.rename_privateuse1_backend(NAME)
    torch._register_device_module(NAME, device_module)
    torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)
    relay.register(NAME)
    kernels.register()
    _state["native"] = native
    _state["device_module"] = device_module
    return device_module


def counters() -> Dict[str, int]:
    """What the device did in this process so far: allocations, fallback operators, copies, ..."""
    native = _state.get("native")
    return dict(native.counters()) if native is not None else {}  # type: ignore[attr-defined]


def bootstrap_env(library: Path, report_dir: Optional[Path] = None) -> Dict[str, str]:
    """Environment entries that make every Python child process start with testaccel active."""
    paths = [str(HERE / "bootstrap")]
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    env = {"PYTHONPATH": os.pathsep.join(paths), LIBRARY_ENV: str(library)}
    if report_dir is not None:
        env[REPORT_ENV] = str(report_dir)
    return env


def write_report(folder: Path, label: str) -> None:
    """Write this process's counters to FOLDER/LABEL.json (one file per process)."""
    import json

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{label}.json").write_text(json.dumps(counters(), sort_keys=True), encoding="utf-8")


def read_reports(folder: Path) -> Dict[str, Dict[str, int]]:
    import json

    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(Path(folder).glob("*.json"))}
