"""Line-level precision and recall of portcheck on the labelled corpus in tests/accuracy/.

Every corpus line that holds CUDA lock-in carries an `expect: <categories>` comment (the convention
is in tests/accuracy/README.md). Print the figures without pytest: `python tests/test_accuracy.py`.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, FrozenSet, Iterator, Mapping, Optional, Sequence, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, "") and str(ROOT) not in sys.path:  # run as a script from a bare checkout
    sys.path.insert(0, str(ROOT))

from portcheck.model import CATEGORIES, ScanResult  # noqa: E402

CORPUS = ROOT / "tests" / "accuracy"
EXAMPLES = ROOT / "examples"
TARGET = "neuron"
MIN_PRECISION = 0.97
MIN_RECALL = 0.95
# Files in the corpus folder that describe it rather than belong to it.
NOT_CORPUS = frozenset({"README.md", "portcheck.toml"})

_LABEL = re.compile(r"(?:#|//)\s*expect:\s*([A-Za-z][A-Za-z ,-]*)")

# (path relative to the corpus, notebook cell or None, 1-based line)
Key = Tuple[str, Optional[int], int]


@dataclass(frozen=True)
class Corpus:
    labels: Mapping[Key, FrozenSet[str]]
    source: Mapping[Key, str]  # every line of every corpus file, for reports
    files: Tuple[str, ...]


def _labels_in(line: str) -> FrozenSet[str]:
    m = _LABEL.search(line)
    if not m:
        return frozenset()
    return frozenset(part.strip() for part in m.group(1).split(",") if part.strip())


def _file_lines(path: Path) -> Iterator[Tuple[Optional[int], int, str]]:
    """(cell, line, text) for every line; for notebooks, the lines of each code cell."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        for cell_no, cell in enumerate(json.loads(text)["cells"], 1):
            if cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            for line_no, line in enumerate(source.split("\n"), 1):
                yield cell_no, line_no, line
    else:
        for line_no, line in enumerate(text.splitlines(), 1):
            yield None, line_no, line


def read_corpus(corpus: Path = CORPUS) -> Corpus:
    labels: Dict[Key, FrozenSet[str]] = {}
    source: Dict[Key, str] = {}
    files = []
    for path in sorted(p for p in corpus.rglob("*") if p.is_file() and p.name not in NOT_CORPUS):
        rel = path.relative_to(corpus).as_posix()
        if any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(corpus).parts):
            continue  # editor, notebook-checkpoint and bytecode droppings
        files.append(rel)
        for cell, line_no, line in _file_lines(path):
            key = (rel, cell, line_no)
            source[key] = line.strip()
            found = _labels_in(line)
            if found:
                labels[key] = found
    return Corpus(labels=labels, source=source, files=tuple(files))


@lru_cache(maxsize=4)
def scan_folder(folder: Path, target: str) -> ScanResult:
    from portcheck.api import scan

    return scan([folder], target=target, jobs=1)


def relative_to(folder: Path, display: str) -> str:
    """A finding's path (shown relative to the working directory) relative to `folder`."""
    return Path(os.path.relpath(os.path.join(os.getcwd(), display), folder)).as_posix()


def findings_by_line(result: ScanResult, folder: Path) -> Dict[Key, Dict[str, Tuple[str, ...]]]:
    """Key -> category -> rule codes found on that line."""
    out: Dict[Key, Dict[str, Set[str]]] = defaultdict(lambda: defaultdict(set))
    for f in result.findings:
        out[(relative_to(folder, f.path), f.cell, f.line)][f.category].add(f.code)
    return {k: {c: tuple(sorted(codes)) for c, codes in cats.items()} for k, cats in out.items()}


@dataclass(frozen=True)
class Miss:
    key: Key
    expected: FrozenSet[str]
    found: Mapping[str, Tuple[str, ...]]
    source: str

    def describe(self) -> str:
        path, cell, line = self.key
        where = f"{path} cell {cell}:{line}" if cell is not None else f"{path}:{line}"
        found = ", ".join(f"{c} ({'/'.join(codes)})" for c, codes in sorted(self.found.items())) or "-"
        expected = ", ".join(sorted(self.expected)) or "-"
        return f"{where}  expected {expected}  found {found}  | {self.source}"


