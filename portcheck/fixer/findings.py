"""The findings a fix starts from: exactly what `portcheck scan` reports for the same file and rules,
through the scan's own pipeline (`scanner.analyze_text`)."""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from portcheck.catalog import Catalog
from portcheck.model import Finding, Target
from portcheck.scanner import Prepared, Settings, analyze_text, prepare_rules

PerFileIgnores = Tuple[Tuple[str, Tuple[str, ...]], ...]


def prepare(catalog: Catalog, target: Target, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> Prepared:
    return prepare_rules(catalog, target, select, ignore)


def collect(
    text: str, path: str, kind: str, prepared: Prepared, target: Target, per_file_ignores: PerFileIgnores = ()
) -> Tuple[List[Finding], Optional[str]]:
    """(findings, why the file cannot be analysed) for a decoded file of `kind`. The fixer decides for
    itself what it fixes, so the scan's fix verdicts are not computed here."""
    settings = Settings(target=target.value, per_file_ignores=per_file_ignores)
    findings, error, _ = analyze_text(text, path, kind, prepared, settings, verdicts=False)
    return findings, error.message if error is not None else None
