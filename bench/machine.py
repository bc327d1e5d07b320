"""Describe the machine a benchmark ran on: cores, memory, CPU model, load, Python."""

from __future__ import annotations

import os
import platform
from typing import Any, Dict


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def _mem_total_gb() -> float:
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) * 1024 / 1e9, 1)
    except (OSError, ValueError):
        pass
    return 0.0


def describe() -> Dict[str, Any]:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 0
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return {
        "nproc": cores,
        "mem_total_gb": _mem_total_gb(),
        "cpu_model": _cpu_model(),
        "loadavg": load,
        "os": platform.platform(),
        "python": platform.python_version(),
    }
