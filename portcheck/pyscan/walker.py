"""One pass over a module's syntax tree, handing each node and its context to the matchers that want it.

The walk is iterative, so deeply nested code cannot exhaust the interpreter's recursion limit.
"""

from __future__ import annotations

import ast
import re
from types import MappingProxyType
from typing import (
    Callable,
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    Union,
    cast,
)

from portcheck.backends import DEVICE_TYPES, SEVERAL_BACKENDS
from portcheck.pyscan.context import (
    _SKIP_CALLS,
    ALTERNATIVE_NOTE,
    COPY_HINTS,
    CUDA_SIDE_ATTR,
    DEAD_ARM_ATTR,
    DEPLOYMENT_CODE_NOTE,
    DEVICE_LOOP_ATTR,
    DEVICE_LOOP_NOTE,
    GUARD_FLAG_ATTR,
    HOST_TENSOR_TYPES,
    LOAD_LOCATION_ATTR,
    MESSAGE_KEYWORDS,
    MODEL_PARALLEL_NOTE,
    NEEDED_AFTER_ATTR,
    NUMPY_RECEIVER_ATTR,
    OFF_SWITCH_ATTR,
    PREDICATE_NOTE,
    RAW_KERNEL_ATTR,
    REPLICATION_NOTE,
    SPEEDUP_FLAG_ATTR,
    UNREAD_DEVICE_ATTR,
    UNREAD_FLAG_ATTR,
    UNREAD_OPTION_ATTR,
    UNREAD_PARAMETER_NOTE,
    Ctx,
    and_terms,
    asks_complex,
    asks_float64,
    asks_for_accelerator_api,
    asks_model_parallel,
    asks_off_cuda,
    builds_cpp_otherwise,
    builds_value_only,
    catches_import_error,
    catches_runtime_error,
    choice_checks,
    default_after_privateuse1,
    defaulted_parameters,
    deployment_definition,
    dispatch_arms,
    flag_attribute,
    formatted_text,
    host_type_copy,
    in_units,
    is_availability_check,
    is_build_choice,
    is_built_once_class,
    is_copy_guard,
    is_copy_hint_assignment,
    is_cuda_check,
    is_cuda_precondition,
    is_cuda_requirement,
    is_cuda_state_check,
    is_dataset_class,
    is_debug_branch,
    is_device_exit,
    is_device_move_choice,
    is_device_passthrough,
    is_device_predicate,
    is_display_function,
    is_extension_build,
    is_flag_device_choice,
    is_graph_constant_patch,
    is_host_factory,
    is_host_value,
    is_implementation_choice,
    is_init_only,
    is_kernel_eligibility,
    is_load_location_choice,
    is_log_builder_call,
    is_message_call,
    is_model_parallel_method,
    is_negated_xla_option,
    is_negative_cuda_check,
    is_optional_library,
    is_other_accelerator_only,
    is_periodic,
    is_post_processing,
    is_precision_branch,
    is_precision_choice,
    is_precision_flag_assignment,
    is_probe_function,
    is_pure_guard,
    is_pure_guard_expression,
    is_replication_choice,
    is_rocm_check,
    is_runtime_provider_choice,
    is_single_iteration,
    is_source_selection,
    is_speedup_switch_assignment,
    is_stopping_criterion,
    is_switched_alternative,
    is_test_assertion_call,
    is_test_function,
    is_toolkit_build,
    is_xla_device_check,
    is_xla_probe,
    launches_raw_kernel,
    mark_call_arguments,
    mark_init_only_methods,
    mark_tested_references,
    names_cpu,
    names_speedup_switch,
    on_host_array,
    records_memory_figure,
    returns_usage_figure,
    runs_on_host_data,
    scaled_usage_figure,
    short_circuits_off_cuda,
    shown_names,
    shows_command_output,
    skips_without_cuda,
    torch_call_on_host,
    unread_locals,
    unread_parameters,
)
from portcheck.pyscan.fallbacks import continues, ends_the_run, imports_again
from portcheck.pyscan.imports import TRY_STATEMENTS, ImportTable, dotted, imported_modules, none_operand
from portcheck.pyscan.matchers import CallMatcher, Matcher, MethodMatcher, ReferenceMatcher, Reported
from portcheck.pyscan.matchers import Hit as HandlerHit
from portcheck.pyscan.nodes import walk as walk_nodes
from portcheck.pyscan.testcode import (
    CUDA_ONLY_ATTR,
    SELF_TEST_ATTR,
    early_cuda_exit,
    extends_cuda_only_library,
    names_cuda_skip,
)
from portcheck.torchfacts import RAISING_DEVICE_QUERIES

# A handler gets (node, parent, ctx, imports) and yields a matcher's hits (HandlerHit).
Handler = Callable[[ast.AST, Optional[ast.AST], Ctx, ImportTable], Iterator[HandlerHit]]
# A dispatcher gets the same arguments and yields (key, node, label, ctx) for every matcher that hit.
Hit = Tuple[object, Reported, str, Ctx]
Dispatch = Callable[[ast.AST, Optional[ast.AST], Ctx, ImportTable], Iterator[Hit]]

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_EXITS = (ast.Return, ast.Continue)
ROOT_CTX = Ctx()  # the default context at module level (immutable, so one instance serves every walk)


_JUMPS = (ast.Raise, ast.Return, ast.Continue, ast.Break)


def _attempt(body: Sequence[ast.AST]) -> bool:
    """A `try` body short enough to be one attempt with a fallback after it (`try: return dtw_cuda(x)`), not
    a whole job whose handler only reports the failure (TRELLIS's extraction loop under a bare `except:`)."""
    return len(body) <= 3 and not any(isinstance(s, _LOOPS) for s in body)


def _exit_test(stmt: ast.AST, exits, arms: bool = False) -> Optional[ast.expr]:
    """The test of an `if` whose body ends in one of `exits`, with no `elif`/`else` unless `arms`: what
    follows the statement runs only where the test is false."""
    if isinstance(stmt, ast.If) and stmt.body and isinstance(stmt.body[-1], exits) and (arms or not stmt.orelse):
        return stmt.test
    return None


def _parameters(args: ast.arguments, ctx: Ctx, unread: FrozenSet[str] = frozenset()) -> List[Tuple[ast.AST, Ctx]]:
    """A function's parameters and their defaults; a default given to a speed-up switch (`use_triton:
    bool = torch.cuda.is_available()`) turns that speed-up on, as the same value assigned to it does. The
    default of a parameter the function never reads (`unread`) picks nothing."""
    positional = [*args.posonlyargs, *args.args]
    out: List[Tuple[ast.AST, Ctx]] = [(a, ctx) for a in (*positional, *args.kwonlyargs, args.vararg, args.kwarg) if a]
    for a, d in defaulted_parameters(args):
        here = ctx._replace(speedup_test=True) if names_speedup_switch(a.arg) else ctx
        out.append((d, here._replace(info_note=UNREAD_PARAMETER_NOTE) if a.arg in unread else here))
    return out


# detectron2's `collect_env.py` (copied into many projects): `test_nccl_ops()` spawns `_test_nccl_worker`, which
# joins an NCCL group to check the GPUs talk; it runs when a person runs the report, and the product needs none of it
ENV_SELF_TEST_NOTE = (
    "lowered to info: a self-test of the environment report (a `test` function of a module that collects or"
    " shows environment information), run only when a person runs it; the product does not depend on it"
)
UNREAD_OPTION_NOTE = (
    "lowered to info: nothing in this module reads the option, and the parsed arguments stay in it, so its"
    " default picks nothing"
)
MESSAGE_CHECK_NOTE = "lowered to info: the check only decides which message is shown; nothing else depends on it"
BF16_ELSEWHERE_NOTE = (
    "lowered to info: without CUDA the check picks bf16, the precision Neuron and XLA devices train in; only"
    " CUDA's answer depends on the GPU"
)
UNREAD_LOCAL_NOTE = (
    "lowered to info: the function binds this value to a name it never reads, so it picks or loads nothing"
)
def _block(stmts: Sequence[ast.AST], ctx: Ctx, imports: ImportTable) -> List[Tuple[ast.AST, Ctx]]:
    """Statements of one block; after `if not torch.cuda.is_available(): return ...` the rest is CUDA-only
    code that has a non-CUDA alternative (the early return), so it counts as guarded. Statements after a
    `raise`, `return`, `continue` or `break` of the block never run and are not visited."""
    out: List[Tuple[ast.AST, Ctx]] = []
    for stmt in stmts:
        # (an import only CUDA-only tests use: `testcode.mark_cuda_only`)
        out.append((stmt, ctx._replace(skipped=True) if getattr(stmt, CUDA_ONLY_ATTR, False) else ctx))
        if isinstance(stmt, _JUMPS):
            break  # `raise NotImplementedError` then code left behind: nothing after it in the block runs
        if ctx.test_file and not ctx.skipped and early_cuda_exit(stmt, imports):
            # In a test, what follows `if not torch.cuda.is_available(): return` only runs with CUDA.
            ctx = ctx._replace(skipped=True)
        elif (test := _exit_test(stmt, _EXITS)) is not None and asks_for_accelerator_api(test, imports) is True:
            # `if compare_version("torch", operator.ge, "2.4.0"): return torch.amp.custom_fwd, ...` then
            # `return torch.cuda.amp.custom_fwd, ...` (Liger): what follows serves a torch older than the targets'
            ctx = ctx._replace(skipped=True)
        elif (
            not ctx.guarded
            and (test := _exit_test(stmt, _EXITS, arms=True)) is not None
            and is_negative_cuda_check(test, imports)
        ):
            # (also with `elif`/`else` arms, VAR's `if not torch.cuda.is_available(): ...; return` then
            # `elif 'RANK' not in os.environ:`: whatever the arms do, what follows runs only with CUDA)
            ctx = ctx._replace(guarded=True, pure_guard=True, flag="")
        elif (
            not ctx.cuda_required
            and (test := _exit_test(stmt, ast.Raise)) is not None
            and is_negative_cuda_check(test, imports)
        ):
            # `if not torch.cuda.is_available(): raise RuntimeError(...)` (theseus's cusolver solve): what
            # follows runs only with CUDA, with no alternative; the check states the requirement
            ctx = ctx._replace(cuda_required=True)
    return out


