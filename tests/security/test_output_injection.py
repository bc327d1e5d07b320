"""What a repository puts in its file names and lines cannot take over a report or a terminal.

Issue items 8 (file names that are not UTF-8), 10 (Markdown injection through a code span, checked
with a real CommonMark renderer) and 17 (terminal escape bytes in text and GitHub output).
"""

from __future__ import annotations

import json
import os
from html.parser import HTMLParser
from typing import List, Tuple

import pytest

from portcheck.report import FORMATS
from tests.security.conftest import run_script

CUDA_LINE = "x = y.cuda()"

# --- file names that are not valid UTF-8 -------------------------------------------------------

BAD_NAME = b"bad\xff\xfe.py"
SHOWN = "bad%FF%FE.py"


@pytest.fixture
def undecodable(tmp_path):
    folder = os.fsencode(tmp_path)
    try:
        with open(os.path.join(folder, BAD_NAME), "wb") as handle:
            handle.write(f"import torch\n{CUDA_LINE}\n".encode())
    except OSError as exc:
        pytest.skip(f"this file system refuses non-UTF-8 names: {exc}")
    (tmp_path / "good.py").write_text(f"import torch\n{CUDA_LINE}\n")
    return tmp_path


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_non_utf8_file_name_in_an_output_file(undecodable, cli, fmt):
    result = cli(undecodable, "scan", ".", "--no-cache", "-q", "--output-format", fmt, "-o", "report.out")
    assert result.exit_code == 1, result.output
    text = (undecodable / "report.out").read_bytes().decode("utf-8")  # valid UTF-8
    assert SHOWN in text or SHOWN.replace("%", "%25") in text
    if fmt in ("json", "sarif"):
        json.loads(text)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "markdown"])
@pytest.mark.parametrize("locale", ["C.UTF-8", "C"])
def test_a_non_utf8_file_name_on_stdout(undecodable, fmt, locale):
    result = run_script(["scan", ".", "--no-cache", "-q", "--output-format", fmt],
                        cwd=undecodable, env={"LC_ALL": locale, "PYTHONIOENCODING": "", "PYTHONUTF8": "0"})
    assert result.returncode == 1, result.stderr
    text = result.stdout.decode("utf-8")  # valid UTF-8 whatever the locale
    assert SHOWN in text or SHOWN.replace("%", "%25") in text, text


def test_baseline_and_fix_name_the_file_the_same_way(undecodable, cli):
    cli(undecodable, "scan", ".", "--no-cache", "-q", "--write-baseline", "base.json")
    paths = {row["path"] for row in json.loads((undecodable / "base.json").read_text(encoding="utf-8"))["findings"]}
    assert SHOWN in paths
    # The recorded name matches the next scan's, so the finding is known.
    again = cli(undecodable, "scan", ".", "--no-cache", "-q", "--baseline", "base.json")
    assert again.exit_code == 0, again.output
    preview = cli(undecodable, "fix", ".", "--diff")
    assert f"--- a/{SHOWN}" in preview.output, preview.output
    cli(undecodable, "fix", ".")
    assert b"cuda()" not in open(os.path.join(os.fsencode(undecodable), BAD_NAME), "rb").read()


def test_path_text_is_plain_for_utf8_names():
    from portcheck.escape import path_text

    assert path_text("dir/ünïcode.py") == "dir/ünïcode.py"
    assert path_text(os.fsdecode(b"a\xff/b.py")) == "a%FF/b.py"


# --- Markdown: a real CommonMark renderer decides -------------------------------------------

PAYLOAD = "`` <img src=x onerror=alert(1)> ![t](https://evil.example/t.png) @octocat [l](https://evil.example) ``"


