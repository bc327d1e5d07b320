"""Run one command and measure it: wall time, CPU time of its whole process tree, and the peak
resident memory of all its processes together (sampled from /proc)."""

from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence

SAMPLE_PERIOD_S = 0.05
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class Measurement:
    """One run of one command."""

    wall_s: float
    cpu_s: float  # user + sys of every process in the tree that was waited for
    peak_rss_bytes: int  # the largest sum of RSS over all live processes of the tree at one instant
    returncode: int
    # CPU time the whole machine spent outside this tree during the run (other users' jobs, and
    # this harness's sampler): a busy neighbour slows wall time, and this shows how much.
    others_cpu_s: float = 0.0

    @property
    def others_cores(self) -> float:
        """How many cores other processes kept busy, on average, while this ran."""
        return self.others_cpu_s / self.wall_s if self.wall_s > 0 else 0.0


def children(pid: int) -> List[int]:
    """The direct children of `pid`, from /proc/PID/task/*/children (empty when it is gone)."""
    out: List[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out.extend(int(p) for p in fh.read().split())
        except (OSError, ValueError):
            continue
    return out


def rss_bytes(pid: int) -> int:
    """Resident memory of one process (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def tree(pid: int) -> List[int]:
    """`pid` and all its descendants that are alive now."""
    found = [pid]
    i = 0
    while i < len(found):
        found.extend(children(found[i]))
        i += 1
    return found


def tree_rss(pid: int) -> int:
    return sum(rss_bytes(p) for p in tree(pid))


class PeakSampler:
    """Polls a process tree's total RSS in a background thread and remembers the maximum."""

    def __init__(self, pid: int, period_s: float = SAMPLE_PERIOD_S) -> None:
        self.pid = pid
        self.period_s = period_s
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(self.pid))
            self._stop.wait(self.period_s)

    def __enter__(self) -> "PeakSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def machine_busy_s() -> float:
    """CPU seconds every core of the machine has spent busy since boot (/proc/stat), or 0 if unknown."""
    try:
        with open("/proc/stat", "rb") as fh:
            fields = fh.readline().split()
    except OSError:
        return 0.0
    if not fields or fields[0] != b"cpu":
        return 0.0
    # user nice system idle iowait irq softirq steal ...: everything but idle and iowait is busy.
    values = [int(v) for v in fields[1:]]
    busy = sum(values[:8]) - values[3] - values[4]
    return busy / _TICK


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(
    command: Sequence[str],
    cwd: Optional[Path] = None,
    env: Optional[Mapping[str, Optional[str]]] = None,
    stdout: Optional[Path] = None,
    timeout_s: Optional[float] = None,
) -> Measurement:
    """Run `command` to completion and measure it. Output goes to `stdout` (a file) or nowhere;
    `env` adds variables to this process's environment (None removes one).

    CPU time is the change in this process's RUSAGE_CHILDREN, so it covers every descendant that
    its parent waited for (process pools join their workers); run one command at a time.
    """
    merged: Dict[str, str] = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = value
    sink = open(stdout, "wb") if stdout is not None else subprocess.DEVNULL
    try:
        cpu0 = _children_cpu()
        busy0 = machine_busy_s()
        start = time.perf_counter()
        proc = subprocess.Popen(list(command), cwd=cwd, env=merged, stdout=sink, stderr=subprocess.STDOUT)
        with PeakSampler(proc.pid) as sampler:
            try:
                returncode = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                returncode = -9
        wall = time.perf_counter() - start
        cpu = _children_cpu() - cpu0
        others = max(0.0, machine_busy_s() - busy0 - cpu)
    finally:
        if stdout is not None:
            sink.close()
    return Measurement(wall_s=wall, cpu_s=cpu, peak_rss_bytes=sampler.peak, returncode=returncode, others_cpu_s=others)
