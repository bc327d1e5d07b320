"""Readiness scores: 0-100 per target for every file, every directory and the whole scan, plus the effort behind them.

Pure functions of the findings and the file sizes; README, "Readiness score", gives the formula and its reasons.
"""

from __future__ import annotations

import math
import posixpath
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from portcheck.model import FileResult, Finding, FixSafety, Rule, ScanResult, Severity, Target

# Impact of one finding left alone, by severity. Info findings are reported but cost nothing.
WEIGHTS: Mapping[Severity, float] = {
    Severity.BLOCKER: 60.0,
    Severity.MAJOR: 12.0,
    Severity.MINOR: 3.0,
    Severity.INFO: 0.0,
    Severity.OFF: 0.0,
}

# Fix classes, and the share of a finding's weight left after `portcheck fix`.
SAFE, UNSAFE, MANUAL = "safe", "unsafe", "manual"
FIX_CLASSES: Tuple[str, ...] = (SAFE, UNSAFE, MANUAL)
FIX_LABELS: Mapping[str, str] = {SAFE: "safe autofix", UNSAFE: "unsafe autofix", MANUAL: "needs a person"}
# `score_after_fix` is the score after `portcheck fix` in its default mode: safe fixes are applied,
# unsafe ones wait for --unsafe-fixes and a review, so they still count in full.
RESIDUAL: Mapping[str, float] = {SAFE: 0.0, UNSAFE: 1.0, MANUAL: 1.0}

SCALE = 50.0  # S_file = 100 * exp(-P / SCALE)
# Cap on a scope's score by the number of distinct blocker rules without a pure-PyTorch fallback (0, 1, 2, 3+).
BLOCKER_CAPS: Tuple[float, ...] = (100.0, 50.0, 35.0, 25.0)
ENV_RATE, ENV_MAX = 0.5, 20.0  # environment penalty = min(ENV_MAX, ENV_RATE * P_env)
# 100 is kept for "nothing left to do": any scored finding keeps a score at or below this.
BELOW_PERFECT = 99.9

# Files that describe the environment (dependencies, images, launchers, builds) rather than code to port.
ENV_KINDS = frozenset({"requirements", "pyproject", "conda", "dockerfile", "shell", "cmake"})
KERNEL_KINDS = frozenset({"cuda"})
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
    """A finding as the score sees it: its severity for the target and what fixing it takes."""

    path: str
    code: str
    name: str
    category: str
    severity: Severity
    fix: str  # one of FIX_CLASSES
    caps: bool  # a blocker with no pure-PyTorch fallback: it caps the score of every scope it is in
    env: bool  # environment evidence: scored once per scope, outside the lines-weighted mean

    def weight(self, after_fix: bool) -> float:
        return WEIGHTS[self.severity] * (RESIDUAL[self.fix] if after_fix else 1.0)


@dataclass(frozen=True)
class Unit:
    """One scanned file, reduced to what the score needs."""

    path: str
    lines: int
    kind: str
    weight: float  # share in the lines-weighted mean: 0 for environment files and files that could not be scanned
    items: Tuple[Item, ...]


@dataclass(frozen=True)
class FileScore:
    path: str
    score: float
    score_after_fix: float
    lines: int
    findings: int

    def to_dict(self) -> Dict[str, Any]:
        return {"path": self.path, "score": self.score, "score_after_fix": self.score_after_fix,
                "lines": self.lines, "findings": self.findings}


@dataclass(frozen=True)
class DirectoryScore:
    path: str
    score: float
    score_after_fix: float
    grade: str
    lines: int
    files: int
    findings: int

    def to_dict(self) -> Dict[str, Any]:
        return {"path": self.path, "score": self.score, "score_after_fix": self.score_after_fix, "grade": self.grade,
                "lines": self.lines, "files": self.files, "findings": self.findings}


@dataclass(frozen=True)
class Blocker:
    code: str
    name: str
    count: int
    files: Tuple[str, ...]
    caps: bool  # False when the rule has a pure-PyTorch fallback

    def to_dict(self) -> Dict[str, Any]:
        return {"code": self.code, "name": self.name, "count": self.count, "files": list(self.files), "caps_score": self.caps}


