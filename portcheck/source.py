"""Turn a file's bytes into text the way Python would (PEP 263 cookie, BOM), remembering how to turn it back."""

from __future__ import annotations

import codecs
import io
import re
import tokenize
from dataclasses import dataclass
from typing import List


class DecodeError(Exception):
    """The bytes are not text in the declared (or default) encoding."""


@dataclass(frozen=True)
class SourceText:
    text: str  # without the BOM
    encoding: str
    bom: bool
    newline: str  # the first line ending seen: "\n", "\r\n" or "\r"

    def encode(self, text: str) -> bytes:
        """Encode `text` back with this file's encoding and BOM."""
        data = text.encode(self.encoding)
        return (codecs.BOM_UTF8 + data) if self.bom else data


def detect_newline(text: str) -> str:
    idx = text.find("\n")
    cr = text.find("\r")
    if cr != -1 and (idx == -1 or cr < idx):
        return "\r\n" if text[cr : cr + 2] == "\r\n" else "\r"
    return "\n"


_LINE_END = re.compile(r"\r\n|\r|\n")


def python_lines(text: str) -> List[str]:
    """The lines of `text` as Python numbers them: only LF, CRLF and CR end a line.

    `str.splitlines` also splits at form feeds and Unicode line separators, which may sit inside a
    string or a comment, and would shift every later line against the parser's line numbers.
    """
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def decode_python(data: bytes) -> SourceText:
    """Decode Python source per PEP 263; raise DecodeError with a one-line reason."""
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # not UTF-8 without a cookie, unknown codec, or cookie/BOM conflict
        reason = str(exc)
        if "invalid or missing encoding declaration" in reason:
            reason = "not UTF-8 and no coding cookie declares another encoding"
        raise DecodeError(f"cannot decode: {reason}") from None
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        raise DecodeError(f"cannot decode as {encoding}: byte 0x{body[exc.start]:02x} at offset {exc.start}") from None
    except LookupError:
        raise DecodeError(f"unknown encoding {encoding!r}") from None
    return SourceText(text=text, encoding=encoding, bom=bom, newline=detect_newline(text))


def decode_text(data: bytes) -> SourceText:
    """Decode a non-Python text file (UTF-8, BOM tolerated)."""
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not UTF-8 text: byte 0x{body[exc.start]:02x} at offset {exc.start}") from None
    return SourceText(text=text, encoding="utf-8", bom=bom, newline=detect_newline(text))
