"""Fix a Jupyter notebook cell by cell: one device variable and one set of imports for the whole
notebook, IPython magics left as they were, and only the changed cells' `source` values rewritten in
the JSON text: every other byte stays as the tool that wrote the notebook (Jupyter, Colab, ...) left it."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from portcheck.fixer.device import choose_name, insert_definition, spelling_for
from portcheck.fixer.engine import FixError, FixOptions, TextFix, check, fix_text
from portcheck.model import Finding, Rule
from portcheck.notebook import NotebookError, load_notebook
from portcheck.pyscan.nodes import walk

_MAGIC = re.compile(r"^(\s*)([%!?]|\w+\s*=\s*!)")
_PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")
_PLACEHOLDER = "# portcheck-magic {}"


_WS = " \t\r\n"


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def source_spans(text: str) -> Dict[int, Tuple[int, int]]:
    """Where each cell's "source" value sits in the notebook's JSON text: {cell number (1-based): (start, end)}.

    A fix replaces those spans and nothing else, so every other byte (key order, indentation, escapes,
    Colab's `\u003c`, a missing final newline) stays as the file had it, whatever wrote it.
    """
    decoder = json.JSONDecoder()
    spans: Dict[int, Tuple[int, int]] = {}

    def members(i: int):
        """(key, value start) of each member of the object opening at text[i]; the index after it last."""
        i = _skip_ws(text, i + 1)
        if text[i] == "}":
            yield None, i + 1
            return
        while True:
            # json.decoder.scanstring is public (json's own parser uses it) but not in typeshed.
            key, i = json.decoder.scanstring(text, _skip_ws(text, i) + 1)  # type: ignore[attr-defined]
            i = _skip_ws(text, i)
            value = _skip_ws(text, i + 1)  # past the ":"
            end = yield key, value
            i = _skip_ws(text, end)
            if text[i] == "}":
                yield None, i + 1
                return
            i += 1  # past the ","

    def walk_object(i: int, on_member) -> int:
        gen = members(i)
        key, pos = next(gen)
        while key is not None:
            end = on_member(key, pos)
            key, pos = gen.send(end)
        return pos

    def skip(pos: int) -> int:
        return decoder.raw_decode(text, pos)[1]

    def cell_member(number: int):
        def on_member(key: str, pos: int) -> int:
            end = skip(pos)
            if key == "source":
                spans[number] = (pos, end)
            return end
        return on_member

    def top_member(key: str, pos: int) -> int:
        if key != "cells" or text[pos] != "[":
            return skip(pos)
        i, number = _skip_ws(text, pos + 1), 0
        if text[i] == "]":
            return i + 1
        while True:
            number += 1
            i = walk_object(i, cell_member(number)) if text[i] == "{" else skip(i)
            i = _skip_ws(text, i)
            if text[i] == "]":
                return i + 1
            i = _skip_ws(text, i + 1)

    walk_object(_skip_ws(text, 0), top_member)
    return spans


def _string_encoder(text: str):
    """Encode a string as the file does: non-ASCII raw or escaped, and the ASCII characters the file
    escapes (`<`, `>`, `&` as Colab does) escaped the same way."""
    ensure_ascii = text.isascii() and bool(re.search(r"\\u[0-9a-fA-F]{4}", text))
    escaped = {chr(int(h, 16)) for h in re.findall(r"\\u(00[2-7][0-9a-fA-F])", text)} & set("<>&'=+")
    slash = "\\/" in text

    def encode(value: str) -> str:
        out = json.dumps(value, ensure_ascii=ensure_ascii)
        for ch in escaped:
            out = out.replace(ch, f"\\u{ord(ch):04x}")
        return out.replace("/", "\\/") if slash else out

    return encode


def render_source(old: str, value: Union[str, List[str]], encode) -> str:
    """The JSON text of a cell's new `source`, laid out like the `old` text it replaces."""
    if isinstance(value, str):
        return encode(value)
    if not value:
        return "[]"
    m = re.match(r"\[[ \t]*(\r?\n)([ \t]*)", old)
    if not m:  # the list was on one line
        sep = "," if re.search(r'",\S', old) else ", "
        return "[" + sep.join(encode(v) for v in value) + "]"
    newline, indent = m.group(1), m.group(2)
    closer = re.search(r"(?:^|\n)([ \t]*)\]$", old)
    close_indent = closer.group(1) if closer else ""
    return "[" + newline + ("," + newline).join(indent + encode(v) for v in value) + newline + close_indent + "]"


def mask_magics(source: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """(source with magic lines replaced by placeholders, the replaced lines); None for a non-Python cell."""
    lines = source.split("\n")
    if lines and lines[0].startswith("%%") and not lines[0].startswith(_PYTHON_CELL_MAGICS):
        return None
    originals: List[str] = []
    for i, line in enumerate(lines):
        m = _MAGIC.match(line)
        if not m:
            continue
        indent = m.group(1)
        placeholder = _PLACEHOLDER.format(len(originals))
        originals.append(line)
        lines[i] = f"{indent}pass  {placeholder}" if indent else placeholder
    return "\n".join(lines), tuple(originals)


def unmask_magics(source: str, originals: Sequence[str]) -> str:
    lines = source.split("\n")
    for k, original in enumerate(originals):
        placeholder = _PLACEHOLDER.format(k)
        hits = [
            i
            for i, line in enumerate(lines)
            if line.rstrip().endswith(placeholder) and line.strip() in (placeholder, f"pass  {placeholder}")
        ]
        if len(hits) != 1:
            raise FixError("an IPython magic line could not be put back; the notebook was left unchanged")
        lines[hits[0]] = original
    return "\n".join(lines)


def _imported_modules(source: str) -> Set[str]:
    """Modules a cell imports under their own name (`import torch`, `import torch_xla.distributed.x`)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    out: Set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is None:
                    parts = alias.name.split(".")
                    out.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return out


@dataclass(frozen=True)
class _Cell:
    index: int  # 1-based among all cells, as findings number them
    raw: Union[str, List[str]]
    masked: Optional[str]
    magics: Tuple[str, ...]


def _cells(doc: Mapping[str, Any]) -> List[_Cell]:
    out = []
    for i, cell in enumerate(doc.get("cells", []), 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        raw = cell.get("source", "")
        if isinstance(raw, list) and all(isinstance(s, str) for s in raw):
            text = "".join(raw)
        elif isinstance(raw, str):
            text = raw
        else:
            continue
        masked = mask_magics(text)
        out.append(_Cell(i, raw, masked[0] if masked else None, masked[1] if masked else ()))
    return out


def _store(cell: Dict[str, Any], raw: Union[str, List[str]], text: str) -> bool:
    """Put a cell's new text in the document; False (and nothing changed) when it is the old text."""
    old = "".join(raw) if isinstance(raw, list) else raw
    if text == old:
        return False  # untouched cells keep their exact line split
    # Jupyter splits a cell's source after each "\n" only (not at other line breaks).
    cell["source"] = re.findall(r"[^\n]*\n|[^\n]+$", text) if isinstance(raw, list) else text
    return True


def fix_notebook(
    text: str, path: str, findings: Sequence[Finding], rules: Mapping[str, Rule], options: FixOptions
) -> TextFix:
    """Fix the code cells of a notebook's JSON `text`; findings carry their cell number."""
    try:
        doc = load_notebook(text)
    except NotebookError as exc:
        raise FixError(str(exc)) from None
    try:
        spans = source_spans(text)
    except (ValueError, IndexError, StopIteration):
        raise FixError("the notebook's JSON could not be located cell by cell, so it is not rewritten") from None
    cells = _cells(doc)
    by_cell: Dict[int, List[Finding]] = {}
    for f in findings:
        by_cell.setdefault(f.cell or 0, []).append(f)
    name, defined = choose_name([c.masked for c in cells if c.masked is not None])
    words = {c.index: set(re.findall(r"[A-Za-z_]\w*", c.masked or "")) for c in cells}

    new_text: Dict[int, str] = {}
    applied: List[Finding] = []
    skipped: List[Tuple[Finding, str]] = []
    imported: Set[str] = set()
    for cell in cells:
        wanted = by_cell.get(cell.index, [])
        if cell.masked is None:
            skipped.extend((f, "the cell is not Python (cell magic)") for f in wanted)
            continue
        source = cell.masked
        if wanted:
            keep: Set[str] = set()
            for other, names in words.items():
                if other != cell.index:
                    keep |= names
            result = fix_text(
                source,
                wanted,
                rules,
                options,
                path=f"{path} cell {cell.index}",
                device_name=name,
                define_device=False,
                imported=imported,
                keep=keep,
            )
            applied.extend(result.applied)
            skipped.extend(result.skipped)
            source = result.text
        new_text[cell.index] = source
        imported |= _imported_modules(source)
    if not applied:
        return TextFix(text, (), tuple(skipped))

    spelling = spelling_for(options.target, options.min_torch, options.literal_device, name)
    users = [
        c.index
        for c in cells
        if c.masked is not None and spelling.style == "variable" and re.search(rf"\b{name}\b", new_text[c.index])
    ]
    if users and not defined:
        home = users[0]
        for c in cells:
            if c.index > users[0]:
                break
            if c.masked is not None and "torch" in _imported_modules(new_text[c.index]):
                home = c.index
                break
        module = cst.parse_module(new_text[home])
        new_text[home] = insert_definition(module, spelling).code
    encode = _string_encoder(text)
    edits: List[Tuple[int, int, str]] = []
    for cell in cells:
        if cell.masked is None:
            continue
        check(new_text[cell.index], f"{path} cell {cell.index}")
        restored = unmask_magics(new_text[cell.index], cell.magics)
        stored = doc["cells"][cell.index - 1]
        if _store(stored, cell.raw, restored) and cell.index in spans:
            start, end = spans[cell.index]
            edits.append((start, end, render_source(text[start:end], stored["source"], encode)))
    out = text
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    if json.loads(out) != doc:  # the splice must say exactly what the edited document says
        raise FixError("the notebook's JSON could not be rewritten in its own layout, so it is not rewritten")
    return TextFix(out, tuple(applied), tuple(skipped))