@dataclass(frozen=True)
class RuleImpact:
    """One rule's share of the work: its findings, and the points the score gains when they are all gone."""

    code: str
    name: str
    severity: Severity  # the highest among its findings
    fix: str
    count: int
    files: int
    points: float

    def to_dict(self) -> Dict[str, Any]:
        return {"code": self.code, "name": self.name, "severity": self.severity.value, "fix": self.fix,
                "count": self.count, "files": self.files, "points": self.points}


@dataclass(frozen=True)
class Effort:
    by_severity: Mapping[str, int]
    by_fix: Mapping[str, int]
    kernel_lines: int  # lines of custom kernel sources (.cu/.cuh) with kernel findings
    kernel_files: int
    blockers: Tuple[Blocker, ...]
    rules: Tuple[RuleImpact, ...]  # most points first
    blocker_cap: float
    environment_penalty: float

    def to_dict(self) -> Dict[str, Any]:
        return {
            "by_severity": dict(self.by_severity),
            "by_fix": dict(self.by_fix),
            "kernel_lines": self.kernel_lines,
            "kernel_files": self.kernel_files,
            "blockers": [b.to_dict() for b in self.blockers],
            "rules": [r.to_dict() for r in self.rules],
            "blocker_cap": self.blocker_cap,
            "environment_penalty": self.environment_penalty,
        }


@dataclass(frozen=True)
class ScoreCard:
    """A target's readiness: the scan's score now and after `portcheck fix`, per file and directory."""

    target: Target
    score: float
    score_after_fix: float
    grade: str
    grade_after_fix: str
    lines: int  # lines of code in the lines-weighted mean
    effort: Effort
    files: Tuple[FileScore, ...]  # files with findings, worst first
    directories: Tuple[DirectoryScore, ...]  # every directory holding a scanned file, worst first

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
            "effort": self.effort.to_dict(),
            "files": [f.to_dict() for f in self.files],
            "directories": [d.to_dict() for d in self.directories],
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


def _unit(fr: FileResult, rules: Mapping[str, Rule], scanned: Target, target: Target) -> Unit:
    env_file = fr.kind in ENV_KINDS
    items = []
    for f in fr.findings:
        rule = rules.get(f.code)
        severity = target_severity(f, rule, scanned, target)
        if severity is Severity.OFF:
            continue
        items.append(Item(
            path=fr.path,
            code=f.code,
            name=f.name,
            category=f.category,
            severity=severity,
            fix=fix_class(f, rule, target),
            caps=severity is Severity.BLOCKER and not (rule is not None and rule.has_fallback),
            env=env_file or (rule is not None and rule.repo_level and posixpath.basename(fr.path) == SETUP_PY),
        ))
    weight = 0.0 if env_file or fr.error is not None else float(max(fr.lines, 1))
    return Unit(path=fr.path, lines=fr.lines, kind=fr.kind, weight=weight, items=tuple(items))


def penalty(items: Iterable[Item], after_fix: bool) -> float:
    """P = sum over (rule, severity, fix class) of weight * residual * (1 + log2 n): a repeated edit is the same edit."""
    groups = Counter((i.code, i.severity.value, i.fix) for i in items)
    return math.fsum(
        WEIGHTS[Severity(sev)] * (RESIDUAL[fix] if after_fix else 1.0) * (1.0 + math.log2(n))
        for (_, sev, fix), n in sorted(groups.items())
    )


def file_score(items: Sequence[Item], after_fix: bool) -> float:
    """100 * exp(-P / SCALE), unrounded; 100 exactly only when nothing scored remains."""
    p = penalty(items, after_fix)
    if p <= 0.0:
        return 100.0
    return min(BELOW_PERFECT, 100.0 * math.exp(-p / SCALE))


