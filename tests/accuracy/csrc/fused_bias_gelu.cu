#include <cuda_runtime.h>  // expect: kernel
#include <cuda_fp16.h>
#include <torch/extension.h>

// Fused bias-add + GeLU (tanh approximation), forward only.
// One thread per element; the bias is broadcast along the last dimension.

namespace {

__device__ __forceinline__ float gelu_tanh(float x) {
    const float k0 = 0.7978845608f;  // sqrt(2 / pi)
    const float k1 = 0.044715f;
    return 0.5f * x * (1.0f + tanhf(k0 * (x + k1 * x * x * x)));
}

template <typename scalar_t>
__global__ void bias_gelu_kernel(const scalar_t* __restrict__ x,
                                 const scalar_t* __restrict__ bias,
                                 scalar_t* __restrict__ y,
                                 int64_t n, int64_t hidden) {
    int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        float v = static_cast<float>(x[i]) + static_cast<float>(bias[i % hidden]);
        y[i] = static_cast<scalar_t>(gelu_tanh(v));
    }
}

}  // namespace

torch::Tensor bias_gelu_forward(torch::Tensor x, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && bias.is_cuda(), "bias_gelu: inputs must be CUDA tensors");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    const int64_t hidden = bias.numel();
    const int threads = 256;
    const int blocks = static_cast<int>((n + threads - 1) / threads);
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "bias_gelu_forward", [&] {
        bias_gelu_kernel<scalar_t><<<blocks, threads>>>(
            x.data_ptr<scalar_t>(), bias.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n, hidden);
    });
    return y;
}
