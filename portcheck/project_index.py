"""The project-wide pass: which of a repository's own names are CUDA-bound, and where they are used.

Per-file rules see one module at a time, so a Triton kernel defined in `ops/kernels.py` and
launched through a wrapper imported in `model.py` shows up only where it is defined. This pass
fills that gap in three steps, each a pure function of its inputs:

1. `summarize(text, module)`: one module's `ModuleSummary`: its imports, the top-level names it
   defines with the names their bodies use (uses under a CUDA check do not count: that code has a
   fallback), which of them are kernels (`@triton.jit`) or extension objects (bound from
   `torch.utils.cpp_extension.load(...)`, from a loader function, or imported as a compiled
   `_C`/`_ext`/`*_cuda` module), and the call and launch sites (`k[grid](...)`).
   A summary depends on that file's text only, so a per-file cache can hold it.
2. `resolve(summaries)`: resolves imports between the repository's modules (absolute, by dotted
   suffix, and relative) and closes over uses: a name is CUDA-bound when it is a kernel or an
   extension object, or when its body uses a CUDA-bound name outside a CUDA check.
3. `sites(summary, bound)`: the imports of CUDA-bound names and the places that call or launch
   them, each with its exact position.

`dependents(summaries, changed)` says which modules must be looked at again when some change.
`project_findings(...)` is the hook the scanner calls once the per-file results are in; it reads
only files that can take part (a cheap textual pre-filter) and parses each of them once. What it
asks of a file goes through `Sources`: from texts in memory, or (`portcheck.project_cache`) from
the persistent cache, where a warm scan finds the facts and summaries of unchanged files.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import os
import posixpath
import re
from dataclasses import dataclass, replace
from typing import AbstractSet, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union

from portcheck.always_on import always_on
from portcheck.analyze import GUARD_NOTE as UNDER_CHECK_NOTE
from portcheck.analyze import KERNEL_KEEPS, REQUIREMENT_NOTE, TEST_NOTE, apply_suppressions, lower_finding
from portcheck.backends import (
    PLATFORM_NAME_WORDS,
    VENDOR_FOLDERS,
    cuda_variants,
    identifier_words,
    is_deployment_name,
)
from portcheck.model import FileResult, Finding, Severity, Target
from portcheck.parts import folders_above
from portcheck.processes import process_context
from portcheck.pyscan.context import (
    asks_for_accelerator_api,
    catches_import_error,
    catches_runtime_error,
    is_availability_check,
    is_cuda_check,
    is_display_function,
    is_display_module,
    is_extension_build,
    is_message_call,
)
from portcheck.pyscan.definitions import lone_definitions
from portcheck.pyscan.environ import reads_environment
from portcheck.pyscan.extensions import builds_cpp_only, builds_cpu_only, is_triton_kernel
from portcheck.pyscan.fallbacks import continues, imports_again
from portcheck.pyscan.imports import TRY_STATEMENTS, ImportTable, dotted, import_statements
from portcheck.pyscan.loading import IDENTIFIER, IMPORT_STATEMENT, TORCH_IMPORT, loading_facts, without_comments
from portcheck.pyscan.nodes import children, walk
from portcheck.pyscan.spellings import tied_fact
from portcheck.pyscan.testcode import (
    cuda_only_spans,
    early_cuda_exit,
    is_benchmark_file,
    is_test_path,
    kernel_test_paths,
    names_used_only_with_cuda,
)
from portcheck.pyscan.walker import live_children, reached_statements
from portcheck.scanner import (
    MAX_BYTES,
    as_info,
    on_other_platform,
    other_platform_code,
    per_file_ignored,
    platform_named,
    prepare,
    project_path,
)
from portcheck.source import DecodeError, decode_python, looks_binary, python_lines
from portcheck.suppress import skip_file
from portcheck.torchfacts import EXTENSION_LOADERS
from portcheck.vendored import folder_of, under

# A compiled extension module, by the names projects give them: `_C`, `_ext`, `fused_cuda`,
# `selective_scan_cuda`, `fused_layer_norm_cuda`, `wkv_cuda_ext`.
# A compiled extension's module name (`_C`, `fused_adam_cuda`, `dcn_cuda_ext`); not a flag that says
# whether one loaded (`has_cuda_kernel`, `use_cuda_ext`: InternImage imports its `has_cuda_kernel` to choose).
EXTENSION_NAME = re.compile(
    # (names of helpers, not modules: `is_cuda_graph_capturing`, `to_cuda(batch)`, `check_cuda_p2p_ib_support`)
    r"^(?!(?:has|is|use|with|enable|can|should|to|move_to|maybe|get|set|check|retry)_)"
    r"(?:_C|_ext|_cuda|\w+_cuda(?:_ext|_kernels?)?|\w+_C|\w+_cuda_\w+)$"
)
_KERNEL_WRAPPERS = frozenset({"triton.jit", "triton.JITFunction", "triton.runtime.jit.JITFunction"})
# Files without any of these cannot define a CUDA-bound name (users are found by name later).
DEFINER_TOKENS = ("triton", "cpp_extension", "_C", "_ext", "_cuda", "import_module", "torch.utils.ffi")

Span = Tuple[int, int, int, int]  # line, column (1-based), end line, end column (exclusive)


@dataclass(frozen=True)
class Binding:
    """A name an import statement binds: `local` refers to `module` (a module) or to `module.name`."""

    local: str
    module: str
    name: Optional[str]
    level: int
    span: Span
    statement: int  # line of the import statement
    top: bool = True  # at module level (runs when the module is imported)
    guarded: bool = False  # under a CUDA check, or in a `try` whose handler carries on
    legacy: bool = False  # in the arm of a check that only a torch older than any target takes


@dataclass(frozen=True)
class Definition:
    name: str
    kernel: bool  # a Triton kernel
    extension: bool  # an extension object (module-level name bound from a loader or an extension import)
    loader: bool  # its body builds or loads an extension (`cpp_extension.load`, `import x_cuda`)
    uses: Tuple[str, ...]  # dotted names its body uses outside CUDA checks
    lines: Tuple[int, int] = (0, 0)  # first and last line of a function or class statement
    # a class's methods, each (name, first line, last line), and whether it is an autograd `Function`
    methods: Tuple[Tuple[str, int, int], ...] = ()
    autograd: bool = False


@dataclass(frozen=True)
class Site:
    kind: str  # "call" or "launch"
    ref: str  # the dotted name as written: `fused.op`, `_kernel`, `ops.wrapper`
    span: Span  # the callee's last name, e.g. `op` of `fused.op(...)`
    guarded: bool  # inside a CUDA check


@dataclass(frozen=True)
class ModuleSummary:
    module: str  # dotted module name from the path (`pkg.ops.kernels`, `pkg` for `pkg/__init__.py`)
    package: bool
    imports: Tuple[Binding, ...]
    definitions: Tuple[Definition, ...]
    sites: Tuple[Site, ...]
    digest: str  # of the text the summary was made from
    loads_at_import: bool = False  # module-level code builds or loads an extension
    # String literals that name a C++/CUDA source or header (`'bias_act.cu'`), each with its line: the files
    # a loader builds, when the line is in one.
    sources: Tuple[Tuple[str, int], ...] = ()
    # Imported names the module uses other than by calling through them (`ops = _C`, `f(_C)`).
    values: Tuple[str, ...] = ()
    # The module builds C++ extensions only (`CppExtension` from `*.cpp`; a `setup.py` of a plain C++ `_C`).
    cpp_only: bool = False
    # Lines (first, last) of module-level `if torch.cuda.is_available(): ext = load(...)` blocks: what they
    # build is built only where CUDA is, and the module has a path without it.
    cuda_builds: Tuple[Tuple[int, int], ...] = ()
    # Dotted names of the CUDA extensions the module builds (`CUDAExtension("exllama_kernels", ...)` in
    # AutoGPTQ's `setup.py`, `create_extension("_ext.roi_pooling", ..., with_cuda=with_cuda)` in an old
    # `torch.utils.ffi` build script): an import of one is an extension import, whatever it is called.
    built: Tuple[str, ...] = ()
    # The module is the generated face of an old `torch.utils.ffi` extension (`_ext/roi_pooling/__init__.py`:
    # `from ._roi_pooling import lib`, each symbol wrapped with `_wrap_function`): importing it imports the
    # compiled library, and what it binds at run time are the library's functions.
    ffi: bool = False
    # Names bound from a loader in a module-level `try` whose handler binds them to `None` and carries on
    # (rosinality's `op/fused_act.py`: `try: fused = load(...)` / `except: fused = None`), each with the
    # `try`'s first and last line: the module has a path without the extension, and its importers ask
    # `if fused is not None:` to pick the native op.
    optional_loads: Tuple[Tuple[str, int, int], ...] = ()
    # Dotted names of the extensions the module builds with `CppExtension` and, where CUDA is, with
    # `CUDAExtension` (detectron2's `setup.py`: `extension = CppExtension`, then `extension = CUDAExtension` under
    # a CUDA check, then `extension("detectron2._C", ...)`): built without CUDA too, with the ops that have a CPU
    # kernel.
    dual_built: Tuple[str, ...] = ()


@dataclass(frozen=True)
class ProjectSite:
    """A place in a module that imports or uses a CUDA-bound name of the project."""

    module: str
    span: Span
    label: str  # what is used, for the message
    kind: str  # "import", "call", "launch"
    guarded: bool
    detail: str = ""  # why the name is CUDA-bound, when the label alone does not say
    name: str = ""  # the name the module binds and uses it through (`fp8_silu_forward`, `alt_cuda_corr`)
    binds: Tuple[str, ...] = ()  # of an import: every name its statement binds (the site stands for them all)
    defined_here: bool = False  # of a launch: the kernel is defined in the same module
    dual: bool = False  # of an extension the project builds without CUDA too (`Project.dual`)
    # of an import: a Triton kernel imported into a module that defines Triton kernels itself (a device function
    # its kernels call: fouroversix's `quantize.py` importing `convert_to_e2m1x2` from `fp4.py`)
    among_kernels: bool = False


# -- step 1: one module ------------------------------------------------------------------------


def module_name(path: str) -> Tuple[str, bool]:
    """`pkg/ops/k.py` -> ("pkg.ops.k", False); `pkg/__init__.py` -> ("pkg", True). Parent steps of a display
    path outside the current folder (`../repo/pkg/k.py`) are no part of the name."""
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    if not parts:
        return "", False
    last = parts[-1]
    if last.endswith(".py"):
        last = last[:-3]
    package = last == "__init__"
    parts = parts[:-1] + ([] if package else [last])
    return ".".join(parts), package


def _span_of(node: Union[ast.expr, ast.stmt, ast.alias]) -> Span:
    line = node.lineno
    col = node.col_offset + 1
    end_line = getattr(node, "end_lineno", None) or line
    end_col = (getattr(node, "end_col_offset", None) or node.col_offset) + 1
    return line, col, end_line, end_col


def callee_span(func: ast.expr) -> Span:
    """The span of a callee's last name: `op` in `fused.op`, the whole name in `op`."""
    end_line, end_col = getattr(func, "end_lineno", None), getattr(func, "end_col_offset", None)
    if isinstance(func, ast.Attribute) and end_line is not None and end_col is not None:
        return end_line, end_col - len(func.attr) + 1, end_line, end_col + 1
    return _span_of(func)


def _alias_span(alias: ast.alias, stmt: ast.stmt) -> Span:
    if getattr(alias, "lineno", None) is not None:  # Python 3.10+
        return _span_of(alias)
    return _span_of(stmt)


class _Collector:
    """Walks one module once, statement by statement, keeping track of CUDA checks."""

    def __init__(self, module: ast.Module, imports: ImportTable) -> None:
        self.imports = imports
        self.module = module
        self.sites: List[Site] = []
        self.guarded_imports: Set[int] = set()  # lines of import statements under a CUDA check or fallback
        self.extensions: Set[str] = set()  # module-level names bound to extension objects
        self.loader_calls: Set[str] = set()  # names called on the right of such bindings
        # calls through a name both arms of a CUDA check call (`my_lib.X_gpu_forward` in one, `my_lib.X_cpu_forward`
        # in the other): the check leaves no path without it; ids of the calls, and of those the check's own
        # place makes unconditional
        self.both_arms: Set[int] = set()
        self.both_arms_always: Set[int] = set()

    def uses(
        self, body: Sequence[ast.AST], record_sites: bool, guarded: bool = False, fallbacks: bool = False
    ) -> Tuple[List[str], bool]:
        """What the code calls or launches unconditionally (code under an `if`, a CUDA check above all,
        has another path, so it does not make the caller CUDA-bound), and whether it builds or loads
        an extension (under any condition but a CUDA check: ColBERT's `if not use_gpu: return` before its
        `load(...)` of `.cu` sources leaves the caller a path without the extension).

        Values that are only shown (the arguments of `print`, `logger.info`, `warnings.warn`) do not
        count as uses: printing a CUDA-bound function's report does not make the caller need CUDA.
        With `fallbacks` (a function's body, or a module-level statement), an import or a build
        (`cpp_extension.load`) in `try: ... except ImportError:` (or `except Exception:`) whose handler
        goes on is optional: the code has a path without the extension, and the code after it in the
        `try` (and its `else`) runs only when the import worked."""
        out: List[str] = []
        loads = False
        # (node, under a CUDA check, under any condition, optional: behind an ImportError fallback); what
        # follows `if not use_gpu: return` in the body runs only with CUDA, as under a CUDA check
        stack: List[Tuple[ast.AST, bool, bool, bool]] = []
        for n in reached_statements(body):
            stack.append((n, guarded, guarded, False))
            guarded = guarded or early_cuda_exit(n, self.imports)
        stack.reverse()
        while stack:
            node, inside, conditional, optional = stack.pop()
            if TRY_STATEMENTS and isinstance(node, TRY_STATEMENTS) and any(
                catches_runtime_error(h) and _carries_on(h) and not imports_again(node, h) for h in node.handlers
            ):
                # `try: return dtw_cuda(x) except RuntimeError: warnings.warn(...)`, then the CPU path: what
                # the `try` calls has a fallback, as under a CUDA check.
                after = [*reached_statements(node.orelse), *node.handlers, *reached_statements(node.finalbody)]
                stack.extend((c, inside, conditional, optional) for c in reversed(after))
                stack.extend((c, True, True, True) for c in reversed(reached_statements(node.body)))
                continue
            if fallbacks and TRY_STATEMENTS and isinstance(node, TRY_STATEMENTS):
                if any(
                    catches_import_error(h) and _carries_on(h) and not imports_again(node, h) for h in node.handlers
                ):
                    tried: List[ast.AST] = [*reached_statements(node.body), *reached_statements(node.orelse)]
                    rest: List[ast.AST] = [*node.handlers, *reached_statements(node.finalbody)]
                    stack.extend((c, inside, conditional, optional) for c in reversed(rest))
                    stack.extend((c, inside, True, True) for c in reversed(tried))
                    continue
            if isinstance(node, ast.Call) and is_message_call(node):
                shown = list(node.args) + list(node.keywords)
                stack.extend((c, inside, True, optional) for c in reversed(shown))
                node = node.func
            if isinstance(node, (ast.If, ast.IfExp, ast.While)):
                cuda = not isinstance(node, ast.While) and is_cuda_check(node.test, self.imports)
                if cuda and isinstance(node, ast.If) and not inside:
                    self._mark_both_arms(node, always=not conditional)
                # `if os.environ.get("RWKV_CUDA_ON") == "1": load(...)`: an environment switch turns the build
                # on; a run without it builds nothing, as behind an ImportError fallback; so does a question
                # whether the module is there (`if importlib.util.find_spec("fused_adam_cuda") is not None:`)
                switched = optional or (
                    isinstance(node, ast.If)
                    and (reads_environment(node.test, self.imports) or is_availability_check(node.test))
                )
                then = node.body
                branches: List[ast.AST] = [*reached_statements(then)] if isinstance(then, list) else [then]
                branches += reached_statements(node.orelse) if isinstance(node.orelse, list) else [node.orelse]
                # the body of `while True:` runs (HAIS's `BallQueryBatchP` grows its buffers and calls the
                # extension again until the result fits): as unconditional as the code around it
                forever = isinstance(node, ast.While) and _always_true(node.test)
                then_conditional = conditional if forever else True
                stack.extend((c, inside or cuda, then_conditional, switched) for c in reversed(branches))
                stack.append((node.test, inside or cuda, conditional, optional))
                continue
            if isinstance(node, ast.Call):
                func = node.func
                qualified = self.imports.resolve(func)
                if qualified in EXTENSION_LOADERS and not (optional or inside) and not builds_cpu_only(node):
                    loads = True
                elif qualified == "importlib.import_module" and node.args and not (optional or inside):
                    arg = node.args[0]
                    if (
                        isinstance(arg, ast.Constant)
                        and isinstance(arg.value, str)
                        and EXTENSION_NAME.match(arg.value.rsplit(".", 1)[-1])
                    ):
                        loads = True
                callee = func.value if isinstance(func, ast.Subscript) else func
                ref = dotted(callee)
                if ref:
                    both = id(node) in self.both_arms
                    if record_sites:
                        if isinstance(func, ast.Subscript):
                            self.sites.append(Site("launch", ref, _span_of(callee), inside and not both))
                        else:
                            self.sites.append(Site("call", ref, callee_span(func), inside and not both))
                    if (not conditional and not inside) or id(node) in self.both_arms_always:
                        out.append(ref)
            elif isinstance(node, ast.Import) and not (optional or inside):
                if any(EXTENSION_NAME.match(a.name.rsplit(".", 1)[-1]) for a in node.names):
                    loads = True
            if (inside or optional) and isinstance(node, (ast.Import, ast.ImportFrom)):
                self.guarded_imports.add(node.lineno)
            # (the code left behind a `raise NotImplementedError` in its block never runs: qserve's VLM loader)
            stack.extend((c, inside, conditional, optional) for c in reversed(live_children(node)))
        return out, loads


    def _mark_both_arms(self, check: ast.If, always: bool) -> None:
        """Mark the calls of both arms of a CUDA check through a name each arm calls (DAIN's wrappers:
        `my_lib.FilterInterpolationLayer_gpu_forward(...)` when `input1.is_cuda`, else `..._cpu_forward(...)`
        of the same CUDA extension): no arm is a path without it. With `always`, the check itself runs
        unconditionally, and so do the calls outside any further condition in its arms."""
        arms = [_plain_calls(check.body), _plain_calls(check.orelse)]
        heads = [{_call_head(c) for c in arm} - {""} for arm in arms]
        shared = heads[0] & heads[1]
        if not shared:
            return
        for arm in arms:
            for call in arm:
                if _call_head(call) in shared:
                    self.both_arms.add(id(call))
                    if always:
                        self.both_arms_always.add(id(call))