def scope_score(units: Sequence[Unit], after_fix: bool) -> Tuple[float, float, float]:
    """(score, blocker cap, environment penalty) of a set of files, unrounded."""
    pairs = [(u.weight, file_score([i for i in u.items if not i.env], after_fix) if u.items else 100.0)
             for u in units if u.weight > 0]
    total = math.fsum(w for w, _ in pairs)
    mean = math.fsum(w * s for w, s in pairs) / total if total > 0 else 100.0
    remaining = [i for u in units for i in u.items if i.weight(after_fix) > 0]
    if not remaining:
        return 100.0, BLOCKER_CAPS[0], 0.0
    blockers = {i.code for i in remaining if i.caps}
    cap = BLOCKER_CAPS[min(len(blockers), len(BLOCKER_CAPS) - 1)]
    env = min(ENV_MAX, ENV_RATE * penalty([i for u in units for i in u.items if i.env], after_fix))
    return min(BELOW_PERFECT, max(0.0, min(mean, cap) - env)), cap, env


def _ancestors(path: str) -> List[str]:
    out = []
    current = posixpath.dirname(path)
    while current and current not in (".", "/") and current not in out:
        out.append(current)
        parent = posixpath.dirname(current)
        if parent == current:
            break
        current = parent
    return out


def _directories(units: Sequence[Unit]) -> Tuple[DirectoryScore, ...]:
    members: Dict[str, List[Unit]] = defaultdict(list)
    for u in units:
        for d in _ancestors(u.path):
            members[d].append(u)
    out = []
    for d, group in members.items():
        score = _round(scope_score(group, False)[0])
        out.append(DirectoryScore(
            path=d,
            score=score,
            score_after_fix=_round(scope_score(group, True)[0]),
            grade=grade_for(score),
            lines=sum(u.lines for u in group),
            files=len(group),
            findings=sum(len(u.items) for u in group),
        ))
    out.sort(key=lambda s: (s.score, s.score_after_fix, s.path))
    return tuple(out)


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


def _rule_impacts(units: Sequence[Unit], score: float) -> Tuple[RuleImpact, ...]:
    by_code: Dict[str, List[Item]] = defaultdict(list)
    for u in units:
        for i in u.items:
            by_code[i.code].append(i)
    out = []
    for code, items in by_code.items():
        without = [Unit(u.path, u.lines, u.kind, u.weight, tuple(i for i in u.items if i.code != code)) for u in units]
        top = max(items, key=lambda i: i.severity.rank)
        out.append(RuleImpact(
            code=code,
            name=items[0].name,
            severity=top.severity,
            fix=_usual_fix(items),
            count=len(items),
            files=len({i.path for i in items}),
            points=max(0.0, _round(_round(scope_score(without, False)[0]) - score)),
        ))
    out.sort(key=lambda r: (-r.points, -r.severity.rank, -r.count, r.code))
    return tuple(out)


def _effort(units: Sequence[Unit], score: float, cap: float, env: float) -> Effort:
    items = [i for u in units for i in u.items]
    severities = Counter(i.severity for i in items)
    fixes = Counter(i.fix for i in items)
    kernel_units = [u for u in units if u.kind in KERNEL_KINDS and any(i.category == "kernel" for i in u.items)]
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
            Blocker(code=code, name=group[0].name, count=len(group), files=tuple(sorted({i.path for i in group})),
                    caps=any(i.caps for i in group))
            for code, group in sorted(blockers.items())
        ),
        rules=_rule_impacts(units, score),
        blocker_cap=cap,
        environment_penalty=_round(env),
    )


def score_units(units: Sequence[Unit], target: Target) -> ScoreCard:
    units = sorted(units, key=lambda u: u.path)
    now, cap, env = scope_score(units, False)
    after = scope_score(units, True)[0]
    score, score_after_fix = _round(now), _round(after)
    return ScoreCard(
        target=target,
        score=score,
        score_after_fix=score_after_fix,
        grade=grade_for(score),
        grade_after_fix=grade_for(score_after_fix),
        lines=sum(u.lines for u in units if u.weight > 0),
        effort=_effort(units, score, cap, env),
        files=_files(units),
        directories=_directories(units),
    )


def score_scan(scan: ScanResult, catalog: Any, target: Target) -> ScoreCard:
    """The scan's ScoreCard for `target`. `catalog` supplies fix recipes and fallbacks; None scores from findings alone."""
    target = Target(target)
    rules = {code: entry.rule for code, entry in catalog.by_code().items()} if catalog is not None else {}
    return score_units([_unit(fr, rules, scan.target, target) for fr in scan.files], target)
