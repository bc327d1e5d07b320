"""testaccel, the project's own non-CUDA accelerator (tests/accel): it builds, and torch treats it
as the machine's accelerator. Every check runs in a child process, because registering a
PrivateUse1 backend cannot be undone in the process that does it."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="PyTorch is not installed"),
]

if importlib.util.find_spec("torch") is not None:
    import accel


@pytest.fixture(scope="module")
def library() -> Path:
    return accel.build()


def _python(code: str, env: Dict[str, str], cwd: Path, timeout: int = 180) -> subprocess.CompletedProcess:
    full = dict(os.environ, CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1", **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


PROBE = """
import json, os, tempfile
import torch
import torch.distributed as dist

facts = {}
acc = torch.accelerator
facts["accelerator"] = str(acc.current_accelerator())
facts["available"] = acc.is_available()
facts["count"] = acc.device_count()
facts["module"] = torch.get_device_module("testaccel").__name__

x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
d = x.to("testaccel")
facts["device"] = str(d.device)
facts["is_testaccel"] = d.is_testaccel
facts["round_trip"] = torch.equal(d.cpu(), x)
facts["matmul"] = torch.allclose((d @ d.T).cpu(), x @ x.T)
facts["reduce"] = float(d.sum()) == float(x.sum())
d.add_(1)
facts["in_place"] = torch.equal(d.cpu(), x + 1)
view = d.view(4, 3)[1:, :2].t()
facts["view_shares_storage"] = view.untyped_storage().data_ptr() == d.untyped_storage().data_ptr()
facts["view_values"] = torch.equal(view.cpu(), (x + 1).view(4, 3)[1:, :2].t())
facts["empty_like"] = str(torch.empty_like(d).device)
facts["fill"] = torch.equal(torch.full((2, 2), 7.0, device="testaccel").cpu(), torch.full((2, 2), 7.0))
facts["zeros"] = torch.equal(torch.zeros(3, device="testaccel").cpu(), torch.zeros(3))
facts["tensor_method"] = str(x.testaccel().device)

acc.set_device_index(1)
facts["index_after_set"] = acc.current_device_index()
facts["new_tensor_index"] = torch.ones(1, device="testaccel").device.index
with torch.testaccel.device(0):
    facts["index_in_context"] = acc.current_device_index()
acc.set_device_index(0)
facts["cross_device_copy"] = torch.equal(d.to("testaccel:1").cpu(), x + 1)

before = torch.testaccel_counters()["synchronizations"]
acc.synchronize()
torch.testaccel.synchronize()
facts["synchronized"] = torch.testaccel_counters()["synchronizations"] - before

linear = torch.nn.Linear(4, 2).to("testaccel")
with torch.autocast(device_type="testaccel", dtype=torch.float16):
    facts["autocast_dtype"] = str(linear(d).dtype)
facts["outside_autocast_dtype"] = str(linear(d).dtype)
facts["amp_available"] = torch.amp.is_autocast_available("testaccel")

conv = torch.nn.Conv2d(2, 3, 3, padding=1)
image = torch.randn(1, 2, 5, 5, requires_grad=True)
conv(image).sum().backward()
conv_d = torch.nn.Conv2d(2, 3, 3, padding=1).to("testaccel")
conv_d.load_state_dict(conv.state_dict())
image_d = image.detach().to("testaccel").requires_grad_()
out_d = conv_d(image_d)
out_d.sum().backward()
facts["conv"] = torch.allclose(out_d.cpu(), conv(image).detach(), atol=1e-6)
facts["conv_grads"] = (torch.allclose(image_d.grad.cpu(), image.grad, atol=1e-6)
                       and torch.allclose(conv_d.weight.grad.cpu(), conv.weight.grad, atol=1e-6)
                       and str(conv_d.weight.grad.device) == "testaccel:0")

gru = torch.nn.GRU(6, 5, batch_first=True)  # a GRU cell off the CPU is aten::_thnn_fused_gru_cell
seq = torch.randn(3, 4, 6, requires_grad=True)
out, h = gru(seq)
(out.sum() + h.pow(2).sum()).backward()
gru_d = torch.nn.GRU(6, 5, batch_first=True).to("testaccel")
gru_d.load_state_dict(gru.state_dict())
seq_d = seq.detach().to("testaccel").requires_grad_()
out_d, h_d = gru_d(seq_d)
(out_d.sum() + h_d.pow(2).sum()).backward()
facts["gru"] = str(out_d.device) == "testaccel:0" and torch.allclose(out_d.cpu(), out.detach(), atol=1e-6)
facts["gru_grads"] = torch.allclose(seq_d.grad.cpu(), seq.grad, atol=1e-6) and all(
    torch.allclose(a.grad.cpu(), b.grad, atol=1e-6) and str(a.grad.device) == "testaccel:0"
    for a, b in zip(gru_d.parameters(), gru.parameters()))

loss = linear(d).pow(2).mean()
loss.backward()
facts["grad_device"] = str(linear.weight.grad.device)

pinned = torch.zeros(4).pin_memory()
facts["pinned"] = pinned.is_pinned()
facts["non_blocking_copy"] = str(pinned.to("testaccel", non_blocking=True).device)

