"""Micro-benchmarks for the model's hot ops: matmul throughput, attention latency, memory footprint."""

import argparse
import statistics

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function


def time_op(fn, *args, warmup: int = 10, iters: int = 100) -> float:
    """Median time of `fn(*args)` in milliseconds, measured with CUDA events."""
    for _ in range(warmup):
        fn(*args)
    torch.cuda.synchronize()  # expect: runtime
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)  # expect: runtime
        end = torch.cuda.Event(enable_timing=True)  # expect: runtime
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def bench_matmul(n: int, dtype: torch.dtype):
    a = torch.randn(n, n, device="cuda", dtype=dtype)  # expect: device
    b = torch.randn(n, n, device="cuda", dtype=dtype)  # expect: device
    ms = time_op(torch.matmul, a, b)
    return ms, 2 * n**3 / (ms * 1e-3) / 1e12


def bench_attention(batch: int, heads: int, seq: int, dim: int) -> float:
    q = torch.randn(batch, heads, seq, dim, device="cuda", dtype=torch.float16)  # expect: device
    k, v = torch.randn_like(q), torch.randn_like(q)
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):  # expect: backend-flag
        return time_op(F.scaled_dot_product_attention, q, k, v)


def memory_footprint(fn, *args) -> float:
    """Peak extra memory of one call, in MiB."""
    torch.cuda.empty_cache()  # expect: runtime
    torch.cuda.reset_peak_memory_stats()  # expect: runtime
    before = torch.cuda.memory_allocated()  # expect: runtime
    fn(*args)
    torch.cuda.synchronize()  # expect: runtime
    return (torch.cuda.max_memory_allocated() - before) / 2**20  # expect: runtime


def annotated_forward(model, x):
    torch.cuda.nvtx.range_push("forward")  # expect: runtime
    out = model(x)
    torch.cuda.nvtx.range_pop()  # expect: runtime
    return out


def profile_step(fn, *args) -> str:
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:  # expect: runtime
        with record_function("step"):
            fn(*args)
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15)


def main():
    parser = argparse.ArgumentParser(description="Benchmark matmul and attention on the current GPU")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096, 8192])
    parser.add_argument("--seq", type=int, default=4096)
    args = parser.parse_args()

    props = torch.cuda.get_device_properties(0)  # expect: runtime
    print(f"device: {props.name}, {props.total_memory / 2**30:.0f} GiB, sm_{props.major}{props.minor}")
    dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16  # expect: runtime
    for n in args.sizes:
        ms, tflops = bench_matmul(n, dtype)
        print(f"matmul {n}x{n} {dtype}: {ms:.3f} ms, {tflops:.1f} TFLOP/s")
    print(f"attention seq={args.seq}: {bench_attention(4, 16, args.seq, 128):.3f} ms")


if __name__ == "__main__":
    main()
