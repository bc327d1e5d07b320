"""Readiness scores: 0-100 per target for the product code (the headline), each other part, every file and every
directory, plus the work behind them and why the grade is what it is.

Pure functions of the findings, the file sizes and the part patterns; docs/scoring.md gives the model, its
weights and how they were calibrated (bench/rank.py).
"""

from __future__ import annotations

import math
import posixpath
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from portcheck.backends import ABSTRACTION, PLATFORM_MARKER, SEVERAL_BACKENDS, device_generic
from portcheck.model import FileResult, Finding, Rule, ScanResult, Severity, Target
from portcheck.parts import PARTS, PRODUCT, folders_above, part_of

ROOT = "."  # the directory table's name for everything scanned
ALL = "all"  # the headline's scope when nothing scanned is product code

# Impact of one finding left alone, by severity. Info findings are reported but cost nothing.
WEIGHTS: Mapping[Severity, float] = {
    Severity.BLOCKER: 60.0,
    Severity.MAJOR: 12.0,
    Severity.MINOR: 3.0,
    Severity.INFO: 0.0,
    Severity.OFF: 0.0,
}
# Categories whose findings are compiler-model cautions (float64, dynamic shapes, tensor control flow on XLA)
# rather than CUDA lock-in: the code runs, it may compile slowly or fall back. They weigh a fraction.
CATEGORY_FACTOR: Mapping[str, float] = {"xla": 0.25}

# Fix classes, and the share of a finding's weight left after `portcheck fix`.
SAFE, UNSAFE, MANUAL = "safe", "unsafe", "manual"
FIX_CLASSES: Tuple[str, ...] = (SAFE, UNSAFE, MANUAL)
FIX_LABELS: Mapping[str, str] = {SAFE: "safe autofix", UNSAFE: "unsafe autofix", MANUAL: "needs a person"}
# `score_after_fix` is the score after `portcheck fix` in its default mode: safe fixes are applied,
# unsafe ones wait for --unsafe-fixes and a review, so they still count in full.
RESIDUAL: Mapping[str, float] = {SAFE: 0.0, UNSAFE: 1.0, MANUAL: 1.0}

# Work W maps to a score by S = 100 / (1 + (W / HALF_WORK) ** STEEPNESS): 100 for no work, 50 at HALF_WORK.
HALF_WORK = 600.0
STEEPNESS = 0.8
# n findings of one rule (same severity and fix class) in a scope weigh n ** REPEAT times one of them.
REPEAT = 0.5
# Custom kernels weigh by size: a kernel source file weighs sqrt(lines / KERNEL_LINES) times its severity's
# weight (at least KERNEL_FLOOR of it); a Triton kernel counts as TRITON_LINES lines of kernel code.
KERNEL_LINES = 100.0
KERNEL_FLOOR = 0.5
TRITON_LINES = 60.0
# A project whose product code goes through a device abstraction, or names at least SEVERAL_BACKENDS
# (portcheck.backends) non-CUDA accelerators as device types, already runs on more than CUDA: its CUDA-specific
# code is one branch of a dispatch that the port extends, so its code findings outside the kernel category weigh
# one level less, as behind a fallback. Kernels are rewritten whatever dispatches to them; environment files are
# bounded anyway.
KERNEL_CATEGORY = "kernel"
# A scope holding at least MANY_KERNELS custom kernels with no fallback is re-engineering for every target.
MANY_KERNELS = 20
MANY_KERNELS_CAP = 35.0
# Cap on a scope's score by the number of distinct blocker rules without a pure-PyTorch fallback (0, 1, 2, 3+).
BLOCKER_CAPS: Tuple[float, ...] = (100.0, 50.0, 35.0, 25.0)
# Environment files (requirements pins, images, launchers, builds): each finding weighs at most a minor,
# one group per rule across the scope, and all of them together at most ENV_MAX.
ENV_MAX = 15.0
# 100 is kept for "nothing left to do": any scored finding keeps a score at or below this.
BELOW_PERFECT = 99.9

