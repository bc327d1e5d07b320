"""Analyze one file's text: parse once, run every candidate rule in one pass, return findings.

Pure functions of (text, rules, target): no file system, no terminal.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import replace
from typing import Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, cast

from portcheck import torchfacts as facts
from portcheck.backends import name_words
from portcheck.catalog import CompiledRule
from portcheck.model import FileError, Finding, Severity, Target
from portcheck.prefilter import Prefilter
from portcheck.pyscan.context import (
    DRIVER_KERNEL_NOTE,
    FLASH_ONLY_NOTE,
    RAW_KERNEL_NOTE,
    Ctx,
    is_display_module,
    is_fp32_island,
    is_training_loop,
    mark_built_once_classes,
    mark_clamped_counts,
    mark_constant_branches,
    mark_copied_to_host,
    mark_count_tests,
    mark_cuda_alternatives,
    mark_cuda_flags,
    mark_cuda_side_helpers,
    mark_dataset_map_functions,
    mark_device_loops,
    mark_flash_attention_code,
    mark_iteration_sources,
    mark_load_locations,
    mark_loader_classes,
    mark_modulo_calls,
    mark_moved_later,
    mark_numpy_receivers,
    mark_off_switches,
    mark_raw_kernel_wrappers,
    mark_tries_needed_after,
    switch_words,
)
from portcheck.pyscan.defaults import MAY_HAVE as MAY_HAVE_OVERRIDDEN
from portcheck.pyscan.defaults import overridden_defaults
from portcheck.pyscan.devices import mark_resolved_attributes, mark_string_globals
from portcheck.pyscan.extensions import (
    BUILDER_NOTE,
    CPP_ONLY_NOTE,
    OP_WRAPPER_NOTE,
    builds_cpp_only,
    compiled_op_wrappers,
    extension_builders,
    is_build_script,
)
from portcheck.pyscan.feeds import package_feeds
from portcheck.pyscan.flow import INDEX_SOURCE_ATTR, UNREAD_VALUE_ATTR
from portcheck.pyscan.imports import ImportTable, dotted
from portcheck.pyscan.matchers import ImportMatcher, Located, MethodMatcher, Reported, mark_own_method_calls
from portcheck.pyscan.nodes import module_nodes
from portcheck.pyscan.nodes import walk as walk_nodes
from portcheck.pyscan.testcode import (
    cuda_harness_asserts,
    cuda_measuring_calls,
    imports_cuda_runtime,
    is_benchmark_path,
    is_benchmark_suite_path,
    is_collected_test,
    is_conversion_script,
    is_data_pipeline_path,
    is_evaluation_path,
    is_metric_path,
    is_quantize_path,
    is_test_module,
    mark_cuda_only,
    mark_kernel_self_tests,
    mark_self_tests,
    module_cuda_only,
)
from portcheck.pyscan.unwrapped import unwrapped_wrappers
from portcheck.pyscan.walker import UNREAD_LOCAL_NOTE, build_dispatch, walk
from portcheck.source import python_lines
from portcheck.suppress import is_suppressed, suppressions

SPEEDUP_NOTE = (
    "lowered one level: the check only turns on a CUDA speed-up (`fused=True`, a Triton or CUDA kernel);"
    " elsewhere the plain implementation runs, with the same results"
)
GUARD_NOTE = "lowered one level: it sits under a CUDA check; other devices skip it or take the other branch"
TRY_NOTE = "lowered one level: it sits in a `try` whose handler carries on without it"
OPTIONAL_NOTE = "lowered one level: the import is optional (guarded by ImportError or an availability check)"
OPT_IN_NOTE = (
    "lowered one level: the import sits in code named for it or switched on by a flag that names it"
    " (`{switch}`); a run that does not ask for it does not import it"
)
DISPLAY_NOTE = "lowered to info: the value is only shown (printed, logged or formatted for people)"
PRECISION_NOTE = (
    "lowered one level: the check picks a precision (dtype), not a device; nothing falls back to the CPU here"
)
# What stays as it is inside code that drives a kernel (a CuPy launch here, an extension's or a Triton kernel's
# wrapper in portcheck.project_index): the kernel library, kernels, and autocast decorators (`custom_fwd`),
# which a port keeps around its own kernel and `portcheck fix` rewrites.
KERNEL_KEEPS = frozenset({"kernel", "package", "amp"})
# what code that runs only with flash-attn, or a class that is CUDA's side of an option, keeps: the package and
# kernels (its autocast handling goes with it)
FLASH_KEEPS = frozenset({"kernel", "package"})
_KERNEL_DRIVERS = (RAW_KERNEL_NOTE, DRIVER_KERNEL_NOTE)
REQUIREMENT_NOTE = (
    "lowered one level: the check raises where CUDA is absent; it states a requirement, nothing falls back"
)
REQUIREMENT_MESSAGE = (
    "CUDA check (`{match}`) that stops with an error on Neuron, XLA, MPS and XPU: the code states that it needs CUDA"
)
BUILD_NOTE = (
    "lowered one level: the build condition selects the CUDA build, which has a build without CUDA as alternative"
)
EVALUATION_NOTE = (
    "lowered one level: evaluation code or a post-processor of outputs, off the training step; a graph break or"
    " recompile there costs evaluation or inference time, not training time"
)
TEST_NOTE = "lowered one level: test code, which the library does not need; port it to run the tests elsewhere"
DEBUG_NOTE = "lowered one level: in a branch that runs only when debugging is switched on"
# Categories that say nothing about test code: XLA's graph breaks and host syncs cost time, and tests
# compare values on the host (`allclose`, float64 references) on purpose.
_NOT_IN_TESTS = frozenset({"xla"})
_PY2_HINTS = (
    "Missing parentheses in call to 'print'",
    "Missing parentheses in call to 'exec'",
    "invalid decimal literal",
    "leading zeros in decimal integer literals",
)
_CUDA_CONTEXT = re.compile(r"cuda|nccl", re.IGNORECASE)


class ParseFailure(Exception):
    def __init__(self, message: str, line: Optional[int] = None, column: Optional[int] = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def parse_python(text: str, filename: str = "<unknown>") -> ast.Module:
    """Parse with the standard library parser; raise ParseFailure with a one-line reason."""
    if "\x00" in text:
        raise ParseFailure("source contains null bytes (binary file?)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text, filename=filename, type_comments=False)
    except SyntaxError as exc:
        msg = exc.msg or "invalid syntax"
        if (
            any(h in msg for h in _PY2_HINTS)
            or re.search(r"^\s*print\s+[\"'\w]", text, re.MULTILINE)
            and "print(" not in text
        ):
            msg = f"looks like Python 2 code ({msg})"
        raise ParseFailure(f"syntax error: {msg}", exc.lineno, exc.offset) from None
    except (RecursionError, MemoryError):
        raise ParseFailure("too deeply nested to parse") from None
    except ValueError as exc:
        raise ParseFailure(f"cannot parse: {exc}") from None


def _char_col(line: str, byte_col: int) -> int:
    if line.isascii():
        return byte_col
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _finding(
    entry: CompiledRule,
    target: Target,
    path: str,
    lines: Sequence[str],
    reported: Reported,
    label: str,
    ctx: Ctx,
    is_import: bool,
) -> Optional[Finding]:
    rule = entry.rule
    severity = rule.severity_for(target)
    if severity is Severity.OFF:
        return None
    if ctx.test_file and rule.category in _NOT_IN_TESTS:
        return None
    if ctx.xla_branch and rule.category == "xla" and target is not Target.XLA:
        return None  # code that only runs with torch_xla is no lock-in where torch_xla is not the target
    if (ctx.cuda_required or (ctx.guarded and not ctx.tried)) and rule.category == "xla":
        # code that runs only with CUDA (the check before it raises; the CUDA branch of `if x.is_cuda:`, whose
        # `else` is the path other devices take) never runs on XLA or Neuron: it costs nothing there
        return None
    if ctx.stop_decision and rule.category == "xla":
        return None  # a stopping criterion's host sync is `generate`'s own, once per token (`is_stopping_criterion`)
    if rule.category == "xla" and ctx.switches and _switched_for_cuda_library(ctx):
        # `if optimizer_cls.__name__ == "Adam8bit":` (HF Trainer's `create_optimizer`, copied into LLaVA-style
        # trainers): code that runs only with bitsandbytes, which has no Neuron or XLA backend, costs nothing there
        return None
    if is_import and (ctx.probe or (ctx.display and ctx.optional_import and _version_only(reported, ctx.scope))):
        # `def is_bnb_available(): import bitsandbytes`: the import is the availability question; so is `try:
        # import deepspeed` in an environment report that shows its version (LLaMA-Factory's `print_env`)
        return None
    if ctx.kernel_driver == FLASH_ONLY_NOTE and (
        (ctx.requirement_test and rule.category == "device") or rule.code == "AMP006"
    ):
        # `assert qkv.is_cuda` in InternViT's `FlashAttention`: the kernel's own precondition, and `if
        # torch.is_autocast_enabled(): target_dtype = torch.get_autocast_gpu_dtype()` in a `...FlashAttention2`'s
        # forward: the dtype the kernel wants; code the port replaces as a whole (reported where flash-attn is
        # imported); readers rejected both even at `info`
        return None
    note = ""
    guarded = False
    # the severity without the lowering for a CUDA-named flag's check, which the project pass restores where the
    # project only ever sets the flag to `True` (portcheck.always_on); None where no such check lowered it
    unflagged: Optional[Severity] = None
    if entry.guard:
        if is_import and ctx.optional_import:
            severity, guarded, note = severity.lowered(), True, OPTIONAL_NOTE
        elif is_import and (opt_in := _opted_into(reported, ctx)):
            severity, guarded, note = severity.lowered(), True, OPT_IN_NOTE.format(switch=opt_in)
        elif not is_import and ctx.guarded:
            if ctx.flag and not ctx.tried:
                unflagged = severity
            severity, guarded, note = severity.lowered(), True, TRY_NOTE if ctx.tried else GUARD_NOTE
        elif not is_import and ctx.build_test:
            severity, guarded, note = severity.lowered(), True, BUILD_NOTE
    requirement = ctx.requirement_test and rule.category == "device"
    for applies, why in (
        (ctx.precision_test and rule.category == "device", PRECISION_NOTE),
        (ctx.speedup_test and rule.category == "device", SPEEDUP_NOTE),
        (requirement, REQUIREMENT_NOTE),
        (bool(ctx.lowered_by), ctx.lowered_by),
        (ctx.test_file, TEST_NOTE),
        (ctx.debug, DEBUG_NOTE),
        # (a loop that trains is a training step wherever it is: salina's `complete_with_async_eval/main.py`)
        (ctx.evaluation and rule.category == "xla" and not is_training_loop(ctx.loop), EVALUATION_NOTE),
    ):
        if applies:  # each reason lowers one more level and is said in the note
            severity = severity.lowered()
            unflagged = unflagged and unflagged.lowered()
            note = f"{note}; {why}" if note else why
    keeps = KERNEL_KEEPS if ctx.kernel_driver in _KERNEL_DRIVERS else FLASH_KEEPS
    cupy_detail = entry.detail_of and ctx.kernel_driver == RAW_KERNEL_NOTE
    if ctx.kernel_driver and rule.category not in keeps and not cupy_detail:
        # the devices, checks and streams of the code around a CuPy kernel, of a flash-attention class (its
        # autocast queries too) or of a class that is CUDA's side of an option: their workings (in CuPy kernel
        # code, a rule that names the finding it details says so itself, below)
        severity = Severity.INFO
        unflagged = unflagged and Severity.INFO
        note = f"{note}; {ctx.kernel_driver}" if note else ctx.kernel_driver
    unlowered = severity
    if getattr(reported, UNREAD_VALUE_ATTR, False) and not ctx.info_note:
        ctx = ctx._replace(info_note=UNREAD_LOCAL_NOTE)
    source = getattr(reported, INDEX_SOURCE_ATTR, None)
    if source is not None and not ctx.info_note:
        # `.to(device)` after `device = torch.cuda.current_device()`: that call is the edit, reported there
        severity = Severity.INFO
        unflagged = unflagged and Severity.INFO
        why = INDEX_SOURCE_NOTE.format(line=source)
        note = f"{note}; {why}" if note else why
    if ctx.info_note:
        severity = Severity.INFO
        unflagged = unflagged and Severity.INFO
        note = f"{note}; {ctx.info_note}" if note else ctx.info_note
    elif ctx.shown:
        # a figure printed or logged for people (an environment report, a memory log line) is worth knowing,
        # not work: info, whatever else applies
        severity = Severity.INFO
        unflagged = unflagged and Severity.INFO
        note = f"{note}; {DISPLAY_NOTE}" if note else DISPLAY_NOTE
    node = cast(Located, reported)  # a matcher reports only what has a position
    line = node.lineno
    end_line = getattr(node, "end_lineno", None) or line
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    end_src = lines[end_line - 1] if 0 < end_line <= len(lines) else ""
    column = _char_col(src, node.col_offset) + 1
    end_col_raw = getattr(node, "end_col_offset", None)
    end_column = (_char_col(end_src, end_col_raw) + 1) if end_col_raw is not None else column
    template = REQUIREMENT_MESSAGE if requirement else entry.message
    message = template.replace("{match}", label) if "{match}" in template else template
    return Finding(
        path=path,
        line=line,
        column=column,
        end_line=end_line,
        end_column=end_column,
        code=rule.code,
        name=rule.name,
        category=rule.category,
        severity=severity,
        message=message,
        fixable=rule.fixable,
        fix_safety=rule.fix_safety,
        source_line=src.strip(),
        guarded=guarded,
        note=note,
        # a check that only turns on a speed-up: what the fixer must not widen (`facts.SPEEDUP_SWITCH`)
        role=(
            facts.SPEEDUP_SWITCH if ctx.speedup_test and rule.category == "device" else str(getattr(label, "role", ""))
        ),
        symbol=str(getattr(label, "symbol", "")),
        lowered_until=tuple((n.lineno, _char_col(lines[n.lineno - 1], n.col_offset) + 1) for n in ctx.until_fixed),
        unlowered=unlowered if ctx.until_fixed else None,
        manual=ctx.manual,
        flag=ctx.flag if unflagged is not None else "",
        unflagged=unflagged,
    )


def _note_of_lines(node: object, notes: Mapping[Tuple[int, int], str]) -> str:
    """The note of the first (first, last) lines of `notes` that hold `node`, or ""."""
    line = getattr(node, "lineno", 0)
    return next((note for (first, last), note in notes.items() if first <= line <= last), "")


def _overlaps(a: Finding, b: Finding) -> bool:
    return (a.line, a.column) <= (b.end_line, b.end_column) and (b.line, b.column) <= (a.end_line, a.end_column)


Match = Tuple[int, bool, Reported, str, Ctx]  # (rule index, from an import matcher, node, label, context)


_VALUE_NODES = (ast.Constant, ast.JoinedStr, ast.keyword)
# Frameworks whose device strings (`"cuda"`, `"/gpu:0"`) are their own: a module built on one without torch
# (Chainer's `device=gpu`, -1 meaning the CPU, in pfnet-research's classifiers).
# Gradient-boosting libraries too: `device="cuda"` and `tree_method="gpu_hist"` pick XGBoost's own GPU trainer,
# and a check of `CUDA_VISIBLE_DEVICES` beside it sets up LightGBM's or CatBoost's (tabred's `paper/bin/*_.py`).
OTHER_FRAMEWORKS = (
    "tensorflow", "tvm", "jax", "mxnet", "paddle", "mindspore", "oneflow", "chainer", "xgboost", "lightgbm", "catboost"
)


def _method_names(rules: Sequence[CompiledRule]) -> FrozenSet[str]:
    """The names the rules' `method` matchers look for (a few hundred matchers: cheap beside a parse)."""
    return frozenset(n for entry in rules for m in entry.matchers if isinstance(m, MethodMatcher) for n in m.names)


