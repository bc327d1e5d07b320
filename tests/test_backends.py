"""Which non-CUDA accelerators a file's code names (portcheck.backends), and the scan carrying them."""

from __future__ import annotations

import pytest

from portcheck.backends import ABSTRACTION, cuda_variants, device_generic, named_backends
from portcheck.scanner import Settings, scan_bytes, scan_bytes_targets


@pytest.mark.parametrize(
    "text, expected",
    [
        ('device = "xpu" if torch.xpu.is_available() else "cpu"\n', ("xpu",)),
        ('if torch.backends.mps.is_available():\n    d = "mps:0"\n', ("mps",)),
        ("elif is_npu_available():\n    pass\nelif is_torch_xla_available():\n    pass\n", ("npu", "xla")),
        ("import torch_npu\nimport habana_frameworks.torch as ht\n", ("hpu", "npu")),
        ("dev = torch.get_device_module(device_type)\n", (ABSTRACTION,)),
        ("from deepspeed.accelerator import get_accelerator\nget_accelerator().device_name()\n", (ABSTRACTION,)),
        ("from torch._utils import _get_available_device_type\n", (ABSTRACTION,)),
        ("m = torch . xpu\n", ("xpu",)),
    ],
)
def test_named_backends(text, expected):
    assert named_backends(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "device = 'cuda'  # or 'mps' on a mac\n",  # a comment is not code
        's = "runs on xpu and npu too"\n',  # a sentence is not a device type
        "import torch\nx = torch.zeros(3)\n",
        "mpsolver = 1\nnpus = 2\n",
    ],
)
def test_comments_and_prose_name_no_backend(text):
    assert named_backends(text) == ()


def test_text_that_does_not_tokenize_is_read_as_it_is():
    assert named_backends('def f(:\n    "xpu"') == ("xpu",)


def test_device_generic_needs_an_abstraction_or_several_accelerators():
    assert device_generic(frozenset({ABSTRACTION}), 2)
    assert device_generic(frozenset({"mps", "xpu"}), 2)
    assert not device_generic(frozenset({"mps"}), 2)
    assert not device_generic(frozenset(), 2)


def test_the_scan_records_the_backends_of_python_files_only():
    settings = Settings(target="generic")
    py = scan_bytes(b'import torch\nd = "xpu" if torch.xpu.is_available() else "cuda"\n', "a.py", "python", settings)
    assert py.backends == ("xpu",)
    req = scan_bytes(b"torch_npu\n", "requirements.txt", "requirements", settings)
    assert req.backends == ()


@pytest.mark.parametrize("path", ["scripts/run_xla.py", "composer/devices/device_tpu.py"])
def test_a_tpu_paths_xla_idioms_are_the_xla_targets_concern_only(path):
    # `xm.mark_step()` in a TPU runner: deprecated for PyTorch/XLA, but a Neuron port keeps that path as it is
    data = b"import torch_xla.core.xla_model as xm\n\n\ndef step():\n    xm.mark_step()\n"
    group = tuple(Settings(target=t) for t in ("neuron", "xla", "generic"))
    neuron, xla, generic = (r.findings for r in scan_bytes_targets(data, path, "python", group))
    assert not [f for f in neuron if f.category == "xla"], neuron
    assert [f.code for f in xla if f.category == "xla"] == ["XLA011"], xla
    assert all(f.severity.value == "info" for f in xla + generic)


PLUGIN = b"""#include "yololayer.h"
#include <cuda_runtime.h>

namespace nvinfer1 {
__global__ void yolo_kernel(const float* in, float* out) { out[threadIdx.x] = in[threadIdx.x]; }
IPluginV2IOExt* YoloLayerPlugin::clone() const { return new YoloLayerPlugin(*this); }
}
"""


def test_a_tensorrt_plugin_source_is_deployment_code_not_a_kernel_to_port():
    # hustvl/YOLOP `toolkits/deploy/yololayer.cu`: it implements TensorRT's plugin interface
    plugin = scan_bytes(PLUGIN, "toolkits/deploy/yololayer.cu", "cuda", Settings(target="neuron"))
    assert not plugin.findings, plugin.findings
    # the same kernel without the plugin interface is a kernel to port
    clone = b"IPluginV2IOExt* YoloLayerPlugin::clone() const { return new YoloLayerPlugin(*this); }\n"
    kernel = PLUGIN.replace(clone, b"")
    kernel = kernel.replace(b"nvinfer1", b"ops")
    found = scan_bytes(kernel, "toolkits/deploy/yololayer.cu", "cuda", Settings(target="neuron"))
    assert [f.code for f in found.findings] == ["KRN002"], found.findings


def test_cuda_variants_need_siblings_for_two_other_backends():
    paths = [
        "docker/nvidia/Dockerfile",
        "docker/amd/Dockerfile",
        "docker/cpu/Dockerfile",
        "requirements/requirements_cuda131.txt",
        "requirements/requirements_cpu_only.txt",
        "requirements/requirements_gpu.txt",
        "accelerators/cuda.py",
        "accelerators/cpu.py",
        "accelerators/mps.py",
        "deploy/Dockerfile.cu121",
        "deploy/Dockerfile",
        # wenet-e2e/wenet: a `gpu` runtime beside Intel's `ipex` and `openvino` ones
        "runtime/gpu/scripts/run_qa.sh",
        "runtime/ipex/CMakeLists.txt",
        "runtime/openvino/CMakeLists.txt",
        "runtime/libtorch/CMakeLists.txt",
    ]
    found = cuda_variants(paths)
    assert found["docker/nvidia/Dockerfile"] == ("nvidia", ("amd", "cpu"))
    assert found["accelerators/cuda.py"] == ("cuda.py", ("cpu", "mps"))
    # one other backend (`cpu_only`; `gpu` names no other backend) is a choice, not a set of variants
    assert "requirements/requirements_cuda131.txt" not in found
    assert "deploy/Dockerfile.cu121" not in found
    assert found["runtime/gpu/scripts/run_qa.sh"] == ("gpu", ("ipex", "openvino"))
    assert set(found) == {"docker/nvidia/Dockerfile", "accelerators/cuda.py", "runtime/gpu/scripts/run_qa.sh"}


@pytest.mark.parametrize(
    "path,other",
    [
        ("python/triton_dist/kernels/amd/gemm.py", True),  # a folder for AMD's GPUs (Triton-distributed)
        ("python/triton_dist/test/metax/test_wait.py", True),  # and for MetaX's
        ("mpemu/pytquant/hip/fpemu.py", True),  # and for HIP, ROCm's toolkit (the FP8 emulation toolkit)
        ("pose/hip_joint.py", False),  # a joint
        ("run_amd_pretrain.py", False),  # a method's name (MCG-NJU's AMD distillation), not the vendor
        ("models/modeling_finetune_amd.py", False),
    ],
)
def test_a_folder_named_for_another_gpu_vendor_is_that_platforms_code(path, other):
    data = b"import torch\n\n\ndef sync():\n    torch.cuda.synchronize()\n"
    found = scan_bytes(data, path, "python", Settings(target="neuron")).findings
    assert (not any(f.code == "RT001" for f in found)) is other, found
