"""Benchmark portcheck against TorchFix, Fixit and ruff on corpora built from pinned PyPI wheels.

    python bench/run.py            # the full run (about 5 minutes on 2 cores once corpora and venvs exist)
    python bench/run.py --quick    # a smoke run: small sample, one run each, no torch corpus

Prints the tables and writes them as JSON to bench/results/. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run as a script: make `bench` importable
    sys.path.insert(0, str(HERE.parent))

from bench import corpora, machine, peers  # noqa: E402
from bench.measure import Measurement, measure  # noqa: E402
from bench.results import Report, Row, Target, ratios, scaling, write_json  # noqa: E402
from bench.table import render  # noqa: E402

ONE_FILE = "transformers/modeling_utils.py"  # a large real module (5,300 lines) that has findings
# Measured commands run as an installed tool runs: Python may cache bytecode (some environments
# turn that off, which would add the compilation of every imported module to each start).
ENV = {"NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": None}
# A portcheck run during which other processes kept more cores than this busy is run again (at
# most MAX_DISCARDS times per row): on a shared machine a neighbour's job would skew wall time.
BUSY_CORES = 0.25
MAX_DISCARDS = 3
# Every target of a cold scan; `all` scores the three in one run.
SCAN_TARGETS = ("generic", "neuron", "xla", "all")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def portcheck_argv() -> List[str]:
    """The installed console script next to this interpreter, as a user runs it; else `python -m portcheck`."""
    script = Path(sys.executable).parent / "portcheck"
    return [str(script)] if script.exists() else [sys.executable, "-m", "portcheck"]


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.logs = Path(args.results) / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.pc = portcheck_argv()
        self.rows: List[Row] = []
        self.notes: List[str] = []

    # -- running ------------------------------------------------------------------------------
    def run(self, key: str, label: str, group: str, argv: Sequence[str], corpus: corpora.Corpus, repeats: int,
            ok_codes=(0, 1), timeout_s: float = 600, json_out: Optional[Path] = None, marker: Optional[str] = None,
            cwd: Optional[Path] = None, retry_busy: bool = True) -> Row:
        runs: List[Measurement] = []
        discarded = 0
        out = self.logs / f"{key}.out"
        log(f"{label}: {repeats} run(s) on {corpus.files:,} files")
        if json_out is not None:
            json_out.unlink(missing_ok=True)  # a report left by an earlier run must not be counted
        while len(runs) < repeats:
            m = measure(argv, cwd=cwd, stdout=out, timeout_s=timeout_s, env=ENV)
            if m.returncode not in ok_codes:
                tail = out.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
                row = Row(key, label, group, tuple(argv), corpus.files, corpus.bytes, tuple(runs + [m]), "failed",
                          f"exit {m.returncode}: {' / '.join(tail)}"[:300])
                self.rows.append(row)
                log(f"  failed: {row.note}")
                return row
            log(f"  wall {m.wall_s:.3f} s, CPU {m.cpu_s:.3f} s, peak RSS {m.peak_rss_bytes / 1e6:.0f} MB, "
                f"others kept {m.others_cores:.2f} cores busy")
            if retry_busy and m.others_cores > self.args.busy_cores and discarded < MAX_DISCARDS:
                discarded += 1
                log("  discarded: the machine was busy; running again")
                time.sleep(2)
                continue
            runs.append(m)
        findings = None
        if json_out is not None and json_out.is_file():
            findings = len(json.loads(json_out.read_text(encoding="utf-8")).get("findings", []))
        elif marker is not None:
            pattern = re.compile(marker)
            text = out.read_text(encoding="utf-8", errors="replace")
            findings = sum(1 for line in text.splitlines() if pattern.match(line))
        note = f"{discarded} busy run(s) discarded" if discarded else ""
        row = Row(key, label, group, tuple(argv), corpus.files, corpus.bytes, tuple(runs), "ok", note, findings)
        self.rows.append(row)
        return row

    def unavailable(self, key: str, label: str, group: str, corpus: corpora.Corpus, why: str) -> Row:
        log(f"{label}: unavailable ({why})")
        row = Row(key, label, group, (), corpus.files, corpus.bytes, (), "unavailable", why)
        self.rows.append(row)
        return row

    def scan_argv(self, corpus: corpora.Corpus, key: str, cache: bool, target: Optional[str] = None) -> List[str]:
        argv = self.pc + ["scan", *(str(p) for p in corpus.paths), "-q", "-j", str(self.args.jobs),
                          "--output-format", "json", "-o", str(self.logs / f"{key}.json")]
        if target is not None:
            argv += ["--target", target]
        return argv + ([] if cache else ["--no-cache"])

    def cold(
        self, key: str, label: str, group: str, corpus: corpora.Corpus, repeats: int, target: Optional[str] = None
    ) -> Row:
        return self.run(
            key,
            label,
            group,
            self.scan_argv(corpus, key, cache=False, target=target),
            corpus,
            repeats,
            json_out=self.logs / f"{key}.json",
        )

    # -- the rows ------------------------------------------------------------------------------
    def warm(self, corpus: corpora.Corpus, cold: Row) -> Row:
        key, label = "portcheck.warm.transformers", "portcheck scan, warm (cache)"
        if not self._has_module("portcheck.cache"):
            return self.unavailable(key, label, "portcheck", corpus, "portcheck.cache is not installed")
        shutil.rmtree(corpus.root / ".portcheck_cache", ignore_errors=True)
        argv = self.scan_argv(corpus, key, cache=True)
        log("priming the cache (one untimed run)")
        measure(argv, stdout=self.logs / f"{key}.prime.out", env=ENV)
        row = self.run(key, label, "portcheck", argv, corpus, self.args.repeats, json_out=self.logs / f"{key}.json")
        if row.ok and cold.ok and row.findings != cold.findings:
            self.notes.append(f"the warm scan reported {row.findings} findings, the cold scan {cold.findings}")
        return row

    def fix_diff(self, corpus: corpora.Corpus) -> Row:
        key, label = "portcheck.fix-diff.transformers", "portcheck fix --diff"
        try:
            helptext = subprocess.run(self.pc + ["fix", "--help"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return self.unavailable(key, label, "portcheck", corpus, str(exc))
        if helptext.returncode != 0 or "--diff" not in helptext.stdout:
            return self.unavailable(
                key, label, "portcheck", corpus, "`portcheck fix --diff` is not available in this build"
            )
        argv = self.pc + ["fix", "--diff", *(str(p) for p in corpus.paths)]
        if "--jobs" in helptext.stdout:
            argv += ["-j", str(self.args.jobs)]
        if "--no-cache" in helptext.stdout:
            argv += ["--no-cache"]
        return self.run(key, label, "portcheck", argv, corpus, self.args.fix_repeats, timeout_s=900, retry_busy=False)

    def _has_module(self, name: str) -> bool:
        return subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True).returncode == 0

    def one_file(self, corpus: corpora.Corpus) -> Row:
        path = corpus.root / ONE_FILE
        single = corpora.Corpus(corpus.root, (path,), 1, path.stat().st_size, path.read_bytes().count(b"\n"))
        argv = self.pc + [
            "scan",
            str(path),
            "-q",
            "--no-cache",
            "--output-format",
            "json",
            "-o",
            str(self.logs / "portcheck.one-file.json"),
        ]
        return self.run(
            "portcheck.one-file",
            f"portcheck scan, one file ({path.name}), interpreter start included",
            "portcheck",
            argv,
            single,
            max(5, self.args.repeats),
            json_out=self.logs / "portcheck.one-file.json",
        )


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="smoke run: --sample 30 --repeats 1 --no-torch --max-copies 2")
    p.add_argument("--sample", type=int, default=143, help="files in the peers' sample: every 20th of 2,860 [143]")
    p.add_argument("--repeats", type=int, default=3, help="runs of each portcheck command (median reported) [3]")
    p.add_argument("--peer-repeats", type=int, default=1, help="runs of each peer command [1]")
    p.add_argument("--fix-repeats", type=int, default=3, help="runs of `portcheck fix --diff` [3]")
    p.add_argument(
        "--targets", default=",".join(SCAN_TARGETS), help=f"cold-scan rows, one per target [{','.join(SCAN_TARGETS)}]"
    )
    p.add_argument(
        "--busy-cores",
        type=float,
        default=BUSY_CORES,
        help=f"run a portcheck command again when others kept more cores busy than this [{BUSY_CORES}]; "
        "on a machine that is never quiet, raise it and read the others' cores column",
    )
    p.add_argument("--jobs", type=int, default=2, help="portcheck worker processes (-j) [2]")
    p.add_argument("--max-copies", type=int, default=4, choices=(1, 2, 4), help="largest copy count for linearity [4]")
    p.add_argument("--no-peers", action="store_true", help="skip TorchFix, Fixit and ruff")
    p.add_argument("--no-torch", action="store_true", help="skip the torch corpus")
    p.add_argument("--corpora", default=str(HERE / "corpora"), help="where corpora and wheels go [bench/corpora]")
    p.add_argument(
        "--venvs", default=str(HERE / ".venvs"), help="where the peers' virtual environments go [bench/.venvs]"
    )
    p.add_argument("--results", default=str(HERE / "results"), help="where JSON results go [bench/results]")
    args = p.parse_args(argv)
    if args.quick:  # only where the command line left the default
        for name, value in (("sample", 30), ("repeats", 1), ("fix_repeats", 1), ("no_torch", True), ("max_copies", 2)):
            if getattr(args, name) == p.get_default(name):
                setattr(args, name, value)
    return args


def versions(bench: Bench, venvs: Path, used: Sequence[peers.Peer]) -> Dict[str, str]:
    out = subprocess.run(bench.pc + ["--version"], capture_output=True, text=True)
    found = {"portcheck": out.stdout.strip().rsplit(" ", 1)[-1] or "?", "python": sys.version.split()[0]}
    try:
        from importlib.metadata import version

        import libcst  # noqa: F401

        found["libcst"] = version("libcst")
    except Exception:  # noqa: BLE001 - informative only
        pass
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "from portcheck.scanner import Settings, prepare; "
            "print(getattr(prepare(Settings()).prefilter, 'accelerated', False))",
        ],
        capture_output=True,
        text=True,
    )
    found["pre-filter"] = "automaton (ahocorasick_rs)" if probe.stdout.strip() == "True" else "pure Python"
    for peer in used:
        found[peer.venv] = peers.version(venvs, peer)
    return found


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    started = _dt.datetime.now().isoformat(timespec="seconds")
    base = Path(args.corpora)
    venvs = Path(args.venvs)
    info = machine.describe()
    bench = Bench(args)

    log("building corpora")
    tf = corpora.wheel_corpus(corpora.TRANSFORMERS, base)
    sample = corpora.sample_corpus(tf, args.sample, base)
    torch_corpus = None if args.no_torch else corpora.wheel_corpus(corpora.TORCH, base)

    used_peers: List[peers.Peer] = []
    if not args.no_peers:
        for peer in peers.PEERS:
            why = peers.ensure_venv(venvs, peer)
            if why:
                bench.notes.append(f"{peer.name}: {why}")
            else:
                used_peers.append(peer)

    # One untimed run first, so every timed run finds the same bytecode and page cache.
    measure(bench.pc + ["scan", str(tf.root / ONE_FILE), "-q", "--no-cache"], stdout=bench.logs / "warmup.out", env=ENV)

    # portcheck on the whole corpora
    colds = {}
    for target in [t for t in args.targets.split(",") if t]:
        key = "portcheck.cold.transformers" if target == "generic" else f"portcheck.cold-{target}.transformers"
        colds[target] = bench.cold(
            key, f"portcheck scan --target {target}, cold (--no-cache)", "portcheck", tf, args.repeats, target
        )
    cold = colds.get("generic") or next(iter(colds.values()))
    warm = bench.warm(tf, cold)
    bench.fix_diff(tf)
    one = bench.one_file(tf)
    if torch_corpus is not None:
        bench.cold("portcheck.cold.torch", "portcheck scan torch, cold", "portcheck", torch_corpus, args.repeats)

    # the sample, every tool
    # At least 5 runs: a 0.4 s run is easily nudged by a neighbour, and the ratio divides by it.
    mine = bench.cold("sample.portcheck", "portcheck scan, cold", "sample", sample, max(5, args.repeats))
    peer_rows = []
    for peer in used_peers:
        peer_rows.append(
            bench.run(
                f"sample.{peer.venv}.{len(peer_rows)}",
                peer.name,
                "sample",
                peers.command(venvs, peer, sample.paths),
                sample,
                args.peer_repeats,
                ok_codes=(0, 1),
                timeout_s=1800,
                marker=peer.finding_marker,
                cwd=sample.root,
                retry_busy=peer.venv == "ruff",
            )  # a TorchFix or Fixit run is too long to repeat
        )

    # linearity
    linear = []
    for count in (c for c in (1, 2, 4) if c <= args.max_copies):
        grown = corpora.copies(tf, count, base)
        linear.append(
            bench.cold(
                f"linear.{count}x",
                f"portcheck scan, cold, {count}x transformers",
                "linearity",
                grown,
                1 if count > 1 else args.repeats,
            )
        )

    torchfix = next((r for r in peer_rows if r.label.startswith("torchfix") and r.ok), None)
    pc_rows = [r for r in bench.rows if r.ok and r.label.startswith("portcheck")]
    scale = scaling(linear)
    four = next((w / s for _, s, w in scale if round(s) == 4), None)

    def wall(row: Optional[Row]) -> Optional[float]:
        return row.wall_s if row is not None and row.ok else None

    fix = next((r for r in bench.rows if r.key == "portcheck.fix-diff.transformers"), None)
    # The goals of the second performance round (bench/README.md).
    targets = (
        Target(
            "TorchFix wall / portcheck wall, sample",
            torchfix.wall_s / mine.wall_s if torchfix and mine.ok else None,
            150,
            "x",
            True,
        ),
        Target("cold scan, transformers, generic", wall(colds.get("generic")), 3, "s"),
        Target("cold scan, transformers, neuron", wall(colds.get("neuron")), 3.5, "s"),
        Target("cold scan, transformers, xla", wall(colds.get("xla")), 3.5, "s"),
        Target("cold scan, transformers, all", wall(colds.get("all")), 4, "s"),
        Target("warm rescan, transformers", wall(warm), 0.3, "s"),
        Target("one-file run", wall(one), 0.25, "s"),
        Target("fix --diff, transformers", wall(fix), 6, "s"),
        Target(
            "peak RSS of all processes, any portcheck run",
            max(r.peak_rss_mb for r in pc_rows) if pc_rows else None,
            400,
            "MB",
        ),
        Target("wall(4x) / (4 x wall(1x))", four, 1.15, ""),
    )
    report = Report(
        started=started,
        machine=info,
        versions=versions(bench, venvs, used_peers),
        settings=dict(vars(args)),
        rows=tuple(bench.rows),
        ratios=tuple(ratios(mine, peer_rows)),
        scaling=tuple(scale),
        targets=targets,
        notes=tuple(bench.notes)
        + (
            f"sample: every k-th .py file of the sorted transformers file list, k = {tf.files} // {args.sample}",
            f"portcheck runs with -j {args.jobs}; TorchFix and Fixit use their default worker count (all cores)",
        ),
    )
    print(render(report), end="")
    path = write_json(report, Path(args.results))
    log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
