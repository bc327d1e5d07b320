"""A module's lone definitions, from its text alone: the module-level functions, classes and constants it
never names outside their own statement. `portcheck.reach` asks the rest of the project whether anything else
names them; the project cache keeps them per file.

Each is a string `first:last:name` (its first and last line), so a frozenset of them fits the cache. Beside
them, `@name:holders` for each name the module imports and uses only inside some of its functions
(`@causal_convolution:krylov_toeplitz`): a use that counts only where those are used.
A decorated definition (a registry, a route, a hook; not one only wrapped, `@torch.jit.script`) is not one,
nor one whose name the module spells as a string of its own (a name something may look up by that string),
and a module that looks names up by computed name (`globals()[name]`, `eval(expr)`) has none.
"""

from __future__ import annotations

import ast
import bisect
import keyword
import re
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from portcheck.pyscan.loading import BUILTIN_NAMES, IDENTIFIER, IMPORT_STATEMENT, without_comments

# A module-level `def` or `class` statement, and what may start one of its lines at column 0 without ending
# it (the `):` of a signature or a call black spread over lines).
_DEFINITION = re.compile(r"(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)")
_CLOSING = ")]}"
# A module-level constant on one line: `DEVICE = "cuda:0"`, `device = torch.device("cuda")`. Other values
# may run code when the module loads (`handle = torch.cuda.set_device(0)`): never unused.
_CONSTANT = re.compile(
    r"([A-Za-z][A-Za-z0-9_]*)[ \t]*(?::[^=]*)?=[ \t]*"
    r"(?:[\"'][^\"'()\\]*[\"']|-?\d[\w.]*|True|False|None|(?:torch\.)?device\([^()]*\))[ \t]*(?:#.*)?$"
)
# A module-level alias of a dotted name on one line: `triangular_toeplitz_multiply = TriangularToeplitzMult.apply`
# (H3's `toeplitz.py`). Reading an attribute runs nothing; the alias holds what it names.
_ALIAS = re.compile(r"([A-Za-z_]\w*)[ \t]*=[ \t]*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Z]\w*)[ \t]*(?:#.*)?$")
# Names a module may look up by computed name among its own: `globals()[name]`, `eval(expr)`,
# `getattr(sys.modules[__name__], name)`. Not: `vars(args)` (another object's attributes), `globals()['model'] =
# model` (a name the string spells), `timeit.timeit(stmt, globals=globals())` (EfficientPose's latency helper:
# names the statement spells).
COMPUTED_LOOKUP = re.compile(
    # (not `eval(str(tags["EXIF ExposureTime"]))`, PMN's reading of a number out of EXIF text: data, not a name)
    # (nor `def eval(self, epoch=-1):`, a method of that name)
    r"(?<![.\w])(?<!def )(?:eval|exec)[ \t]*\((?![ \t]*str[ \t]*\()"
    r"|(?<![.\w])(?<!globals=)(?<!globals = )(?:globals|locals|vars)[ \t]*\([ \t]*\)"
    r"(?![ \t]*\[[ \t]*[rRbBuU]{0,2}(?:'[^'\\\n]*'|\"[^\"\\\n]*\")[ \t]*\])"
    r"|\bsys\.modules[ \t]*\[[ \t]*__name__"
)
# Where COMPUTED_LOOKUP may start: searching the text for these first, then trying the pattern only there, finds
# the same matches several times faster (the pattern opens with a look-behind, which the search would try at
# every position of the text).
_LOOKUP_START = re.compile(r"eval|exec|globals|locals|vars|sys\.modules")


# A lookup of a name a configuration or command line gives as it is: `globals()[self.arch["name"]]`,
# `globals()[args.model]` (a subscript by a literal key, or an attribute, of a name). The name looked up is
# spelt where it is given (a YAML file, a script, a default), unlike a key built in code (`f"build_{name}"`,
# or a bare name bound to anything).
_CONFIG_LOOKUP = re.compile(
    r"(?:globals|locals|vars)[ \t]*\([ \t]*\)[ \t]*\[[ \t]*[A-Za-z_]\w*"
    r"(?:\.[A-Za-z_]\w*|\[[ \t]*(?:'[^'\\\n]*'|\"[^\"\\\n]*\")[ \t]*\])+[ \t]*\]"
)


