"""Build the fused CUDA ops in place:  cd csrc && python setup.py build_ext --inplace"""

import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension  # expect: kernel

if not os.environ.get("CUDA_HOME"):  # expect: kernel
    raise RuntimeError("set CUDA_HOME to a CUDA toolkit; nvcc is needed to build these ops")

nvcc_flags = ["-O3", "--use_fast_math", "-lineinfo", "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90"]  # expect: kernel

setup(
    name="fused_ops",
    version="0.3.0",
    ext_modules=[
        CUDAExtension(  # expect: kernel
            name="fused_ops._C",
            sources=["binding.cpp", "fused_bias_gelu.cu"],  # expect: kernel
            extra_compile_args={"cxx": ["-O3"], "nvcc": nvcc_flags},  # expect: kernel
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    install_requires=["torch>=2.1"],
)
