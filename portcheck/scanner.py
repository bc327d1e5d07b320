"""Scan files: read bytes, decode, dispatch by file kind, collect findings per file.

`scan_one` is a pure function of a file and picklable settings, so it runs the same in a worker
process, behind the cache, or inline.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import FrozenSet, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from portcheck import limits
from portcheck.analyze import (
    DETAIL_NOTE,
    TEST_NOTE,
    ParseFailure,
    analyze_python_tree,
    apply_suppressions,
    findings_for,
    lower_finding,
    match_module,
    parse_python,
)
from portcheck.backends import (
    DEPLOYMENT_WORDS,
    LAZY_PLATFORM_WORDS,
    OTHER_PLATFORM_WORDS,
    PLATFORM_MARKER,
    PLATFORM_NAME_WORDS,
    name_words,
    named_backends,
    other_platform_part,
)
from portcheck.catalog import Catalog, CompiledRule, load_catalog, select_rules
from portcheck.discover import Candidate, matches_any
from portcheck.escape import path_text
from portcheck.model import FileError, FileResult, Finding, FixSafety, Rule, Severity, Target
from portcheck.prefilter import Prefilter
from portcheck.pyscan.matchers import SET_TO_NOTE
from portcheck.pyscan.testcode import is_test_path
from portcheck.source import DecodeError, decode_python, decode_text, looks_binary, python_lines
from portcheck.suppress import skip_file
from portcheck.textscan import (
    cmake_conditional_lines,
    cuda_conditional_lines,
    explicit_indexes,
    opt_in_extras,
    run_record,
)

MAX_BYTES = limits.MAX_NOTEBOOK_BYTES  # no file kind may be larger: such files are reported, not read


@dataclass(frozen=True)
class Settings:
    """What a worker needs to scan a file; small and picklable."""

    target: str = "generic"
    select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    min_torch: str = "2.6"  # what the fixer may write decides what is fixable
    literal_device: bool = False
    # The scanned folders, as display paths: a file's place in its project (is it under `tests/`?)
    # is its path below the folder it was found in, not below the working directory.
    roots: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Prepared:
    rules: Tuple[CompiledRule, ...]
    prefilter: Prefilter
    text_rules: Tuple[CompiledRule, ...]
    by_code: Mapping[str, Rule]


def _prepared(rules: Tuple[CompiledRule, ...]) -> Prepared:
    return Prepared(
        rules=rules,
        prefilter=Prefilter(rules),
        text_rules=tuple(r for r in rules if r.text_matchers),
        by_code={entry.rule.code: entry.rule for entry in rules},
    )


def prepare_rules(catalog: Catalog, target: Target, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> Prepared:
    """The rules of `catalog` a scan for `target` runs, ready to match."""
    return _prepared(tuple(select_rules(catalog, target, select, ignore)))


@lru_cache(maxsize=8)
def prepare(settings: "Settings | Tuple[Settings, ...]") -> Prepared:
    """The rules, pre-filter and text rules for one target's settings, or the union over several
    (settings that differ only in their target): one pass then serves every target."""
    group = settings if isinstance(settings, tuple) else (settings,)
    catalog = load_catalog()
    if len(group) == 1:
        return prepare_rules(catalog, Target(group[0].target), group[0].select, group[0].ignore)
    chosen = {id(r) for s in group for r in select_rules(catalog, Target(s.target), s.select, s.ignore)}
    return _prepared(tuple(r for r in catalog.rules if id(r) in chosen))


def count_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def display_path(path: Path, cwd: Optional[Path] = None) -> str:
    # os.path rather than pathlib, and a prefix test before relpath: this runs once per file.
    base = os.path.abspath(cwd or os.getcwd())
    full = os.path.abspath(path)
    if full.startswith(base) and full[len(base) : len(base) + 1] == os.sep:
        return path_text(full[len(base) + 1 :].replace(os.sep, "/"))
    try:
        rel = os.path.relpath(full, base)
    except ValueError:  # another drive on Windows
        rel = str(path)
    return path_text(rel.replace(os.sep, "/"))  # bytes that are not UTF-8 as %XX


def project_path(path: str, roots: Sequence[str]) -> str:
    """`path` (a display path) below the deepest of `roots` (scanned folders) that holds it."""
    best = ""
    for root in roots:
        prefix = root.rstrip("/") + "/"
        if path.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return path[len(best) :]


def other_accelerator_requirements(path: str) -> bool:
    """A requirements file for another platform (`requirements_xpu.txt`, `requirements-rocm.txt`): what it
    installs is that platform's setup, not a CUDA dependency of the code."""
    name = re.split(r"[\\/]", path)[-1]
    words = name_words(name.rsplit(".", 1)[0] if "." in name else name)
    return "requirements" in words and any(w in OTHER_PLATFORM_WORDS for w in words)