def match_module(module: ast.Module, text: str, rules: Sequence[CompiledRule], path: str = "") -> List[Match]:
    """Every match of `rules` in a parsed module, in one walk; the same for every target. `path` tells
    test files (`tests/`, `test_*.py`) apart: CUDA-only parts of them match nothing."""
    imports = ImportTable.from_module(module)
    mark_modulo_calls(module)
    if "device_count" in text:
        mark_clamped_counts(module)
        mark_count_tests(module)
        mark_device_loops(module, imports)
    if "map_location" in text:
        mark_load_locations(module)
    if "cuda" in text or ".to(" in text:
        mark_moved_later(module)
        mark_string_globals(module)
        mark_resolved_attributes(module)
    if ".cpu()" in text or '.to("cpu")' in text or ".to('cpu')" in text or "torch.tensor(" in text:
        mark_copied_to_host(module)
    if ".numpy()" in text:
        mark_numpy_receivers(module)
    if "except" in text:
        mark_tries_needed_after(module)
    if " = False" in text or " = True" in text:
        mark_constant_branches(module)
    if "for " in text:
        mark_iteration_sources(module)
    mark_loader_classes(module)
    mark_built_once_classes(module)
    if ".map(" in text or ".filter(" in text:
        mark_dataset_map_functions(module)
    if ("grid" in text and "block" in text) or "c_void_p" in text:
        mark_raw_kernel_wrappers(module)
    if "flash_att" in text:  # (`flash_attn`, and `_flash_attention_forward`)
        mark_flash_attention_code(module, imports)
    if "class " in text and ("CUDA" in text or "Cuda" in text):
        mark_cuda_alternatives(module)
    if "class " in text:
        mark_own_method_calls(module, _method_names(rules))
    cuda_context = bool(_CUDA_CONTEXT.search(text))
    nodes: Optional[List[ast.AST]] = None  # every node of the module, walked once for the markers that ask
    test_module = bool(path) and is_test_module(path, module)
    if cuda_context:  # every CUDA check spells `cuda`: in a module that never does, neither marks anything
        nodes = module_nodes(module)
        mark_cuda_flags(nodes, imports, imported=not (test_module and is_collected_test(path)))
        mark_cuda_side_helpers(module, nodes, imports)
    dispatch = build_dispatch(
        ((index, isinstance(matcher, ImportMatcher)), matcher)
        for index, entry in enumerate(rules)
        for matcher in entry.matchers
    )
    root = Ctx(cuda_context=cuda_context)
    if path and is_display_module(path):
        root = root._replace(display=True)
    if path and is_evaluation_path(path):
        root = root._replace(evaluation=True)
    if path and is_metric_path(path):
        root = root._replace(metric=True)
    if path and is_data_pipeline_path(path):
        root = root._replace(host=True)  # the data loader runs it on host tensors
    if path and is_build_script(path, text):
        root = root._replace(build_script=True)
    if path and (is_benchmark_path(path) or _says_it_times(module)):
        root = root._replace(bench_file=True)
    if "= False" in text or ", False" in text:  # (`a, b = True, False`)
        mark_off_switches(nodes if nodes is not None else module_nodes(module))
    if "__main__" in text:
        mark_self_tests(module)
    if ("triton" in text or "c_void_p" in text) and ("def test" in text or "__main__" in text):
        mark_kernel_self_tests(module, imports)
    if test_module:
        skipped = module_cuda_only(module, imports, path) is not None
        if not skipped:
            mark_cuda_only(module, imports)
        root = root._replace(test_file=True, skipped=skipped)
    if "caffe2" in text and imports.imports_any(("caffe2",)):
        # Caffe2 export and runtime code (detectron2's `export/caffe2_*.py`, copied into many projects): current
        # torch wheels ship no `caffe2` package (torch 2.13: ModuleNotFoundError), so such a module imports nowhere
        # a port runs; its device checks pick Caffe2 device options. A port drops that path: nothing is reported.
        root = root._replace(skipped=True)
    # The dispatch keys are the (rule index, from an import matcher) pairs given above.
    hits = cast(Iterator[Tuple[Tuple[int, bool], Reported, str, Ctx]], walk(module, imports, dispatch, root))
    if not imports.imports_any(("torch",)) and (root.test_file or imports.imports_any(OTHER_FRAMEWORKS)):
        # A test module that imports no torch hands strings and flags to stubs, fakes and canned replies
        # (`device = "cuda"` on a fake probe, `load_in_4bit=True` to a monkeypatched backend): test data, not
        # a device or library it uses. A TensorFlow or TVM program (TSM's `main_tf.py`, `--target cuda` for
        # TVM's compiler), an XGBoost or LightGBM trainer: its device strings name that framework's targets.
        # Calls are still reported.
        # (and its comparisons of such strings: XGBoost's `config.get('device') == 'cuda'`; a name handed as a
        # device: Chainer's `device=gpu`, `device=args.gpu`)
        hits = (
            hit
            for hit in hits
            if not isinstance(hit[1], (*_VALUE_NODES, ast.Compare))
            and not (isinstance(hit[1], (ast.Name, ast.Attribute)) and rules[hit[0][0]].rule.category == "device")
        )
    if builds_cpp_only(text):
        # `CppExtension`s from `*.cpp` only: the generic nvcc flags handed to `load()` never apply, and the
        # `BuildExtension` command class builds the C++ it is given (PyTorch-BigGraph's setup.py): no CUDA build.
        kernel = {i for i, entry in enumerate(rules) if entry.rule.category == "kernel"}
        hits = (
            (key, node, label, ctx._replace(info_note=CPP_ONLY_NOTE) if key[0] in kernel else ctx)
            for key, node, label, ctx in hits
            if not (key[0] in kernel and label.endswith("BuildExtension"))
        )
    # The workings of code around a compiled op, at info with a note: mmcv's deformable-attention Functions and their
    # copies (how the wrapper calls the op), StyleGAN's `custom_ops.get_plugin` (how it builds what its callers
    # name). Lines of both: the op wrapper's note.
    workings: Dict[Tuple[int, int], str] = {}
    if "load_ext" in text:
        workings.update((lines, OP_WRAPPER_NOTE.format(name=op)) for lines, op in compiled_op_wrappers(module).items())
    if "cpp_extension" in text:
        for lines, builder in extension_builders(module, imports).items():
            workings.setdefault(lines, BUILDER_NOTE.format(name=builder))
    if workings:
        hits = (
            (key, node, label, ctx._replace(info_note=note) if note else ctx)
            for key, node, label, ctx in hits
            for note in [_note_of_lines(node, workings)]
        )
    if len(_DECORATOR_LINE.findall(text)) > 1:  # no definition has two decorators otherwise: skip the walk
        hits = _one_per_decorated_definition(hits, module)
    if not path.endswith("__init__.py"):
        hits = iter(_mark_unused_imports(list(hits), module, rules))
    # `def compare(self, other)`, `__eq__`, a metric's `compute()`: comparisons and once-per-evaluation
    # summaries, off every step; the host syncs and graph breaks in them cost nothing per step. And a host
    # transfer of a value its scope already transferred copies what is already there.
    metric_module = bool(path) and _METRIC_PATH.search(path) is not None
    off_step = _off_step_functions(module, metric_module) if metric_module or _OFF_STEP_WORDS.search(text) else set()
    repeated = _transfers_twice(text)
    # a post-training quantizer runs once per model over calibration data: its syncs and recompiles cost
    # nothing per step (AWQ's `awq/quantize/scale.py` asserts on `isnan` per layer)
    offline = bool(path) and is_quantize_path(path)
    if off_step or repeated or offline:
        xla = {i for i, entry in enumerate(rules) if entry.rule.category == "xla"}
        hits = (
            hit
            for hit in hits
            if not (
                hit[0][0] in xla
                and (offline or id(hit[3].scope) in off_step or repeated and _synced_before(hit[1], hit[3]))
            )
        )
    if "DataParallel" in text and (".module" in text or ".state_dict" in text):
        unwrapped = unwrapped_wrappers(module)
        if unwrapped:
            notes = {i: UNWRAPPED_NOTE.format(line=line) for i, line in unwrapped.items()}
            hits = (
                (key, node, label, ctx._replace(info_note=notes[id(node)]) if id(node) in notes else ctx)
                for key, node, label, ctx in hits
            )
    packages = [m for m in _package_modules(rules) if imports.imports_any((m,))]
    if packages:
        feeds = package_feeds(module, imports, packages)
        if feeds:
            device = {i for i, entry in enumerate(rules) if entry.rule.category == "device"}
            # the device strings of a probe of the package are its workings (readers rejected them even at `info`)
            hits = (
                (key, node, label, ctx)
                for key, node, label, ctx in hits
                if not (key[0] in device and isinstance(node, _VALUE_NODES) and id(node) in feeds)
            )
    if MAY_HAVE_OVERRIDDEN.search(text):
        overridden = overridden_defaults(module_nodes(module))
        if overridden:
            hits = (
                (key, node, label, ctx._replace(info_note=OVERRIDDEN_NOTE) if id(node) in overridden else ctx)
                for key, node, label, ctx in hits
            )
    if path and is_conversion_script(path, text):
        # `merge_llama_with_chinese_lora.py` checks the merged weights once: no step loop, no XLA cost
        hits = (hit for hit in hits if rules[hit[0][0]].rule.category != "xla")
    if root.bench_file and "assert" in text:
        harness = cuda_harness_asserts(module, imports)
        if harness:
            # a CUDA benchmark harness (`assert torch.cuda.is_available()` before it times anything): the
            # assertion and the imports say what it needs; what it then times is its own workings
            hits = (hit for hit in hits if hit[0][1] or id(hit[1]) in harness)
    if root.bench_file and not root.test_file and "cuda" in text:
        measures = cuda_measuring_calls(module, imports)
        if measures:
            measure = measures[0]
            # a benchmark that measures on CUDA by design (thunder's `benchmarks/`): that first measurement
            # stands for it; its devices, syncs and settings are how it measures there (`info`). What it
            # needs (packages) and what it times (kernels) are reported as they are.
            kept = {i for i, entry in enumerate(rules) if entry.rule.category in ("package", "kernel")}
            note = HARNESS_NOTE.format(line=measure.lineno)
            inner = {id(n) for n in walk_nodes(measure)}

            def stands(hit) -> bool:  # what it needs, what it times, and the measurement itself
                return hit[0][0] in kept or hit[0][1] or id(hit[1]) in inner

            if is_benchmark_suite_path(path):
                # in a benchmark suite's folder (`benchmarks/`, `bench/kernels/`) its workings are not reported
                # at all: readers rejected them even at `info`. Its measurement, which stands for them, is
                # left to a person: `fix` would port that one call and leave the rest of its clock on CUDA
                # (mamba's second `torch.cuda.synchronize()`).
                hits = (
                    (*hit[:3], hit[3]._replace(manual=HARNESS_MANUAL)) if id(hit[1]) in inner else hit
                    for hit in hits
                    if stands(hit)
                )
            else:
                # a lone benchmark script, or one among the examples, is one a user runs and copies: its
                # workings stay, at `info`, and `fix` ports them. Once `fix` has ported every measuring call,
                # the script measures on CUDA no longer: the score after fix counts them as they are then.
                hits = (
                    hit if stands(hit) else (*hit[:3], hit[3]._replace(info_note=note, until_fixed=tuple(measures)))
                    for hit in hits
                )
    if imports_cuda_runtime(module):
        # A TensorRT engine wrapper or a PyCUDA module is CUDA-only by design: its imports say so once; the
        # CUDA streams, graphs and devices it then uses are its own workings, not one more lock-in each.
        return [(index, True, node, label, ctx) for (index, is_import), node, label, ctx in hits if is_import]
    return [(index, is_import, node, label, ctx) for (index, is_import), node, label, ctx in hits]


