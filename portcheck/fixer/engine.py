"""Fix one module's text: find each fixable finding's node by position, plan its rewrite, apply every
plan in one pass, add and drop imports, resolve the device once, and check the result still parses.

Pure: text and findings in, text out. Files, notebooks and the terminal live elsewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import AbstractSet, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

import libcst as cst

from portcheck import torchfacts as facts
from portcheck.fixer.device import Spelling, choose_name, defines, insert_definition, spelling_for
from portcheck.fixer.imports import fix_imports
from portcheck.fixer.locate import Locator
from portcheck.fixer.names import Binding, Bindings
from portcheck.fixer.recipes import RECIPES, Fix, Outcome, Plan, Site, Skip
from portcheck.fixer.syntax import dotted, dotted_names, parse_expr
from portcheck.fixer.torchapi import at_least, newest, required
from portcheck.fixkinds import FIX_TARGETS
from portcheck.model import Finding, FixSafety, Rule, Target

_IMPORTABLE_ROOTS = ("torch", "torch_xla")


class FixError(Exception):
    """The text cannot be fixed safely: it does not parse, or the fixed text would not."""


@dataclass(frozen=True)
class FixOptions:
    target: str = "generic"  # generic | cpu | neuron | xla
    unsafe: bool = False  # also apply fixes marked unsafe
    min_torch: str = "2.6"  # the oldest torch the project supports
    literal_device: bool = False  # neuron: write "neuron" instead of resolving the device

    def __post_init__(self) -> None:
        if self.target not in FIX_TARGETS:
            raise ValueError(f"unknown fix target {self.target!r} (known: {', '.join(FIX_TARGETS)})")

    @property
    def scan_target(self) -> Target:
        """The scan whose findings this fix works from (`cpu` fixes what the generic scan finds)."""
        return Target.GENERIC if self.target in ("generic", "cpu") else Target(self.target)


@dataclass(frozen=True)
class TextFix:
    text: str
    applied: Tuple[Finding, ...]
    skipped: Tuple[Tuple[Finding, str], ...]  # fixable findings left alone, with the reason


def not_attempted(finding: Finding, rules: Mapping[str, Rule], options: FixOptions) -> Optional[str]:
    """Why the finding is left for a person without trying, or None when its rule's fix applies."""
    rule = rules.get(finding.code)
    if rule is None:
        return "unknown rule"
    if finding.manual:
        return finding.manual
    recipe = rule.autofix.get(options.target)
    if rule.fix_safety is FixSafety.NONE or not recipe:
        return f"no autofix for target {options.target}"
    if rule.fix_safety is FixSafety.UNSAFE and not options.unsafe:
        return "the fix is unsafe: review it, then rerun with --unsafe-fixes"
    return None


def attempted(findings: Iterable[Finding], rules: Mapping[str, Rule], options: FixOptions) -> List[Finding]:
    return [f for f in findings if not_attempted(f, rules, options) is None]


class _Apply(cst.CSTTransformer):
    def __init__(self, plans: Mapping[int, Sequence[Plan]]) -> None:
        super().__init__()
        self.plans = plans

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        result: Any = updated_node
        for plan in self.plans.get(id(original_node), ()):
            result = plan.build(result)
        return result


TOP, ELSEWHERE, ABSENT = "top", "elsewhere", "absent"


def torch_import(tree: cst.Module, names: Bindings, imported: AbstractSet[str]) -> str:
    """TOP: `import torch` at module level; ELSEWHERE: torch is imported only conditionally or in a
    function (the module avoids a hard dependency); ABSENT: never imported."""
    if "torch" in imported:
        return TOP
    for stmt in tree.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import) and any(
                    alias.asname is None and (dotted(alias.name) or "").split(".")[0] == "torch"
                    for alias in small.names
                ):
                    return TOP
    return ELSEWHERE if "torch" in names.table else ABSENT


def _needs(fix: Fix, spelling: Spelling, params: Mapping[str, Any]) -> Tuple[str, Set[str], bool]:
    """(torch release needed, modules to import, uses the device variable) for a planned fix."""
    names: List[str] = []
    for code in fix.written:
        names.extend(dotted_names(parse_expr(code)))
    uses_device = spelling.style == "variable" and any(n.split(".", 1)[0] == spelling.name for n in names)
    version = newest([required(names), spelling.requires if uses_device else "", str(params.get("min-torch", ""))])
    modules = {n.split(".", 1)[0] for n in names if n.split(".", 1)[0] in _IMPORTABLE_ROOTS}
    if uses_device:
        modules.add("torch")
    modules.update(fix.imports)
    return version, modules, uses_device


@dataclass(frozen=True)
class Parsed:
    """A module parsed for rewriting, with its positions and import bindings."""

    text: str
    tree: cst.Module
    where: Locator
    names: Bindings


def parse(text: str, lines: Iterable[int], exact: bool = True) -> Parsed:
    """`text` parsed for fixing the findings on `lines`; FixError when it cannot be rewritten. With
    `exact`, the tree must reproduce `text` byte for byte (a verdict may skip that on plain text)."""
    tree = parse_tree(text, exact)
    try:
        where = Locator(tree, lines, text)
    except RecursionError:
        raise FixError("too deeply nested to rewrite") from None
    return Parsed(text, tree, where, Bindings.of(tree))