def _call_head(call: ast.Call) -> str:
    """`my_lib` of `my_lib.op(...)`: the name a call goes through ("" for a bare name or another callee)."""
    ref = dotted(call.func) or ""
    return ref.split(".", 1)[0] if "." in ref else ""


_NOT_PLAIN = (
    ast.If, ast.IfExp, ast.While, ast.For, ast.AsyncFor, ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef,
    ast.ClassDef, *TRY_STATEMENTS,
)


def _plain_calls(stmts: Sequence[ast.AST]) -> List[ast.Call]:
    """The calls in `stmts` outside any further condition, loop, `try` or definition."""
    out: List[ast.Call] = []
    stack = list(reached_statements(stmts))
    while stack:
        node = stack.pop()
        if isinstance(node, _NOT_PLAIN):
            continue
        if isinstance(node, ast.Call):
            out.append(node)
        stack.extend(children(node))
    return out


def _folder_module(summary: ModuleSummary) -> str:
    """The dotted name of the folder a module sits in (a package's own, for its `__init__`)."""
    return summary.module if summary.package else summary.module.rpartition(".")[0]


def _always_true(test: ast.AST) -> bool:
    """`while True:` / `while 1:`: a loop whose body runs at least once."""
    return isinstance(test, ast.Constant) and bool(test.value) and not isinstance(test.value, str)


def _class_uses(collector: _Collector, cls: ast.ClassDef) -> Tuple[List[str], bool]:
    """`_Collector.uses` for a class: what its methods call unconditionally, leaving out a method the class
    itself only calls under a condition (`if self.use_extension: return self.call_cuda(x)`, then the
    reference path): the class's optional fast path, as a call under a CUDA check is. Methods Python calls
    by themselves (`__init__`, `forward`, ...) are never left out."""
    methods = {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    per_method: Dict[str, List[str]] = {}
    site_range: Dict[str, Tuple[int, int]] = {}
    out: List[str] = []
    loads = False
    for node in cls.body:
        first = len(collector.sites)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            uses, loaded = collector.uses(node.body, record_sites=True, fallbacks=True)
            per_method[node.name] = uses
            site_range[node.name] = (first, len(collector.sites))
        else:
            uses, loaded = collector.uses([node], record_sites=True, fallbacks=True)
            out.extend(uses)
        loads = loads or loaded
    called = {ref[5:] for uses in per_method.values() for ref in uses if ref.startswith("self.")}
    mentioned = {
        sub.attr
        for node in methods.values()
        for sub in walk(node)
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self"
    }
    optional = {
        name
        for name in mentioned & set(methods)
        if name not in called and not name.startswith("__") and name not in ("forward", "backward")
    }
    for name, uses in per_method.items():
        if name not in optional:
            out.extend(uses)
            continue
        first, last = site_range[name]  # what the fast path calls has the reference path beside it
        collector.sites[first:last] = [replace(site, guarded=True) for site in collector.sites[first:last]]
    return out, loads


def _carries_on(handler: ast.ExceptHandler) -> bool:
    """The handler goes on without what its `try` made: it neither stops (`raise`, an exit) nor keeps the error to
    raise later (`_keeps_error`)."""
    return continues(handler) and not _keeps_error(handler)


def _keeps_error(handler: ast.ExceptHandler) -> bool:
    """`except ImportError as err: Cls.import_err = err`: the error is kept to be raised later, when the
    extension is used; the handler defers the failure, it is no fallback."""
    if not handler.name:
        return False
    return any(
        isinstance(sub, (ast.Assign, ast.AnnAssign))
        and isinstance(sub.value, ast.Name)
        and sub.value.id == handler.name
        for stmt in handler.body
        for sub in walk(stmt)
    )


def _bound_by_load(value: ast.AST, imports: ImportTable) -> Optional[str]:
    """For `x = <call>`: the callee's dotted name when the call may produce an extension object."""
    if isinstance(value, ast.Call):
        qualified = imports.resolve(value.func)
        if qualified in EXTENSION_LOADERS:
            return None if builds_cpu_only(value) else "<load>"
        if qualified in _KERNEL_WRAPPERS:
            return "<kernel>"
        return dotted(value.func)
    return None


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def summarize(text: str, path: str, tree: Optional[ast.Module] = None) -> ModuleSummary:
    """The summary of one module; `tree` saves a parse when the caller has one."""
    name, package = module_name(path)
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
    if tree is None:
        tree = ast.parse(text)
    imports = ImportTable.from_module(tree)
    bindings: List[Binding] = []
    top_level = {id(n) for n in _module_level(tree)}
    for imp in _import_nodes(tree):
        top = id(imp) in top_level
        if isinstance(imp, ast.Import):
            for alias in imp.names:
                local = alias.asname or alias.name.split(".", 1)[0]
                module = alias.name if alias.asname else alias.name.split(".", 1)[0]
                bindings.append(Binding(local, module, None, 0, _alias_span(alias, imp), imp.lineno, top))
        else:
            for alias in imp.names:
                if alias.name == "*":
                    # `from .cuda import *`: binds what the module exports; kept as one binding of the
                    # module itself (a name per statement), so the module has this importer
                    local = f"*{imp.lineno}"
                    span = _alias_span(alias, imp)
                    bindings.append(Binding(local, imp.module or "", "*", imp.level, span, imp.lineno, top))
                    continue
                bindings.append(
                    Binding(
                        alias.asname or alias.name,
                        imp.module or "",
                        alias.name,
                        imp.level,
                        _alias_span(alias, imp),
                        imp.lineno,
                        top,
                    )
                )
    collector = _Collector(tree, imports)
    definitions: List[Definition] = []
    global_loads: Dict[str, str] = {}  # name -> how it was bound (`<load>`, `<kernel>`, a callee)
    aliases: Dict[str, str] = {}  # `near_far = _NearFar.apply` at module level: name -> what it names
    for assign, declared in _global_assignments(tree, "global " in text):
        # `x = load(...)`, `x = loader(...)` at module level, or in a function that declares `global x`.
        target = assign.targets[0]
        if isinstance(target, ast.Name) and (declared is None or target.id in declared):
            how = _bound_by_load(assign.value, imports)
            if how is not None:
                global_loads.setdefault(target.id, how)
            elif declared is None and isinstance(assign.value, (ast.Name, ast.Attribute)):
                named = dotted(assign.value)
                if named:
                    aliases.setdefault(target.id, named)
    at_import = False  # module-level code builds or loads an extension: importing the module does
    top_names: Set[str] = set()
    statements = _top_level(tree)
    for stmt in statements:
        if isinstance(stmt, _DEFINITIONS):
            top_names.add(stmt.name)
    display_module = is_display_module(path)
    for stmt in statements:
        if isinstance(stmt, _DEFINITIONS):
            if display_module or is_display_function(stmt):
                # `collect_env_info()`, `print_system_info()`: it reads the extension's version or the
                # toolkit's to show them; what it shows is no dependency of its callers.
                collector.uses(stmt.body, record_sites=False)
                definitions.append(Definition(stmt.name, is_triton_kernel(stmt, imports), False, False, ()))
                continue
            kernel = is_triton_kernel(stmt, imports)
            if isinstance(stmt, ast.ClassDef):
                uses, loads = _class_uses(collector, stmt)
            else:
                # A kernel's calls of other kernels (`get_flat_tid()` in a `@triton.jit` barrier) are its own
                # workings: the kernel is reported, and what it calls is no further use to port.
                uses, loads = collector.uses(stmt.body, record_sites=not kernel, fallbacks=True)
            collector.uses(list(getattr(stmt, "decorator_list", [])), record_sites=True)
            methods: Tuple[Tuple[str, int, int], ...] = ()
            autograd = False
            if isinstance(stmt, ast.ClassDef):
                methods = tuple(
                    (m.name, m.lineno, m.end_lineno or m.lineno)
                    for m in stmt.body
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                )
                autograd = any((dotted(b) or "").rsplit(".", 1)[-1] == "Function" for b in stmt.bases)
            definitions.append(
                Definition(
                    stmt.name,
                    kernel,
                    False,
                    loads,
                    tuple(sorted(set(uses) - {stmt.name})),
                    (stmt.lineno, stmt.end_lineno or stmt.lineno),
                    methods,
                    autograd,
                )
            )
        else:
            # `try: from pkg import ngram_cuda` / `except ImportError: BUILT = False` at module level: the
            # module imports without the extension, and what it tries is optional, as in a function.
            _, loads = collector.uses([stmt], record_sites=True, fallbacks=True)
            at_import = at_import or loads
    imported = {b.local for b in bindings}
    raisers = _raisers(tree)
    replaced = _defined_in_handlers(tree)
    for local, named in sorted(aliases.items()):
        if local in replaced:
            # `try: from .curope import cuRoPE2D; RoPE2D = cuRoPE2D` / `except ImportError: class RoPE2D(nn.Module):
            # ...` (croco's `pos_embed.py`): the name has an implementation of its own where the extension is not
            # there; the `try`'s import is the site
            continue
        if local in imported and named in raisers:
            # `except ImportError: autogptq_marlin_cuda = error_raiser_marlin`: an extension bound again to a
            # function that only raises is the extension wherever it works (see `Project._target`)
            definitions.append(Definition(local, False, False, False, (RAISER,)))
            continue
        if local not in top_names and local not in global_loads and named.split(".", 1)[0] != local:
            definitions.append(Definition(local, False, False, False, (named,)))  # used as what it names
    for local, how in sorted(global_loads.items()):
        if local in top_names:
            continue
        if how == "<load>":
            definitions.append(Definition(local, False, True, True, ()))
        elif how == "<kernel>":
            definitions.append(Definition(local, True, False, False, ()))
        else:
            # Bound from a call whose callee may turn out to be a loader: decided in `resolve`.
            definitions.append(Definition(local, False, False, False, ("<bound-from>" + how,)))
    if collector.guarded_imports:
        bindings = [replace(b, guarded=True) if b.statement in collector.guarded_imports else b for b in bindings]
    legacy = _legacy_imports(tree, imports)
    if legacy:
        bindings = [replace(b, legacy=True) if b.statement in legacy else b for b in bindings]
    cpp_only = builds_cpp_only(text)
    if cpp_only:
        # `CppExtension`s from `*.cpp` only (YOLOX's `JitOp`): what it builds and loads is plain C++.
        definitions = [replace(d, loader=False, extension=False) for d in definitions]
        at_import = False
    sources, values = _literals_and_values(tree, {b.local for b in bindings})
    cuda_builds = tuple(
        (stmt.lineno, stmt.end_lineno or stmt.lineno) for stmt in tree.body if is_extension_build(stmt, imports)
    )
    # `import fused_cuda`, `from pkg import _C`: an extension object unless the project defines it.
    return ModuleSummary(
        name,
        package,
        tuple(bindings),
        tuple(definitions),
        tuple(collector.sites),
        digest,
        at_import,
        sources,
        values,
        cpp_only,
        cuda_builds,
        _built_extensions(tree, imports) if "CUDAExtension" in text or "create_extension" in text else (),
        _wraps_ffi_library(bindings),
        _optional_loads(tree, global_loads) if global_loads else (),
        _dual_built_extensions(tree, imports) if "CppExtension" in text and "CUDAExtension" in text else (),
    )


def _optional_loads(tree: ast.Module, loaded: Mapping[str, str]) -> Tuple[Tuple[str, int, int], ...]:
    """The names of `loaded` (module-level names bound from a call) that a module-level `try` binds and
    whose handler, catching what a failed build raises and carrying on, binds to `None`, with the `try`'s
    lines (see `ModuleSummary.optional_loads`)."""
    found: List[Tuple[str, int, int]] = []
    stack: List[ast.stmt] = list(tree.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.If):
            stack.extend(stmt.body)
            stack.extend(stmt.orelse)
            continue
        if not (TRY_STATEMENTS and isinstance(stmt, TRY_STATEMENTS)):
            continue
        tried = {
            target.id
            for sub in stmt.body
            if isinstance(sub, ast.Assign)
            for target in sub.targets
            if isinstance(target, ast.Name) and target.id in loaded
        }
        for handler in stmt.handlers:
            if not (catches_runtime_error(handler) or catches_import_error(handler)) or not _carries_on(handler):
                continue
            for sub in handler.body:
                if (
                    isinstance(sub, ast.Assign)
                    and isinstance(sub.value, ast.Constant)
                    and sub.value.value is None
                ):
                    for target in sub.targets:
                        if isinstance(target, ast.Name) and target.id in tried:
                            found.append((target.id, stmt.lineno, stmt.end_lineno or stmt.lineno))
    return tuple(sorted(set(found)))


_CUDA_EXTENSION = "torch.utils.cpp_extension.CUDAExtension"
_CPP_EXTENSION = "torch.utils.cpp_extension.CppExtension"
_FFI = "torch.utils.ffi"


def _built_extensions(tree: ast.Module, imports: ImportTable) -> Tuple[str, ...]:
    """The literal names given to `CUDAExtension(...)` calls (positional or `name=`), and to the old
    `torch.utils.ffi.create_extension(...)` calls that may build with CUDA (`with_cuda=` anything but a
    literal False), sorted. A name the module binds to `CUDAExtension` builds one too (DCNv4's `extension =
    CppExtension`, then `extension = CUDAExtension` where CUDA is, else `raise NotImplementedError`, then
    `extension("DCNv4.ext", sources, ...)`), unless the module builds it with `CppExtension` where CUDA is not
    (detectron2's `_C`, whose COCOeval and CPU ops build without CUDA): then the name is no CUDA-only build."""
    found: Set[str] = set()
    nodes = list(walk(tree))
    bound, raises = _extension_bindings(nodes, imports)
    aliases = {
        name
        for name, values in bound.items()
        if _CUDA_EXTENSION in values and (raises or _CPP_EXTENSION not in values)
    }
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        callee = imports.resolve(node.func)
        if isinstance(node.func, ast.Name) and node.func.id in aliases:
            callee = _CUDA_EXTENSION
        with_cuda = next((k.value for k in node.keywords if k.arg == "with_cuda"), None)
        if callee == _CUDA_EXTENSION or (
            callee == f"{_FFI}.create_extension"
            and with_cuda is not None
            and not (isinstance(with_cuda, ast.Constant) and with_cuda.value is False)
        ):
            given = _given_name(node)
            if given:
                found.add(given)
    return tuple(sorted(found))


def _dual_built_extensions(tree: ast.Module, imports: ImportTable) -> Tuple[str, ...]:
    """The literal names given to calls of a name the module binds to `CppExtension` and to `CUDAExtension`,
    with no `raise` where CUDA is not (see `ModuleSummary.dual_built`): the builds `_built_extensions` leaves
    out, sorted."""
    nodes = list(walk(tree))
    bound, raises = _extension_bindings(nodes, imports)
    aliases = {name for name, values in bound.items() if {_CUDA_EXTENSION, _CPP_EXTENSION} <= values}
    if raises or not aliases:
        return ()
    calls = (n for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in aliases)
    return tuple(sorted({given for call in calls if (given := _given_name(call))}))


def _extension_bindings(nodes: Sequence[ast.AST], imports: ImportTable) -> Tuple[Dict[str, Set[str]], bool]:
    """What the module binds each name to (`extension = CppExtension`, then `extension = CUDAExtension`), and
    whether a branch that binds `CUDAExtension` has an `else` that raises (`if torch.cuda.is_available() ...:
    extension = CUDAExtension ... else: raise NotImplementedError(...)`)."""
    bound: Dict[str, Set[str]] = {}  # name -> what the module binds it to
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, set()).add(imports.resolve(node.value) or "")
    raises = any(
        isinstance(node, ast.If)
        and any(isinstance(s, ast.Assign) and imports.resolve(s.value) == _CUDA_EXTENSION for s in node.body)
        and any(isinstance(sub, ast.Raise) for s in node.orelse for sub in walk(s))
        for node in nodes
    )
    return bound, raises


def _given_name(call: ast.Call) -> str:
    """The literal name an extension build is given (`name=` or its first argument), or ""."""
    given = next((k.value for k in call.keywords if k.arg == "name"), call.args[0] if call.args else None)
    return given.value if isinstance(given, ast.Constant) and isinstance(given.value, str) else ""


def _wraps_ffi_library(bindings: Sequence[Binding]) -> bool:
    """`from torch.utils.ffi import _wrap_function` and `from ._roi_pooling import lib as _lib, ffi as _ffi`:
    the `__init__.py` that `torch.utils.ffi.create_extension` generates beside its compiled library."""
    return any(b.module == _FFI for b in bindings) and any(b.level and b.name == "lib" for b in bindings)


