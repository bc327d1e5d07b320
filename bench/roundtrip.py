"""Real-corpus round trip: scan and `fix` every Python file of pinned PyPI wheels (on a copy).

    python bench/roundtrip.py                     # transformers 5.23.0 and torch 2.13.0 (built on first use)
    python bench/roundtrip.py --reuse-transformers  # take transformers from /tmp/corpus/tf/transformers if it is there
    python bench/roundtrip.py --corpus mine=path/to/src --jobs 2 --limit 200

For each file: the scan must not crash, `fix` must not crash, a file that compiled before must still
compile after, and a second fix must change nothing. Prints the counts per corpus, writes every
file's outcome to bench/results/roundtrip-<corpus>.json, and exits 1 on any crash, compile
regression or non-idempotent file.

Files are worked on by child processes that report one line per file, so a crash that kills the
interpreter (a native parser overflowing its stack, say) is counted against its file and the run
goes on with the next one.
"""

from __future__ import annotations

import argparse
import json
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:  # run as a script: make `bench` and `portcheck` importable
    sys.path.insert(0, str(REPO))

SHARED_TRANSFORMERS = Path("/tmp/corpus/tf/transformers")
START, DONE = "start\t", "done\t"


@dataclass
class Outcome:
    """What happened to one file."""

    path: str  # relative to the corpus root
    compiled_before: bool = False
    scan_error: Optional[str] = None  # the scan's one-line reason, for a file it could not read
    findings: int = 0
    changed: bool = False
    compiled_after: Optional[bool] = None
    idempotent: Optional[bool] = None
    crash: Optional[str] = None  # where and what, for an exception or a dead worker
    seconds: float = 0.0

    @property
    def regression(self) -> bool:
        return self.compiled_before and self.compiled_after is False


@dataclass
class Totals:
    corpus: str
    files: int = 0
    files_with_findings: int = 0
    findings: int = 0
    files_changed: int = 0
    crashes: int = 0
    compile_regressions: int = 0
    non_idempotent: int = 0
    did_not_compile_before: int = 0
    scan_errors: int = 0
    seconds: float = 0.0
    examples: Dict[str, List[str]] = field(default_factory=dict)

    def add(self, o: Outcome) -> None:
        self.files += 1
        self.findings += o.findings
        self.files_with_findings += o.findings > 0
        self.files_changed += o.changed
        self.did_not_compile_before += not o.compiled_before
        self.scan_errors += o.scan_error is not None
        for key, bad in (
            ("crashes", o.crash is not None),
            ("compile_regressions", o.regression),
            ("non_idempotent", o.idempotent is False),
        ):
            if bad:
                setattr(self, key, getattr(self, key) + 1)
                self.examples.setdefault(key, []).append(o.path + (f": {o.crash}" if key == "crashes" else ""))

    @property
    def failed(self) -> bool:
        return bool(self.crashes or self.compile_regressions or self.non_idempotent)

    def line(self) -> str:
        return (
            f"{self.corpus}: {self.files} files, {self.files_with_findings} with findings ({self.findings} findings), "
            f"{self.files_changed} changed by fix, {self.crashes} crashes, "
            f"{self.compile_regressions} compile regressions, "
            f"{self.non_idempotent} non-idempotent ({self.did_not_compile_before} did not compile before, "
            f"{self.scan_errors} scan errors; {self.seconds:.0f} s)"
        )


# --- one file ---------------------------------------------------------------------------------


def compiles(data: bytes, name: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(data, name, "exec", dont_inherit=True)
            return True
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return False


def fix_file(path: Path, target: str, unsafe: bool) -> None:
    """Fix one file in place through the public API."""
    from portcheck.api import fix

    fix([path], target=target, unsafe=unsafe, write=True)


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1] if frames else None
    at = f" at {Path(last.filename).name}:{last.lineno}" if last else ""
    return f"{type(exc).__name__}: {str(exc)[:200]}{at}".replace("\n", " ")


def round_trip(path: Path, rel: str, target: str = "generic", unsafe: bool = False) -> Outcome:
    """Scan `path`, fix it in place, fix it again; `path` must be a copy."""
    from portcheck.filetypes import classify
    from portcheck.scanner import Settings, scan_bytes

    started = time.perf_counter()
    out = Outcome(path=rel)
    original = path.read_bytes()
    out.compiled_before = compiles(original, rel)
    scan_target = "generic" if target == "cpu" else target
    try:
        result = scan_bytes(original, rel, classify(path.name) or "python", Settings(target=scan_target))
        out.findings = len(result.findings)
        out.scan_error = result.error.message if result.error else None
    except Exception as exc:  # noqa: BLE001 - counting crashes is the point
        out.crash = "scan: " + _where(exc)
    try:
        fix_file(path, target, unsafe)
        once = path.read_bytes()
        out.changed = once != original
        out.compiled_after = compiles(once, rel) if out.changed else out.compiled_before
        if out.changed:
            fix_file(path, target, unsafe)
            out.idempotent = path.read_bytes() == once
        else:
            out.idempotent = True
    except Exception as exc:  # noqa: BLE001
        out.crash = (out.crash + "; " if out.crash else "") + "fix: " + _where(exc)
    out.seconds = time.perf_counter() - started
    return out


# --- a worker: file paths in on stdin, one result line per file out --------------------------


def worker(root: Path, target: str, unsafe: bool) -> None:
    for raw in sys.stdin:
        rel = raw.rstrip("\n")
        if not rel:
            continue
        print(START + rel, flush=True)
        outcome = round_trip(root / rel, rel, target, unsafe)
        print(DONE + json.dumps(asdict(outcome)), flush=True)


