"""Settings a project never reads: `"dist_backend": "nccl"` in a dict literal whose key nothing else spells
(HiFi-GAN's vocoder config, copied as a Python dict into AudioLDM2 and tango, whose inference code never
starts a process group), and a module-level `device = torch.device("cuda" if ... else "cpu")` that neither its
module nor any other reads (`unread_constants`). The backend or device named there is never what runs, and a
porting engineer has nothing to change; its finding is `info` with a note.

Asked, as `portcheck.app_defaults` is, only where the scan covers the whole project: the key (or the key of a
dict it sits in) must be spelt only as such an entry in every Python file, and in no notebook, config or
script. The answer per file is the lines of such entries with the note for their findings, the shape
`portcheck.project_index` lowers to `info`.
"""

from __future__ import annotations

import ast
import re
from typing import AbstractSet, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from portcheck.project_index import Sources, module_name
from portcheck.pyscan.definitions import looks_up_by_computed_name
from portcheck.pyscan.loading import IDENTIFIER
from portcheck.pyscan.nodes import walk
from portcheck.pyscan.spellings import absolute_module

UNREAD_SETTING_NOTE = (
    "lowered to info: nothing in this project reads `{key}` (every file spells it only where it is set: an"
    " entry of a dict literal, or a config's top-level name); the setting never takes effect"
)
# A dict literal's entry on one line: `"dist_backend": "nccl",`.
_ENTRY = re.compile(r"""^\s*["']([A-Za-z_]\w*)["']\s*:\s*["'][^"']*["']\s*,?\s*(?:#.*)?$""")
# A config module's top-level setting on one line: `dist_params = dict(backend="nccl", init_method="env://")`
# (CenterPoint's configs, which `Config.fromfile` loads; its `train.py` then hard-codes its own backend).
_TOP_SETTING = re.compile(r"""^([A-Za-z_]\w*)[ \t]*=[ \t]*(?:dict\([^()]*\)|\{[^{}]*\})[ \t]*(?:#.*)?$""")


def unread_settings(
    sources: Sources, lines: Mapping[str, AbstractSet[int]], texts: Iterable[str] = ()
) -> Dict[str, List[Tuple[int, int, str]]]:
    """Of the dict entries on `lines` (per path: the lines of findings there), those whose key, or the key of a
    dict they sit in (`"dist_config": {`), no file of the project spells but as such an entry (each copy of
    the config, AudioLDM2's 16 kHz and 48 kHz ones) and none of `texts` spells. Per path, each such line with
    the note for its findings."""
    entries: Dict[str, List[Tuple[int, Tuple[str, ...]]]] = {}  # line -> its key and the keys of dicts above
    for path, wanted in lines.items():
        text_lines = sources.text(path).splitlines()
        for number in sorted(wanted):
            line = text_lines[number - 1] if 0 < number <= len(text_lines) else ""
            found = _ENTRY.match(line)
            if found:
                entries.setdefault(path, []).append((number, (found.group(1),) + _enclosing(text_lines, number)))
            elif (top := _TOP_SETTING.match(line)) is not None:
                entries.setdefault(path, []).append((number, (top.group(1),)))
    if not entries:
        return {}
    keys = {key for found in entries.values() for _, chain in found for key in chain}
    read = {key for text in texts for key in keys & set(IDENTIFIER.findall(text))}
    for path in sources.paths():
        spelt = keys & sources.words(path)
        if spelt - read:
            read |= _read_outside_entries(sources.text(path), spelt - read)
    out: Dict[str, List[Tuple[int, int, str]]] = {}
    for path, held in entries.items():
        for number, chain in held:
            # the entry's key, or the key of a dict it sits in (`"dist_config": {`), read nowhere
            unread = next((key for key in chain if key not in read), None)
            if unread is not None:
                out.setdefault(path, []).append((number, number, UNREAD_SETTING_NOTE.format(key=unread)))
    return out


_OPENS = re.compile(r"""^(\s*)["']([A-Za-z_]\w*)["']\s*:\s*\{\s*(?:#.*)?$""")