MARKER_NOTE = (
    "lowered one level: its environment marker installs it on some platforms only; where the marker is false the"
    " project installs without it (a Linux x86_64 or aarch64 marker still holds on Trainium hosts)"
)
EXTRA_NOTE = (
    "lowered one level: in the `{extra}` extra, an opt-in install for CUDA machines; a default install does not pull it"
)
OPT_IN_NOTE = (
    "lowered one level: in the `{extra}` extra, an opt-in install; a default install does not pull it (the code's"
    " imports of it say whether the project needs it)"
)
CONDITIONAL_NOTE = "lowered one level: inside `#ifdef WITH_CUDA` (or the like), which a build without CUDA leaves out"
SWITCH_NOTE = "lowered one level: inside `if ({switch})`, a build switch; a configuration without it builds no CUDA"
INDEX_NOTE = (
    "lowered one level: the `{index}` index is explicit, used only for what a source or an extra points at it;"
    " a default install does not pull from it"
)
_SOURCE_PLATFORM_WORDS = OTHER_PLATFORM_WORDS - {"cpu", "neuron"}
OTHER_PLATFORM_NOTE = "lowered to info: `{part}` names another platform; what is here is its code, not CUDA lock-in"
DEPLOYMENT_NOTE = (
    "lowered to info: `{part}` is TensorRT deployment code, NVIDIA-only by design; a port replaces that path"
    " (torch-neuronx, ONNX Runtime) rather than changing it"
)


# A TensorRT plugin's source (hustvl/YOLOP `toolkits/deploy/yololayer.cu`): it implements TensorRT's plugin
# interfaces, so it runs inside a TensorRT engine only.
_TENSORRT_PLUGIN = re.compile(r"\b(?:NvInfer\w*\.h|nvinfer1::|IPluginV2\w*|IPluginCreator)\b")
TENSORRT_PLUGIN_NOTE = (
    "lowered to info: `{name}` is a TensorRT plugin (it implements TensorRT's plugin interface), NVIDIA-only by"
    " design; a port replaces the TensorRT path rather than changing it"
)


class PlatformCode(NamedTuple):
    """A file kept for another platform: the note for its findings, and whether it is TensorRT deployment
    code (its package imports kept at `info`) rather than another accelerator's (not reported; see
    `on_other_platform`)."""

    note: str
    deployment: bool
    # The XLA-like platforms it names (`device_tpu.py`: tpu): the XLA rules may still speak to its code.
    lazy: FrozenSet[str] = frozenset()


# Per target, the XLA-like platforms whose code the XLA rules speak to. For `neuron`, the legacy
# torch-neuronx path only (`legacy_xla.py` setting `NEURON_CC_FLAGS`, `device_neuron.py`), which native Neuron
# replaces; a TPU or PyTorch/XLA path (gemma_pytorch's `model_xla.py`, `run_tpu.py`) is another platform's
# code, kept as it is by the port.
_LAZY_CODE_FOR: Mapping[Target, FrozenSet[str]] = {Target.NEURON: frozenset({"neuron"})}
# An XLA-like platform's file that names Neuron (`torch_neuronx`, `NEURON_CC_FLAGS`): the legacy Neuron path.
_NAMES_NEURON = re.compile(r"(?i)neuron")


def other_platform_code(path: str, kind: str) -> Optional[PlatformCode]:
    """Whether a file is kept for another platform (`op_builder/npu/builder.py`, `device_tpu.py`,
    `docker/rocm/Dockerfile`, ROCm's `csrc/attention/hip_fmha/*.cpp`, TensorRT's `flux/trt/`); None for any
    other file. `path` is the project path."""
    # in a C++ source's path `hip` means ROCm; in Python it may name a joint (`left_hip.py`)
    words = _SOURCE_PLATFORM_WORDS if kind in ("cpp", "cuda") else PLATFORM_NAME_WORDS
    part = other_platform_part(path, words)
    if not part:
        return None
    named = set(name_words(part.rsplit(".", 1)[0]))
    deployment = bool(named & DEPLOYMENT_WORDS)
    note = (DEPLOYMENT_NOTE if deployment else OTHER_PLATFORM_NOTE).format(part=part)
    return PlatformCode(note, deployment, frozenset(named & LAZY_PLATFORM_WORDS))


