"""Checks a rule selection (`select`, `ignore`, `per-file-ignores`) against the catalog.

A code, prefix, category or name that matches no rule would silently select nothing (or ignore
nothing); it is an error that names the pattern and the closest known ones.
"""

from __future__ import annotations

import difflib
from typing import Iterable, List, Optional

from portcheck.catalog import Catalog


def _vocabulary(catalog: Catalog, codes_only: bool) -> List[str]:
    words = [e.rule.code for e in catalog.rules]
    if not codes_only:
        words += sorted({e.rule.category for e in catalog.rules}) + [e.rule.name for e in catalog.rules]
    return words


def matches_something(catalog: Catalog, pattern: str, codes_only: bool = False) -> bool:
    """The same test `select_rules` (or, with `codes_only`, per-file-ignores) applies, over every rule."""
    p = pattern.strip()
    if not p:
        return False
    if not codes_only and p.upper() == "ALL":
        return True
    for entry in catalog.rules:
        rule = entry.rule
        if rule.code.startswith(p.upper()):
            return True
        if not codes_only and p.lower() in (rule.category, rule.name):
            return True
    return False


def closest(catalog: Catalog, pattern: str, codes_only: bool = False, n: int = 3) -> List[str]:
    words = _vocabulary(catalog, codes_only)
    by_key = {w.lower(): w for w in words}
    p = pattern.strip().lower()
    hits = difflib.get_close_matches(p, list(by_key), n=n, cutoff=0.5)
    if not hits:  # a prefix typo ("DEVV") or a code past the end ("DEV099"): the codes sharing its letters
        letters = p.rstrip("0123456789")
        hits = [k for k in by_key if letters and k.startswith(letters[:3])][:n]
    if not hits:  # nothing alike: still name the nearest few, so the message always points somewhere
        hits = difflib.get_close_matches(p, list(by_key), n=n, cutoff=0.0)
    return [by_key[h] for h in hits]


def unknown_pattern(catalog: Catalog, patterns: Iterable[str], where: str, codes_only: bool = False) -> Optional[str]:
    """The error line for the first pattern that matches no rule, or None when all are known."""
    for pattern in patterns:
        if matches_something(catalog, pattern, codes_only):
            continue
        near = closest(catalog, pattern, codes_only)
        hint = f"; closest known: {', '.join(near)}" if near else ""
        kind = "rule code or prefix" if codes_only else "rule code, prefix, category or name"
        return f"{where}: unknown {kind} {pattern!r}{hint} (`portcheck rules` lists them)"
    return None

