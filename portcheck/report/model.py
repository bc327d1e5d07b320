"""The report object every output format renders: findings, errors, rules used, scores."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from portcheck import __version__
from portcheck.model import FileError, Finding, Rule, ScanResult, Severity, Target


@dataclass(frozen=True)
class Report:
    version: str
    target: Target
    targets: Tuple[Target, ...]  # the targets scored (one, or all three for --target all)
    scan: ScanResult
    rules: Mapping[str, Rule]  # code -> rule, for every code that appears in findings
    scores: Mapping[Target, Any] = field(default_factory=dict)  # Target -> portcheck.score.ScoreCard
    baseline_scores: Mapping[Target, Any] = field(default_factory=dict)  # scores of the baseline, if any
    statistics: bool = False
    per_target: Mapping[Target, ScanResult] = field(default_factory=dict)  # each target's own scan (--target all)

    def for_target(self, target: Target) -> "Report":
        """The one-target report of a scanned target: its own findings, severities, score and baseline score."""
        def only(scores: Mapping[Target, Any]) -> Dict[Target, Any]:
            return {target: scores[target]} if target in scores else {}

        return replace(self, target=target, targets=(target,), scan=self.per_target.get(target, self.scan),
                       scores=only(self.scores), baseline_scores=only(self.baseline_scores), per_target={})

    def sections(self) -> Tuple["Report", ...]:
        """One report per scanned target: what every human-readable format shows, one section (or tab) each."""
        if len(self.targets) <= 1:
            return (self,)
        return tuple(self.for_target(t) for t in self.targets)

    @property
    def findings(self) -> Tuple[Finding, ...]:
        return self.scan.findings

    @property
    def errors(self) -> Tuple[FileError, ...]:
        return self.scan.errors

    @property
    def files_scanned(self) -> int:
        return self.scan.files_scanned

    def counts_by_rule(self) -> List[Tuple[str, int]]:
        counts = Counter(f.code for f in self.findings)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def counts_by_severity(self) -> Dict[str, int]:
        counts = Counter(f.severity.value for f in self.findings)
        return {s.value: counts.get(s.value, 0) for s in Severity if s is not Severity.OFF}


def build_report(
    scan: ScanResult,
    catalog,
    targets: Sequence[Target] = (),
    statistics: bool = False,
    baseline_scan: Optional[ScanResult] = None,
    with_scores: bool = True,
    per_target: Optional[Mapping[Target, ScanResult]] = None,
    parts: Optional[Mapping[str, Sequence[str]]] = None,
) -> Report:
    """Assemble a report: attach rule data and (when scoring is available) scores per target.

    `per_target` holds each target's own scan when several were scanned; `scan` is the primary one.
    `parts` replaces the path patterns that tell product code from tests, examples, benchmarks and docs.
    """
    by_code = catalog.by_code()
    per_target = dict(per_target or {})
    codes = {f.code for s in (scan, *per_target.values()) for f in s.findings}
    rules = {code: by_code[code].rule for code in sorted(codes) if code in by_code}
    targets = tuple(targets) or (scan.target,)
    scores: Dict[Target, Any] = {}
    baseline_scores: Dict[Target, Any] = {}
    if with_scores:
        score_scan: Optional[Callable[..., Any]]
        try:
            from portcheck.score import score_scan as scorer

            score_scan = scorer
        except ImportError:  # scoring not available
            score_scan = None
        if score_scan is not None:
            for t in targets:
                scores[t] = score_scan(per_target.get(t, scan), catalog, t, parts)
                if baseline_scan is not None:
                    baseline_scores[t] = score_scan(baseline_scan, catalog, t, parts)
    return Report(
        version=__version__,
        target=scan.target,
        targets=targets,
        scan=scan,
        rules=rules,
        scores=scores,
        baseline_scores=baseline_scores,
        statistics=statistics,
        per_target=per_target,
    )
