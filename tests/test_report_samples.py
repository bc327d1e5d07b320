"""A small, fixed project used by the score and report tests: rules, findings per target, and the report.

Fixed paths, no timestamps, no file system: every report rendered from it is byte-for-byte repeatable.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Dict, Optional, Sequence

from portcheck.catalog import Catalog, CompiledRule
from portcheck.model import TARGETS, FileError, FileResult, Finding, FixSafety, Rule, ScanResult, Severity, Target
from portcheck.report.model import Report, build_report

ALL_FIXES = {"generic": {"kind": "x"}, "cpu": {"kind": "x"}, "neuron": {"kind": "x"}, "xla": {"kind": "x"}}


def make_rule(code: str, name: str, category: str, severities: Sequence[str], safety: FixSafety = FixSafety.NONE,
              has_fallback: bool = False, repo_level: bool = False, references: Sequence[str] = ()) -> Rule:
    """`severities` lists neuron, xla, generic."""
    return Rule(
        code=code,
        name=name,
        category=category,
        severity={t: Severity(s) for t, s in zip(TARGETS, severities)},
        summary=f"{name.replace('-', ' ').capitalize()}",
        why=f"Why {code} matters.\nIt fails off CUDA.",
        bad="model.cuda()",
        good="model.to(device)",
        fix=f"Fix {code} by hand." if safety is FixSafety.NONE else f"`portcheck fix` rewrites {code}.",
        fix_safety=safety,
        source_file="sample.toml",
        autofix=ALL_FIXES if safety is not FixSafety.NONE else {},
        has_fallback=has_fallback,
        repo_level=repo_level,
        references=tuple(references),
    )


RULES = (
    make_rule("DEV001", "cuda-device-string", "device", ("minor", "minor", "minor"), FixSafety.SAFE,
              references=("https://docs.pytorch.org/docs/stable/accelerator.html",)),
    make_rule("DEV002", "dot-cuda-call", "device", ("minor", "minor", "minor"), FixSafety.SAFE),
    make_rule("DEV004", "cuda-device-check", "device", ("major", "major", "major"), FixSafety.UNSAFE),
    make_rule("DEV005", "cuda-availability-check", "device", ("major", "major", "major"), FixSafety.SAFE),
    make_rule("KRN002", "cuda-source-file", "kernel", ("blocker", "blocker", "major")),
    make_rule("KRN003", "triton-kernel", "kernel", ("blocker", "blocker", "major"), has_fallback=True),
    make_rule("PKG008", "nvidia-wheels", "package", ("minor", "minor", "minor"), repo_level=True),
    make_rule("BK001", "cudnn-benchmark", "backend-flag", ("info", "info", "info")),
)
BY_CODE = {r.code: r for r in RULES}
CATALOG = Catalog(
    rules=tuple(
        CompiledRule(rule=r, matchers=(), text_matchers=(), message=r.summary, fallback=False, guard=True)
        for r in RULES
    ),
    digest="sample",
)


def finding(
    path: str,
    line: int,
    code: str,
    source: str,
    target: Target = Target.GENERIC,
    column: int = 1,
    message: Optional[str] = None,
    guarded: bool = False,
    cell: Optional[int] = None,
) -> Finding:
    rule = BY_CODE[code]
    severity = rule.severity_for(target)
    if guarded:
        severity = severity.lowered()
    return Finding(
        path=path,
        line=line,
        column=column,
        end_line=line,
        end_column=column + max(1, len(source) // 2),
        code=code,
        name=rule.name,
        category=rule.category,
        severity=severity,
        message=message or rule.summary,
        fixable=rule.fix_safety is FixSafety.SAFE,
        fix_safety=rule.fix_safety,
        # As if the fixer fixed every finding its rule has a fix for, on every target.
        fixes=tuple((t, rule.fix_safety.value) for t in ("generic", "neuron", "xla")) if rule.fixable else (),
        cell=cell,
        source_line=source,
        guarded=guarded,
        note="lowered one level: guarded" if guarded else "",
    )


def sample_scan(target: Target = Target.GENERIC) -> ScanResult:
    """A project with a training script, a model package, a CUDA kernel, a notebook, requirements and a broken file."""
    t = target
    files = (
        FileResult(
            "broken.py", error=FileError("broken.py", "syntax error: invalid syntax", line=3, column=5), lines=40
        ),
        FileResult(
            "csrc/kernels/attention.cu",
            (
                finding(
                    "csrc/kernels/attention.cu",
                    1,
                    "KRN002",
                    "#include <cuda_runtime.h>",
                    t,
                    message="CUDA source file (800 lines)",
                ),
            ),
            lines=800,
            kind="cuda",
        ),
        FileResult("models/clean.py", (), lines=200),
        FileResult(
            "models/net.py",
            (
                finding("models/net.py", 10, "DEV002", "self.proj = self.proj.cuda()", t, column=21),
                finding("models/net.py", 22, "DEV002", "h = h.cuda(non_blocking=True)", t, column=13),
                finding("models/net.py", 31, "DEV002", "return out.cuda()", t, column=16),
                finding("models/net.py", 40, "KRN003", "fused_kernel[grid](x, y)", t, guarded=True),
                finding("models/net.py", 55, "BK001", "torch.backends.cudnn.benchmark = True", t),
            ),
            lines=300,
        ),
        FileResult(
            "notebooks/demo.ipynb",
            (finding("notebooks/demo.ipynb", 2, "DEV001", "x = x.to('cuda')", t, column=10, cell=3),),
            lines=40,
            kind="notebook",
        ),
        FileResult(
            "requirements.txt",
            (finding("requirements.txt", 4, "PKG008", "nvidia-cudnn-cu12==9.1.0", t),),
            lines=10,
            kind="requirements",
        ),
        FileResult(
            "train.py",
            (
                finding(
                    "train.py", 12, "DEV001", "device = 'cuda' if torch.cuda.is_available() else 'cpu'", t, column=10
                ),
                finding(
                    "train.py",
                    12,
                    "DEV005",
                    "device = 'cuda' if torch.cuda.is_available() else 'cpu'",
                    t,
                    column=19,
                    message="`torch.cuda.is_available()` is False off CUDA: the code falls back to the CPU",
                ),
                finding(
                    "train.py",
                    30,
                    "DEV004",
                    'if x.device.type == "cuda" or flags | MASK:',
                    t,
                    column=4,
                    message='Device check <x.device.type == "cuda"> is false on 100% of other accelerators, really',
                ),
                finding("train.py", 47, "DEV001", "batch = {k: v.to('cuda') for k, v in batch.items()}", t, column=19),
            ),
            lines=120,
        ),
    )
    return ScanResult(target=t, files=files)


def sample_report(targets: Sequence[Target] = (Target.GENERIC,), statistics: bool = False) -> Report:
    """The report the CLI would build: the primary scan's findings, every target scored from its own scan
    (and, with several targets, each target's own scan for its section)."""
    from portcheck.score import score_scan

    primary = Target.GENERIC if len(targets) > 1 else targets[0]
    per_target = {t: sample_scan(t) for t in targets} if len(targets) > 1 else None
    report = build_report(
        sample_scan(primary), CATALOG, targets=targets, statistics=statistics, with_scores=False, per_target=per_target
    )
    return replace(report, scores={t: score_scan(sample_scan(t), CATALOG, t) for t in targets})


def clean_report() -> Report:
    scan = ScanResult(target=Target.GENERIC, files=(FileResult("pkg/ok.py", (), lines=50),))
    return sample_report_from(scan)


def sample_report_from(scan: ScanResult, statistics: bool = False) -> Report:
    from portcheck.score import score_scan

    report = build_report(scan, CATALOG, targets=(scan.target,), statistics=statistics, with_scores=False)
    return replace(report, scores={scan.target: score_scan(scan, CATALOG, scan.target)})


def test_per_target_scans_differ_only_in_severity():
    scans: Dict[Target, ScanResult] = {t: sample_scan(t) for t in TARGETS}
    keys = {t: [(f.path, f.line, f.column, f.code) for f in s.findings] for t, s in scans.items()}
    assert keys[Target.NEURON] == keys[Target.XLA] == keys[Target.GENERIC]
    kernel = {t: next(f.severity for f in s.findings if f.code == "KRN002") for t, s in scans.items()}
    assert kernel == {Target.NEURON: Severity.BLOCKER, Target.XLA: Severity.BLOCKER, Target.GENERIC: Severity.MAJOR}


def test_sample_findings_are_in_report_order():
    findings = sample_scan().findings
    assert list(findings) == sorted(findings, key=Finding.sort_key)


GOLDEN = Path(__file__).resolve().parent / "data" / "golden"


def assert_golden(name: str, actual: str) -> None:
    """Compare with tests/data/golden/<name>; PORTCHECK_UPDATE_GOLDEN=1 rewrites it (review the diff)."""
    path = GOLDEN / name
    if os.environ.get("PORTCHECK_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, (
        f"{name} differs from the golden file; rerun with PORTCHECK_UPDATE_GOLDEN=1 and review the diff"
    )
