"""The project pass's per-file facts and findings in the persistent cache.

A warm scan must not read, decode or summarize a file whose bytes did not change. What the project
pass asks of a file depends on its text alone: whether it takes part at all (readable, not binary,
decodable, not skipped), whether it may define a CUDA-bound name, the words on its import lines, its
words (asked only of files that import a defining module), what it loads and whether it runs as a
script (portcheck.pyscan.loading), the definitions it never names (portcheck.pyscan.definitions), the
names it spells on its import lines only, and its `ModuleSummary`. Each is kept in
the cache's project table (`Cache.project_table`), under the file's absolute path, with the digest of
the bytes it was computed from; facts asked for the first time are computed then and kept too.

The resolution over the whole project (`resolve`, then `sites` per module) runs on every scan, from
the summaries: it is cheap, and it is what makes a changed file count for exactly the modules it
reaches. The findings made at a module's sites depend on that module's text, its sites and the
settings only, so they are kept per settings (`Cache.findings_table`) with the digest and the sites
they were made for: an unchanged module whose sites did not change is not read again, and one whose
sites did (it imports a module that changed) gets new findings, as a cold scan would give it.
"""

from __future__ import annotations

import os
from dataclasses import fields
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Sequence

from portcheck.cache import Cache, Table, content_digest, decode_findings, encode_findings
from portcheck.model import Finding
from portcheck.project_index import (
    Binding,
    Definition,
    ModuleSummary,
    ProjectSite,
    Site,
    SiteFindings,
    Sources,
    import_words,
    may_define,
    python_text,
    read_python,
    summarize_or_none,
)
from portcheck.pyscan.loading import loading_facts

# The summary's fields that hold tuples of these records; every other field is a plain value.
_RECORDS = {"imports": Binding, "definitions": Definition, "sites": Site}

# What is known of a file's summary.
_UNKNOWN, _SUMMARIZED, _UNPARSABLE = 0, 1, 2


def encode_summary(summary: ModuleSummary) -> tuple:
    """A summary as plain tuples (marshal cannot hold dataclasses)."""
    out = []
    for field in fields(summary):
        value = getattr(summary, field.name)
        if field.name in _RECORDS:
            value = tuple(tuple(getattr(r, f.name) for f in fields(r)) for r in value)
        out.append(value)
    return tuple(out)


def decode_summary(encoded: tuple) -> ModuleSummary:
    values: List[Any] = []
    for field, value in zip(fields(ModuleSummary), encoded):
        record = _RECORDS.get(field.name)
        values.append(tuple(record(*r) for r in value) if record is not None else value)
    return ModuleSummary(*values)


class _Facts:
    """One file's facts: from the table, or computed from its text (then `changed`)."""

    __slots__ = (
        "path", "display", "digest", "included", "may_define", "import_words", "words", "loading", "lone",
        "import_only", "tied", "state", "summary", "text", "changed",
    )

    def __init__(self, path: str, display: str, digest: bytes, text: Optional[str]) -> None:
        self.path = path
        self.display = display
        self.digest = digest
        self.text = text
        self.included = text is not None
        self.may_define = text is not None and may_define(text)
        # Asked of every module the application pass reaches: cheap text searches, made while the text is here.
        self.import_words: Optional[FrozenSet[str]] = import_words(text) if text is not None else None
        self.words: Optional[FrozenSet[str]] = None
        self.loading: Optional[FrozenSet[str]] = loading_facts(text) if text is not None else None
        self.lone: Optional[FrozenSet[str]] = None
        self.import_only: Optional[FrozenSet[str]] = None
        self.tied: Optional[FrozenSet[str]] = None
        self.state = _UNKNOWN
        self.summary: Optional[ModuleSummary] = None
        self.changed = True

    @classmethod
    def decode(cls, path: str, entry: tuple) -> "_Facts":
        digest, display, included, may, import_words, words, loading, lone, import_only, tied, state, summary = entry
        facts = cls.__new__(cls)
        facts.path, facts.display, facts.digest = path, display, digest
        facts.included, facts.may_define = included, may
        facts.import_words, facts.words, facts.loading, facts.lone = import_words, words, loading, lone
        facts.import_only, facts.tied = import_only, tied
        facts.state = state
        facts.summary = decode_summary(summary) if state == _SUMMARIZED else None
        facts.text = None
        facts.changed = False
        return facts

    def encode(self) -> tuple:
        summary = encode_summary(self.summary) if self.summary is not None else None
        return (
            self.digest, self.display, self.included, self.may_define, self.import_words, self.words, self.loading,
            self.lone, self.import_only, self.tied, self.state, summary,
        )


def _valid(entry: tuple) -> bool:
    return (
        len(entry) == 12 and isinstance(entry[1], str) and isinstance(entry[2], bool) and isinstance(entry[3], bool)
        and all(isinstance(entry[i], (frozenset, type(None))) for i in (4, 5, 6, 7, 8, 9))
        and entry[10] in (_UNKNOWN, _SUMMARIZED, _UNPARSABLE) and (entry[10] == _SUMMARIZED) == (entry[11] is not None)
    )


