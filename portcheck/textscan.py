"""Matcher kinds for files that are not Python: dependency lists, Dockerfiles, shell, CMake, C++, CUDA sources.

Each works line by line on text with comments removed, so a `# nvidia/cuda` comment never matches.
Dependency files are read by section: only the places that declare dependencies count.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from typing import Any, Dict, Iterator, List, Literal, Mapping, Optional, Sequence, Set, Tuple, Type, overload

from portcheck.filetypes import KINDS
from portcheck.pyscan.matchers import MatcherError, _bool, _str_list

# (line, column, end_line, end_column, label); 1-based lines, 1-based columns, end column exclusive
TextHit = Tuple[int, int, int, int, str]

_TEXT_KINDS = frozenset(KINDS) | {"setup-py"}
_HASH_COMMENTS = frozenset(
    {"requirements", "dockerfile", "shell", "conda", "pyproject", "setup-py", "cmake", "config", "dotenv"}
)
_SLASH_COMMENTS = frozenset({"cpp", "cuda"})
_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_QUOTED = re.compile(r""""([^"]*)"|'([^']*)'""")
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;@ (].*)?$")
_CONDA_ITEM = re.compile(r"^(\s*)-\s*(?:[\w.-]+::)?([A-Za-z0-9][A-Za-z0-9._-]*)")
_TOML_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*$")
_TOML_KEY = re.compile(r"""^\s*["']?([A-Za-z0-9][A-Za-z0-9._-]*)["']?\s*=\s*(.*)$""")
_SETUP_REGION = re.compile(
    r"(?:install_requires|setup_requires|tests_require|extras_require|\w*require\w*|\w*requirements\w*|\w*deps|\w*dependencies)\s*[=:]\s*[\[{(]",
    re.IGNORECASE,
)
_PIP_INSTALL = re.compile(r"\b(?:pip3?|uv\s+pip|python3?\s+-m\s+pip|conda|mamba|micromamba)\s+install\b(.*)")
# pip/conda options whose next word is a value, not a package
_OPTION_VALUES = frozenset(
    {
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-e",
        "--editable",
        "-f",
        "--find-links",
        "-i",
        "--index-url",
        "--extra-index-url",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--src",
        "-n",
        "--name",
        "-p",
        "--python",
        "--platform",
        "--python-version",
        "--implementation",
        "--abi",
        "--global-option",
        "--no-binary",
        "--only-binary",
        "--config-settings",
        "-C",
        "--channel",
        "--trusted-host",
        "--cache-dir",
        "--log",
        "--progress-bar",
        "--upgrade-strategy",
    }
)


def normalize(name: str) -> str:
    """PEP 503 name normalisation."""
    return re.sub(r"[-_.]+", "-", name).lower()


def strip_comment(line: str, kind: str) -> str:
    """The line without its comment: `#` comments (outside quotes) for most kinds, `//` for C++ and CUDA."""
    if kind in _SLASH_COMMENTS:
        stripped = line.lstrip()
        if stripped.startswith(("//", "/*", "*")):
            return ""
        idx = line.find("//")
        return line[:idx] if idx != -1 and '"' not in line[:idx] else line
    if kind not in _HASH_COMMENTS:
        return line
    stripped = line.lstrip()
    if stripped.startswith("#"):
        return ""
    if "#" not in line:
        return line
    quote = ""
    prev = " "
    for i, ch in enumerate(line):
        if quote:
            if ch == quote and prev != "\\":
                quote = ""
        elif ch in "\"'" and kind != "requirements":
            quote = ch
        elif ch == "#" and prev in " \t":
            return line[:i]
        prev = ch
    return line


