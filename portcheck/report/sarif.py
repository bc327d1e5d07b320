"""SARIF 2.1.0 output, shaped for GitHub code scanning: rule metadata, levels, regions and stable fingerprints."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from typing import Any, Dict, List, Optional
from urllib.parse import quote

from portcheck.model import Finding, Rule, Severity
from portcheck.report.model import Report

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT = "primaryLocationLineHash"

LEVELS = {
    Severity.BLOCKER: "error",
    Severity.MAJOR: "error",
    Severity.MINOR: "warning",
    Severity.INFO: "note",
    Severity.OFF: "none",
}


def artifact_location(path: str) -> Dict[str, str]:
    """A URI for `path`: relative to the checkout (`%SRCROOT%`) unless the path is absolute."""
    if path.startswith("/"):
        return {"uri": "file://" + quote(path, safe="/")}
    return {"uri": quote(path, safe="/"), "uriBaseId": SRCROOT}


def line_hash(finding: Finding) -> str:
    """Hash of what the finding is about, not where: the rule, the source line without spacing, and the file."""
    normalised = re.sub(r"\s+", "", finding.source_line)
    key = "\0".join((finding.code, normalised, finding.path))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def _text(value: str) -> str:
    return value.strip()


def _help_markdown(rule: Rule) -> str:
    parts = [rule.summary, "", _text(rule.why), "", "**Instead of**", "", "```python", _text(rule.bad), "```",
             "", "**write**", "", "```python", _text(rule.good), "```", "", f"**Fix:** {_text(rule.fix)}",
             f"(autofix: {rule.fix_safety.value if rule.fixable else 'none'})"]
    return "\n".join(parts)


def _help_text(rule: Rule) -> str:
    return (f"{rule.summary}\n\n{_text(rule.why)}\n\nInstead of:\n{_text(rule.bad)}\n\nwrite:\n{_text(rule.good)}\n\n"
            f"Fix: {_text(rule.fix)} (autofix: {rule.fix_safety.value if rule.fixable else 'none'})")


def rule_descriptor(code: str, rule: Optional[Rule], sample: Finding, report: Report) -> Dict[str, Any]:
    if rule is None:
        return {
            "id": code,
            "name": sample.name,
            "shortDescription": {"text": sample.message},
            "fullDescription": {"text": sample.message},
            "help": {"text": sample.message, "markdown": sample.message},
            "defaultConfiguration": {"level": LEVELS[sample.severity]},
            "properties": {"tags": ["portability", sample.category]},
        }
    out: Dict[str, Any] = {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": " ".join(_text(rule.why).split()) or rule.summary},
        "help": {"text": _help_text(rule), "markdown": _help_markdown(rule)},
        "defaultConfiguration": {"level": LEVELS[rule.severity_for(report.target)]},
        "properties": {
            "tags": ["portability", rule.category],
            "severity": {t.value: rule.severity_for(t).value for t in rule.severity},
            "fix_safety": rule.fix_safety.value if rule.fixable else "none",
        },
    }
    if rule.references:
        out["helpUri"] = rule.references[0]
    return out


def _region(f: Finding) -> Dict[str, int]:
    end_line = max(f.end_line, f.line)
    end_column = f.end_column if end_line > f.line else max(f.end_column, f.column)
    return {"startLine": f.line, "startColumn": f.column, "endLine": end_line, "endColumn": end_column}


def to_dict(report: Report) -> Dict[str, Any]:
    """One run per scored target (`--target all` gives three), each with its own severities and results."""
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [_run(section) for section in report.sections()]}


def _run(report: Report) -> Dict[str, Any]:
    findings = report.findings
    codes = sorted({f.code for f in findings})
    index = {code: i for i, code in enumerate(codes)}
    samples: Dict[str, Finding] = {}
    for f in findings:
        samples.setdefault(f.code, f)
    rules = [rule_descriptor(code, report.rules.get(code), samples[code], report) for code in codes]

    seen: Counter = Counter()
    results: List[Dict[str, Any]] = []
    for f in findings:
        digest = line_hash(f)
        seen[digest] += 1
        message = f.message if f.cell is None else f"{f.message} (notebook cell {f.cell})"
        result: Dict[str, Any] = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": LEVELS[f.severity],
            "message": {"text": message},
            "locations": [{"physicalLocation": {"artifactLocation": artifact_location(f.path), "region": _region(f)}}],
            "partialFingerprints": {FINGERPRINT: f"{digest}:{seen[digest]}"},
            "properties": {"severity": f.severity.value, "fixable": f.fixable, "fix_safety": f.fix_safety.value},
        }
        if f.cell is not None:
            result["properties"]["cell"] = f.cell
        if f.note:
            result["properties"]["note"] = f.note
        results.append(result)

    notifications = []
    for e in report.errors:
        location: Dict[str, Any] = {"artifactLocation": artifact_location(e.path)}
        if e.line:
            location["region"] = {"startLine": e.line}
        notifications.append({
            "level": "warning",
            "message": {"text": f"could not scan {e.path}: {e.message}"},
            "locations": [{"physicalLocation": location}],
            "properties": {"kind": e.kind},
        })

    run: Dict[str, Any] = {
        "tool": {"driver": {
            "name": "portcheck",
            "version": report.version,
            "semanticVersion": report.version,
            "rules": rules,
        }},
        "automationDetails": {"id": f"portcheck/{report.target.value}/"},
        "columnKind": "unicodeCodePoints",
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
        "results": results,
    }
    scores = {t.value: {"score": c.score, "score_after_fix": c.score_after_fix, "grade": c.grade}
              for t, c in report.scores.items() if t in report.targets}
    if scores:
        run["properties"] = {"target": report.target.value, "scores": scores}
    return run


def render(report: Report, **_: Any) -> str:
    return json.dumps(to_dict(report), indent=2, ensure_ascii=False) + "\n"
