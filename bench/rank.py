"""Rank agreement between portcheck's readiness score and a hand-written porting-effort ranking.

    python bench/rank.py /work/corpus                   # scan every ranked repository, print Spearman's rho
    python bench/rank.py /work/corpus --cache /tmp/rc   # keep the scans (pickled) for later runs
    python bench/rank.py /work/corpus --table           # also print every repository's scores

The ranking is bench/ranking.toml (rank 1 = the most porting work, one rank per target, a
"tune"/"held" half for each repository). A repository's score is the headline (product code) score
of a scan run for that target. A higher score means less work, so agreement is a positive rho
between the score and the rank number.

The baseline counts lines that mention cuda|nccl|triton|cudnn|apex|xformers|bitsandbytes|flash_attn
per thousand lines of text sources, plus the number of .cu files: more means more work.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import sys
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run as a script: make `portcheck` importable from the checkout
    sys.path.insert(0, str(HERE.parent))

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TARGETS = ("neuron", "generic", "xla")
HALVES = ("tune", "held", "all")
BASELINE_PATTERN = re.compile(r"cuda|nccl|triton|cudnn|apex|xformers|bitsandbytes|flash_attn", re.IGNORECASE)
TEXT_SUFFIXES = frozenset({".py", ".cu", ".cuh", ".c", ".cc", ".cpp", ".h", ".hpp", ".sh", ".txt", ".toml",
                           ".cfg", ".yaml", ".yml", ".ipynb"})
SKIP_DIRS = frozenset({".git", "__pycache__", "node_modules", ".venv"})


def load_ranking(path: Path) -> List[Mapping[str, object]]:
    with path.open("rb") as fh:
        return list(tomllib.load(fh)["repo"])


def average_ranks(values: Sequence[float]) -> List[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rho with average ranks for ties (Pearson's r of the ranks)."""
    n = len(xs)
    if n < 2:  # an empty half (e.g. a ranking whose repositories are all "held")
        return float("nan")
    rx, ry = average_ranks(xs), average_ranks(ys)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx) ** 0.5
    vy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (vx * vy) if vx and vy else float("nan")


def baseline(repo: Path) -> float:
    """Lines mentioning CUDA-family names per thousand lines of text sources, plus the number of .cu files."""
    total = hits = cu = 0
    for folder, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in files:
            suffix = Path(name).suffix.lower()
            if suffix == ".cu":
                cu += 1
            if suffix not in TEXT_SUFFIXES and not name.startswith("Dockerfile"):
                continue
            try:
                text = (Path(folder) / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            lines = text.splitlines()
            total += len(lines)
            hits += sum(1 for line in lines if BASELINE_PATTERN.search(line))
    return (1000.0 * hits / total if total else 0.0) + cu


def scan_repo(repo: Path, target: str, cache: Optional[Path]):
    """The ScanResult of `repo` for `target`, with repository-relative paths; pickled in `cache` when given."""
    from portcheck import api

    cached = cache / f"{repo.name}.{target}.pickle" if cache is not None else None
    if cached is not None and cached.is_file():
        with cached.open("rb") as fh:
            return pickle.load(fh)
    here = Path.cwd()
    os.chdir(repo)
    try:
        result = api.scan(["."], target=target, jobs=1)
    finally:
        os.chdir(here)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        with cached.open("wb") as fh:
            pickle.dump(result, fh)
    return result


def headline_scores(
    corpus: Path, names: Sequence[str], cache: Optional[Path]
) -> Dict[str, Dict[str, Tuple[float, float]]]:
    """name -> target -> (headline score, whole-tree score)."""
    from portcheck.catalog import load_catalog
    from portcheck.score import score_scan

    catalog = load_catalog()
    out: Dict[str, Dict[str, Tuple[float, float]]] = {}
    for name in names:
        out[name] = {}
        for target in TARGETS:
            card = score_scan(scan_repo(corpus / name, target, cache), catalog, target)
            out[name][target] = (card.score, getattr(card, "whole_score", card.score))
    return out


def rho_table(
    ranking: Sequence[Mapping[str, object]], value: Mapping[str, Mapping[str, float]]
) -> Dict[str, Dict[str, float]]:
    """target -> half -> rho between `value` (higher = less work) and the rank number."""
    table: Dict[str, Dict[str, float]] = {}
    for target in TARGETS:
        table[target] = {}
        for half in HALVES:
            rows = [r for r in ranking if half == "all" or r["half"] == half]
            table[target][half] = spearman(
                [value[str(r["name"])][target] for r in rows], [float(r[target]) for r in rows]
            )
    return table


def print_rho(title: str, table: Mapping[str, Mapping[str, float]], halves: Sequence[str] = HALVES) -> None:
    print(title)
    print(f"  {'target':<8} " + " ".join(f"{h:>7}" for h in halves))
    for target in TARGETS:
        print(f"  {target:<8} " + " ".join(f"{table[target][h]:>7.3f}" for h in halves))


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="folder holding <owner>+<name>/ trees")
    parser.add_argument("--ranking", type=Path, default=HERE / "ranking.toml")
    parser.add_argument("--cache", type=Path, default=None, help="keep pickled scans here and reuse them")
    parser.add_argument("--table", action="store_true", help="print every repository's scores")
    parser.add_argument(
        "--tuning",
        action="store_true",
        help="show the tuning half only (while weights are tuned, the held-back half stays unseen)",
    )
    args = parser.parse_args(argv)

    ranking = load_ranking(args.ranking)
    halves = ("tune",) if args.tuning else HALVES
    halves = tuple(h for h in halves if h == "all" or any(r["half"] == h for r in ranking))
    missing = [str(r["name"]) for r in ranking if not (args.corpus / str(r["name"])).is_dir()]
    if missing:
        print(f"rank.py: not in {args.corpus}: {', '.join(missing)}", file=sys.stderr)
        return 2
    names = [str(r["name"]) for r in ranking]
    scores = headline_scores(args.corpus, names, args.cache)
    base = {n: baseline(args.corpus / n) for n in names}
    if args.table:
        print(f"{'repository':<40} {'half':<5} " + " ".join(f"{t:>16}" for t in TARGETS) + f" {'baseline':>9}")
        for r in sorted(ranking, key=lambda r: int(r["neuron"])):
            if str(r["half"]) not in halves:
                continue
            n = str(r["name"])
            cells = " ".join(f"{int(r[t]):>3} {scores[n][t][0]:>5.1f} ({scores[n][t][1]:>5.1f})" for t in TARGETS)
            print(f"{n:<40} {r['half']:<5} {cells} {base[n]:>9.1f}")
        print("  (each target: hand rank, headline score, whole-tree score)")
    print_rho(
        "portcheck headline score vs ranking (Spearman's rho)",
        rho_table(ranking, {n: {t: scores[n][t][0] for t in TARGETS} for n in names}),
        halves,
    )
    print_rho(
        "baseline (pattern lines per 1k lines + .cu files) vs ranking",
        rho_table(ranking, {n: {t: -base[n] for t in TARGETS} for n in names}),
        halves,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