def _comment_free(lines: Sequence[str], kind: str) -> Iterator[Tuple[int, str]]:
    """(1-based line number, text without comments), skipping C-style block comments in C++/CUDA and shell
    lines that only print."""
    in_block = False
    shown_until = ""  # the word that closes a here-document a shell line only prints
    for number, line in enumerate(lines, 1):
        if shown_until:
            if line.strip() == shown_until:
                shown_until = ""
            continue
        if kind == "shell":
            shown_until = _shown_heredoc(strip_comment(line, kind))
        if kind in _SLASH_COMMENTS:
            if in_block:
                end = line.find("*/")
                if end == -1:
                    continue
                line = " " * (end + 2) + line[end + 2 :]
                in_block = False
            start = line.find("/*")
            if start != -1 and line.find("*/", start) == -1:
                line = line[:start]
                in_block = True
        text = strip_comment(line, kind)
        if text.strip() and not (kind == "shell" and _prints_only(text)):
            yield number, text


# `echo "Compiling kernels by nvcc..."`: a shell line that only prints is prose, to the terminal or its error
# stream (`>&2`). One that writes what it prints somewhere (`echo "export CUDA_HOME=..." >> ~/.bashrc`, `| tee`) is
# configuration and stays. A `|` or `>` inside the quotes is text (vinci's `echo "Usage: $0 {start|stop}
# [--cuda <CUDA_VISIBLE_DEVICES>]"`).
# So is one appended to a log (SpokenNLP's `echo $CUDA_VISIBLE_DEVICES >> ${LOGFILE}`): what it writes is read by
# people.
_PRINTS = re.compile(r"^\s*(?:echo|printf)\b[^>|]*$")
_SHELL_QUOTED = re.compile(r""""(?:[^"\\]|\\.)*"|'[^']*'""")
_TO_STDERR = re.compile(r"\s[12]?>&2\s*$")
_TO_LOG = re.compile(r"\s>>?\s*\S*(?i:log)\S*\s*$")


def _prints_only(text: str) -> bool:
    return bool(_PRINTS.match(_TO_LOG.sub("", _TO_STDERR.sub("", _SHELL_QUOTED.sub('""', text)))))


# `cat <<EOF` (or `cat >&2 <<'EOF'`) opening a usage text: the here-document is printed, prose like an `echo`.
# One written to a file (`cat <<EOF > config.yaml`), piped on, or fed to a program (`python - <<'PY'`) stays.
_SHOWN_HEREDOC = re.compile(r"""^\s*cat(?:\s+>&2)?\s+<<-?\s*(['"]?)(\w+)\1(?:\s+>&2)?\s*$""")


def _shown_heredoc(text: str) -> str:
    """The closing word of the here-document `text` opens when the line only prints it; "" otherwise."""
    m = _SHOWN_HEREDOC.match(text)
    return m.group(2) if m else ""


