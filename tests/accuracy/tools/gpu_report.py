"""Print a JSON report of the GPUs on this machine (run in every job prologue)."""

import json
import os
import shutil
import subprocess
import sys

import torch

try:
    import pynvml  # expect: package
except ImportError:
    pynvml = None

MIN_CUDA = (11, 8)


def nvidia_smi_query():
    if shutil.which("nvidia-smi") is None:
        return []
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=index,name,memory.total,memory.used,utilization.gpu", "--format=csv,noheader,nounits"],  # expect: environment
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = []
    for line in out.strip().splitlines():
        index, name, total, used, util = [p.strip() for p in line.split(",")]
        rows.append({"index": int(index), "name": name, "memory_total_mb": int(total), "memory_used_mb": int(used), "util": int(util)})
    return rows


def nvml_processes():
    if pynvml is None:
        return []
    pynvml.nvmlInit()
    try:
        procs = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                procs.append({"gpu": i, "pid": p.pid, "used_mb": p.usedGpuMemory // 2**20})
        return procs
    finally:
        pynvml.nvmlShutdown()


def toolkit_too_old() -> bool:
    version = tuple(int(p) for p in torch.version.cuda.split("."))  # expect: environment
    return version < MIN_CUDA


def cudnn_ok() -> bool:
    return torch.backends.cudnn.is_available() and torch.backends.cudnn.version() >= 8900  # expect: environment


def main() -> int:
    report = {
        "host": os.uname().nodename,
        "torch": torch.__version__,
        "gpus": nvidia_smi_query(),
        "processes": nvml_processes(),
    }
    print(json.dumps(report, indent=2))
    os.system("nvidia-smi topo -m > topology.txt")  # expect: environment
    if not torch.cuda.is_available():  # expect: device
        print("warning: torch cannot see a CUDA device", file=sys.stderr)
        return 1
    print(f"torch sees {torch.cuda.device_count()} GPU(s)")  # expect: device
    if toolkit_too_old():
        print(f"CUDA toolkit older than {MIN_CUDA}; please upgrade the driver image", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