def parse_tree(text: str, exact: bool = True) -> cst.Module:
    """`text` parsed by libcst; FixError when it does not parse or, with `exact`, when the tree does
    not reproduce it byte for byte."""
    try:
        tree = cst.parse_module(text)
        if exact and tree.code != text:
            # libcst drops a final lone "\r", for one; never rewrite what it cannot reproduce exactly.
            raise FixError(
                "the file cannot be reproduced exactly for rewriting (unusual line endings?); it was left unchanged"
            )
    except cst.ParserSyntaxError as exc:
        raise FixError(f"cannot parse for rewriting: {exc.message} (line {exc.raw_line})") from None
    except cst.CSTValidationError as exc:
        # Python's grammar takes what libcst's tree refuses: `assert(a if b else c)` (locuslab/wanda's main.py)
        raise FixError(f"cannot parse for rewriting: {exc}") from None
    except RecursionError:
        raise FixError("too deeply nested to rewrite") from None
    return tree


Planned = Tuple[Finding, Fix, Set[str], bool]

# Widened to any accelerator, a check that turns on a CUDA speed-up would turn on a kernel (or `fused=True`)
# the target may not have: on CUDA the same, elsewhere a crash where the plain path ran.
SPEEDUP_REFUSAL = (
    "the check only turns on a CUDA speed-up (a kernel, `fused=True`); made true on other accelerators it"
    " would turn on what they may not have"
)


def plan_fixes(
    parsed: Parsed,
    todo: Sequence[Finding],
    rules: Mapping[str, Rule],
    options: FixOptions,
    spelling: Spelling,
    *,
    path: str = "<string>",
    imported: AbstractSet[str] = frozenset(),
) -> Tuple[List[Planned], List[Tuple[Finding, str]]]:
    """The fixes that apply to `todo` together, and why each other finding is left: the fixer's
    verdict for each node, without writing any code."""
    where, names = parsed.where, parsed.names
    torch_state = torch_import(parsed.tree, names, imported)
    planned: List[Planned] = []
    skipped: List[Tuple[Finding, str]] = []
    for finding in todo:
        rule = rules[finding.code]
        spec = rule.autofix.get(options.target)
        kind = spec.get("kind") if isinstance(spec, dict) else None
        recipe = RECIPES.get(kind or "")
        if recipe is None or not isinstance(spec, dict):  # no kind without a table
            skipped.append((finding, f"unknown fix kind {kind!r}"))
            continue
        if finding.role == facts.SPEEDUP_SWITCH:
            skipped.append((finding, SPEEDUP_REFUSAL))
            continue
        outcome = _combined(
            [_outcome(part, where, names, recipe, spec, spelling, options, path) for part in finding.parts()]
        )
        if isinstance(outcome, Skip):
            skipped.append((finding, outcome.reason))
            continue
        version, needed, uses_device = _needs(outcome, spelling, spec)
        if not at_least(options.min_torch, version):
            skipped.append((finding, f"the fix needs torch >= {version}; min-torch is {options.min_torch}"))
            continue
        if uses_device and torch_state == ELSEWHERE:
            skipped.append(
                (
                    finding,
                    "torch is imported here only conditionally or inside functions, "
                    "so the device cannot be resolved at module level",
                )
            )
            continue
        planned.append((finding, outcome, needed, uses_device))
    kept, dropped = _whole(planned, where.parents)
    skipped.extend(dropped)
    skipped.sort(key=lambda item: item[0].sort_key())
    return kept, skipped


def _outcome(
    finding: Finding,
    where: Locator,
    names: Bindings,
    recipe: Callable[[Site], Outcome],
    spec: Mapping[str, Any],
    spelling: Spelling,
    options: FixOptions,
    path: str,
) -> Outcome:
    nodes = where.nodes(finding)
    if not nodes:
        return Skip("could not find the code the finding points at")
    site = Site(tuple(nodes), spec, spelling, where.parents, names, options.target, path, finding.role, finding.symbol)
    return recipe(site)


def _combined(outcomes: Sequence[Outcome]) -> Outcome:
    """One fix for a finding that stands for several entries (`Finding.also`): all of them, or none."""
    if len(outcomes) == 1:
        return outcomes[0]
    for outcome in outcomes:
        if isinstance(outcome, Skip):
            return outcome
    fixes = [o for o in outcomes if isinstance(o, Fix)]
    return Fix(
        plans=tuple(p for f in fixes for p in f.plans),
        written=tuple(w for f in fixes for w in f.written),
        imports=tuple(dict.fromkeys(i for f in fixes for i in f.imports)),
        removals=tuple(r for f in fixes for r in f.removals),
        needs=tuple(n for f in fixes for n in f.needs),
    )


