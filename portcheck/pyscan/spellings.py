"""Where a module's spellings of a name lead: to a binding of its own, or to a named module.

The unused-code pass (portcheck.reach) counts a name another module spells as a use. Two spellings are no
use of a module-level definition elsewhere: the module's own binding of the same name (apple/ml-nvas3d's
`deconv_and_sum = torch.stack(...)`, a local of `baseline_dsp.py`, beside `audio_utils.deconv_and_sum`, which
nothing calls), and a name tied by an import to another module of the same name (`from
soundspaces_nvas3d.utils import audio_utils`, then `audio_utils.fft_conv(...)`, which is not
`nvas3d/utils/audio_utils.py`'s `fft_conv`). `tied_spellings` says, of each name a module spells only in
such ways, which modules its spellings lead to.
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import Dict, FrozenSet, Optional, Set

from portcheck.pyscan.definitions import looks_up_by_computed_name
from portcheck.pyscan.imports import dotted
from portcheck.pyscan.loading import IDENTIFIER, without_comments

OWN = "-"  # a spelling of the module's own binding of the name (a local, a parameter, its own definition)

# Text that runs or looks up code by strings: any spelling there may be a use.
_DYNAMIC = ("exec(", "eval(", "__import__", "globals()", "locals()", "vars(")


def tied_spellings(text: str) -> Optional[Dict[str, FrozenSet[str]]]:
    """Of each name the module spells only as its own binding or tied to a module by an import, where the
    spellings lead: `OWN`, or the dotted module as the import names it (relative ones keep their dots): `from M
    import name` and `Q.name` with `Q` bound to module `M` by an import lead to `M`. A name spelt otherwise at
    least once (an attribute of a value, a string, a name a star import may bind, a builtin) is not here. None
    when the module looks names up or runs code by computed name, or does not parse."""
    if looks_up_by_computed_name(text) or any(word in text for word in _DYNAMIC):
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    modules: Dict[str, str] = {}  # local name -> the module an import binds to it
    imported: Dict[str, str] = {}  # local name -> the module a `from M import name` takes it from
    starred = False
    own: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".", 1)[0]
                modules[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom):
            source = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    starred = True
                    continue
                local = alias.asname or alias.name
                imported[local] = source
                # (`from pkg import audio_utils` may bind a module: `audio_utils.fft_conv` leads below it)
                modules[local] = f"{source}.{alias.name}" if node.module else source + alias.name
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            own.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            own.update(node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            own.add(node.name)
    leads: Dict[str, Set[str]] = {}
    free: Set[str] = set()
    counted: Counter = Counter()  # the spellings the tree accounts for, by name

    def lead(name: str, where: Optional[str]) -> None:
        counted[name] += 1
        if where is None:
            free.add(name)
        else:
            leads.setdefault(name, set()).add(where)

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in imported:
                lead(node.id, imported[node.id])
            elif node.id in own and node.id not in modules and not (starred and isinstance(node.ctx, ast.Load)):
                lead(node.id, OWN)
            else:
                lead(node.id, None)
        elif isinstance(node, ast.Attribute):
            qualifier = dotted(node.value)
            root = (qualifier or "").split(".", 1)[0]
            if qualifier and root in modules and root not in own:
                lead(node.attr, modules[root] + qualifier[len(root) :])
            else:
                lead(node.attr, None)
        elif isinstance(node, ast.ImportFrom):
            source = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    lead(alias.name, source)
                    if alias.asname:
                        lead(alias.asname, source)
                for part in (node.module or "").split("."):
                    if part:
                        lead(part, None)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                for part in (*alias.name.split("."), *([alias.asname] if alias.asname else [])):
                    lead(part, None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            lead(node.name, OWN)
        elif isinstance(node, ast.arg):
            lead(node.arg, OWN)
        elif isinstance(node, ast.keyword) and node.arg:
            lead(node.arg, OWN)  # `f(fft_conv=True)`: a parameter's name
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                lead(name, OWN)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            lead(node.name, OWN)
    # a spelling the tree does not account for is in a string (a registry's key, `getattr(m, "name")`)
    spelt = Counter(IDENTIFIER.findall(without_comments(text)))
    return {
        name: frozenset(where)
        for name, where in leads.items()
        if name not in free and spelt[name] <= counted[name]
    }


def absolute_module(source: str, importer: str, package: bool = False) -> str:
    """The dotted module an import of `source` in the module `importer` names: a relative one (`.audio_utils`,
    `..`) resolved from the importer's package (`package`: the importer is a package's `__init__`), an absolute one
    as it is."""
    dots = len(source) - len(source.lstrip("."))
    if not dots:
        return source
    base = importer.split(".")
    base = base[: max(0, len(base) - dots + (1 if package else 0))]
    rest = source[dots:]
    return ".".join([*base, *([rest] if rest else [])])


def may_lead_to(source: str, importer: str, target: str, package: bool = False) -> bool:
    """Whether the dotted module `source`, as the module `importer` names it (see `absolute_module`), may be the
    module `target` or a package above it that re-exports its names (by dotted suffix: scans start at different
    folders)."""
    source = absolute_module(source, importer, package)
    if not source:
        return True
    padded, wanted = f".{target}.", f".{source}."
    return wanted in padded or padded.endswith(wanted) or f".{source}".endswith(f".{target}")


_DYNAMIC_FACT = "\t"  # the fact of a module that looks names up or runs code by computed name


def tied_fact(text: str) -> FrozenSet[str]:
    """`tied_spellings` as a per-file fact (kept in the project cache): `name<TAB>lead<TAB>...` per name."""
    found = tied_spellings(text)
    if found is None:
        return frozenset({_DYNAMIC_FACT})
    return frozenset("\t".join((name, *sorted(leads))) for name, leads in found.items())


def decode_tied(fact: FrozenSet[str]) -> Optional[Dict[str, FrozenSet[str]]]:
    if _DYNAMIC_FACT in fact:
        return None
    out: Dict[str, FrozenSet[str]] = {}
    for entry in fact:
        name, *leads = entry.split("\t")
        out[name] = frozenset(leads)
    return out
