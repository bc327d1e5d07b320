"""`portcheck explain CODE`: a rule's page, generated from the catalog data (never written twice)."""

from __future__ import annotations

import textwrap
from typing import Optional

from portcheck.model import TARGETS, FixSafety, Rule

_SAFETY = {
    FixSafety.SAFE: "safe: applied by `portcheck fix`",
    FixSafety.UNSAFE: "unsafe: applied only with `portcheck fix --unsafe-fixes`; review the diff",
    FixSafety.NONE: "none: needs a person",
}


def find_rule(catalog, key: str) -> Optional[Rule]:
    """The rule with this code or this name, in any case (`DEV002`, `dev002`, `dot-cuda-call`)."""
    wanted = key.strip()
    rule = catalog.get(wanted)
    if rule is not None:
        return rule
    for entry in catalog.rules:
        if entry.rule.name == wanted.lower():
            return entry.rule
    return None


def _block(code: str) -> str:
    return textwrap.indent(code.strip("\n"), "    ")


def explain_text(rule: Rule) -> str:
    sev = ", ".join(f"{t.value}: {rule.severity_for(t).value}" for t in TARGETS)
    parts = [
        f"{rule.code} {rule.name} ({rule.category})",
        "",
        f"What it finds: {rule.summary}",
        f"Severity: {sev}",
        "",
        "Why it matters:",
        textwrap.indent(textwrap.fill(" ".join(rule.why.split()), 92), "  "),
        "",
        "Example:",
        _block(rule.bad),
        "",
        "Use instead:",
        _block(rule.good),
        "",
        f"Fix: {rule.fix}",
        f"Fix safety: {_SAFETY[rule.fix_safety] if rule.fixable else _SAFETY[FixSafety.NONE]}",
    ]
    if rule.min_torch:
        parts.append(f"Needs PyTorch >= {rule.min_torch} for the replacement.")
    if rule.unverified:
        parts += ["", "Unverified: " + " ".join(rule.unverified.split())]
    if rule.references:
        parts += ["", "References:"] + [f"  - {r}" for r in rule.references]
    return "\n".join(parts) + "\n"
