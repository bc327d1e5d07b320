"""Proof that fixed code runs: scripts written for CUDA fail on a CPU-only PyTorch, and after
`portcheck fix --target generic` (or `--target cpu`, from a fresh copy) they run to the end there,
and the generic fix also runs on testaccel, the project's own non-CUDA accelerator (tests/accel),
where each script must put its tensors and its arithmetic on that device.

GPUs are hidden from the scripts (CUDA_VISIBLE_DEVICES=""), so the proof holds on a CUDA build too.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from portcheck.config import Config
from portcheck.fixer import FixReport, fix_paths

RUNTIME = Path(__file__).resolve().parent / "runtime"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("torch") is None,
        reason="PyTorch is not installed; get the CPU build with "
        "`pip install torch --index-url https://download.pytorch.org/whl/cpu`",
    ),
]

if importlib.util.find_spec("torch") is not None:
    import accel


@dataclass(frozen=True)
class Script:
    name: str
    expected: str  # a line the script prints when it ran to the end
    ranks: int = 0  # > 0: a torch.distributed script, launched with this many processes
    on_cpu: str = ""  # the line it prints on a CPU-only torch, where that differs from `expected`


SCRIPTS = (
    Script("amp_train.py", "loss went down: True"),
    Script("ddp_train.py", "trained on {ranks} ranks", ranks=2),
    Script("checkpoint.py", "resumed at step 7, weights equal: True"),
    Script("bench_infer.py", "measured latency: True (devices seen: True)"),
    Script("argparse_device.py", "evaluated 4 rows on True"),
    Script("model_defaults.py", "encoded (5, 8) after 5 rows"),
    # After the fix the device check is true on the accelerator, so the fast path runs there, and
    # false on a CPU-only torch (as it was for CPU tensors), so the script's own CPU path runs there.
    Script(
        "device_branch.py",
        "path=accelerated on_accelerator=True shape=(4, 4)",
        on_cpu="path=reference on_accelerator=False shape=(4, 4)",
    ),
)


@dataclass(frozen=True)
class Mode:
    name: str
    target: Optional[str]  # the `portcheck fix --target`; None: the script as written
    device: str  # "cpu": a CPU-only torch; "testaccel": the same torch with tests/accel active


MODES = (
    Mode("as-written", None, "cpu"),
    Mode("generic", "generic", "cpu"),
    Mode("cpu", "cpu", "cpu"),
    Mode("testaccel", "generic", "testaccel"),
)
MODE = {mode.name: mode for mode in MODES}
TIMEOUT = 240


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(ranks: int, mode: Mode, library: Optional[Path], report: Path) -> Dict[str, str]:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    if ranks == 1:  # a one-process torch.distributed world, as torchrun would describe it
        env.update(
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(_free_port()),
            RANK="0",
            WORLD_SIZE="1",
            LOCAL_RANK="0",
            LOCAL_WORLD_SIZE="1",
        )
    if mode.device == "testaccel":
        assert library is not None
        env.update(accel.bootstrap_env(library, report))
    return env


def _run(
    folder: Path, script: Script, mode: Mode, library: Optional[Path]
) -> Tuple[subprocess.CompletedProcess, List[Dict[str, int]]]:
    ranks = _ranks(script, mode)
    command: List[str] = [sys.executable, script.name]
    if ranks > 1:
        command = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc_per_node={ranks}",
            script.name,
        ]
    report = folder / f".device-{script.name}"
    result = subprocess.run(
        command, cwd=folder, env=_env(ranks, mode, library, report), capture_output=True, text=True, timeout=TIMEOUT
    )
    devices = list(accel.read_reports(report).values()) if report.is_dir() else []
    return result, devices


def _run_forked(
    folder: Path, scripts: List[Script], mode: Mode, library: Optional[Path]
) -> Dict[str, Tuple[subprocess.CompletedProcess, List[Dict[str, int]]]]:
    """Run `scripts` with one torch import (tests/runtime/_runner.py); results as if run one by one."""
    out = folder / ".runs"
    out.mkdir()
    names = [s.name for s in scripts]
    runner = subprocess.run(
        [sys.executable, str(RUNTIME / "_runner.py"), str(out), *names],
        cwd=folder,
        env=_env(1, mode, library, folder / ".device-runner"),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    results = {}
    for name in names:
        rc = out / f"{name}.rc"
        code = int(rc.read_text()) if rc.exists() else -1
        stdout = (out / f"{name}.out").read_text(errors="replace") if (out / f"{name}.out").exists() else ""
        stderr = (out / f"{name}.err").read_text(errors="replace") if (out / f"{name}.err").exists() else runner.stderr
        device = out / f"{name}.json"
        devices = [json.loads(device.read_text(encoding="utf-8"))] if device.exists() else []
        results[name] = (subprocess.CompletedProcess([name], code, stdout, stderr), devices)
    return results


@dataclass(frozen=True)
class Proof:
    runs: Dict[Tuple[str, str], subprocess.CompletedProcess]
    devices: Dict[Tuple[str, str], List[Dict[str, int]]]  # per run: each process's testaccel counters
    reports: Dict[str, FixReport]
    folders: Dict[str, Path]


def _ranks(script: Script, mode: Mode) -> int:
    # The generic fix runs with two processes (over gloo on the CPU, over the testaccel relay
    # backend on testaccel); the others with one.
    if not script.ranks:
        return 0
    return script.ranks if mode.target == "generic" else 1


@pytest.fixture(scope="module")
def proof(tmp_path_factory) -> Proof:
    library = accel.build()
    work = tmp_path_factory.mktemp("runtime-proof")
    folders: Dict[str, Path] = {}
    reports: Dict[str, FixReport] = {}
    for mode in MODES:
        folder = work / mode.name
        shutil.copytree(RUNTIME, folder, ignore=shutil.ignore_patterns("__pycache__", "_*"))
        folders[mode.name] = folder
        if mode.target is not None:
            reports[mode.name] = fix_paths([folder], target=mode.target, unsafe=True, config=Config(), cwd=folder)
    runs: Dict[Tuple[str, str], subprocess.CompletedProcess] = {}
    devices: Dict[Tuple[str, str], List[Dict[str, int]]] = {}
    if hasattr(os, "fork"):
        # One interpreter per mode runs every script in a forked child; scripts that need their
        # own processes (a two-rank torchrun) run alone.
        alone = [(s, m) for s in SCRIPTS for m in MODES if _ranks(s, m) > 1]
        batches = [(m, [s for s in SCRIPTS if (s, m) not in alone]) for m in MODES]
        with ThreadPoolExecutor(max_workers=4) as pool:
            single = {job: pool.submit(_run, folders[job[1].name], job[0], job[1], library) for job in alone}
            forked = {m.name: pool.submit(_run_forked, folders[m.name], scripts, m, library) for m, scripts in batches}
            for (script, mode), future in single.items():
                runs[(script.name, mode.name)], devices[(script.name, mode.name)] = future.result()
            for name, future in forked.items():
                for script_name, (result, used) in future.result().items():
                    runs[(script_name, name)], devices[(script_name, name)] = result, used
    else:
        jobs = [(s, m) for s in SCRIPTS for m in MODES]
        with ThreadPoolExecutor(max_workers=3) as pool:
            done = pool.map(lambda job: _run(folders[job[1].name], job[0], job[1], library), jobs)
            for (s, m), (result, used) in zip(jobs, done):
                runs[(s.name, m.name)], devices[(s.name, m.name)] = result, used
    return Proof(runs, devices, reports, folders)


def _tail(result: subprocess.CompletedProcess) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout[-1500:]}\n--- stderr\n{result.stderr[-3000:]}"


def test_every_runtime_script_is_listed():
    assert sorted(p.name for p in RUNTIME.glob("*.py") if not p.name.startswith("_")) == sorted(s.name for s in SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_script_fails_on_cpu_as_written(proof, script):
    result = proof.runs[(script.name, "as-written")]
    assert result.returncode != 0, _tail(result)


def _assert_ran(proof: Proof, script: Script, mode: Mode) -> None:
    fixed = (proof.folders[mode.name] / script.name).read_text(encoding="utf-8")
    assert fixed != (RUNTIME / script.name).read_text(encoding="utf-8"), "the fix changed nothing"
    result = proof.runs[(script.name, mode.name)]
    assert result.returncode == 0, _tail(result) + f"\n--- fixed source\n{fixed}"
    line = script.on_cpu if mode.device == "cpu" and script.on_cpu else script.expected
    expected = line.format(ranks=_ranks(script, mode))
    assert expected in result.stdout.splitlines(), _tail(result)


@pytest.mark.parametrize("variant", ["generic", "cpu"])
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_fixed_script_runs_on_cpu(proof, script, variant):
    _assert_ran(proof, script, MODE[variant])
    # On a CPU-only torch nothing may touch the test device.
    assert not any(used.get("allocations") for used in proof.devices[(script.name, variant)])


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_fixed_script_runs_on_testaccel(proof, script):
    mode = MODE["testaccel"]
    _assert_ran(proof, script, mode)
    # Every process of the script put tensors on the device and computed there.
    workers = [used for used in proof.devices[(script.name, mode.name)] if used.get("allocations")]
    assert len(workers) == max(1, _ranks(script, mode)), (
        proof.devices[(script.name, mode.name)],
        _tail(proof.runs[(script.name, mode.name)]),
    )
    assert all(used["fallback_ops"] > 0 for used in workers), workers


@pytest.mark.parametrize("variant", ["generic", "cpu"])
def test_fix_leaves_nothing_for_a_person_in_the_scripts(proof, variant):
    report = proof.reports[variant]
    left = [(item.finding.path, item.finding.line, item.finding.code, item.reason) for item in report.left]
    assert not left and not report.refused, left or [f.error for f in report.refused]


def test_fixed_scripts_are_stable_under_a_second_fix(proof):
    again = fix_paths(
        [proof.folders["generic"]],
        target="generic",
        unsafe=True,
        write=False,
        config=Config(),
        cwd=proof.folders["generic"],
    )
    assert not again.changed and not again.applied


def test_the_pytorch_facts_the_fixes_rely_on():
    """`literal-device` output needs torch-neuronx (a plain torch rejects "neuron"), and autocast
    picks bfloat16 on the CPU when no dtype is given (so the fix writes float16 out)."""
    code = (
        "import torch\n"
        "print('cpu autocast dtype', torch.get_autocast_dtype('cpu'))\n"
        "try:\n    torch.device('neuron')\n    print('neuron device accepted')\n"
        "except RuntimeError:\n    print('neuron device rejected')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "cpu autocast dtype torch.bfloat16" in result.stdout
    if importlib.util.find_spec("torch_neuronx") is None:
        assert "neuron device rejected" in result.stdout


def test_the_testaccel_run_uses_the_generic_fix_byte_for_byte(proof):
    for script in SCRIPTS:
        generic = (proof.folders["generic"] / script.name).read_bytes()
        assert (proof.folders["testaccel"] / script.name).read_bytes() == generic, script.name