def platform_named(name: str, note: str) -> PlatformCode:
    """Code named for another platform by a function or a caller (`patch_qwen3_5_forward_npu`), as
    `on_other_platform` takes it."""
    return PlatformCode(note, False, frozenset(set(name_words(name)) & LAZY_PLATFORM_WORDS))


def as_info(findings: Sequence[Finding], note: str) -> List[Finding]:
    return [replace(f, severity=Severity.INFO, guarded=True, note=note) for f in findings]


def on_other_platform(findings: Sequence[Finding], code: PlatformCode, target: Target) -> List[Finding]:
    """The findings of a file kept for another platform. TensorRT deployment code keeps its imports of
    packages at `info`: the path a port replaces, said once where it comes in; the devices, syncs and
    kernels inside are its workings (readers rejected them even at `info`). Another accelerator's code (an
    Ascend backend, a ROCm kernel, an NPU op builder, an MLX port) runs there only and is no CUDA lock-in: its
    findings go, except, in an XLA-like platform's code the target replaces, the XLA rules', which are about
    that code's own XLA idioms (a legacy `device_neuron.py` for `neuron`, `device_tpu.py` for `xla`);
    elsewhere (an MLX port's `data_ptr()` cache key, a TPU runner for `neuron`) they are not the target's
    either."""
    if code.deployment:
        return as_info([f for f in findings if f.category == "package"], code.note)
    lazy = bool(code.lazy & _LAZY_CODE_FOR.get(target, LAZY_PLATFORM_WORDS))
    return as_info([f for f in findings if f.category == "xla" and lazy], code.note)


_RUN_CONFIGS = frozenset({"config", "dotenv", "shell", "dockerfile"})
# An image built to run the tests (tango's `Dockerfile.test`, for its GPU tests; `test.Dockerfile`,
# `Dockerfile-tests`): test infrastructure, as a test suite's run configuration is.
_TEST_IMAGE = re.compile(r"^(?:Dockerfile[.-]tests?|tests?[.-]Dockerfile|tests?\.dockerfile)$", re.IGNORECASE)


def _text_findings(
    rules: Sequence[CompiledRule], kind: str, text: str, path: str, target: Target, test: bool = False
) -> List[Finding]:
    """The findings of a file's text rules; `test`: the file is part of a test suite."""
    lines = python_lines(text)
    out: List[Finding] = []
    other_platform = kind == "requirements" and other_accelerator_requirements(path)
    extras = opt_in_extras(lines) if kind == "pyproject" else {}
    indexes = explicit_indexes(lines) if kind == "pyproject" else {}
    conditional = cuda_conditional_lines(lines) if kind == "cpp" else set()
    switched = cmake_conditional_lines(lines) if kind == "cmake" else {}
    for entry in rules:
        rule = entry.rule
        severity = rule.severity_for(target)
        if severity is Severity.OFF:
            continue
        for matcher in entry.text_matchers:
            if not matcher.applies(kind):
                continue
            if other_platform and matcher.kind == "requirement":
                continue
            first = 0  # with `details-after-first`, the line the file's other matches are details of
            for line, col, end_line, end_col, label in matcher.scan(kind, lines):
                message = entry.message.replace("{match}", label)
                source = lines[line - 1].strip() if 0 < line <= len(lines) else ""
                marked = matcher.kind == "requirement" and bool(PLATFORM_MARKER.search(source))
                sev, note = (severity.lowered(), MARKER_NOTE) if marked else (severity, "")
                if not marked and matcher.lowers(source, lines):
                    if matcher.lower_note is None and test:
                        continue  # `CUDA_VISIBLE_DEVICES="" python train.py` in a test script: a CPU run anywhere
                    marked, sev, note = True, severity.lowered(), matcher.lower_note or SET_TO_NOTE
                elif not marked and line in extras:
                    extra, for_cuda = extras[line]
                    marked, sev = True, severity.lowered()
                    note = (EXTRA_NOTE if for_cuda else OPT_IN_NOTE).format(extra=extra)
                elif not marked and line in indexes:
                    marked, sev, note = True, severity.lowered(), INDEX_NOTE.format(index=indexes[line])
                elif not marked and line in conditional:
                    marked, sev, note = True, severity.lowered(), CONDITIONAL_NOTE
                elif not marked and line in switched:
                    marked, sev, note = True, severity.lowered(), SWITCH_NOTE.format(switch=switched[line])
                if matcher.details_after_first:
                    if not first:
                        first = line
                    elif not marked and sev is not Severity.INFO:
                        sev, note = Severity.INFO, DETAIL_NOTE.format(code=rule.code, line=first)
                out.append(
                    Finding(
                        path=path,
                        line=line,
                        column=col,
                        end_line=end_line,
                        end_column=end_col,
                        code=rule.code,
                        name=rule.name,
                        category=rule.category,
                        severity=sev,
                        message=message,
                        fixable=False,
                        fix_safety=rule.fix_safety,
                        source_line=source,
                        guarded=marked,
                        note=note,
                    )
                )
    return apply_suppressions(out, lines)