# Files that describe the environment (dependencies, images, launchers, builds, `.env` variables) rather than
# code to port.
ENV_KINDS = frozenset({"requirements", "pyproject", "conda", "dockerfile", "shell", "cmake", "dotenv"})
KERNEL_KINDS = frozenset({"cuda"})
# Kernel rules whose findings stand for a whole kernel source file, and the rule for Triton kernels.
KERNEL_SOURCE_RULES = frozenset({"KRN002", "KRN008"})
TRITON_RULE = "KRN003"
_TRITON_DEF = re.compile(r"^@\s*(?:triton\.)?(?:jit|autotune|heuristics)\b")
# Package rules, and how an import names its package: an import of the project's own package is not a dependency.
PACKAGE_CATEGORY = "package"
_IMPORTED = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)")
# A build file written in Python: repo-level rules (dependency pins, CUDA build settings) found there are
# environment evidence too. Elsewhere in Python code they are code, scored in their file like any other finding.
SETUP_PY = "setup.py"

# (lowest score, grade, what it means), best first.
BANDS: Tuple[Tuple[float, str, str], ...] = (
    (90.0, "A", "mechanical changes only"),
    (70.0, "B", "small port"),
    (40.0, "C", "significant port"),
    (0.0, "D", "re-engineering"),
)


def grade_for(score: float) -> str:
    for low, grade, _ in BANDS:
        if score >= low:
            return grade
    return BANDS[-1][1]


def band_label(grade: str) -> str:
    return {g: label for _, g, label in BANDS}.get(grade, "")


def _round(value: float) -> float:
    return round(value, 1)


@dataclass(frozen=True)
class Item:
    """A finding as the score sees it: its severity for the target, what fixing it takes, and how much work it is."""

    path: str
    code: str
    name: str
    category: str
    severity: Severity
    fix: str  # one of FIX_CLASSES
    caps: bool  # a blocker (before or after fix) with no pure-PyTorch fallback: it caps every scope it is in
    env: bool  # environment evidence: at most a minor, grouped once per scope, with a bounded total
    factor: float = 1.0  # share of the severity's weight: CATEGORY_FACTOR, 0 for an import of the project itself
    size: float = 0.0  # > 0 for a custom kernel: it weighs weight * size on its own instead of joining a group
    kernel: bool = False  # a custom kernel (source file or Triton kernel) with no fallback
    # its severity once `portcheck fix` has run, when fixes elsewhere in its file end why it is lowered
    # (`Finding.lowered_until`); None when it is `severity` then too
    severity_after_fix: Optional[Severity] = None

    def severity_for(self, after_fix: bool) -> Severity:
        return (self.severity_after_fix or self.severity) if after_fix else self.severity

    def weight(self, after_fix: bool) -> float:
        return WEIGHTS[self.severity_for(after_fix)] * self.factor * (RESIDUAL[self.fix] if after_fix else 1.0)


@dataclass(frozen=True)
class Unit:
    """One scanned file, reduced to what the score needs."""

    path: str
    lines: int
    kind: str
    weight: float  # 0 for environment files and files that could not be scanned: they hold no code to port
    items: Tuple[Item, ...]
    part: str = PRODUCT  # product, tests, examples, benchmarks or docs (portcheck.parts)


@dataclass(frozen=True)
class FileScore:
    path: str
    score: float
    score_after_fix: float
    lines: int
    findings: int

    def to_dict(self) -> Dict[str, Any]:
        return {
            "path": self.path,
            "score": self.score,
            "score_after_fix": self.score_after_fix,
            "lines": self.lines,
            "findings": self.findings,
        }