# The first line of a module's docstring that says it times code (amazon-science/dualkv-flash-attn-for-rl's
# `reproduce_table1.py`: "Reproduce Paper Table 1: FA2 vs DualKV kernel-level fwd/bwd timing.").
_TIMES_CODE = re.compile(r"(?i)\b(?:benchmark(?:s|ing)?|timings?|latency|throughput)\b")


def _says_it_times(module: ast.Module) -> bool:
    """Whether the module's docstring opens by saying it benchmarks or times code: a benchmark by another name."""
    docstring = ast.get_docstring(module, clean=True) or ""
    return bool(_TIMES_CODE.search(docstring.split("\n", 1)[0]))


_DECORATOR_LINE = re.compile(r"^[ \t]*@", re.MULTILINE)
_HOST_TRANSFERS = frozenset({"item", "tolist", "cpu", "numpy"})
# (and what describes an object for people: `__repr__`, `__str__`, `extra_repr`, which run when it is printed;
# SparseConvNet's `AveragePooling.__repr__` reads its sizes with `.item()`)
_COMPARING = re.compile(
    r"^(?:compare\w*|__eq__|__ne__|equals?|is_equal|\w+_equal|assert_\w+|__repr__|__str__|__format__|extra_repr)$"
)
# What a module needs to spell to hold one of `_off_step_functions` (a `_COMPARING` name, a `...Metric` base).
_OFF_STEP_WORDS = re.compile(
    r"\bdef (?:compare|__eq__|__ne__|equals?\b|\w+_equal\b|assert_|__repr__|__str__|__format__|extra_repr|_?prune)"
    r"|Metric\b"
)
# Pruning a model's structure (LLM-Shearing's `prune_params`, transformers' `prune_heads`): once per model.
_PRUNING = re.compile(r"^_?prune")
# A module of metrics (`torchmetrics/functional/...`, `utils/metrics.py`) and the compute stage of a metric in it.
_METRIC_PATH = re.compile(r"metric", re.IGNORECASE)
_METRIC_COMPUTE = re.compile(r"^_?(?:\w+_)?compute$")
_TRANSFER = re.compile(r"\b(\w+)\.(?:item|tolist|cpu|numpy)\((\))?")