def _notebook_findings(
    data: str, path: str, prepared: Prepared, target: Target
) -> Tuple[List[Finding], Optional[FileError]]:
    per_target, error, _ = _notebook(data, path, prepared, (target,))
    return per_target[0], error


def _notebook(
    data: str, path: str, prepared: Prepared, targets: Sequence[Target]
) -> Tuple[List[List[Finding]], Optional[FileError], int]:
    """Findings per target, the reason the notebook could not be read, and its lines of code (all code cells)."""
    from portcheck.notebook import NotebookError, code_cells

    try:
        cells = code_cells(data)
    except NotebookError as exc:
        return [[] for _ in targets], FileError(path=path, message=str(exc), kind="parse"), 0
    findings, error = _cell_findings(cells, path, prepared, targets)
    return findings, error, sum(count_lines(c.source) for c in cells)


# A notebook line that runs `nvidia-smi` to show its output (`!nvidia-smi --query-gpu=name --format=csv`), not
# to capture (`x = !nvidia-smi`) or pipe it: where there is none, the cell prints an error and goes on.
_SHOWS_GPUS = re.compile(r"[ \t]*![ \t]*nvidia-smi\b[^|>;&]*$")
SHOWN_NOTE = (
    "lowered to info: the notebook runs `nvidia-smi` to show the GPUs; where there is none the cell prints an"
    " error and the notebook goes on"
)


def _cell_findings(
    cells, path: str, prepared: Prepared, targets: Sequence[Target]
) -> Tuple[List[List[Finding]], Optional[FileError]]:
    from portcheck.notebook import join_cells, locate, shell_view

    source, mapping = join_cells(cells)
    # Shell escapes (`!nvidia-smi`, `%%bash` cells) are comments to the parser: scan them as shell.
    shells = [
        _text_findings(prepared.text_rules, "shell", shell_view(cells), path, t) if prepared.text_rules else []
        for t in targets
    ]
    raw = [line for cell in cells for line in cell.source.split("\n")]  # the lines of `source`, magics as written
    shown = {n for n, line in enumerate(raw, 1) if _SHOWS_GPUS.match(line)}
    if shown:
        shells = [[as_info([f], SHOWN_NOTE)[0] if f.line in shown else f for f in found] for found in shells]
    rules = prepared.prefilter.candidates(source)
    if not rules and not any(shells):
        return [[] for _ in targets], None
    lines = python_lines(source)
    try:
        module = parse_python(source, path)
        matches = match_module(module, source, rules) if rules else []
        match_lines = lines
    except ParseFailure:
        # One broken cell must not hide the others. Blank the cells that do not parse on their own
        # (keeping their line count, so positions hold) and analyse the rest as one module, so
        # imports in earlier cells still resolve names in later ones.
        from portcheck.notebook import neutralize_magics

        parts = []
        for cell in cells:
            text = neutralize_magics(cell.source)
            try:
                parse_python(text, path)
            except ParseFailure:
                text = "\n" * text.count("\n")
            parts.append(text)
        source = "\n".join(parts) + "\n"
        try:
            module = parse_python(source, path)
        except ParseFailure as exc:
            return [[] for _ in targets], FileError(path=path, message=str(exc), kind="parse")
        matches = match_module(module, source, rules)
        match_lines = python_lines(source)
    out: List[List[Finding]] = []
    for target, shell in zip(targets, shells):
        kept = apply_suppressions(findings_for(matches, rules, target, path, match_lines), lines) + shell
        located = []
        for f in kept:
            cell, line = locate(mapping, f.line)
            end_cell, end_line = locate(mapping, f.end_line)
            also = tuple(
                (locate(mapping, a)[1], b, locate(mapping, c)[1], d)
                for a, b, c, d in f.also
                if locate(mapping, a)[0] == cell == locate(mapping, c)[0]
            )
            located.append(
                replace(f, cell=cell, line=line, end_line=max(end_line, line) if cell == end_cell else line, also=also)
            )
        out.append(located)
    return out, None


