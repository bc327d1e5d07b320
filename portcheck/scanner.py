"""Scan files: read bytes, decode, dispatch by file kind, collect findings per file.

`scan_one` is a pure function of a file and picklable settings, so it runs the same in a worker
process, behind the cache, or inline.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import List, Mapping, Optional, Sequence, Tuple

from portcheck.analyze import ParseFailure, analyze_module, analyze_python, apply_suppressions, parse_python
from portcheck.catalog import Catalog, CompiledRule, load_catalog, select_rules
from portcheck.discover import Candidate, discover, matches_any
from portcheck.model import FileError, FileResult, Finding, FixSafety, Rule, ScanResult, Severity, Target
from portcheck.prefilter import Prefilter
from portcheck.source import DecodeError, decode_python, decode_text, looks_binary, python_lines
from portcheck.suppress import skip_file

MAX_BYTES = 50 * 1024 * 1024  # larger files are reported, not read


@dataclass(frozen=True)
class Settings:
    """What a worker needs to scan a file; small and picklable."""

    target: str = "generic"
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    min_torch: str = "2.6"  # what the fixer may write decides what is fixable
    literal_device: bool = False


@dataclass(frozen=True)
class Prepared:
    rules: Tuple[CompiledRule, ...]
    prefilter: Prefilter
    text_rules: Tuple[CompiledRule, ...]
    by_code: Mapping[str, Rule]


def prepare_rules(catalog: Catalog, target: Target, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> Prepared:
    """The rules of `catalog` a scan for `target` runs, ready to match."""
    rules = select_rules(catalog, target, select, ignore)
    return Prepared(
        rules=rules,
        prefilter=Prefilter(rules),
        text_rules=tuple(r for r in rules if r.text_matchers),
        by_code={entry.rule.code: entry.rule for entry in rules},
    )


@lru_cache(maxsize=8)
def prepare(settings: Settings) -> Prepared:
    return prepare_rules(load_catalog(), Target(settings.target), settings.select, settings.ignore)


def count_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def display_path(path: Path, cwd: Optional[Path] = None) -> str:
    # os.path rather than pathlib, and a prefix test before relpath: this runs once per file.
    base = os.path.abspath(cwd or os.getcwd())
    full = os.path.abspath(path)
    if full.startswith(base) and full[len(base) : len(base) + 1] == os.sep:
        return full[len(base) + 1 :].replace(os.sep, "/")
    try:
        rel = os.path.relpath(full, base)
    except ValueError:  # another drive on Windows
        rel = str(path)
    return rel.replace(os.sep, "/")


def _text_findings(rules: Sequence[CompiledRule], kind: str, text: str, path: str, target: Target) -> List[Finding]:
    lines = python_lines(text)
    out: List[Finding] = []
    for entry in rules:
        rule = entry.rule
        severity = rule.severity_for(target)
        if severity is Severity.OFF:
            continue
        for matcher in entry.text_matchers:
            if not matcher.applies(kind):
                continue
            for line, col, end_line, end_col, label in matcher.scan(kind, lines):
                message = entry.message.replace("{match}", label)
                out.append(
                    Finding(
                        path=path, line=line, column=col, end_line=end_line, end_column=end_col,
                        code=rule.code, name=rule.name, category=rule.category, severity=severity,
                        message=message, fixable=False, fix_safety=rule.fix_safety,
                        source_line=lines[line - 1].strip() if 0 < line <= len(lines) else "",
                    )
                )
    return apply_suppressions(out, lines)


def _notebook_findings(data: str, path: str, prepared: Prepared, target: Target) -> Tuple[List[Finding], Optional[FileError]]:
    findings, error, _ = _notebook(data, path, prepared, target)
    return findings, error


def _notebook(data: str, path: str, prepared: Prepared, target: Target) -> Tuple[List[Finding], Optional[FileError], int]:
    """Findings, the reason the notebook could not be read, and its lines of code (all code cells)."""
    from portcheck.notebook import NotebookError, code_cells

    try:
        cells = code_cells(data)
    except NotebookError as exc:
        return [], FileError(path=path, message=str(exc), kind="parse"), 0
    findings, error = _cell_findings(cells, path, prepared, target)
    return findings, error, sum(count_lines(c.source) for c in cells)


def _cell_findings(cells, path: str, prepared: Prepared, target: Target) -> Tuple[List[Finding], Optional[FileError]]:
    from portcheck.notebook import join_cells, locate, shell_view

    source, mapping = join_cells(cells)
    # Shell escapes (`!nvidia-smi`, `%%bash` cells) are comments to the parser: scan them as shell.
    shell = _text_findings(prepared.text_rules, "shell", shell_view(cells), path, target) if prepared.text_rules else []
    rules = prepared.prefilter.candidates(source)
    if not rules and not shell:
        return [], None
    lines = python_lines(source)
    try:
        module = parse_python(source, path)
        raw = analyze_module(module, source, path, rules, target, lines) if rules else []
    except ParseFailure:
        # One broken cell must not hide the others. Blank the cells that do not parse on their own
        # (keeping their line count, so positions hold) and analyse the rest as one module, so
        # imports in earlier cells still resolve names in later ones.
        from portcheck.notebook import neutralize_magics

        parts = []
        for cell in cells:
            text = neutralize_magics(cell.source)
            try:
                parse_python(text, path)
            except ParseFailure:
                text = "\n" * text.count("\n")
            parts.append(text)
        source = "\n".join(parts) + "\n"
        try:
            module = parse_python(source, path)
        except ParseFailure as exc:
            return [], FileError(path=path, message=str(exc), kind="parse")
        raw = analyze_module(module, source, path, rules, target, python_lines(source))
    kept = apply_suppressions(raw, lines) + shell
    out = []
    for f in kept:
        cell, line = locate(mapping, f.line)
        _, end_line = locate(mapping, f.end_line)
        out.append(replace(f, cell=cell, line=line, end_line=max(end_line, line) if cell == locate(mapping, f.end_line)[0] else line))
    return out, None


def _per_file_ignored(path: str, settings: Settings) -> Tuple[str, ...]:
    codes: List[str] = []
    for glob, ignored in settings.per_file_ignores:
        if matches_any(path, (glob,)):
            codes.extend(ignored)
    return tuple(codes)


def analyze_text(text: str, path: str, kind: str, prepared: Prepared, settings: Settings, verdicts: bool = True) -> Tuple[List[Finding], Optional[FileError], int]:
    """(findings, why the file could not be analysed, lines of code) for decoded text of `kind`: the one
    path scan, fix, the API and the pre-commit hook share. With `verdicts`, each finding says what
    `portcheck fix` does with it (see portcheck.fixer.verdict)."""
    target = Target(settings.target)
    error: Optional[FileError] = None
    lines = 0
    if kind == "python":
        if skip_file(text):
            return [], None, 0
        lines = count_lines(text)
        findings, error = analyze_python(text, path, prepared.prefilter, target)
        if Path(path).name == "setup.py" and prepared.text_rules:
            findings += _text_findings(prepared.text_rules, "setup-py", text, path, target)
    elif kind == "notebook":
        findings, error, lines = _notebook(text, path, prepared, target)
    else:
        lines = count_lines(text)
        findings = _text_findings(prepared.text_rules, kind, text, path, target)
    ignored = _per_file_ignored(path, settings)
    if ignored:
        findings = [f for f in findings if not any(f.code.startswith(c.upper()) for c in ignored)]
    if verdicts and any((rule := prepared.by_code.get(f.code)) is not None and rule.fixable for f in findings):
        # The fixer (and libcst) loads only for a file with something it may fix: a scan of clean
        # files, or one served from the cache, stays light.
        from portcheck.fixer.verdict import FixSettings, fix_verdicts

        findings = fix_verdicts(text, path, kind, findings, prepared.by_code, target, FixSettings(settings.min_torch, settings.literal_device))
    else:
        findings = [replace(f, fixable=False, fix_safety=FixSafety.NONE) if f.fixable or f.fix_safety is not FixSafety.NONE else f for f in findings]
    findings.sort(key=Finding.sort_key)
    return findings, error, lines


def scan_bytes(data: bytes, path: str, kind: str, settings: Settings) -> FileResult:
    """Scan one file's bytes; never raises for bad input."""
    prepared = prepare(settings)
    target = Target(settings.target)
    findings: List[Finding] = []
    error: Optional[FileError] = None
    lines = 0
    try:
        if looks_binary(data):
            return FileResult(path=path, error=FileError(path, "binary file (contains null bytes)", kind="decode"), kind=kind)
        try:
            src = decode_python(data) if kind == "python" else decode_text(data)
        except DecodeError as exc:
            return FileResult(path=path, error=FileError(path, str(exc), kind="decode"), kind=kind)
        findings, error, lines = analyze_text(src.text, path, kind, prepared, settings)
    except RecursionError:
        error = FileError(path, "too deeply nested to analyze", kind="parse")
        findings = []
    return FileResult(path=path, findings=tuple(findings), error=error, lines=lines, kind=kind)