def looks_up_built_names(text: str) -> bool:
    """Whether `text` holds a COMPUTED_LOOKUP whose name is built in code, not given as it is by a configuration
    (`_CONFIG_LOOKUP`)."""
    return any(
        COMPUTED_LOOKUP.match(text, start.start()) and not _CONFIG_LOOKUP.match(text, start.start())
        for start in _LOOKUP_START.finditer(text)
    )


def looks_up_by_computed_name(text: str) -> bool:
    """Whether `text` holds a COMPUTED_LOOKUP (as `COMPUTED_LOOKUP.search(text)` would say, faster)."""
    match = COMPUTED_LOOKUP.match
    return any(match(text, start.start()) for start in _LOOKUP_START.finditer(text))


def lone_definitions(text: str) -> FrozenSet[str]:
    """The module's undecorated module-level definitions whose name no line outside their own statement
    spells (`super(OKSLoss, self)` or a recursive call inside it does not count), as `first:last:name`;
    and those whose name only other such definitions of the module spell, as `first:last:name:holders`
    (`holders` comma-separated: InstantMesh's `marching_tets_tetmesh`, which only the unused
    `DMTetGeometry` calls, is unused when every holder is). Tests (`test*`) are run by name, never named:
    they are not here. Beside them, `?first:last:flag` for each block a parameter off by default switches on
    (`switch_blocks`)."""
    lines = text.splitlines()
    switches = _Switches(lines)
    switched = {f"{SWITCH}{first}:{last}:{flag}" for first, last, flag in switch_blocks(lines, switches)}
    if looks_up_by_computed_name(text):
        return frozenset(switched)
    definitions = [d for d in top_level_definitions(lines) if not d[2].startswith("test")]
    methods = base_less_methods(lines, definitions)
    definitions += top_level_constants(lines)
    names = {name for _, _, name in definitions} | {name for _, _, name in methods}
    code_lines = without_comments(text).splitlines()  # a comment spells nothing
    spelt: Dict[str, List[int]] = {}  # name -> the lines that spell it (in code or a string, not a comment)
    for number, line in enumerate(code_lines, 1):
        for word in names.intersection(IDENTIFIER.findall(line)):
            spelt.setdefault(word, []).append(number)

    spans = sorted(definitions)
    starts = [first for first, _, _ in spans]

    def holder(number: int) -> Optional[str]:
        at = bisect.bisect_right(starts, number) - 1
        return spans[at][2] if at >= 0 and spans[at][0] <= number <= spans[at][1] else None

    # a class may be built by name from a config or a registry the pass cannot read (`model_class =
    # model.implicit_differentiable_renderer.IDRNetwork` in lioryariv/idr's HOCON files): what only a class
    # holds keeps counting as used elsewhere
    classes = {name for first, _, name in spans if lines[first - 1].lstrip().startswith("class")}

    def function_holder(number: int) -> Optional[str]:
        found = holder(number)
        return None if found in classes else found

    # a use in a branch a parameter off by default switches on (`if not use_actnorm: ... else: norm_layer =
    # ActNorm`) is held by that switch, `?use_actnorm`: used only where something turns it on
    # (a name a star import may bind is held by a class too: spc's `bn.py`, whose unused `InPlaceABNSync` class
    # is the only one to call `inplace_abn_sync`)
    out = _held_imports(
        text,
        code_lines,
        lambda number: switches.of(number) or function_holder(number),
        lambda number: switches.of(number) or holder(number),
    )
    # the module's `__all__` lists what `import *` brings in: no use (videocomposer's `detect_duplicates`)
    exported = _export_lines(lines)
    out |= _lone(definitions, spelt, exported, lines, lambda number: switches.of(number) or holder(number))
    # a base-less class's methods, held only by each other; a name spelt twice as a method (two classes' `load`)
    # is no one method's
    counts: Dict[str, int] = {}
    for _, _, name in methods:
        counts[name] = counts.get(name, 0) + 1
    method_spans = sorted(methods)
    method_starts = [first for first, _, _ in method_spans]

    def method_holder(number: int) -> Optional[str]:
        at = bisect.bisect_right(method_starts, number) - 1
        span = method_spans[at] if at >= 0 else None
        return span[2] if span is not None and span[0] <= number <= span[1] else None

    out |= _lone([m for m in methods if counts[m[2]] == 1], spelt, exported, lines, method_holder)
    return frozenset(out | switched)


