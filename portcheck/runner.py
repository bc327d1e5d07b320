"""Run the per-file scan over many files: from the cache where it can, inline for small inputs, in a
process pool for large ones. Results come back in input order, whatever the scheduling.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable, ContextManager, Iterator, List, Optional, Sequence, Tuple

from portcheck.discover import Candidate
from portcheck.model import FileResult

if TYPE_CHECKING:
    from portcheck.cache import FileKey

# Below this many files to scan, starting workers costs more than it saves: forking and joining
# a pool takes tens of milliseconds, a typical file a few.
POOL_THRESHOLD = 64
# Files per task sent to a worker, at most: larger tasks cost the parent fewer round trips (on the
# transformers corpus, 2.1 s of parent CPU with 1 file per task, 0.9 s with 8, 0.4 s with 64).
CHUNK_SIZE = 32
# Tasks per worker, at least: small enough tasks that no worker is left with a long tail at the end.
TASKS_PER_WORKER = 8

Advance = Callable[[int], None]
ProgressFactory = Callable[[int], ContextManager[Advance]]
Keyed = Tuple[FileResult, Optional["FileKey"]]


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def scan_keyed(candidate: Candidate, settings, display: str) -> Keyed:
    """Scan one file and say which bytes the result belongs to (None when the file could not be read)."""
    from portcheck.cache import FileKey, content_digest
    from portcheck.scanner import MAX_BYTES, scan_bytes, scan_one

    try:
        st = os.stat(candidate.path)
        if st.st_size > MAX_BYTES:
            return scan_one(candidate, settings, display), None
        with open(candidate.path, "rb") as handle:
            data = handle.read()
    except OSError:
        # scan_one turns every read failure into the right FileError; such results are not cached.
        return scan_one(candidate, settings, display), None
    # The stat is taken before the read: if the file changes in between, the next run sees a new
    # stat, hashes the bytes, and finds the digest of what was really scanned.
    return scan_bytes(data, display, candidate.kind, settings), FileKey(st.st_size, st.st_mtime_ns, content_digest(data))


def scan_plain(candidate: Candidate, settings, display: str) -> Keyed:
    from portcheck.scanner import scan_one

    return scan_one(candidate, settings, display), None


def _work_keyed(args) -> Keyed:
    return scan_keyed(*args)


def _work_plain(args) -> Keyed:
    return scan_plain(*args)


def _init_worker(settings) -> None:
    from portcheck.scanner import prepare

    prepare(settings)


@contextmanager
def _no_progress(total: int) -> Iterator[Advance]:
    yield lambda n=1: None


def _scan_many(work: Sequence[tuple], keyed: bool, jobs: int) -> Iterator[Keyed]:
    if jobs > 1 and len(work) >= POOL_THRESHOLD:
        import multiprocessing

        from portcheck.scanner import prepare

        # Forked workers inherit the compiled catalog; other start methods build it once per worker.
        prepare(work[0][1])
        method = "fork" if sys.platform == "linux" else None
        ctx = multiprocessing.get_context(method)
        workers = min(jobs, len(work))
        chunk = max(1, min(CHUNK_SIZE, len(work) // (workers * TASKS_PER_WORKER)))
        with ctx.Pool(workers, initializer=_init_worker, initargs=(work[0][1],)) as pool:
            yield from pool.imap(_work_keyed if keyed else _work_plain, work, chunksize=chunk)
        return
    one = scan_keyed if keyed else scan_plain
    for args in work:
        yield one(*args)


def run_all(
    candidates: Sequence[Candidate],
    displays: Sequence[str],
    settings,
    jobs: Optional[int] = None,
    cache=None,
    progress: Optional[ProgressFactory] = None,
) -> List[FileResult]:
    """Results for `candidates` in the same order; `cache` is a portcheck.cache.Cache or None;
    `progress(total)` is a context manager yielding an `advance(n)` callable."""
    jobs = jobs or default_jobs()
    bucket = cache.bucket(settings) if cache is not None else None
    results: List[Optional[FileResult]] = [None] * len(candidates)
    todo: List[int] = []
    for i, (cand, display) in enumerate(zip(candidates, displays)):
        hit = bucket.lookup(cand.path, cand.kind, display) if bucket is not None else None
        if hit is not None:
            results[i] = hit
        else:
            todo.append(i)
    work = [(candidates[i], settings, displays[i]) for i in todo]
    with (progress or _no_progress)(len(todo)) as advance:
        for i, (result, key) in zip(todo, _scan_many(work, bucket is not None, jobs)):
            results[i] = result
            if bucket is not None and key is not None:
                bucket.store(candidates[i].path, candidates[i].kind, key, result)
            advance(1)
    if bucket is not None:
        bucket.save()
    return [r for r in results if r is not None]
