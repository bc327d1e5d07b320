"""Draw a seeded random sample of findings from full scans of the held-out repositories, for reading.

    python bench/review_sample.py CORPUS_DIR --seed N [--size 200] [--target neuron] [--out SAMPLE.csv]
    python bench/review_sample.py BLIND_DIR --all-repos --per-repo 40 --seed N

Every held-out repository named in `bench/labels/real.csv` is scanned whole, the way a user scans it
(the same call as `bench/accuracy_real.py`); with `--all-repos`, every `owner+name` folder of the
directory instead (a set fetched for reading only, never labelled or tuned on). All findings are put
in one list sorted by repository, path, cell, line, column and code, and `random.Random(seed).sample`
draws `size` of them: nothing is left out by hand. `--per-repo N` first draws at most N findings of
each repository (same seed), so that one large repository does not fill the sample. The sample is
written as the columns of `reviewed.csv` with `verdict` empty, plus the finding's severity and note,
for a person to fill in.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import random
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a bare checkout
    sys.path.insert(0, str(ROOT))

from bench.accuracy_real import read_labels  # noqa: E402

Row = Tuple[str, str, str, int, int, str, str, str, str, str]


def _commit(corpus: Path, repo: str) -> str:
    listing = corpus / "COMMITS.txt"
    if listing.is_file():
        for line in listing.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == repo:
                return parts[1]
    return ""


def findings(corpus: Path, repos: Sequence[str], target: str) -> List[Row]:
    from portcheck.config import Config
    from portcheck.runner import scan_paths

    rows: List[Row] = []
    for repo in repos:
        # as `portcheck scan` does: files a repository's `.gitignore` names are not reported (the rounds up to
        # blind74 scanned them too, 17 such findings in blind74's draw)
        result = scan_paths([corpus / repo], Config(), target=target, cwd=corpus / repo, jobs=1)
        commit = _commit(corpus, repo)
        for file in result.files:
            for f in file.findings:
                cell = "" if f.cell is None else str(f.cell)
                sha1 = hashlib.sha1(f.source_line.strip().encode("utf-8")).hexdigest()
                rows.append((repo, commit, file.path, f.line, f.column, cell, f.code, sha1, f.severity.value, f.note))
    rows.sort(key=lambda r: (r[0], r[2], r[5], r[3], r[4], r[6]))
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--target", default="neuron", choices=("neuron", "xla", "generic"))
    parser.add_argument("--out", type=Path)
    parser.add_argument("--all-repos", action="store_true", help="every owner+name folder, not the held-out labels")
    parser.add_argument("--per-repo", type=int, default=0, help="draw at most N findings per repository first")
    args = parser.parse_args(argv)
    if args.all_repos:
        repos = sorted(p.name for p in args.corpus.iterdir() if p.is_dir() and "+" in p.name)
    else:
        repos = sorted({label.repo for label in read_labels() if label.split == "held-out"})
    rows = findings(args.corpus, repos, args.target)
    rng = random.Random(args.seed)
    pool = rows
    if args.per_repo > 0:
        pool = []
        for repo in repos:
            own = [row for row in rows if row[0] == repo]
            pool.extend(own if len(own) <= args.per_repo else sorted(rng.sample(own, args.per_repo)))
    sample = rng.sample(pool, min(args.size, len(pool)))
    print(
        f"{len(rows)} findings in {len(repos)} repositories; {len(pool)} in the pool;"
        f" {len(sample)} drawn with seed {args.seed}"
    )
    out = open(args.out, "w", newline="", encoding="utf-8") if args.out else sys.stdout
    writer = csv.writer(out)
    # (the column tells two findings of one rule on one line apart: `img.cuda(), mask.cuda()`)
    writer.writerow(["repo", "commit", "path", "cell", "line", "column", "code", "verdict", "sha1", "severity", "note"])
    for repo, commit, path, line, column, cell, code, sha1, severity, note in sample:
        writer.writerow([repo, commit, path, cell, line, column, code, "", sha1, severity, note])
    if args.out:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
