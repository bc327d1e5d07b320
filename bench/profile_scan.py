"""Profile a cold scan of a corpus, for bench/PROFILE.md:

    python bench/profile_scan.py phases    # time each stage per file (read, decode, pre-filter, parse, analyze)
    python bench/profile_scan.py prefilter # the pre-filter against a plain search; tokens that pass most files
    python bench/profile_scan.py cprofile  # cProfile of `portcheck scan -j 1 --no-cache`, top functions
    python bench/profile_scan.py py-spy    # py-spy sampling of the same command (needs py-spy, see README)

The corpus defaults to the transformers corpus that bench/run.py builds.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import io
import pstats
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from bench import corpora  # noqa: E402


def _corpus(arg: Optional[str]) -> Path:
    if arg:
        return Path(arg)
    tf = corpora.wheel_corpus(corpora.TRANSFORMERS, HERE / "corpora")
    return tf.paths[0]


def _scan_argv(path: Path, out: Path) -> List[str]:
    return ["scan", str(path), "--no-cache", "-q", "-j", "1", "--output-format", "json", "-o", str(out)]


def phases(path: Path, target: str) -> str:
    """Run the engine's stages one by one over every .py file and time each; no profiler overhead."""
    from portcheck.analyze import ParseFailure, analyze_module, parse_python
    from portcheck.scanner import Settings, prepare
    from portcheck.source import DecodeError, decode_python, python_lines

    prepared = prepare(Settings(target=target))
    spent: Dict[str, float] = collections.defaultdict(float)
    files = corpora.python_files(path)
    passed = parsed_bytes = total_bytes = findings = 0
    clock = time.perf_counter
    for f in files:
        t0 = clock()
        data = f.read_bytes()
        t1 = clock()
        try:
            text = decode_python(data).text
        except DecodeError:
            continue
        t2 = clock()
        rules = prepared.prefilter.candidates(text)
        t3 = clock()
        spent["read"] += t1 - t0
        spent["decode"] += t2 - t1
        spent["pre-filter"] += t3 - t2
        total_bytes += len(data)
        if not rules:
            continue
        passed += 1
        parsed_bytes += len(data)
        try:
            module = parse_python(text, str(f))
        except ParseFailure:
            continue
        t4 = clock()
        lines = python_lines(text)
        findings += len(analyze_module(module, text, str(f), rules, prepared_target(target), lines))
        t5 = clock()
        spent["parse"] += t4 - t3
        spent["analyze (imports + walk + findings)"] += t5 - t4
    total = sum(spent.values())
    out = [
        f"corpus: {path} ({len(files):,} files, {total_bytes / 1e6:.1f} MB), target {target}, "
        f"{len(prepared.prefilter.rules)} Python rules, {len(prepared.prefilter.by_token)} pre-filter tokens",
        f"files passing the pre-filter: {passed:,} of {len(files):,} "
        f"({parsed_bytes / max(total_bytes, 1):.1%} of the bytes); findings: {findings:,}",
        "",
        "| stage | seconds | share |",
        "|---|---|---|",
    ]
    for stage, seconds in spent.items():
        out.append(f"| {stage} | {seconds:.3f} | {seconds / total:.0%} |")
    out.append(f"| total | {total:.3f} | |")
    return "\n".join(out) + "\n"


def prefilter_report(path: Path, target: str, top: int) -> str:
    """The pre-filter's cost against a plain search of every token, and which tokens let most files through."""
    from portcheck.prefilter import Prefilter
    from portcheck.scanner import Settings, prepare
    from portcheck.source import DecodeError, decode_python

    prefilter = prepare(Settings(target=target)).prefilter
    python_only = Prefilter(prepare(Settings(target=target)).rules, accelerate=False)
    texts = []
    for f in corpora.python_files(path):
        try:
            texts.append(decode_python(f.read_bytes()).text)
        except DecodeError:
            continue

    def gate_only(text: str):
        """The gate tokens alone, searched one by one (the first round's pre-filter)."""
        hit = set(prefilter.always)
        for token, indices in prefilter.by_token.items():
            if token in text:
                hit.update(indices)
        return tuple(prefilter.rules[i] for i in sorted(hit))

    searches = [("gate tokens only, one by one (no requirements)", gate_only), ("pure Python", python_only.candidates)]
    if prefilter.accelerated:
        searches.append(("automaton (ahocorasick_rs)", prefilter.candidates))
    timings = {}
    results = {}
    for name, fn in searches:
        start = time.process_time()
        results[name] = [fn(t) for t in texts]
        timings[name] = time.process_time() - start
    final = [name for name, _ in searches][1:]
    same = all(results[name] == results["pure Python"] for name in final)
    out = [
        f"{len(texts):,} files, target {target}: {len(prefilter.rules)} rules, {len(prefilter.by_token)} gate tokens; "
        f"the requirement searches agree: {same}",
        "",
        "| search | files passing | MB passing | CPU s |",
        "|---|---|---|---|",
    ]
    for name, seconds in timings.items():
        passing = [t for t, r in zip(texts, results[name]) if r]
        out.append(f"| {name} | {len(passing):,} | {sum(len(t) for t in passing) / 1e6:.1f} | {seconds:.3f} |")
    counts = collections.Counter()
    alone = collections.Counter()  # files that pass only because of this token
    for text in texts:
        present = [t for t in prefilter.by_token if t in text]
        counts.update(present)
        if len(present) == 1 and not prefilter.always:
            alone[present[0]] += 1
    out += ["", "| files holding it | files passing through it alone | token | rules |", "|---|---|---|---|"]
    for token, n in counts.most_common(top):
        codes = ", ".join(prefilter.rules[i].rule.code for i in prefilter.by_token[token])
        out.append(f"| {n:,} | {alone[token]:,} | `{token}` | {codes} |")
    return "\n".join(out) + "\n"