path = os.path.join(tempfile.mkdtemp(), "t.pt")
torch.save({"w": d}, path)
facts["load_map_location"] = str(torch.load(path, map_location="testaccel")["w"].device)
facts["load_from_device"] = str(torch.load(path)["w"].device)

facts["default_backend"] = dist.get_default_backend_for_device("testaccel")
facts["counters"] = torch.testaccel_counters()
print(json.dumps(facts))
"""


@pytest.fixture(scope="module")
def facts(library, tmp_path_factory) -> Dict[str, object]:
    folder = tmp_path_factory.mktemp("testaccel-probe")
    code = "import torch, testaccel_loader\ntorch.testaccel_counters = testaccel_loader.counters\n" + PROBE
    result = _python(code, accel.bootstrap_env(library), folder)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_build_is_cached_and_stays_out_of_this_process(library):
    again = accel.build()
    assert again == library
    assert library.stat().st_size > 0
    # The compiler ran in a child: this process's torch has no PrivateUse1 backend registered.
    assert not [name for name in sys.modules if name.startswith(accel.NAME + "_")]


def test_without_the_extension_torch_sees_no_accelerator(tmp_path):
    # The control: a CPU-only torch has no accelerator, so everything below comes from testaccel.
    result = _python(
        "import torch; print(torch.accelerator.current_accelerator(), torch.accelerator.is_available())", {}, tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["None", "False"]


def test_torch_accelerator_reports_testaccel(facts):
    assert facts["accelerator"] == "testaccel"
    assert facts["available"] is True
    assert facts["count"] == 2
    assert facts["module"].endswith("device_module")


def test_tensors_live_on_the_device_and_compute_like_the_cpu(facts):
    assert facts["device"] == "testaccel:0" and facts["is_testaccel"] is True
    for key in (
        "round_trip",
        "matmul",
        "reduce",
        "in_place",
        "view_shares_storage",
        "view_values",
        "fill",
        "zeros",
        "cross_device_copy",
        "conv",
        "conv_grads",
        "gru",
        "gru_grads",
    ):
        assert facts[key] is True, key
    assert facts["empty_like"] == "testaccel:0"
    assert facts["tensor_method"] == "testaccel:0"
    assert facts["grad_device"] == "testaccel:0"
    counters = facts["counters"]
    assert counters["allocations"] > 0 and counters["fallback_ops"] > 0 and counters["copies_in"] > 0


def test_device_index_and_synchronize(facts):
    assert facts["index_after_set"] == 1
    assert facts["new_tensor_index"] == 1
    assert facts["index_in_context"] == 0
    assert facts["synchronized"] == 2


def test_autocast_lowers_matrix_products_only_inside_the_context(facts):
    assert facts["amp_available"] is True
    assert facts["autocast_dtype"] == "torch.float16"
    assert facts["outside_autocast_dtype"] == "torch.float32"


def test_pinned_memory_and_serialization(facts):
    assert facts["pinned"] is True
    assert facts["non_blocking_copy"] == "testaccel:0"
    assert facts["load_map_location"] == "testaccel:0"
    assert facts["load_from_device"] == "testaccel:0"


def test_distributed_default_backend_is_registered(facts):
    assert facts["default_backend"] == "testaccel_relay"


DDP = """
import atexit
import os
import sys
from datetime import timedelta
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

backend = dist.get_default_backend_for_device("testaccel")
dist.init_process_group(backend=backend, timeout=timedelta(seconds=60))
rank = dist.get_rank()
torch.accelerator.set_device_index(rank)
device = torch.device("testaccel", rank)
torch.manual_seed(rank)
model = DDP(torch.nn.Linear(3, 1).to(device), device_ids=[rank])
model(torch.randn(4, 3, device=device) * (rank + 1)).sum().backward()
grads = [torch.zeros(3, device=device) for _ in range(2)]
dist.all_gather(grads, model.module.weight.grad.reshape(-1))
total = torch.tensor([rank + 1.0], device=device)
dist.all_reduce(total)
# One write per line: two ranks share the pipe, and print() writes the text and its newline apart.
sys.stdout.write(f"rank {rank} backend {backend} device {model.module.weight.device} sum {total.item()} "
                 f"same-grads {torch.equal(grads[0], grads[1])}\\n")
sys.stdout.flush()
dist.barrier()
# Leave without the interpreter's teardown, where gloo's still-joinable threads can abort a rank
# (std::terminate) after its work is done; the exit handlers (testaccel's counters) run first.
sys.stderr.flush()
atexit._run_exitfuncs()
os._exit(0)
"""


def test_two_ranks_train_on_the_device_over_the_relay_backend(library, tmp_path):
    (tmp_path / "ddp.py").write_text(DDP, encoding="utf-8")
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1", **accel.bootstrap_env(library))
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "ddp.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # Matched in the whole output, not per line, so lines the two ranks interleave still count.
    lines = sorted(re.findall(r"rank \d backend \S+ device \S+ sum \S+ same-grads (?:True|False)", result.stdout))
    assert lines == [
        "rank 0 backend testaccel_relay device testaccel:0 sum 3.0 same-grads True",
        "rank 1 backend testaccel_relay device testaccel:1 sum 3.0 same-grads True",
    ], result.stdout + result.stderr[-2000:]
