"""Tokenize a text corpus into a flat uint16 memmap. CPU only: run it on the data-prep machines, no GPU needed."""

import argparse
import multiprocessing as mp
import os
from pathlib import Path

import numpy as np


def tokenize_file(path: str) -> np.ndarray:
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    ids = np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.uint16)
    return np.concatenate([ids, np.array([2], dtype=np.uint16)])


def length_stats(lengths: np.ndarray) -> dict:
    lengths = lengths.astype(np.float64)
    return {
        "docs": int(lengths.size),
        "mean": float(lengths.mean()),
        "p50": float(np.percentile(lengths, 50)),
        "p99": float(np.percentile(lengths, 99)),
    }


def main():
    parser = argparse.ArgumentParser(description="Tokenize text files for pre-training (no CUDA required)")
    parser.add_argument("--input", required=True, help="folder of .txt files")
    parser.add_argument("--output", required=True, help="output .bin file")
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="tokenizer processes (CPU)")
    args = parser.parse_args()

    files = sorted(str(p) for p in Path(args.input).rglob("*.txt"))
    with mp.Pool(args.workers) as pool:
        chunks = pool.map(tokenize_file, files, chunksize=16)
    lengths = np.array([c.size for c in chunks], dtype=np.int64)
    total = int(lengths.sum())
    out = np.memmap(args.output, dtype=np.uint16, mode="w+", shape=(total,))
    pos = 0
    for chunk in chunks:
        out[pos : pos + chunk.size] = chunk
        pos += chunk.size
    out.flush()
    print(f"wrote {total:,} tokens from {len(files)} files to {args.output}")
    print(length_stats(lengths))


if __name__ == "__main__":
    main()