def _lone(
    definitions: Iterable[Tuple[int, int, str]],
    spelt: Mapping[str, Sequence[int]],
    exported: Set[int],
    lines: Sequence[str],
    holder: Callable[[int], Optional[str]],
) -> Set[str]:
    """Of `definitions`, those whose name no line outside them spells (`__all__` aside), as `first:last:name`, and
    those that only lines `holder` gives a holder for spell, as `first:last:name:holders`."""
    out: Set[str] = set()
    for first, last, name in definitions:
        outside = [number for number in spelt.get(name, ()) if not first <= number <= last and number not in exported]
        # the name as a string of its own (`return 'MVPAgent'` in a CARLA agent's `get_entry_point()`, a
        # registry's key): something may look it up by that string, whatever definition holds it
        holders = {None if _quoted(lines[number - 1], name) else holder(number) for number in outside}
        if not holders:
            out.add(f"{first}:{last}:{name}")
        elif None not in holders:
            out.add(f"{first}:{last}:{name}:{','.join(sorted(h for h in holders if h))}")
    return out


def _quoted(line: str, name: str) -> bool:
    """Whether `line` spells `name` as a string of its own (`'name'`, `"name"`), not after a word or a dot."""
    for quote in "'\"":
        needle = quote + name + quote
        at = line.find(needle)
        while at >= 0:
            before = line[at - 1] if at else " "
            if not (before.isalnum() or before in "_."):
                return True
            at = line.find(needle, at + 1)
    return False


def switch_blocks(lines: Sequence[str], switches: Optional["_Switches"] = None) -> List[Tuple[int, int, str]]:
    """The blocks a parameter off by default switches on (see `_Switches`, which `switches` may hand in): each
    body of `if flag:` (or `if self.flag:`) and `else:` of `if not flag:` whose first line such a switch holds,
    as (first line, last line, flag)."""
    if not any("if " in line for line in lines):
        return []
    switches = switches or _Switches(lines)
    out: List[Tuple[int, int, str]] = []
    for number, line in enumerate(lines, 1):
        if not (_IF_FLAG.match(line) or line.strip() == "else:"):
            continue
        indent = _indent(line)
        first = number + 1
        while first <= len(lines) and not _code(lines[first - 1]):
            first += 1
        if first > len(lines) or _indent(lines[first - 1]) <= indent:
            continue
        holder = switches.of(first)
        if not holder:
            continue
        out.append((first, _block_end(lines, first, indent), holder[len(SWITCH) :]))
    return out


def _held_imports(text: str, code_lines: Sequence[str], holder, star_holder) -> Set[str]:
    """`@name:holders` for each name the module's import statements bind that its other lines (`code_lines`: the
    text's lines without their comments) spell only inside module-level definitions (`holder` of a line: the one
    holding it, or None). After a star import, each free name the lines spell counts as imported (`star_holder`
    gives its holders)."""
    import_lines: Set[int] = set()
    imported: Set[str] = set()
    star = False  # `from .functions import *` binds names no statement spells
    for first, last, statement in _import_statements(text):
        import_lines.update(range(first, last + 1))
        imported.update(w for w in IDENTIFIER.findall(statement) if not keyword.iskeyword(w))
        star = star or statement.rstrip().endswith("*")
    if not imported:
        return set()
    where: Dict[str, Set[Optional[str]]] = {}
    for number, line in enumerate(code_lines, 1):
        if number in import_lines:
            continue
        for word in imported.intersection(IDENTIFIER.findall(line)):
            where.setdefault(word, set()).add(holder(number))
        if star:
            # any free name may be one the star import binds (spc's `bn.py` calls `inplace_abn_sync`, which
            # `from .functions import *` brings, only inside its unused `InPlaceABNSync`)
            for word in set(_FREE_WORD.findall(line)) - imported - BUILTIN_NAMES:
                where.setdefault(word, set()).add(star_holder(number))
    return {f"@{word}:{','.join(sorted(h for h in held if h))}" for word, held in where.items() if None not in held}