def per_file_ignored(path: str, settings: Settings) -> Tuple[str, ...]:
    codes: List[str] = []
    for glob, ignored in settings.per_file_ignores:
        if matches_any(path, (glob,)):
            codes.extend(ignored)
    return tuple(codes)


def analyze_text(
    text: str, path: str, kind: str, prepared: Prepared, settings: Settings, verdicts: bool = True
) -> Tuple[List[Finding], Optional[FileError], int]:
    """(findings, why the file could not be analysed, lines of code) for decoded text of `kind`: the one
    path scan, fix, the API and the pre-commit hook share. With `verdicts`, each finding says what
    `portcheck fix` does with it (see portcheck.fixer.verdict)."""
    per_target, error, lines = analyze_text_targets(text, path, kind, prepared, (settings,), verdicts)
    return per_target[0], error, lines


def analyze_text_targets(
    text: str, path: str, kind: str, prepared: Prepared, group: Tuple[Settings, ...], verdicts: bool = True
) -> Tuple[List[List[Finding]], Optional[FileError], int]:
    """`analyze_text` for settings that differ only in their target: one parse and walk, then each
    target's findings (its severities, its `off` rules left out, its fix verdicts)."""
    targets = [Target(s.target) for s in group]
    error: Optional[FileError] = None
    lines = 0
    tree: Optional[ast.Module] = None
    per_target: List[List[Finding]]
    if kind == "python":
        if skip_file(text):
            return [[] for _ in group], None, 0
        lines = count_lines(text)
        per_target, error, tree = analyze_python_tree(
            text, path, prepared.prefilter, targets, project_path(path, group[0].roots)
        )
        if Path(path).name == "setup.py" and prepared.text_rules:
            for found, target in zip(per_target, targets):
                found += _text_findings(prepared.text_rules, "setup-py", text, path, target)
    elif kind == "notebook":
        per_target, error, lines = _notebook(text, path, prepared, targets)
    else:
        lines = count_lines(text)
        test = is_test_path(project_path(path, group[0].roots)) or bool(_TEST_IMAGE.match(Path(path).name))
        if kind == "config" and run_record(text.splitlines()):
            return [[] for _ in group], None, lines  # a dump of a past run's arguments configures nothing
        per_target = [_text_findings(prepared.text_rules, kind, text, path, t, test) for t in targets]
        if kind in _RUN_CONFIGS and test:
            # a test suite's run configuration (Megatron's `tests/functional_tests/.../model_config.yaml`) or
            # image configures test runs, not the product: as test code, one level lower
            per_target = [[lower_finding(f, TEST_NOTE) for f in found] for found in per_target]
    platform = other_platform_code(project_path(path, group[0].roots), kind)
    if platform is None and kind in ("cuda", "cpp") and _TENSORRT_PLUGIN.search(text):
        platform = PlatformCode(TENSORRT_PLUGIN_NOTE.format(name=Path(path).name), deployment=True)
    if platform is not None and platform.lazy and _NAMES_NEURON.search(text):
        platform = platform._replace(lazy=platform.lazy | {"neuron"})
    if platform is not None:
        per_target = [on_other_platform(found, platform, t) for found, t in zip(per_target, targets)]
    ignored = per_file_ignored(path, group[0])
    if ignored:
        codes = tuple(c.upper() for c in ignored)
        per_target = [[f for f in found if not f.code.startswith(codes)] for found in per_target]
    return _with_verdicts(text, path, kind, per_target, prepared, group, verdicts, tree), error, lines


