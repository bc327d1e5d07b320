"""A rule's page, generated from the catalog data and never written twice: `portcheck explain RULE`
prints it as text, and `python -m portcheck.rulepages` writes it as Markdown for the documentation site.

Both follow ruff's rule pages: what it does, why it matters, an example, what to use instead, and
whether its fix is safe.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Optional, Tuple

from portcheck.model import TARGETS, FixSafety, Rule

_SAFETY = {
    FixSafety.SAFE: "safe: applied by `portcheck fix`",
    FixSafety.UNSAFE: "unsafe: applied only with `portcheck fix --unsafe-fixes`; review the diff",
    FixSafety.NONE: "none: needs a person",
}

# The language of a rule's examples, from the kind of file its matchers read (Python unless only text files).
_FENCE = {
    "shell": "bash", "dockerfile": "dockerfile", "requirements": "text", "conda": "yaml", "config": "yaml",
    "pyproject": "toml", "setup-py": "python", "cmake": "cmake", "cpp": "cpp", "cuda": "cpp",
}


@dataclass(frozen=True)
class RulePage:
    """The content of one rule's page, in the order it is shown."""

    code: str
    name: str
    category: str
    what: str
    severity: Tuple[Tuple[str, str], ...]  # (target, severity) per target
    why: str  # one paragraph, whitespace normalised
    bad: str
    good: str
    fix: str
    fix_safety: str
    min_torch: str
    unverified: str
    references: Tuple[str, ...]


def rule_page(rule: Rule) -> RulePage:
    safety = _SAFETY[rule.fix_safety] if rule.fixable else _SAFETY[FixSafety.NONE]
    return RulePage(
        code=rule.code,
        name=rule.name,
        category=rule.category,
        what=rule.summary,
        severity=tuple((t.value, rule.severity_for(t).value) for t in TARGETS),
        why=" ".join(rule.why.split()),
        bad=rule.bad.strip("\n"),
        good=rule.good.strip("\n"),
        fix=rule.fix,
        fix_safety=safety,
        min_torch=rule.min_torch,
        unverified=" ".join(rule.unverified.split()),
        references=tuple(rule.references),
    )


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
    return textwrap.indent(code, "    ")


def explain_text(rule: Rule) -> str:
    page = rule_page(rule)
    parts = [
        f"{page.code} {page.name} ({page.category})",
        "",
        f"What it finds: {page.what}",
        f"Severity: {', '.join(f'{t}: {s}' for t, s in page.severity)}",
        "",
        "Why it matters:",
        textwrap.indent(textwrap.fill(page.why, 92), "  "),
        "",
        "Example:",
        _block(page.bad),
        "",
        "Use instead:",
        _block(page.good),
        "",
        f"Fix: {page.fix}",
        f"Fix safety: {page.fix_safety}",
    ]
    if page.min_torch:
        parts.append(f"Needs PyTorch >= {page.min_torch} for the replacement.")
    if page.unverified:
        parts += ["", "Unverified: " + page.unverified]
    if page.references:
        parts += ["", "References:"] + [f"  - {r}" for r in page.references]
    return "\n".join(parts) + "\n"


def example_language(entry) -> str:
    """The fence language of a compiled rule's examples."""
    if entry.matchers or not entry.text_matchers:
        return "python"
    kinds = {k for m in entry.text_matchers for k in getattr(m, "files", ())}
    for kind, language in _FENCE.items():  # in the order of _FENCE: shell first, for a rule on scripts and Dockerfiles
        if kind in kinds:
            return language
    return "text"


def _fence(code: str, language: str) -> str:
    ticks = "```"
    while ticks in code:
        ticks += "`"
    return f"{ticks}{language}\n{code}\n{ticks}"


def _reference(ref: str) -> str:
    if ref.startswith(("https://", "http://")):
        return f"<{ref}>"
    return f"`{ref}`"


def explain_markdown(rule: Rule, language: str = "python", source: str = "") -> str:
    """The rule's page as Markdown (one file of the documentation site)."""
    page = rule_page(rule)
    origin = f" from `rules/{source}`" if source else ""
    parts = [
        f"# {page.code} {page.name}",
        "",
        f"<!-- Generated{origin} by `python -m portcheck.rulepages`; edit the rule, not this page. -->",
        "",
        f"Category: **{page.category}** · Fix: **{page.fix_safety.split(':')[0]}**"
        + (f" · Needs PyTorch >= {page.min_torch} for the replacement" if page.min_torch else ""),
        "",
        "## What it does",
        "",
        page.what + ("" if page.what.endswith(".") else "."),
        "",
        "| " + " | ".join(t for t, _ in page.severity) + " |",
        "|" + "---|" * len(page.severity),
        "| " + " | ".join(s for _, s in page.severity) + " |",
        "",
        "## Why it matters",
        "",
        page.why,
        "",
        "## Example",
        "",
        _fence(page.bad, language),
        "",
        "## Use instead",
        "",
        _fence(page.good, language),
        "",
        "## Fix",
        "",
        page.fix,
        "",
        f"Fix safety: {page.fix_safety}.",
    ]
    if page.unverified:
        parts += ["", "## Unverified", "", page.unverified]
    if page.references:
        parts += ["", "## References", ""] + [f"- {_reference(r)}" for r in page.references]
    parts += ["", f"`portcheck explain {page.code}` prints this page in a terminal."]
    return "\n".join(parts) + "\n"