_FREE_WORD = re.compile(r"(?<![.\w])[A-Za-z_]\w*")  # a name not read as an attribute (`x`, not `.x`)


def _export_lines(lines: Sequence[str]) -> Set[int]:
    """The lines of the module's `__all__ = [...]` (or `+=`) statements, brackets followed over lines."""
    out: Set[int] = set()
    for number, line in enumerate(lines, 1):
        if not _EXPORTS.match(line):
            continue
        depth, at = 0, number
        while at <= len(lines):
            out.add(at)
            depth += sum(lines[at - 1].count(c) for c in "([{") - sum(lines[at - 1].count(c) for c in ")]}")
            if depth <= 0:
                break
            at += 1
    return out


def import_bindings(text: str) -> List[Tuple[int, int, FrozenSet[str]]]:
    """Each import statement of `text` as (first line, last line, the names it binds): `import torch.cuda.amp as
    amp` binds `amp`, `import torch.nn` binds `torch`, `from x import (a, b as c)` binds `a` and `c`."""
    out: List[Tuple[int, int, FrozenSet[str]]] = []
    for first, last, statement in _import_statements(text):
        try:
            tree = ast.parse(statement.strip())
        except (SyntaxError, ValueError):
            continue
        bound = {
            alias.asname or alias.name.split(".")[0]
            for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
            if alias.name != "*"
        }
        if bound:
            out.append((first, last, frozenset(bound)))
    return out


def _import_statements(text: str) -> Iterator[Tuple[int, int, str]]:
    """Each import statement of `text` (`IMPORT_STATEMENT`) as (first line, last line, its text)."""
    first, counted = 1, 0  # the line at offset `counted`, counted on from the last statement (once over the text)
    for found in IMPORT_STATEMENT.finditer(text):
        first += text.count("\n", counted, found.start())
        counted = found.start()
        yield first, first + found.group().count("\n"), found.group()


def exported_names(text: str) -> Set[str]:
    """The names the module's `__all__` statements spell (`__all__ = ["Timer", "load"]`)."""
    if "__all__" not in text:
        return set()
    lines = text.splitlines()
    return {word for number in _export_lines(lines) for word in IDENTIFIER.findall(lines[number - 1])}


_EXPORTS = re.compile(r"__all__\s*(?::[^=]*)?\+?=")
SWITCH = "?"  # a holder that is a parameter off by default: `?use_actnorm`