# Fields that never lead to code worth visiting (`Load`/`Store` markers, type comments).
_SKIP_FIELDS = frozenset({"ctx", "type_comment", "type_ignores"})


def _node_classes() -> Iterator[type]:
    stack = [ast.AST]
    while stack:
        cls = stack.pop()
        yield cls
        stack.extend(cls.__subclasses__())


# Node class -> the fields to visit, computed once for every node class this Python has.
_FIELDS: Mapping[type, Tuple[str, ...]] = MappingProxyType(
    {cls: tuple(f for f in getattr(cls, "_fields", ()) if f not in _SKIP_FIELDS) for cls in _node_classes()}
)
_SPECIAL = (
    (
        ast.Expr,
        ast.If,
        ast.IfExp,
        ast.Module,
        ast.Call,
        ast.Raise,
        ast.Return,
        ast.Assert,
        ast.arg,
        ast.AnnAssign,
        ast.Assign,
        ast.ClassDef,
        ast.FormattedValue,
        ast.BoolOp,
        ast.Compare,
        ast.BinOp,
        ast.Subscript,
        ast.List,
        ast.Tuple,
        ast.Dict,
        ast.With,
    )
    + _LOOPS
    + _COMPS
    + _FUNCS
    + TRY_STATEMENTS
)
_SPECIAL_TYPES = frozenset(_SPECIAL)
# A printf conversion that formats a number for reading: `%.3g`, `%5.1f`, `%e`.
_PRINTF_NUMBER = re.compile(r"%[-+ #0]*\d*(?:\.\d+[a-zA-Z]|[eEfFgG])")
# `def _save_tpu(self, ...)`: a method for the TPU path of its class.
_TPU_NAME = re.compile(r"(?i)(?:^|_)tpu(?:_|$)")
# `class DistributedXLAEngine(Engine)`, `class TPUAccelerator`: a class named for XLA or TPUs is that path.
# A word of a CUDA-only library or kernel, in the name of an availability probe (`is_triton_available`) or of the
# class whose `is_available` it is (fouroversix's `TritonQuantizeBackend.is_available`).
_CUDA_LIBRARY_WORD = re.compile(
    r"(?i)triton|flash|xformers|apex|bnb|bitsandbytes|deepspeed|cutlass|kernel|extension|cupy|tensorrt|liger"
    r"|mamba|vllm|flashinfer"
)
LIBRARY_PROBE_ATTR = "_portcheck_library_probe"  # on an `is_available` method of a class named for such a library
LIBRARY_PROBE_NOTE = (
    "lowered to info: in `{name}`, the availability probe of a CUDA-only library or kernel: it answers no where"
    " CUDA is not, and callers take another path; the library is reported where it is used"
)
_XLA_CLASS_NAME = re.compile(r"(?:^|[a-z_])(?:XLA|TPU)(?:[A-Z_]|$)")

_LEAVES = frozenset({ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.alias, ast.Global, ast.Nonlocal})


def live_children(node: ast.AST) -> List[ast.AST]:
    """`ast.iter_child_nodes` as a list, minus the context markers every Name and Attribute carries and the
    statements of a block after its first `raise`/`return`/`continue`/`break` (`reached_statements`)."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        fields = tuple(f for f in node._fields if f not in _SKIP_FIELDS)
    out: List[ast.AST] = []
    for field in fields:
        value = getattr(node, field, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in (reached_statements(value) if field in _BLOCKS else value) if isinstance(v, ast.AST))
    return out


_BLOCKS = frozenset({"body", "orelse", "finalbody"})


def reached_statements(stmts: Sequence[ast.AST]) -> Sequence[ast.AST]:
    """The statements of a block up to its first `raise`/`return`/`continue`/`break`: the rest never runs
    (`try: raise Exception()` then the code left behind it, muse-maskgit's `attend.py`)."""
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, _JUMPS):
            return stmts[: i + 1]
    return stmts


def _is_type_test(node: ast.Call) -> bool:
    return (
        isinstance(node.func, ast.Name)
        and node.func.id in ("isinstance", "issubclass")
        and len(node.args) == 2
        and not node.keywords
    )


_RESTATED_ATTR = "_portcheck_restated"  # set on the `elif` that restates, negated, the requirement of its `if`