RAISER = "<raiser>"  # the use of a name bound to a function that only raises


def _raisers(tree: ast.Module) -> Set[str]:
    """Module-level functions (also those defined in a `try`'s handler) whose body only raises."""
    found: Set[str] = set()
    for stmt in _module_level(tree):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = [s for s in stmt.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) == 1 and isinstance(body[0], ast.Raise):
                found.add(stmt.name)
    return found


def _defined_in_handlers(tree: ast.Module) -> Set[str]:
    """The names a handler of a module-level `try` defines (a function, a class) or binds to a value that is no
    constant (`RoPE2D = PyTorchRoPE2D`; not `= None`)."""
    out: Set[str] = set()
    for stmt in tree.body:
        if not isinstance(stmt, TRY_STATEMENTS):
            continue
        for handler in stmt.handlers:
            for node in handler.body:
                if isinstance(node, _DEFINITIONS):
                    out.add(node.name)
                elif isinstance(node, ast.Assign) and not isinstance(node.value, ast.Constant):
                    out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def _top_level(tree: ast.Module) -> List[ast.stmt]:
    """The module's top-level statements, with the functions and classes defined in a top-level `try` body
    (`try: import triton` / `@triton.jit def kernel(...)` / `except ImportError: ...`, GPTQ-for-LLaMa's
    kernel modules) taken out of it as definitions of their own, and the `try` kept with the rest."""
    out: List[ast.stmt] = []
    for stmt in tree.body:
        if isinstance(stmt, TRY_STATEMENTS) and any(isinstance(s, _DEFINITIONS) for s in stmt.body):
            out.extend(s for s in stmt.body if isinstance(s, _DEFINITIONS))
            body = [s for s in stmt.body if not isinstance(s, _DEFINITIONS)] or [ast.Pass()]
            rest = type(stmt)(body=body, handlers=stmt.handlers, orelse=stmt.orelse, finalbody=stmt.finalbody)
            out.append(ast.copy_location(rest, stmt))
        else:
            out.append(stmt)
    return out


# A literal naming a C++/CUDA source or header, relative to the module's folder or to the repository.
SOURCE_LITERAL = re.compile(r"^(?:[\w.+-]+/)*[\w+-][\w.+-]*\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp|hh)$")


def _literals_and_values(tree: ast.Module, imported: Set[str]) -> Tuple[Tuple[Tuple[str, int], ...], Tuple[str, ...]]:
    """The module's literals that name a C++/CUDA source file, and the imported names it uses other than as
    the head of a callee (`custom_ops.get_plugin(...)` calls through `custom_ops`; `ops = custom_ops` does not)."""
    sources: List[Tuple[str, int]] = []
    callee_heads: Set[int] = set()
    names: List[ast.Name] = []
    for node in walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if len(node.value) < 200 and SOURCE_LITERAL.match(node.value):
                sources.append((node.value, node.lineno))
        elif isinstance(node, ast.Call):
            head = node.func
            while isinstance(head, (ast.Attribute, ast.Subscript)):
                head = head.value
            callee_heads.add(id(head))
        elif isinstance(node, ast.Name) and node.id in imported and isinstance(node.ctx, ast.Load):
            names.append(node)
    values = sorted({n.id for n in names if id(n) not in callee_heads})
    return tuple(sorted(sources, key=lambda s: (s[1], s[0]))), tuple(values)


def _module_level(tree: ast.Module) -> Iterable[ast.AST]:
    """Statements that run when the module is imported: module level, under `if`/`try`/`with`."""
    stack: List[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            stack.extend(handler.body)


def _import_nodes(tree: ast.AST) -> Iterable[Union[ast.Import, ast.ImportFrom]]:
    return import_statements(tree)


def _global_assignments(
    tree: ast.Module, has_globals: bool = True
) -> Iterable[Tuple[ast.Assign, Optional[FrozenSet[str]]]]:
    """Single-target assignments that bind module-level names: those at module level (under `if`,
    `try`, `with`), paired with None, and those in functions, paired with the names the function
    declares `global`."""
    stack: List[Tuple[ast.AST, Optional[FrozenSet[str]]]] = [(stmt, None) for stmt in tree.body]
    while stack:
        node, declared = stack.pop()
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            yield node, declared
            continue
        if isinstance(node, ast.ClassDef):  # class attributes are not module names; methods may declare globals
            stack.extend((child, frozenset()) for child in node.body)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not has_globals:
                continue  # no `global` anywhere: functions bind no module names
            names = frozenset(n for sub in walk(node) if isinstance(sub, ast.Global) for n in sub.names)
            stack.extend((child, names) for child in children(node) if isinstance(child, ast.stmt))
            continue
        if isinstance(node, ast.stmt):
            stack.extend((child, declared) for child in children(node) if isinstance(child, ast.stmt))
            for field in ("handlers",):
                for handler in getattr(node, field, []) or []:
                    stack.extend((child, declared) for child in handler.body)


# -- step 2: the project -----------------------------------------------------------------------

Symbol = Tuple[str, str]  # (module, name)


@dataclass(frozen=True)
class Resolved:
    """What `resolve` learnt: the CUDA-bound symbols, and which were kernels or extensions."""

    bound: FrozenSet[Symbol]
    extensions: FrozenSet[Symbol]  # extension objects, including imported compiled modules
    kernels: FrozenSet[Symbol]
    at_import: FrozenSet[str] = frozenset()  # modules that build or load an extension when imported
    # Functions the project calls only where there is a fallback (under a CUDA check, in a `try` that
    # carries on, or from such functions), and kernel and extension modules it imports only from there.
    fallback_only: FrozenSet[Symbol] = frozenset()
    fallback_modules: FrozenSet[str] = frozenset()
    # Those of `fallback_only` whose every caller the pass has read (see `_fallback_only`): what runs in
    # them runs only where CUDA does.
    fallback_seen: FrozenSet[Symbol] = frozenset()
    # Modules the project imports only from another platform's code (see `_other_platform_modules`), each
    # with the function or module that names that platform.
    other_platform: Mapping[str, str] = dataclasses.field(default_factory=dict)


class Project:
    """Module lookups over a set of summaries: dotted names resolve by suffix, so a `src/` layout or
    a scan started above the package still finds `pkg.ops` for `import pkg.ops`."""

    def __init__(self, summaries: Iterable[ModuleSummary], like: Optional["Project"] = None) -> None:
        """`like`: a project of the same modules (other summaries of them), whose name index is shared."""
        self.modules: Dict[str, ModuleSummary] = {s.module: s for s in summaries}
        if like is not None and like.modules.keys() == self.modules.keys():
            self._by_suffix: Dict[str, List[str]] = like._by_suffix
        else:
            self._by_suffix = {}
            for name in self.modules:
                parts = name.split(".")
                for i in range(len(parts)):
                    self._by_suffix.setdefault(".".join(parts[i:]), []).append(name)
        self.defs: Dict[Symbol, Definition] = {
            (s.module, d.name): d for s in self.modules.values() for d in s.definitions
        }
        self.binds: Dict[Symbol, Binding] = {(s.module, b.local): b for s in self.modules.values() for b in s.imports}
        # Names bound by more than one import (`try: import _raymarching as _backend` / `except ImportError:
        # from .backend import _backend`): the others, tried when the last one leads nowhere.
        self.other_binds: Dict[Symbol, List[Binding]] = {}
        for summary in self.modules.values():
            for b in summary.imports:
                if self.binds[(summary.module, b.local)] is not b:
                    self.other_binds.setdefault((summary.module, b.local), []).append(b)
        # `from .prepare_data import *` in a package's `__init__`: where the names it does not bind itself come from
        self.stars: Dict[str, List[Binding]] = {}
        for summary in self.modules.values():
            for b in summary.imports:
                if b.name == "*":
                    self.stars.setdefault(summary.module, []).append(b)
        self.packages: FrozenSet[str] = frozenset(s.module for s in self.modules.values() if s.package)
        # CUDA extensions the project's build scripts name (`exllama_kernels`, `auto_gptq.exllama_kernels`)
        self.built: FrozenSet[str] = frozenset(n for s in self.modules.values() for n in s.built)
        # the same, below the build script's folder (`lib.csrc.extreme_utils._ext` for snake's
        # `lib/csrc/extreme_utils/setup.py` building `CUDAExtension(name="_ext")`, `spn._ext.gate` for an old
        # `create_extension("_ext.gate", ...)` in `spn/build.py`): where the built module lands
        self.built_below: FrozenSet[str] = frozenset(
            f"{_folder_module(s)}.{n}".lstrip(".") for s in self.modules.values() for n in s.built
        )
        # extensions built without CUDA too (`ModuleSummary.dual_built`), by name and below the script's folder,
        # each with that folder (as a module path: `pkg.sub`); `dual` holds those with CPU kernels (`confirm_dual`)
        self.dual_folders: Dict[str, str] = {
            name: _folder_module(s)
            for s in self.modules.values()
            for n in s.dual_built
            for name in (n, f"{_folder_module(s)}.{n}".lstrip("."))
        }
        self.dual: FrozenSet[str] = frozenset()
        self._targets: Dict[Symbol, Optional[Symbol]] = {}

    def confirm_dual(self, native: Sequence[str]) -> None:
        """Of the extensions built without CUDA too, those whose build script's folder holds a CPU kernel
        among the C++ sources `native` (display paths): `ROIAlign/ROIAlign_cpu.cpp`, `csrc/cpu/nms.cpp`. An
        extension whose CPU build only raises (RND-SCI's `roll_optim`: `vision.cpp` and one `.cu`) has none."""
        kernels = [p.replace("\\", "/") for p in native if _CPU_KERNEL.search(p.replace("\\", "/"))]
        self.dual = frozenset(
            name
            for name, folder in self.dual_folders.items()
            if any(not folder or k.startswith(folder.replace(".", "/") + "/") for k in kernels)
        )

    def find_module(self, name: str, near: str = "") -> Optional[str]:
        """The module an absolute dotted name refers to. `pkg.ops` is `src/pkg/ops.py` or `pkg/ops.py`,
        never `other/pkg/ops.py` when `other` is a package: the name must start at a top-level module."""
        packages = self.packages
        candidates = [c for c in self._by_suffix.get(name, ()) if c == name or c[: -len(name) - 1] not in packages]
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        # Several modules end the same way: prefer the one sharing the longest prefix with the importer.
        return max(candidates, key=lambda c: (_common_prefix(c, near), -len(c)))

    def absolute(self, binding: Binding, importer: str) -> str:
        """The dotted module a binding names, relative imports made absolute."""
        summary = self.modules.get(importer)
        return absolute_module(binding, importer, summary is not None and summary.package)

    def target(self, module: str, local: str, seen: Optional[Set[Symbol]] = None) -> Optional[Symbol]:
        """What `local` in `module` refers to: a definition (module, name), a module (module, ""), or an
        extension import (("<ext>", dotted)), following re-exports; None when outside the project."""
        if seen is None:
            key = (module, local)
            if key in self._targets:
                return self._targets[key]
            found = self._target(module, local, set())
            self._targets[key] = found
            return found
        return self._target(module, local, seen)

    def _target(self, module: str, local: str, seen: Set[Symbol]) -> Optional[Symbol]:
        key = (module, local)
        if key in seen:
            return None
        seen.add(key)
        binding = self.binds.get(key)
        if key in self.defs:
            if binding is not None and self.defs[key].uses == (RAISER,):
                # a compiled extension, bound again to a raiser where it is missing: the extension (a
                # module of the project's, bound again so, stays the raiser: its callers have that path)
                found = self._bound(module, binding, seen)
                if found is not None and found[0] == "<ext>":
                    return found
            return key
        if binding is None:
            return self._star_target(module, local, seen)
        found = self._bound(module, binding, seen)
        for other in self.other_binds.get(key, ()):
            if found is not None:
                break
            found = self._bound(module, other, seen)
        return found

    def _star_target(self, module: str, local: str, seen: Set[Symbol]) -> Optional[Symbol]:
        """What a star import of `module` binds to `local` (GrndPodcastSum's `utility/__init__.py`: `from
        .prepare_data import *`, and its importers' `from utility import prepare_data_cuda`, a function)."""
        if local.startswith("_"):
            return None  # a star import binds no private name
        for star in self.stars.get(module, ()):
            source = self.find_module(self.absolute(star, module), module)
            if source is not None and source != module:
                found = self._target(source, local, seen)
                if found is not None:
                    return found
        return None

    def _bound(self, module: str, binding: Binding, seen: Set[Symbol]) -> Optional[Symbol]:
        """What one import binding of `module` refers to (see `target`)."""
        absolute = self.absolute(binding, module)
        if binding.name == "*":  # `from .cuda import *`: the module, imported
            star = self.find_module(absolute, module) if absolute else None
            return (star, "") if star is not None else None
        if binding.name is None:  # `import a.b` binds `a`; `import a.b as c` binds `a.b`
            found = self.find_module(absolute, module)
            if found is not None:
                return self._module_symbol(found)
            if EXTENSION_NAME.match(absolute.rsplit(".", 1)[-1]) or (binding.top and absolute in self.built):
                return ("<ext>", absolute)
            return None
        # An extension only the build script names counts where a module imports it at its top: the module
        # needs it (AutoGPTQ's `qlinear_exllama.py`). Imported in a function (`autogptq_post_init`'s `if
        # model_uses_exllama:` path), it is one path of that function, which the pass cannot weigh.
        if binding.top and absolute in self.built:
            return ("<ext>", absolute)  # `from exllama_kernels import make_q4`: a function of the extension
        if binding.top and f"{absolute}.{binding.name}" in self.built | self.built_below:
            # `from auto_gptq import exllama_kernels`; cloud_transformers' `from emd_linear import emd`, the
            # extension `emd_linear/setup.py` builds in place
            return ("<ext>", f"{absolute}.{binding.name}")
        owner = self.find_module(absolute, module) if absolute else None
        if owner is not None:
            # What the package binds wins over a submodule of the same name, as at run time
            # (`from .fused_act import fused_act` in `__init__.py` replaces the module attribute).
            inner = self.target(owner, binding.name, seen)
            if inner is not None:
                return inner
        sub = self.find_module(f"{absolute}.{binding.name}" if absolute else binding.name, module)
        if sub is not None:
            return self._module_symbol(sub)
        if owner is not None:
            # A name from a module file (`from .utils.memory import retry_if_cuda_oom`) is one of its
            # definitions, and one a package's `__init__` imports from elsewhere (`from .environment import
            # check_cuda_p2p_ib_support`) is that: never a compiled submodule, whatever it is called.
            reexported = owner != module and (owner, binding.name) in self.binds
            if EXTENSION_NAME.match(binding.name) and owner in self.packages and not reexported:
                return ("<ext>", f"{absolute}.{binding.name}")  # `from pkg import _C`: compiled, not a file
            return None
        if EXTENSION_NAME.match(binding.name) and (binding.level or self._owns(absolute)):
            return ("<ext>", f"{absolute}.{binding.name}")
        return None

    def _module_symbol(self, module: str) -> Symbol:
        """A module of the project as an import binds it: the module, or the extension an old `torch.utils.ffi`
        wrapper module stands for (`from .._ext import roi_pooling`)."""
        summary = self.modules.get(module)
        return ("<ext>", module) if summary is not None and summary.ffi else (module, "")

    def cuda_extension(self, name: str) -> bool:
        """Whether the extension module `name` is a CUDA one: named so, or built by a `CUDAExtension` (or by a
        `torch.utils.ffi` build with CUDA) of the project's, by its name or below its build script's folder."""
        return "cuda" in name.lower() or self.built_with_cuda(name)

    def built_with_cuda(self, name: str) -> bool:
        """Whether a build script of the project names the extension module `name` as a CUDA one."""
        return name in self.built or any(name == b or name.endswith("." + b) for b in self.built_below)

    def _owns(self, dotted_name: str) -> bool:
        return self.find_module(dotted_name.split(".", 1)[0]) is not None

    def binding_target(self, module: str, binding: Binding) -> Optional[Symbol]:
        """What one import statement's binding refers to, whatever else binds the same name."""
        return self._bound(module, binding, set())

    def reference(self, module: str, ref: str) -> Optional[Symbol]:
        """What a dotted use (`a`, `mod.fn`, `pkg.mod.fn.apply`) in `module` refers to."""
        parts = ref.split(".")
        sym = self.target(module, parts[0])
        if sym is None and (module, parts[0]) not in self.binds:
            # A bare name that is no import: a local definition or an extension bound in this module.
            if (module, parts[0]) in self.defs:
                sym = (module, parts[0])
        return self._attributes(sym, parts[1:])

    def alternatives(self, module: str, ref: str, depth: int = 0) -> Tuple[Optional[Symbol], ...]:
        """What a dotted use refers to through each import binding its head (`try: from cuda_op.fused_act
        import FusedLeakyReLU` / `except Exception: from cuda_op.op_native import FusedLeakyReLU`,
        anycost-gan): one entry per binding, None where one leads outside the project; empty when one
        import binds the head; through a package that binds the name several ways (apple/ml-gsn's `from .op import
        upfirdn2d`, whose `op/__init__.py` imports it in a `try` and a native one in the handler), the package's."""
        head, *rest = ref.split(".")
        others = self.other_binds.get((module, head))
        if not others:
            binding = self.binds.get((module, head))
            if depth < 4 and binding is not None and binding.name and binding.name != "*":
                owner = self.find_module(self.absolute(binding, module), module)
                if owner is not None and owner != module and self.other_binds.get((owner, binding.name)):
                    return self.alternatives(owner, ".".join([binding.name, *rest]), depth + 1)
            return ()
        bindings = [self.binds[(module, head)], *others]
        return tuple(self._attributes(self.binding_target(module, b), rest) for b in bindings)

    def _attributes(self, sym: Optional[Symbol], parts: Sequence[str]) -> Optional[Symbol]:
        for part in parts:
            if sym is None or sym[0] == "<ext>" or sym[1]:
                break  # attribute of a definition or an extension: the definition itself is what counts
            nxt = self.target(sym[0], part)
            if nxt is None:
                break
            sym = nxt
        return sym


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("."), b.split(".")):
        if x != y:
            break
        n += 1
    return n