@dataclass(frozen=True)
class DirectoryScore:
    path: str  # "." is the root: everything scanned
    score: float
    score_after_fix: float
    grade: str
    lines: int
    files: int
    findings: int

    def to_dict(self) -> Dict[str, Any]:
        return {
            "path": self.path,
            "score": self.score,
            "score_after_fix": self.score_after_fix,
            "grade": self.grade,
            "lines": self.lines,
            "files": self.files,
            "findings": self.findings,
        }


@dataclass(frozen=True)
class PartScore:
    """The score of one part of the project (product code, tests, examples, benchmarks, docs)."""

    part: str
    score: float
    score_after_fix: float
    grade: str
    files: int
    findings: int

    def to_dict(self) -> Dict[str, Any]:
        return {
            "part": self.part,
            "score": self.score,
            "score_after_fix": self.score_after_fix,
            "grade": self.grade,
            "files": self.files,
            "findings": self.findings,
        }


@dataclass(frozen=True)
class Blocker:
    code: str
    name: str
    count: int
    files: Tuple[str, ...]
    caps: bool  # False when the rule has a pure-PyTorch fallback

    def to_dict(self) -> Dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "count": self.count,
            "files": list(self.files),
            "caps_score": self.caps,
        }


@dataclass(frozen=True)
class RuleImpact:
    """One rule's share of the work: its findings, its work points, and what the score gains when they are all gone."""

    code: str
    name: str
    severity: Severity  # the highest among its findings
    fix: str
    count: int
    files: int
    points: float
    work: float = 0.0  # the rule's share of the scope's work W

    def to_dict(self) -> Dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "fix": self.fix,
            "count": self.count,
            "files": self.files,
            "points": self.points,
            "work": self.work,
        }


@dataclass(frozen=True)
class Effort:
    by_severity: Mapping[str, int]
    by_fix: Mapping[str, int]
    kernel_lines: int  # lines of custom kernel sources (.cu/.cuh, CUDA C++) with kernel findings
    kernel_files: int
    blockers: Tuple[Blocker, ...]
    rules: Tuple[RuleImpact, ...]  # most points first, then most work
    blocker_cap: float
    environment_penalty: float
    work: float = 0.0  # W of the headline scope
    kernels: int = 0  # custom kernels with no fallback: kernel source files plus Triton kernels
    triton_kernels: int = 0
    # Non-CUDA accelerators the product code names, and whether it counts as already running on more than CUDA
    backends: Tuple[str, ...] = ()
    device_generic: bool = False

    def to_dict(self) -> Dict[str, Any]:
        return {
            "by_severity": dict(self.by_severity),
            "by_fix": dict(self.by_fix),
            "kernel_lines": self.kernel_lines,
            "kernel_files": self.kernel_files,
            "kernels": self.kernels,
            "triton_kernels": self.triton_kernels,
            "backends": list(self.backends),
            "device_generic": self.device_generic,
            "blockers": [b.to_dict() for b in self.blockers],
            "rules": [r.to_dict() for r in self.rules],
            "blocker_cap": self.blocker_cap,
            "environment_penalty": self.environment_penalty,
            "work": self.work,
        }


@dataclass(frozen=True)
class ScoreCard:
    """A target's readiness: the headline (product code) score now and after `portcheck fix`, the other parts
    beside it, per file and directory, and why the grade is what it is."""

    target: Target
    score: float
    score_after_fix: float
    grade: str
    grade_after_fix: str
    lines: int  # lines of code in the headline scope
    effort: Effort
    files: Tuple[FileScore, ...]  # files with findings, worst first
    directories: Tuple[DirectoryScore, ...]  # the root and every directory with findings, worst first
    headline: str = PRODUCT  # the part the headline scores: product, or "all" when nothing is product code
    parts: Tuple[PartScore, ...] = ()  # every part that has files, product first
    whole_score: float = 100.0  # the whole scan, every part together
    clean_directories: int = 0  # directories with files but no scored finding, left out of `directories`
    why: Tuple[str, ...] = ()  # "why this grade": the caps that bind and the top contributors, in words

    @property
    def band(self) -> str:
        return band_label(self.grade)

    @property
    def band_after_fix(self) -> str:
        return band_label(self.grade_after_fix)

    def to_json_top(self) -> Dict[str, Any]:
        return {
            "score": self.score,
            "score_after_fix": self.score_after_fix,
            "grade": self.grade,
            "grade_after_fix": self.grade_after_fix,
            "headline": self.headline,
            "whole_score": self.whole_score,
            "parts": [p.to_dict() for p in self.parts],
            "why": list(self.why),
            "effort": self.effort.to_dict(),
            "files": [f.to_dict() for f in self.files],
            "directories": [d.to_dict() for d in self.directories],
            "clean_directories": self.clean_directories,
        }