def _off_step_functions(module: ast.Module, metric_module: bool = False) -> Set[int]:
    """The functions that compare two objects (Pearl's `compare(self, other)`, `__eq__`) or describe one
    (`__repr__`, `extra_repr`), the `compute()`
    of metric classes (`class Accuracy(Metric)`) and, in a metrics module, the compute stage of a functional
    metric (torchmetrics' `_binary_logauc_compute`): each runs once per evaluation."""
    found: Set[int] = set()
    pruning: List[ast.AST] = []
    for node in module_nodes(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
            _COMPARING.match(node.name) or (metric_module and _METRIC_COMPUTE.match(node.name))
        ):
            found.add(id(node))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _PRUNING.match(node.name):
            found.add(id(node))
            pruning.append(node)
        elif isinstance(node, ast.ClassDef) and any(
            (dotted(b) or "").rsplit(".", 1)[-1].endswith("Metric") for b in node.bases
        ):
            methods = [s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
            found.update(id(s) for s in methods if s.name == "compute")
    if pruning:
        # and the module's functions that only pruning calls (LLM-Shearing's `turn_head_z`)
        functions = {s.name: s for s in module.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        inside = {id(n) for p in pruning for n in walk_nodes(p)}
        named = [n for n in module_nodes(module) if isinstance(n, ast.Name) and n.id in functions]
        for name, function in functions.items():
            uses = [n for n in named if n.id == name]
            if uses and all(id(n) in inside for n in uses):
                found.add(id(function))
    return found


def _transfers_twice(text: str) -> bool:
    """Whether some name's `x.item()` (`.tolist()`, `.cpu()`, `.numpy()`) is followed by another transfer
    of the same name: the text test before `_synced_before` looks at trees (one pass, no backtracking)."""
    seen: Set[str] = set()
    for found in _TRANSFER.finditer(text):
        name = found.group(1)
        if name in seen:
            return True
        if found.group(2) is not None:
            seen.add(name)
    return False


def _synced_before(node: Reported, ctx: Ctx) -> bool:
    """A host transfer of a value its scope already brought to the host (`loss.item()` for the log line after
    `losses.append(loss.item())`, `rewards.tolist()` twice in one step), with no new value in between: the
    first transfer paid the sync; the second copies what is already there."""
    if not isinstance(node, ast.AST):
        return False
    # the hit is the transfer (`x.item()`), or the test that branches on it (`x.item() == 1`)
    method = next(
        (
            n.func
            for n in walk_nodes(node)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _HOST_TRANSFERS
        ),
        None,
    )
    if method is None:
        return False
    scope = ctx.scope
    if scope is None:
        return False
    receiver = ast.dump(method.value)
    roots = {n.id for n in walk_nodes(method.value) if isinstance(n, ast.Name)}
    line = getattr(node, "lineno", 0)
    earlier = [
        n.lineno
        for n in walk_nodes(scope)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in _HOST_TRANSFERS
        and n.lineno < line
        and ast.dump(n.func.value) == receiver
    ]
    if not earlier:
        return False
    first = max(earlier)
    for n in walk_nodes(scope):
        targets: List[ast.AST] = []
        if isinstance(n, ast.Assign):
            targets = list(n.targets)
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
            targets = [n.target]
        if first <= getattr(n, "lineno", 0) <= line and any(
            isinstance(t, ast.Name) and t.id in roots for target in targets for t in walk_nodes(target)
        ):
            return False
    return True


def _one_per_decorated_definition(hits: Iterator, module: ast.Module) -> Iterator:
    """One hit per rule and decorated definition: `@triton.autotune(...)`, `@triton.heuristics(...)` and
    `@triton.jit` over one function are one Triton kernel, reported at the decorator nearest the `def`."""
    listed = list(hits)
    rules = [key[0] for key, _node, _label, _ctx in listed]
    if len(set(rules)) == len(rules):
        return iter(listed)  # no rule matched twice: nothing to fold, no walk
    owner: Dict[int, int] = {}  # id of a node inside a decorator -> id of the definition it decorates
    for node in module_nodes(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and len(node.decorator_list) > 1:
            for decorator in node.decorator_list:
                for sub in walk_nodes(decorator):
                    owner[id(sub)] = id(node)
    if not owner:
        return iter(listed)
    last: Dict[Tuple[int, int], int] = {}  # (rule index, definition) -> position of its lowest hit
    for position, (key, node, _label, _ctx) in enumerate(listed):
        definition = owner.get(id(node))
        if definition is None:
            continue
        kept = last.get((key[0], definition))
        if kept is None or getattr(listed[kept][1], "lineno", 0) <= getattr(node, "lineno", 0):
            last[(key[0], definition)] = position
    return iter(
        hit
        for position, hit in enumerate(listed)
        if (definition := owner.get(id(hit[1]))) is None or last[(hit[0][0], definition)] == position
    )


def _package_modules(rules: Sequence[CompiledRule]) -> Tuple[str, ...]:
    """The modules the catalog's package rules import-match (`xformers`, `flash_attn`, `bitsandbytes`)."""
    return tuple(
        sorted(
            {
                module
                for entry in rules
                if entry.rule.category == "package"
                for matcher in entry.matchers
                if isinstance(matcher, ImportMatcher)
                for module in matcher.modules
            }
        )
    )


HARNESS_NOTE = (
    "lowered to info: a benchmark that measures on CUDA by design (line {line}); this is how it measures there,"
    " ported with the code it times"
)
HARNESS_MANUAL = "a benchmark that measures on CUDA by design: its clock is ported as a whole, with the code it times"
UNWRAPPED_NOTE = (
    "lowered to info: the wrapper never runs (the model is used through `.module` or its state dict is saved,"
    " line {line}); it only gives a checkpoint its `module.` key prefix"
)
OVERRIDDEN_NOTE = (
    "lowered to info: a default of a private function that every call in its module overrides; it never takes effect"
)
UNUSED_IMPORT_NOTE = "lowered to info: imported but never used in this module; the import goes, nothing else changes"
ISLAND_IMPORT_NOTE = (
    "lowered to info: used here only as `autocast(enabled=False)`, an fp32 island, which is reported where it is"
)
IDLE_SCALER_NOTE = "lowered to info: used here only as `GradScaler(enabled=False)`, which does nothing on any device"


def _imports_anywhere(entry: CompiledRule) -> bool:
    return any(getattr(m, "imports_anywhere", False) for m in entry.matchers)


def _mark_unused_imports(hits: List, module: ast.Module, rules: Sequence[CompiledRule]) -> List:
    """Import hits of API rules (`from torch.cuda.amp import autocast, GradScaler` in a module that only
    uses `accelerator.autocast()`) whose names the module never uses: `info`, with a note. A package's
    import keeps its severity (importing it fails where it is missing) unless it is optional (FocalNet's
    `try: import apex` / `except ImportError:`, whose only use is commented out) or the package imports on any
    machine (`imports_anywhere`: pynvml talks to NVML only when called); a module that re-exports (`__all__`)
    keeps them all."""
    marked = [
        i
        for i, ((index, is_import), node, _label, ctx) in enumerate(hits)
        if is_import
        and isinstance(node, (ast.Import, ast.ImportFrom))
        and (rules[index].rule.category != "package" or ctx.optional_import or _imports_anywhere(rules[index]))
    ]
    if not marked:
        return hits
    nodes = module_nodes(module)
    islands = {id(n.func) for n in nodes if isinstance(n, ast.Call) and is_fp32_island(n)}
    names = [n for n in nodes if isinstance(n, ast.Name)]
    # `flash_attn_func = flash_attn_unpadded_func` (mPLUG-Owl's modeling file), the alias never read: a name
    # given only to names nothing reads is not used
    aliases: Dict[str, List[str]] = {}
    aliased: Set[int] = set()
    for n in nodes:
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name):
            targets = [t.id for t in n.targets if isinstance(t, ast.Name)]
            if len(targets) == len(n.targets):
                aliases.setdefault(n.value.id, []).extend(targets)
                aliased.add(id(n.value))
    exported = _exported(module)
    if exported is None:
        return hits  # `__all__` built at run time: any name may be re-exported
    read = {n.id for n in names if isinstance(n.ctx, ast.Load) and id(n) not in aliased} | exported
    for _ in range(3):  # aliases of aliases
        read |= {name for name, given in aliases.items() if any(g in read for g in given)}
    used = read | {n.id for n in names if not isinstance(n.ctx, ast.Load)}
    # names used only to call `autocast(enabled=False)` (fp32 islands, reported there: AMP004) or
    # `GradScaler(enabled=False)` (which does nothing)
    beyond_islands = {n.id for n in names if id(n) not in islands}
    for i in marked:
        key, node, label, ctx = hits[i]
        bound = [(a.asname or a.name).split(".", 1)[0] for a in node.names]
        if isinstance(node, ast.ImportFrom) and node.module:
            # the name the hit is about, of those the line imports (`from torch.utils.cpp_extension import
            # BuildExtension, CppExtension, CUDAExtension` in a setup.py that builds C++ only: DVR's)
            bound = [a.asname or a.name for a in node.names if f"{node.module}.{a.name}" == label] or bound
        if "*" in bound:
            continue
        if not any(name in used for name in bound):
            hits[i] = (key, node, label, ctx._replace(info_note=UNUSED_IMPORT_NOTE))
        elif not any(name in beyond_islands for name in bound):
            note = IDLE_SCALER_NOTE if label.endswith("GradScaler") else ISLAND_IMPORT_NOTE
            hits[i] = (key, node, label, ctx._replace(info_note=note))
    return hits


def _exported(module: ast.Module) -> Optional[Set[str]]:
    """The names a module's literal `__all__` lists (none without one); None when `__all__` is computed."""
    names: Set[str] = set()
    for stmt in module.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
            stmt, (ast.AugAssign, ast.AnnAssign)
        ) else []
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        value = getattr(stmt, "value", None)
        if not isinstance(value, (ast.List, ast.Tuple)) or not all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts
        ):
            return None
        names.update(e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    if any(
        isinstance(n, ast.Name) and n.id == "__all__" and not isinstance(n.ctx, ast.Store) for n in module_nodes(module)
    ):
        return None  # `__all__.extend(...)`, `__all__ += helpers.__all__`
    return names


def _version_only(reported: Reported, scope: Optional[ast.AST]) -> bool:
    """Whether `scope` reads the names the import statement `reported` binds only as `name.__version__`."""
    if not isinstance(reported, (ast.Import, ast.ImportFrom)) or scope is None:
        return False
    bound = {(a.asname or a.name).split(".", 1)[0] for a in reported.names}
    versions = reads = 0
    for node in walk_nodes(scope):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            if node.attr != "__version__":
                return False
            versions += 1
        elif isinstance(node, ast.Name) and node.id in bound and isinstance(node.ctx, ast.Load):
            reads += 1
    return versions > 0 and reads == versions


# Libraries with no Neuron or XLA backend, as an `if` test or a function's name spells them.
_CUDA_LIBRARY_SWITCHES = frozenset({"bitsandbytes", "xformers", "apex"})


def _switched_for_cuda_library(ctx: Ctx) -> bool:
    """Whether an enclosing `if` test or function name names a library with no Neuron or XLA backend."""
    return any(switch_words(node) & _CUDA_LIBRARY_SWITCHES for node in ctx.switches)


def _opted_into(reported: Reported, ctx: Ctx) -> str:
    """The word of an enclosing function name or `if` test that names the library an import statement
    brings in (`def forward_memory_efficient_xformers(...): import xformers.ops`, `elif xformers:`,
    `def apply_liger_kernel(...): from liger_kernel.transformers import ...`, `if args.use_bnb_linear:
    import bitsandbytes as bnb`); "" when none does."""
    if not ctx.switches or not isinstance(reported, (ast.Import, ast.ImportFrom)):
        return ""
    switches = frozenset().union(*(switch_words(node) for node in ctx.switches))
    if isinstance(reported, ast.ImportFrom):
        if reported.level:
            return ""
        names: List[Tuple[str, Optional[str]]] = [(reported.module or "", None)]
    else:
        names = [(a.name, a.asname) for a in reported.names]
    for module, asname in names:
        top = module.split(".", 1)[0].lower()
        if top == "torch":
            continue  # `if version.parse(torch.__version__) >= ...: from torch.cuda.amp import ...`: no library
        if asname and asname.lower() in switches:
            return asname.lower()  # the word as the flag spells it (`use_bnb_linear`: `bnb`)
        words = set(name_words(top))
        if top in switches or (len(words) > 1 and words <= switches):
            return top
    return ""


def _inside(inner: Finding, outer: Finding) -> bool:
    """`inner` is `outer`'s rule on a strictly smaller part of `outer`'s one-line span."""
    return (
        inner.code == outer.code
        and inner.line == outer.line == inner.end_line == outer.end_line
        and outer.column <= inner.column
        and inner.end_column <= outer.end_column
        and (outer.column, outer.end_column) != (inner.column, inner.end_column)
    )


def findings_for(
    matches: Sequence[Match], rules: Sequence[CompiledRule], target: Target, path: str, lines: Sequence[str]
) -> List[Finding]:
    """A target's findings from the matches: its severities, without its `off` rules; unsuppressed, unsorted."""
    findings: List[Finding] = []
    fallbacks: List[Finding] = []
    seen = set()
    packages: set = set()  # (code, package, severity) of the package imports reported in this file
    declined: List[Finding] = []
    imported: Dict[int, str] = {}  # id of each finding on an import statement -> what it imports
    for index, is_import, node, label, ctx in matches:
        entry = rules[index]
        finding = _finding(entry, target, path, lines, node, label, ctx, is_import)
        if finding is None:
            continue
        if ctx.declined:
            if not entry.fallback:
                declined.append(finding)  # only to keep fallbacks off the node
            continue
        # One finding per rule and token: `loss.cpu().item()` matched as `.item()` and as `.cpu()` is one sync.
        key = (finding.code, finding.line, finding.column)
        if key in seen:
            continue
        seen.add(key)
        # an import's label: the module
        symbol = (finding.symbol or (label if isinstance(label, str) else "")) if is_import else ""
        if is_import and (
            entry.rule.category == "package" or (entry.rule.category == "kernel" and not symbol.startswith("torch."))
        ):
            # One finding per package, severity and file: `import vllm` at the top, `from vllm import
            # SamplingParams` again in a method, is one dependency (an optional import beside a required one
            # stays: it says something else); so is a kernel library (`import cutlass`, `import cutlass.cute
            # as cute`, `from cutlass.cute.runtime import from_dlpack`).
            package = (finding.code, symbol.split(".")[0] if symbol else str(finding.line), finding.severity)
            if package in packages:
                continue
            packages.add(package)
        if is_import:
            imported[id(finding)] = symbol
        (fallbacks if entry.fallback else findings).append(finding)
    if imported:
        # `from torch.utils.cpp_extension import CUDAExtension` beside `CUDAExtension("ops", [...])`: the
        # build is the finding; the import of the name it uses says nothing more (a fixable import stays:
        # its fix rewrites it)
        uses = {(f.code, f.symbol) for f in findings if id(f) not in imported and f.symbol}
        findings = [
            f
            for f in findings
            if id(f) not in imported or f.fixable or f.category == "package" or (f.code, imported[id(f)]) not in uses
        ]
    # One finding per rule and token, also where two matchers of a rule see it from either side: `device_ids=[rank]`
    # by its name (`[rank]`) and by where `rank` came from (`rank` inside it) is one device index.
    by_line: Dict[Tuple[str, int], List[Finding]] = {}
    for f in findings:
        by_line.setdefault((f.code, f.line), []).append(f)
    findings = [f for f in findings if not any(_inside(f, g) for g in by_line[(f.code, f.line)] if g is not f)]
    specific = list(findings) + declined  # a fallback yields to specific rules only, not to another fallback
    for fb in fallbacks:
        if not any(_overlaps(fb, f) for f in specific):
            findings.append(fb)
    yielding = {e.rule.code: e.yields_to for e in rules if e.yields_to}
    if yielding:
        # One finding per token: `if done.item():` in a decoding loop is a branch on a tensor (XLA006),
        # which says all that the sync in the loop (XLA005) would.
        spans = {(f.code, f.line, f.column, f.end_line, f.end_column) for f in findings}
        findings = [
            f
            for f in findings
            if not any((c, f.line, f.column, f.end_line, f.end_column) in spans for c in yielding.get(f.code, ()))
        ]
    details = {e.rule.code: e.detail_of for e in rules if e.detail_of}
    if details:
        # `nvcc` flags and `.cu` entries (KRN007) of a setup.py that builds a CUDAExtension (KRN001): the
        # build's details, one port with it
        # (a rule that names itself: its first finding in the file is the owner, the later ones its details, as
        # a CUDA-only library's kernels after its import: NeuralRecon's `SourceModule` after `import pycuda`)
        first = _owners(findings)
        findings = [
            _as_detail(f, [(c, first[c]) for c in details.get(f.code, ()) if c != f.code and c in first])
            for f in findings
        ]
        # `if CUDA_HOME is not None:` read again and again around a setup.py's CUDAExtension: plumbing of
        # the one build its owner finding reports
        findings = [
            _as_detail(f, [(f.code, first[f.code])])
            if f.symbol in TOOLKIT_READS and first.get(f.code, f.line) != f.line
            else f
            for f in findings
        ]
    findings = _one_per_list(_one_per_line(findings), lines)
    if any(f.code in details.get(f.code, ()) for f in findings):
        # (after the lists: one list of flags is one finding, and the later ones its file's details)
        first = _owners(findings)
        findings = [
            _as_detail(f, [(f.code, first[f.code])]) if f.code in details.get(f.code, ()) and first[f.code] < f.line
            else f
            for f in findings
        ]
    return findings


# Reads of where the CUDA toolkit is: the build's plumbing, not a build of their own.
TOOLKIT_READS = frozenset({"torch.utils.cpp_extension.CUDA_HOME"})


def _owners(findings: Sequence[Finding]) -> Dict[str, int]:
    """Per rule, the line of the finding the file's details belong to: its first finding that is more than a
    toolkit read and not itself at `info` (the `CUDAExtension`, not an import nothing uses), else its first."""
    first: Dict[str, int] = {}
    built: Dict[str, int] = {}
    for f in findings:
        first[f.code] = min(first.get(f.code, f.line), f.line)
        if f.symbol not in TOOLKIT_READS and f.severity is not Severity.INFO:
            built[f.code] = min(built.get(f.code, f.line), f.line)
    return {**first, **built}


INDEX_SOURCE_NOTE = (
    "lowered to info: the index comes from `torch.cuda.current_device()` on line {line}, reported there; making"
    " that the port's device index ports this use with it"
)
DETAIL_NOTE = "lowered to info: a detail of what this file's {code} finding (line {line}) reports, ported with it"


def _as_detail(finding: Finding, owners: Sequence[Tuple[str, int]]) -> Finding:
    if not owners or finding.severity is Severity.INFO:
        return finding
    code, line = owners[0]
    why = DETAIL_NOTE.format(code=code, line=line)
    return replace(finding, severity=Severity.INFO, note=f"{finding.note}; {why}" if finding.note else why)


def _one_per_line(findings: List[Finding]) -> List[Finding]:
    """One finding per rule, line and message when there is nothing to fix: `os.path.join(CUDA_HOME, "bin")
    if CUDA_HOME else "nvcc"` reads `CUDA_HOME` twice and is one problem, `a.data_ptr() == b.data_ptr()` one
    comparison of storages. (A fixable finding stays: each one carries its own edit, `x.cuda() + y.cuda()`.)"""
    seen: Set[Tuple[str, int, Optional[int], str]] = set()
    out = []
    for f in sorted(findings, key=lambda f: (f.line, f.column)):
        key = (f.code, f.line, f.cell, f.message)
        if not f.fixable and key in seen:
            continue
        seen.add(key)
        out.append(f)
    return out


LIST_NOTE = "stands for {count} entries of one list (lines {first}-{last}) that this rule finds"
LIST_FIXED = "; `portcheck fix` rewrites them together"
_LITERAL = re.compile(r"""[rRbBuU]{0,2}(?:"[^"\\]*"|'[^'\\]*')|\d+""")
_SEPARATOR = re.compile(r"\s*,\s*(?:#[^\n]*\n\s*)*")
# Between two entries of one list that `portcheck fix` leaves alone, other literal entries may stand too
# (xlstm's `["-gencode", "arch=compute_80,code=compute_80", "-res-usage", "--use_fast_math", "-O3", ...]`).
_SEPARATOR_WITH_ENTRIES = re.compile(
    r"""\s*,\s*(?:#[^\n]*\n\s*|(?:[rRbBuU]{0,2}(?:"[^"\\\n]*"|'[^'\\\n]*')|\d+)\s*,\s*)*"""
)


def _one_per_list(findings: List[Finding], lines: Sequence[str]) -> List[Finding]:
    """One finding for the entries of one list: `default=["cuda:0", "cuda:1", ..., "cuda:7"]` is one device
    list to change, not eight. Findings of the same rule, severity and note on string or integer literals
    that stand next to each other with only a comma between them are one finding at the first; the rest
    ride along (`also`) and `portcheck fix` rewrites them with it or not at all."""
    out: List[Finding] = []
    group: List[Finding] = []

    def flush() -> None:
        if len(group) > 1:
            head = group[0]
            why = LIST_NOTE.format(count=len(group), first=head.line, last=group[-1].line)
            why += LIST_FIXED if head.fixable else ""
            out.append(
                replace(
                    head,
                    also=tuple((f.line, f.column, f.end_line, f.end_column) for f in group[1:]),
                    note=f"{head.note}; {why}" if head.note else why,
                )
            )
        else:
            out.extend(group)
        group.clear()

    for f in sorted(findings, key=lambda f: (f.cell or 0, f.line, f.column)):
        prev = group[-1] if group else None
        if prev is not None and not (
            (f.code, f.severity, f.note, f.cell) == (prev.code, prev.severity, prev.note, prev.cell)
            and _LITERAL.fullmatch(_token(lines, f))
            and _same_list(_between(lines, prev, f) or "x", fixable=f.fixable or prev.fixable)
        ):
            flush()
        if not group and not _LITERAL.fullmatch(_token(lines, f)):
            out.append(f)
            continue
        group.append(f)
    flush()
    return out


def _same_list(between: str, fixable: bool) -> bool:
    """Whether two entries with `between` between them stand in one list: only a comma (and comments), or,
    for entries `portcheck fix` leaves alone, other literal entries as well."""
    return bool(_SEPARATOR.fullmatch(between) or (not fixable and _SEPARATOR_WITH_ENTRIES.fullmatch(between)))


def _token(lines: Sequence[str], f: Finding) -> str:
    if f.line != f.end_line or f.line > len(lines):
        return ""
    return lines[f.line - 1][f.column - 1 : f.end_column - 1]


def _between(lines: Sequence[str], first: Finding, second: Finding) -> str:
    """The source text between the end of `first` and the start of `second` (columns are 1-based, the end
    exclusive); "" when they overlap or are out of order."""
    if (second.line, second.column) < (first.end_line, first.end_column) or second.line - first.end_line > 20:
        return ""
    if first.end_line == second.line:
        return lines[second.line - 1][first.end_column - 1 : second.column - 1] if second.line <= len(lines) else ""
    if second.line > len(lines):
        return ""
    middle = lines[first.end_line : second.line - 1]
    return "\n".join(
        [lines[first.end_line - 1][first.end_column - 1 :], *middle, lines[second.line - 1][: second.column - 1]]
    )


def analyze_module(
    module: ast.Module,
    text: str,
    path: str,
    rules: Sequence[CompiledRule],
    target: Target,
    lines: Optional[Sequence[str]] = None,
) -> List[Finding]:
    """Run `rules` over a parsed module; findings unsuppressed and unsorted."""
    if lines is None:
        lines = python_lines(text)
    return findings_for(match_module(module, text, rules, path), rules, target, path, lines)


def analyze_python(
    text: str,
    path: str,
    prefilter: Prefilter,
    target: Target,
) -> Tuple[List[Finding], Optional[FileError]]:
    """Findings for Python source text (suppressions applied), or the reason it could not be parsed."""
    per_target, error, _ = analyze_python_tree(text, path, prefilter, (target,))
    return per_target[0], error


def analyze_python_tree(
    text: str,
    path: str,
    prefilter: Prefilter,
    targets: Sequence[Target],
    project_path: Optional[str] = None,
) -> Tuple[List[List[Finding]], Optional[FileError], Optional[ast.Module]]:
    """`analyze_python` for several targets at once (one pre-filter, one parse, one walk), and the
    module it parsed (None when none was parsed) for later stages that read the same text.
    `project_path` is the file's path inside the scanned folder (default: `path`)."""
    rules = prefilter.candidates(text)
    if not rules:
        return [[] for _ in targets], None, None
    try:
        module = parse_python(text, path)
    except ParseFailure as exc:
        error = FileError(path=path, message=str(exc), line=exc.line, column=exc.column, kind="parse")
        return [[] for _ in targets], error, None
    lines = python_lines(text)
    matches = match_module(module, text, rules, path if project_path is None else project_path)
    return [apply_suppressions(findings_for(matches, rules, t, path, lines), lines) for t in targets], None, module


def lower_finding(finding: Finding, note: str) -> Finding:
    """`finding` one level lower with `note`, unless something already lowered it."""
    if finding.guarded:
        return finding
    return replace(finding, severity=finding.severity.lowered(), guarded=True, note=note)


def apply_suppressions(findings: Sequence[Finding], lines: Sequence[str]) -> List[Finding]:
    if not findings:
        return list(findings)
    table = suppressions(lines)
    if not table:
        return list(findings)
    return [f for f in findings if not is_suppressed(table, f.code, f.line, f.end_line)]