def _children(
    node: ast.AST, ctx: Ctx, imports: ImportTable, torch_host: bool = False
) -> List[Tuple[ast.AST, Ctx]]:
    if isinstance(node, ast.BoolOp):
        mark_tested_references(node)
    elif isinstance(node, ast.Expr) and getattr(node.value, UNREAD_OPTION_ATTR, False):
        return [(node.value, ctx._replace(info_note=UNREAD_OPTION_NOTE))]  # `parser.add_argument("--device", ...)`
    elif isinstance(node, ast.Call) and node.args:
        mark_call_arguments(node)
    if not isinstance(node, _SPECIAL):
        return [(c, ctx) for c in live_children(node)]
    if (
        isinstance(node, ast.Expr)
        and isinstance(node.value, (ast.Constant, ast.JoinedStr))
        and isinstance(getattr(node.value, "value", ""), str)
    ):
        return []  # docstrings and bare strings are prose
    if (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and (imports.resolved(node.value.func) or "") in CUDA_QUERIES
    ):
        # `torch.cuda.is_available()` alone on a line (a notebook cell's last line shows it): asked, not used
        return [(node.value, ctx._replace(display=True))]
    if isinstance(node, ast.Expr) and shows_command_output(node.value, imports):
        # `os.system("nvidia-smi")` after `logger.info("nvidia-smi")` (SlowFast's `log_model_info`): the
        # status goes to the console, and the result is dropped; elsewhere the shell prints an error
        return [(node.value, ctx._replace(display=True))]
    if isinstance(node, ast.If) and asks_model_parallel(node.test) and not ctx.info_note:
        # `if self.model_parallel: hidden_states = hidden_states.to(self.first_device)`: only after `parallelize()`
        parallel = ctx._replace(info_note=MODEL_PARALLEL_NOTE)
        return [(node.test, ctx)] + _block(node.body, parallel, imports) + _block(node.orelse, ctx, imports)
    if isinstance(node, ast.If) and (dotted(node.test) or "").rsplit(".", 1)[-1] == "TYPE_CHECKING":
        # `if TYPE_CHECKING: from vllm import RequestOutput`: imports for the type checker, never run
        typing_only = ctx._replace(annotation=True)
        return [(node.test, ctx)] + _block(node.body, typing_only, imports) + _block(node.orelse, ctx, imports)
    if isinstance(node, ast.If) and (dead := getattr(node, DEAD_ARM_ATTR, "")):
        # `args.latgpu = False` just before `elif args.latgpu: model.cuda()`: that arm never runs; the other always
        never = ctx._replace(skipped=True)
        body, orelse = (never, ctx) if dead == "body" else (ctx, never)
        return [(node.test, ctx)] + _block(node.body, body, imports) + _block(node.orelse, orelse, imports)
    if (
        isinstance(node, ast.If)
        and ctx.test_file
        and isinstance(node.test, ast.UnaryOp)
        and isinstance(node.test.op, ast.Not)
        and names_cuda_skip(node.test.operand)
    ):
        # `if not SKIP_CUDA_TESTS: init()` (aihwkit's tests): the body runs only where CUDA's tests do
        only_cuda = ctx._replace(skipped=True)
        return [(node.test, ctx)] + _block(node.body, only_cuda, imports) + _block(node.orelse, ctx, imports)
    if isinstance(node, (ast.If, ast.IfExp)):
        test_ctx = ctx
        # (`if CUDA_HOME: modules.append(CUDAExtension(...))` beside an unconditional CppExtension: the toolkit
        # check picks the CUDA build where nvcc is, as a CUDA check would)
        cuda = is_cuda_check(node.test, imports) or is_toolkit_build(node, imports)
        positive = cuda and not is_negative_cuda_check(node.test, imports)  # true where CUDA is there
        # The CUDA side of the check is guarded: the body of `if use_cuda:` (with or without `else`: elsewhere
        # the code skips it or takes the other branch), the `else` of `if not use_cuda:`. The other side is
        # the path every other device runs (an `elif is_xla_installed():` arm included), not guarded.
        flag = flag_attribute(node.test, imports) if cuda else ""
        cuda_branch = ctx._replace(guarded=True, tried=False, flag=flag)
        body_branch = cuda_branch if positive else ctx
        else_branch = cuda_branch if cuda and not positive else ctx
        if isinstance(node, ast.IfExp) and ast.dump(node.body) == ast.dump(node.orelse):
            test_ctx = ctx._replace(guard_test=True)  # `'cpu' if torch.cuda.is_available() else 'cpu'`: no choice
        if is_flag_device_choice(node):
            body_branch = else_branch = ctx  # `"cuda" if args.cuda else "cpu"`: a choice, not a guard
        elif is_pure_guard(node, imports) if isinstance(node, ast.If) else is_pure_guard_expression(node, imports):
            # The check guards CUDA-only (or display-only) code: not itself a fallback, and the code it
            # guards cannot raise where CUDA is absent.
            body_branch = else_branch = ctx._replace(guarded=True, pure_guard=True, tried=False, flag=flag)
            test_ctx = ctx._replace(guard_test=True)
        elif (ctx.in_test or ctx.test_file) and cuda:
            test_ctx = ctx._replace(guard_test=True)  # a test choosing what to test, not a device fallback
        elif is_replication_choice(node):
            test_ctx = ctx._replace(lowered_by=REPLICATION_NOTE)  # `if device_count() > 1: DataParallel(model)`
            if not cuda:
                # `elif n_gpu > 1:` with `n_gpu = torch.cuda.device_count()` (ERNIE): more than one CUDA device,
                # as the count itself in the test would say; elsewhere the wrap is skipped
                body_branch = cuda_branch
        elif (
            is_kernel_eligibility(node, imports)
            or is_device_exit(node, imports)
            or is_cuda_precondition(node, imports)
            or is_extension_build(node, imports)
            or is_source_selection(node, imports)
            or is_device_move_choice(node, imports)
            or is_copy_guard(node)
            or is_load_location_choice(node, imports)
            or is_optional_library(node, imports)
            or is_implementation_choice(node, imports)
            or is_runtime_provider_choice(node, imports)
            or is_cuda_state_check(node, imports)
            or is_graph_constant_patch(node)
            or is_device_passthrough(node, imports)
        ):
            test_ctx = ctx._replace(guard_test=True)  # a kernel for CUDA tensors, the reference path elsewhere
        elif is_precision_choice(node.test, imports) or is_precision_branch(node):
            test_ctx = ctx._replace(precision_test=True)  # picks a precision, not a device
            if _bf16_without_cuda(node.test, imports):
                test_ctx = test_ctx._replace(info_note=BF16_ELSEWHERE_NOTE)
        elif is_build_choice(node, imports):
            # with a CPU build on the other side, the check is no device fallback (`guard_test`) either
            test_ctx = ctx._replace(build_test=True, guard_test=builds_cpp_otherwise(node))
        elif is_cuda_requirement(node, imports):
            test_ctx = ctx._replace(requirement_test=True)  # raises without CUDA: a requirement, stated
            if positive and isinstance(node, ast.If) and _raises_new_error(node):
                # `if torch.cuda.is_available(): device = torch.device("cuda:0") else: raise RuntimeError(...)`
                # (MONAI's tutorials): the CUDA side is the only one that goes on, no guarded path (not an error
                # handler's `if 'CUDA out of memory' in str(e): ... else: raise`, s3prl's runner)
                body_branch = ctx
            if isinstance(node, ast.If) and len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                setattr(node.orelse[0], _RESTATED_ATTR, True)
        if getattr(node, _RESTATED_ATTR, False) and is_negative_cuda_check(node.test, imports):
            # `elif one.is_cuda == False: raise NotImplementedError()` after `if one.is_cuda == True:`: the same
            # requirement, reported at the `if` above
            test_ctx = ctx._replace(guard_test=True)
        cuda_side: Optional[str] = None
        old_torch = asks_for_accelerator_api(node.test, imports)
        if old_torch is not None:
            # `torch.accelerator...type if hasattr(torch, "accelerator") else "cuda"`: the other branch
            # only runs on a torch too old for the device-generic API.
            cuda_side = "orelse" if old_torch else "body"
        elif ctx.test_file and cuda:
            # Test code under `if torch.cuda.is_available():` tests the CUDA path where it exists.
            cuda_side = "body" if positive else "orelse"
        if isinstance(node, ast.If) and not cuda and not body_branch.lowered_by and is_switched_alternative(node):
            body_branch = body_branch._replace(lowered_by=ALTERNATIVE_NOTE)
        if is_availability_check(node.test):
            body_branch = body_branch._replace(optional_import=True)
            else_branch = else_branch._replace(optional_import=True)
        xla_only = is_xla_device_check(node.test) or is_xla_probe(node.test)
        # `dispatch_arms` runs on every `if`: the first of a chain records the answer for the `elif`s below it.
        if isinstance(node, ast.If) and dispatch_arms(node, imports) and positive:
            # The CUDA arm of a dispatch over accelerators (`elif torch.cuda.is_available(): return
            # torch.device("cuda")` between the NPU and XPU arms) is CUDA's own path: its check is no CPU
            # fallback and what it runs is no lock-in.
            test_ctx = test_ctx._replace(guard_test=True)
            cuda_side = "body"
        if isinstance(node, ast.If) and default_after_privateuse1(node):
            cuda_side = "orelse"  # the default arm after a PrivateUse1 arm: CUDA's own, as a dispatch's CUDA arm
        if ctx.loop is not None and not ctx.periodic and isinstance(node, ast.If) and is_periodic(node.test, ctx.loop):
            body_branch = body_branch._replace(periodic=True)  # the `else` runs in the other k - 1 iterations
        elif isinstance(node, ast.If) and ends_the_run(node.body) and not cuda:
            # `if not math.isfinite(loss.item()): print(f"Loss is {loss.item()}"); sys.exit(1)`: the error path
            body_branch = body_branch._replace(error_path=True)
        elif isinstance(node, ast.If) and is_debug_branch(node.test, imports):
            # `if torch.is_anomaly_enabled():`, `if os.environ.get("X_DEBUG") == "1":`: debugging runs only
            body_branch = body_branch._replace(periodic=True, debug=True)
        if isinstance(node, ast.If):
            body_branch = body_branch._replace(switches=body_branch.switches + (node.test,))
            if not node.orelse and _only_messages(node.body) and not cuda and not _asks_raising(node.test, imports):
                # `if torch.cuda.is_bf16_supported(): print("... try --bf16")`: the test only picks a hint to show
                # (not `if torch.cuda.get_device_capability(0)[0] < 7: print(...)`, which raises without CUDA)
                test_ctx = test_ctx._replace(display=True)
            elif not node.orelse and _only_messages(node.body) and _raising_behind_check(node.test, imports):
                # `if self.cuda and torch.cuda.get_device_capability(0)[0] >= 7: print("| NOTICE: ... faster
                # training with --fp16")` (fairseq's trainer, copied widely): asked only where CUDA is, for a hint
                test_ctx = test_ctx._replace(info_note=MESSAGE_CHECK_NOTE)
        # `if i == 0:` in `for i in ...`: its body runs in one iteration (the `else` in all the others).
        once = ctx.loop is not None and isinstance(node, ast.If) and is_single_iteration(node.test, ctx.loop)
        if _never_true(node.test):
            # `if torch.cuda.is_available() and False:`: switched off in the code; the body never runs
            cuda_side, test_ctx = "body", test_ctx._replace(guard_test=True)
        elif _asks_scripting(node.test, imports) or _asks_onnx_export(node.test, imports):
            # `if torch.jit.is_scripting(): ... else: return x.nonzero(as_tuple=True)` (detectron2's `nonzero_tuple`):
            # the TorchScript side, which an eager run on any device never takes; so is fairseq's `if
            # self.onnx_trace:` (copied with fairseq's modules everywhere), the side an ONNX export traces
            cuda_side = "orelse" if isinstance(node.test, ast.UnaryOp) else "body"
        body_ctx = body_branch._replace(skipped=True) if cuda_side == "body" else body_branch
        self_test = getattr(node, SELF_TEST_ATTR, "")
        if self_test:
            # the module's self-test (`if __name__ == "__main__":` checking its own definitions): test code,
            # and code that only runs with CUDA when the module cannot be imported without it
            body_ctx = body_ctx._replace(test_file=True, skipped=body_ctx.skipped or self_test == "cuda")
        if isinstance(node, ast.If) and _ends_unsupported(node.body):
            body_ctx = body_ctx._replace(info_note=UNSUPPORTED_NOTE)
        elif isinstance(node, ast.If) and _asks_python_float(node.test) and len(node.body) <= 2:
            body_ctx = body_ctx._replace(info_note=PYTHON_FLOAT_NOTE)
        if once:
            body_ctx = body_ctx._replace(periodic=True)
        elif ctx.loop is not None and isinstance(node, ast.If) and is_single_iteration(node.test, ctx.loop, other=True):
            # `if step != 0: ... else:` (Specialist-Diffusion's content loss): the `else` runs in one iteration
            else_branch = else_branch._replace(periodic=True)
        if xla_only:
            body_ctx = body_ctx._replace(xla_branch=True)
        elif isinstance(node, ast.If) and (is_rocm_check(node.test) or is_other_accelerator_only(node.test)):
            # `if SYSTEM == "rocm": torch.cuda.tunable.enable()` (text-generation-inference): HIP's calls, on AMD;
            # `if is_npu_available(): freqs = freqs.to(torch.complex64)` (FlashI2V): Ascend's
            body_ctx = body_ctx._replace(skipped=True)
        complex_side = asks_complex(node.test)
        if complex_side is True:
            body_ctx = body_ctx._replace(complex_branch=True)
        else_ctx = else_branch._replace(skipped=True) if cuda_side == "orelse" else else_branch
        if is_negated_xla_option(node.test):
            else_ctx = else_ctx._replace(xla_branch=True)
        if complex_side is False:
            else_ctx = else_ctx._replace(complex_branch=True)
        float64_side = asks_float64(node.test)
        if float64_side is not None:
            # `elif terms.dtype is torch.float64: nonnan = (...).double()` (pyro): the input is float64 already
            if float64_side:
                body_ctx = body_ctx._replace(float64_branch=True)
            else:
                else_ctx = else_ctx._replace(float64_branch=True)
        if isinstance(node, ast.IfExp):
            return [(node.test, test_ctx), (node.body, body_ctx), (node.orelse, else_ctx)]
        return [(node.test, test_ctx)] + _block(node.body, body_ctx, imports) + _block(node.orelse, else_ctx, imports)
    if isinstance(node, _LOOPS):
        # a loop inside a periodic branch (`if step % k == 0: for name, p in model.named_parameters(): ...`)
        # runs once every k steps of the outer loop too
        inner = ctx._replace(in_loop=True, loop=node, periodic=ctx.periodic)
        head = [node.test] if isinstance(node, ast.While) else [node.target, node.iter]
        # `for i in range(torch.cuda.device_count()): writer.add_scalar(..., torch.cuda.memory_cached(i) / 1024**3)`
        # (deeplab-pytorch): what such a loop goes over only picks figures to show
        # (or binds only what it shows: `props = torch.cuda.get_device_properties(i)`, then `logger.info(...)` of
        # `props.name`; ml-fs-dfm's `log_devices`)
        shows = isinstance(node, ast.For) and _only_shows(node.body, ctx.scope)
        head_ctx = ctx._replace(display=True) if shows else ctx
        if getattr(node, DEVICE_LOOP_ATTR, False):
            inner = inner._replace(lowered_by=DEVICE_LOOP_NOTE)  # once per CUDA device: never without CUDA
        return [(c, head_ctx) for c in head] + _block(node.body, inner, imports) + [(c, ctx) for c in node.orelse]
    if isinstance(node, _COMPS):
        inner = ctx._replace(in_loop=True, loop=node, periodic=ctx.periodic)
        if getattr(node, DEVICE_LOOP_ATTR, False):
            # `[torch.cuda.get_device_capability(i) for i in range(max_gpus)]`: the count itself as it is
            over = node.generators[0].iter
            each = inner._replace(lowered_by=DEVICE_LOOP_NOTE)
            return [(c, inner if c is over else each) for c in live_children(node) if c is not node.generators[0]] + [
                (c, inner if c is over else each) for c in live_children(node.generators[0])
            ]
        return [(c, inner) for c in live_children(node)]
    if isinstance(node, ast.ClassDef):
        if skips_without_cuda(node, imports) or getattr(node, CUDA_ONLY_ATTR, False):
            ctx = ctx._replace(skipped=True)
        elif extends_cuda_only_library(node, imports):
            ctx = ctx._replace(skipped=True)  # a bitsandbytes optimizer's subclass: that library's code
        ctx = ctx._replace(built_once=is_built_once_class(node))
        mark_init_only_methods(node)
        if is_dataset_class(node):
            ctx = ctx._replace(host=True)  # a Dataset's methods run in the data loader, on host tensors
        if getattr(node, RAW_KERNEL_ATTR, ""):
            # the autograd Function around a CuPy kernel, a flash-attention class
            ctx = ctx._replace(kernel_driver=getattr(node, RAW_KERNEL_ATTR))
        if _XLA_CLASS_NAME.search(node.name):
            ctx = ctx._replace(xla_branch=True)  # catalyst's `DistributedXLAEngine`: the XLA path of a choice
        if deployment_definition(node) and not ctx.info_note:
            # CosyVoice's `TrtContextWrapper`: its CUDA streams and default device are TensorRT's workings
            ctx = ctx._replace(info_note=DEPLOYMENT_CODE_NOTE.format(name=node.name))
        if is_post_processing(node):
            ctx = ctx._replace(evaluation=True)
        if is_stopping_criterion(node):
            ctx = ctx._replace(stop_decision=True)
        if _CUDA_LIBRARY_WORD.search(node.name):
            for item in node.body:
                if isinstance(item, _FUNCS) and is_probe_function(item):
                    setattr(item, LIBRARY_PROBE_ATTR, f"{node.name}.{item.name}")
        return [(c, ctx) for c in live_children(node)]
    if isinstance(node, _FUNCS):
        inner = ctx._replace(
            in_loop=False, loop=None, periodic=False, in_function=True, in_init=is_init_only(node)
        )
        if skips_without_cuda(node, imports) or getattr(node, CUDA_ONLY_ATTR, False):
            inner = inner._replace(skipped=True)
        elif getattr(node, CUDA_SIDE_ATTR, False):
            inner = inner._replace(guarded=True, flag="")  # used only on the CUDA side of checks
        elif _overrides_cuda_method(node):
            # `def cuda(self, device=None):` (Lightning's device mixin): what a module does when its caller asks
            # for CUDA; the callers are the lock-in, reported where they call it
            inner = inner._replace(skipped=True)
        if getattr(node, RAW_KERNEL_ATTR, ""):
            # launches a CuPy kernel, runs only with flash-attn, or a helper of either
            inner = inner._replace(kernel_driver=getattr(node, RAW_KERNEL_ATTR))
        if not isinstance(node, ast.Lambda):
            inner = inner._replace(scope=node, switches=ctx.switches + (node,))
            if deployment_definition(node) and not inner.info_note:
                inner = inner._replace(info_note=DEPLOYMENT_CODE_NOTE.format(name=node.name))
            elif is_model_parallel_method(node) and not inner.info_note:
                inner = inner._replace(info_note=MODEL_PARALLEL_NOTE)
        if is_test_function(node):
            inner = inner._replace(in_test=True)
            if ctx.display and not ctx.test_file:
                inner = inner._replace(info_note=ENV_SELF_TEST_NOTE)
        if is_display_function(node):
            inner = inner._replace(display=True)
        if is_probe_function(node):
            inner = inner._replace(probe=True)
            name = getattr(node, "name", "")
            asked = getattr(node, LIBRARY_PROBE_ATTR, "") or (name if _CUDA_LIBRARY_WORD.search(name) else "")
            if asked and not inner.info_note:
                # `def is_flash_attn_available(): return torch.cuda.is_available() and ...`: a question of the library
                inner = inner._replace(info_note=LIBRARY_PROBE_NOTE.format(name=asked))
        if runs_on_host_data(node):
            inner = inner._replace(host=True)  # a data loader's collate function works on host tensors
        if is_post_processing(node):
            inner = inner._replace(evaluation=True)
        if not isinstance(node, ast.Lambda) and is_device_predicate(node):
            inner = inner._replace(lowered_by=PREDICATE_NOTE)  # the callers decide what the answer changes
        if _TPU_NAME.search(getattr(node, "name", "")):
            inner = inner._replace(xla_branch=True)  # `def _save_tpu(self, ...)`: the TPU path of its class
        # a test that only runs with CUDA (`@pytest.mark.gpu def test_x(device="cuda")`) uses its defaults only there
        defaults = ctx._replace(skipped=True) if inner.skipped and not ctx.skipped else ctx
        outer = [(c, ctx) for c in getattr(node, "decorator_list", [])] + _parameters(
            node.args, defaults, unread_parameters(node)
        )
        returns = getattr(node, "returns", None)
        if returns is not None:
            outer.append((returns, ctx._replace(annotation=True)))
        if isinstance(node, ast.Lambda):
            return outer + [(node.body, inner)]
        return outer + _block(node.body, inner, imports)
    if isinstance(node, ast.arg):
        return [(node.annotation, ctx._replace(annotation=True))] if node.annotation is not None else []
    if isinstance(node, ast.Assign):
        if ctx.test_file and all(isinstance(t, ast.Attribute) and t.attr in _MOCK_VALUES for t in node.targets):
            # `get_backend_mock.return_value = dist.Backend.NCCL`: what a test's mock hands back
            mocked: List[Tuple[ast.AST, Ctx]] = [(t, ctx) for t in node.targets]
            return mocked + [(node.value, ctx._replace(test_assert=True))]
        target = node.targets[0]
        if (
            len(node.targets) == 1
            and isinstance(target, ast.Name)
            and ctx.scope is not None
            and not getattr(node, GUARD_FLAG_ATTR, False)  # a skip's condition is no message (below)
            and target.id in shown_names(ctx.scope)
        ):
            # `peak = torch.cuda.max_memory_allocated()`, then only `print(f"{peak / 2**30:.1f} GB")`: shown.
            return [(target, ctx), (node.value, ctx._replace(display=True))]
        if (
            len(node.targets) == 1
            and isinstance(target, ast.Name)
            and ctx.scope is not None
            and target.id in unread_locals(ctx.scope)
            and not getattr(node, UNREAD_FLAG_ATTR, False)  # a flag's own note says more (below)
            and builds_value_only(node.value)
        ):
            # `quant_config = BitsAndBytesConfig(load_in_4bit=True)` that the function never hands on
            return [(target, ctx), (node.value, ctx._replace(info_note=UNREAD_LOCAL_NOTE))]
        # `os.environ["CUDA_VISIBLE_DEVICES"] = ""`: the key's matchers may ask what it is set to.
        given: List[Tuple[ast.AST, Ctx]] = [(t, ctx._replace(assigned=node.value)) for t in node.targets]
        if getattr(node, GUARD_FLAG_ATTR, False):
            # `use_cuda = torch.cuda.is_available()`, read only by `if use_cuda: torch.cuda.synchronize()`
            return given + [(node.value, ctx._replace(guard_test=True))]
        if is_speedup_switch_assignment(node, imports):
            # `use_cuda_kernel = default(use_cuda_kernel, torch.cuda.is_available())`: picks a kernel, not a device
            return given + [(node.value, ctx._replace(speedup_test=True))]
        if getattr(node, UNREAD_FLAG_ATTR, False):
            # `self.sync_cuda = th.cuda.is_available()` that nothing reads: it picks nothing yet
            return given + [(node.value, ctx._replace(info_note=UNREAD_FLAG_NOTE))]
        if getattr(node, UNREAD_DEVICE_ATTR, False):
            # `self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")` that nothing reads
            return given + [(node.value, ctx._replace(info_note=UNREAD_DEVICE_NOTE))]
        if isinstance(node.value, ast.Tuple) and any(
            getattr(e, GUARD_FLAG_ATTR, False) or getattr(e, UNREAD_FLAG_ATTR, False) for e in node.value.elts
        ):
            # `_, heads, is_cuda = *q.shape, q.is_cuda`, the flag read only by such checks, or by nothing
            # (MEGABYTE-pytorch's `Attend.flash_attn`)
            return given + [
                (
                    e,
                    ctx._replace(guard_test=True)
                    if getattr(e, GUARD_FLAG_ATTR, False)
                    else ctx._replace(info_note=UNREAD_FLAG_NOTE)
                    if getattr(e, UNREAD_FLAG_ATTR, False)
                    else ctx,
                )
                for e in node.value.elts
            ]
        if getattr(node, SPEEDUP_FLAG_ATTR, False):
            # `use_fused = fused_available and device_type == "cuda"`, read only as `fused=use_fused`
            return given + [(node.value, ctx._replace(speedup_test=True))]
        if is_copy_hint_assignment(node, imports):
            # `self.pin_memory = loader.pin_memory and torch.cuda.is_available()`: a copy hint
            return given + [(node.value, ctx._replace(guard_test=True))]
        if is_precision_flag_assignment(node):
            # `opt.half = torch.cuda.is_available() and opt.device != "cpu"`: a precision, not a device
            return given + [(node.value, ctx._replace(precision_test=True))]
        if records_memory_figure(node):
            # `results["mem_gb"] = torch.cuda.max_memory_allocated() / 2**30`: a figure kept for the results log
            return given + [(node.value, ctx._replace(display=True))]
        return given + [(node.value, ctx)]
    if isinstance(node, ast.AnnAssign):
        out: List[Tuple[ast.AST, Ctx]] = [(node.target, ctx), (node.annotation, ctx._replace(annotation=True))]
        if getattr(node, UNREAD_FLAG_ATTR, False):
            ctx = ctx._replace(info_note=UNREAD_FLAG_NOTE)  # `cuda_available: bool = ...` nothing reads
        return out + ([(node.value, ctx)] if node.value is not None else [])
    if isinstance(node, ast.Module):
        return _block(node.body, ctx._replace(scope=node), imports)
    if TRY_STATEMENTS and isinstance(node, TRY_STATEMENTS):
        body_ctx = else_ctx = ctx
        if (
            _attempt(node.body)
            and not getattr(node, NEEDED_AFTER_ATTR, False)
            and any(catches_runtime_error(h) and continues(h) and not imports_again(node, h) for h in node.handlers)
        ):
            # `try: return dtw_cuda(x) except RuntimeError: warnings.warn(...)` then the CPU path: what the
            # `try` runs has a fallback where it fails, as under a CUDA check with an `else`.
            body_ctx = ctx._replace(optional_import=True, guarded=True, tried=True)
        elif any(catches_import_error(h) and continues(h) and not imports_again(node, h) for h in node.handlers):
            body_ctx = ctx._replace(optional_import=True)
            if any(m.split(".", 1)[0] == "torch_xla" for m in imported_modules(node.body)):
                # `try: import torch_xla.core.xla_model as xm` / `except ImportError: pass` / `else:
                # xm.set_rng_state(seed)`: the `else` is the XLA path, taken only where torch_xla is installed
                else_ctx = ctx._replace(xla_branch=True)
        error_path = ctx._replace(error_path=True)  # a handler runs when something failed, not every step
        return (
            [(c, body_ctx) for c in reached_statements(node.body)]
            + [(h, error_path) for h in node.handlers]
            + [(c, else_ctx) for c in reached_statements(node.orelse)]
            + [(c, ctx) for c in reached_statements(node.finalbody)]
        )
    if isinstance(node, ast.BinOp) and scaled_usage_figure(node):
        # `mem.update(torch.cuda.max_memory_allocated() // 1e9)` (omnivore's meter), `max_memory =
        # torch.cuda.max_memory_allocated(gpu) / 2 ** 20`: a memory figure scaled to units is for people
        return [(node.left, ctx._replace(display=True)), (node.right, ctx)]
    probe = none_operand(node) if isinstance(node, ast.Compare) else None
    if (
        isinstance(probe, ast.Call)
        and isinstance(probe.func, ast.Name)
        and probe.func.id == "getattr"
        and len(probe.args) >= 2
    ):
        # `getattr(torch.cuda.amp, "autocast") is not None`: a feature probe, as `hasattr(...)` is
        probed: List[Tuple[ast.AST, Ctx]] = [(probe.func, ctx), (probe.args[0], ctx._replace(guard_test=True))]
        return probed + [(c, ctx) for c in probe.args[1:]]
    if isinstance(node, ast.Call):
        if torch_host:
            # `torch.inverse(M)` of a host tensor (`walk` asked): the function runs on the host (its arguments
            # are what they are)
            return [(node.func, ctx._replace(host=True))] + [(c, ctx) for c in node.args] + [
                (k, ctx) for k in node.keywords
            ]
        if host_type_copy(node, imports):
            # `x.data.type(torch.DoubleTensor).cpu().numpy()` (EMNLP21_SemEq's `tensor_to_numpy`): a legacy CPU type
            # makes a host copy in that type, wherever `x` is; the type names no device dtype
            return [(node.func, ctx), (node.args[0], ctx._replace(host=True))]
        if isinstance(node.func, ast.Name) and node.func.id == "hasattr" and len(node.args) == 2:
            # `hasattr(torch.cuda.amp, "autocast")`: the object is asked whether it has a name, like a guard's
            # test asks whether CUDA is there; nothing of it runs.
            return [(node.func, ctx), (node.args[0], ctx._replace(guard_test=True)), (node.args[1], ctx)]
        if isinstance(node.func, ast.Name) and node.func.id == "round" and len(node.args) == 2:
            # `round(torch.cuda.max_memory_reserved() / 1024**3, 3)`: a number rounded to digits for people.
            return [(node.func, ctx), (node.args[0], ctx._replace(display=True)), (node.args[1], ctx)]
        if getattr(node, CUDA_ONLY_ATTR, False) or launches_raw_kernel(node):
            # `pytest.param(torch.device("cuda"), marks=RunIf(min_cuda_gpus=1))`: a case that only runs with CUDA;
            # `fn(args=[x.data_ptr(), ...], block=(256, 1, 1), grid=(n, 1, 1))`: a compiled CUDA kernel's launch
            # (cupy, PyCUDA), whose arguments are its workings; the kernel is reported where it is built.
            only_cuda = ctx._replace(skipped=True)
            return [(node.func, ctx)] + [(c, only_cuda) for c in node.args] + [(k, only_cuda) for k in node.keywords]
        if _is_type_test(node):
            # `isinstance(model, (DDP, nn.DataParallel))`: the classes are asked about, not used.
            return [(node.func, ctx), (node.args[0], ctx), (node.args[1], ctx._replace(compared=True))]
        for k in node.keywords:
            if k.arg == "map_location" and isinstance(k.value, ast.IfExp):
                setattr(k.value, LOAD_LOCATION_ATTR, True)  # read by `is_load_location_choice` when it is walked
        if ctx.in_test and is_test_assertion_call(node):
            checked = ctx._replace(test_assert=True)
            return [(node.func, ctx)] + [(c, checked) for c in node.args] + [(k, checked) for k in node.keywords]
        if ctx.test_file and _is_mock_call(node):
            # `patch("torch.distributed.get_backend", return_value=dist.Backend.NCCL)` (pytorch/tnt's tests): what a
            # mock hands back is made-up data, as a test's expected values are
            faked = ctx._replace(test_assert=True)
            return [(node.func, ctx)] + [(c, ctx) for c in node.args] + [
                (k, faked if k.arg in _MOCK_VALUES else ctx) for k in node.keywords
            ]
        if is_message_call(node):
            msg = ctx._replace(message=True)
            if isinstance(node.func, ast.Attribute) and node.func.attr in _SKIP_CALLS:
                msg = msg._replace(guard_test=True)  # `skipIf(not torch.cuda.is_available(), ...)`
            return [(node.func, ctx)] + [(c, msg) for c in node.args] + [(k, msg) for k in node.keywords]
        if formatted_text(node):
            # `" | allocated: {}".format(torch.cuda.memory_allocated() / mega_bytes)` (Megatron's `report_memory`):
            # a figure scaled to units and put into a sentence for people, as an f-string's would be
            shown = ctx._replace(display=True)
            return (
                [(node.func, ctx)]
                + [(c, shown if in_units(c) else ctx) for c in node.args]
                + [(k, shown if in_units(k.value) else ctx) for k in node.keywords]
            )
        if is_log_builder_call(node):
            shown = ctx._replace(display=True)  # `get_train_logs(..., torch.cuda.max_memory_allocated(), ...)`
            return [(node.func, ctx)] + [(c, shown) for c in node.args] + [(k, shown) for k in node.keywords]
        if (imports.resolved(node.func) or "") in HOST_TENSOR_TYPES:
            # `torch.DoubleTensor([flops])`: a legacy CPU tensor type builds a host tensor (a FLOP count).
            on_host = ctx._replace(host=True)
            return [(node.func, on_host)] + [(c, ctx) for c in node.args] + [(k, ctx) for k in node.keywords]
        if (imports.resolved(node.func) or "").startswith("numpy."):
            # `np.median(mask.nonzero(), axis=1)`: what numpy takes is a host array.
            on_host = ctx._replace(host=True)
            return [(node.func, ctx)] + [(c, on_host) for c in node.args] + [(k, on_host) for k in node.keywords]
        host = is_host_factory(node, imports) if any(k.arg == "dtype" for k in node.keywords) else False
        # `x.cpu().to(dtype=torch.float64)`, `scores.cpu().to(torch.float64)`: a cast of a host tensor stays there
        # (asked only when the cast names a dtype: nothing else of the call is marked)
        cast_on_host = (
            isinstance(node.func, ast.Attribute)
            and node.func.attr in ("to", "type")
            and (any(k.arg == "dtype" for k in node.keywords) or any(_names_dtype(a) for a in node.args))
            and is_host_value(node.func.value, ctx.scope, imports)
        )
        host = host or cast_on_host
        return (
            [(node.func, ctx)]
            + [(c, ctx._replace(host=True) if cast_on_host and _names_dtype(c) else ctx) for c in node.args]
            + [
                (
                    k,
                    ctx._replace(message=True)
                    if k.arg in MESSAGE_KEYWORDS
                    else ctx._replace(host=True)
                    if host and k.arg == "dtype"
                    else ctx._replace(guard_test=True)
                    if k.arg in COPY_HINTS
                    else ctx._replace(speedup_test=True)
                    if names_speedup_switch(k.arg)
                    else ctx,
                )
                for k in node.keywords
            ]
        )
    if isinstance(node, ast.Compare):
        # `dtype in [torch.float16, torch.float64]`: the list is looked into, nothing in it is made.
        if any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            looked_up = ctx._replace(compared=True)
            left: List[Tuple[ast.AST, Ctx]] = [(node.left, ctx)]
            return left + [
                (c, looked_up if isinstance(c, (ast.List, ast.Tuple, ast.Set)) else ctx) for c in node.comparators
            ]
        return [(c, ctx) for c in live_children(node)]
    if isinstance(node, ast.With) and any(
        isinstance(i.context_expr, ast.Call)
        and imports.resolved(i.context_expr.func) == "torch.device"
        and names_cpu(i.context_expr)
        for i in node.items
    ):
        # `with torch.device("cpu"): freqs = torch.arange(0, d, 2, dtype=torch.float64)` (diffusers' rotary
        # tables): the block's tensors are made on the host
        on_host = ctx._replace(host=True)
        return [(i, ctx) for i in node.items] + [(c, on_host) for c in reached_statements(node.body)]
    if isinstance(node, ast.Dict) and _pins_cpu(node):
        # `tkwargs = {"device": torch.device("cpu"), "dtype": torch.double}` (botorch's tutorials): the
        # factory arguments of host tensors
        return [(c, ctx._replace(host=True)) for c in live_children(node)]
    if isinstance(node, ast.Dict) and any(_labelled_version(k, v) for k, v in zip(node.keys, node.values)):
        # `{'torch.version.cuda': torch.version.cuda, 'torch.cuda.nccl.version()': torch.cuda.nccl.version()}`
        # (tab-ddpm's run report): a version put under a label, recorded for people, never compared
        labels: List[Tuple[ast.AST, Ctx]] = [(k, ctx) for k in node.keys if k is not None]
        return labels + [
            (v, ctx._replace(display=True) if _labelled_version(k, v) else ctx) for k, v in zip(node.keys, node.values)
        ]
    if isinstance(node, ast.Dict) and _backend_table(node):
        # `{"cuda": torch.cuda.reset_peak_memory_stats, "xpu": ..., "mps": None, "neuron": None}` (diffusers'
        # `BACKEND_*` tables): a dispatch over accelerators; CUDA's entry is CUDA's own arm
        own = ctx._replace(skipped=True)
        keys: List[Tuple[ast.AST, Ctx]] = [(k, ctx) for k in node.keys if k is not None]
        return keys + [
            (v, own if isinstance(k, ast.Constant) and k.value == "cuda" else ctx)
            for k, v in zip(node.keys, node.values)
        ]
    if ctx.test_file and isinstance(node, (ast.List, ast.Tuple)) and len(node.elts) > 1 and _test_data(node, imports):
        # `key_list = [torch.device("cuda:13"), torch.device("cuda:0")]` (captum's test of a sort by device
        # index), `["params.yaml", "--device", "cuda:1"]` (speechbrain's test of its command line): a test's
        # input data; building a `torch.device` or parsing an option touches no device
        return [(e, ctx._replace(test_assert=True)) for e in node.elts]
    if isinstance(node, ast.BoolOp) and _never_true(node):
        # `use_cuda = torch.cuda.is_available() and False` (deepvoice3's tests): switched off in the code;
        # nothing in it decides anything
        return [(v, ctx._replace(skipped=True)) for v in node.values]
    if isinstance(node, ast.BoolOp):
        # `args.device == "cuda" and not torch.cuda.is_available()`: validates the user's choice.
        asked = choice_checks(node, imports)
        if asked:
            question = ctx._replace(guard_test=True)
            return [(v, question if any(v is a for a in asked) else ctx) for v in node.values]
        # `torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8`, `not
        # torch.cuda.is_available() or torch.cuda.is_bf16_supported()`: what comes after the check is
        # evaluated only where CUDA is (the check itself is reported as it is).
        terms: List[Tuple[ast.AST, Ctx]] = []
        current = ctx
        for value in node.values:
            terms.append((value, current))
            if current is ctx and short_circuits_off_cuda(node.op, value, imports):
                current = ctx._replace(guarded=True, flag="")
            elif isinstance(node.op, ast.And) and is_xla_probe(value):
                # `SETTINGS.xla_required and os.environ.get(xenv.TORCH_DIST_ROOT)`: evaluated with torch_xla only
                current = current._replace(xla_branch=True)
        return terms
    if isinstance(node, ast.Subscript):
        # `IndexType = Union[slice, torch.LongTensor, torch.cuda.LongTensor]`: a type for the type checker
        # (mmpose's alias); nothing in it is made
        if (imports.resolve(node.value) or "").startswith(("typing.", "typing_extensions.")):
            return [(node.value, ctx), (node.slice, ctx._replace(annotation=True))]
        return [(c, ctx) for c in live_children(node)]
    if isinstance(node, ast.BinOp):
        # `"%.3gG" % (torch.cuda.memory_reserved() / 1e9)`: a number formatted for people, like an f-string's
        # `{...:.3g}` (a `"cuda:%d" % rank` builds a device and is no display).
        operand = node.left
        if (
            isinstance(node.op, ast.Mod)
            and isinstance(operand, ast.Constant)
            and isinstance(operand.value, str)
            and _PRINTF_NUMBER.search(operand.value)
        ):
            return [(operand, ctx), (node.right, ctx._replace(display=True))]
        return [(operand, ctx), (node.right, ctx)]
    if isinstance(node, ast.FormattedValue) and (node.format_spec is not None or in_units(node.value)):
        # `f"{torch.cuda.memory_reserved() / 1e9:.3g}G"`, `f"{torch.cuda.memory_allocated() // 1024**2} MiB"`:
        # a number formatted (or scaled to units) for people to read.
        shown = ctx._replace(display=True)
        parts: List[Tuple[ast.AST, Ctx]] = [(node.value, shown)]
        return parts + ([(node.format_spec, ctx)] if node.format_spec is not None else [])
    if isinstance(node, ast.Return) and node.value is not None and returns_usage_figure(node, ctx.scope):
        # `return torch.cuda.max_memory_allocated() / 1024 ** 2` (pycls's `gpu_mem_usage`): a figure in MB, for a log
        return [(node.value, ctx._replace(display=True))]
    if isinstance(node, ast.Raise):
        msg = ctx._replace(message=True)
        return [(c, msg) for c in live_children(node)]
    if isinstance(node, ast.Assert):
        if ctx.in_test:
            test_ctx = ctx._replace(test_assert=True)
        elif ctx.guarded and not (ctx.pure_guard or ctx.tried) and is_cuda_check(node.test, imports):
            # `if mat.is_cuda: assert rows.is_cuda and cols.is_cuda` (MinkowskiEngine): the assert runs only on the
            # CUDA side of a check, where CUDA is; it checks the inputs agree, it requires nothing elsewhere
            test_ctx = ctx._replace(guard_test=True)
        elif is_cuda_requirement(node, imports):
            test_ctx = ctx._replace(requirement_test=True)
        elif is_cuda_check(node.test, imports) and asks_off_cuda(node.test, imports):
            # `assert not index.is_cuda and not value.is_cuda` before `scipy.sparse.coo_matrix(...)` (torch_sparse):
            # it asks for host tensors, which needs no CUDA; it passes wherever CUDA is absent
            test_ctx = ctx._replace(guard_test=True)
        else:
            test_ctx = ctx
        out = [(node.test, test_ctx)]
        if node.msg is not None:
            out.append((node.msg, ctx._replace(message=True)))
        return out
    return [(c, ctx) for c in live_children(node)]