def fix_text(
    text: str,
    findings: Sequence[Finding],
    rules: Mapping[str, Rule],
    options: FixOptions,
    *,
    path: str = "<string>",
    device_name: Optional[str] = None,
    define_device: bool = True,
    imported: AbstractSet[str] = frozenset(),
    keep: AbstractSet[str] = frozenset(),
) -> TextFix:
    """Apply the fixes of `findings` (those `attempted` picks) to `text`.

    `device_name`/`define_device`/`imported`/`keep` let a notebook share one device variable and its
    imports across cells: `imported` are modules an earlier cell imports, `keep` names other cells use.
    """
    todo = attempted(findings, rules, options)
    if not todo:
        return TextFix(text, (), ())
    parsed = parse(text, (part.line for f in todo for part in f.parts()))
    tree, where, names = parsed.tree, parsed.where, parsed.names
    if device_name is None:
        device_name, defined = choose_name([text])
        define_device = define_device and not defined
    spelling = spelling_for(options.target, options.min_torch, options.literal_device, device_name)
    kept, skipped = plan_fixes(parsed, todo, rules, options, spelling, path=path, imported=imported)

    plans: Dict[int, List[Plan]] = {}
    seen: Set[Tuple[int, str]] = set()
    modules: Set[str] = set()
    removals: List[Binding] = []
    used = False
    applied: List[Finding] = []
    for finding, outcome, needed, uses_device in kept:
        for plan in outcome.plans:
            key = (id(plan.node), plan.key)
            if key not in seen:
                seen.add(key)
                plans.setdefault(id(plan.node), []).append(plan)
        modules.update(needed)
        removals.extend(outcome.removals)
        used = used or uses_device
        applied.append(finding)
    if not plans:
        return TextFix(text, (), tuple(skipped))

    try:
        apply = _Apply(plans)
        rewritten = {id(stmt): stmt.visit(apply) for stmt in where.statements}
        body: List[cst.BaseStatement] = []
        touched: List[cst.BaseStatement] = []
        for stmt in tree.body:
            new = rewritten.get(id(stmt), stmt)
            if isinstance(new, cst.FlattenSentinel):  # one statement became several
                body.extend(new.nodes)
                touched.extend(new.nodes)
            elif isinstance(new, cst.BaseStatement):  # else removed
                body.append(new)
                if id(stmt) in rewritten:
                    touched.append(new)
        fixed = tree.with_changes(body=body)
        if used:
            # A fix that wrote the device may have been undone by an enclosing one (a removed keyword).
            word = re.compile(rf"\b{re.escape(spelling.name)}\b")
            used = any(word.search(fixed.code_for_node(stmt)) for stmt in touched)
        # A module that already binds a package somewhere keeps importing it its own way; only
        # side-effect imports of submodules (torch_xla.distributed.xla_backend) are always added.
        wanted = {m for m in modules - set(imported) if "." in m or m not in names.table}
        # A fix undone by an enclosing one (a removed keyword) needs no import either.
        changed = "".join(fixed.code_for_node(stmt) for stmt in touched)
        wanted = {m for m in wanted if "." in m or used or re.search(rf"\b{re.escape(m)}\.", changed)}
        fixed = fix_imports(fixed, wanted, removals, keep)
        if define_device and used and not defines(fixed, spelling.name):
            fixed = insert_definition(fixed, spelling)
        code = fixed.code
    except RecursionError:
        raise FixError("too deeply nested to rewrite") from None
    check(code, path)
    return TextFix(code, tuple(applied), tuple(skipped))


def _whole(
    planned: Sequence[Planned], parents: Mapping[int, cst.CSTNode]
) -> Tuple[List[Planned], List[Tuple[Finding, str]]]:
    """The planned fixes whose `needs` are all rewritten by fixes kept with them, and why each other
    one was dropped. Dropping one fix can leave another's needs unmet, so this runs to a fixpoint:
    a condition and the code it guards are fixed whole or not at all."""
    kept = list(planned)
    dropped: List[Tuple[Finding, str]] = []
    while True:
        covered = {id(plan.node) for _, fix, _, _ in kept for plan in fix.plans}
        still: List[Planned] = []
        for item in kept:
            missing = next((m for m in item[1].needs if not _covered(m.node, covered, parents)), None)
            if missing is None:
                still.append(item)
            else:
                dropped.append(
                    (
                        item[0],
                        f"it goes with `{missing.label}`, which no fix here rewrites, "
                        "so the code would still need CUDA",
                    )
                )
        if len(still) == len(kept):
            return kept, dropped
        kept = still


def _covered(node: cst.CSTNode, covered: AbstractSet[int], parents: Mapping[int, cst.CSTNode]) -> bool:
    probe: Optional[cst.CSTNode] = node
    while probe is not None:
        if id(probe) in covered:
            return True
        probe = parents.get(id(probe))
    return False


def check(code: str, path: str) -> None:
    """Raise FixError unless `code` parses with libcst and compiles."""
    try:
        cst.parse_module(code)
        compile(code, path, "exec", dont_inherit=True)
    except (cst.ParserSyntaxError, SyntaxError, ValueError) as exc:
        raise FixError(f"the fixed code would not parse ({exc}); the file was left unchanged") from None
