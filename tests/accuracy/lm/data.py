"""Sequence packing and batching for language-model training; device-agnostic."""

from typing import Iterable, Iterator, List

import numpy as np
import torch


def pack_documents(docs: Iterable[List[int]], seq_len: int, eos_id: int = 2) -> Iterator[np.ndarray]:
    """Concatenate documents separated by EOS and cut them into fixed-length rows (static shapes)."""
    buffer: List[int] = []
    for doc in docs:
        buffer.extend(doc)
        buffer.append(eos_id)
        while len(buffer) >= seq_len + 1:
            yield np.asarray(buffer[: seq_len + 1], dtype=np.int64)
            buffer = buffer[seq_len:]


def document_mask(row: torch.Tensor, eos_id: int = 2) -> torch.Tensor:
    """Block-diagonal causal mask so packed documents do not attend to each other."""
    doc_ids = torch.cumsum((row == eos_id).long(), dim=-1)
    same_doc = doc_ids[:, None] == doc_ids[None, :]
    causal = torch.ones(row.numel(), row.numel(), dtype=torch.bool, device=row.device).tril()
    return same_doc & causal


class PackedDataset(torch.utils.data.Dataset):
    def __init__(self, rows: np.ndarray):
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int):
        row = torch.from_numpy(self.rows[i])
        return row[:-1], row[1:]


def token_statistics(rows: np.ndarray, vocab_size: int) -> dict:
    counts = np.bincount(rows.reshape(-1), minlength=vocab_size).astype(np.float64)
    p = counts / counts.sum()
    nz = p[p > 0]
    return {"tokens": int(counts.sum()), "unigram_entropy_bits": float(-(nz * np.log2(nz)).sum())}


def split_rows(rows: np.ndarray, val_fraction: float = 0.01, seed: int = 0):
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(rows))
    n_val = max(1, int(len(rows) * val_fraction))
    return rows[order[n_val:]], rows[order[:n_val]]