class _Collect(HTMLParser):
    """Tags, and each piece of text with the tags it sits in."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: List[Tuple[str, dict]] = []
        self.open: List[str] = []
        self.texts: List[Tuple[str, Tuple[str, ...]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in ("br", "hr", "img", "input"):
            self.open.append(tag)

    def handle_endtag(self, tag):
        if tag in self.open:
            while self.open.pop() != tag:
                pass

    def handle_data(self, data):
        self.texts.append((data, tuple(self.open)))


def render_markdown(text: str) -> _Collect:
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    parsed = _Collect()
    parsed.feed(html)
    return parsed


def test_the_renderer_harness_sees_an_injection():
    parsed = render_markdown("| a |\n|---|\n| `` " + PAYLOAD + " `` |\n")
    assert any(tag == "img" for tag, _ in parsed.tags)


@pytest.mark.parametrize("payload", [PAYLOAD, "`" + PAYLOAD, PAYLOAD + "`", "```" + PAYLOAD + "````", "| `x` |"])
def test_a_source_line_stays_inside_its_code_span(tmp_path, cli, payload):
    (tmp_path / "train.py").write_text(f"import torch\n{CUDA_LINE}  # {payload}\n")
    weird = tmp_path / "``<img src=y> ![i](https:evil.png) @octocat.py"
    weird.write_text(f"import torch\n{CUDA_LINE}\n")
    result = cli(tmp_path, "scan", ".", "--no-cache", "-q", "--output-format", "markdown")
    assert result.exit_code == 1
    parsed = render_markdown(result.output)
    assert [tag for tag, _ in parsed.tags if tag in ("img", "a", "script")] == []
    for needle in [n for n in ("onerror", "@octocat", "evil.example", "evil.png") if n in payload + weird.name]:
        holders = [inside for data, inside in parsed.texts if needle in data]
        assert holders and all("code" in inside for inside in holders), (needle, holders)
    # The whole source line (as collapsed) is one code span's text.
    spans = ["".join(d for d, inside in parsed.texts if "code" in inside)]
    assert " ".join(payload.split()) in spans[0]


@pytest.mark.parametrize("text", ["a", "`", "``", "a`b", "` a `", "x ``` y", "|", "a | b", "`|`", " lead", "trail\n "])
def test_code_span_round_trips_through_a_commonmark_table_cell(text):
    from portcheck.escape import code_span

    parsed = render_markdown("| h |\n|---|\n| " + code_span(text) + " |\n")
    inside_code = [(d, inside) for d, inside in parsed.texts if "code" in inside]
    assert inside_code == [(" ".join(text.split()), ("table", "tbody", "tr", "td", "code"))]


# --- terminal escapes --------------------------------------------------------------------------

INJECTED = ("\x1b]0;pwned\x07", "\x1b[2J", "\x9b31m", "\u202e")


@pytest.fixture
def escaping(tmp_path):
    name = "evil\x1b]0;pwned\x07\x1b[2J.py"
    (tmp_path / name).write_text(f"import torch\n{CUDA_LINE}\n")
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04 \x1b[2J\x1b]0;pwned\x07\u202e\n")
    (tmp_path / "broken\x1b[2J.py").write_text("def f(:\n    x.cuda()\n")
    return tmp_path


@pytest.mark.parametrize("fmt", ["text", "github"])
@pytest.mark.parametrize("color", [False, True])
def test_control_characters_never_reach_the_terminal(escaping, fmt, color):
    env = {"FORCE_COLOR": "1", "NO_COLOR": ""} if color else {}
    if color:
        env.pop("NO_COLOR")
    result = run_script(["scan", ".", "--no-cache", "-q", "--output-format", fmt], cwd=escaping,
                        env={**env, "PYTHONIOENCODING": "utf-8"})
    out = result.stdout.decode("utf-8")
    assert result.returncode == 1, result.stderr
    assert "evil" in out and "Dockerfile" in out and "broken" in out
    for seq in INJECTED:
        assert seq not in out, (seq, out)
    assert "\\x1b]0;pwned\\x07" in out


def test_fix_output_shows_control_characters_escaped(escaping):
    result = run_script(["fix", ".", "--diff"], cwd=escaping, env={"PYTHONIOENCODING": "utf-8"})
    out = (result.stdout + result.stderr).decode("utf-8")
    assert "evil" in out and "broken" in out, out
    for seq in INJECTED[:2]:
        assert seq not in out, (seq, out)


def test_neutral_keeps_printable_text():
    from portcheck.escape import neutral

    assert neutral("tab\tok é 中 ✓") == "tab\tok é 中 ✓"
    assert neutral("a\x1bb\nc") == "a\\x1bb\\x0ac"
    assert neutral("a\x1bb\nc", keep_newlines=True) == "a\\x1bb\nc"
