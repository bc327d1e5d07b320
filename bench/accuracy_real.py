"""Precision and recall of portcheck against hand labels of lines in real repositories.

    python bench/accuracy_real.py CORPUS_DIR [--target neuron] [--split dev|held-out] [--misses] [--json OUT]

CORPUS_DIR holds the repositories as `<owner>+<name>/` folders (the names `bench/labels/real.csv`
uses). Each labelled repository is scanned whole, the way a user scans it, and every label is
checked against the finding categories portcheck reports on that line:

- a label with a category is a true positive when a finding of that category starts on the line,
  else a false negative;
- a finding on a labelled line whose category no label of that line names (a `none` line, or a
  line labelled with another category) is a false positive.

Lines nobody labelled are not scored. Before scoring, the SHA-1 of each labelled line's stripped
text is compared with the label's; mismatches are listed and left out.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a bare checkout
    sys.path.insert(0, str(ROOT))

from portcheck.model import CATEGORIES  # noqa: E402

LABELS = ROOT / "bench" / "labels" / "real.csv"
SPLITS = ("dev", "held-out")


@dataclass(frozen=True)
class Label:
    split: str
    repo: str
    commit: str
    path: str
    line: int
    category: str
    sha1: str


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> Optional[float]:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> Optional[float]:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def line_hash(text: str) -> str:
    return hashlib.sha1(text.strip().encode("utf-8")).hexdigest()


def read_labels(path: Path = LABELS) -> List[Label]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [
            Label(r["split"], r["repo"], r["commit"], r["path"], int(r["line"]), r["category"], r["sha1"])
            for r in csv.DictReader(handle)
        ]


def _line(repo_dir: Path, path: str, line: int) -> Optional[str]:
    try:
        lines = (repo_dir / path).read_text(encoding="utf-8", errors="replace").split("\n")
    except OSError:
        return None
    return lines[line - 1] if 0 < line <= len(lines) else None


def check_hashes(corpus: Path, labels: Sequence[Label]) -> Tuple[List[Label], List[str]]:
    good, problems = [], []
    for label in labels:
        text = _line(corpus / label.repo, label.path, label.line)
        if text is None:
            problems.append(f"{label.repo}/{label.path}:{label.line}: missing")
        elif line_hash(text) != label.sha1:
            problems.append(f"{label.repo}/{label.path}:{label.line}: hash mismatch")
        else:
            good.append(label)
    return good, problems


def scan_repo(repo_dir: Path, target: str) -> Dict[Tuple[str, int], Set[str]]:
    """(path relative to the repository, line) -> categories of the findings that start there."""
    from portcheck.config import Config
    from portcheck.runner import scan_paths

    result = scan_paths([repo_dir], Config(respect_gitignore=False), target=target, cwd=repo_dir, jobs=1)
    found: Dict[Tuple[str, int], Set[str]] = defaultdict(set)
    for file in result.files:
        for finding in file.findings:
            if finding.cell is None:
                found[(file.path, finding.line)].add(finding.category)
    return found


def score(
    labels: Sequence[Label], found: Mapping[Tuple[str, str, int], Set[str]]
) -> Tuple[Dict[str, Tally], List[str]]:
    """Tallies per category, and one line per miss or false positive."""
    tallies: Dict[str, Tally] = {c: Tally() for c in CATEGORIES}
    misses: List[str] = []
    by_line: Dict[Tuple[str, str, int], Set[str]] = defaultdict(set)
    for label in labels:
        by_line[(label.repo, label.path, label.line)].add(label.category)
    for key, wanted in sorted(by_line.items()):
        got = found.get(key, set())
        where = f"{key[0]}/{key[1]}:{key[2]}"
        for category in sorted(wanted - {"none"}):
            if category in got:
                tallies[category].tp += 1
            else:
                tallies[category].fn += 1
                misses.append(f"FN {category:<12} {where}")
        for category in sorted(got - wanted):
            tallies.setdefault(category, Tally()).fp += 1
            misses.append(f"FP {category:<12} {where}")
    return tallies, misses


def _fmt(value: Optional[float]) -> str:
    return "   -" if value is None else f"{value:.3f}"


def table(split: str, tallies: Mapping[str, Tally], repos: Sequence[str]) -> str:
    total = Tally(
        sum(t.tp for t in tallies.values()), sum(t.fp for t in tallies.values()), sum(t.fn for t in tallies.values())
    )
    out = [f"{split}: {len(repos)} repositories", f"{'category':<14}{'TP':>5}{'FP':>5}{'FN':>5}  precision  recall"]
    for category, t in list(tallies.items()) + [("overall", total)]:
        if t.tp + t.fp + t.fn == 0:
            continue
        out.append(f"{category:<14}{t.tp:>5}{t.fp:>5}{t.fn:>5}  {_fmt(t.precision):>9}  {_fmt(t.recall):>6}")
    return "\n".join(out)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path, help="folder holding <owner>+<name>/ repositories")
    parser.add_argument("--target", default="neuron", choices=("neuron", "xla", "generic"))
    parser.add_argument("--split", choices=SPLITS, help="score one split only")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--misses", action="store_true", help="list every false negative and false positive")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"error: {args.corpus}: not a directory", file=sys.stderr)
        return 2
    labels, problems = check_hashes(args.corpus, read_labels(args.labels))
    for problem in problems:
        print(f"label skipped: {problem}", file=sys.stderr)
    figures = {"target": args.target, "labels": len(labels), "skipped": len(problems), "splits": {}}
    for split in SPLITS:
        if args.split and split != args.split:
            continue
        mine = [label for label in labels if label.split == split]
        repos = sorted({label.repo for label in mine})
        found: Dict[Tuple[str, str, int], Set[str]] = {}
        for repo in repos:
            for (path, line), cats in scan_repo(args.corpus / repo, args.target).items():
                found[(repo, path, line)] = cats
        tallies, misses = score(mine, found)
        print(table(split, tallies, repos))
        if args.misses:
            print("\n".join(misses))
        print()
        figures["splits"][split] = {
            "repositories": repos,
            "labels": len(mine),
            "categories": {c: {"tp": t.tp, "fp": t.fp, "fn": t.fn} for c, t in tallies.items() if t.tp + t.fp + t.fn},
        }
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
