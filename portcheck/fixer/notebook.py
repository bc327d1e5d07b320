"""Fix a Jupyter notebook cell by cell: one device variable and one set of imports for the whole
notebook, IPython magics left as they were, and the JSON written back in the notebook's own layout."""

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

_MAGIC = re.compile(r"^(\s*)([%!?]|\w+\s*=\s*!)")
_PYTHON_CELL_MAGICS = ("%%time", "%%timeit", "%%capture")
_PLACEHOLDER = "# portcheck-magic {}"


@dataclass(frozen=True)
class Layout:
    """How a notebook's JSON was written, so it can be written the same way again."""

    indent: Union[int, str, None]
    ensure_ascii: bool
    separators: Tuple[str, str]
    newline: str
    trailing: str

    def dump(self, doc: Any) -> str:
        text = json.dumps(doc, indent=self.indent, ensure_ascii=self.ensure_ascii, separators=self.separators)
        if self.newline != "\n":
            text = text.replace("\n", self.newline)  # JSON strings hold no raw newlines
        return text + self.trailing


def detect_layout(text: str, doc: Any) -> Layout:
    """The layout that writes `doc` back as exactly `text`; FixError when none does."""
    newline = "\r\n" if "\r\n" in text else "\n"
    body = text.rstrip("\r\n")
    trailing = text[len(body):]
    lines = body.split(newline)
    indents: List[Union[int, str, None]] = [None]
    if len(lines) > 1:
        lead = lines[1][: len(lines[1]) - len(lines[1].lstrip(" \t"))]
        indents = [len(lead) if lead and set(lead) == {" "} else lead] if lead else [0]
    asciis = [False, True]
    if re.search(r"\\u[0-9a-fA-F]{4}", text) and text.isascii():
        asciis = [True, False]
    for indent in indents:
        for ensure_ascii in asciis:
            for separators in ((",", ": "), (", ", ": "), (",", ":")):
                layout = Layout(indent, ensure_ascii, separators, newline, trailing)
                if layout.dump(doc) == text:
                    return layout
    raise FixError("the notebook's JSON layout cannot be reproduced, so it is not rewritten")


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
        hits = [i for i, line in enumerate(lines) if line.rstrip().endswith(placeholder) and line.strip() in (placeholder, f"pass  {placeholder}")]
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
    for node in ast.walk(tree):
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


def _store(cell: Dict[str, Any], raw: Union[str, List[str]], text: str) -> None:
    old = "".join(raw) if isinstance(raw, list) else raw
    if text == old:
        return  # untouched cells keep their exact line split
    # Jupyter splits a cell's source after each "\n" only (not at other line breaks).
    cell["source"] = re.findall(r"[^\n]*\n|[^\n]+$", text) if isinstance(raw, list) else text


def fix_notebook(text: str, path: str, findings: Sequence[Finding], rules: Mapping[str, Rule], options: FixOptions) -> TextFix:
    """Fix the code cells of a notebook's JSON `text`; findings carry their cell number."""
    try:
        doc = load_notebook(text)
    except NotebookError as exc:
        raise FixError(str(exc)) from None
    layout = detect_layout(text, doc)
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
                source, wanted, rules, options, path=f"{path} cell {cell.index}",
                device_name=name, define_device=False, imported=imported, keep=keep,
            )
            applied.extend(result.applied)
            skipped.extend(result.skipped)
            source = result.text
        new_text[cell.index] = source
        imported |= _imported_modules(source)
    if not applied:
        return TextFix(text, (), tuple(skipped))

    spelling = spelling_for(options.target, options.min_torch, options.literal_device, name)
    users = [c.index for c in cells if c.masked is not None and spelling.style == "variable" and re.search(rf"\b{name}\b", new_text[c.index])]
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
    for cell in cells:
        if cell.masked is None:
            continue
        check(new_text[cell.index], f"{path} cell {cell.index}")
        restored = unmask_magics(new_text[cell.index], cell.magics)
        _store(doc["cells"][cell.index - 1], cell.raw, restored)
    return TextFix(layout.dump(doc), tuple(applied), tuple(skipped))