@dataclass(frozen=True)
class CategoryScore:
    category: str
    labelled: int  # lines labelled with the category
    flagged: int  # lines with a finding of the category
    matched: int  # lines that are both

    @property
    def precision(self) -> Optional[float]:
        return self.matched / self.flagged if self.flagged else None

    @property
    def recall(self) -> Optional[float]:
        return self.matched / self.labelled if self.labelled else None


@dataclass(frozen=True)
class Evaluation:
    labelled: int
    flagged: int
    true_positives: int
    false_positives: Tuple[Miss, ...]
    false_negatives: Tuple[Miss, ...]
    categories: Tuple[CategoryScore, ...]

    @property
    def precision(self) -> float:
        return self.true_positives / self.flagged if self.flagged else 1.0

    @property
    def recall(self) -> float:
        return self.true_positives / self.labelled if self.labelled else 1.0


def evaluate(
    labels: Mapping[Key, FrozenSet[str]],
    found: Mapping[Key, Mapping[str, Tuple[str, ...]]],
    source: Optional[Mapping[Key, str]] = None,
) -> Evaluation:
    """Score findings against labels, line by line.

    A flagged line is a true positive when its labels include the category of at least one of
    its findings; every other flagged line is a false positive, and every labelled line that is
    not a true positive is a false negative.
    """
    source = source or {}
    hits = {key for key, cats in found.items() if labels.get(key, frozenset()) & set(cats)}
    fps = tuple(
        Miss(k, labels.get(k, frozenset()), found[k], source.get(k, "")) for k in sorted(set(found) - hits, key=_order)
    )
    fns = tuple(Miss(k, labels[k], found.get(k, {}), source.get(k, "")) for k in sorted(set(labels) - hits, key=_order))
    per_category = []
    for cat in CATEGORIES:
        labelled = {k for k, v in labels.items() if cat in v}
        flagged = {k for k, v in found.items() if cat in v}
        per_category.append(CategoryScore(cat, len(labelled), len(flagged), len(labelled & flagged)))
    return Evaluation(
        labelled=len(labels),
        flagged=len(found),
        true_positives=len(hits),
        false_positives=fps,
        false_negatives=fns,
        categories=tuple(per_category),
    )


def _order(key: Key) -> Tuple[str, int, int]:
    return (key[0], key[1] or 0, key[2])


def _ratio(value: Optional[float]) -> str:
    return "   -" if value is None else f"{value:.3f}"


def format_report(ev: Evaluation, target: str = TARGET) -> str:
    lines = [
        f"portcheck on tests/accuracy (target {target}): {ev.labelled} labelled lines, {ev.flagged} flagged lines",
        f"precision {ev.precision:.3f} ({ev.true_positives}/{ev.flagged})   "
        f"recall {ev.recall:.3f} ({ev.true_positives}/{ev.labelled})",
        "",
        f"{'category':<14}{'labelled':>9}{'flagged':>9}{'precision':>11}{'recall':>8}",
    ]
    for c in ev.categories:
        lines.append(f"{c.category:<14}{c.labelled:>9}{c.flagged:>9}{_ratio(c.precision):>11}{_ratio(c.recall):>8}")
    lines.append("")
    lines.append(f"false positives ({len(ev.false_positives)}):")
    lines.extend("  " + m.describe() for m in ev.false_positives)
    lines.append(f"false negatives ({len(ev.false_negatives)}):")
    lines.extend("  " + m.describe() for m in ev.false_negatives)
    return "\n".join(lines)


def measure(target: str = TARGET) -> Evaluation:
    corpus = read_corpus()
    found = findings_by_line(scan_folder(CORPUS, target), CORPUS)
    return evaluate(corpus.labels, found, corpus.source)


# -- the scoring itself ------------------------------------------------------------------------


