"""Jupyter notebooks: scan every code cell as one module (imports in early cells apply to later ones),
and report findings with the cell number and the line inside the cell."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

_MAGIC = re.compile(r"^(\s*)([%!?]|\w+\s*=\s*!)")


class NotebookError(ValueError):
    pass


@dataclass(frozen=True)
class Cell:
    index: int  # 1-based among all cells (markdown included), as Jupyter numbers them in the file
    source: str


def load_notebook(data: str) -> dict:
    """The notebook's JSON document; NotebookError with a one-line reason when it is not one."""
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"not valid notebook JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        raise NotebookError("not a notebook: no 'cells' list")
    return doc


def code_cells(data: str) -> List[Cell]:
    doc = load_notebook(data)
    cells = []
    for i, cell in enumerate(doc["cells"], 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        if isinstance(src, list):
            src = "".join(s for s in src if isinstance(s, str))
        if not isinstance(src, str):
            continue
        # Python also ends a line at a lone CR; with LF only, splitting on "\n" numbers lines as the parser does.
        cells.append(Cell(i, src.replace("\r\n", "\n").replace("\r", "\n")))
    return cells


def neutralize_magics(source: str) -> str:
    """Turn IPython magics and shell escapes into comments so the cell parses; line numbers stay."""
    out = []
    in_cell_magic = False
    for n, line in enumerate(source.split("\n")):
        if n == 0 and line.startswith("%%"):
            in_cell_magic = not line.startswith(("%%time", "%%timeit", "%%capture"))
            out.append("#" + line)
            continue
        if in_cell_magic or _MAGIC.match(line):
            m = re.match(r"^(\s*)", line)
            indent = m.group(1) if m else ""
            out.append(f"{indent}pass  #" + line.strip() if _MAGIC.match(line) and indent else "#" + line)
        else:
            out.append(line)
    return "\n".join(out)


def join_cells(cells: Sequence[Cell]) -> Tuple[str, List[Tuple[int, int]]]:
    """One module from all cells, and for each module line (1-based index - 1) its (cell, line in cell)."""
    parts = []
    mapping: List[Tuple[int, int]] = []
    for cell in cells:
        text = neutralize_magics(cell.source)
        lines = text.split("\n")
        for j in range(len(lines)):
            mapping.append((cell.index, j + 1))
        parts.append(text)
    return "\n".join(parts) + "\n", mapping


_SHELL_ESCAPE = re.compile(r"^\s*(?:\w+\s*=\s*)?!")
_SHELL_CELLS = ("%%bash", "%%sh", "%%script bash", "%%script sh")


def shell_view(cells: Sequence[Cell]) -> str:
    """The shell commands of the cells (`!cmd`, `x = !cmd`, `%%bash` cell bodies) on the lines
    `join_cells` gives them, every other line blank, so shell-script rules can scan them."""
    out = []
    for cell in cells:
        lines = cell.source.split("\n")
        shell_cell = lines[0].strip().startswith(_SHELL_CELLS)
        for n, line in enumerate(lines):
            if shell_cell:
                out.append(line if n else "")
                continue
            m = _SHELL_ESCAPE.match(line)
            # Blank the prefix instead of cutting it, so columns stay those of the cell.
            out.append(" " * m.end() + line[m.end() :] if m else "")
    return "\n".join(out) + "\n"


def locate(mapping: Sequence[Tuple[int, int]], line: int) -> Tuple[Optional[int], int]:
    if 0 < line <= len(mapping):
        return mapping[line - 1]
    return None, line
