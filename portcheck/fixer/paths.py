"""Fix files and folders: discover them like `scan` does, fix each Python file and notebook, and write
the result back (or only report it, for --diff and --check)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Tuple

from portcheck import limits
from portcheck.catalog import Catalog, load_catalog
from portcheck.config import Config, load_config
from portcheck.discover import discover
from portcheck.escape import neutral
from portcheck.fixer import files
from portcheck.fixer.engine import FixError, FixOptions, TextFix, attempted, fix_text, not_attempted
from portcheck.fixer.findings import PerFileIgnores, collect, prepare
from portcheck.fixer.notebook import fix_notebook
from portcheck.fixer.outcome import FileFix, FixReport, Left
from portcheck.model import Finding, Rule
from portcheck.scanner import display_path
from portcheck.source import DecodeError, SourceText, decode_python, decode_text, looks_binary

FIXABLE_KINDS = ("python", "notebook")


def options_from(config: Config, target: str = "generic", unsafe: bool = False) -> FixOptions:
    return FixOptions(target=target, unsafe=unsafe, min_torch=config.min_torch, literal_device=config.literal_device)


def fix_paths(
    paths: Sequence[Path],
    target: str = "generic",
    unsafe: bool = False,
    write: bool = True,
    *,
    config: Optional[Config] = None,
    config_file: Optional[Path] = None,
    catalog: Optional[Catalog] = None,
    cwd: Optional[Path] = None,
    jobs: Optional[int] = None,
) -> FixReport:
    """Fix `paths` for `target`. `config` (else the file found from the first path) supplies select,
    ignore, excludes, per-file ignores, `min-torch` and `literal-device`. `jobs`: worker processes
    (default: all cores; small inputs are fixed inline)."""
    paths = [Path(p) for p in paths] or [Path(".")]
    cwd = cwd or Path.cwd()
    if config is None:
        config = load_config(paths[0], config_file)
    options = options_from(config, target, unsafe)
    # (the scan runs the shipped catalog: with another one, each file's own findings are fixed)
    shipped = catalog is None or catalog is load_catalog()
    catalog = catalog or load_catalog()
    prepared = prepare(catalog, options.scan_target, config.select, config.ignore)
    rules = {entry.rule.code: entry.rule for entry in catalog.rules}
    per_file = tuple(sorted((glob, tuple(codes)) for glob, codes in dict(config.per_file_ignores).items()))
    root = (config.root or cwd).resolve()
    # Each folder argument bounds the links fix follows (discover's `contain`), never the working folder.
    candidates, problems = discover(
        paths, root, tuple(config.exclude) + tuple(config.extend_exclude), config.respect_gitignore, contain=True
    )
    # Names are shown with control characters made visible: they reach the terminal in the summary.
    results: List[FileFix] = [
        FileFix(neutral(display_path(p.path, cwd)), kind="unknown", error=neutral(p.message)) for p in problems
    ]
    work = [
        (c.path, neutral(display_path(c.path, cwd)), c.kind, c.boundary or files.boundary_for(c.path, config.root))
        for c in candidates
    ]
    reported = _reported(paths, config, options, cwd, jobs) if shipped and candidates else None
    context = _Context(prepared, rules, options, write, per_file, reported)
    results.extend(_fix_many(work, context, jobs))
    results.sort(key=lambda r: r.path)
    return FixReport(target=target, write=write, files=tuple(results))


@dataclass(frozen=True)
class _Context:
    """What fixing any one file needs, the same for every file of a run."""

    prepared: object
    rules: Mapping[str, Rule]
    options: FixOptions
    write: bool
    per_file: PerFileIgnores
    # per file shown, the findings `scan` reports there: (cell, line, column, code); None: not asked
    reported: Optional[Mapping[str, FrozenSet[Reported]]] = None


Reported = Tuple[Optional[int], int, int, str]


def _reported(
    paths: Sequence[Path], config: Config, options: FixOptions, cwd: Path, jobs: Optional[int]
) -> Dict[str, FrozenSet[Reported]]:
    """What `scan` reports in each file, the project-wide pass included: a finding it drops (a test of the
    project's CUDA kernels, a vendored copy another finding stands for, code nothing runs) is not fixed
    either, so `fix` does what the scan promised and no more."""
    from portcheck.runner import scan_paths

    result = scan_paths(list(paths), config, target=options.scan_target.value, cwd=cwd, jobs=jobs)
    return {
        neutral(file.path): frozenset((f.cell, f.line, f.column, f.code) for f in file.findings)
        for file in result.files
        if file.error is None  # (a file the scan could not read is tried, and says why it is not fixed)
    }


_WORKER_CONTEXT: Optional[_Context] = None  # set before forking: workers inherit it, nothing is pickled


Work = Tuple[Path, str, str, Path]  # path, name shown, file kind, the folder writes must stay inside


def _fix_one(item: Work, context: _Context) -> FileFix:
    path, shown, kind, boundary = item
    return fix_file(
        path,
        shown,
        kind,
        context.prepared,
        context.rules,
        context.options,
        write=context.write,
        root=boundary,
        per_file=context.per_file,
        reported=None if context.reported is None else context.reported.get(shown),
    )


def _fix_in_worker(item: Work) -> FileFix:
    assert _WORKER_CONTEXT is not None
    return _fix_one(item, _WORKER_CONTEXT)


def _fix_many(work: Sequence[Work], context: _Context, jobs: Optional[int]) -> Iterator[FileFix]:
    """Fix each file, in a process pool for large inputs (the scan's rules: portcheck.runner), inline
    otherwise. Each file is read, fixed and written by exactly one process; results come back in order.
    Workers are forked, so they share the compiled rules; where fork is not available, inline."""
    import sys

    from portcheck import runner

    jobs = jobs or runner.default_jobs()
    if jobs > 1 and len(work) >= runner.POOL_THRESHOLD and sys.platform == "linux":
        import multiprocessing

        global _WORKER_CONTEXT
        _WORKER_CONTEXT = context
        try:
            workers = min(jobs, len(work))
            chunk = max(1, min(runner.CHUNK_SIZE, len(work) // (workers * runner.TASKS_PER_WORKER)))
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                yield from pool.imap(_fix_in_worker, work, chunksize=chunk)
        finally:
            _WORKER_CONTEXT = None
        return
    for item in work:
        yield _fix_one(item, context)


def _decode(data: bytes, kind: str) -> SourceText:
    if looks_binary(data):
        raise FixError("binary file (contains null bytes)")
    try:
        return decode_python(data) if kind == "python" else decode_text(data)
    except DecodeError as exc:
        raise FixError(str(exc)) from None


def _left(
    findings: Sequence[Finding], rules: Mapping[str, Rule], options: FixOptions, skipped: Mapping[str, str]
) -> List[Left]:
    out = []
    for f in findings:
        reason = not_attempted(f, rules, options) or skipped.get(f.code, "the fix did not apply here")
        out.append(Left(f, reason))
    return out


def fix_file(
    path: Path,
    shown: str,
    kind: str,
    prepared,
    rules: Mapping[str, Rule],
    options: FixOptions,
    *,
    write: bool,
    root: Path,
    per_file: PerFileIgnores = (),
    reported: Optional[FrozenSet[Reported]] = None,
) -> FileFix:
    """Fix one file; never raises for bad input nor for a fault in rewriting it (the reason lands in
    `FileFix.error` and the file is left as it was). `reported`: the findings the scan reports in the file
    (see `_reported`); only those are fixed or left."""
    target = options.scan_target
    findings: List[Finding] = []
    if reported is not None and not reported:
        return FileFix(shown, kind)  # the scan reports nothing here: nothing to fix, nothing left
    try:
        original = files.read(path, kind)
        source = _decode(original, kind)
        text = source.text
        findings, problem = collect(text, shown, kind, prepared, target, per_file)
        if problem:
            raise FixError(problem)
        # (the limit counts every finding of the file, as the scan's own limit does)
        over = limits.too_many_to_fix(len(attempted(findings, rules, options)))
        dropped: Counter = Counter()  # the file's findings the scan does not report, by where they are
        if reported is not None:
            dropped.update(_where(f) for f in findings if (f.cell, f.line, f.column, f.code) not in reported)
            findings = [f for f in findings if (f.cell, f.line, f.column, f.code) in reported]
        if kind not in FIXABLE_KINDS or not (attempted(findings, rules, options) or over):
            return FileFix(shown, kind, left=tuple(_left(findings, rules, options, {})))
        over = over or (limits.too_big_to_fix(text) if kind == "python" else None)
        if over:
            raise FixError(over)
        result: TextFix
        if kind == "notebook":
            result = fix_notebook(text, shown, findings, rules, options)
        else:
            result = fix_text(text, findings, rules, options, path=shown)
        skipped: Dict[str, str] = {}
        for finding, reason in result.skipped:
            skipped.setdefault(finding.code, reason)
        data = files.encode(source, result.text)
        after = findings
        if result.text != text:
            after, problem = collect(result.text, shown, kind, prepared, target, per_file)
            if problem:
                raise FixError(f"the fixed code would not analyse ({problem}); the file was left unchanged")
            after = _without(after, dropped)
        written = False
        if write and result.text != text:
            files.write(files.write_target(path, root), data, original)
            written = True
        changed = result.text != text  # unchanged files keep no copy of their text
        return FileFix(
            shown,
            kind,
            applied=result.applied,
            left=tuple(_left(after, rules, options, skipped)),
            old=text if changed else "",
            new=result.text if changed else "",
            written=written,
        )
    except FixError as exc:
        return FileFix(shown, kind, left=tuple(Left(f, f"file not fixed: {exc}") for f in findings), error=str(exc))
    except RecursionError:
        return FileFix(
            shown, kind, left=tuple(Left(f, "file not fixed") for f in findings), error="too deeply nested to rewrite"
        )
    except Exception as exc:  # a fault on one file must not stop the run; KeyboardInterrupt still does
        reason = f"could not be fixed: {describe(exc)}"
        return FileFix(shown, kind, left=tuple(Left(f, reason) for f in findings), error=reason)


def _where(finding: Finding) -> Tuple[Optional[int], str, str]:
    """A finding by its cell, rule and line text: what stays the same when fixes elsewhere move it."""
    return finding.cell, finding.code, finding.source_line.strip()


def _without(findings: Sequence[Finding], dropped: Counter) -> List[Finding]:
    """`findings` less those `dropped` counts (the fixed file's findings the scan did not report before)."""
    left = Counter(dropped)
    out = []
    for f in findings:
        if left[_where(f)] > 0:
            left[_where(f)] -= 1
            continue
        out.append(f)
    return out


def describe(exc: BaseException, limit: int = 200) -> str:
    """`exc` as one printable line of at most `limit` characters."""
    message = " ".join(line.strip() for line in str(exc).splitlines() if line.strip()) or "no details"
    text = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in f"{type(exc).__name__}: {message}")
    return text if len(text) <= limit else text[: limit - 3] + "..."