def _enclosing(lines: List[str], number: int) -> Tuple[str, ...]:
    """The keys of the dict literals the entry on line `number` sits in (`"dist_config": {` above it), by
    indentation, innermost first."""
    out: List[str] = []
    indent = len(lines[number - 1]) - len(lines[number - 1].lstrip())
    for line in reversed(lines[: number - 1]):
        stripped = line.lstrip()
        if not stripped:
            continue
        depth = len(line) - len(stripped)
        if depth < indent:
            opened = _OPENS.match(line)
            if not opened:
                break
            out.append(opened.group(2))
            indent = depth
    return tuple(out)


def _read_outside_entries(text: str, keys: AbstractSet[str]) -> AbstractSet[str]:
    """Those of `keys` the text spells on a line that is no dict entry of a literal value nor opens one, nor sets
    a top-level name to a dict (another config's own `dist_params = dict(...)`). A module that looks names up
    by computed name reads them all."""
    if looks_up_by_computed_name(text):
        return set(keys) & set(IDENTIFIER.findall(text))
    out: Set[str] = set()
    for line in text.splitlines():
        words = keys & set(IDENTIFIER.findall(line))
        if words:
            entry = _ENTRY.match(line) or _OPENS.match(line) or _TOP_SETTING.match(line)
            out |= words - ({entry.group(entry.lastindex or 1)} if entry else set())
    return out


UNREAD_CONSTANT_NOTE = (
    "lowered to info: nothing reads `{name}` (its module never uses it after this line, and no other module imports"
    " it); the value is never what runs"
)
# A module-level assignment to one name: `device = torch.device("cuda" if torch.cuda.is_available() else "cpu")`.
_MODULE_ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")


def unread_constants(
    sources: Sources, lines: Mapping[str, AbstractSet[int]], texts: Iterable[str] = ()
) -> Dict[str, List[Tuple[int, int, str]]]:
    """Of the module-level one-line assignments on `lines` (per path: the lines of findings there), those whose name
    the module never reads (`_names_read`; nor looks names up by computed name), and that no other Python file can
    reach: none imports the name, spells `stem.name` after the module's name, imports the module under another
    name or star-imports it (nv-tlabs/DefTet's `check_condition_tetrahedron_base/utils.py`, whose tensors follow
    their inputs' device), and no notebook, config or script of `texts` spells both. Per path, each such line with
    the note for its findings."""
    candidates: Dict[str, List[Tuple[int, str]]] = {}
    for path, wanted in lines.items():
        text = sources.text(path)
        if looks_up_by_computed_name(text):
            continue
        text_lines = text.splitlines()
        main = _main_block(text_lines)
        assigned: List[Tuple[int, str]] = []
        for number in sorted(wanted):
            line = text_lines[number - 1] if 0 < number <= len(text_lines) else ""
            if main is not None and main[0] <= number <= main[1] and line.startswith(main[2]):
                line = line[len(main[2]) :]  # the `__main__` block's own statements bind module names too
            found = _MODULE_ASSIGNMENT.match(line)
            if found and not line.rstrip().endswith(("(", "[", "{", "\\", ",")):
                assigned.append((number, found.group(1)))
        if assigned:
            read = _names_read(text)
            candidates[path] = [(number, name) for number, name in assigned if read is not None and name not in read]
    if not candidates:
        return {}
    out: Dict[str, List[Tuple[int, int, str]]] = {}
    paths = list(sources.paths())
    named = [set(IDENTIFIER.findall(text)) for text in texts]
    for path, unread in candidates.items():
        stem = module_name(path)[0].rsplit(".", 1)[-1]
        others = [p for p in paths if p != path and stem in sources.words(p)]
        for number, name in unread:
            if any(_reaches(sources, other, stem, name, path) for other in others) or any(
                stem in words and name in words for words in named
            ):
                continue
            out.setdefault(path, []).append((number, number, UNREAD_CONSTANT_NOTE.format(name=name)))
    return out


_MAIN_GUARD = re.compile(r"""^if\s+__name__\s*==\s*["']__main__["']\s*:\s*(?:#.*)?$""")


