"""Which findings `portcheck fix` really fixes, per target and per mode: the fixer's own verdict for
each node, planned in memory (nothing is written, no code is generated). The scan marks findings
with it, so `fixable`, `[*]`, the summary counts and `score_after_fix` promise only fixes that exist.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, replace
from typing import AbstractSet, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from portcheck.fixer.device import choose_name, spelling_for
from portcheck.fixer.engine import FixError, FixOptions, attempted, parse, parse_tree, plan_fixes
from portcheck.model import Finding, FixSafety, Rule, Target
from portcheck.pyscan.imports import import_statements

# The fix target that goes with each scan target (the `cpu` fix works from the generic scan).
FIX_TARGET_OF: Mapping[Target, str] = {Target.GENERIC: "generic", Target.NEURON: "neuron", Target.XLA: "xla"}
SAFE, UNSAFE = "safe", "unsafe"

Key = Tuple[int, int, int, int, str, int]


@dataclass(frozen=True)
class FixSettings:
    """The configuration that changes what a fix can do (see `portcheck.config`)."""

    min_torch: str = "2.6"
    literal_device: bool = False


def _key(f: Finding) -> Key:
    return (f.line, f.column, f.end_line, f.end_column, f.code, f.cell or 0)


# What a fix's verdict can depend on besides the finding's own statement: CUDA-bound code (the
# markers of `guards`), seeding (duplicates), and imports (name resolution).
_RELEVANT = re.compile(r"cuda|nccl|seed", re.IGNORECASE)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# `fix` refuses a file libcst cannot reproduce byte for byte. Plain text (no carriage returns, form
# feeds or vertical tabs, a final newline) that does not end in an indented comment is always
# reproduced (libcst drops a trailing indented comment after a blank line), so only other files pay
# for parsing the whole text to find out. The skeleton itself need not round-trip: its blanked
# lines can leave such comments behind, and no verdict depends on them.
_PLAIN = re.compile(r"[^\r\x0b\x0c]*\n", re.DOTALL)
_INDENTED_TAIL = re.compile(r"\n[ \t]+#[^\n]*\n(?:[ \t]*(?:#[^\n]*)?\n)*\Z")


def _reproducible(text: str) -> None:
    """Raise FixError, as `fix` would, when libcst may not reproduce `text` exactly."""
    if _PLAIN.fullmatch(text) is None or _INDENTED_TAIL.search(text):
        parse_tree(text)


def skeleton(text: str, finding_lines: AbstractSet[int], tree: Optional[ast.Module] = None) -> str:
    """`text` with the code no verdict depends on left out, every line in its place: top-level
    statements are blanked and function bodies become `pass` unless they hold a finding, CUDA-bound
    code, seeding or an import. libcst then parses a fraction of a large module."""
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    lines = text.splitlines(keepends=True)
    # Lines that keep the statement around them: findings, CUDA-bound code or seeding, imports.
    relevant = (i for i, line in enumerate(lines, 1) if _RELEVANT.search(line))
    keep = sorted({*finding_lines, *relevant, *(stmt.lineno for stmt in import_statements(module))})

    def span(stmt: ast.stmt) -> Tuple[int, int]:
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
        return first, stmt.end_lineno or stmt.lineno

    def needed(stmt: ast.stmt) -> bool:
        first, last = span(stmt)
        at = bisect.bisect_left(keep, first)
        return at < len(keep) and keep[at] <= last

    def blank(first: int, last: int, keep_first: str = "") -> None:
        for i in range(first - 1, last):
            ending = lines[i][len(lines[i].rstrip("\r\n")):]
            lines[i] = (keep_first if i == first - 1 and keep_first else "") + ending

    def shrink_defs(body: Sequence[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, (*_DEFS, ast.ClassDef)):
                if not needed(stmt) and isinstance(stmt, _DEFS):
                    inner = stmt.body[0]
                    head = lines[inner.lineno - 1][: inner.col_offset]
                    if inner.lineno > stmt.lineno and not head.strip():
                        blank(inner.lineno, span(stmt)[1], keep_first=head + "pass")
                else:
                    shrink_defs(stmt.body)

    starts = [span(stmt) for stmt in module.body]
    for index, stmt in enumerate(module.body):
        first, last = starts[index]
        shares = (index > 0 and starts[index - 1][1] >= first) or (
            index + 1 < len(starts) and starts[index + 1][0] <= last
        )
        if not needed(stmt) and not shares:
            blank(first, last)
        else:
            shrink_defs([stmt])
    return "".join(lines)


class _Python:
    """A module parsed once (its skeleton) and planned for each target and mode."""

    def __init__(self, text: str, path: str, findings: Sequence[Finding], tree: Optional[ast.Module] = None) -> None:
        parts = [part for f in findings for part in f.parts()]
        lines = {line for f in parts for line in range(f.line, f.end_line + 1)}
        _reproducible(text)
        self.parsed = parse(skeleton(text, lines, tree), (f.line for f in parts), exact=False)
        self.name, _ = choose_name([text])
        self.path = path

    def applied(self, findings: Sequence[Finding], rules: Mapping[str, Rule], options: FixOptions) -> Set[Key]:
        todo = attempted(findings, rules, options)
        if not todo:
            return set()
        spelling = spelling_for(options.target, options.min_torch, options.literal_device, self.name)
        kept, _ = plan_fixes(self.parsed, todo, rules, options, spelling, path=self.path)
        return {_key(item[0]) for item in kept}


def _applied_notebook(
    text: str, path: str, findings: Sequence[Finding], rules: Mapping[str, Rule], options: FixOptions
) -> Set[Key]:
    from portcheck.fixer.notebook import fix_notebook  # notebooks are rare; their JSON layer loads on demand

    if not attempted(findings, rules, options):
        return set()
    return {_key(f) for f in fix_notebook(text, path, findings, rules, options).applied}


def fix_verdicts(
    text: str,
    path: str,
    kind: str,
    groups: Sequence[Tuple[Target, Sequence[Finding]]],
    rules: Mapping[str, Rule],
    settings: FixSettings,
    tree: Optional[ast.Module] = None,
) -> List[List[Finding]]:
    """Each group's findings (those of one scanned target) with `fixable`, `fix_safety` and `fixes` set
    from what `portcheck fix --target <that target>` does with them: `fixable` when the default (safe)
    run fixes it, `fix_safety` unsafe when only `--unsafe-fixes` does. The module is parsed once for
    every group (`tree`, `text` parsed by `ast`, spares a parse); each target is planned only for its
    own findings."""
    # (a finding left to a person, `manual`, is no candidate: the candidates' lines make the planning skeleton)
    candidates = [
        [f for f in findings if (rule := rules.get(f.code)) is not None and rule.fixable and not f.manual]
        for _, findings in groups
    ]
    python: Optional[_Python] = None
    if kind == "python" and any(candidates):
        try:
            python = _Python(text, path, [f for group in candidates for f in group], tree)
        except (FixError, RecursionError):
            candidates = [[] for _ in groups]
    out = []
    for (scanned, findings), todo in zip(groups, candidates):
        own = FIX_TARGET_OF.get(scanned, "generic")
        verdict: Dict[Key, str] = {}
        if todo and kind in ("python", "notebook"):
            any_unsafe = any(rules[f.code].fix_safety is FixSafety.UNSAFE for f in todo)
            for unsafe in (False, True) if any_unsafe else (False,):
                options = FixOptions(
                    target=own, unsafe=unsafe, min_torch=settings.min_torch, literal_device=settings.literal_device
                )
                try:
                    if python is not None:
                        keys = python.applied(todo, rules, options)
                    else:
                        keys = _applied_notebook(text, path, todo, rules, options) if kind == "notebook" else set()
                except (FixError, RecursionError, ValueError):
                    keys = set()
                for key in keys:
                    verdict.setdefault(key, UNSAFE if unsafe else SAFE)
        marked = []
        for f in findings:
            mine = verdict.get(_key(f))
            marked.append(
                replace(
                    f,
                    fixable=mine == SAFE,
                    fix_safety=(
                        FixSafety.SAFE if mine == SAFE else FixSafety.UNSAFE if mine == UNSAFE else FixSafety.NONE
                    ),
                    fixes=((own, mine),) if mine else (),
                )
            )
        out.append(marked)
    return out