def test_a_flagged_line_counts_once_and_needs_a_labelled_category():
    labels = {
        ("a.py", None, 1): frozenset({"device"}),
        ("a.py", None, 2): frozenset({"device", "distributed"}),
        ("a.py", None, 3): frozenset({"amp"}),
        ("n.ipynb", 2, 1): frozenset({"runtime"}),
    }
    found = {
        ("a.py", None, 1): {"device": ("DEV001", "DEV002")},  # two findings, one line: one hit
        ("a.py", None, 2): {"distributed": ("DIST001",)},  # one of two labels: a hit
        ("a.py", None, 3): {"runtime": ("RT001",)},  # wrong category: a false positive and a miss
        ("a.py", None, 4): {"device": ("DEV001",)},  # unlabelled: a false positive
        ("n.ipynb", 3, 1): {"runtime": ("RT002",)},  # same line number, other cell: no hit
    }
    ev = evaluate(labels, found)
    assert (ev.labelled, ev.flagged, ev.true_positives) == (4, 5, 2)
    assert ev.precision == 2 / 5 and ev.recall == 2 / 4
    assert [m.key for m in ev.false_positives] == [("a.py", None, 3), ("a.py", None, 4), ("n.ipynb", 3, 1)]
    assert [m.key for m in ev.false_negatives] == [("a.py", None, 3), ("n.ipynb", 2, 1)]
    device = next(c for c in ev.categories if c.category == "device")
    assert (device.labelled, device.flagged, device.matched) == (2, 2, 1)
    assert device.precision == 1 / 2 and device.recall == 1 / 2


def test_labels_are_read_from_python_text_and_notebook_cells(tmp_path):
    (tmp_path / "a.py").write_text("import torch\nx.cuda()  # expect: device\ny = 1  # not a label\n")
    (tmp_path / "k.cu").write_text("#include <cuda.h>  // expect: kernel\n")
    (tmp_path / "requirements.txt").write_text("flash-attn==2.5  # expect: package, kernel\n")
    nb = {
        "cells": [
            {"cell_type": "markdown", "source": ["x.cuda()  # expect: device\n"]},
            {"cell_type": "code", "source": ["import torch\n", "t.cuda()  # expect: device"]},
        ]
    }
    (tmp_path / "n.ipynb").write_text(json.dumps(nb))
    corpus = read_corpus(tmp_path)
    assert corpus.labels == {
        ("a.py", None, 2): frozenset({"device"}),
        ("k.cu", None, 1): frozenset({"kernel"}),
        ("requirements.txt", None, 1): frozenset({"package", "kernel"}),
        ("n.ipynb", 2, 2): frozenset({"device"}),
    }


# -- the corpus --------------------------------------------------------------------------------


def test_corpus_labels_name_known_categories():
    corpus = read_corpus()
    unknown = {(k, c) for k, cats in corpus.labels.items() for c in cats if c not in CATEGORIES}
    assert not unknown, f"labels with unknown categories: {sorted(unknown)}"


def test_corpus_labels_sit_on_code_and_cuda_files_on_line_one():
    corpus = read_corpus()
    bare = [k for k in corpus.labels if _LABEL.split(corpus.source[k])[0].strip() in ("", "#", "//")]
    assert not bare, f"labels on lines without code: {bare}"
    cu = [k for k in corpus.labels if k[0].endswith((".cu", ".cuh")) and k[2] != 1]
    assert not cu, f".cu files are labelled on line 1 only: {cu}"


def test_corpus_covers_every_category_and_has_clean_files():
    corpus = read_corpus()
    per_category = {c: sum(1 for v in corpus.labels.values() if c in v) for c in CATEGORIES}
    thin = {c: n for c, n in per_category.items() if n < 5}
    assert not thin, f"categories with fewer than 5 labelled lines: {thin}"
    labelled_files = {k[0] for k in corpus.labels}
    sizes = defaultdict(int)
    for path, _, _ in corpus.source:
        sizes[path] += 1
    clean = [f for f in corpus.files if f.endswith(".py") and f not in labelled_files and sizes[f] >= 30]
    assert len(clean) >= 8, f"too few clean (unlabelled) Python files of 30+ lines to test precision: {clean}"


def test_every_corpus_file_is_scanned_without_errors():
    corpus = read_corpus()
    result = scan_folder(CORPUS, TARGET)
    scanned = {relative_to(CORPUS, fr.path) for fr in result.files}
    labelled_files = {k[0] for k in corpus.labels}
    assert labelled_files <= scanned, f"labelled files portcheck did not scan: {sorted(labelled_files - scanned)}"
    assert not result.errors, "\n".join(f"{e.path}: {e.message}" for e in result.errors)


def test_precision_and_recall_on_the_corpus():
    ev = measure()
    report = format_report(ev)
    print(report)
    assert ev.precision >= MIN_PRECISION and ev.recall >= MIN_RECALL, (
        f"precision {ev.precision:.3f} (min {MIN_PRECISION}), recall {ev.recall:.3f} (min {MIN_RECALL})\n{report}"
    )