def target_severity(finding: Finding, rule: Optional[Rule], scanned: Target, target: Target) -> Severity:
    """The finding's severity for `target`: as found when the scan ran for it, else the rule's, lowered when guarded."""
    if rule is None or scanned is target:
        return finding.severity
    severity = rule.severity_for(target)
    return severity.lowered() if finding.guarded else severity


def fix_class(finding: Finding, rule: Optional[Rule], target: Target) -> str:
    """What `portcheck fix --target <target>` does with the finding, as the fixer decided for its node
    (`Finding.fixes`); nothing the fixer would not do counts as fixable."""
    verdict = dict(finding.fixes).get(target.value)
    return {"safe": SAFE, "unsafe": UNSAFE}.get(verdict or "", MANUAL)


def own_packages(paths: Iterable[str]) -> frozenset:
    """Top-level names the scanned project itself provides (`pkg/...`, `src/pkg/...`, `pkg.py`)."""
    names = set()
    for path in paths:
        segments = [s for s in path.replace("\\", "/").split("/") if s not in ("", ".")]
        if segments and segments[0] == "src" and len(segments) > 2:
            segments = segments[1:]
        if len(segments) > 1:
            names.add(segments[0])
        elif segments and segments[0].endswith(".py"):
            names.add(segments[0][:-3])
    return frozenset(names)


def _kernel_size(lines: int) -> float:
    return max(KERNEL_FLOOR, math.sqrt(max(lines, 1) / KERNEL_LINES))


_FIX_ORDER = {MANUAL: 0, UNSAFE: 1, SAFE: 2}