# What a bare expression statement may ask without using CUDA: its answer is shown, or dropped.
CUDA_QUERIES = frozenset(
    {"torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.get_device_name", "torch.cuda.is_bf16_supported"}
)


def _labelled_version(key: Optional[ast.AST], value: ast.AST) -> bool:
    """`'cudnn': torch.backends.cudnn.version()`, `"cuda_version": torch.version.cuda`: a dict entry with a text
    label whose value is a version read (a `version()` call, or an attribute of a `version` namespace)."""
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
        return False
    if isinstance(value, ast.Call) and not value.args and not value.keywords:
        return isinstance(value.func, ast.Attribute) and value.func.attr == "version"
    return isinstance(value, ast.Attribute) and isinstance(value.value, ast.Attribute) and value.value.attr == "version"


def _pins_cpu(node: ast.Dict) -> bool:
    """A literal of tensor-factory arguments whose `"device"` is the CPU."""
    return any(
        isinstance(k, ast.Constant) and k.value == "device" and names_cpu(v) for k, v in zip(node.keys, node.values)
    )


def _backend_table(node: ast.Dict) -> bool:
    """A literal keyed by device types, `"cuda"` and several others (`"xpu"`, `"mps"`, `"neuron"`)."""
    keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return "cuda" in keys and len(keys & DEVICE_TYPES) >= SEVERAL_BACKENDS