class _Switches:
    """Which lines of a module sit in a branch that a function's parameter, off by default, switches on: the
    body of `if flag:` (or `if count > 0:`) or the `else:` of `if not flag:` in a function whose signature gives
    `flag=False` (or `None`, or 0: UltraShape's `min_samples_per_face: int = 0`). Read from the text:
    indentation gives the blocks (a line in a bracket or string spread over lines may hide a block: fewer
    switched lines, never more)."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.found: Dict[int, Optional[str]] = {}  # header line -> the switch of it or a header above it
        self.parents: Optional[List[Optional[int]]] = None

    def of(self, number: int) -> Optional[str]:
        """`?flag` for line `number` (1-based) when such a switch holds it; None else."""
        if self.parents is None:
            self.parents = _headers(self.lines)
        return self._switch(self.parents[number], self.parents)

    def _switch(self, header: Optional[int], parents: Sequence[Optional[int]]) -> Optional[str]:
        """The switch of the nearest block from the one `header` opens outwards that has one, up to its function
        (Stable-DINO's `if self.dn_select_min_noise_as_pos:`, then `if ...: ... else:` inside it); `parents`: each
        line's header (`_headers`)."""
        chain: List[int] = []
        found: Optional[str] = None
        while header is not None:
            if header in self.found:
                found = self.found[header]
                break
            text = self.lines[header - 1]
            if _DEFINES.match(text):
                break
            chain.append(header)
            found = self._switched_by(header, text)
            if found is not None:
                break
            header = parents[header]
        for at in chain:
            self.found[at] = found
        return found

    def _switched_by(self, at: int, text: str) -> Optional[str]:
        """`?flag` when the block header `text` at line `at` is such a switch; None else."""
        lines = self.lines
        found = _IF_FLAG.match(text)
        if found is None and text.strip() == "else:":
            # the `if not flag:` this `else:` closes, at its indentation and with no `elif` between
            indent = _indent(text)
            opening = _header_above(lines, at, indent + 1)
            if opening is not None and _indent(opening[1]) == indent and not _has_elif(lines, opening[0], at):
                found = _IF_NOT_FLAG.match(opening[1])
        if found is None:
            return None
        flag = found.group(2)
        if found.group(1):  # `if self.cuda_sync:`: the class's `__init__` stores its parameter
            signature = _stored_parameter(lines, at, _indent(text), flag)
        else:
            signature = _signature_above(lines, at, _indent(text))
        if signature is None or not re.search(rf"\b{flag}\s*(?::[^=,)]*)?=\s*(?:False\b|None\b|0(?![\w.]))", signature):
            return None
        return SWITCH + flag


_IF_FLAG = re.compile(r"\s*if\s+(self\.)?([A-Za-z_]\w*)\s*(?:>\s*0\s*)?:\s*(?:#.*)?$")  # (`if count > 0:` too)
_IF_NOT_FLAG = re.compile(r"\s*if\s+not\s+(self\.)?([A-Za-z_]\w*)\s*:\s*(?:#.*)?$")
_FUNCTION_HEADER = re.compile(r"\s*(?:async\s+)?def\b")
_DEFINES = re.compile(r"\s*(?:async\s+)?(?:def|class)\b")


def _stored_parameter(lines: Sequence[str], number: int, indent: int, flag: str) -> Optional[str]:
    """For `if self.flag:` at line `number` (indented `indent`) in a method: the signature of its class's
    `__init__` when that stores its parameter of the same name (`self.flag = flag`) and no line of the class
    sets `self.flag` otherwise (XCube's `Timer(enabled=True, cuda_sync=False)`); None else."""
    method = _header_above(lines, number, indent)
    while method is not None and not _FUNCTION_HEADER.match(method[1]):
        method = _header_above(lines, method[0], _indent(method[1]))
    cls = _header_above(lines, method[0], _indent(method[1])) if method is not None else None
    if cls is None or not cls[1].lstrip().startswith("class "):
        return None
    first = cls[0]
    last = _block_end(lines, first, _indent(cls[1]))
    sets = re.compile(rf"^\s*self\.{flag}\s*(?::[^=]*)?=(?!=)\s*(.*?)\s*(?:#.*)?$")
    values = [m.group(1) for m in (sets.match(lines[i - 1]) for i in range(first + 1, last + 1)) if m]
    if values != [flag]:
        return None
    for i in range(first + 1, last + 1):
        if re.match(r"\s*def\s+__init__\s*\(", lines[i - 1]):
            return _signature_above(lines, i + 1, _indent(lines[i - 1]) + 1)
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _block_end(lines: Sequence[str], first: int, indent: int) -> int:
    """The last line of the block from line `first` under a header indented `indent`: the lines after it that are
    blank, comments or indented more than the header."""
    last = first
    while last < len(lines) and (not _code(lines[last]) or _indent(lines[last]) > indent):
        last += 1
    return last


def _headers(lines: Sequence[str]) -> List[Optional[int]]:
    """For each line number (1-based; index 0 unused), the line `_header_above` finds for it at its own
    indentation, in one pass: the candidates (code lines that close no bracket) whose indentation no later
    candidate undercuts, kept in a stack of rising indentation."""
    out: List[Optional[int]] = [None] * (len(lines) + 1)
    stack: List[Tuple[int, int]] = []  # (indentation, line)
    for number, line in enumerate(lines, 1):
        indent = len(line) - len(line.lstrip(" \t"))  # (`_indent` and `_code`, inlined: this runs on every line)
        at = len(stack) - 1
        while at >= 0 and stack[at][0] >= indent:
            at -= 1
        out[number] = stack[at][1] if at >= 0 else None
        stripped = line.strip()
        if stripped and stripped[0] != "#" and stripped[0] not in _CLOSING:
            del stack[at + 1 :]  # (the entries at or above `indent`)
            stack.append((indent, number))
    return out


def _header_above(lines: Sequence[str], number: int, indent: int) -> Optional[Tuple[int, str]]:
    """The nearest code line above line `number` indented less than `indent` (the header of its block); not one
    that closes a bracket (the `) -> None:` ending a signature black spread over lines)."""
    for at in range(number - 1, 0, -1):
        line = lines[at - 1]
        if _code(line) and _indent(line) < indent and not line.lstrip().startswith(tuple(_CLOSING)):
            return at, line
    return None


def _has_elif(lines: Sequence[str], start: int, end: int) -> bool:
    """Whether an `elif` at the `if`'s indentation lies between lines `start` and `end`."""
    indent = _indent(lines[start - 1])
    return any(
        lines[at - 1].lstrip().startswith("elif") and _indent(lines[at - 1]) == indent for at in range(start + 1, end)
    )


def _signature_above(lines: Sequence[str], number: int, indent: int) -> Optional[str]:
    """The signature text of the function holding line `number` (whose indentation is `indent`): from its `def`
    line to the line ending it with `:`."""
    at = number
    while True:
        header = _header_above(lines, at, indent)
        if header is None:
            return None
        at, text = header
        indent = _indent(text)
        if _FUNCTION_HEADER.match(text):
            end = at
            while end < len(lines) and not re.search(r"\)\s*(?:->[^:]*)?:\s*(?:#.*)?$", lines[end - 1]):
                end += 1
            return "\n".join(lines[at - 1 : end])
        if text.lstrip().startswith("class "):
            return None


def held_imports(facts: Iterable[str]) -> Dict[str, Tuple[str, ...]]:
    """The `@name:holders` entries of `lone_definitions`: each imported name the module uses only inside
    those of its definitions."""
    return {f[1:].partition(":")[0]: tuple(f.partition(":")[2].split(",")) for f in facts if f.startswith("@")}


def decode(facts: Iterable[str]) -> List[Tuple[int, int, str, Tuple[str, ...]]]:
    """`lone_definitions` as (first line, last line, name, holders), in line order."""
    out = []
    for fact in facts:
        if fact.startswith(("@", SWITCH)):
            continue
        first, last, rest = fact.split(":", 2)
        name, _, holders = rest.partition(":")
        out.append((int(first), int(last), name, tuple(holders.split(",")) if holders else ()))
    return sorted(out)


def top_level_definitions(lines: Sequence[str]) -> List[Tuple[int, int, str]]:
    """The module-level `def` and `class` statements of a module's `lines` that carry no decorator but those
    that only wrap them, each as (first line, last line, name), from its first decorator. A statement ends
    before the next line that starts at column 0 (a line of a multi-line string there ends it early: fewer
    lines, never more)."""
    out: List[Tuple[int, int, str]] = []
    open_at: Optional[Tuple[int, str]] = None
    for number, line in enumerate(lines, 1):
        if not line or line[0] in " \t#" or line[0] in _CLOSING or not line.strip():
            continue
        if open_at is not None:
            out.append((open_at[0], _last_code_line(lines, number - 1), open_at[1]))
            open_at = None
        match = _DEFINITION.match(line)
        if match and not _decorated(lines, number):
            open_at = (_wrapped_from(lines, number), match.group(1))
    if open_at is not None:
        out.append((open_at[0], _last_code_line(lines, len(lines)), open_at[1]))
    return out


def base_less_methods(
    lines: Sequence[str], definitions: Iterable[Tuple[int, int, str]]
) -> List[Tuple[int, int, str]]:
    """The methods of the module-level classes among `definitions` that derive from nothing (`class
    GaussianModel:`, `(object)`): what calls them is the project's own code, by name, never a framework's base
    class. Each as (first line, last line, name), from its first decorator; none with a decorator but those
    that only wrap it (`@staticmethod`, `@torch.no_grad()`), none named like a protocol a library calls by
    duck typing (`__call__`, `state_dict`, `fit`), none named `test*`."""
    out: List[Tuple[int, int, str]] = []
    for first, last, _ in definitions:
        header = next((n for n in range(first, last + 1) if _CLASS.match(lines[n - 1])), None)
        if header is None or not _BASE_LESS.match(lines[header - 1]):
            continue
        body = next((n for n in range(header + 1, last + 1) if _code(lines[n - 1])), None)
        if body is None:
            continue
        indent = _indent(lines[body - 1])
        for number in range(body, last + 1):
            line = lines[number - 1]
            found = _METHOD.match(line)
            if not found or _indent(line) != indent:
                continue
            name = found.group(1)
            if name.startswith(("__", "test")) or name in _PROTOCOL_METHODS:
                continue
            start = number
            while start > header + 1 and lines[start - 2].strip().startswith("@"):
                start -= 1
                if not _METHOD_WRAPPING.match(lines[start - 1].strip()):
                    break
            else:
                out.append((start, _last_code_line(lines, _block_end(lines, number, indent)), name))
    return out


_CLASS = re.compile(r"class[ \t]+[A-Za-z_]\w*")
_BASE_LESS = re.compile(r"class[ \t]+[A-Za-z_]\w*[ \t]*(?:\([ \t]*(?:object)?[ \t]*\))?[ \t]*:")
_METHOD = re.compile(r"[ \t]+(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(")
# Methods a library calls on an object it is handed, whatever its class (duck typing): never unused for want of a
# caller in the project.
_PROTOCOL_METHODS = frozenset(
    {
        "forward", "state_dict", "load_state_dict", "step", "zero_grad", "fit", "predict", "transform",
        "fit_transform", "score", "update", "reset", "close", "run", "start", "stop", "write", "read", "flush",
        "get", "keys", "items", "values", "emit", "format", "filter", "setup", "teardown",
    }
)


def top_level_constants(lines: Sequence[str]) -> List[Tuple[int, int, str]]:
    """The module-level one-line constants and aliases of `lines` (`DEVICE = "cuda:0"`, `mult =
    TriangularToeplitzMult.apply`), each as (line, line, name): a name bound once so (a name set twice is a
    setting the module changes), and none in a module of more than MAX_CONSTANTS of them (generated tables)."""
    found = [
        (n, n, m.group(1)) for n, line in enumerate(lines, 1) if (m := _CONSTANT.match(line) or _ALIAS.match(line))
    ]
    if len(found) > MAX_CONSTANTS:
        return []
    counts: Dict[str, int] = {}
    for _, _, name in found:
        counts[name] = counts.get(name, 0) + 1
    return [c for c in found if counts[c[2]] == 1]


MAX_CONSTANTS = 500


def _last_code_line(lines: Sequence[str], upto: int) -> int:
    """The last line at or above `upto` (1-based) that is not blank."""
    while upto > 1 and not lines[upto - 1].strip():
        upto -= 1
    return upto


# Decorators that wrap a function and register it nowhere (`@torch.jit.script`, CALM's poselib; `@torch.no_grad()`,
# `@functools.lru_cache(maxsize=None)`): a function so decorated is still called by name, or not at all.
_WRAPPING = re.compile(
    r"@(?:torch\.)?(?:jit\.(?:script|ignore|unused)|no_grad|inference_mode|enable_grad|compile)\b"
    r"|@(?:functools\.)?(?:lru_cache|cache|wraps)\b|@(?:numba\.)?n?jit\b|@(?:contextlib\.)?contextmanager\b"
    r"|@triton\.(?:jit|autotune|heuristics)\b"
)
_METHOD_WRAPPING = re.compile(r"@(?:staticmethod|classmethod|property)\b|" + _WRAPPING.pattern)


def _wrapped_from(lines: Sequence[str], number: int) -> int:
    """The line of the first decorator that wraps the definition on line `number` (`@triton.autotune(...)`
    above `@triton.jit`, where the kernel is reported), or `number` when it has none."""
    first = above = number
    while above > 1 and lines[above - 2].strip():
        above -= 1
        if lines[above - 1].startswith("@"):
            first = above
    return first


def _decorated(lines: Sequence[str], number: int) -> bool:
    """Whether the lines right above line `number` (up to a blank line) hold a decorator that may register
    the function somewhere (a registry, a route, a hook); one that only wraps it does not count."""
    above = number - 1
    while above >= 1 and lines[above - 1].strip():
        line = lines[above - 1]
        if line.startswith("@") and not _WRAPPING.match(line):
            return True
        above -= 1
    return False