def _unit(
    fr: FileResult,
    rules: Mapping[str, Rule],
    scanned: Target,
    target: Target,
    own: frozenset = frozenset(),
    patterns: Optional[Mapping[str, Sequence[str]]] = None,
    generic: bool = False,
) -> Unit:
    env_file = fr.kind in ENV_KINDS
    severities = [target_severity(f, rules.get(f.code), scanned, target) for f in fr.findings]
    # A kernel source file weighs its size once, carried by its most severe whole-file finding (unguarded first).
    sources = [
        k
        for k, f in enumerate(fr.findings)
        if f.code in KERNEL_SOURCE_RULES
        and fr.kind not in ENV_KINDS
        and fr.kind != "python"
        and severities[k] is not Severity.OFF
    ]
    # Ties go to the finding a fix leaves (manual before unsafe before safe), then to the finding's
    # place, never to the order findings arrive in.
    sized = min(
        sources,
        key=lambda k: (
            -severities[k].rank,
            fr.findings[k].guarded,
            _FIX_ORDER.get(fix_class(fr.findings[k], rules.get(fr.findings[k].code), target), 3),
            fr.findings[k].sort_key(),
        ),
        default=-1,
    )
    # the places of the findings the default `fix` run fixes: what ends the lowering of `lowered_until` findings
    fixed = {(f.line, f.column) for f in fr.findings if fix_class(f, rules.get(f.code), target) == SAFE}
    items = []
    for k, f in enumerate(fr.findings):
        rule = rules.get(f.code)
        severity = severities[k]
        if severity is Severity.OFF:
            continue
        env = env_file or (rule is not None and rule.repo_level and posixpath.basename(fr.path) == SETUP_PY)
        after = f.unlowered if scanned is target and fixed.issuperset(f.lowered_until) else None
        if env:
            severity = _as_env(severity, f)
        elif generic and f.category != KERNEL_CATEGORY and not f.guarded:
            severity = severity.lowered()  # one branch of a dispatch the project already has
            after = after.lowered() if after is not None else None
        factor = CATEGORY_FACTOR.get(f.category, 1.0)
        if f.category == PACKAGE_CATEGORY and not env:
            imported = _IMPORTED.match(f.source_line)
            if imported is not None and imported.group(1) in own:
                factor = 0.0  # the project's own package: its kernels are counted where they are written
        size, kernel = 0.0, False
        if k == sized:
            size, kernel = _kernel_size(fr.lines), not f.guarded
        elif f.code == TRITON_RULE and _TRITON_DEF.match(f.source_line):
            size, kernel = _kernel_size(int(TRITON_LINES)), not f.guarded
        items.append(
            Item(
                path=fr.path,
                code=f.code,
                name=f.name,
                category=f.category,
                severity=severity,
                fix=fix_class(f, rule, target),
                caps=Severity.BLOCKER in (severity, after) and not env and not (rule is not None and rule.has_fallback),
                env=env,
                factor=factor,
                size=size,
                kernel=kernel and not env,
                severity_after_fix=None if env else after,
            )
        )
    weight = 0.0 if env_file or fr.error is not None else float(max(fr.lines, 1))
    return Unit(
        path=fr.path, lines=fr.lines, kind=fr.kind, weight=weight, items=tuple(items), part=part_of(fr.path, patterns)
    )


def _as_env(severity: Severity, finding: Finding) -> Severity:
    """Environment evidence weighs at most a minor, one level less behind a platform marker."""
    severity = min(severity, Severity.MINOR, key=lambda s: s.rank)
    return severity.lowered() if PLATFORM_MARKER.search(finding.source_line) else severity


def penalty(items: Iterable[Item], after_fix: bool) -> float:
    """Work of a set of findings. Kernels weigh by size, one by one. The rest are grouped by (rule, severity,
    fix class) over the whole set, and a group of n weighs w * residual * n ** REPEAT: the tenth `.cuda()` is
    the same edit as the first, made again."""
    items = list(items)
    kernels = math.fsum(i.weight(after_fix) * i.size for i in items if i.size > 0)
    groups: Dict[Tuple[str, str, str], List[Item]] = defaultdict(list)
    for i in items:
        if i.size <= 0:
            groups[(i.code, i.severity_for(after_fix).value, i.fix)].append(i)
    return kernels + math.fsum(
        max(i.weight(after_fix) for i in group) * len(group) ** REPEAT for _, group in sorted(groups.items())
    )


def score_of_work(work: float) -> float:
    """S = 100 / (1 + (W / HALF_WORK) ** STEEPNESS): 100 with no work, 50 at HALF_WORK, falling ever slower."""
    if work <= 0.0:
        return 100.0
    return 100.0 / (1.0 + (work / HALF_WORK) ** STEEPNESS)


def file_score(items: Sequence[Item], after_fix: bool) -> float:
    """A file's score from its own work; 100 exactly only when nothing scored remains."""
    work = penalty([i for i in items if not i.env], after_fix) + min(
        ENV_MAX, penalty([i for i in items if i.env], after_fix)
    )
    if work <= 0.0:
        return 100.0
    return min(BELOW_PERFECT, score_of_work(work))


@dataclass(frozen=True)
class _Scope:
    score: float
    cap: float
    env: float
    work: float
    kernels: int