def _test_data(node: Union[ast.List, ast.Tuple], imports: ImportTable) -> bool:
    """A literal of `torch.device(...)` objects only, or a command line (strings only, one an option)."""
    if all(isinstance(e, ast.Call) and imports.resolved(e.func) == "torch.device" for e in node.elts):
        return True
    strings = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return len(strings) == len(node.elts) and any(s.startswith("--") for s in strings)


def _run(entries: Sequence[Tuple[object, Handler]], node, parent, ctx, imports) -> Iterator[Hit]:
    for key, handler in entries:
        for hit in handler(node, parent, ctx, imports):
            yield key, hit[0], hit[1], (hit[2] if len(hit) > 2 else ctx)


def _position(node: object) -> Tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _dispatcher(keyed: Sequence[Tuple[object, Matcher]]) -> Dispatch:
    """One function for every matcher that wants a node type. Matchers of the common kinds share the
    work that decides most nodes at once: a reference whose chain does not start at an import, a call
    whose callee resolves to nothing any call rule names, a method nobody asks about."""
    refs = [(k, m.handler()) for k, m in keyed if isinstance(m, ReferenceMatcher)]
    calls_exact: Dict[str, List[Tuple[object, Handler]]] = {}
    calls_wild: List[Tuple[object, Handler]] = []
    methods: Dict[str, List[Tuple[object, Handler]]] = {}
    rest: List[Tuple[object, Handler]] = []
    for key, matcher in keyed:
        if isinstance(matcher, ReferenceMatcher):
            continue
        if isinstance(matcher, CallMatcher):
            for name in matcher.names.exact:
                calls_exact.setdefault(name, []).append((key, matcher.handler()))
            if matcher.names.prefixes:
                calls_wild.append((key, matcher.handler()))
        elif isinstance(matcher, MethodMatcher):
            for name in matcher.names:
                methods.setdefault(name, []).append((key, matcher.handler()))
        else:
            rest.append((key, matcher.handler()))
    # what a resolved callee runs: its own call matchers, then the prefix ones (which run for every callee)
    calls_of = {name: (*entries, *calls_wild) for name, entries in calls_exact.items()}
    wild_only = tuple(calls_wild)

    def dispatch(node, parent, ctx, imports) -> Iterator[Hit]:
        if refs and not (type(parent) is ast.Attribute and parent.value is node):
            root, held = node, False
            while type(root) is ast.Attribute:
                root = root.value
                held = held or (type(root) is ast.Attribute and root.attr == "torch")
            if type(root) is ast.Name and (root.id in imports.aliases or held):
                yield from _run(refs, node, parent, ctx, imports)
        if calls_of or wild_only:
            name = imports.resolved(node.func)
            entries = calls_of.get(name, wild_only) if name is not None else ()
            if entries:
                # One hit per rule and call, its first in the source: `load(..., sources=[..."k.cu"],
                # extra_cuda_cflags=[...])` matched by its sources and by its flags is one extension build
                # (DECA's renderer), reported at its sources.
                first: Dict[object, Hit] = {}
                for hit in _run(entries, node, parent, ctx, imports):
                    earlier = first.get(hit[0])
                    if earlier is None or _position(hit[1]) < _position(earlier[1]):
                        first[hit[0]] = hit
                yield from first.values()
        if methods:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in methods:
                yield from _run(methods[func.attr], node, parent, ctx, imports)
        if rest:
            yield from _run(rest, node, parent, ctx, imports)

    return dispatch