def scan_one(candidate: Candidate, settings: Settings, display: str) -> FileResult:
    try:
        size = candidate.path.stat().st_size
        if size > MAX_BYTES:
            return FileResult(path=display, error=FileError(display, f"file too large ({size} bytes)", kind="read"), kind=candidate.kind)
        data = candidate.path.read_bytes()
    except FileNotFoundError:
        return FileResult(path=display, error=FileError(display, "file disappeared during the scan", kind="read"), kind=candidate.kind)
    except IsADirectoryError:
        return FileResult(path=display, error=FileError(display, "is a directory", kind="read"), kind=candidate.kind)
    except PermissionError:
        return FileResult(path=display, error=FileError(display, "permission denied", kind="read"), kind=candidate.kind)
    except OSError as exc:
        return FileResult(path=display, error=FileError(display, exc.strerror or str(exc), kind="read"), kind=candidate.kind)
    return scan_bytes(data, display, candidate.kind, settings)


def settings_from(config, target: Optional[str] = None) -> Settings:
    return Settings(
        target=target or (config.target if config.target != "all" else "generic"),
        select=tuple(config.select),
        ignore=tuple(config.ignore),
        per_file_ignores=tuple(sorted((g, tuple(c)) for g, c in dict(config.per_file_ignores).items())),
        min_torch=config.min_torch,
        literal_device=config.literal_device,
    )


def scan_paths(
    paths: Sequence[Path],
    config,
    target: Optional[str] = None,
    cwd: Optional[Path] = None,
    jobs: Optional[int] = None,
    cache=None,
    progress=None,
) -> ScanResult:
    """Discover and scan `paths` with `config` (see portcheck.config.Config)."""
    from portcheck.runner import run_all

    cwd = cwd or Path.cwd()
    root = config.root or cwd
    excludes = tuple(config.exclude) + tuple(config.extend_exclude)
    candidates, problems = discover(paths, root, excludes, config.respect_gitignore)
    settings = settings_from(config, target)
    results: List[FileResult] = [
        FileResult(path=display_path(p.path, cwd), error=FileError(display_path(p.path, cwd), p.message, kind="read"), kind="unknown")
        for p in problems
    ]
    displays = [display_path(c.path, cwd) for c in candidates]
    results.extend(run_all(candidates, displays, settings, jobs=jobs, cache=cache, progress=progress))
    results.sort(key=lambda r: r.path)
    return ScanResult(target=Target(settings.target), files=tuple(results))