def _main_block(lines: List[str]) -> Optional[Tuple[int, int, str]]:
    """The first and last line of the module's `if __name__ == "__main__":` block and the indent of its own
    statements (Q-LLM's `benchmark/pred.py`: `device = torch.device(...)` there, which nothing reads), or None."""
    start = next((n for n, line in enumerate(lines, 1) if _MAIN_GUARD.match(line)), None)
    if start is None:
        return None
    indent, last = None, start
    for number in range(start + 1, len(lines) + 1):
        line = lines[number - 1]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            break
        if indent is None:
            indent = line[: len(line) - len(line.lstrip())]
        last = number
    return (start + 1, last, indent) if indent else None


def _names_read(text: str) -> Optional[Set[str]]:
    """The names the module reads (`device` in `x.to(device)`, not in `device=` or `.device`) or declares
    `global`; None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    read: Set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            read.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            read.update(node.names)
    return read


def _reaches(sources: Sources, path: str, stem: str, name: str, target: str = "") -> bool:
    """Whether the Python file at `path` (which spells `stem`) may read `name` of the module `stem`: it imports the
    name, or imports the module and spells `stem.name` (not `batch.data.device` in a file that imports no `data`:
    intent-aware-encoder's `paraphrase/utils/data.py`, whose module-level `device` nothing reads)."""
    if name in sources.import_words(path):
        return True
    text = sources.text(path)
    if not _imports_module_named(text, stem):
        return False
    if re.search(rf"\b{re.escape(stem)}\.{re.escape(name)}\b", text):
        return True
    # the module under another name, or all its names (`from .data import *`): unless the import names another
    # module of that name (intent-aware-encoder's `protaugment/utils/__init__.py` star-imports its own `data`)
    for spec in _aliased_or_starred(text, stem):
        if not target or _names_module(spec, path, target):
            return True
    return False


def _imports_module_named(text: str, stem: str) -> bool:
    """Whether an import of `text` can bind the module `stem` or reach it by a dotted name (`import pkg.data`,
    `from pkg import data`, `from .data import *`), not only import names from it (`from pkg.data import X`); torch's
    own modules are none of the project's (`import torch.utils.data`)."""
    word = re.escape(stem)
    return bool(
        re.search(rf"^\s*import\s+(?!torch\b)[^#\n]*\b{word}\b", text, re.M)
        or re.search(rf"^\s*from\s+(?!torch\b)\.*[\w.]*\s+import\s+\([^)]*\b{word}\b", text, re.M)
        or re.search(rf"^\s*from\s+(?!torch\b)\.*[\w.]*\s+import\s+[^#\n(]*\b{word}\b", text, re.M)
        or re.search(rf"^\s*from\s+\.*(?:[\w.]*\.)?{word}\s+import\s+\*", text, re.M)
    )


def _aliased_or_starred(text: str, stem: str) -> List[str]:
    """The dotted modules (`.data`, `pkg.utils.data`) `text` imports as `stem` under another name or star-imports."""
    word = re.escape(stem)
    found = [m.group(1) for m in re.finditer(rf"^\s*from\s+(\.*(?:[\w.]*\.)?{word})\s+import\s+\*", text, re.M)]
    found += [m.group(1) for m in re.finditer(rf"^\s*import\s+((?:[\w.]*\.)?{word})\s+as\b", text, re.M)]
    for m in re.finditer(rf"^\s*from\s+(\.*[\w.]*)\s+import\s+[^#\n]*\b{word}\s+as\b", text, re.M):
        spec = m.group(1)
        found.append(spec + stem if spec.endswith(".") or not spec else f"{spec}.{stem}")
    return found


def _names_module(spec: str, importer: str, target: str) -> bool:
    """Whether the import `spec` in the file `importer` may name the module of the file `target`: a relative one
    resolved from the importer's folder, an absolute one by its dotted suffix (scans start at different folders)."""
    wanted = module_name(target)[0]
    if spec.startswith("."):
        full = absolute_module(spec, *module_name(importer))
        return wanted == full or wanted.endswith("." + full) or full.endswith("." + wanted)
    return wanted == spec or wanted.endswith("." + spec)

