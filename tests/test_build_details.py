"""A build script's details: reads of where the CUDA toolkit is belong to the extension they build."""

from __future__ import annotations

from portcheck.model import Severity
from portcheck.scanner import Settings, scan_bytes

# Dao-AILab/causal-conv1d's setup.py, cut down: `CUDA_HOME` is checked three times around one CUDAExtension.
SETUP = b"""import warnings
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension


def check_if_cuda_home_none(name):
    if CUDA_HOME is not None:
        return
    warnings.warn(f"{name} was requested, but nvcc was not found.")


check_if_cuda_home_none("ops")
if CUDA_HOME is not None:
    version = CUDA_HOME
ext = CUDAExtension("ops_cuda", ["ops.cpp", "ops_kernel.cu"])
setup(ext_modules=[ext], cmdclass={"build_ext": BuildExtension})
"""


def _krn001(data: bytes, path: str):
    found = scan_bytes(data, path, "python", Settings(target="neuron")).findings
    return sorted((f.line, f.severity, f.note) for f in found if f.code == "KRN001")


def test_toolkit_reads_are_details_of_the_extension_they_build():
    found = _krn001(SETUP, "setup.py")
    owner = [f for f in found if f[1] is Severity.BLOCKER]
    assert [line for line, _, _ in owner] == [15]
    details = [f for f in found if f[1] is not Severity.BLOCKER]
    assert {line for line, _, _ in details} == {7, 13, 14}
    assert all(sev is Severity.INFO and "KRN001 finding (line 15)" in note for _, sev, note in details)


def test_a_toolkit_read_alone_stays_a_finding_of_its_own():
    found = _krn001(
        b"import os\nfrom torch.utils.cpp_extension import CUDA_HOME\nnvcc = os.path.join(CUDA_HOME, 'bin')\n",
        "build.py",
    )
    assert found and found[0][1] is Severity.BLOCKER


def test_details_belong_to_the_build_not_to_an_import_nothing_uses():
    # yfeng95/DECA's renderer: `from torch.utils.cpp_extension import load, CUDA_HOME` (CUDA_HOME unused), then load()
    data = b'from torch.utils.cpp_extension import load, CUDA_HOME\next = load(name="x", sources=["a.cpp", "k.cu"])\n'
    found = scan_bytes(data, "ops.py", "python", Settings(target="neuron")).findings
    (detail,) = [f for f in found if f.code == "KRN007"]
    assert "finding (line 2)" in detail.note


# EleutherAI/oslo's `lightseq2/csrc/kernels/cuda/CMakeLists.txt`, cut down: one build, its sources listed.
CMAKE = b"""cmake_minimum_required(VERSION 3.18)
set(cuda_kernel_files
    util.cc.cu
    cross_entropy.cu
    softmax_kernels.cu)
add_library(lightseq_kernels STATIC ${cuda_kernel_files})
"""


def test_a_cmake_files_cuda_build_is_one_finding_its_sources_its_details():
    found = sorted(
        (f.line, f.severity, f.note)
        for f in scan_bytes(CMAKE, "CMakeLists.txt", "cmake", Settings(target="neuron")).findings
        if f.code == "KRN007"
    )
    assert [line for line, _, _ in found] == [3, 4, 5], found
    assert found[0][1] is Severity.MAJOR and not found[0][2]
    assert all(sev is Severity.INFO and "KRN007 finding (line 3)" in note for _, sev, note in found[1:])


# zju3dv/NeuralRecon's TSDF fusion, cut down: PyCUDA imported at the top, its kernel compiled in a method.
FUSION = b"""class TSDFVolume:
    def __init__(self, n):
        import pycuda.driver as cuda
        import pycuda.autoinit
        from pycuda.compiler import SourceModule

        self.cuda = cuda
        self.buf = cuda.mem_alloc(n)
        self.mod = SourceModule("__global__ void integrate(float* v) {}")
"""


def test_a_cuda_library_kernel_after_its_import_is_a_detail_of_the_import():
    found = sorted(
        (f.line, f.severity, f.note)
        for f in scan_bytes(FUSION, "fusion.py", "python", Settings(target="neuron")).findings
        if f.code == "KRN005"
    )
    assert [(line, sev) for line, sev, _ in found if sev is Severity.BLOCKER] == [(3, Severity.BLOCKER)], found
    kernel = [f for f in found if f[0] == 9]
    assert kernel and kernel[0][1] is Severity.INFO and "KRN005 finding (line 3)" in kernel[0][2], found


# py-faster-rcnn's `setup.py` (copied as hustvl/EfficientPose's `lib/nms/setup_linux.py`), cut down: `locate_cuda()`
# looks `nvcc` up in two branches, then the compiler hook and the extension's flags and `.cu` source; no
# `CUDAExtension`, so the file's first KRN007 line stands for its build configuration.
FASTER_RCNN_SETUP = b"""import os
from os.path import join as pjoin
from distutils.extension import Extension


def locate_cuda():
    if 'CUDAHOME' in os.environ:
        nvcc = pjoin(os.environ['CUDAHOME'], 'bin', 'nvcc')
    else:
        nvcc = find_in_path('nvcc', os.environ['PATH'])
    return nvcc


ext = Extension('gpu_nms', ['nms_kernel.cu', 'gpu_nms.pyx'],
                extra_compile_args={'gcc': ['-Wno-unused-function'],
                                    'nvcc': ['-arch=sm_35', '--ptxas-options=-v', '-c']})
"""


def test_a_python_build_script_without_an_extension_is_one_build_configuration():
    found = scan_bytes(FASTER_RCNN_SETUP, "lib/nms/setup_linux.py", "python", Settings(target="neuron")).findings
    found = sorted((f.line, f.severity, f.note) for f in found if f.code == "KRN007")
    assert found[0][:2] == (8, Severity.MAJOR) and not found[0][2], found
    assert len(found) > 2 and all(
        sev is Severity.INFO and "a detail of what this file's KRN007 finding (line 8)" in note
        for _, sev, note in found[1:]
    ), found
    # one list of flags is still one finding (a detail now, standing for its entries)
    assert [note for line, _, note in found if "entries of one list" in note] == [found[-1][2]], found
    assert "stands for 2 entries" in found[-1][2], found