def resolve(summaries: Union[Iterable[ModuleSummary], "Project"]) -> Resolved:
    project = summaries if isinstance(summaries, Project) else Project(summaries)
    bound: Set[Symbol] = set()
    extensions: Set[Symbol] = set()
    kernels: Set[Symbol] = set()
    for key, definition in project.defs.items():
        if definition.kernel:
            kernels.add(key)
            bound.add(key)
        if definition.extension:
            extensions.add(key)
            bound.add(key)
    # Extension imports are CUDA-bound wherever they are imported, but for a generic `_C` whose package's own
    # `setup.py` builds C++ only (stable-fast-3d's `uv_unwrapper`).
    # (each import of a name several imports bind counts: `try: import _raymarching as _backend` /
    # `except ImportError: from .backend import _backend`)
    for module, local in project.binds:
        for sym in (project.target(module, local), *project.alternatives(module, local)):
            if sym is not None and sym[0] == "<ext>" and not _built_as_cpp(project, sym[1]):
                extensions.add(sym)
                bound.add(sym)
    # What each definition's uses refer to, resolved once; then a worklist from the bound names.
    # A use through a name several imports bind (a CUDA op in `try:`, a native one in its handler) binds
    # its user only once every one of them the project defines is bound: with one that is not, the user
    # has a portable path. (One from outside the project, `import _raymarching as _backend`, may be the
    # prebuilt extension: it proves nothing.)
    users: Dict[Symbol, List[Tuple[Symbol, bool, Tuple[Optional[Symbol], ...]]]] = {}
    pending: List[Symbol] = list(bound)
    for key, definition in project.defs.items():
        if definition.loader and key not in bound:
            bound.add(key)
            pending.append(key)
        for use in definition.uses:
            via_call = use.startswith("<bound-from>")
            ref = use[len("<bound-from>") :] if via_call else use
            target = project.reference(key[0], ref)
            alternatives = project.alternatives(key[0], ref)
            for one in dict.fromkeys((target, *alternatives)):
                if one is not None and one != key:
                    users.setdefault(one, []).append((key, via_call, alternatives))
    while pending:
        target = pending.pop()
        if target[0] == "<ext>" and not project.cuda_extension(target[1]):
            continue  # a generic `_C`/`_ext` may be plain C++: its own calls are reported, callers are not bound
        for key, via_call, alternatives in users.get(target, ()):
            if key in bound or not all(a in bound for a in alternatives if a is not None):
                continue
            if via_call:
                # `_plugin = get_plugin(...)`: an extension object, when the callee loads one.
                loader = project.defs.get(target)
                if not (target in extensions or (loader is not None and loader.loader)):
                    continue
                extensions.add(key)
            bound.add(key)
            pending.append(key)
    # Modules that build or load an extension when imported, and the modules that import them at
    # module level (a package `__init__` re-exporting from such a module is one).
    at_import: Set[str] = {m for m, s in project.modules.items() if s.loads_at_import}
    changed = True
    while changed:
        changed = False
        for (module, local), binding in project.binds.items():
            if module in at_import or not binding.top or binding.guarded:
                # (`try: from .fused import kernels` / `except ImportError: ...`: importing it may fail and
                # the module goes on, so importing this module builds nothing it needs)
                continue
            if _reexported_with_fallback(project, module, binding):
                continue
            sym = project.target(module, local)
            if sym is not None and sym[0] in at_import:
                at_import.add(module)
                changed = True
    only, reached, seen = _fallback_only(project, bound, kernels | extensions)
    return Resolved(
        frozenset(bound),
        frozenset(extensions),
        frozenset(kernels),
        frozenset(at_import),
        only,
        reached,
        seen,
        _other_platform_modules(project),
    )


def _reexported_with_fallback(project: "Project", module: str, binding: Binding) -> bool:
    """`from .op import upfirdn2d` where `op/__init__.py` binds `upfirdn2d` in a `try` whose handler imports a
    native version (apple/ml-gsn's StyleGAN2 ops): importing the package builds nothing it needs."""
    if not binding.name or binding.name == "*":
        return False
    owner = project.find_module(project.absolute(binding, module), module)
    if owner is None or owner == module:
        return False
    key = (owner, binding.name)
    found = [project.binds.get(key), *project.other_binds.get(key, ())]
    return any(b is not None and b.guarded for b in found)