def scope_work(units: Sequence[Unit], after_fix: bool) -> Tuple[float, float]:
    """(work W, environment part of it) of a set of files: the code's work, plus the bounded environment work."""
    code = penalty([i for u in units for i in u.items if not i.env], after_fix)
    env = min(ENV_MAX, penalty([i for u in units for i in u.items if i.env], after_fix))
    return code + env, env


def _scope(units: Sequence[Unit], after_fix: bool) -> _Scope:
    remaining = [i for u in units for i in u.items if i.weight(after_fix) > 0]
    if not remaining:
        return _Scope(100.0, BLOCKER_CAPS[0], 0.0, 0.0, 0)
    work, env = scope_work(units, after_fix)
    blockers = {i.code for i in remaining if i.caps and i.severity_for(after_fix) is Severity.BLOCKER}
    cap = BLOCKER_CAPS[min(len(blockers), len(BLOCKER_CAPS) - 1)]
    kernels = sum(1 for i in remaining if i.kernel)
    if kernels >= MANY_KERNELS:
        cap = min(cap, MANY_KERNELS_CAP)
    return _Scope(min(BELOW_PERFECT, cap, score_of_work(work)), cap, env, work, kernels)


def scope_score(units: Sequence[Unit], after_fix: bool) -> Tuple[float, float, float]:
    """(score, cap, environment work) of a set of files, unrounded."""
    s = _scope(units, after_fix)
    return s.score, s.cap, s.env


def _directories(units: Sequence[Unit]) -> Tuple[Tuple[DirectoryScore, ...], int]:
    """The root and every directory with a scored finding, worst first; and how many clean directories were left out."""
    members: Dict[str, List[Unit]] = defaultdict(list)
    for u in units:
        for d in folders_above(u.path):
            members[d].append(u)
    out = []
    clean = 0
    for d, group in [(ROOT, list(units))] + sorted(members.items()):
        if not group or (d != ROOT and len(group) == len(units)):
            continue  # a folder holding every scanned file (`src`, or `../..` above one file) is the root again
        score = _round(scope_score(group, False)[0])
        if d != ROOT and score >= 100.0:
            clean += 1
            continue
        out.append(
            DirectoryScore(
                path=d,
                score=score,
                score_after_fix=_round(scope_score(group, True)[0]),
                grade=grade_for(score),
                lines=sum(u.lines for u in group),
                files=len(group),
                findings=sum(len(u.items) for u in group),
            )
        )
    out.sort(key=lambda s: (s.score, s.score_after_fix, s.path))
    return tuple(out), clean


def _files(units: Sequence[Unit]) -> Tuple[FileScore, ...]:
    out = [
        FileScore(
            path=u.path,
            score=_round(file_score(u.items, False)),
            score_after_fix=_round(file_score(u.items, True)),
            lines=u.lines,
            findings=len(u.items),
        )
        for u in units
        if u.items
    ]
    out.sort(key=lambda s: (s.score, s.score_after_fix, s.path))
    return tuple(out)


def _usual_fix(items: Sequence[Item]) -> str:
    """The fix class most of a rule's findings have; on a tie, the one that takes more work."""
    counts = Counter(i.fix for i in items)
    return max(FIX_CLASSES, key=lambda c: (counts.get(c, 0), FIX_CLASSES.index(c)))


def _without(units: Sequence[Unit], code: str) -> List[Unit]:
    return [
        replace(u, items=tuple(i for i in u.items if i.code != code)) if any(i.code == code for i in u.items) else u
        for u in units
    ]


def _rule_impacts(units: Sequence[Unit], score: float, work: float) -> Tuple[RuleImpact, ...]:
    by_code: Dict[str, List[Item]] = defaultdict(list)
    for u in units:
        for i in u.items:
            by_code[i.code].append(i)
    out = []
    for code, items in by_code.items():
        without = _without(units, code)
        top = max(items, key=lambda i: i.severity.rank)
        out.append(
            RuleImpact(
                code=code,
                name=items[0].name,
                severity=top.severity,
                fix=_usual_fix(items),
                count=len(items),
                files=len({i.path for i in items}),
                points=max(0.0, _round(_round(scope_score(without, False)[0]) - score)),
                work=_round(max(0.0, work - scope_work(without, False)[0])),
            )
        )
    out.sort(key=lambda r: (-r.points, -r.work, -r.severity.rank, -r.count, r.code))
    return tuple(out)