def _overrides_cuda_method(node: ast.AST) -> bool:
    """A method named `cuda` (its first parameter `self`): an override of `Module.cuda()` / `Tensor.cuda()`."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != "cuda":
        return False
    params = node.args.posonlyargs + node.args.args
    return bool(params) and params[0].arg == "self"


# Calls that make a mock (`unittest.mock.patch`, `patch.object`, `MagicMock`), and their keywords that say
# what it hands back.
_MOCK_CALLS = frozenset({"patch", "object", "Mock", "MagicMock", "AsyncMock", "NonCallableMock", "create_autospec"})
_MOCK_VALUES = frozenset({"return_value", "side_effect", "new", "new_callable"})


# The dtypes a cast names (`x.to(torch.float64)`): its other arguments (a device) are not host data.
_DTYPE_NAMES = frozenset(
    {"float64", "double", "float32", "float", "float16", "half", "bfloat16"}
    | {"complex64", "complex128", "cfloat", "cdouble"}
)


def _names_dtype(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in _DTYPE_NAMES and isinstance(node.value, ast.Name)


def _is_mock_call(node: ast.Call) -> bool:
    name = dotted(node.func) or ""
    last = name.rsplit(".", 1)[-1]
    return last in _MOCK_CALLS and (last != "object" or name.endswith("patch.object"))


UNREAD_FLAG_NOTE = (
    "lowered to info: nothing in this module reads the flag the check sets, so it picks no device here;"
    " code elsewhere that reads it (an instance's flag) would fall back to the CPU"
)
UNREAD_DEVICE_NOTE = (
    "lowered to info: nothing in this module reads the device this picks, so nothing runs on it here;"
    " code elsewhere that reads the instance's attribute would fall back to the CPU"
)
UNSUPPORTED_NOTE = (
    "lowered to info: the branch ends in `raise NotImplementedError`; the code does not support this path,"
    " so there is nothing to port in it"
)


PYTHON_FLOAT_NOTE = (
    "lowered to info: the branch only runs for a Python float (`isinstance(..., float)`), turned into a"
    " one-element tensor; callers that pass tensors never take it"
)


def _asks_python_float(test: ast.AST) -> bool:
    """`isinstance(timestep, float)`: diffusers' UNets pick float64 for a Python float timestep there."""
    return (
        isinstance(test, ast.Call)
        and _is_type_test(test)
        and cast(ast.Name, test.func).id == "isinstance"
        and isinstance(test.args[1], ast.Name)
        and test.args[1].id == "float"
    )


