"""Settings a project never reads: `"dist_backend": "nccl"` in a dict literal whose key nothing else spells
(HiFi-GAN's vocoder config, copied as a Python dict into AudioLDM2 and tango, whose inference code never
starts a process group). The backend named there is never what runs, and a porting engineer has nothing to
change; its finding is `info` with a note.

Asked, as `portcheck.app_defaults` is, only where the scan covers the whole project: the key (or the key of a
dict it sits in) must be spelt only as such an entry in every Python file, and in no notebook, config or
script. The answer per file is the lines of such entries with the note for their findings, the shape
`portcheck.project_index` lowers to `info`.
"""

from __future__ import annotations

import re
from typing import AbstractSet, Dict, Iterable, List, Mapping, Set, Tuple

from portcheck.project_index import Sources
from portcheck.pyscan.loading import IDENTIFIER

UNREAD_SETTING_NOTE = (
    "lowered to info: nothing in this project reads `{key}` (every file spells it only as an entry of a dict"
    " literal); the setting never takes effect"
)
# A dict literal's entry on one line: `"dist_backend": "nccl",`.
_ENTRY = re.compile(r"""^\s*["']([A-Za-z_]\w*)["']\s*:\s*["'][^"']*["']\s*,?\s*(?:#.*)?$""")


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
            found = _ENTRY.match(text_lines[number - 1]) if 0 < number <= len(text_lines) else None
            if found:
                entries.setdefault(path, []).append((number, (found.group(1),) + _enclosing(text_lines, number)))
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
    """Those of `keys` the text spells on a line that is no dict entry of a literal value nor opens one."""
    out: Set[str] = set()
    for line in text.splitlines():
        words = keys & set(IDENTIFIER.findall(line))
        if words:
            entry = _ENTRY.match(line) or _OPENS.match(line)
            out |= words - ({entry.group(entry.lastindex or 1)} if entry else set())
    return out