def _with_verdicts(
    text: str,
    path: str,
    kind: str,
    per_target: List[List[Finding]],
    prepared: Prepared,
    group: Tuple[Settings, ...],
    verdicts: bool,
    tree: Optional[ast.Module] = None,
) -> List[List[Finding]]:
    fixable = any((rule := prepared.by_code.get(f.code)) is not None and rule.fixable for g in per_target for f in g)
    if verdicts and fixable:
        # The fixer (and libcst) loads only for a file with something it may fix: a scan of clean
        # files, or one served from the cache, stays light.
        from portcheck.fixer.verdict import FixSettings, fix_verdicts

        settings = group[0]  # the members of a group differ only in their target
        per_target = fix_verdicts(
            text,
            path,
            kind,
            [(Target(s.target), found) for s, found in zip(group, per_target)],
            prepared.by_code,
            FixSettings(settings.min_torch, settings.literal_device),
            tree,
        )
    else:
        per_target = [
            [
                replace(f, fixable=False, fix_safety=FixSafety.NONE)
                if f.fixable or f.fix_safety is not FixSafety.NONE
                else f
                for f in found
            ]
            for found in per_target
        ]
    for found in per_target:
        found.sort(key=Finding.sort_key)
    return per_target


def scan_bytes(data: bytes, path: str, kind: str, settings: Settings) -> FileResult:
    """Scan one file's bytes; never raises for bad input."""
    return scan_bytes_targets(data, path, kind, (settings,))[0]


def scan_bytes_targets(data: bytes, path: str, kind: str, group: Tuple[Settings, ...]) -> Tuple[FileResult, ...]:
    """`scan_bytes` for settings that differ only in their target, from one decode, parse and walk."""
    prepared = prepare(group if len(group) > 1 else group[0])
    per_target: List[List[Finding]] = [[] for _ in group]
    error: Optional[FileError] = None
    lines = 0
    backends: Tuple[str, ...] = ()
    too_large = limits.too_large(len(data), kind)
    if too_large:
        return tuple(FileResult(path=path, error=FileError(path, too_large, kind="read"), kind=kind) for _ in group)

    def alone(result: FileResult) -> Tuple[FileResult, ...]:
        return tuple(result for _ in group)

    try:
        if looks_binary(data):
            return alone(
                FileResult(
                    path=path, error=FileError(path, "binary file (contains null bytes)", kind="decode"), kind=kind
                )
            )
        try:
            src = decode_python(data) if kind == "python" else decode_text(data)
        except DecodeError as exc:
            return alone(FileResult(path=path, error=FileError(path, str(exc), kind="decode"), kind=kind))
        per_target, error, lines = analyze_text_targets(src.text, path, kind, prepared, group)
        backends = named_backends(src.text) if kind == "python" else ()
    except RecursionError:
        error = FileError(path, "too deeply nested to analyze", kind="parse")
        per_target = [[] for _ in group]
    out = []
    for findings in per_target:
        findings, over = limits.cap_findings(findings)
        own_error = FileError(path, over, kind="limit") if over and error is None else error
        out.append(
            FileResult(path=path, findings=tuple(findings), error=own_error, lines=lines, kind=kind, backends=backends)
        )
    return tuple(out)


def scan_one(candidate: Candidate, settings: Settings, display: str) -> FileResult:
    return scan_one_targets(candidate, (settings,), display)[0]


def read_failure(candidate: Candidate, display: str) -> Tuple[Optional[bytes], Optional[FileResult]]:
    """The file's bytes, or the result that says why they cannot be read."""
    try:
        size = candidate.path.stat().st_size
        too_large = limits.too_large(size, candidate.kind)
        if too_large:
            return None, FileResult(path=display, error=FileError(display, too_large, kind="read"), kind=candidate.kind)
        return candidate.path.read_bytes(), None
    except FileNotFoundError:
        message = "file disappeared during the scan"
    except IsADirectoryError:
        message = "is a directory"
    except PermissionError:
        message = "permission denied"
    except OSError as exc:
        message = exc.strerror or str(exc)
    return None, FileResult(path=display, error=FileError(display, message, kind="read"), kind=candidate.kind)


def scan_one_targets(candidate: Candidate, group: Tuple[Settings, ...], display: str) -> Tuple[FileResult, ...]:
    data, failed = read_failure(candidate, display)
    if failed is not None or data is None:
        return tuple(failed for _ in group)  # type: ignore[misc]  # no data comes with a failure
    return scan_bytes_targets(data, display, candidate.kind, group)


def settings_from(config, target: Optional[str] = None) -> Settings:
    return Settings(
        target=target or (config.target if config.target != "all" else "generic"),
        select=tuple(config.select),
        ignore=tuple(config.ignore),
        per_file_ignores=tuple(sorted((g, tuple(c)) for g, c in dict(config.per_file_ignores).items())),
        min_torch=config.min_torch,
        literal_device=config.literal_device,
    )