def _asks_scripting(test: ast.AST, imports: ImportTable) -> bool:
    """`torch.jit.is_scripting()` or `not torch.jit.is_scripting()`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return isinstance(test, ast.Call) and imports.resolved(test.func) == "torch.jit.is_scripting"


def _asks_onnx_export(test: ast.AST, imports: ImportTable) -> bool:
    """`self.onnx_trace`, `onnx_trace`, `torch.onnx.is_in_onnx_export()`, or their negation: whether the code is
    being traced for an ONNX export."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.Call):
        return imports.resolved(test.func) == "torch.onnx.is_in_onnx_export"
    return (isinstance(test, ast.Attribute) and test.attr == "onnx_trace") or (
        isinstance(test, ast.Name) and test.id == "onnx_trace"
    )


def _never_true(test: ast.AST) -> bool:
    """`False` (GVHMR's `if False:  # wis3d` debug block), `x and False`, `False and x`, or a name the module only
    ever sets to `False` (`parallel = False`, then `if parallel:`): a condition switched off in the code itself."""
    if isinstance(test, ast.Name) and getattr(test, OFF_SWITCH_ATTR, False):
        return True
    if isinstance(test, ast.Constant) and test.value in (False, 0, None):
        return True
    return (
        isinstance(test, ast.BoolOp)
        and isinstance(test.op, ast.And)
        and any(isinstance(v, ast.Constant) and v.value is False for v in test.values)
    )


