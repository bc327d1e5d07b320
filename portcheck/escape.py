"""Make untrusted text (file names, source lines) safe to show: no terminal control sequences, valid
UTF-8 for file names that are not, and Markdown code spans that a backtick in the text cannot close.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

# C0 controls but tab, DEL, C1 controls, lone surrogates, and the bidirectional overrides that make
# text read differently from what it is ("Trojan Source").
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_KEEP_NEWLINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
# Bytes that are not UTF-8 in a file name, as os.fsdecode gives them (PEP 383 surrogate escapes).
_UNDECODABLE = re.compile("[\udc80-\udcff]")
_BACKTICKS = re.compile("`+")


def _visible(match: "re.Match[str]") -> str:
    ch = match.group()
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def neutral(text: str, keep_newlines: bool = False) -> str:
    """`text` with every control character written as a visible escape (`\\x1b`, `\\u202e`)."""
    pattern = _CONTROL_KEEP_NEWLINES if keep_newlines else _CONTROL
    return pattern.sub(_visible, text) if pattern.search(text) else text


def path_text(name: str) -> str:
    """A file name as valid text: bytes that are not UTF-8 become `%XX` (so `b"a\\xff.py"` is
    `a%FF.py`), the same in every report, the baseline and the cache."""
    if name.isascii() or not _UNDECODABLE.search(name):
        return name
    return _UNDECODABLE.sub(lambda m: f"%{ord(m.group()) - 0xDC00:02X}", name)


def code_span(text: str) -> str:
    """`text` as one CommonMark code span, safe inside a GitHub table cell: the fence is longer than
    any run of backticks in it, line breaks become spaces and `|` is escaped for the table."""
    text = neutral(" ".join(text.split()))
    if not text:
        return ""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    # A code span strips one space from each end when both are there: pad so text starting or ending
    # with a backtick or a space keeps it.
    body = f" {text} " if text[0] in "` " or text[-1] in "` " else text
    return f"{fence}{body.replace('|', chr(92) + '|')}{fence}"


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]!~#|])")


def markdown_text(text: str) -> str:
    """Plain text inside Markdown (outside code spans): no inline markup, links or images."""
    import html

    text = html.escape(neutral(" ".join(str(text).split())), quote=False)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def _dirty(*texts: str) -> bool:
    return any(_CONTROL.search(t) for t in texts)


def neutral_report(report: Any) -> Any:
    """A copy of a report whose file names, messages, source lines and directory rows hold no control
    characters (for the terminal); the report itself when there are none, which is the usual case."""
    if not any(_dirty(f.path, f.message, f.source_line, f.note) for f in report.findings) and not any(
        _dirty(e.path, e.message) for e in report.errors
    ):
        return report
    files = []
    for fr in report.scan.files:
        findings = tuple(
            dataclasses.replace(
                f,
                path=neutral(f.path),
                message=neutral(f.message),
                source_line=neutral(f.source_line),
                note=neutral(f.note),
            )
            for f in fr.findings
        )
        error = fr.error
        if error is not None:
            error = dataclasses.replace(error, path=neutral(error.path), message=neutral(error.message))
        files.append(dataclasses.replace(fr, path=neutral(fr.path), findings=findings, error=error))
    scores = {target: _neutral_card(card) for target, card in report.scores.items()}
    return dataclasses.replace(report, scan=dataclasses.replace(report.scan, files=tuple(files)), scores=scores)


def _neutral_card(card: Any) -> Any:
    dirs = getattr(card, "directories", None)
    if not dirs or not dataclasses.is_dataclass(card) or isinstance(card, type):
        return card
    return dataclasses.replace(card, directories=type(dirs)(dataclasses.replace(d, path=neutral(d.path)) for d in dirs))