def _legacy_imports(tree: ast.Module, imports: ImportTable) -> Set[int]:
    """The lines of import statements in the arm of a check that only a torch older than any target
    takes (HRNet's `if torch.__version__.startswith('0'): from .sync_bn.inplace_abn.bn import InPlaceABNSync`,
    the other arm `torch.nn.SyncBatchNorm`)."""
    found: Set[int] = set()
    for node in walk(tree):
        if isinstance(node, ast.If):
            recent = asks_for_accelerator_api(node.test, imports)
            if recent is not None:
                for stmt in node.orelse if recent else node.body:
                    found.update(n.lineno for n in walk(stmt) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return found


# The reason `_other_platform_modules` gives for a module imported only from an old torch's arm.
LEGACY_TORCH = "an arm for a torch older than any target runs"


def _platform_name(name: str) -> bool:
    """`patch_qwen3_5_forward_npu`, `NPUAttention`, `rocm_ops`: a name with a word for another platform."""
    return any(w in PLATFORM_NAME_WORDS for w in identifier_words(name))


def _for_other_platform(sym: Symbol) -> bool:
    """A definition kept for another platform: in a module named for it (`backends/triton_ascend/`) or
    itself so named (`TritonAscendKDABackend`). Registering or calling it is that platform's path (it runs
    where that platform is there), no CUDA lock-in. TensorRT code is not here: using it is the lock-in."""
    module, name = sym
    if module == "<ext>":
        return False
    folders = module.split(".")[:-1]  # (a package named for a vendor: Triton-distributed's `layers/amd/`)
    return any(part.lower() in VENDOR_FOLDERS for part in folders) or any(
        _platform_name(part) and not is_deployment_name(part) for part in module.split(".") + ([name] if name else [])
    )


def _other_platform_modules(project: "Project") -> Dict[str, str]:
    """The modules the project imports only from another platform's code: every import of one (tests
    aside, at least one) sits in a function or class whose name says so (LLaMA-Factory's vendored Triton
    kernels, imported only by `patch_qwen3_5_forward_npu` for Ascend NPUs), in a module whose name or folder
    says so, in the arm of a check only an old torch takes (`LEGACY_TORCH`), or in such a module. What runs
    in them runs on that platform (or that torch) only: no CUDA lock-in. Importing a module imports the
    packages above it: they have the same importer (HRNet's `sync_bn/__init__.py`)."""
    importers: Dict[str, List[Tuple[str, str]]] = {}  # imported module -> (importer module, its function)
    for (module, local), binding in project.binds.items():
        if is_test_path(module.replace(".", "/") + ".py"):
            continue
        function = LEGACY_TORCH if binding.legacy else owner(project.modules[module], binding.statement) or ""
        # what the name refers to, the module the statement runs (`from .functions import ACT_RELU` runs
        # `functions.py`, whatever the name is) and the packages above it
        sym = project.target(module, local)
        absolute = project.absolute(binding, module)
        ran = project.find_module(absolute, module) if absolute else None
        parts = ran.split(".") if ran is not None else []
        imported = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        if sym is not None:
            imported.add(sym[0])
        for other in sorted(imported):
            if other in project.modules and other != module and not module.startswith(other + "."):
                importers.setdefault(other, []).append((module, function))
    found: Dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for module, uses in importers.items():
            if module in found:
                continue
            why = ""
            for importer, function in uses:
                if function == LEGACY_TORCH:
                    why = why or LEGACY_TORCH
                elif function and _platform_name(function):
                    why = why or f"`{function}`"
                elif any(_platform_name(part) for part in importer.split(".")):
                    # `rocm_ops`, or a module of a platform's folder (bitsandbytes' `backends/xpu/ops.py`,
                    # which alone imports the Triton backend's kernels)
                    why = why or f"`{importer}`"
                elif importer in found:
                    why = why or found[importer]
                else:
                    break
            else:
                found[module] = why
                changed = True
    return found


def owner(summary: ModuleSummary, line: int) -> Optional[str]:
    """The module-level function or class of `summary` whose statement holds `line`; None at module level."""
    for definition in summary.definitions:
        first, last = definition.lines
        if first <= line <= last and first:
            return definition.name
    return None


def _fallback_only(
    project: "Project", bound: Set[Symbol], kernels: Set[Symbol]
) -> Tuple[FrozenSet[Symbol], FrozenSet[str], FrozenSet[Symbol]]:
    """The functions the project calls only where there is a fallback: every call (or launch) sits under a
    CUDA check, in a `try` whose handler carries on, in the function itself (a backward pass that applies
    the op again), or in such a function (whisper's `dtw_cuda`, called as `try: return dtw_cuda(x) except
    RuntimeError: ...` before the CPU path; stylegan's `_upfirdn2d_cuda`, built only under
    `if x.device.type == "cuda" and _init():`, whose nested autograd class calls the plugin). And the
    modules defining kernels that the project imports only from there (`from .triton_ops import
    dtw_kernel` inside `dtw_cuda`), or wrappers of them, or extension objects (optimum-quanto's
    `extensions/cuda/__init__.py`,
    `ext = Extension("quanto_cuda", sources=[...])`, star-imported only under `if torch.cuda.is_available():`
    beside its hip, mps and xpu siblings, whose ops have default implementations): both have a path
    without CUDA. Third, those of the functions whose
    every caller the pass has read, and whose callers are all guarded or such functions themselves: a
    CUDA-bound name (every module that uses one is indexed) or a module-private one (`_init`, called in
    its own module); a public helper may also be called from files the pass never reads."""
    callers: Dict[Symbol, List[Tuple[Symbol, bool]]] = {}
    for module, summary in project.modules.items():
        if is_test_path(module.replace(".", "/") + ".py"):
            continue  # a test calls a CUDA path directly to test it; the product reaches it how it does
        for site in summary.sites:
            target = project.reference(module, site.ref)
            if target is None or (target not in bound and target[0] not in project.modules):
                continue
            callers.setdefault(target, []).append(((module, owner(summary, site.span[0]) or ""), site.guarded))
    def closure(eligible) -> Set[Symbol]:
        found: Set[Symbol] = set()
        changed = True
        while changed:
            changed = False
            for target, calls in callers.items():
                # a call from the target itself (a backward pass that applies the op again) needs it already;
                # the others, at least one, decide
                others = [(caller, guarded) for caller, guarded in calls if caller != target]
                if (
                    target not in found
                    and others
                    and eligible(target)
                    and all(guarded or caller in found for caller, guarded in others)
                ):
                    found.add(target)
                    changed = True
        return found

    only = closure(lambda target: True)
    seen = closure(lambda t: t in only and (t in bound or (t[1].startswith("_") and not t[1].startswith("__"))))
    # (and the modules of the wrappers around them: Swin Transformer's `window_process.py`, whose autograd functions
    # call the `swin_window_process` extension, imported by the model only in `try: ... except: WindowProcess = None`;
    # not where a package's `__init__` is what imports a wrapper in a `try`: apex's `contrib/groupbn/__init__.py`
    # re-exports its `BatchNorm2d_NHWC` so, and without it the package has no such feature)
    kernel_modules = {m for m, _ in kernels if m != "<ext>"}
    wrapper_modules = {m for m, _ in bound if m != "<ext>"} - kernel_modules
    importers: Dict[str, List[bool]] = {}
    packages_with_fallback: Dict[str, bool] = {}  # package -> `_imported_with_fallback`, asked once each

    def imported_with_fallback(package: str) -> bool:
        if package not in packages_with_fallback:
            packages_with_fallback[package] = _imported_with_fallback(project, package, only)
        return packages_with_fallback[package]

    for (module, local), binding in project.binds.items():
        sym = project.target(module, local)
        if sym is None or sym[0] not in kernel_modules | wrapper_modules or sym[0] == module:
            continue
        if is_test_path(module.replace(".", "/") + ".py"):
            continue
        summary = project.modules[module]
        fallback = (
            (binding.guarded and not (summary.package and sym[0] in wrapper_modules))
            or (module, owner(summary, binding.statement) or "") in only
            or _reexported_with_fallback(project, module, binding)
            # (a package's `__init__` re-exporting the wrapper, where the rest of the project imports the package
            # only with a fallback: croco's `curope/__init__.py`, whose `cuRoPE2D` `pos_embed.py` imports in a `try`
            # that defines a PyTorch `RoPE2D` instead)
            or (summary.package and not binding.guarded and imported_with_fallback(module))
        )
        importers.setdefault(sym[0], []).append(fallback)
    reached = frozenset(m for m, found in importers.items() if all(found))
    return frozenset(only), reached, frozenset(seen)


def _imported_with_fallback(project: "Project", package: str, only: AbstractSet[Symbol]) -> bool:
    """Whether the modules outside `package` (tests aside) import it, or a module of it, and only where there is a
    fallback: in a `try` whose handler carries on, under a CUDA check, or in a function called only so (`only`)."""
    found: List[bool] = []
    for (module, _), binding in project.binds.items():
        if module == package or module.startswith(package + ".") or is_test_path(module.replace(".", "/") + ".py"):
            continue
        named = project.find_module(project.absolute(binding, module), module)
        if named is None or not (named == package or named.startswith(package + ".")):
            continue
        summary = project.modules[module]
        found.append(binding.guarded or (module, owner(summary, binding.statement) or "") in only)
    return bool(found) and all(found)


# -- step 3: sites -----------------------------------------------------------------------------


def sites(summary: ModuleSummary, project: Project, resolved: Resolved) -> List[ProjectSite]:
    """Imports of CUDA-bound names and the calls and launches that reach them, in `summary`'s module."""
    out: List[ProjectSite] = []
    module = summary.module
    used_modules: Dict[str, str] = {}  # local module alias -> attribute used through it

    def fallback(line: int) -> bool:
        return bool(resolved.fallback_only) and (module, owner(summary, line) or "") in resolved.fallback_only

    # Whether each call through an imported name has another path: an import used only there is optional too.
    through: Dict[str, List[bool]] = {}
    for site in summary.sites:
        through.setdefault(site.ref.split(".", 1)[0], []).append(site.guarded or fallback(site.span[0]))
    # Names the module imports only optionally (`try: import alt_cuda_corr` / `except: pass`, RAFT): it runs
    # without them, and a call through one is on the path taken only where the extension was built.
    optional = {b.local: b.statement for b in summary.imports if b.top and b.guarded}
    # A name each branch of a function imports from another module (KAIR's `select_network.py`: `from
    # models.network_rrdb import RRDB as net` in one branch, `... RVRT as net` in another): a use is of the
    # import before it in its scope. (Module-level rebinding, `try: from pkg import ngram_cuda` / `except
    # ImportError: import ngram_cuda`, keeps `Project.target`'s reading: the binding that leads somewhere.)
    by_local: Dict[str, List[Binding]] = {}
    for b in summary.imports:
        by_local.setdefault(b.local, []).append(b)
    rebound = {
        local: sorted(bs, key=lambda b: b.statement)
        for local, bs in by_local.items()
        if len({b.statement for b in bs}) > 1 and not any(b.guarded or b.top for b in bs)
    }

    def rebound_target(ref: str, line: int) -> Optional[Symbol]:
        """What `ref` refers to through the last import of its head before `line` in the same scope (a
        function's own imports count inside it only); None when no import of it is in scope there (a
        parameter of the same name, `def init_weights(net):`)."""
        head, *rest = ref.split(".")
        scope = owner(summary, line)
        before = [b for b in rebound[head] if b.statement <= line and (b.top or owner(summary, b.statement) == scope)]
        sym = project.binding_target(module, before[-1]) if before else None
        for part in rest:
            if sym is None or sym[0] == "<ext>" or sym[1]:
                break
            nxt = project.target(sym[0], part)
            if nxt is None:
                break
            sym = nxt
        return sym

    for site in summary.sites:
        if site.ref.split(".", 1)[0] in rebound:
            target = rebound_target(site.ref, site.span[0])
        else:
            target = project.reference(module, site.ref)
        if target is None or target not in resolved.bound or _for_other_platform(target):
            continue
        if not site.guarded and fallback(site.span[0]):
            site = replace(site, guarded=True)
        imported_at = optional.get(site.ref.split(".", 1)[0])
        optional_detail = f"imported optionally, line {imported_at}" if imported_at and not site.guarded else ""
        if not site.guarded and not optional_detail:
            optional_detail = _loaded_optionally(project, module, target)
        if optional_detail:
            site = replace(site, guarded=True)
        head = site.ref.split(".", 1)[0]
        head_target = project.target(module, head)
        through_import = (module, head) in project.binds
        if site.kind == "launch":
            if target in resolved.kernels:
                out.append(
                    ProjectSite(
                        module, site.span, site.ref, "launch", site.guarded, optional_detail, head,
                        defined_here=target[0] == module,
                    )
                )
            continue
        if target in resolved.extensions and "." in site.ref:
            dual = target[0] == "<ext>" and target[1] in project.dual
            out.append(ProjectSite(module, site.span, site.ref, "call", site.guarded, optional_detail, head, dual=dual))
        elif through_import and target[0] != module:
            out.append(ProjectSite(module, site.span, site.ref, "call", site.guarded, optional_detail, head))
            if head_target is not None and head_target[1] == "" and "." in site.ref:
                used_modules.setdefault(head, site.ref)
    reported: Set[int] = set()  # one finding per import statement, at its first CUDA-bound name
    for binding in summary.imports:
        if binding.statement in reported:
            continue
        if binding.local in rebound or (module, binding.local) in project.other_binds:
            # (each import of a name bound by several is what it imports: the handler's
            # `from cuda_op.op_native import FusedLeakyReLU` is no use of the CUDA op its `try:` imports)
            sym = project.binding_target(module, binding)
        else:
            sym = project.target(module, binding.local)
        if sym is None or _for_other_platform(sym):
            continue
        detail = ""
        if sym in resolved.bound and sym[0] != module:
            label = sym[1] if sym[0] == "<ext>" else f"{sym[0]}.{sym[1]}"
        elif sym[1] == "" and binding.local in used_modules:
            label = used_modules[binding.local]
        elif binding.top and sym[0] != module and _loads_when_imported(project, resolved, sym[0]):
            label, detail = sym[0], "it builds or loads a CUDA extension when imported"
        else:
            continue
        reported.add(binding.statement)
        calls = through.get(binding.local, [])
        only_with_fallback = bool(calls) and all(calls) and binding.local not in summary.values
        guarded = (
            binding.guarded
            or fallback(binding.statement)
            or only_with_fallback
            or _reexported_with_fallback(project, module, binding)
        )
        if not guarded and not detail:
            detail = _loaded_optionally(project, module, sym)
            guarded = bool(detail)
        binds = tuple(b.local for b in summary.imports if b.statement == binding.statement)
        dual = sym[0] == "<ext>" and sym[1] in project.dual
        definition = project.defs.get(sym)
        among = definition is not None and definition.kernel and any(d.kernel for d in summary.definitions)
        out.append(
            ProjectSite(
                module, binding.span, label, "import", guarded, detail, binding.local, binds, dual=dual,
                among_kernels=among,
            )
        )
    return out


def _loaded_optionally(project: Project, module: str, sym: Symbol) -> str:
    """How `sym` is loaded when a `try` binds it from a loader and its handler to `None` (see
    `ModuleSummary.optional_loads`): the code has a path without it; "" otherwise."""
    summary = project.modules.get(sym[0])
    for name, first, _ in summary.optional_loads if summary is not None else ():
        if name == sym[1]:
            where = f"line {first}" if sym[0] == module else f"{sym[0]} line {first}"
            return f"loaded optionally, {where}"
    return ""


def _named_sources(path: str, literal: str, roots: Sequence[str]) -> Set[str]:
    """The display paths a build's source literal may name: beside the module, from the repository's top as
    the process runs there (`sources=['models/op/upfirdn2d_kernel.cu']`), the same below each scanned folder
    when the scan starts above it."""
    folder = posixpath.dirname(path.replace("\\", "/"))
    found = {posixpath.normpath(posixpath.join(folder, literal)), posixpath.normpath(literal)}
    return found | {posixpath.normpath(posixpath.join(root, literal)) for root in roots}


def built_with_fallback(
    summaries: Mapping[str, ModuleSummary], resolved: Resolved, roots: Sequence[str] = ()
) -> FrozenSet[str]:
    """The C++/CUDA sources (display paths) that the product names only inside functions it calls where
    there is a fallback: stylegan's `_init()` builds `bias_act.cu` through `get_plugin(sources=[...])` and is
    called only as `if x.device.type == "cuda" and _init():`, before the reference implementation. A name
    is resolved against the module's folder and the repository root; tests that build a source to test it
    do not count."""
    named: Dict[str, bool] = {}
    for path, summary in summaries.items():
        if not summary.sources or is_test_path(path):
            continue
        for literal, line in summary.sources:
            fallback = (
                summary.module in resolved.fallback_modules
                or (summary.module, owner(summary, line) or "") in resolved.fallback_seen
                or any(first <= line <= last for first, last in summary.cuda_builds)
                or any(first <= line <= last for _, first, last in summary.optional_loads)
            )
            for candidate in _named_sources(path, literal, roots):
                named[candidate] = named.get(candidate, True) and fallback
    return frozenset(p for p, only in named.items() if only)


UNIMPORTED_BUILD_NOTE = (
    "lowered to info: this builds, or is a source of, the extension {names}, which only modules nothing in this"
    " application runs import; it is an optional build a port can leave as it is"
)


def unimported_builds(
    summaries: Mapping[str, ModuleSummary],
    sources: "Sources",
    unreached: Mapping[str, str],
    native: Sequence[str],
    roots: Sequence[str] = (),
) -> Dict[str, str]:
    """The build scripts, and the C++/CUDA sources they name (with the headers those include), of extensions that
    only modules nothing runs import (apple/ml-sigmoid-attention's `csrc/layer_norm/setup.py` builds flash-attn's
    optional `dropout_layer_norm`, which only the unreached `ops/layer_norm.py` imports), each with its note. An
    extension no module imports by its name is left alone: it may be loaded another way (`torch.ops`)."""
    out: Dict[str, str] = {}
    for names, importers, files in _extension_builds(summaries, sources, native, roots):
        if importers and all(p in unreached for p in importers):
            note = UNIMPORTED_BUILD_NOTE.format(names=_names(names))
            out.update(dict.fromkeys(files, note))
    return out


UNREACHED_BUILD_NOTE = (
    "lowered to info: only modules nothing in this application runs ({modules}) build this source; it is vendored"
    " or unused code a port can leave as it is"
)


def built_only_unreached(
    summaries: Mapping[str, ModuleSummary],
    unreached: Mapping[str, str],
    native: Sequence[str],
    roots: Sequence[str] = (),
) -> Dict[str, str]:
    """The C++/CUDA sources (with the headers that go with them) that only modules nothing runs name in a build
    (`cpp_extension.load(sources=[...])`, StyleGAN's `get_plugin(sources=...)`), each with its note: StyleNAT's
    unused copy of StyleGAN3's `torch_utils/ops/filtered_lrelu.py` builds `filtered_lrelu*.cu`."""
    builders: Dict[str, Set[str]] = {}  # source -> the unreached modules that build it
    live: Set[str] = set()  # sources a reached module builds
    for path, summary in summaries.items():
        for literal, _ in summary.sources:
            for candidate in _named_sources(path, literal, roots):
                if path in unreached:
                    builders.setdefault(candidate, set()).add(path)
                else:
                    live.add(candidate)
    only = frozenset(p for p in builders if p not in live and p in native)
    if not only:
        return {}
    out = {p: UNREACHED_BUILD_NOTE.format(modules=_names(builders[p])) for p in only}
    for header in headers_of(only, native) - only:
        out[header] = UNREACHED_BUILD_NOTE.format(modules=_names({b for p in only for b in builders[p]}))
    return out


OPTIONAL_BUILD_NOTE = (
    "lowered one level: this builds, or is a source of, the extension {names}; only modules the project imports"
    " where it has a fallback import it (tests aside), so elsewhere its reference path runs"
)


def optional_builds(
    summaries: Mapping[str, ModuleSummary],
    sources: "Sources",
    reached: AbstractSet[str],
    native: Sequence[str],
    roots: Sequence[str] = (),
) -> Dict[str, str]:
    """The build scripts and sources (`unimported_builds`) of extensions that only modules the project imports
    where it has a fallback (`reached`) import, tests aside, each with its note: Swin Transformer's
    `kernels/window_process/setup.py` and `swin_window_process_kernel.cu` build the `swin_window_process` that
    only `window_process.py` imports (and the kernel's `unit_test.py`), itself imported by the model only in
    `try: ... except: WindowProcess = None`."""
    out: Dict[str, str] = {}
    modules = {s.module for s in summaries.values()}
    for names, importers, files in _extension_builds(summaries, sources, native, roots):
        product = [p for p in importers if not is_test_path(p)]
        # (or a module whose every import of the name has a fallback: croco's `pos_embed.py`, `try: from .curope
        # import cuRoPE2D` / `except ImportError:` a PyTorch `RoPE2D`, beside the wrapper `curope2d.py` it reaches)
        if product and all(p in reached or _wraps_with_fallback(summaries.get(p), names, modules) for p in product):
            out.update(dict.fromkeys(files, OPTIONAL_BUILD_NOTE.format(names=_names(names))))
    return out


def _wraps_with_fallback(summary: Optional[ModuleSummary], names: AbstractSet[str], modules: AbstractSet[str]) -> bool:
    """Whether every import statement of `summary`'s module that spells one of `names` imports a Python module of
    the project (`modules`: a wrapper package named like the extension, croco's `curope/`), guarded (in a `try`
    whose handler carries on, or under a CUDA check), and there is one. An optional import of the extension itself
    (mamba's `try: import selective_scan_cuda` / `except ImportError: selective_scan_cuda = None`, then a check that
    raises) is no fallback."""
    if summary is None:
        return False
    spelling = [b for b in summary.imports if names & {*b.module.split("."), b.name or "", b.local}]
    return bool(spelling) and all(
        b.guarded and absolute_module(b, summary.module, summary.package) in modules for b in spelling
    )


def absolute_module(binding: Binding, importer: str, package: bool) -> str:
    """The dotted module a binding of the module `importer` (a package's `__init__` when `package`) names, relative
    imports made absolute."""
    if not binding.level:
        return binding.module
    base = importer.split(".") if importer else []
    if not package:
        base = base[:-1]
    if binding.level > 1:
        base = base[: len(base) - (binding.level - 1)]
    return ".".join(base + ([binding.module] if binding.module else []))


def _names(names: Iterable[str]) -> str:
    return ", ".join(f"`{n}`" for n in sorted(names))


def _extension_builds(
    summaries: Mapping[str, ModuleSummary], sources: "Sources", native: Sequence[str], roots: Sequence[str]
) -> Iterable[Tuple[Set[str], List[str], Set[str]]]:
    """For each build script of the project's extensions (tests aside): the names of the extensions it builds,
    the files that import one by its name, and the script with the C++/CUDA sources it names and their headers."""
    natives = frozenset(native)
    for path, summary in summaries.items():
        if not summary.built or not summary.sources or is_test_path(path):
            continue
        names = {name.rsplit(".", 1)[-1] for name in summary.built}
        importers = [p for p in sources.paths() if p != path and names & sources.import_words(p)]
        named = {candidate for literal, _ in summary.sources for candidate in _named_sources(path, literal, roots)}
        named &= natives
        yield names, importers, {path, *named, *headers_of(frozenset(named), natives)}


_HEADERS = (".cuh", ".h", ".hpp", ".hh", ".hxx")


def headers_of(built: FrozenSet[str], native: Iterable[str]) -> FrozenSet[str]:
    """The headers among `native` (CUDA and C++ display paths) that go with sources built only with a
    fallback (`built`): every source of the nearest folder above a header that holds any (its own folder
    first, subfolders counted) is in `built`. optimum-quanto's `marlin/*.cuh`, `#include`d by the `.cu` files
    its CUDA extension names, are named by no build list themselves."""
    paths = [p.replace("\\", "/") for p in native]
    total: Dict[str, int] = {}
    only: Dict[str, int] = {}
    for path in paths:
        if path.endswith(_HEADERS):
            continue
        for folder in folders_above(path) + [""]:
            total[folder] = total.get(folder, 0) + 1
            only[folder] = only.get(folder, 0) + (path in built)
    found = set()
    for path in paths:
        if path.endswith(_HEADERS):
            holding = [f for f in folders_above(path) + [""] if total.get(f)]
            if holding and only[holding[0]] == total[holding[0]]:
                found.add(path)
    return frozenset(found)


def kept_for_legacy_torch(legacy: Set[str], python: Iterable[str], native: Iterable[str]) -> FrozenSet[str]:
    """The C++/CUDA files (display paths among `native`) kept for an old torch only: the nearest folder above
    one that holds Python modules (subfolders counted) holds only modules the project imports only from an
    old torch's arm (`legacy`). HRNet's `sync_bn/inplace_abn/src/*.cu`, built by `inplace_abn/functions.py`."""
    total: Dict[str, int] = {}
    only: Dict[str, int] = {}
    for path in python:
        for folder in folders_above(path.replace("\\", "/")):
            total[folder] = total.get(folder, 0) + 1
            only[folder] = only.get(folder, 0) + (path in legacy)
    found = set()
    for path in native:
        holding = [f for f in folders_above(path.replace("\\", "/")) if total.get(f)]
        if holding and only[holding[0]] == total[holding[0]]:
            found.add(path)
    return frozenset(found)


def fallback_spans(summary: ModuleSummary, resolved: Resolved) -> List[Tuple[int, int]]:
    """The lines of `summary`'s functions and classes that the project reaches only where there is a
    fallback, every caller seen (`Resolved.fallback_seen`): what runs in them runs only where CUDA does."""
    return [d.lines for d in summary.definitions if d.lines[0] and (summary.module, d.name) in resolved.fallback_seen]


def _built_as_cpp(project: "Project", extension: str) -> bool:
    """Whether the extension module `extension` (`uv_unwrapper.uv_unwrapper._C`) has no CUDA in its name and
    the nearest `setup` module above it builds C++ extensions only."""
    if "cuda" in extension.rsplit(".", 1)[-1].lower() or project.built_with_cuda(extension):
        return False
    parts = extension.split(".")[:-1]
    while True:
        summary = project.modules.get(".".join(parts + ["setup"]))
        if summary is not None:
            return summary.cpp_only
        if not parts:
            return False
        parts.pop()


def _loads_when_imported(project: Project, resolved: Resolved, module: str) -> bool:
    """A module that builds or loads an extension when imported, or a package that imports one: the
    places that import it are where the build is triggered. (A plain module that merely imports one
    is reported at its own import.)"""
    summary = project.modules.get(module)
    return module in resolved.at_import and summary is not None and (summary.loads_at_import or summary.package)


def dependents(summaries: Iterable[ModuleSummary], changed: Iterable[str]) -> FrozenSet[str]:
    """Modules whose project findings may change when the modules in `changed` do: those that import
    them, directly or through other modules, and the changed modules themselves."""
    project = Project(summaries)
    importers: Dict[str, Set[str]] = {}
    for (module, _local), binding in project.binds.items():
        absolute = project.absolute(binding, module)
        for name in (absolute, f"{absolute}.{binding.name}" if binding.name else None):
            if name:
                found = project.find_module(name, module)
                if found is not None:
                    importers.setdefault(found, set()).add(module)
    out: Set[str] = set()
    pending = [c for c in changed]
    while pending:
        name = pending.pop()
        if name in out:
            continue
        out.add(name)
        pending.extend(importers.get(name, ()))
    return frozenset(out)


# -- the hook ----------------------------------------------------------------------------------


def import_words(text: str) -> FrozenSet[str]:
    """The names spelled on the lines that start an import statement (module and package names), but
    for imports of PyTorch's own packages."""
    return frozenset(
        w
        for line in IMPORT_STATEMENT.findall(text)
        if not TORCH_IMPORT.match(line)
        for w in IDENTIFIER.findall(line)
    )


def import_only_words(text: str) -> FrozenSet[str]:
    """The names the text spells on its import lines and nowhere else: what it imports and never uses, and
    what a package's `__init__.py` only re-exports (`from .modeling_transfo_xl import TransfoXLModel`). A name
    imported under another (`import X as Y`) is used wherever that one is: never among them."""
    lines = IMPORT_STATEMENT.findall(text)
    aliased = {w for line in lines for w in _ALIASED.findall(line)}
    # (a package's `__all__` lists what it re-exports: no use either, det3d's `"parallel_test"`)
    rest = set(IDENTIFIER.findall(without_comments(_EXPORT_LIST.sub("", IMPORT_STATEMENT.sub("", text)))))
    return frozenset(w for line in lines for w in IDENTIFIER.findall(line) if w not in rest and w not in aliased)


_ALIASED = re.compile(r"\b(\w+)\s+as\b")
# `__all__ = ["a", "b"]` (over several lines too), `__all__ += ("c",)`
_EXPORT_LIST = re.compile(r"^__all__[ \t]*\+?=[ \t]*[\[(][^\])]*[\])]", re.MULTILINE)


class SiteFindings:
    """Where `project_findings` keeps the findings it made for a file's sites, and finds them again:
    nowhere here; portcheck.project_cache keeps them in the persistent cache."""

    def get(self, path: str, found: Sequence[ProjectSite]) -> Optional[List[Finding]]:
        return None

    def put(self, path: str, found: Sequence[ProjectSite], findings: Sequence[Finding]) -> None:
        return None


def spelt_words(text: str) -> FrozenSet[str]:
    """The names a file's code and strings spell (not its comments)."""
    return frozenset(IDENTIFIER.findall(without_comments(text)))


# The facts of a file's text that the application passes (portcheck.reach) ask of every file, by name.
TEXT_FACTS = {
    "import_words": import_words,
    "words": spelt_words,
    "loading": loading_facts,
    "lone": lone_definitions,
    "import_only": import_only_words,
}


# A fact asked only of the files that spell a name the unused-code pass weighs: computed when asked (an AST
# parse), then kept like the others.
LAZY_FACTS = {"tied": tied_fact}


def _text_facts(work: Tuple[str, Tuple[str, ...]]) -> Tuple[FrozenSet[str], ...]:
    text, names = work
    return tuple(TEXT_FACTS[name](text) for name in names)


class Sources:
    """The Python files a project pass may read, by display path, and the per-file facts it asks of
    them. Each fact depends on that file's text only. `TextSources` works from texts in memory;
    portcheck.project_cache keeps the facts in the persistent cache, so that a warm scan neither
    reads nor summarizes a file whose bytes did not change."""

    def paths(self) -> Sequence[str]:
        raise NotImplementedError

    def missing(self, path: str, name: str) -> bool:
        """Whether the fact `name` (of TEXT_FACTS) of the file is still to be computed."""
        return True

    def keep(self, path: str, name: str, value: FrozenSet[str]) -> None:
        """Keep the fact `name` of the file, computed elsewhere."""
        return None

    def prefetch(self, names: Sequence[str], jobs: int, threshold: int) -> None:
        """Compute the facts `names` of every file that lacks one, in `jobs` processes when at least `threshold`
        files do (the facts are the same computed anywhere: `TEXT_FACTS` of the text)."""
        todo = [p for p in self.paths() if any(self.missing(p, n) for n in names)]
        if jobs < 2 or len(todo) < threshold:
            return  # asked one by one, as the passes go
        work = [(self.text(p), tuple(names)) for p in todo]
        with process_context().Pool(min(jobs, len(todo))) as pool:
            for path, values in zip(todo, pool.imap(_text_facts, work, chunksize=16)):
                for name, value in zip(names, values):
                    self.keep(path, name, value)

    def text(self, path: str) -> str:
        raise NotImplementedError

    def may_define(self, path: str) -> bool:
        return may_define(self.text(path))

    def import_words(self, path: str) -> FrozenSet[str]:
        return import_words(self.text(path))

    def words(self, path: str) -> FrozenSet[str]:
        """The names the file's code and strings spell (not its comments)."""
        return spelt_words(self.text(path))

    def import_only(self, path: str) -> FrozenSet[str]:
        """The names the file spells on its import lines only (`import_only_words`)."""
        return import_only_words(self.text(path))

    def loading_facts(self, path: str) -> FrozenSet[str]:
        """Whether the module runs code at module level and what it loads by computed name
        (portcheck.pyscan.loading)."""
        return loading_facts(self.text(path))

    def lone_definitions(self, path: str) -> FrozenSet[str]:
        """The module-level definitions the module never names outside themselves
        (portcheck.pyscan.definitions)."""
        return lone_definitions(self.text(path))

    def tied(self, path: str) -> FrozenSet[str]:
        """Where the module's spellings of names lead (portcheck.pyscan.spellings.tied_fact)."""
        return tied_fact(self.text(path))

    def summary(self, path: str) -> Optional[ModuleSummary]:
        """The file's summary, or None when it does not parse."""
        return summarize_or_none(self.text(path), path)

    def site_findings(self, settings) -> SiteFindings:
        """Where the findings made for one settings are kept between runs."""
        return SiteFindings()

    def save(self) -> None:
        """Keep what this scan learnt for the next one (nothing here)."""
        return None


def summarize_or_none(text: str, path: str) -> Optional[ModuleSummary]:
    try:
        return summarize(text, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class TextSources(Sources):
    """Sources from texts in memory; `summary_cache` (keyed by path and text digest) is consulted and
    filled, so unchanged files are never parsed twice."""

    def __init__(self, texts: Mapping[str, str], summary_cache: Optional[Dict[str, ModuleSummary]] = None) -> None:
        self.texts = texts
        self.cache = summary_cache if summary_cache is not None else {}
        self.facts: Dict[Tuple[str, str], FrozenSet[str]] = {}  # (path, name in TEXT_FACTS) -> the fact

    def paths(self) -> Sequence[str]:
        return list(self.texts)

    def text(self, path: str) -> str:
        return self.texts[path]

    def missing(self, path: str, name: str) -> bool:
        return (path, name) not in self.facts

    def keep(self, path: str, name: str, value: FrozenSet[str]) -> None:
        self.facts[(path, name)] = value

    def _fact(self, path: str, name: str) -> FrozenSet[str]:
        found = self.facts.get((path, name))
        if found is None:
            compute = TEXT_FACTS.get(name) or LAZY_FACTS[name]
            found = self.facts[(path, name)] = compute(self.text(path))
        return found

    def tied(self, path: str) -> FrozenSet[str]:
        return self._fact(path, "tied")

    def import_words(self, path: str) -> FrozenSet[str]:
        return self._fact(path, "import_words")

    def words(self, path: str) -> FrozenSet[str]:
        return self._fact(path, "words")

    def loading_facts(self, path: str) -> FrozenSet[str]:
        return self._fact(path, "loading")

    def lone_definitions(self, path: str) -> FrozenSet[str]:
        return self._fact(path, "lone")

    def import_only(self, path: str) -> FrozenSet[str]:
        return self._fact(path, "import_only")

    def summary(self, path: str) -> Optional[ModuleSummary]:
        text = self.texts[path]
        key = path + "\0" + hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
        summary = self.cache.get(key)
        if summary is None:
            summary = summarize_or_none(text, path)
            if summary is not None:
                self.cache[key] = summary
        return summary


def index_project(
    texts: Union[Mapping[str, str], Sources], summary_cache: Optional[Dict[str, ModuleSummary]] = None
) -> Tuple[Project, Resolved, Dict[str, ModuleSummary]]:
    """Summaries of the files that can take part, found in rounds: files that may define a CUDA-bound
    name, then files that mention one of the names found so far, until no file is added.
    `texts` maps display paths to source text (or is a `Sources`); `summary_cache` (keyed by path and
    text digest) is consulted and filled, so unchanged files are never parsed twice."""
    files = texts if isinstance(texts, Sources) else TextSources(texts, summary_cache)
    summaries: Dict[str, ModuleSummary] = {}
    tried: Set[str] = set()  # a file that does not parse is tried once, not in every round

    def add(path: str) -> None:
        if path in tried:
            return
        tried.add(path)
        summary = files.summary(path)
        if summary is not None:
            summaries[path] = summary

    # Every module is known by name, so imports resolve to the project even through files that
    # were never parsed (`from pkg import _C` needs to know that `pkg` is the project's).
    every = list(files.paths())
    stubs = {p: ModuleSummary(*module_name(p), (), (), (), "") for p in every}

    paths = {stub.module: p for p, stub in stubs.items()}

    def everything() -> List[ModuleSummary]:
        return [summaries.get(p, stub) for p, stub in stubs.items()]

    pending = [p for p in every if files.may_define(p)]
    project: Optional[Project] = None
    while pending:
        for path in pending:
            add(path)
        # One project per round, shared with `resolve` and returned by the last round (building it
        # costs more than resolving): the last round saw every summary. The modules are the same in
        # every round, so is their name index.
        project = Project(everything(), like=project)
        resolved = resolve(project)
        # A module can use a CUDA-bound name only by importing it from its module (or a package that
        # re-exports it): the file must spell that module's last name and the bound name.
        defining = {m.rsplit(".", 1)[-1] for m, n in resolved.bound if m != "<ext>" and n}
        defining |= {
            m.rsplit(".", 2)[-2] for m, n in resolved.bound if m != "<ext>" and n and "." in m
        }  # re-exported by its package
        names = {n.rsplit(".", 1)[-1] for m, n in resolved.bound if m != "<ext>" and n}
        # `from pkg.config import _C` looks like an extension until `pkg/config.py` is read: read it.
        # (by the module's name in the scan: `utility` is `repo.utility` when the scan starts above the repository)
        guessed = {
            project.find_module(m.rsplit(".", 1)[0]) for e, m in resolved.extensions if e == "<ext>" and "." in m
        }
        owners = {paths.get(m or "") for m in guessed}
        # `from utility import prepare_data_cuda`, where `utility/__init__.py` star-imports `.prepare_data`: the
        # star's module may define the name (a function, not a compiled module): read it.
        owners |= {
            paths.get(source or "")
            for m in guessed
            if m is not None
            for star in project.stars.get(m, ())
            for source in [project.find_module(project.absolute(star, m), m)]
        }
        # What a name several imports bind may be instead (`except Exception: from cuda_op.op_native import
        # FusedLeakyReLU`): read it, whether it holds a portable path is what `resolve` asks.
        owners |= {paths.get(m) for m in _alternative_modules(project)}
        pending = [p for p in owners if p is not None and p not in tried]
        # Modules that build an extension when imported are reported where they are imported, and so are the
        # extensions the project's build scripts name (`from exllama_kernels import make_q4`).
        loading = {m.rsplit(".", 1)[-1] for m in resolved.at_import} | {n.rsplit(".", 1)[-1] for n in project.built}
        if (defining and names) or loading:
            for p in every:
                if p in tried:
                    continue
                imported = files.import_words(p)
                # (`from .cuda import *` spells no name: the star stands for them)
                if (imported & defining and (files.words(p) & names or "import *" in files.text(p))) or (
                    imported & loading
                ):
                    pending.append(p)
    if project is None:
        project = Project(everything())
        resolved = resolve(project)
    return project, resolved, summaries


def _alternative_modules(project: Project) -> Set[str]:
    """The modules of the project that the imports of names bound by several imports name."""
    out: Set[str] = set()
    for (module, local), others in project.other_binds.items():
        for binding in (project.binds[(module, local)], *others):
            absolute = project.absolute(binding, module)
            found = project.find_module(absolute, module) if absolute else None
            if found is not None:
                out.add(found)
    return out


DEFINER_PATTERN = re.compile(
    r"\btriton\b|cpp_extension|import_module|torch\.utils\.ffi|\bimport\s+(?:[\w.]+\s*,\s*)*(?:_C|_ext|\w+_cuda\w*|\w+_C)\b"
)
_IMPORT_LINE = re.compile(r"^\s*(?:from\s+(\.*[\w.]*)\s+import|import\s+([\w.]+))")
DUAL_NOTE = (
    "lowered one level: the project builds this extension without CUDA too (`CppExtension` where CUDA is not), so"
    " its ops with a CPU kernel run on the host there; those with a CUDA kernel only need a port"
)
GUARD_NOTE = (
    "lowered one level: it sits in a branch of a CUDA check, behind a check that the module is there, or in a"
    " `try` that carries on without it, or only such code reaches it"
)


OWN_LAUNCH_NOTE = (
    "lowered to info: a launch of a Triton kernel this module defines; the kernel is reported where it is"
    " defined, and the port replaces it with its launcher"
)
KERNEL_IMPORT_NOTE = (
    "lowered to info: a Triton kernel imported into a module of Triton kernels, which call it; it is reported"
    " where it is defined, and this module's own kernels where they are: the port replaces them together"
)
REEXPORT_NOTE = (
    "lowered to info: the package's `__init__` re-exports its own submodule's CUDA-bound name; it is reported"
    " where it is defined and where the rest of the project imports it"
)
REPEAT_NOTE = (
    "lowered to info: another use of `{label}` in this file (first on line {line}, reported at its severity);"
    " the port replaces what it names once, not at each use"
)


_TRITON = re.compile(r"\btriton\b")
_EXTENSION_IMPORT = re.compile(r"import\s+(?:[\w.]+\s*,\s*)*(?:_C|_ext|\w+_cuda\w*|\w+_C)\b")


def may_define(text: str) -> bool:
    """`DEFINER_PATTERN.search(text)`, an alternation the regex engine tries at every character, answered by
    plain substring tests first (five times faster on large corpora)."""
    if "cpp_extension" in text or "import_module" in text or "torch.utils.ffi" in text:
        return True
    if "triton" in text and _TRITON.search(text):
        return True
    if "_C" in text or "_ext" in text or "_cuda" in text:
        for found in _EXTENSION_IMPORT.finditer(text):
            start = found.start()
            if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):  # `\bimport`
                return True
    return False


def read_python(path) -> Optional[bytes]:
    """The bytes of a Python file the pass may read, or None (unreadable, or over the size limit)."""
    try:
        if os.stat(path).st_size > MAX_BYTES:
            return None
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def python_text(data: bytes) -> Optional[str]:
    """The text of a Python file the pass takes part of, or None (binary, undecodable, skipped)."""
    if looks_binary(data):
        return None
    try:
        text = decode_python(data).text
    except DecodeError:
        return None
    return None if skip_file(text) else text


@dataclass
class ProjectPass:
    """The project's Python files and, when any file may define a CUDA-bound name, their index: built
    once per scan and shared by every target."""

    sources: Sources
    own: "Project"
    index: Optional[Tuple["Project", "Resolved", Dict[str, ModuleSummary]]]
    _sites: Optional[Dict[str, List[ProjectSite]]] = None
    # Modules of an application nothing runs (see portcheck.reach), each with the note for its findings.
    unreached: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # Folders that hold a copy of another project (see portcheck.vendored), each with its note.
    vendored: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # Functions and classes of an application nothing names (see portcheck.reach), by path: first and
    # last line, and the note for the findings inside.
    unused: Mapping[str, List[Tuple[int, int, str]]] = dataclasses.field(default_factory=dict)
    # The scan read whole folders, not files picked one by one (a pre-commit hook's changed files): what
    # it did not find, the project does not have.
    whole_folders: bool = False

    @classmethod
    def read(cls, candidates, displays) -> "ProjectPass":
        """The pass over files read now, nothing kept (`portcheck.project_cache.CachedSources` keeps the
        per-file facts between runs: build it and call `of`)."""
        texts: Dict[str, str] = {}
        for candidate, display in zip(candidates, displays):
            if candidate.kind != "python":
                continue
            data = read_python(candidate.path)
            text = python_text(data) if data is not None else None
            if text is not None:
                texts[display] = text
        return cls.of(TextSources(texts))

    @classmethod
    def of(cls, sources: Sources) -> "ProjectPass":
        paths = sources.paths()
        index = index_project(sources) if any(sources.may_define(p) for p in paths) else None
        # The index's project knows the same modules (every path, parsed or not).
        own = index[0] if index is not None else Project(ModuleSummary(*module_name(p), (), (), (), "") for p in paths)
        return cls(sources, own, index)

    def site_findings(self, settings) -> SiteFindings:
        return self.sources.site_findings(settings)

    def sites(self, native: Sequence[str] = ()) -> Dict[str, List[ProjectSite]]:
        """The sites of every indexed file that has any, by display path: the same for every target. `native`:
        the project's C++ sources (display paths), for the CPU kernels of extensions built without CUDA too."""
        if self._sites is None:
            self._sites = {}
            if self.index is not None:
                project, resolved, summaries = self.index
                project.confirm_dual(native)
                for path, summary in summaries.items():
                    found = sites(summary, project, resolved)
                    if found:
                        self._sites[path] = found
        return self._sites

    def save(self) -> None:
        """Keep what this scan learnt for the next one (nothing without a cache)."""
        self.sources.save()


def project_findings(results, candidates, displays, settings, project_pass: Optional[ProjectPass] = None):
    """The scan's hook: add the project pass's findings to `results` (FileResults in any order) and
    drop package findings for imports of the project's own modules. Returns new FileResults.
    `project_pass` is what `ProjectPass.read(candidates, displays)` returns, shared between targets."""
    prepared = prepare(settings)
    target = Target(settings.target)
    entries = [e for e in prepared.text_rules if any(getattr(m, "kind", "") == "project" for m in e.text_matchers)]
    state = project_pass if project_pass is not None else ProjectPass.read(candidates, displays)
    files = set(state.sources.paths())
    own = state.own
    # modules of copied projects: importing one is a dependency, not the project's own module
    copies = frozenset(module_name(p)[0] for p in files if under(p, state.vendored)) if state.vendored else frozenset()
    # CUDA's member of a set of per-backend variants (`docker/nvidia/` beside `docker/amd/`, `docker/cpu/`)
    variants = cuda_variants(displays)
    # Build settings (KRN007, whose `detail-of` names the builds they configure) in a repository with no CUDA
    # source and none of those builds (text-generation-webui's `export CUDA_HOME="$INSTALL_ENV_DIR"` in its
    # launchers): they configure no build of the repository's own, only packages built while installing.
    # (Code that is a kernel's detail where there is one, a CuPy kernel's `is_cuda` assert, is code of its own
    # where there is none: only build settings and toolkit checks count here.)
    details = {e.rule.code: e.detail_of for e in prepared.rules if e.detail_of and e.rule.category in _BUILD_CATEGORIES}
    unbuilt: FrozenSet[str] = frozenset()
    if details and state.whole_folders and not any(c.kind == "cuda" for c in candidates):
        owners = {c for code, codes in details.items() for c in codes if c != code}  # (not the settings themselves)
        if not any(f.code in owners for r in results for f in r.findings):
            unbuilt = frozenset(details)
    if not files:
        return [_lowered_by_layout(r, variants, unbuilt, settings.roots) for r in results]
    added: Dict[str, List[Finding]] = {}
    reached: Set[str] = set()  # kernel modules the project imports only from code with a fallback
    built: FrozenSet[str] = frozenset()  # sources it builds only there
    twinned: Dict[str, str] = {}  # CUDA sources of an extension built without CUDA too -> their CPU twin
    spans: Dict[str, List[Tuple[int, int]]] = {}  # functions it calls only there
    other: Dict[str, str] = {}  # modules it imports only from another platform's code, and from where
    legacy_native: FrozenSet[str] = frozenset()  # C++/CUDA files beside modules kept for an old torch only
    platform_spans: Dict[str, List[Tuple[int, int, str]]] = {}  # functions named for another platform
    wrappers: Dict[str, List[Tuple[int, int, str]]] = {}  # definitions that call an extension or launch a kernel
    unimported: Dict[str, str] = {}  # build scripts and sources of extensions only modules nothing runs import
    optional: Dict[str, str] = {}  # those of extensions only modules imported with a fallback import
    cuda_sources = [d for c, d in zip(candidates, displays) if c.kind == "cuda"]
    cpp_sources = [d for c, d in zip(candidates, displays) if c.kind == "cpp"]
    if state.index is not None:
        project, resolved, summaries = state.index
        reached = {p for p, s in summaries.items() if s.module in resolved.fallback_modules}
        elsewhere = resolved.other_platform
        other = {p: elsewhere[s.module] for p, s in summaries.items() if s.module in elsewhere}
        legacy = {p for p, why in other.items() if why == LEGACY_TORCH}
        if legacy:
            native = (d for c, d in zip(candidates, displays) if c.kind in ("cuda", "cpp"))
            legacy_native = kept_for_legacy_torch(legacy, files, native)
        platform_spans = {p: named for p, s in summaries.items() if (named := platform_code(s))}
        for p, s in summaries.items():
            wrapped = [] if is_test_path(p) else extension_wrappers(s, project, resolved)
            if wrapped:
                wrappers[p] = wrapped
        native_files = [d for c, d in zip(candidates, displays) if c.kind in ("cuda", "cpp")]
        if state.unreached:
            unimported = unimported_builds(summaries, state.sources, state.unreached, native_files, settings.roots)
            only_there = built_only_unreached(summaries, state.unreached, native_files, settings.roots)
            unimported = {**only_there, **unimported}
        built = built_with_fallback(summaries, resolved, settings.roots)
        if reached:
            optional = optional_builds(summaries, state.sources, reached, native_files, settings.roots)
        if built:
            built |= headers_of(built, native_files)
        dual_folders = [posixpath.dirname(p.replace("\\", "/")) for p, s in summaries.items() if s.dual_built]
        if dual_folders:
            twinned = cpu_twinned(cuda_sources, cpp_sources, dual_folders)
        spans = {p: lines for p, s in summaries.items() if (lines := fallback_spans(s, resolved))}
    # test files that call the project's kernels, and tests and benchmarks that sit beside its CUDA sources
    kernel_tests = kernel_test_paths(
        [
            d
            for c, d in zip(candidates, displays)
            if c.kind in ("python", "notebook") and (is_test_path(d) or is_benchmark_file(d))
        ],
        cuda_sources,
    )
    if entries and state.index is not None:
        kept = state.site_findings(settings)
        for path, found in state.sites(cpp_sources).items():
            if is_display_module(project_path(path, settings.roots)):
                continue  # `collect_env.py` reads the extension's version to show it: no lock-in
            if is_test_path(path) or is_benchmark_file(path):
                # a test that calls the project's kernels tests them, a benchmark that does times them: the
                # lock-in is the kernel, reported where it is defined, and the test or benchmark runs as it
                # is once the kernel is ported
                if found:
                    kernel_tests.add(path)
                continue
            # A file's findings depend on its text, its sites and the settings only: those of a file
            # whose sites and bytes did not change come from the cache.
            made = kept.get(path, found)
            if made is None:
                made = _site_findings(path, found, state.sources.text(path), entries, target, settings)
                kept.put(path, found, made)
            added[path] = made
    # each file's own findings, less package findings on imports of the project's own modules
    own_findings = {
        r.path: [
            f
            for f in r.findings
            if not (f.category == "package" and _names_own(r, f.source_line, files, own, copies))
        ]
        for r in results
    }
    folders = list(state.vendored)
    copy_of = {r.path: c for r in results if (c := folder_of(r.path, folders))} if folders else {}
    standing = _standing_for_copies(own_findings, added, copy_of)
    flags = {f.flag for fs in own_findings.values() for f in fs if f.flag}
    if flags:
        # `if self.cuda:` where the project only ever sets `cuda` to True (`args.cuda=True` in another module)
        texts = ((p, state.sources.text(p)) for p in sorted(files) if flags & state.sources.words(p))

        def spelling(word: str) -> Iterable[Tuple[str, str]]:  # where the calls of a flag's function are
            return ((p, state.sources.text(p)) for p in sorted(files) if word in state.sources.words(p))

        on = always_on(texts, flags, spelling)
        if on:
            own_findings = {path: [_flag_always_on(f, on) for f in fs] for path, fs in own_findings.items()}
    merged = []
    imported: Optional[FrozenSet[str]] = None  # the names the modules' imports spell, once a pin asks
    code_texts: Optional[List[str]] = None  # the lowered texts of the code and run files, once a pin asks
    for result in results:
        findings = own_findings[result.path]
        extra = added.get(result.path, [])
        platform = other_platform_code(project_path(result.path, settings.roots), result.kind)
        copy = copy_of.get(result.path, "")
        whole = (  # the whole file
            state.vendored[copy] if copy else state.unreached.get(result.path, "") or unimported.get(result.path, "")
        )
        if copy:
            # a copy of another project: one finding stands for it, at info; the rest are its own workings
            stand = standing.get(copy)
            alone = [f for f in list(findings) + list(extra) if stand is not None and f is stand[0]]
            findings = as_info(alone, whole.format(count=stand[1] if stand else 0))
            extra = []
        elif whole:
            # a module nothing runs (or a backup copy): its lock-in at info, nothing of how it would run
            findings = as_info([f for f in findings if f.category not in _COSTS_OF_RUNNING], whole)
            extra = as_info([f for f in extra if f.category not in _COSTS_OF_RUNNING], whole)
        elif platform is not None:
            extra = on_other_platform(extra, platform, target)  # `op_builder/hpu/builder.py`: as its own findings are
        elif result.path in other:
            # vendored Triton kernels the project loads only from its Ascend patch: that platform's code,
            # not reported (as a file named for the platform is not)
            code = platform_named(other[result.path], IMPORTED_FOR_PLATFORM_NOTE.format(where=other[result.path]))
            findings, extra = on_other_platform(findings, code, target), on_other_platform(extra, code, target)
        elif result.path in platform_spans:
            # `def patch_qwen3_5_forward_npu(model):` and what it imports: that platform's code
            inside = platform_spans[result.path]
            findings = _on_platform_in(findings, inside, target)
            extra = _on_platform_in(extra, inside, target)
        elif result.path in legacy_native:
            findings, extra = [], []  # HRNet's `sync_bn/inplace_abn/src/*.cu`, built by a module no target imports
        if not copy and not whole:
            findings = _layout_lowerings(result, findings, variants, unbuilt, settings.roots)
            extra = _layout_lowerings(result, extra, variants, unbuilt, settings.roots)
        if result.kind in _PIN_KINDS and any(_torch_dependency(f) or _monitor_import(f) for f in findings):
            if imported is None:
                imported = frozenset(w for p in files for w in state.sources.import_words(p))
            if "triton" not in imported:
                findings = [
                    as_info([f], UNIMPORTED_PIN_NOTE.format(name=n))[0] if (n := _torch_dependency(f)) else f
                    for f in findings
                ]
            # SimPO's conda export pins `pynvml==11.5.0` as some package's dependency: no module monitors the GPU
            findings = [f for f in findings if _monitor_import(f) in ("", *imported)]
        if _main_pins(result) and state.whole_folders and any(f.category == "package" for f in findings):
            # PVC's `deepspeed==0.13.5`: evaluation code that never imports, launches or configures it
            if code_texts is None:
                code_texts = _code_texts(candidates)
            findings = [
                as_info([f], UNUSED_PIN_NOTE.format(name=name))[0]
                if f.category == "package"
                and f.severity != Severity.INFO
                and (name := _pin_name(f))
                and not name.startswith("nvidia-")  # (the CUDA runtime's wheels: the environment, used by torch)
                and not _spelt_in(name, code_texts)
                else f
                for f in findings
            ]
        if result.path in kernel_tests:
            # `test_bsdf.py` runs the CUDA plugin against its reference on CUDA tensors: its devices, syncs and
            # events are how a kernel is tested where it exists (readers rejected them even at `info`)
            findings = [f for f in findings if f.category == "kernel"]
        if result.path in wrappers:
            # (before the unused spans below: a precondition dropped here is dropped in unused code too)
            findings = _in_wrappers(findings, wrappers[result.path])
        if result.path in state.unused and not whole:
            # how code behaves once on an XLA-like device (host syncs, recompiles, float64) says nothing
            # about code that never runs
            findings = _in_spans(findings, state.unused[result.path], drops=_COSTS_OF_RUNNING)
            extra = _in_spans(extra, state.unused[result.path], drops=_COSTS_OF_RUNNING)
        # (the lowerings below leave a finding already lowered as it is)
        if result.path in reached:
            # its own findings and the project rules' sites in it (quanto's `ext.lib.unpack(...)` calls)
            findings = [_reached_with_fallback(f) for f in findings]
            extra = [f if f.note else _reached_with_fallback(f) for f in extra]
        elif result.path in built:
            findings = [lower_finding(f, BUILT_NOTE) if f.category == "kernel" else f for f in findings]
        elif result.path in optional:
            note = optional[result.path]
            findings = [lower_finding(f, note) if f.category == "kernel" and not f.note else f for f in findings]
        elif result.path in twinned:
            note = TWIN_NOTE.format(twin=posixpath.basename(twinned[result.path]))
            findings = [lower_finding(f, note) if f.code == "KRN002" else f for f in findings]
        elif result.path in spans:
            ranges = spans[result.path]
            findings = [
                lower_finding(f, GUARD_NOTE) if any(a <= f.line <= b for a, b in ranges) else f for f in findings
            ]
        lowered = findings != list(result.findings)
        if extra or lowered or len(findings) != len(result.findings):
            findings = sorted(set(findings) | set(extra), key=Finding.sort_key)
            result = replace(result, findings=tuple(findings))
        merged.append(result)
    return merged


VARIANT_NOTE = (
    "lowered to info: `{part}` is CUDA's variant among per-backend variants beside it ({others}); a port adds"
    " one for its accelerator and leaves this one as it is"
)
_SOURCE_KINDS = frozenset({"python", "notebook", "cuda", "cpp"})
_NATIVE_KINDS = frozenset({"cuda", "cpp", "cmake"})  # kernel sources and their builds
NO_BUILD_NOTE = (
    "lowered to info: nothing scanned holds a CUDA source or builds an extension, so this setting configures"
    " no build of the project's own (only packages built while installing, reported where they are required)"
)


ALWAYS_ON_NOTE = (
    "the flag `{flag}` is no CUDA check: the project only ever sets it to true ({where}), so this runs on every device"
)


def _flag_always_on(finding: Finding, on: Mapping[str, Tuple[str, int]]) -> Finding:
    """The finding as it is without its CUDA check, where the check is a flag the project always turns on."""
    if finding.flag not in on or finding.unflagged is None or not finding.note.startswith(UNDER_CHECK_NOTE):
        return finding
    path, line = on[finding.flag]
    note = ALWAYS_ON_NOTE.format(flag=finding.flag, where=f"{path}:{line}") + finding.note[len(UNDER_CHECK_NOTE) :]
    return replace(finding, severity=finding.unflagged, guarded=False, note=note, flag="", unflagged=None)


def _at_info(finding: Finding, note: str) -> Finding:
    return finding if finding.severity is Severity.INFO else as_info([finding], note)[0]


def _layout_lowerings(
    result,
    findings: List[Finding],
    variants: Mapping[str, Tuple[str, Tuple[str, ...]]],
    unbuilt: FrozenSet[str],
    roots: Sequence[str],
) -> List[Finding]:
    """`findings` of `result`'s file, build settings of a repository that builds no CUDA (`unbuilt`) and the
    findings of CUDA's variant among per-backend variants at info; a variant's kernels and extensions are
    still work (a port writes its accelerator's own). None for a kernel source or build in the project's
    test folders (judged below the scanned folder of `roots` that holds it)."""
    source = result.kind in _SOURCE_KINDS
    if result.kind in _NATIVE_KINDS and (
        is_test_path(project_path(result.path, roots)) or _NATIVE_TEST_FILE.match(posixpath.basename(result.path))
    ):
        # `tests/cpp/test_mlp3.cu`, ThunderKittens' `tests/group/memory/tile/tile.cuh` and the `CMakeLists.txt`
        # beside them build and run the project's kernels on CUDA: the kernels' own tests, which only ever run
        # where the kernels do (readers rejected them even at `info`); the kernels are reported where they are.
        # So is a test program beside the kernels (ShadowKV's `kernels/test_gather_copy.cu`, its own `main()`).
        return []
    if unbuilt and not source:
        findings = [_at_info(f, NO_BUILD_NOTE) if f.code in unbuilt else f for f in findings]
    if result.path in variants:
        part, others = variants[result.path]
        note = VARIANT_NOTE.format(part=part, others=", ".join(others))
        if source:
            # CUDA's member of an accelerator abstraction (ColossalAI's `cuda_accelerator.py`, bitsandbytes'
            # `backends/cuda/ops.py`): its CUDA calls are how it works there, not one more lock-in each
            # (readers rejected them even at `info`), and rewriting them would be wrong
            findings = [f for f in findings if f.category in _VARIANT_KEEPS]
        findings = [f if source and f.category == "kernel" else _at_info(f, note) for f in findings]
    return findings


# A C++/CUDA test program by its name: `test_gather_copy.cu`, `attention_test.cc`.
_NATIVE_TEST_FILE = re.compile(r"(?i)^(?:test_\w+|\w+_test|tests?)\.(?:cu|cuh|cpp|cc|cxx)$")


# What CUDA's variant of a per-backend layout still reports: its kernels (work: a port writes its own) and
# the packages it needs (at info).
_VARIANT_KEEPS = frozenset({"kernel", "package"})


_BUILD_CATEGORIES = frozenset({"kernel", "environment"})


def _lowered_by_layout(result, variants, unbuilt: FrozenSet[str], roots: Sequence[str]):
    findings = _layout_lowerings(result, list(result.findings), variants, unbuilt, roots)
    return result if findings == list(result.findings) else replace(result, findings=tuple(findings))


def _standing_for_copies(
    findings: Mapping[str, List[Finding]], added: Mapping[str, List[Finding]], copy_of: Mapping[str, str]
) -> Dict[str, Tuple[Finding, int]]:
    """For each copy of another project with findings (`copy_of`: a file's path -> the copy's folder), from
    each file's `findings` and the project pass's `added` ones: the finding that stands for the copy (the
    most severe, then the first by path and line) and how many it has."""
    out: Dict[str, Tuple[Finding, int]] = {}
    for path, copy in copy_of.items():
        for finding in list(findings.get(path, [])) + list(added.get(path, [])):
            best, count = out.get(copy, (finding, 0))
            if (-finding.severity.rank, finding.sort_key()) < (-best.severity.rank, best.sort_key()):
                best = finding
            out[copy] = (best, count + 1)
    return out


REACHED_NOTE = "lowered one level: the project imports this module only from code with a fallback"
PLATFORM_CODE_NOTE = "lowered to info: in a function named for another platform, which runs there only (its XLA idioms)"
IMPORTED_FOR_PLATFORM_NOTE = (
    "lowered to info: the project imports this module only from another platform's code ({where}); it is"
    " no CUDA lock-in"
)
UNIMPORTED_PIN_NOTE = (
    "lowered to info: nothing in the project imports {name}; it is pinned as torch's own dependency (the GPU"
    " backend of torch.compile) and goes with the CUDA build of torch"
)
# Dependencies a CUDA build of torch brings itself: a pin of one that no module imports is part of torch's pin.
TORCH_DEPENDENCIES = frozenset({"triton", "pytorch-triton"})
BUILT_NOTE = (
    "lowered one level: the project builds this file only in code it reaches under a CUDA check or with a"
    " fallback; elsewhere its reference path runs"
)


TWIN_NOTE = (
    "lowered one level: the project builds this extension without CUDA too, and `{twin}` beside it implements the"
    " op for the CPU: on the target it runs on the host, and this kernel is its speed path"
)
# A C++ source that holds a CPU kernel: `nms_rotated_cpu.cpp`, `csrc/cpu/roi_align.cpp`.
_CPU_KERNEL = re.compile(r"(?:_cpu\.(?:cpp|cc|cxx)|/cpu/[^/]+\.(?:cpp|cc|cxx))$")
# How the CUDA source of an op is named beside its CPU twin: `nms_rotated_cuda.cu` / `nms_rotated_cpu.cpp`.
_CUDA_SOURCE_SUFFIXES = ("_cuda_kernel", "_cuda", "_gpu", "_kernel")
_CPP_SUFFIXES = ("cpp", "cc", "cxx")


def cpu_twinned(cuda: Sequence[str], cpp: Sequence[str], folders: Sequence[str]) -> Dict[str, str]:
    """The CUDA sources below one of `folders` (of build scripts that build their extension without CUDA too)
    with a CPU twin in the same folder (detectron2's `ROIAlign/ROIAlign_cuda.cu` beside `ROIAlign_cpu.cpp`;
    not `deformable/deform_conv_cuda.cu`, which has none), each with its twin's path."""
    sources = set(cpp)
    out: Dict[str, str] = {}
    for path in cuda:
        if not any(folder in ("", ".") or path.startswith(folder + "/") for folder in folders):
            continue
        head, _, name = path.rpartition("/")
        stem = name.rsplit(".", 1)[0]
        suffix = next((s for s in _CUDA_SOURCE_SUFFIXES if stem.endswith(s)), None)
        if suffix is None:
            continue
        base = f"{head}/{stem[: -len(suffix)]}_cpu" if head else f"{stem[: -len(suffix)]}_cpu"
        twin = next((f"{base}.{ext}" for ext in _CPP_SUFFIXES if f"{base}.{ext}" in sources), None)
        if twin is not None:
            out[path] = twin
    return out


WRAPPER_NOTE = (
    "lowered to info: inside a wrapper of the CUDA extension `{name}` (an autograd Function or op around"
    " it); the port replaces or re-targets the op as a whole, reported where the extension is built or imported"
)
LAUNCHER_NOTE = (
    "lowered to info: inside code that launches the Triton kernel `{name}` (its wrapper or module); the port"
    " replaces the kernel and what drives it as a whole, reported where the kernel is defined"
)


def extension_wrappers(summary: ModuleSummary, project: Project, resolved: Resolved) -> List[Tuple[int, int, str]]:
    """The lines of `summary`'s functions and classes that call an extension or launch a Triton kernel
    directly, outside CUDA checks (torch-ngp's `_near_far_from_aabb(Function)` around
    `_backend.near_far_from_aabb`, which moves its inputs with `.cuda()` first; GPTQ's `QuantLlamaMLP`,
    which launches `fusedmatmul_248_kernel[grid](...)` and moves its weights with `.cuda()` for it), and those
    that call such a wrapper of the same module (AutoGPTQ's Marlin `QuantLinear` around its `mul`), each with
    the note for the findings inside."""
    notes: Dict[str, str] = {}  # definition -> note
    pending = [d for d in summary.definitions if d.lines[0]]
    # the Triton launches outside CUDA checks, under any other condition too (unsloth's cross-entropy forward
    # launches one kernel or the chunked one by the vocabulary's size: either way it drives a kernel)
    launches = [(site.span[0], site.ref) for site in summary.sites if site.kind == "launch" and not site.guarded]
    while pending:
        waiting = []
        for definition in pending:
            note = _wrapper_note(definition, summary.module, project, resolved, notes) or _launcher_note(
                definition, summary.module, project, resolved, launches
            )
            if not note:
                waiting.append(definition)
                continue
            if not _model_code_calling_op(definition, summary, project, resolved, notes):
                notes[definition.name] = note
        if len(waiting) == len(pending):
            break
        pending = waiting
    return [(d.lines[0], d.lines[1], notes[d.name]) for d in summary.definitions if d.name in notes]


# Methods through which a class is the op itself: a module's `forward`, an autograd Function's passes.
_OP_METHODS = frozenset({"forward", "backward", "__call__", "apply", "symbolic"})


def _model_code_calling_op(
    definition: Definition, summary: ModuleSummary, project: Project, resolved: Resolved, wrappers: Mapping[str, str]
) -> bool:
    """A class that calls an extension or launches a kernel only in public methods other than the op's own
    (gaussian-splatting's `GaussianModel`, whose `create_from_pcd` calls `distCUDA2` once to initialise the
    model's scales among twenty lines that build its parameters on `"cuda"`): model code that calls an op, no
    wrapper of it. An autograd `Function` is the op as a whole, and so is a class that calls it in its
    `forward` (`__call__`, `backward`, ...) or in a private helper of those."""
    if definition.autograd or not definition.methods:
        return False
    first, last = definition.lines
    held: Set[str] = set()
    for site in summary.sites:
        if site.guarded or not first <= site.span[0] <= last:
            continue
        sym = project.reference(summary.module, site.ref)
        if sym is not None and _op_note(sym, site.ref, summary.module, project, resolved, wrappers):
            held.update(name for name, start, end in definition.methods if start <= site.span[0] <= end)
    return bool(held) and not any(n in _OP_METHODS or (n.startswith("_") and not n.startswith("__")) for n in held)


def _launcher_note(
    definition: Definition, module: str, project: Project, resolved: Resolved, launches: Sequence[Tuple[int, str]]
) -> str:
    """LAUNCHER_NOTE when `definition` launches a Triton kernel in its lines, under a condition or not."""
    first, last = definition.lines
    for line, ref in launches:
        if first <= line <= last and project.reference(module, ref) in resolved.kernels:
            return LAUNCHER_NOTE.format(name=ref.split(".", 1)[0])
    return ""


def _wrapper_note(
    definition: Definition, module: str, project: Project, resolved: Resolved, wrappers: Mapping[str, str]
) -> str:
    """The note for the findings inside `definition` when it calls an extension, launches a kernel or calls
    one of the module's `wrappers`; "" otherwise."""
    for use in definition.uses:
        if use.startswith("<"):
            continue
        sym = project.reference(module, use)
        note = _op_note(sym, use.split(".", 1)[0], module, project, resolved, wrappers) if sym is not None else ""
        if note:
            return note
    return ""


def _op_note(
    sym: Symbol, name: str, module: str, project: Project, resolved: Resolved, wrappers: Mapping[str, str]
) -> str:
    """The note for code that uses `sym` (spelt `name`) directly: a CUDA extension, a Triton kernel, or one of
    `module`'s `wrappers` of either; "" for anything else."""
    # a compiled `_C` may be plain C++ with CUDA beside it (pytorch3d's): only a CUDA one counts
    if sym in resolved.extensions and (sym[0] != "<ext>" or project.cuda_extension(sym[1])):
        return WRAPPER_NOTE.format(name=name)
    if sym in resolved.kernels:
        return LAUNCHER_NOTE.format(name=name)
    if sym[0] == module and sym[1] in wrappers:
        return wrappers[sym[1]]
    return ""


def platform_code(summary: ModuleSummary) -> List[Tuple[int, int, str]]:
    """The lines and names of `summary`'s functions and classes named for another platform (`patch_..._npu`)."""
    return [(d.lines[0], d.lines[1], d.name) for d in summary.definitions if d.lines[0] and _platform_name(d.name)]


def _in_wrappers(findings: List[Finding], spans: List[Tuple[int, int, str]]) -> List[Finding]:
    """`findings` inside an extension's wrappers or a kernel's launchers at `info` with their note, but for
    the kinds a wrapper keeps (`KERNEL_KEEPS`); how the wrapper would run on an XLA-like device is moot,
    since the port replaces it with the op (torchao's `as_strided` output buffers for a Triton launch). A
    CUDA check there that raises or asserts (`assert q.is_cuda` before MPT's Triton flash-attention launch) is
    the kernel's own precondition: not reported."""
    kept = [f for f in findings if not (REQUIREMENT_NOTE in f.note and any(a <= f.line <= b for a, b, _ in spans))]
    return _in_spans(kept, spans, keeps=KERNEL_KEEPS, drops=_COSTS_OF_RUNNING)


# Findings about how code behaves when it runs on an XLA-like device, not about what it is bound to.
_COSTS_OF_RUNNING = frozenset({"xla"})


def _in_spans(
    findings: Sequence[Finding],
    spans: Sequence[Tuple[int, int, str]],
    keeps: AbstractSet[str] = frozenset(),
    drops: AbstractSet[str] = frozenset(),
) -> List[Finding]:
    """`findings` inside one of `spans` at `info`, with that span's note (but for categories in `keeps`,
    and without those in `drops`); the others as they are. A finding at `info` only for its CUDA check takes the
    span's note too: that nothing runs or reads the code is the reason that holds (intent-aware-encoder's
    module-level `device = torch.device("cuda") if ... else ...` that nothing reads); other reasons for `info` (test
    code, a parameter never read) say more of the line and stay."""
    out = []
    for finding in findings:
        inside = next((note for a, b, note in spans if a <= finding.line <= b), None)
        if inside is not None and finding.category in drops:
            continue
        lowered = finding.severity is not Severity.INFO or finding.note in ("", UNDER_CHECK_NOTE)
        if inside is not None and finding.category not in keeps and lowered:
            finding = as_info([finding], inside)[0]
        out.append(finding)
    return out


def _on_platform_in(findings: List[Finding], spans: List[Tuple[int, int, str]], target: Target) -> List[Finding]:
    """`findings` outside `spans` (functions named for another platform) as they are; those inside as
    `on_other_platform` keeps that platform's code (XLA findings in an XLA-like platform's function only)."""
    out = []
    for finding in findings:
        span = next((name for a, b, name in spans if a <= finding.line <= b), None)
        if span is None:
            out.append(finding)
        else:
            out.extend(on_other_platform([finding], platform_named(span, PLATFORM_CODE_NOTE), target))
    return out


# Files with one requirement a line, the name first (`triton==2.0.0`, a conda export's `- triton==2.0.0`).
_PIN_KINDS = frozenset({"requirements", "conda"})
_PIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


# The module each NVML monitor's distribution installs (PKG012's requirement names): a pin of one that no
# module imports is a dependency of some other package, and no code of the project monitors a GPU with it.
MONITOR_MODULES = {
    "pynvml": "pynvml",
    "nvidia-ml-py": "pynvml",
    "nvidia-ml-py3": "pynvml",
    "py3nvml": "py3nvml",
    "gputil": "GPUtil",
    "nvitop": "nvitop",
    "gpustat": "gpustat",
}


def _pin_name(finding: Finding) -> str:
    """The normalized name of the pin a finding's line starts with (`triton==2.0.0`, a conda export's
    `- pynvml==11.5.0`); "" when the line starts with none."""
    written = _PIN_NAME.match(finding.source_line.lstrip("- "))
    return written.group(0).lower().replace("_", "-") if written else ""


def _monitor_import(finding: Finding) -> str:
    """The module a PKG012 finding's pin installs (`pynvml==11.5.0`); "" for any other finding."""
    return MONITOR_MODULES.get(_pin_name(finding), "") if finding.code == "PKG012" else ""


UNUSED_PIN_NOTE = (
    "lowered to info: no code, notebook, script or config of the project imports, launches or names {name}; the"
    " pin installs a package nothing here uses, and goes from the list rather than being ported"
)
# Files where a package in use is spelt: imported, launched (`deepspeed train.py`), configured (`--deepspeed`,
# `load_in_8bit: true`).
_CODE_KINDS = frozenset({"python", "notebook", "shell", "config", "dotenv"})
# Beside a package's names, what code spells where it uses the package only through another library's option
# (`load_in_8bit=True`, `attn_implementation="flash_attention_2"`, `optim="adamw_bnb_8bit"`).
_USED_AS = {
    "bitsandbytes": ("bnb", "8bit", "4bit"),
    "flash-attn": ("flash_attention",),
    "apex": ("fused_adam", "fusedadam", "fusedlayernorm"),
}


def _main_pins(result) -> bool:
    """A project's own dependency list: `requirements.txt` or a conda environment. Not a list named for a feature
    (gpt-neox's `requirements-onebitadam.txt` pins cupy for DeepSpeed's 1-bit Adam, which a config switches on and
    no code spells) or a raw freeze (`requirements_raw.txt`)."""
    return result.kind == "conda" or (
        result.kind == "requirements" and posixpath.basename(result.path.replace("\\", "/")) == "requirements.txt"
    )


def _code_texts(candidates) -> List[str]:
    """The lowered texts of the scan's files of `_CODE_KINDS` (one too large to read counts as empty)."""
    out: List[str] = []
    for candidate in candidates:
        if candidate.kind not in _CODE_KINDS:
            continue
        try:
            if candidate.path.stat().st_size <= MAX_BYTES:
                out.append(candidate.path.read_text(encoding="utf-8", errors="replace").lower())
        except OSError:
            continue
    return out


def _spelt_in(pin: str, texts: Sequence[str]) -> bool:
    """Whether any of `texts` spells the pinned package `pin` (normalized), by its name, its module's name, the
    first word of its name (`liger` of `liger-kernel`, which verl's `use_liger` switches on; `onnxruntime` of
    `onnxruntime-gpu`) or an option that uses it."""
    spellings = {pin, pin.replace("-", "_"), pin.split("-")[0], *_USED_AS.get(pin, ()), MONITOR_MODULES.get(pin, pin)}
    return any(spelling in text for text in texts for spelling in spellings)


def _torch_dependency(finding: Finding) -> str:
    """The name of the pin a package finding is on, when it is one of torch's own dependencies; "" otherwise."""
    if finding.category != "package":
        return ""
    name = _pin_name(finding)
    return name if name in TORCH_DEPENDENCIES else ""


def _reached_with_fallback(finding: Finding) -> Finding:
    """A kernel or kernel-library finding of a module the project imports only where it has another path
    (`from .triton_ops import dtw_kernel` in a function called in `try: ... except RuntimeError:`)."""
    if finding.category not in ("kernel", "package"):
        return finding
    return lower_finding(finding, REACHED_NOTE)


def _site_findings(path: str, found: List[ProjectSite], text: str, entries, target: Target, settings) -> List[Finding]:
    """The findings of the project rules (`entries`) at `found`, the sites in the file at `path`."""
    lines = python_lines(text)
    inside = project_path(path, settings.roots)
    test_file = is_test_path(inside)
    if test_file:
        # Sites in test code that only runs with CUDA are no lock-in of the code under test.
        tree = ast.parse(text)
        table = ImportTable.from_module(tree)
        spans = cuda_only_spans(tree, table, inside)
        only_cuda = names_used_only_with_cuda(tree, table)
        found = [
            s
            for s in found
            if not any(a <= s.span[0] <= b for a, b in spans)
            and not (s.kind == "import" and _imports_only(tree, s.span[0], only_cuda))
        ]
    out: List[Finding] = []
    # The first site of each name (its import, or the first call of a kernel the file defines) stands for it:
    # VILA's fp8 Qwen2 imports `fp8_silu_forward` and twenty other kernels in one statement and calls them in
    # fifty places; the statement is the finding, the calls point at it.
    first: Dict[str, int] = {}
    for site in sorted(found, key=lambda s: s.span):
        for name in site.binds or (_bound_name(site),):  # one import statement stands for all it binds
            first.setdefault(name, site.span[0])
    for entry in entries:
        severity = entry.rule.severity_for(target)
        if severity is Severity.OFF:
            continue
        for site in found:
            sev, note = (severity.lowered(), GUARD_NOTE) if site.guarded else (severity, "")
            if site.dual and not site.guarded:
                # detectron2's `_C`, copied into detection projects: `roi_align` and `nms_rotated` run on the host
                sev, note = severity.lowered(), DUAL_NOTE
            if test_file:
                sev, note = sev.lowered(), f"{note}; {TEST_NOTE}" if note else TEST_NOTE
            if site.kind == "import" and path.endswith("__init__.py") and site.label.startswith(site.module + "."):
                # VILA's `real_quantization/__init__.py`: `from .gelu_bwd import fp8_gelu_backward`, one per kernel
                sev, note = Severity.INFO, f"{note}; {REEXPORT_NOTE}" if note else REEXPORT_NOTE
            elif site.span[0] > first[_bound_name(site)]:
                repeat = REPEAT_NOTE.format(label=_bound_name(site), line=first[_bound_name(site)])
                sev, note = Severity.INFO, f"{note}; {repeat}" if note else repeat
            elif site.among_kernels:
                # fouroversix's `kernels/triton/quantize.py` imports the `@triton.jit` helpers of `fp4.py`: its own
                # kernels (KRN003, reported here) call them; the helpers are reported where they are defined
                sev, note = Severity.INFO, f"{note}; {KERNEL_IMPORT_NOTE}" if note else KERNEL_IMPORT_NOTE
            elif site.kind == "launch" and site.defined_here:
                # lmdeploy's `pagedattention.py` launches the kernels it defines: the definition (KRN003) is the
                # finding; its launcher is how it runs, replaced with it
                sev, note = Severity.INFO, f"{note}; {OWN_LAUNCH_NOTE}" if note else OWN_LAUNCH_NOTE
            line, col, end_line, end_col = site.span
            label = f"`{site.label}` ({site.kind}; {site.detail})" if site.detail else f"`{site.label}` ({site.kind})"
            out.append(
                Finding(
                    path=path,
                    line=line,
                    column=col,
                    end_line=end_line,
                    end_column=end_col,
                    code=entry.rule.code,
                    name=entry.rule.name,
                    category=entry.rule.category,
                    severity=sev,
                    message=entry.message.replace("{match}", label),
                    fixable=False,
                    fix_safety=entry.rule.fix_safety,
                    source_line=lines[line - 1].strip() if 0 < line <= len(lines) else "",
                    guarded=site.guarded,
                    note=note,
                )
            )
    ignored = per_file_ignored(path, settings)
    out = [f for f in out if not any(f.code.startswith(c.upper()) for c in ignored)]
    return apply_suppressions(out, lines)


def _bound_name(site: ProjectSite) -> str:
    """`alt_cuda_corr` for `alt_cuda_corr.forward(...)` and `import alt_cuda_corr`: the name a file binds,
    whatever it calls through it."""
    return site.name or site.label.split(".", 1)[0]


def _imports_only(tree: ast.Module, line: int, names: Set[str]) -> bool:
    """Whether the import statement at `line` binds only names among `names`."""
    for stmt in import_statements(tree):
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            bound = [a.asname or a.name.split(".", 1)[0] for a in stmt.names]
            return bool(bound) and all(b in names for b in bound)
    return False


_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:[\[<>=!~;@]|$)")


def _names_own(
    result: FileResult, source_line: str, files: AbstractSet[str], own: Project, copies: FrozenSet[str]
) -> bool:
    """Whether a line of a scanned file names the project's own package: an import in one of its modules or
    notebooks (TransformerEngine's docs notebooks import `transformer_engine`), or a requirement of it (an
    example's `requirements.txt` installing the project itself)."""
    if result.kind == "notebook" or (result.kind == "python" and result.path in files):
        return _imports_own(source_line, own, copies)
    if result.kind == "requirements":
        m = _REQUIREMENT_NAME.match(source_line)
        name = m.group(1).replace("-", "_").replace(".", "_") if m else ""
        found = own.find_module(name) if name else None
        return found is not None and found not in copies
    return False


def _imports_own(source_line: str, own: Project, copies: FrozenSet[str] = frozenset()) -> bool:
    """Whether an import line names one of the project's own modules (a package finding there is moot);
    a module of a copied project (`copies`, see portcheck.vendored) is not the project's own."""
    m = _IMPORT_LINE.match(source_line)
    if not m:
        return False
    name = m.group(1) if m.group(1) is not None else m.group(2)
    if name.startswith("."):
        return True  # relative imports are always the project's own
    found = own.find_module(name.split(".", 1)[0]) if name else None
    return found is not None and found not in copies