def _ends_unsupported(body: List[ast.stmt]) -> bool:
    """A block whose last statement raises `NotImplementedError`: whatever runs before it leads nowhere."""
    last = body[-1] if body else None
    if not isinstance(last, ast.Raise) or last.exc is None:
        return False
    exc = last.exc.func if isinstance(last.exc, ast.Call) else last.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError" and len(body) > 1


def build_dispatch(keyed: Iterable[Tuple[object, Matcher]]) -> Dict[Type[ast.AST], Dispatch]:
    """Node type -> the dispatcher for every (key, matcher) that wants that type."""
    by_type: Dict[Type[ast.AST], List[Tuple[object, Matcher]]] = {}
    for key, matcher in keyed:
        for node_type in matcher.node_types:
            by_type.setdefault(node_type, []).append((key, matcher))
    return {node_type: _dispatcher(entries) for node_type, entries in by_type.items()}


def walk(
    module: ast.Module,
    imports: ImportTable,
    dispatch: Dict[Type[ast.AST], Dispatch],
    root: Ctx = ROOT_CTX,
) -> Iterator[Hit]:
    """Yield (key, node, label, ctx) for every matcher hit, in source order of discovery."""
    stack: List[Tuple[ast.AST, Optional[ast.AST], Ctx]] = [(module, None, root)]
    pop = stack.pop
    push = stack.extend
    fields_of = _FIELDS
    special = _SPECIAL_TYPES
    leaves = _LEAVES
    AST = ast.AST
    while stack:
        node, parent, ctx = pop()
        kind = type(node)
        here = ctx
        torch_host = False  # a torch function of a host tensor: its name's reference is host code too
        if kind is ast.Call and not ctx.host:
            call = cast(ast.Call, node)
            torch_host = torch_call_on_host(call, ctx.scope, imports)
            if (
                torch_host
                or (type(call.func) is ast.Attribute and on_host_array(call, ctx.scope, imports))
                or getattr(call, NUMPY_RECEIVER_ATTR, False)
            ):
                # `durations[durations.nonzero()]` on a numpy array, `x.cpu().unique()`, `torch.inverse(M)` of
                # a host tensor: this call runs on the host; what its receiver computes before the copy does not
                here = ctx._replace(host=True)
        wanted = dispatch.get(kind)
        if wanted is not None:
            yield from wanted(node, parent, here, imports)
        if kind in leaves:
            continue
        if kind in special:
            kids = _children(node, ctx, imports, torch_host)
            if kids:
                push([(child, node, cctx) for child, cctx in reversed(kids)])
            continue
        # The common case, inlined: plain children in source order, same context.
        fields = fields_of.get(kind)
        if fields is None:
            fields = tuple(f for f in node._fields if f not in _SKIP_FIELDS)
        found: List[Tuple[ast.AST, Optional[ast.AST], Ctx]] = []
        for field in fields:
            value = getattr(node, field, None)
            if isinstance(value, AST):
                found.append((value, node, ctx))
            elif isinstance(value, list):
                block = reached_statements(value) if field in _BLOCKS else value  # `with ...: return x` then dead code
                found.extend((v, node, ctx) for v in block if isinstance(v, AST))
        if found:
            found.reverse()
            push(found)


def _asks_raising(test: ast.AST, imports: ImportTable) -> bool:
    """Whether `test` calls a question about the current CUDA device that raises where there is none."""
    return any(
        isinstance(n, ast.Call) and imports.resolved(n.func) in RAISING_DEVICE_QUERIES for n in walk_nodes(test)
    )


def _bf16_without_cuda(test: ast.AST, imports: ImportTable) -> bool:
    """`not torch.cuda.is_available() or torch.cuda.is_bf16_supported()` (lit_gpt's
    `get_default_supported_precision`, copied into TinyLlama's descendants): bf16 wherever CUDA is not."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or)):
        return False
    absent = any(
        isinstance(t, ast.UnaryOp)
        and isinstance(t.op, ast.Not)
        and isinstance(t.operand, ast.Call)
        and imports.resolved(t.operand.func) == "torch.cuda.is_available"
        for t in test.values
    )
    asks = any(
        isinstance(t, ast.Call) and (imports.resolved(t.func) or "").endswith("is_bf16_supported") for t in test.values
    )
    return absent and asks



def _raising_behind_check(test: ast.AST, imports: ImportTable) -> bool:
    """`self.cuda and torch.cuda.get_device_capability(0)[0] >= 7`: a question that raises without CUDA, asked
    only after a CUDA check in the same `and` (none before it)."""
    terms = and_terms(test)
    checked = next(
        (i for i, t in enumerate(terms) if is_cuda_check(t, imports) and not _asks_raising(t, imports)), None
    )
    if checked is None or any(_asks_raising(t, imports) for t in terms[:checked]):
        return False
    return any(_asks_raising(t, imports) for t in terms[checked + 1 :])


def _only_shows(stmts: Sequence[ast.AST], scope: Optional[ast.AST] = None) -> bool:
    """Whether `stmts` only print, log or record figures for people (`writer.add_scalar(...)`), binding at most
    names the scope only shows (`shown_names`)."""
    bound = {
        id(st): st.targets[0].id
        for st in stmts
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
    }
    calls = [st for st in stmts if id(st) not in bound]
    if not _only_calls(calls, lambda call: is_message_call(call) or is_log_builder_call(call)):
        return False
    # (the scope's shown names, a walk of the whole scope, only asked of a loop that binds names)
    return not bound or (scope is not None and set(bound.values()) <= shown_names(scope))


def _raises_new_error(node: ast.If) -> bool:
    """`else: raise RuntimeError(...)`: the `else` ends by raising an error of its own, not re-raising one."""
    last = node.orelse[-1] if node.orelse else None
    return isinstance(last, ast.Raise) and last.exc is not None


def _only_messages(stmts: Sequence[ast.AST]) -> bool:
    """Whether `stmts` only print or log (`print("=" * 80)`, `logger.info(...)`)."""
    return _only_calls(stmts, is_message_call)


def _only_calls(stmts: Sequence[ast.AST], wanted: Callable[[ast.Call], bool]) -> bool:
    """Whether `stmts` are calls, each one `wanted` accepts."""
    return bool(stmts) and all(
        isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and wanted(st.value) for st in stmts
    )