def _effort(units: Sequence[Unit], score: float, scope: _Scope) -> Effort:
    items = [i for u in units for i in u.items]
    severities = Counter(i.severity for i in items)
    fixes = Counter(i.fix for i in items)
    kernel_units = [
        u
        for u in units
        if u.kind not in ENV_KINDS
        and u.kind != "python"
        and any(i.category == "kernel" and i.size > 0 for i in u.items)
    ]
    blockers: Dict[str, List[Item]] = defaultdict(list)
    for i in items:
        if i.severity is Severity.BLOCKER:
            blockers[i.code].append(i)
    return Effort(
        by_severity={s.value: severities.get(s, 0) for s in Severity if s is not Severity.OFF},
        by_fix={c: fixes.get(c, 0) for c in FIX_CLASSES},
        kernel_lines=sum(u.lines for u in kernel_units),
        kernel_files=len(kernel_units),
        blockers=tuple(
            Blocker(
                code=code,
                name=group[0].name,
                count=len(group),
                files=tuple(sorted({i.path for i in group})),
                caps=any(i.caps for i in group),
            )
            for code, group in sorted(blockers.items())
        ),
        rules=_rule_impacts(units, score, scope.work),
        blocker_cap=scope.cap,
        environment_penalty=_round(scope.env),
        work=_round(scope.work),
        kernels=sum(1 for i in items if i.kernel),
        triton_kernels=sum(1 for i in items if i.kernel and i.code == TRITON_RULE),
    )


def _why(score: float, effort: Effort, headline: str, parts: Sequence[PartScore], top: int = 3) -> Tuple[str, ...]:
    """Why the headline is what it is, in words: the cap that binds, the rules that cost most, the other parts."""
    out = []
    capping = [b.code for b in effort.blockers if b.caps]
    if effort.kernels >= MANY_KERNELS and score >= MANY_KERNELS_CAP - 0.05 and effort.blocker_cap == MANY_KERNELS_CAP:
        out.append(
            f"{effort.kernels} custom kernels with no fallback cap the score at {MANY_KERNELS_CAP:.0f} (re-engineering)"
        )
    elif capping and score >= effort.blocker_cap - 0.05:
        out.append(
            f"{len(capping)} blocker rule{'s' if len(capping) != 1 else ''} with no fallback "
            f"({', '.join(capping)}) cap{'s' if len(capping) == 1 else ''} the score at {effort.blocker_cap:.0f}"
        )
    if effort.kernel_files or effort.triton_kernels:
        pieces = []
        if effort.kernel_files:
            pieces.append(
                f"{effort.kernel_lines:,} lines of CUDA in {effort.kernel_files} "
                f"file{'s' if effort.kernel_files != 1 else ''}"
            )
        if effort.triton_kernels:
            pieces.append(f"{effort.triton_kernels} Triton kernel{'s' if effort.triton_kernels != 1 else ''}")
        out.append("custom kernels: " + ", ".join(pieces))
    shown = [r for r in effort.rules if r.work > 0][:top]
    for r in shown:
        share = 100.0 * r.work / effort.work if effort.work > 0 else 0.0
        out.append(
            f"{r.code} {r.name}: {r.count} finding{'s' if r.count != 1 else ''} in {r.files} "
            f"file{'s' if r.files != 1 else ''}, {share:.0f}% of the work"
        )
    if effort.device_generic:
        named = [b for b in effort.backends if b != ABSTRACTION]
        how = ["a device abstraction"] if ABSTRACTION in effort.backends else []
        if named:
            how.append("dispatches to " + ", ".join(named))
        out.append(
            f"the code already runs on more than CUDA ({'; '.join(how)}): "
            "its CUDA-specific code outside kernels weighs one level less"
        )
    if effort.environment_penalty > 0:
        out.append(
            f"environment files (images, pins, launchers): {effort.environment_penalty:.1f} work points, "
            f"bounded at {ENV_MAX:.0f}"
        )
    others = [p for p in parts if p.part != headline]
    if headline == PRODUCT and others:
        out.append("scored beside product code: " + ", ".join(f"{p.part} {p.score:.1f} {p.grade}" for p in others))
    return tuple(out)


