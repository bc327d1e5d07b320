"""Run `scan_one` over many files: inline for small inputs, in a process pool for large ones.

Output order never depends on scheduling: results come back in input order.
"""

from __future__ import annotations

import os
from typing import List, Optional, Sequence

from portcheck.discover import Candidate
from portcheck.model import FileResult

POOL_THRESHOLD = 64  # below this many files a pool costs more than it saves


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _work(args):
    from portcheck.scan import scan_one

    candidate, settings, display = args
    return scan_one(candidate, settings, display)


def run_all(
    candidates: Sequence[Candidate],
    displays: Sequence[str],
    settings,
    jobs: Optional[int] = None,
    cache=None,
    progress=None,
) -> List[FileResult]:
    from portcheck.scan import scan_one

    jobs = jobs or default_jobs()
    results: List[Optional[FileResult]] = [None] * len(candidates)
    todo = []
    for i, (cand, display) in enumerate(zip(candidates, displays)):
        hit = cache.get(cand, display, settings) if cache is not None else None
        if hit is not None:
            results[i] = hit
            if progress:
                progress(1)
        else:
            todo.append(i)
    if jobs > 1 and len(todo) >= POOL_THRESHOLD:
        import multiprocessing

        ctx = multiprocessing.get_context("fork") if hasattr(os, "fork") else multiprocessing.get_context()
        with ctx.Pool(jobs) as pool:
            chunk = max(1, min(32, len(todo) // (jobs * 8)))
            work = [(candidates[i], settings, displays[i]) for i in todo]
            for i, result in zip(todo, pool.imap(_work, work, chunksize=chunk)):
                results[i] = result
                if progress:
                    progress(1)
    else:
        for i in todo:
            results[i] = scan_one(candidates[i], settings, displays[i])
            if progress:
                progress(1)
    if cache is not None:
        for i in todo:
            cache.put(candidates[i], displays[i], settings, results[i])
    return [r for r in results if r is not None]