def run_shard(root: Path, rels: Sequence[str], target: str, unsafe: bool) -> Iterable[Outcome]:
    """Round-trip `rels` in a child process, restarting it past any file that kills it."""
    todo = list(rels)
    while todo:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(root), "--target", target]
        if unsafe:
            cmd.append("--unsafe-fixes")
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=root)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(r + "\n" for r in todo))
        proc.stdin.close()
        started: Optional[str] = None
        finished = set()
        for line in proc.stdout:
            if line.startswith(START):
                started = line[len(START) :].rstrip("\n")
            elif line.startswith(DONE):
                outcome = Outcome(**json.loads(line[len(DONE) :]))
                finished.add(outcome.path)
                started = None
                yield outcome
        code = proc.wait()
        todo = [r for r in todo if r not in finished]
        if started is not None:
            todo.remove(started)
            yield Outcome(
                path=started,
                compiled_before=compiles((root / started).read_bytes(), started),
                crash=f"the worker process died (exit code {code})",
            )
        elif todo:
            raise RuntimeError(f"worker exited with code {code} before taking {todo[0]}")


def python_files(top: Path) -> List[str]:
    return sorted(p.relative_to(top).as_posix() for p in top.rglob("*.py") if p.is_file() and not p.is_symlink())


def copy_tree(src: Path, rels: Sequence[str], dest: Path) -> None:
    for rel in rels:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, target)


def run_corpus(
    name: str, src: Path, target: str, unsafe: bool, jobs: int, limit: Optional[int], progress: bool = True
) -> Tuple[Totals, List[Outcome]]:
    rels = python_files(src)
    if limit:
        step = max(1, len(rels) // limit)
        rels = rels[::step][:limit]
    totals = Totals(corpus=name)
    outcomes: List[Outcome] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"roundtrip-{name}-") as tmp:
        work = Path(tmp) / "src"
        copy_tree(src, rels, work)
        # The copy is its own project: no config above it applies.
        (work / "pyproject.toml").write_text("[tool.portcheck]\nrespect-gitignore = false\n")
        shards = [rels[i::jobs] for i in range(jobs)]
        iters = [iter(run_shard(work, shard, target, unsafe)) for shard in shards if shard]
        # Every child runs at once; their results meet in one queue.
        results: "queue.Queue[Optional[Outcome]]" = queue.Queue()

        def drain(it: Iterable[Outcome]) -> None:
            try:
                for o in it:
                    results.put(o)
            finally:
                results.put(None)

        threads = [threading.Thread(target=drain, args=(it,), daemon=True) for it in iters]
        for t in threads:
            t.start()
        running = len(threads)
        while running:
            o = results.get()
            if o is None:
                running -= 1
                continue
            outcomes.append(o)
            totals.add(o)
            if progress and sys.stderr.isatty():
                print(f"\r{name}: {totals.files}/{len(rels)}", end="", file=sys.stderr, flush=True)
        if progress and sys.stderr.isatty():
            print(file=sys.stderr)
    totals.seconds = time.perf_counter() - started
    outcomes.sort(key=lambda o: o.path)
    return totals, outcomes


def corpora_to_run(args) -> List[Tuple[str, Path]]:
    from bench import corpora

    out: List[Tuple[str, Path]] = []
    for spec in args.corpus:
        name, _, path = spec.partition("=")
        if not path:
            name, path = Path(spec).name, spec
        out.append((name, Path(path)))
    if args.corpus:
        return out
    base = HERE / "corpora"
    if args.reuse_transformers and SHARED_TRANSFORMERS.is_dir():
        out.append((corpora.TRANSFORMERS.slug, SHARED_TRANSFORMERS))
    else:
        built = corpora.wheel_corpus(corpora.TRANSFORMERS, base)
        out.append((corpora.TRANSFORMERS.slug, built.paths[0]))
    if not args.no_torch:
        built = corpora.wheel_corpus(corpora.TORCH, base)
        out.append((corpora.TORCH.slug, built.paths[0]))
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a folder of Python sources (repeatable); replaces the default corpora",
    )
    parser.add_argument(
        "--reuse-transformers",
        action="store_true",
        help=f"use {SHARED_TRANSFORMERS} instead of building the transformers corpus",
    )
    parser.add_argument("--no-torch", action="store_true", help="skip the torch corpus")
    parser.add_argument("--target", default="generic", choices=["generic", "cpu", "neuron", "xla"])
    parser.add_argument("--unsafe-fixes", action="store_true")
    parser.add_argument("--jobs", "-j", type=int, default=2)
    parser.add_argument("--limit", type=int, help="only this many files per corpus, evenly spread")
    parser.add_argument("--worker", metavar="ROOT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(Path(args.worker), args.target, args.unsafe_fixes)
        return 0
    failed = False
    results_dir = HERE / "results"
    results_dir.mkdir(exist_ok=True)
    for name, path in corpora_to_run(args):
        totals, outcomes = run_corpus(name, path, args.target, args.unsafe_fixes, max(1, args.jobs), args.limit)
        print(totals.line())
        for key, paths in totals.examples.items():
            for p in paths[:10]:
                print(f"  {key}: {p}")
        report = {
            "totals": asdict(totals),
            "target": args.target,
            "unsafe_fixes": args.unsafe_fixes,
            "files": [asdict(o) for o in outcomes],
        }
        (results_dir / f"roundtrip-{name}.json").write_text(json.dumps(report, indent=1) + "\n")
        failed |= totals.failed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