def prepared_target(name: str):
    from portcheck.model import Target

    return Target(name)


def cprofile(path: Path, top: int, results: Path) -> str:
    from portcheck.cli import main

    results.mkdir(parents=True, exist_ok=True)
    prof = cProfile.Profile()
    prof.enable()
    try:
        main(_scan_argv(path, results / "profile-scan.json"), standalone_mode=False)
    except SystemExit:
        pass
    finally:
        prof.disable()
    prof.dump_stats(str(results / "scan.prof"))
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return buf.getvalue()


def _spy_binary() -> Optional[str]:
    local = HERE / ".venvs" / "tools" / "bin" / "py-spy"
    return str(local) if local.exists() else shutil.which("py-spy")


def fold(lines: Sequence[str]) -> Tuple[Dict[str, int], Dict[str, int], int]:
    """Self and inclusive sample counts per function from py-spy's raw (collapsed-stack) output."""
    own: Dict[str, int] = collections.Counter()
    inclusive: Dict[str, int] = collections.Counter()
    total = 0
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = [_function(f) for f in stack.split(";")]
        own[frames[-1]] += n
        for name in set(frames):
            inclusive[name] += n
    return own, inclusive, total


def _function(frame: str) -> str:
    # "walk (portcheck/pyscan/walker.py:101)" -> "walk (portcheck/pyscan/walker.py)": lines split a function otherwise
    name, _, where = frame.partition(" (")
    return f"{name} ({where.rsplit(':', 1)[0]})" if where else name


def py_spy(path: Path, top: int, results: Path) -> str:
    spy = _spy_binary()
    if spy is None:
        return (
            "py-spy is not installed: "
            "`python -m venv bench/.venvs/tools && bench/.venvs/tools/bin/pip install py-spy`\n"
        )
    results.mkdir(parents=True, exist_ok=True)
    raw = results / "scan.py-spy.txt"
    portcheck = Path(sys.executable).parent / "portcheck"
    argv = [str(portcheck)] if portcheck.exists() else [sys.executable, "-m", "portcheck"]
    subprocess.run(
        [
            spy,
            "record",
            "-r",
            "250",
            "-f",
            "raw",
            "-o",
            str(raw),
            "--",
            *argv,
            *_scan_argv(path, results / "profile-scan.json"),
        ],
        check=False,
        capture_output=True,
    )
    own, inclusive, total = fold(raw.read_text(encoding="utf-8").splitlines())
    out = [
        f"py-spy, 250 Hz: {total} samples ({total / 250:.2f} s of CPU)",
        "",
        "| self | inclusive | function |",
        "|---|---|---|",
    ]
    for name, n in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        out.append(f"| {n / total:.1%} | {inclusive[name] / total:.1%} | `{name}` |")
    out += ["", "| inclusive | function |", "|---|---|"]
    for name, n in sorted(inclusive.items(), key=lambda kv: -kv[1])[:top]:
        out.append(f"| {n / total:.1%} | `{name}` |")
    return "\n".join(out) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("how", choices=("phases", "prefilter", "cprofile", "py-spy"))
    p.add_argument("--corpus", help="folder to scan [the transformers corpus]")
    p.add_argument("--target", default="generic", choices=("generic", "neuron", "xla"))
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--results", default=str(HERE / "results"))
    args = p.parse_args(argv)
    path = _corpus(args.corpus)
    if args.how == "phases":
        text = phases(path, args.target)
    elif args.how == "prefilter":
        text = prefilter_report(path, args.target, args.top)
    elif args.how == "cprofile":
        text = cprofile(path, args.top, Path(args.results))
    else:
        text = py_spy(path, args.top, Path(args.results))
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