def test_the_report_command_prints_the_figures_for_a_target(capsys):
    status = main(["xla"])
    out = capsys.readouterr().out
    ev = measure("xla")
    assert out.startswith("portcheck on tests/accuracy (target xla)")
    assert f"precision {ev.precision:.3f}" in out and f"recall {ev.recall:.3f}" in out
    assert all(any(line.startswith(c) for line in out.splitlines()) for c in CATEGORIES)
    assert status == (0 if ev.precision >= MIN_PRECISION and ev.recall >= MIN_RECALL else 1)


# -- the bundled example project ---------------------------------------------------------------


def test_example_project_is_flagged_in_every_file():
    result = scan_folder(EXAMPLES, "generic")
    assert not result.errors, [(e.path, e.message) for e in result.errors]
    expected = sorted(
        p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*") if p.is_file() and p.name != "README.md"
    )
    flagged = sorted({relative_to(EXAMPLES, f.path) for f in result.findings})
    assert flagged == expected


def test_example_project_shows_the_main_kinds_of_lock_in():
    result = scan_folder(EXAMPLES, "generic")
    categories = {f.category for f in result.findings}
    wanted = {"device", "runtime", "amp", "backend-flag", "distributed", "package", "environment"}
    assert wanted <= categories, f"missing categories: {sorted(wanted - categories)}"
    # The environment findings: the CUDA wheel pins, the base image and the nvidia-smi GPU count.
    environment = {relative_to(EXAMPLES, f.path) for f in result.findings if f.category == "environment"}
    assert {"requirements.txt", "Dockerfile", "launch.sh"} <= environment, environment


def main(argv: Sequence[str] = ()) -> int:
    target = argv[0] if argv else TARGET
    ev = measure(target)
    print(format_report(ev, target))
    return 0 if ev.precision >= MIN_PRECISION and ev.recall >= MIN_RECALL else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


# -- bench/accuracy_real.py: scoring against labels of real repositories ------------------------


def _real_bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("accuracy_real", ROOT / "bench" / "accuracy_real.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("accuracy_real", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_real_labels_score_true_and_false_positives_and_misses(tmp_path):
    bench = _real_bench()
    repo = tmp_path / "owner+repo"
    repo.mkdir()
    lines = ["import torch", "x = x.cuda()", "print('cuda')", "torch.cuda.synchronize()"]
    (repo / "train.py").write_text("\n".join(lines) + "\n")
    Label = bench.Label
    labels = [
        Label("dev", "owner+repo", "c", "train.py", 2, "device", bench.line_hash(lines[1])),
        Label("dev", "owner+repo", "c", "train.py", 3, "none", bench.line_hash(lines[2])),
        Label("dev", "owner+repo", "c", "train.py", 4, "kernel", bench.line_hash(lines[3])),
        Label("dev", "owner+repo", "c", "train.py", 1, "none", "0" * 40),
    ]
    good, problems = bench.check_hashes(tmp_path, labels)
    assert len(good) == 3 and problems == ["owner+repo/train.py:1: hash mismatch"]
    found = {("owner+repo", path, line): cats for (path, line), cats in bench.scan_repo(repo, "neuron").items()}
    tallies, misses = bench.score(good, found)
    assert (tallies["device"].tp, tallies["device"].fp, tallies["device"].fn) == (1, 0, 0)
    assert (tallies["kernel"].fn, tallies["runtime"].fp) == (1, 1)  # synchronize is runtime, labelled kernel
    assert sorted(misses) == ["FN kernel       owner+repo/train.py:4", "FP runtime      owner+repo/train.py:4"]


def test_committed_real_labels_are_well_formed():
    bench = _real_bench()
    labels = bench.read_labels()
    assert len(labels) >= 300 and len({label.repo for label in labels}) >= 15
    assert {label.split for label in labels} == {"dev", "held-out"}
    assert all(label.category in CATEGORIES or label.category == "none" for label in labels)
    assert all(len(label.sha1) == 40 for label in labels)
    halves = {}
    for label in labels:
        halves.setdefault(label.repo, set()).add(label.split)
    assert all(len(s) == 1 for s in halves.values())  # a repository belongs to one half