class CachedSources(Sources):
    """The scan's Python files, their facts taken from the cache where their bytes did not change."""

    def __init__(self, cache: Cache, table: Table) -> None:
        self.cache = cache
        self.table = table
        self.files: Dict[str, _Facts] = {}  # by display path, the files that take part
        self.kept: Dict[str, "KeptFindings"] = {}  # by settings key

    @classmethod
    def read(cls, candidates, displays: Sequence[str], cache: Cache, digests: Mapping[str, bytes]) -> "CachedSources":
        """`digests`: the digests of the files' current bytes, by absolute path, where the scan knows
        them; a file without one, or whose facts were made from other bytes, is read."""
        sources = cls(cache, cache.project_table())
        for candidate, display in zip(candidates, displays):
            if candidate.kind != "python":
                continue
            path = os.path.abspath(candidate.path)
            digest = digests.get(path)
            entry = sources.table.get(path, digest) if digest is not None else None
            facts = None
            if entry is not None and _valid(entry) and entry[1] == display:
                try:
                    facts = _Facts.decode(path, entry)
                except Exception:  # a malformed entry is a miss, whatever its shape
                    facts = None
            if facts is None:
                data = read_python(candidate.path)
                if data is None:
                    continue  # unreadable or too large: not part of the pass, and nothing to keep
                facts = _Facts(path, display, content_digest(data), python_text(data))
            if facts.included:
                sources.files[display] = facts
            elif facts.changed:
                sources.table.put(path, facts.encode())
        return sources

    def paths(self) -> List[str]:
        return list(self.files)

    def text(self, path: str) -> str:
        facts = self.files[path]
        if facts.text is None:
            data = read_python(facts.path)
            text = python_text(data) if data is not None else None
            if data is None or text is None or content_digest(data) != facts.digest:
                # Changed since the scan looked at it: the facts of these bytes are computed afresh.
                facts = self.files[path] = _Facts(facts.path, facts.display, content_digest(data or b""), text or "")
            facts.text = text or ""
        return facts.text

    def may_define(self, path: str) -> bool:
        return self.files[path].may_define

    def missing(self, path: str, name: str) -> bool:
        return getattr(self.files[path], name) is None

    def keep(self, path: str, name: str, value: FrozenSet[str]) -> None:
        facts = self.files[path]
        setattr(facts, name, value)
        facts.changed = True

    def _remembered(self, path: str, name: str, compute: Callable[[str], FrozenSet[str]]) -> FrozenSet[str]:
        """The fact `name` of the file, computed once (and kept) when the table does not have it."""
        value = getattr(self.files[path], name)
        if value is None:
            value = compute(path)
            facts = self.files[path]  # computing may read the text, which renews the facts of changed bytes
            setattr(facts, name, value)
            facts.changed = True
        return value

    def import_words(self, path: str) -> FrozenSet[str]:
        return self._remembered(path, "import_words", super().import_words)

    def words(self, path: str) -> FrozenSet[str]:
        return self._remembered(path, "words", super().words)

    def loading_facts(self, path: str) -> FrozenSet[str]:
        return self._remembered(path, "loading", super().loading_facts)

    def lone_definitions(self, path: str) -> FrozenSet[str]:
        return self._remembered(path, "lone", super().lone_definitions)

    def import_only(self, path: str) -> FrozenSet[str]:
        return self._remembered(path, "import_only", super().import_only)

    def tied(self, path: str) -> FrozenSet[str]:
        return self._remembered(path, "tied", super().tied)

    def summary(self, path: str) -> Optional[ModuleSummary]:
        facts = self.files[path]
        if facts.state == _UNKNOWN:
            summary = summarize_or_none(self.text(path), path)
            facts = self.files[path]
            facts.summary, facts.state = summary, (_SUMMARIZED if summary is not None else _UNPARSABLE)
            facts.changed = True
        return facts.summary

    def site_findings(self, settings) -> "KeptFindings":
        key = self.cache.key(settings)
        kept = self.kept.get(key)
        if kept is None:
            kept = self.kept[key] = KeptFindings(self, self.cache.findings_table(settings))
        return kept

    def save(self) -> None:
        for facts in self.files.values():
            if facts.changed:
                self.table.put(facts.path, facts.encode())
                facts.changed = False
        self.table.save()
        for kept in self.kept.values():
            kept.table.save()


class KeptFindings(SiteFindings):
    """The findings made at each file's sites for one settings, with the bytes and sites they are for."""

    def __init__(self, sources: CachedSources, table: Table) -> None:
        self.sources = sources
        self.table = table

    def get(self, path: str, found: Sequence[ProjectSite]) -> Optional[List[Finding]]:
        facts = self.sources.files[path]
        entry = self.table.get(facts.path, facts.digest)
        if entry is None or len(entry) != 4 or entry[1] != path or entry[2] != repr(list(found)):
            return None
        try:
            return list(decode_findings(entry[3], path))
        except Exception:  # a malformed entry is a miss, whatever its shape
            return None

    def put(self, path: str, found: Sequence[ProjectSite], findings: Sequence[Finding]) -> None:
        facts = self.sources.files[path]
        self.table.put(facts.path, (facts.digest, path, repr(list(found)), encode_findings(findings)))