def _part_scores(units: Sequence[Unit]) -> Tuple[PartScore, ...]:
    out = []
    for part in PARTS:
        group = [u for u in units if u.part == part]
        if not group:
            continue
        score = _round(scope_score(group, False)[0])
        out.append(
            PartScore(
                part=part,
                score=score,
                score_after_fix=_round(scope_score(group, True)[0]),
                grade=grade_for(score),
                files=len(group),
                findings=sum(len(u.items) for u in group),
            )
        )
    return tuple(out)


def score_units(units: Sequence[Unit], target: Target, backends: Iterable[str] = ()) -> ScoreCard:
    """The ScoreCard of `units`; `backends` are the non-CUDA accelerators the product code names (the units'
    items are already weighed for them, see `score_scan`), reported in the effort and in why."""
    units = sorted(units, key=lambda u: u.path)
    named = tuple(sorted(set(backends)))
    generic = device_generic(frozenset(named), SEVERAL_BACKENDS)
    product = [u for u in units if u.part == PRODUCT]
    headline, scope_units = (PRODUCT, product) if product else (ALL, units)
    scope = _scope(scope_units, False)
    after = _scope(scope_units, True).score
    score, score_after_fix = _round(scope.score), _round(after)
    parts = _part_scores(units)
    effort = replace(_effort(scope_units, score, scope), backends=named, device_generic=generic)
    directories, clean = _directories(units)
    return ScoreCard(
        target=target,
        score=score,
        score_after_fix=score_after_fix,
        grade=grade_for(score),
        grade_after_fix=grade_for(score_after_fix),
        lines=sum(u.lines for u in scope_units if u.weight > 0),
        effort=effort,
        files=_files(units),
        directories=directories,
        headline=headline,
        parts=parts,
        whole_score=_round(scope_score(units, False)[0]),
        clean_directories=clean,
        why=_why(score, effort, headline, parts),
    )


def score_scan(
    scan: ScanResult, catalog: Any, target: Target, parts: Optional[Mapping[str, Sequence[str]]] = None
) -> ScoreCard:
    """The scan's ScoreCard for `target`. `catalog` supplies fix recipes and fallbacks; None scores from findings
    alone. `parts` replaces the path patterns of the parts it names (`[tool.portcheck.parts]`)."""
    target = Target(target)
    rules = {code: entry.rule for code, entry in catalog.by_code().items()} if catalog is not None else {}
    own = own_packages(fr.path for fr in scan.files)
    named = project_backends(scan.files, parts)
    generic = device_generic(named, SEVERAL_BACKENDS)
    return score_units(
        [_unit(fr, rules, scan.target, target, own, parts, generic) for fr in scan.files], target, named
    )


def project_backends(
    files: Iterable[FileResult], parts: Optional[Mapping[str, Sequence[str]]] = None
) -> frozenset:
    """The non-CUDA accelerators (and the device abstraction) that the product code names; the whole scan's
    when nothing scanned is product code. Tests and examples naming `xpu` say nothing about the product."""
    files = list(files)
    product = [fr for fr in files if part_of(fr.path, parts) == PRODUCT]
    return frozenset(b for fr in (product or files) for b in fr.backends)
