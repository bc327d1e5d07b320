"""Run a scan over paths: discover the files, scan each one (from the cache where it can, inline for
small inputs, in a process pool for large ones; results come back in input order, whatever the
scheduling), then add the project-wide pass.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Callable,
    ContextManager,
    Dict,
    FrozenSet,
    Iterator,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
)

from portcheck.app_defaults import overridden_defaults
from portcheck.discover import Candidate, discover
from portcheck.model import FileError, FileResult, ScanResult, Target
from portcheck.processes import process_context
from portcheck.project_cache import CachedSources
from portcheck.project_index import TEXT_FACTS, ProjectPass, project_findings
from portcheck.reach import (
    backup_copies,
    holds_whole_project,
    is_application,
    is_whole_repository,
    switched_off,
    unreached,
    unused_definitions,
)
from portcheck.scanner import (
    MAX_BYTES,
    Settings,
    display_path,
    prepare,
    scan_bytes_targets,
    scan_one_targets,
    settings_from,
)
from portcheck.unread_settings import unread_constants, unread_settings
from portcheck.vendored import vendored_folders

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


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


Group = Tuple[Settings, ...]  # settings that differ only in their target
KeyedGroup = Tuple[Tuple[FileResult, ...], Optional["FileKey"]]


def scan_keyed(candidate: Candidate, group: Group, display: str) -> KeyedGroup:
    """Scan one file for every target of `group` and say which bytes the results belong to (None when
    the file could not be read)."""
    from portcheck.cache import FileKey, content_digest

    try:
        st = os.stat(candidate.path)
        if st.st_size > MAX_BYTES:
            return scan_one_targets(candidate, group, display), None
        with open(candidate.path, "rb") as handle:
            data = handle.read()
    except OSError:
        # scan_one_targets turns every read failure into the right FileError; such results are not cached.
        return scan_one_targets(candidate, group, display), None
    # The stat is taken before the read: if the file changes in between, the next run sees a new
    # stat, hashes the bytes, and finds the digest of what was really scanned.
    return scan_bytes_targets(data, display, candidate.kind, group), FileKey(
        st.st_size, st.st_mtime_ns, content_digest(data)
    )


def scan_plain(candidate: Candidate, group: Group, display: str) -> KeyedGroup:
    return scan_one_targets(candidate, group, display), None


def _work_keyed(args) -> KeyedGroup:
    return scan_keyed(*args)


def _work_plain(args) -> KeyedGroup:
    return scan_plain(*args)


def _prepare(group: Group) -> None:
    prepare(group if len(group) > 1 else group[0])


def _init_worker(group: Group) -> None:
    _prepare(group)


def _no_advance(n: int = 1) -> None:
    return None


@contextmanager
def _no_progress(total: int) -> Iterator[Advance]:
    yield _no_advance


def _scan_many(work: Sequence[tuple], keyed: bool, jobs: int) -> Iterator[KeyedGroup]:
    if jobs > 1 and len(work) >= POOL_THRESHOLD:
        # Forked workers inherit the compiled catalog; other start methods build it once per worker.
        _prepare(work[0][1])
        ctx = process_context()
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
    return run_targets(candidates, displays, (settings,), jobs=jobs, cache=cache, progress=progress)[0]


def run_targets(
    candidates: Sequence[Candidate],
    displays: Sequence[str],
    group: Group,
    jobs: Optional[int] = None,
    cache=None,
    progress: Optional[ProgressFactory] = None,
    digests: Optional[Dict[str, bytes]] = None,
) -> List[List[FileResult]]:
    """`run_all` for settings that differ only in their target: per target, the results in input order.
    Each target keeps its own cache bucket (a later one-target scan reuses it); a file missing from
    any of them is scanned once for all. `digests`, when given, receives the digest of each file's
    bytes as read, by absolute path (with a cache only)."""
    jobs = jobs or default_jobs()
    buckets = [cache.bucket(s) for s in group] if cache is not None else []
    results: List[List[Optional[FileResult]]] = [[None] * len(candidates) for _ in group]
    todo: List[int] = []
    for i, (cand, display) in enumerate(zip(candidates, displays)):
        hits = []
        for bucket in buckets:
            hit = bucket.lookup(cand.path, cand.kind, display)
            if hit is None:
                break
            hits.append(hit)
        if buckets and len(hits) == len(buckets):
            for per_target, hit in zip(results, hits):
                per_target[i] = hit
        else:
            todo.append(i)
    work = [(candidates[i], tuple(group), displays[i]) for i in todo]
    with (progress or _no_progress)(len(todo)) as advance:
        for i, (found, key) in zip(todo, _scan_many(work, bool(buckets), jobs)):
            for per_target, bucket, result in zip(results, buckets or [None] * len(group), found):
                per_target[i] = result
                if bucket is not None and key is not None:
                    bucket.store(candidates[i].path, candidates[i].kind, key, result)
            advance(1)
    for bucket in buckets:
        bucket.save()
    if digests is not None and buckets:
        digests.update(buckets[0].digests)
    return [[r for r in per_target if r is not None] for per_target in results]


# Files whose text may name a Python function or class of the project (a notebook's imports, a config's
# `_target_`, a script's `python -c`): read for what an application uses (portcheck.reach).
_NAMING_KINDS = frozenset({"notebook", "config", "shell", "dotenv", "pyproject"})
# Rules that report a CUDA device string, as a parameter's default too (`def load(device="cuda")`), and a CUDA
# check that picks one (CLIP's `load(name, device="cuda" if torch.cuda.is_available() else "cpu")`).
_DEFAULT_CODES = frozenset({"DEV001", "DEV005", "DEV013"})
# Rules that report a backend named in a setting (`"dist_backend": "nccl"`).
_SETTING_CODES = frozenset({"DIST001"})
# Rules that report a device named or checked in a value (`device = torch.device("cuda" if ... else "cpu")`).
_CONSTANT_CODES = frozenset({"DEV001", "DEV005"})


# Config files the scan does not read for findings but whose names a run may look up (`model_class =
# model.implicit_differentiable_renderer.IDRNetwork` in lioryariv/idr's HOCON `.conf` files, gin bindings,
# JSON and TOML configs): their text names modules and definitions too.
_OTHER_CONFIGS = frozenset({".conf", ".hocon", ".gin", ".json", ".jsonnet", ".cfg", ".ini", ".toml"})
_MAX_OTHER_CONFIG_BYTES = 256 * 1024  # (a JSON file larger than this is data: annotations, vocabularies)
_MAX_OTHER_CONFIGS = 2000
# A library's documentation: the names its README and docs spell are what its users import (SAM2-Plus's
# `from sam2.build_sam import build_sam2_plus`).
_DOCS = frozenset({".md", ".rst"})


def _finding_lines(
    per_target: Sequence[Sequence[FileResult]], codes: Optional[FrozenSet[str]] = None
) -> Dict[str, Set[int]]:
    """Per Python file, the lines of its findings of `codes` (of any code without), for any target."""
    out: Dict[str, Set[int]] = {}
    for found in per_target:
        for r in found:
            if r.kind == "python":
                for f in r.findings:
                    if codes is None or f.code in codes:
                        out.setdefault(r.path, set()).add(f.line)
    return out


def _naming_texts(
    candidates: Sequence[Candidate], paths: Sequence[Path] = (), docs: bool = False
) -> Dict[str, List[str]]:
    """The texts of the scan's files of `_NAMING_KINDS`, by kind (an unreadable one, or one the scan skips
    as too large, counts as empty), and under "other-config" those of the other config files below the
    scanned folders (`_OTHER_CONFIGS`, hidden folders left out); with `docs`, under "doc" those of its
    documentation (`_DOCS`: a library's README names what its users import)."""
    out: Dict[str, List[str]] = {}
    for candidate in candidates:
        if candidate.kind in _NAMING_KINDS:
            try:
                if candidate.path.stat().st_size > MAX_BYTES:
                    continue
                out.setdefault(candidate.kind, []).append(candidate.path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
    found: List[str] = []
    documents: List[str] = []
    for root in paths:
        if not root.is_dir():
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__"))
            for name in sorted(files):
                suffix = os.path.splitext(name)[1].lower()
                into = found if suffix in _OTHER_CONFIGS else documents if docs and suffix in _DOCS else None
                if into is None or len(into) >= _MAX_OTHER_CONFIGS:
                    continue
                path = os.path.join(folder, name)
                try:
                    if os.path.getsize(path) <= _MAX_OTHER_CONFIG_BYTES:
                        with open(path, encoding="utf-8", errors="replace") as handle:
                            into.append(handle.read())
                except OSError:
                    continue
    if found:
        out["other-config"] = found
    if documents:
        out["doc"] = documents
    return out


def scan_paths(
    paths: Sequence[Path],
    config,
    target: Optional[str] = None,
    cwd: Optional[Path] = None,
    jobs: Optional[int] = None,
    cache=None,
    progress=None,
) -> ScanResult:
    """Discover and scan `paths` with `config` (see portcheck.config.Config)."""
    settings = settings_from(config, target)
    return scan_paths_targets(paths, config, (settings.target,), cwd=cwd, jobs=jobs, cache=cache, progress=progress)[0]


def scan_paths_targets(
    paths: Sequence[Path],
    config,
    targets: Sequence[str],
    cwd: Optional[Path] = None,
    jobs: Optional[int] = None,
    cache=None,
    progress=None,
) -> Tuple[ScanResult, ...]:
    """One scan for several targets: files are read, parsed and matched once, and each target's
    findings come from the same matches (its severities, without its `off` rules)."""
    cwd = cwd or Path.cwd()
    root = config.root or cwd
    excludes = tuple(config.exclude) + tuple(config.extend_exclude)
    candidates, problems = discover(paths, root, excludes, config.respect_gitignore)
    roots = tuple(sorted({display_path(p, cwd) for p in paths if p.is_dir()} - {".", ""}))
    group = tuple(replace(settings_from(config, t), roots=roots) for t in targets)
    unreadable: List[FileResult] = [
        FileResult(
            path=display_path(p.path, cwd),
            error=FileError(display_path(p.path, cwd), p.message, kind="read"),
            kind="unknown",
        )
        for p in problems
    ]
    displays = [display_path(c.path, cwd) for c in candidates]
    digests: Dict[str, bytes] = {}
    per_target = run_targets(candidates, displays, group, jobs=jobs, cache=cache, progress=progress, digests=digests)
    # The same for every target; with a cache, files whose bytes the scan found unchanged are neither
    # read nor summarized again.
    usable = cache if cache is not None and not cache.refused else None
    if usable is not None:
        shared = ProjectPass.of(CachedSources.read(candidates, displays, usable, digests))
    else:
        shared = ProjectPass.read(candidates, displays)
    shared.unreached = backup_copies(shared.sources)  # in a library too: the name and its sibling say so
    application = is_application(paths)
    if application or is_whole_repository(paths):
        naming = _naming_texts(candidates, paths, docs=not application)
        texts = [text for kind, kind_texts in naming.items() if kind != "doc" for text in kind_texts]
        with_findings = sorted({r.path for found in per_target for r in found if r.kind == "python" and r.findings})
        if with_findings:
            # every file's text facts are asked below: computed in the scan's processes first
            shared.sources.prefetch(tuple(TEXT_FACTS), jobs or default_jobs(), POOL_THRESHOLD)
        if application:
            whole = holds_whole_project(paths)
            found = unreached(shared.sources, naming.get("notebook", ()), texts, whole=whole)
            shared.unreached = {**shared.unreached, **found}
        # (a library scanned whole: what no `__init__.py` or `__all__` exports and nothing in it uses)
        library = not application
        shared.unused = unused_definitions(
            shared.sources, with_findings, shared.unreached, [*texts, *naming.get("doc", ())], library=library
        )
        # `def load(path, device="cuda")` that every call gives a device: the default never runs (in a
        # library, only for a name its packages do not export)
        overridden = overridden_defaults(
            shared.sources, _finding_lines(per_target, _DEFAULT_CODES), texts, library=not application
        )
        # `"dist_backend": "nccl"` in a dict literal nothing reads (HiFi-GAN's vocoder config in AudioLDM2)
        unread = unread_settings(shared.sources, _finding_lines(per_target, _SETTING_CODES), texts)
        # `device = torch.device("cuda" if ... else "cpu")` at module level that nothing reads
        for path, spans in unread_constants(shared.sources, _finding_lines(per_target, _CONSTANT_CODES), texts).items():
            unread[path] = [*unread.get(path, []), *spans]
        # `if self.cuda_sync: torch.cuda.synchronize()` with `cuda_sync=False` that nothing turns on
        off = switched_off(shared.sources, _finding_lines(per_target), texts) if application else {}
        shared.unused = {
            path: [*shared.unused.get(path, ()), *overridden.get(path, []), *unread.get(path, []), *off.get(path, [])]
            for path in set(shared.unused) | set(overridden) | set(unread) | set(off)
        }
    shared.vendored = vendored_folders(zip(displays, (str(c.path) for c in candidates)), roots)
    shared.whole_folders = all(p.is_dir() for p in paths)
    out = []
    for settings, results in zip(group, per_target):
        merged = project_findings(results, candidates, displays, settings, shared)
        files = sorted(unreadable + merged, key=lambda r: r.path)
        out.append(ScanResult(target=Target(settings.target), files=tuple(files)))
    shared.save()
    return tuple(out)
