"""Load and validate the rule catalog (`rules/*.toml`): declarative data, compiled once into matchers.

A malformed rule file fails loudly with the file, the rule and the key at fault.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from portcheck.fixkinds import FIX_TARGETS, RecipeError, check_devices, expand
from portcheck.model import CATEGORIES, TARGETS, Case, FixSafety, Rule, Severity, Target

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older interpreters only
    import tomli as tomllib

class CatalogError(Exception):
    """A rule file is malformed."""


def rules_dir() -> Path:
    """The rule catalog: shipped inside the wheel as `portcheck/rules`, or `rules/` in a checkout."""
    here = Path(__file__).resolve().parent
    packaged = here / "rules"
    if packaged.is_dir():
        return packaged
    return here.parent / "rules"


_RULE_KEYS = {
    "code", "name", "category", "severity", "summary", "message", "why", "bad", "good", "fix",
    "fix-safety", "match", "autofix", "valid", "invalid", "has-fallback", "repo-level", "references",
    "unverified", "min-torch", "fallback", "guard", "yields-to", "detail-of",
}
_REQUIRED = ("code", "name", "category", "severity", "summary", "why", "bad", "good", "fix", "fix-safety", "match")


@dataclass(frozen=True)
class CompiledRule:
    rule: Rule
    matchers: Tuple[Any, ...]  # python matchers (portcheck.pyscan.matchers.Matcher)
    text_matchers: Tuple[Any, ...]  # non-Python file matchers (portcheck.textscan.TextMatcher)
    message: str
    fallback: bool  # reported only where no other rule reported the same node
    guard: bool  # lowered one level inside a CUDA check with a non-CUDA alternative
    yields_to: Tuple[str, ...] = ()  # rules whose finding on the very same token replaces this rule's
    # rules whose finding anywhere in the same file makes this rule's findings details of it (`info`)
    detail_of: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Catalog:
    rules: Tuple[CompiledRule, ...]
    digest: str  # hash of the rule files, for cache keys

    def by_code(self) -> Dict[str, CompiledRule]:
        return {r.rule.code: r for r in self.rules}

    def get(self, code: str) -> Optional[Rule]:
        entry = self.by_code().get(code.upper())
        return entry.rule if entry else None


def _fail(path: Path, code: str, key: str, problem: str) -> CatalogError:
    where = f"{path.name}: rule {code}" if code else path.name
    return CatalogError(f"{where}: key '{key}': {problem}")


def _str(path: Path, code: str, data: Mapping[str, Any], key: str, default: Optional[str] = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise _fail(path, code, key, "expected a string")
    return value


def _severity(path: Path, code: str, value: Any) -> Dict[Target, Severity]:
    names = {s.value for s in Severity}
    if isinstance(value, str):
        value = {t.value: value for t in TARGETS}
    if not isinstance(value, dict):
        raise _fail(path, code, "severity", "expected a severity or a table of severities per target")
    out = {}
    for target in TARGETS:
        sev = value.get(target.value)
        if sev not in names:
            raise _fail(path, code, f"severity.{target.value}", f"expected one of {sorted(names)}, got {sev!r}")
        out[target] = Severity(sev)
    extra = set(value) - {t.value for t in TARGETS}
    if extra:
        raise _fail(path, code, f"severity.{sorted(extra)[0]}", "unknown target")
    return out


def _cases(path: Path, code: str, key: str, value: Any) -> Tuple[Case, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _fail(path, code, key, "expected a list of code strings or tables")
    out = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            out.append(Case(code=item))
        elif isinstance(item, dict):
            extra = set(item) - {"code", "filename", "count", "fixed", "note"}
            if extra:
                raise _fail(path, code, f"{key}[{i}].{sorted(extra)[0]}", "unknown key")
            if not isinstance(item.get("code"), str):
                raise _fail(path, code, f"{key}[{i}].code", "expected a string")
            fixed = item.get("fixed", {})
            if not isinstance(fixed, dict) or any(k not in FIX_TARGETS for k in fixed):
                raise _fail(path, code, f"{key}[{i}].fixed", f"expected a table keyed by {FIX_TARGETS}")
            for target, expected in fixed.items():
                # The exact output of `portcheck fix`, or false: this target leaves the case unfixed.
                if not (isinstance(expected, str) or expected is False):
                    raise _fail(path, code, f"{key}[{i}].fixed.{target}", "expected the fixed code, or false")
            out.append(
                Case(
                    code=item["code"],
                    filename=item.get("filename", "example.py"),
                    count=int(item.get("count", 1)),
                    fixed=fixed,
                    note=str(item.get("note", "")),
                )
            )
        else:
            raise _fail(path, code, f"{key}[{i}]", "expected a string or a table")
    return tuple(out)


def _compile_matchers(path: Path, code: str, match: Any) -> Tuple[tuple, tuple]:
    from portcheck.pyscan import devices  # noqa: F401  (registers the device matcher kinds)
    from portcheck.pyscan.matchers import MATCHERS, MatcherError, build
    from portcheck.textscan import TEXT_MATCHERS, build_text

    tables = match if isinstance(match, list) else [match]
    py, text = [], []
    for i, table in enumerate(tables):
        key = "match" if not isinstance(match, list) else f"match[{i}]"
        if not isinstance(table, dict):
            raise _fail(path, code, key, "expected a table")
        kind = table.get("kind")
        try:
            if kind in TEXT_MATCHERS:
                text.append(build_text(table))
            elif kind in MATCHERS:
                py.append(build(table))
            else:
                known = sorted(set(MATCHERS) | set(TEXT_MATCHERS))
                raise MatcherError(f"unknown matcher kind {kind!r} (known: {', '.join(known)})")
        except MatcherError as exc:
            raise CatalogError(f"{path.name}: rule {code}: key '{key}': {exc}") from None
    return tuple(py), tuple(text)


def parse_rule(path: Path, data: Mapping[str, Any]) -> CompiledRule:
    raw_code = data.get("code")
    code = raw_code if isinstance(raw_code, str) else ""
    for key in _REQUIRED:
        if key not in data:
            raise _fail(path, code, key, "missing")
    extra = set(data) - _RULE_KEYS
    if extra:
        raise _fail(path, code, sorted(extra)[0], "unknown key")
    category = _str(path, code, data, "category")
    if category not in CATEGORIES:
        raise _fail(path, code, "category", f"expected one of {list(CATEGORIES)}, got {category!r}")
    try:
        safety = FixSafety(data["fix-safety"])
    except ValueError:
        raise _fail(path, code, "fix-safety", "expected 'safe', 'unsafe' or 'none'") from None
    try:
        autofix = expand(data.get("autofix", {}))
    except RecipeError as exc:
        raise _fail(path, code, exc.key, str(exc)) from None
    refs = data.get("references", [])
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        raise _fail(path, code, "references", "expected a list of strings")
    py, text = _compile_matchers(path, code, data["match"])
    try:
        check_devices(autofix, tuple(d for m in py for d in getattr(m, "devices", ())))
    except RecipeError as exc:
        raise _fail(path, code, exc.key, str(exc)) from None
    rule = Rule(
        code=code,
        name=_str(path, code, data, "name"),
        category=category,
        severity=_severity(path, code, data["severity"]),
        summary=_str(path, code, data, "summary"),
        why=_str(path, code, data, "why"),
        bad=_str(path, code, data, "bad"),
        good=_str(path, code, data, "good"),
        fix=_str(path, code, data, "fix"),
        fix_safety=safety,
        source_file=path.name,
        valid=_cases(path, code, "valid", data.get("valid")),
        invalid=_cases(path, code, "invalid", data.get("invalid")),
        autofix=autofix,
        has_fallback=bool(data.get("has-fallback", False)),
        repo_level=bool(data.get("repo-level", False)),
        references=tuple(refs),
        unverified=_str(path, code, data, "unverified", ""),
        min_torch=_str(path, code, data, "min-torch", ""),
    )
    for flag in ("fallback", "guard", "has-fallback", "repo-level"):
        if flag in data and not isinstance(data[flag], bool):
            raise _fail(path, code, flag, "expected true or false")
    yields_to = data.get("yields-to", [])
    if not isinstance(yields_to, list) or not all(isinstance(c, str) for c in yields_to):
        raise _fail(path, code, "yields-to", "expected a list of rule codes")
    detail_of = data.get("detail-of", [])
    if not isinstance(detail_of, list) or not all(isinstance(c, str) for c in detail_of):
        raise _fail(path, code, "detail-of", "expected a list of rule codes")
    return CompiledRule(
        rule=rule,
        matchers=py,
        text_matchers=text,
        message=_str(path, code, data, "message", rule.summary),
        fallback=bool(data.get("fallback", False)),
        guard=bool(data.get("guard", True)),
        yields_to=tuple(yields_to),
        detail_of=tuple(detail_of),
    )


def load_files(paths: Iterable[Path]) -> Catalog:
    from portcheck.catalog_cache import parse_rule_file

    rules: List[CompiledRule] = []
    seen: Dict[str, str] = {}
    digest = hashlib.sha256()
    for path in sorted(paths):
        raw = path.read_bytes()
        digest.update(path.name.encode() + b"\0" + raw)
        try:
            doc = parse_rule_file(raw)  # parsed TOML, from the user's cache when unchanged
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise CatalogError(f"{path.name}: invalid TOML: {exc}") from None
        extra = set(doc) - {"rule"}
        if extra:
            raise _fail(path, "", sorted(extra)[0], "unknown top-level key (rules go in [[rule]] tables)")
        entries = doc.get("rule", [])
        if not isinstance(entries, list):
            raise _fail(path, "", "rule", "expected an array of tables ([[rule]])")
        for entry in entries:
            compiled = parse_rule(path, entry)
            code = compiled.rule.code
            if code in seen:
                raise _fail(path, code, "code", f"duplicate code, first defined in {seen[code]}")
            seen[code] = path.name
            rules.append(compiled)
    rules.sort(key=lambda r: r.rule.code)
    return Catalog(rules=tuple(rules), digest=digest.hexdigest()[:16])


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    return load_files(rules_dir().glob("*.toml"))


def select_rules(
    catalog: Catalog, target: Target, select: Sequence[str] = (), ignore: Sequence[str] = ()
) -> Tuple[CompiledRule, ...]:
    """The rules that apply: not `off` for the target, selected by code prefix or category, not ignored."""

    def hit(rule: Rule, patterns: Sequence[str]) -> bool:
        for p in patterns:
            p = p.strip()
            if p.upper() == "ALL" or rule.code.startswith(p.upper()) or p.lower() in (rule.category, rule.name):
                return True
        return False

    out = []
    for entry in catalog.rules:
        rule = entry.rule
        if rule.severity_for(target) is Severity.OFF:
            continue
        if select and not hit(rule, select):
            continue
        if ignore and hit(rule, ignore):
            continue
        out.append(entry)
    return tuple(out)