class TextMatcher:
    kind = ""
    allowed_keys = frozenset({"files"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        unknown = set(params) - set(self.allowed_keys) - {"kind", "files"}
        if unknown:
            raise MatcherError(f"unknown key '{sorted(unknown)[0]}' for matcher kind '{self.kind}'")
        self.files = frozenset(_str_list(params, "files"))
        bad = self.files - _TEXT_KINDS
        if bad:
            raise MatcherError(
                f"unknown file kind '{sorted(bad)[0]}' in 'files' (known: {', '.join(sorted(_TEXT_KINDS))})"
            )

    def applies(self, kind: str) -> bool:
        return kind in self.files

    # why a hit `lowers` reports one level lower; None: `SET_TO_NOTE` (the line turns the CUDA setting off)
    lower_note: Optional[str] = None
    # whether a file's hits after the first are its details, at `info` (see `LineMatcher`)
    details_after_first = False

    def lowers(self, line: str, lines: Sequence[str] = ()) -> bool:
        """Whether a hit on `line` of the file `lines` is reported one level lower (`lower_note` says why)."""
        return False

    def scan(self, kind: str, lines: Sequence[str]) -> Iterator[TextHit]:
        raise NotImplementedError


class LineMatcher(TextMatcher):
    """A regular expression searched on every line (comments removed); `exclude` skips lines that match it,
    `lower` reports them one level lower (`CUDA_VISIBLE_DEVICES= python test.py` hides every GPU to run on
    the CPU) unless a line of the file matches `lower-unless`. A group named `at` says which part of the
    match is the finding (`device: cuda` reports `cuda`).
    `command` must match the whole command the line belongs to, its `\\`-continued lines joined: `--gpus`
    is a container's GPU request in `docker run --gpus all` and a script's own option in
    `python train.py --gpus 0 1`."""

    kind = "line"
    allowed_keys = frozenset(
        {
            "files", "pattern", "ignore-case", "exclude", "lower", "lower-note", "lower-unless", "lower-beside", "once",
            "command", "details-after-first",
        }
    )

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        flags = re.IGNORECASE if params.get("ignore-case") else 0
        self.pattern = _regex(params, "pattern", flags, required=True)
        self.exclude = _regex(params, "exclude", flags, required=False)
        self.lower = _regex(params, "lower", flags, required=False)
        self.command = _regex(params, "command", flags, required=False)
        note = params.get("lower-note")
        if note is not None and (not isinstance(note, str) or not note.startswith("lowered one level: ")):
            raise MatcherError("'lower-note' must be a string that starts with 'lowered one level: '")
        # `lower-beside`: a line anywhere in the file that makes every match inert (`multiprocessing_distributed:
        # False` beside `dist_backend: nccl`: the run never starts a process group)
        self.lower_beside = _regex(params, "lower-beside", flags, required=False)
        if note is not None and self.lower is None and self.lower_beside is None:
            raise MatcherError("'lower-note' needs 'lower' or 'lower-beside'")
        self.lower_note = note
        # `lower-unless`: a line of the file that undoes the lowering (the launcher's `GPUS=$(nvidia-smi ...)`
        # computes the variable `lower` trusts whoever launches the job to set)
        self.lower_unless = _regex(params, "lower-unless", flags, required=False)
        if self.lower_unless is not None and self.lower is None:
            raise MatcherError("'lower-unless' needs 'lower'")
        # `once = true`: the first matching line of a file only (a header's CUDA includes are one port of
        # that file, not one per include)
        self.once = _bool(params, "once", False)
        # `details-after-first = true`: the first matching line of a file is the finding, the others its details,
        # at `info` (a CMake file's list of `.cu` sources is one build, each source reported where it is)
        self.details_after_first = _bool(params, "details-after-first", False)
        if self.once and self.details_after_first:
            raise MatcherError("'once' and 'details-after-first' exclude each other")

    def lowers(self, line: str, lines: Sequence[str] = ()) -> bool:
        beside = self.lower_beside
        if beside is not None and any(beside.search(strip_comment(text, "config")) for text in lines):
            return True
        if self.lower is None or not self.lower.search(line):
            return False
        return self.lower_unless is None or not any(self.lower_unless.search(text) for text in lines)

    def scan(self, kind: str, lines: Sequence[str]) -> Iterator[TextHit]:
        commands = commands_by_line(lines, kind) if self.command is not None else {}
        for number, text in _comment_free(lines, kind):
            m = self.pattern.search(text)
            if m and not (self.exclude is not None and self.exclude.search(text)):
                if self.command is not None and not self.command.search(commands.get(number, text)):
                    continue
                at = "at" if "at" in self.pattern.groupindex and m.group("at") is not None else 0
                yield number, m.start(at) + 1, number, m.end(at) + 1, excerpt(text, m.start(at), m.end(at))
                if self.once:
                    return


def commands_by_line(lines: Sequence[str], kind: str) -> Dict[int, str]:
    """Each line's whole command (1-based line -> text): lines ending in `\\` joined with the lines they
    continue into, comments removed."""
    out: Dict[int, str] = {}
    group: List[int] = []
    parts: List[str] = []
    for number, line in enumerate(lines, 1):
        text = strip_comment(line, kind).rstrip()
        group.append(number)
        continued = text.endswith("\\")
        parts.append(text[:-1] if continued else text)
        if not continued:
            joined = " ".join(parts)
            for n in group:
                out[n] = joined
            group, parts = [], []
    joined = " ".join(parts)
    for n in group:
        out[n] = joined
    return out


_CLOSERS = {"(": ")", "[": "]", "{": "}"}
EXCERPT_LIMIT = 80


def excerpt(text: str, start: int, end: int, limit: int = EXCERPT_LIMIT) -> str:
    """The matched text widened to whole tokens, with brackets and quotes closed where the line closes them.

    A regular expression stops where its pattern does (`--nproc_per_node="$NGPU` without its quote,
    `capabilities: [ gpu` without its bracket); a message quoting that reads as broken code.
    """
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while start < end and text[start].isspace():
        start += 1
    while end < len(text) and not text[end].isspace():
        end += 1
    closing = _unclosed(text[start:end])
    if closing:
        found = text.find(closing, end)
        if found != -1:
            end = found + 1
            while end < len(text) and not text[end].isspace():
                end += 1
    out = text[start:end].rstrip()
    if len(out) > limit:
        cut = out.rfind(" ", 0, limit)
        out = out[: cut if cut > limit // 2 else limit].rstrip() + " ..."
    return out


def _unclosed(fragment: str) -> str:
    """The character that would close the last bracket or quote left open in `fragment`, or ""."""
    stack: List[str] = []
    for ch in fragment:
        if stack and ch == stack[-1]:
            stack.pop()
        elif ch in _CLOSERS:
            stack.append(_CLOSERS[ch])
        elif ch in "\"'":
            stack.append(ch)
    return stack[-1] if stack else ""


@overload
def _regex(params: Mapping[str, Any], key: str, flags: int, required: Literal[True]) -> re.Pattern: ...


@overload
def _regex(params: Mapping[str, Any], key: str, flags: int, required: bool) -> Optional[re.Pattern]: ...


def _regex(params: Mapping[str, Any], key: str, flags: int, required: bool) -> Optional[re.Pattern]:
    pattern = params.get(key)
    if pattern is None and not required:
        return None
    if not isinstance(pattern, str):
        raise MatcherError(f"missing key '{key}'")
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise MatcherError(f"'{key}' is not a valid regular expression: {exc}") from None


# -- dependency declarations, per file kind -------------------------------------------------------------

Dep = Tuple[int, int, int, str]  # line, start column (0-based), end column, name as written


def _quoted_names(number: int, text: str) -> Iterator[Dep]:
    """The package names of the quoted requirement strings on a line (`"triton>=2.3; sys_platform == 'linux'"`)."""
    for m in _QUOTED.finditer(text):
        group = 1 if m.group(1) is not None else 2
        req = _REQUIREMENT.match(m.group(group))
        if req:
            start = m.start(group) + req.start(1)
            yield number, start, start + len(req.group(1)), req.group(1)


def _requirements_deps(lines: Sequence[str]) -> Iterator[Dep]:
    for number, text in _comment_free(lines, "requirements"):
        if text.lstrip().startswith("-"):
            continue  # options: -r, --index-url (the index itself is its own rule)
        m = _REQ_NAME.match(text)
        if m and not text[m.end(1) :].startswith("://"):
            yield number, m.start(1), m.end(1), m.group(1)


def _conda_deps(lines: Sequence[str]) -> Iterator[Dep]:
    section = ""
    for number, text in _comment_free(lines, "conda"):
        if not text[:1].isspace() and not text.startswith("-"):
            section = text.split(":", 1)[0].strip()
            continue
        if section != "dependencies":
            continue  # `channels: - nvidia` names a channel, not a package
        m = _CONDA_ITEM.match(text)
        if m and not text.rstrip().endswith(":"):
            yield number, m.start(2), m.end(2), m.group(2)


_PYPROJECT_ARRAYS = {"project": ("dependencies",), "build-system": ("requires",)}
_PYPROJECT_ALL_ARRAYS = ("project.optional-dependencies", "dependency-groups")
_PYPROJECT_KEYED = re.compile(
    r"^tool\.(?:poetry(?:\.group\.[^.]+)?\.(?:dev-)?dependencies|pixi\.(?:pypi-)?dependencies|pdm\.dev-dependencies)$"
)


def _pyproject_keys(lines: Sequence[str]) -> Iterator[Tuple[int, str, str, Optional["re.Match[str]"], str]]:
    """(line, table, key, the key line's match or None, text) for every key line of a pyproject.toml and
    every line that continues a key's multi-line array; `match` is None on a continuation line."""
    section = ""
    name = ""
    depth = 0  # bracket depth inside an array
    for number, text in _comment_free(lines, "pyproject"):
        if depth > 0:
            depth += text.count("[") - text.count("]")
            yield number, section, name, None, text
            continue
        header = _TOML_HEADER.match(text)
        if header:
            section = header.group(1).strip().strip('"')
            continue
        key = _TOML_KEY.match(text)
        if not key:
            continue
        name, rest = key.group(1), key.group(2)
        if rest.lstrip().startswith("["):
            depth = rest.count("[") - rest.count("]")
        yield number, section, name, key, text


def _pyproject_deps(lines: Sequence[str]) -> Iterator[Dep]:
    for number, section, name, key, text in _pyproject_keys(lines):
        wanted = name in _PYPROJECT_ARRAYS.get(section, ()) or section in _PYPROJECT_ALL_ARRAYS
        if key is None:
            if wanted:
                yield from _quoted_names(number, text)
        elif _PYPROJECT_KEYED.match(section):
            if normalize(name) != "python":
                yield number, key.start(1), key.end(1), name
        elif wanted and key.group(2).lstrip().startswith("["):
            offset = key.start(2)
            for dep in _quoted_names(number, key.group(2)):
                yield number, dep[1] + offset, dep[2] + offset, dep[3]


# An extra named for CUDA installs: `cu118only`, `cuda12`, `gpu`, `nvidia`, `cu121-torch240`.
_CUDA_EXTRA = re.compile(r"(?i)(?:^|[-_.])(?:cu\d+\w*|cuda\w*|gpu|nvidia)(?:$|[-_.])|^cu\d+")


def opt_in_extras(lines: Sequence[str]) -> Dict[int, Tuple[str, bool]]:
    """Line number -> (name, whether the name is for CUDA installs), for the lines of a pyproject.toml's
    optional-dependency extras and dependency groups (`cu118only = [...]`, apple/ml-4m's `fast = ["xformers"]`):
    opt-in, not what a default install pulls."""
    return {
        number: (name, bool(_CUDA_EXTRA.search(name)))
        for number, section, name, _key, _text in _pyproject_keys(lines)
        if section in _PYPROJECT_ALL_ARRAYS
    }


_PP_IF = re.compile(r"^\s*#\s*(ifdef|ifndef|if|elif|else|endif)\b(.*)$")
# `WITH_CUDA`, `USE_CUDA`, `HAVE_CUDA` (byteps) and the project-prefixed spellings (`MMCV_WITH_CUDA`),
# `__CUDACC__`, `__CUDACC_RTC__` (CUTLASS's `cuda/std` headers under NVRTC, `<cstdint>` elsewhere), `__NVCC__`
_CUDA_MACRO = re.compile(
    r"\b(?:\w*_)?(?:WITH_CUDA|USE_CUDA|HAVE_CUDA|ENABLE_CUDA)\b|\b(?:__CUDACC__|__CUDACC_RTC__|__NVCC__|GOOGLE_CUDA)\b"
)


def cuda_conditional_lines(lines: Sequence[str]) -> Set[int]:
    """The line numbers of a C++ source that sit inside `#ifdef WITH_CUDA` (or `#if defined(USE_CUDA)`,
    `__CUDACC__`) and not in its `#else`: a build without CUDA leaves them out (detectron2-style ops'
    `ms_deform_attn.h` includes its CUDA header only there)."""
    out: Set[int] = set()
    stack: List[bool] = []  # per open conditional: whether its current branch is the CUDA one
    for number, text in enumerate(lines, 1):
        m = _PP_IF.match(text)
        if m:
            word, rest = m.group(1), m.group(2)
            if word in ("ifdef", "if"):
                stack.append(bool(_CUDA_MACRO.search(rest)) and "!" not in rest)
            elif word == "ifndef":
                stack.append(False)
            elif word == "elif" and stack:
                stack[-1] = bool(_CUDA_MACRO.search(rest)) and "!" not in rest
            elif word == "else" and stack:
                stack[-1] = False
            elif word == "endif" and stack:
                stack.pop()
            continue
        if any(stack):
            out.add(number)
    return out


_CMAKE_IF = re.compile(r"^\s*(if|elseif|else|endif)\s*\((.*)$", re.IGNORECASE)
# A build switch for a GPU backend: `GGML_CUBLAS`, `USE_CUDA`, `WITH_CUDA`, `CUDAToolkit_FOUND`, `GGML_HIPBLAS`.
_CMAKE_CUDA_SWITCH = re.compile(r"\b\w*(?:CUDA|CUBLAS|CUDNN|NVCC|HIP|ROCM)\w*\b", re.IGNORECASE)
_CMAKE_NOT = re.compile(r"\bNOT\b", re.IGNORECASE)


def cmake_conditional_lines(lines: Sequence[str]) -> Dict[int, str]:
    """Line number -> the switch, for the lines of a CMake file inside `if (GGML_CUBLAS)` (`if (USE_CUDA)`,
    `if (CUDAToolkit_FOUND)`) and not in its `else()`: a configuration without the switch builds without
    CUDA (facebookresearch/seamless_communication's ggml, whose cuBLAS backend is an option, off by default)."""
    out: Dict[int, str] = {}
    stack: List[str] = []  # per open if(): the switch of its current branch, "" when it is no CUDA branch
    for number, text in _comment_free(lines, "cmake"):
        m = _CMAKE_IF.match(text)
        if m:
            word, rest = m.group(1).lower(), m.group(2)
            around = next((s for s in (stack if word == "if" else stack[:-1]) if s), "")
            if around:  # `if (NOT DEFINED CMAKE_CUDA_ARCHITECTURES)` inside `if (GGML_CUDA_SOURCES)`
                out[number] = around
            switch = _CMAKE_CUDA_SWITCH.search(rest)
            branch = switch.group(0) if switch and not _CMAKE_NOT.search(rest) else ""
            if word == "if":
                stack.append(branch)
            elif word == "elseif" and stack:
                stack[-1] = branch
            elif word == "else" and stack:
                stack[-1] = ""
            elif word == "endif" and stack:
                stack.pop()
            continue
        outer = next((s for s in stack if s), "")  # the outermost: the option a user sets
        if outer:
            out[number] = outer
    return out


def explicit_indexes(lines: Sequence[str]) -> Dict[int, str]:
    """Line number -> index name, for the lines of a pyproject.toml's `[[tool.uv.index]]` tables marked
    `explicit = true` (fish-speech's `pytorch-cu128` beside `pytorch-cpu`): uv uses such an index only for
    the packages a source or an extra points at it, so a default install does not pull its CUDA wheels."""
    out: Dict[int, str] = {}
    block: List[int] = []
    name = ""
    explicit = False

    def close() -> None:
        if explicit:
            out.update((number, name or "explicit") for number in block)

    for number, text in _comment_free(lines, "pyproject"):
        header = _TOML_HEADER.match(text)
        if header:
            close()
            block, name, explicit = [], "", False
            if text.strip().startswith("[[") and header.group(1).strip() == "tool.uv.index":
                block = [number]
            continue
        if not block:
            continue
        block.append(number)
        key = _TOML_KEY.match(text)
        if key and key.group(1) == "name":
            name = key.group(2).strip().strip("\"'")
        elif key and key.group(1) == "explicit":
            explicit = key.group(2).strip().lower().startswith("true")
    close()
    return out


def _setup_deps(lines: Sequence[str]) -> Iterator[Dep]:
    depth = 0
    for number, text in _comment_free(lines, "setup-py"):
        if depth > 0:
            yield from _quoted_names(number, text)
            depth += sum(text.count(c) for c in "[{(") - sum(text.count(c) for c in "]})")
            continue
        m = _SETUP_REGION.search(text)
        if m:
            rest = text[m.end() - 1 :]
            for dep in _quoted_names(number, rest):
                yield number, dep[1] + m.end() - 1, dep[2] + m.end() - 1, dep[3]
            depth = sum(rest.count(c) for c in "[{(") - sum(rest.count(c) for c in "]})")


# Where a shell command ends inside a word: `;`, `&&`, `||`, `|`, or a line continuation on its own.
_COMMAND_END = re.compile(r"[;&|]|^\\$")


def _install_deps(lines: Sequence[str], kind: str) -> Iterator[Dep]:
    """Packages named on `pip install ...` / `conda install ...` command lines (Dockerfiles, shell scripts)."""
    for number, text in _comment_free(lines, kind):
        m = _PIP_INSTALL.search(text)
        if not m:
            continue
        args = m.group(1)
        base = m.start(1)
        skip_next = False
        for word in re.finditer(r"\S+", args):
            token = word.group(0)
            # the command ends inside the word too: `pip install -e .; nvidia-smi; ...` (diffuser's sbatch.sh)
            ends = _COMMAND_END.search(token)
            if ends is not None:
                token = token[: ends.start()]
            if skip_next or not token:
                skip_next = False
            elif token.startswith("-"):
                skip_next = token in _OPTION_VALUES
            else:
                dep = _install_dep(token, base + word.start())
                if dep is not None:
                    yield (number, *dep)
            if ends is not None:
                break


def _install_dep(token: str, at: int) -> Optional[Tuple[int, int, str]]:
    """(start, end, name) of the package a word of an install command names, at column `at`; None for a path,
    a URL or a variable."""
    try:
        unquoted = shlex.split(token)[0] if token[0] in "\"'" else token
    except (ValueError, IndexError):
        unquoted = token
    name = _REQ_NAME.match(unquoted)
    if name and "/" not in unquoted.split("@")[0] and not unquoted.startswith((".", "$")):
        start = at + (1 if token[0] in "\"'" else 0)
        return start, start + len(name.group(1)), name.group(1)
    return None


def dependencies(kind: str, lines: Sequence[str]) -> Iterator[Dep]:
    if kind == "requirements":
        return _requirements_deps(lines)
    if kind == "conda":
        return _conda_deps(lines)
    if kind == "pyproject":
        return _pyproject_deps(lines)
    if kind == "setup-py":
        return _setup_deps(lines)
    if kind in ("dockerfile", "shell"):
        return _install_deps(lines, kind)
    return iter(())


class RequirementMatcher(TextMatcher):
    """A dependency on one of `packages` (PEP 503 names; shell-style wildcards such as `nvidia-*-cu12`)
    where a file declares dependencies: requirements lines, `[project]` dependency arrays in pyproject,
    `install_requires` in setup.py, conda `dependencies:`, and `pip install` / `conda install` commands
    in Dockerfiles and shell scripts. `exclude` lists names the wildcards must not cover. A package a file
    names twice (its own extra, then an aggregate `dev` or `all` extra) is reported once, where it comes first."""

    kind = "requirement"
    allowed_keys = frozenset({"files", "packages", "exclude"})

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(params)
        packages = [
            normalize(p) if not any(c in p for c in "*?[") else p.lower() for p in _str_list(params, "packages")
        ]
        self.exact = frozenset(p for p in packages if not any(c in p for c in "*?["))
        self.globs = tuple(p for p in packages if p not in self.exact)
        self.exclude = frozenset(normalize(p) for p in _str_list(params, "exclude", required=False))

    def wanted(self, name: str) -> bool:
        norm = normalize(name)
        if norm in self.exclude:
            return False
        return norm in self.exact or any(fnmatch.fnmatchcase(norm, g) for g in self.globs)

    def scan(self, kind: str, lines: Sequence[str]) -> Iterator[TextHit]:
        seen = set()  # one finding per package and file: a `dev` extra that repeats the `deepspeed` extra
        for number, start, end, name in dependencies(kind, lines):
            norm = normalize(name)
            if norm not in seen and self.wanted(name):
                seen.add(norm)
                yield number, start + 1, number, end + 1, name


# The mark Cython puts on what it writes: a `.cu` holding it is a build's output (py-faster-rcnn's `gpu_nms.cu`,
# copied into HRNet and mmskeleton: `gpu_nms.pyx` cythonized beside the hand-written `nms_kernel.cu` it calls).
_GENERATED = re.compile(r"^/\* Generated by Cython \d")


# An op of another framework: a kernel that includes TensorFlow's (or MXNet's, Paddle's) op headers registers
# itself there, not with PyTorch (StyleGAN2's `dnnlib/tflib/ops/fused_bias_act.cu`, copied into StyleCLIP's TF1
# code beside its PyTorch port): a PyTorch port does not build or run it.
_OTHER_FRAMEWORK_OP = re.compile(r'^\s*#\s*include\s*[<"](?:tensorflow|mxnet|paddle)/')


# An umbrella header's lines, comments left out: it includes the project's headers (and guards itself), nothing else
# (nglod's `solr/sdf.cuh`: `#pragma once` and four `#include "sdf/....cuh"`): the headers it includes hold the code.
_UMBRELLA_LINE = re.compile(r'#\s*(?:include\s*["<]|pragma\s+once\b|ifndef\s+\w+\s*$|define\s+\w+\s*$|endif\b)')


def umbrella_header(lines: Sequence[str]) -> bool:
    """Whether the file only includes the project's own headers (`#include "..."`), with a guard at most."""
    code = [text.strip() for _, text in _comment_free(lines, "cuda")]
    return any(re.match(r'#\s*include\s*"', line) for line in code) and all(_UMBRELLA_LINE.match(line) for line in code)


# A record of one process's arguments, written down after the launcher resolved them (ml-tic-clip's
# `params/*/2016.yaml`, open_clip's arguments dumped as YAML): the rank, local rank and world size of that
# process sit beside the device it picked. It records a past run; nothing reads it back to configure one.
# A configuration someone writes sets a world size or a rank, not all three.
_RESOLVED_RANK = re.compile(r"^(rank|local_rank|world_size)[ \t]*:[ \t]*\d+[ \t]*$")


def run_record(lines: Sequence[str]) -> bool:
    """Whether a YAML file is a dump of one process's resolved arguments (see `_RESOLVED_RANK`)."""
    return len({m.group(1) for line in lines if (m := _RESOLVED_RANK.match(line))}) == 3


class FileMatcher(TextMatcher):
    """The whole file is the finding (a `.cu` source): one finding on line 1, labelled with its line count. A
    file Cython generated is none: its kernel source is the file it was generated beside; nor is another
    framework's op, nor a header that only includes the project's others."""

    kind = "file"

    def scan(self, kind: str, lines: Sequence[str]) -> Iterator[TextHit]:
        if any(_GENERATED.match(line) or _OTHER_FRAMEWORK_OP.match(line) for line in lines):
            return
        if umbrella_header(lines):
            return
        first = lines[0] if lines else ""
        yield 1, 1, 1, len(first) + 1, f"{len(lines)} lines"


class ProjectMatcher(TextMatcher):
    """Findings of the project-wide pass (`portcheck.project_index`): imports, calls and launches of
    the repository's own CUDA-bound names. It reads no single file, so it applies to no file kind."""

    kind = "project"

    def __init__(self, params: Mapping[str, Any]) -> None:
        unknown = set(params) - {"kind"}
        if unknown:
            raise MatcherError(f"unknown key '{sorted(unknown)[0]}' for matcher kind '{self.kind}'")
        self.files = frozenset()

    def scan(self, kind: str, lines: Sequence[str]) -> Iterator[TextHit]:
        return iter(())


TEXT_MATCHERS: Dict[str, Type[TextMatcher]] = {
    m.kind: m for m in (LineMatcher, RequirementMatcher, FileMatcher, ProjectMatcher)
}


def build_text(params: Mapping[str, Any]) -> TextMatcher:
    return TEXT_MATCHERS[params["kind"]](params)
