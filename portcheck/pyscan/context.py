"""What the walker knows about where a node sits: in a loop, under a CUDA guard, inside a message."""

from __future__ import annotations

import ast
import copy
import re
from collections import Counter
from functools import lru_cache
from typing import (
    AbstractSet,
    Callable,
    Dict,
    FrozenSet,
    Iterator,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    Union,
    cast,
)

from portcheck.backends import (
    SEVERAL_BACKENDS,
    device_generic,
    device_type_of,
    is_deployment_name,
    name_words,
    probed_backend,
)
from portcheck.pyscan.environ import variable_read
from portcheck.pyscan.fallbacks import continues, ends_the_run
from portcheck.pyscan.feeds import SCOPES as _SCOPE_STOPS
from portcheck.pyscan.feeds import own_nodes
from portcheck.pyscan.imports import ImportTable, dotted, import_statements, imported_modules, none_operand
from portcheck.pyscan.nodes import children, module_nodes, walk
from portcheck.torchfacts import AVAILABILITY_CALLS, CUDA_CHECK_ATTRIBUTES, CUDA_CHECK_CALLS, EXTENSION_LOADERS

# Callees whose string arguments are messages for people, never device strings.
_MESSAGE_FUNCS = frozenset(
    {
        "print",
        "warn",
        "warning",
        "info",
        "debug",
        "error",
        "exception",
        "critical",
        "log",
        "fatal",
        "echo",
        "secho",
        "write",
    }
)
_LOGGER_HINTS = ("log", "logger", "logging", "warnings", "click", "sys.stdout", "sys.stderr", "console", "rich", "tqdm")
# Keyword arguments that hold prose (argparse help, pytest skip reasons, descriptions).
MESSAGE_KEYWORDS = frozenset(
    {"help", "msg", "message", "description", "reason", "epilog", "usage", "doc", "docstring", "metavar"}
)
# Test decorators whose positional strings are reasons, not code.
_SKIP_CALLS = frozenset({"skipIf", "skipUnless", "skip", "skipif", "xfail"})
# Names a program uses for "are we on CUDA?" flags (`if args.cuda:`, `if use_cuda:`, `if self.use_gpu:`): in
# PyTorch code a GPU flag asks for CUDA, the one GPU backend the code was written for. A bare `gpu` is
# not one: `args.gpu` is a device index (`if args.gpu is not None: model.cuda(args.gpu)`, else `model.cuda()`).
_CUDA_FLAG = re.compile(
    r"^(?:(?:use|no|has|is|on|with|run_on|using)_?)?cuda$|^(?:use|no|has|is|on|with|run_on|using)_?gpu$"
    r"|^(?:is_)?(?:cuda|gpu)_?(?:available|enabled)$",
    re.IGNORECASE,
)
# A function whose name asks whether CUDA is in use (`is_gpu_device()`, `is_cuda()`, `has_gpu()`, `gpu_enabled()`).
_CUDA_QUESTION = re.compile(
    r"^_?(?:is|has|use|using|on|with|run_on)_?(?:cuda|gpu)(?:_?(?:device|available|enabled|mode|backend))?$"
    r"|^_?(?:cuda|gpu)_?(?:available|enabled|is_available)$"
)
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"})
# What makes a loop run a model step once per iteration (training, evaluation, decoding, rollout):
# a training step, a no-grad block, a model called by a model-like name, or a data loader iterated.
_STEP_CALLS = frozenset({"eval_step", "evaluation_step"})  # and what a training step calls (_TRAIN_CALLS)
_NO_GRAD = frozenset({"no_grad", "inference_mode"})
_MODEL_CALLEE = re.compile(
    r"^(?:\w*model|\w*net|network|agent|policy|actor|critic|generator|discriminator|encoder|decoder|generate|forward)$",
    re.IGNORECASE,
)
_LOADER = re.compile(r"loader|batches", re.IGNORECASE)
# what an evaluation loop iterates (`queue`: DARTS and its many derivatives name their loaders `valid_queue`)
_DATA = re.compile(r"loader|batch|data|queue", re.IGNORECASE)
_TRAINING_DATA = re.compile(r"train", re.IGNORECASE)
STEP_TOKENS = (
    "backward",
    "zero_grad",
    "optim",
    "_step",
    "train_batch",
    "no_grad",
    "inference_mode",
    "loader",
    "batches",
    "model",
    "Model",
    "net",
    "Net",
    "agent",
    "policy",
    "actor",
    "critic",
    "generator",
    "Generator",
    "discriminator",
    "Discriminator",
    "encoder",
    "decoder",
    "unet",
    "generate",
    "forward",
)


class Ctx(NamedTuple):
    in_loop: bool = False
    guarded: bool = False  # inside the CUDA branch of a check (with an `else`, or none: the code skips it)
    pure_guard: bool = False  # inside the CUDA branch of a check that only guards CUDA-only or display code
    message: bool = False  # inside a log/print/raise/assert message
    optional_import: bool = False  # inside `try: ... except ImportError:` or an `if is_x_available():`
    in_function: bool = False
    cuda_context: bool = True  # the file mentions CUDA somewhere, so bare integers are CUDA devices
    loop: Optional[ast.AST] = None  # the innermost enclosing loop (For/While/comprehension)
    # inside `if step % k == 0:` or `if i == 0:` (runs in some iterations only) or a debugging branch
    periodic: bool = False
    debug: bool = False  # inside a branch that runs in debugging runs only (`if os.environ.get("X_DEBUG"):`)
    annotation: bool = False  # inside a type annotation, which names types and runs nothing
    guard_test: bool = False  # the test of a CUDA guard around CUDA-only code, a test skip, a test's CUDA check
    in_test: bool = False  # inside a test function (`def test_*`)
    test_assert: bool = False  # inside the checked expression of a test's assertion
    display: bool = False  # inside a function that collects or prints environment information
    host: bool = False  # the `dtype=` of a tensor factory that names no device: a host tensor
    # inside a test that is skipped where CUDA (or a CUDA-only library) is absent, or the CUDA arm of a
    # dispatch over accelerators: code that only ever runs with CUDA, and reports nothing
    skipped: bool = False
    shown: bool = False  # set on a hit whose value is only shown (logged, formatted), for rules that lower it
    declined: bool = False  # set on a hit the rule declines where it sits: no finding, and no fallback's either
    test_file: bool = False  # in a file of a test suite (`tests/`, `test_*.py`, `conftest.py`)
    build_script: bool = False  # in a package's build script (`setup.py`): its device checks pick what to build
    bench_file: bool = False  # in a benchmark (`benchmark/`, `bench_*.py`): its asserts check results, once
    # in evaluation code: a file of it (`eval/`, `evaluate.py`) or a post-processor of outputs (`PostProcessPanoptic`)
    evaluation: bool = False
    # in a module of metrics (`metrics/pimo/_validate.py`, `utils/metrics.py`): computed once per evaluation
    metric: bool = False
    # in a generation stopping criterion (a `StoppingCriteria` subclass): it decides on the host whether to stop
    stop_decision: bool = False
    xla_branch: bool = False  # in a branch that only runs on an XLA device (`if x.device.type == "xla":`)
    cuda_required: bool = False  # after `if not torch.cuda.is_available(): raise ...`: runs only with CUDA
    complex_branch: bool = False  # in a branch that only runs for a complex tensor (`if torch.is_complex(x):`)
    float64_branch: bool = False  # in a branch that only runs for a float64 tensor (`if x.dtype is torch.float64:`)
    compared: bool = False  # in the literal list an `in` test looks a value up in (`dtype in [torch.float64]`)
    probe: bool = False  # in an availability probe (`def is_bnb_available():`), whose imports only ask
    tried: bool = False  # in a `try` whose handler catches the error and carries on (with `guarded`)
    in_init: bool = False  # in an `__init__`, or a method only `__init__` calls: runs once, not per step
    error_path: bool = False  # in an `except` handler: runs when something failed, not once per step
    built_once: bool = False  # in a class whose objects are built once, before the steps (a module, a dataset)
    scope: Optional[ast.AST] = None  # the innermost function (or the module) the node sits in
    precision_test: bool = False  # the test of a condition that picks a precision, not a device
    speedup_test: bool = False  # a CUDA check that only turns on a speed-up (`fused=True`): elsewhere, the plain path
    build_test: bool = False  # the test of a CUDA build condition (`if CUDA_HOME is not None ...`) with an `else`
    requirement_test: bool = False  # a CUDA check that raises without CUDA (`if not ...: raise`, `assert`)
    assigned: Optional[ast.AST] = None  # in the target of an assignment: the value it is given
    lowered_by: str = ""  # set on a hit a matcher lowers one level: why (said in the note)
    info_note: str = ""  # set on a hit reported at `info` whatever its rule's severity: why (the note)
    # the calls whose fixes together end the reason for `info_note` (a CUDA harness's measuring calls)
    until_fixed: Tuple[ast.expr, ...] = ()
    # the attribute named like a CUDA flag that is the whole test of the check making `guarded` (`cuda` for `if
    # args.cuda:`): a project that only ever sets it to `True` makes the check no check (portcheck.always_on)
    flag: str = ""
    manual: str = ""  # why `portcheck fix` leaves the hit to a person although its rule has a fix
    # inside code that drives a raw CUDA kernel or runs only with flash-attn: the note for its findings
    # (`mark_raw_kernel_wrappers`, `mark_flash_attention_code`)
    kernel_driver: str = ""
    # the enclosing functions and the tests of the `if`s whose true side this is (`def forward_xformers(...)`,
    # `elif args.use_bnb_linear:`): what the code is switched on for, read by `switch_words` when asked
    switches: Tuple[ast.AST, ...] = ()


# A project's own print for one rank of a distributed job (`print0`, `print_rank_0`, `rank0_print`,
# `master_print`).
# (`print_to_log_file`: nnU-Net's trainers and their many medical-imaging copies)
# (`cprint`: termcolor's coloured print, and dgcnn.pytorch's `IOStream.cprint`, which prints and logs a line)
_PRINT_HELPER = re.compile(
    r"^print_?(?:0|rank_?0|once|master|main)$|^(?:rank_?0|master|main)_print$|^print_to_(?:log|console)\w*$"
    r"|^cprint$"
    # the printer a function picked (`print_func = print` or `logger.info`: DETR's `MetricLogger.log_every` in
    # Mask2Former and MP-Former)
    r"|^(?:print|log)_?(?:func|fn|function)$"
)


def is_message_call(node: ast.Call) -> bool:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id in ("print", "warn") or bool(_PRINT_HELPER.match(func.id))
    if isinstance(func, ast.Attribute) and func.attr in _MESSAGE_FUNCS:
        owner = dotted(func.value) or ""
        owner_l = owner.lower()
        if func.attr == "write":
            # `opt_file.write("==> cudnn version: {}\n".format(...))`: text formatted for people, to a log
            return owner_l in ("sys.stdout", "sys.stderr") or (len(node.args) == 1 and formatted_text(node.args[0]))
        if func.attr in ("warn", "warning", "info", "debug", "error", "exception", "critical", "fatal", "log"):
            return any(h in owner_l for h in _LOGGER_HINTS) or owner_l in ("self", "warnings", "")
        return any(h in owner_l for h in _LOGGER_HINTS)
    if isinstance(func, ast.Attribute) and func.attr in _SKIP_CALLS:
        return True
    return isinstance(func, ast.Attribute) and bool(_PRINT_HELPER.match(func.attr))  # `self.print_to_log_file(...)`


# A function that gathers figures for a log (mistral-finetune's `get_train_logs(state, loss, lr,
# torch.cuda.max_memory_allocated(), ...)`, `train_log_msg`, `log_metrics`, Lightning's `log_dict`), or writes
# them to a dashboard (TensorBoard's `writer.add_scalar`).
_LOG_BUILDER = re.compile(
    r"^_?(?:get|make|build|collect)_\w*logs$|^_?\w*logs?_(?:msg|message|metrics|stats|dict|info)$"
    r"|^_?log_(?:metrics|stats|dict|scalars?)$|^add_scalars?$"
)


def is_log_builder_call(node: ast.Call) -> bool:
    """A call of a function named for gathering figures for a log: what it is given is only shown."""
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return bool(_LOG_BUILDER.match(name))


def formatted_text(node: ast.AST) -> bool:
    """`f"memory: {m}"`, `"version: {}\n".format(v)`, `"%s GB" % m`: a sentence with values put in."""
    template: object
    if isinstance(node, ast.JoinedStr):
        template = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        template = node.func.value.value if isinstance(node.func.value, ast.Constant) else None
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        template = node.left.value if isinstance(node.left, ast.Constant) else None
    else:
        return False
    return isinstance(template, str) and " " in template.strip()


def _names_nccl(node: ast.AST) -> bool:
    """`"nccl"`, `dist.Backend.NCCL`: the NCCL backend, named in a comparison."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.lower() == "nccl"
    return isinstance(node, ast.Attribute) and node.attr == "NCCL"


def _is_cuda_string(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (node.value == "cuda" or node.value.startswith("cuda:"))
    )


def is_cuda_check(test: ast.AST, imports: ImportTable) -> bool:
    """True when an `if` test asks whether CUDA (or a CUDA device) is in use."""
    called: Set[int] = set()  # the callees seen so far (`ast.walk` yields a call before its callee)
    for node in walk(test):
        if isinstance(node, ast.Attribute) and node.attr == "cuda" and id(node) in called:
            continue  # `x.cuda()` moves a value; `args.cuda` is the flag
        if isinstance(node, ast.Call):
            called.add(id(node.func))
            name = imports.resolve(node.func)
            if name in CUDA_CHECK_CALLS:
                return True
            last = _last_name(node.func).lower()
            if "cuda" in last and "available" in last:  # is_torch_cuda_available() and friends
                return True
            if _CUDA_QUESTION.match(last):
                return True  # vega's `vega.is_gpu_device()`, `use_gpu()`: a question named for CUDA
            if _asks_for_cuda(node):
                return True  # `device.startswith("cuda:")`, as `device == "cuda"`
            if _is_cuda_type_test(node, imports):
                return True  # `isinstance(input.data, torch.cuda.FloatTensor)` (pix2pix's `forward`, and its copies)
        elif isinstance(node, ast.Attribute):
            # (a project's own module flag counts, pytext's `cuda.CUDA_ENABLED`; torch's attributes do not)
            if node.attr == "is_cuda" or (
                _CUDA_FLAG.match(node.attr)
                and not (imports.resolve(node) or "").startswith("torch.")
                and not getattr(node, CONSTANT_FLAG_ATTR, False)
            ):
                return True
            if getattr(node, CUDA_FLAG_ATTR, False):
                return True  # `self.use_cuda_events()`, a method that returns a CUDA check
            if (imports.resolve(node) or "") in CUDA_CHECK_ATTRIBUTES:
                return True  # `if torch.cuda._initialized:`, `if len(torch.cuda.default_generators) > 0:`
        elif isinstance(node, ast.Compare):
            if _gpu_index_sign(node) is not None:
                return True  # `if args.gpu >= 0:`, `-1` meaning the CPU
            if _asks_cuda_error(node):
                return True  # `if 'CUDA out of memory' in str(e):` (s3prl's runner): only after CUDA raised
            for side in [node.left, *node.comparators]:
                if _is_cuda_string(side) or _names_nccl(side):
                    return True  # NCCL runs on CUDA only: `if dist.get_backend() == "nccl":` asks for CUDA
                if isinstance(side, (ast.List, ast.Tuple, ast.Set)) and (
                    any(_is_cuda_string(e) for e in side.elts)
                    # `if backend.lower() in ["nccl"]:` (mobile-vision), not `in ["nccl", "gloo"]`
                    or (bool(side.elts) and all(map(_names_nccl, side.elts)))
                ):
                    return True
        elif (
            isinstance(node, ast.Name)
            and _CUDA_FLAG.match(node.id)
            and node.id not in imports.aliases
            and not getattr(node, CONSTANT_FLAG_ATTR, False)
        ):
            return True
        elif isinstance(node, ast.Name) and getattr(node, CUDA_FLAG_ATTR, False):
            return True  # `GPU = torch.cuda.device_count() > 0`, then `if GPU:` (see `mark_cuda_flags`)
        elif isinstance(node, ast.Subscript) and _names_cuda_option(node.slice):
            return True  # `if opt['data.cuda']:` (prototypical-networks), `config["use_cuda"]`
    return False


def _names_cuda_option(key: ast.AST) -> bool:
    """A literal option key named for CUDA, alone or as the last part of a dotted key (`'data.cuda'`)."""
    return isinstance(key, ast.Constant) and isinstance(key.value, str) and bool(
        _CUDA_FLAG.match(key.value.rsplit(".", 1)[-1])
    )


_CUDA_TYPE = re.compile(r"^torch\.cuda\.\w*Tensor$")


def _is_cuda_type_test(call: ast.Call, imports: ImportTable) -> bool:
    """`isinstance(x, torch.cuda.FloatTensor)` (or a tuple of types with one): a test that the tensor is on CUDA."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "isinstance" and len(call.args) == 2):
        return False
    kinds = call.args[1]
    types = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return any(_CUDA_TYPE.match(imports.resolve(t) or "") for t in types)


CUDA_FLAG_ATTR = "_portcheck_cuda_flag"  # set on a read of a name the module binds once to a CUDA check
CONSTANT_FLAG_ATTR = "_portcheck_constant_flag"  # set on a read of a CUDA-named flag only ever set to True


def _returns_cuda_check(fn: ast.AST, imports: ImportTable) -> bool:
    """A function of no arguments (or a method of none but `self`) whose body (a docstring aside) only returns
    a CUDA check (torchao's `def is_ROCM(): return torch.cuda.is_available() and torch.version.hip is not
    None`, ClassyVision's `def use_cuda_events(self): return torch.cuda.is_available() and ...`): a call to
    it asks what the check asks."""
    args = fn.args  # type: ignore[attr-defined]
    plain = args.args[1:] if _is_method(fn) else args.args
    if plain or args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg:
        return False
    value = _sole_return_value(fn)
    return value is not None and is_cuda_check(value, imports)


def _answers_only_with_cuda(fn: ast.AST, imports: ImportTable) -> bool:
    """A predicate whose body (asserts and a docstring aside) is guards that return False, then `return True`,
    one guard asking that CUDA be absent and none that it be there (StyleGAN's `_should_use_custom_op(input)`
    in `conv2d_gradfix.py`, copied across its descendants: `if input.device.type != 'cuda': return False`):
    it answers True only where CUDA is, whatever its arguments."""
    body = [s for s in fn.body if not isinstance(s, ast.Assert) and not is_docstring(s)]  # type: ignore[attr-defined]
    last = body[-1] if len(body) >= 2 else None
    if not (isinstance(last, ast.Return) and last.value is not None and _is_bool(last.value, True)):
        return False
    absent = False
    for stmt in body[:-1]:
        if not (
            isinstance(stmt, ast.If)
            and not stmt.orelse
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], ast.Return)
            and stmt.body[0].value is not None
            and _is_bool(stmt.body[0].value, False)
        ):
            return False
        if is_negative_cuda_check(stmt.test, imports):
            absent = True
        elif is_cuda_check(stmt.test, imports):
            return False
    return absent


def _is_method(fn: ast.AST) -> bool:
    """A function whose first argument is `self`."""
    args = fn.args.args  # type: ignore[attr-defined]
    return bool(args) and args[0].arg == "self"


PREDICATE_NOTE = (
    "lowered one level: the function only answers whether a tensor or device is CUDA's; what that decides is"
    " where it is called"
)


def is_device_predicate(fn: ast.AST) -> bool:
    """A function whose whole body returns a device check (`def _is_on_cuda(self): return
    next(self.parameters()).is_cuda`, GMvandeVen/continual-learning's models; `return dev.type == "cuda"`)."""
    value = _sole_return_value(fn)
    return value is not None and (
        (isinstance(value, ast.Attribute) and value.attr == "is_cuda") or _asks_for_cuda(value)
    )


def _sole_return_value(fn: ast.AST) -> Optional[ast.AST]:
    """What a function returns when its whole body (a docstring aside) is one `return <value>`; else None."""
    body = [s for s in fn.body if not is_docstring(s)]  # type: ignore[attr-defined]
    return body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None


def is_docstring(stmt: ast.AST) -> bool:
    """A statement that is only a string (a docstring)."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def mark_cuda_flags(nodes: Sequence[ast.AST], imports: ImportTable, imported: bool = True) -> None:
    """Mark (`CUDA_FLAG_ATTR`) every read of a name the module binds exactly once, to a CUDA check or to
    `True if <check> else False` (MODNet's `GPU = True if torch.cuda.device_count() > 0 else False`): a
    test on it asks what the check asked. `nodes`: every node of the module (`ast.walk`); `imported`: False
    for a module nothing imports (a test runner's `test_*.py`), whose names are read there or nowhere."""
    flags: Set[str] = set()
    predicates: Set[str] = set()
    methods: Set[str] = set()
    attributes: Set[str] = set()  # `self.pin_memory`, `args.mixmode`: attributes set to a CUDA check
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.IfExp) and _is_bool(value.body, True) and _is_bool(value.orelse, False):
                value = value.test
            if _asks_device_presence(value, imports) and not _CUDA_FLAG.match(node.targets[0].id):
                flags.add(node.targets[0].id)
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and (_flag_key(node.targets[0]) or "").startswith("self.")
            and _asks_device_presence(node.value, imports)
        ):
            # `self.pin_memory = loader.pin_memory and torch.cuda.is_available()`, then `if self.pin_memory:
            # torch.cuda.current_device()` (the DataLoader copied into EDSR and RCAN)
            attributes.add(_flag_key(node.targets[0]) or "")
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
            and isinstance(node.targets[0].value, ast.Name)
            and not (isinstance(node.value, ast.Call) and "count" in _last_name(node.value.func))
            and _asks_device_presence(node.value, imports)
        ):
            # `args.mixmode = args.no_cuda and args.mixmode and torch.cuda.is_available()`, then `if args.mixmode:
            # adj = adj.cuda()` (DropEdge's train_new.py): an option the module narrows to where CUDA is (not a
            # count: nerfplusplus's `args.world_size = torch.cuda.device_count()` sizes a spawn)
            attributes.add(dotted(node.targets[0]) or "")
        elif isinstance(node, _FUNCTION_DEFS) and _returns_cuda_check(node, imports):
            # `def is_ROCM(): return torch.cuda.is_available() and ...`: `if is_ROCM():`; a method's
            # `if self._perf_stats.use_cuda_events():`
            (methods if _is_method(node) else predicates).add(node.name)
        elif isinstance(node, _FUNCTION_DEFS) and not _is_method(node) and _answers_only_with_cuda(node, imports):
            predicates.add(node.name)  # `if _should_use_custom_op(input):`
    if flags or predicates or methods:
        bound = _binding_counts(nodes)
        defined = Counter(n.name for n in nodes if isinstance(n, _DEFINITIONS))
        flags = {name for name in flags if bound.get(name) == 1}
        flags |= {name for name in predicates if defined[name] == 1 and not bound.get(name)}
        methods = {name for name in methods if defined[name] == 1}
        for node in nodes:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in flags:
                setattr(node, CUDA_FLAG_ATTR, True)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in methods:
                if not node.args and not node.keywords:
                    setattr(node.func, CUDA_FLAG_ATTR, True)
    if attributes:
        _mark_attribute_flags(nodes, attributes)
    for node in nodes:
        if isinstance(node, _FUNCTION_DEFS):
            _mark_narrowed_flags(node, imports)
            _mark_cuda_objects(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.IfExp):
            setattr(node.value, STATEMENT_ATTR, True)
        elif isinstance(node, ast.For):
            _mark_searched_literals(node)
    _mark_cleared_flags(nodes, imports)
    _mark_guard_flags(nodes, imports, imported)
    _mark_speedup_flags(nodes, imports)
    stored = Counter(n.attr for n in nodes if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)))
    _mark_constant_flags(nodes, stored)
    _mark_default_on_flags(nodes, stored)
    _mark_unread_options(nodes)


def _mark_attribute_flags(nodes: Sequence[ast.AST], candidates: Set[str]) -> None:
    """Mark (`CUDA_FLAG_ATTR`) the reads of each attribute among `candidates`, spelt `name.attr` (`self.pin_memory`,
    `args.mixmode`), that the module sets exactly once (to a CUDA check, found by the caller)."""
    stores: Counter = Counter()
    reads: List[Tuple[str, ast.Attribute]] = []
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            key = node.value.id + "." + node.attr
            if key in candidates:
                if isinstance(node.ctx, ast.Load):
                    reads.append((key, node))
                else:
                    stores[key] += 1
    for key, read in reads:
        if stores[key] == 1:
            setattr(read, CUDA_FLAG_ATTR, True)


def _mark_cleared_flags(nodes: Sequence[ast.AST], imports: ImportTable) -> None:
    """`if not args.no_cuda and torch.cuda.is_available(): ... else: args.distributed = False`, then `if
    args.distributed: torch.cuda.set_device(args.local_rank)` (awesome-semantic-segmentation-pytorch's scripts):
    after a CUDA check whose side without CUDA sets a flag to False, or whose side with CUDA sets True a flag
    set False before it, the flag is true only where CUDA is. Marks (`CUDA_FLAG_ATTR`) its reads in the
    statements that follow in the same block, when they bind it nowhere."""
    for node in nodes:
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list):
                continue
            for at, stmt in enumerate(stmts):
                if not (isinstance(stmt, ast.If) and is_cuda_check(stmt.test, imports)):
                    continue
                negative = is_negative_cuda_check(stmt.test, imports)
                off, on = (stmt.body, stmt.orelse) if negative else (stmt.orelse, stmt.body)
                cleared = _set_to(off, False)
                # `cuda_flag = False`, then `if torch.cuda.is_available(): ...; cuda_flag = True`
                # (RealBasicVSR's inference script): the flag is set True only on the side with CUDA
                cleared |= _set_to(on, True) & _set_to(stmts[:at], False)
                if not cleared:
                    continue
                later = [
                    n for after in stmts[at + 1 :] for n in walk(after) if isinstance(n, (ast.Name, ast.Attribute))
                ]
                live = cleared - {dotted(n) for n in later if isinstance(n.ctx, ast.Store)}
                for read in later:
                    if isinstance(read.ctx, ast.Load) and dotted(read) in live:
                        setattr(read, CUDA_FLAG_ATTR, True)


def _set_to(stmts: Sequence[ast.stmt], value: bool) -> Set[str]:
    """The names and attributes that `stmts` set to the literal `value` (`flag = False`)."""
    return {
        dotted(s.targets[0]) or ""
        for s in stmts
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and _is_bool(s.value, value)
    } - {""}


def _mark_constant_flags(nodes: Sequence[ast.AST], stored: Counter) -> None:
    """`use_gpu = True`, then `if use_gpu: retinanet = retinanet.cuda()` (ByteTrack's ctracker tutorial): a
    flag named for CUDA that the module only ever binds to `True` asks nothing, and what it guards always
    runs. Marks (`CONSTANT_FLAG_ATTR`) its reads, which `is_cuda_check` then does not take for a check. The same
    for an attribute of the instance (`self.use_gpu = True`, Attention_ocr.pytorch's attention decoder) whose
    every store in the module (`stored`: how often each attribute name is stored, on any object) is that one."""
    def positive_flag_set_true(name: str, value: ast.AST) -> bool:
        return _is_bool(value, True) and _positive_flag(name)

    _mark_names_only_bound_to(nodes, positive_flag_set_true, CONSTANT_FLAG_ATTR)
    set_true: Counter = Counter()  # a flag's attribute name -> how often the module stores it by `self.<flag> = True`
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and _is_bool(node.value, True):
            key = _flag_key(node.targets[0]) or ""
            if key.startswith("self.") and _positive_flag(key[5:]):
                set_true[key[5:]] += 1
    constant = {name for name, count in set_true.items() if stored[name] == count}
    if constant:
        for node in nodes:
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in constant:
                if (_flag_key(node) or "").startswith("self."):
                    setattr(node, CONSTANT_FLAG_ATTR, True)


OFF_SWITCH_ATTR = "_portcheck_off_switch"  # set on a read of a name the module only ever sets to `False`
SET_FALSE_ATTR = "_portcheck_set_false"  # set on a target of a tuple assignment whose value there is `False`


def mark_off_switches(nodes: Sequence[ast.AST]) -> None:
    """`parallel = False`, then `if parallel: self.W = nn.DataParallel(self.W)` (Attention-Gated-Networks'
    grid attention): a name the module binds only to `False` switches off what it guards. Marks
    (`OFF_SWITCH_ATTR`) its reads. Not in a module that may rebind its names by other means (nanoGPT's
    `profile = False`, then `exec(open('configurator.py').read())`, which sets it from the command line).
    `nodes`: every node of the module (`ast.walk`). And (`SET_FALSE_ATTR`) each target a tuple assignment sets to
    `False` (DynamicDet's `cudnn.benchmark, cudnn.deterministic = True, False`)."""
    for node in nodes:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple)):
            continue
        for target in node.targets:
            if isinstance(target, ast.Tuple) and len(target.elts) == len(node.value.elts):
                for element, value in zip(target.elts, node.value.elts):
                    if _is_bool(value, False):
                        setattr(element, SET_FALSE_ATTR, True)
    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _REBINDS_BY_NAME for n in nodes):
        return
    _mark_names_only_bound_to(nodes, lambda _, value: _is_bool(value, False), OFF_SWITCH_ATTR)


# Builtins that read a scope's names by string (`self.__dict__.update(locals())`, `eval(expr)`), and with
# `globals()` and `setattr` those that may bind any of a module's names (`exec(...)` of a config file).
READS_NAMES_BY_STRING = frozenset({"locals", "vars", "eval", "exec"})
_REBINDS_BY_NAME = READS_NAMES_BY_STRING | {"globals", "setattr"}


def _mark_default_on_flags(nodes: Sequence[ast.AST], stored: Counter) -> None:
    """A CUDA-named switch that is on unless someone turns it off: a parameter whose default is `True` (Cadene's
    vqa.pytorch `def factory(opt, cuda=True, ...)`, UnsupervisedMT's `build_attention_model(params, data,
    cuda=True)`), or a command-line option declared `default=True` (lyeoni's `p.add_argument('--cuda',
    default=True, type=bool)`, then `if config.cuda:`). What it guards runs by default, on any device, so it
    is no CUDA check: marks (`CONSTANT_FLAG_ATTR`) the reads, in the function or the module, of a name or
    attribute nothing there rebinds (`stored`: the attribute names the module sets, `args.cuda = args.cuda and
    torch.cuda.is_available()`)."""
    options: Set[str] = set()
    calls: Optional[Dict[str, List[ast.Call]]] = None
    for node in nodes:
        if isinstance(node, _FUNCTION_DEFS):
            on = {a.arg for a, d in defaulted_parameters(node.args) if _is_bool(d, True) and _positive_flag(a.arg)}
            if not on:
                continue
            if calls is None:
                calls = {}
                for n in nodes:
                    if isinstance(n, ast.Call):
                        calls.setdefault(_last_name(n.func), []).append(n)
            # a caller in the module that hands it a value (hszhao/SAN's `position(h, w, x.is_cuda)`): a check
            on -= _passed_otherwise(node, calls.get(node.name, []), on)
            if not on:
                continue
            inner = list(walk(node))
            rebound = {
                n.id for n in inner if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
            }
            for n in inner:
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in on - rebound:
                    setattr(n, CONSTANT_FLAG_ATTR, True)
        elif isinstance(node, ast.Call) and _last_name(node.func) == "add_argument":
            dest = option_dest(node)
            default_on = any(k.arg == "default" and _is_bool(k.value, True) for k in node.keywords)
            if default_on and dest and _positive_flag(dest):
                options.add(dest)
    options -= set(stored)
    if options:
        for node in nodes:
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in options:
                setattr(node, CONSTANT_FLAG_ATTR, True)


UNREAD_OPTION_ATTR = "_portcheck_unread_option"  # set on an `add_argument` call whose option nothing reads
_PARSING = frozenset({"parse_args", "parse_known_args"})


def _mark_unread_options(nodes: Sequence[ast.AST]) -> None:
    """The `default=` of a command-line option the module never reads (VideoLLaMA2's eval scripts declare
    `--device` with `default='cuda:0'` and call `model_init(args.model_path)`): marks (`UNREAD_OPTION_ATTR`)
    the `add_argument` call. Never read: no attribute and no string of the module spells the option's name, and the
    parsed arguments (a name bound to a `parse_args()` call, first of a tuple for `parse_known_args()`) are
    only ever read for an attribute or handed to a function the module defines. Anything else (returned,
    stored, given to `vars()` or to another module's function) may read it elsewhere, and nothing is marked."""
    options: Dict[str, List[ast.Call]] = {}
    for node in nodes:
        if isinstance(node, ast.Call) and _last_name(node.func) == "add_argument":
            dest = option_dest(node) if any(k.arg == "default" for k in node.keywords) else None
            if dest:
                options.setdefault(dest, []).append(node)
    if not options:
        return
    targets = {id(n.value): n.targets[0] for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1}
    parsed: Set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Call) and _last_name(node.func) in _PARSING:
            first = targets.get(id(node))
            if isinstance(first, ast.Tuple):
                first = first.elts[0] if first.elts else None  # `args, unknown = parser.parse_known_args()`
            if not isinstance(first, ast.Name):
                return  # parsed into something else (`main(parser.parse_args())`, `self.args = ...`)
            parsed.add(first.id)
    if not parsed:
        return
    defined: Dict[str, List[str]] = {}
    for n in nodes:
        if isinstance(n, _FUNCTION_DEFS):
            # (a name the module defines twice takes no parameter: what it is handed escapes)
            defined[n.name] = [] if n.name in defined else [a.arg for a in n.args.posonlyargs + n.args.args]
    handled: Set[int] = set()  # the reads of a parsed name that keep it in the module
    handed: List[Tuple[ast.expr, str]] = []  # (argument, the parameter of the module's function it is given to)
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            handled.add(id(node.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and defined.get(node.func.id):
            params = defined[node.func.id]
            handed += [(a, params[i]) for i, a in enumerate(node.args) if i < len(params)]
            handed += [(k.value, k.arg) for k in node.keywords if k.arg in params]
    grown = True
    while grown:  # `run_inference(args)`, then `def run_inference(cfg):`: `cfg` is the parsed arguments too
        grown = False
        for value, param in handed:
            if isinstance(value, ast.Name) and value.id in parsed:
                handled.add(id(value))
                grown = grown or param not in parsed
                parsed.add(param)
    for node in nodes:
        if isinstance(node, ast.Name) and node.id in parsed and isinstance(node.ctx, ast.Load):
            if id(node) not in handled:
                return
    # read: an attribute of the parsed arguments (or of any name they are handed as), or a string (`getattr`);
    # not another object's attribute of the same name (VGT's `--device` beside `accelerator.device`)
    spelt = {n.attr for n in nodes if isinstance(n, ast.Attribute) and _name_in(n.value, parsed)}
    spelt |= {n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    unread = set(options) - spelt
    for dest in unread:
        for call in options[dest]:
            setattr(call, UNREAD_OPTION_ATTR, True)


def _name_in(node: ast.expr, names: Set[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in names


def defaulted_parameters(args: ast.arguments) -> List[Tuple[ast.arg, ast.expr]]:
    """A signature's parameters that have a default, each with it (positional ones, then keyword-only)."""
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
    return pairs + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]


UNREAD_PARAMETER_NOTE = (
    "lowered to info: the function never reads this parameter, so its default picks nothing (callers that pass"
    " a device choose it)"
)


def unread_parameters(fn: ast.AST) -> FrozenSet[str]:
    """The parameters with a default that `fn`'s body never reads (Informer's `device=torch.device('cuda:0')`,
    which its `__init__` never uses). None for a stub (`...`, `pass`, `raise NotImplementedError`), whose
    defaults describe an interface, or a body that reads names by string (`locals()`)."""
    args = fn.args  # type: ignore[attr-defined]
    if not (args.defaults or any(d is not None for d in args.kw_defaults)) or isinstance(fn, ast.Lambda):
        return frozenset()
    body = [s for s in fn.body if not is_docstring(s)]  # type: ignore[attr-defined]
    if all(isinstance(s, (ast.Pass, ast.Raise)) or isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
           for s in body):
        return frozenset()  # (an empty body too)
    read: Set[str] = set()
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, ast.Name):
                if node.id in READS_NAMES_BY_STRING:
                    return frozenset()
                read.add(node.id)
    return frozenset(a.arg for a, _ in defaulted_parameters(args) if a.arg not in read)


def _passed_otherwise(fn: ast.AST, calls: Sequence[ast.Call], names: Set[str]) -> Set[str]:
    """Of the parameters `names` of `fn`, those a call among `calls` passes a value other than `True`."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]  # type: ignore[attr-defined]
    passed: Set[str] = set()
    for call in calls:
        # `self.f(...)`, `obj.f(...)` skip a method's own first parameter
        skip = 1 if isinstance(call.func, ast.Attribute) and params[:1] in (["self"], ["cls"]) else 0
        given = [(params[i + skip], a) for i, a in enumerate(call.args) if i + skip < len(params)]
        given += [(k.arg, k.value) for k in call.keywords if k.arg]
        passed.update(name for name, value in given if name in names and not _is_bool(value, True))
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            passed.update(names)  # `f(*args, **kwargs)`: anything may be passed
    return passed


def flag_attribute(test: ast.AST, imports: ImportTable) -> str:
    """`cuda` for the test `args.cuda` or `not self.cuda`: the attribute named like a CUDA flag that is the whole
    test (not a module's, `torch.backends.cudnn.enabled`); "" for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if (
        isinstance(test, ast.Attribute)
        and _positive_flag(test.attr)
        and imports.resolve(test) is None
        and not getattr(test, CONSTANT_FLAG_ATTR, False)
    ):
        return test.attr
    return ""


def _positive_flag(name: str) -> bool:
    return bool(_CUDA_FLAG.match(name)) and not name.lower().startswith("no")


def option_dest(call: ast.Call) -> Optional[str]:
    """The attribute `parser.add_argument("--use-cuda", ...)` sets (`use_cuda`; `dest=` when given)."""
    for k in call.keywords:
        if k.arg == "dest":
            return k.value.value if isinstance(k.value, ast.Constant) and isinstance(k.value.value, str) else None
    for a in call.args:
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--"):
            return a.value[2:].replace("-", "_")
    return None


def _mark_names_only_bound_to(
    nodes: Sequence[ast.AST], accepts: Callable[[str, ast.AST], bool], attr: str
) -> None:
    """Mark (`attr`) every read, among `nodes`, of a name whose every binding there is `name = value` with
    `accepts(name, value)` true."""
    made: Dict[str, int] = {}
    for node in nodes:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and accepts(node.targets[0].id, node.value)
        ):
            made[node.targets[0].id] = made.get(node.targets[0].id, 0) + 1
    if not made:
        return
    bound = _binding_counts(nodes)
    names = {name for name, count in made.items() if bound.get(name) == count}
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
            setattr(node, attr, True)


_FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# String methods that search their first argument in the string (`spec.replace("cuda:", "")`)
SEARCHING_METHODS = frozenset(
    "replace startswith endswith split rsplit removeprefix removesuffix strip lstrip rstrip find rfind index "
    "rindex count partition rpartition".split()
)
SEARCHED_ATTR = "_portcheck_searched"  # set on a literal a loop hands, one by one, to a searching method


def _mark_searched_literals(loop: ast.For) -> None:
    """`for remove in "cuda:", "none", "(": device = device.replace(remove, "")`: each literal is searched
    for in a string the program parses, as `device.replace("cuda:", "")` would. Marks (`SEARCHED_ATTR`) the
    literals when every read of the loop variable in the body is a searching method's first argument."""
    if not (isinstance(loop.target, ast.Name) and isinstance(loop.iter, (ast.Tuple, ast.List))):
        return
    if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in loop.iter.elts):
        return
    name = loop.target.id
    reads = [n for s in loop.body for n in walk(s) if isinstance(n, ast.Name) and n.id == name]
    searched = {
        id(c.args[0])
        for s in loop.body
        for c in walk(s)
        if isinstance(c, ast.Call)
        and isinstance(c.func, ast.Attribute)
        and c.func.attr in SEARCHING_METHODS
        and c.args
        and isinstance(c.args[0], ast.Name)
    }
    if reads and all(id(n) in searched and isinstance(n.ctx, ast.Load) for n in reads):
        for e in loop.iter.elts:
            setattr(e, SEARCHED_ATTR, True)


STATEMENT_ATTR = "_portcheck_statement"  # set on an `a if test else b` whose value is not kept (a statement)
GUARD_FLAG_ATTR = "_portcheck_guard_flag"  # set on `flag = <CUDA check>` whose every read guards CUDA-only code
UNREAD_FLAG_ATTR = "_portcheck_unread_flag"  # set on `self.flag = <CUDA check>` that nothing in the module reads
# set on `self.device = <a choice by a CUDA check>` that nothing in the module reads
UNREAD_DEVICE_ATTR = "_portcheck_unread_device"
# set on `flag = <CUDA check>` whose every read turns on a speed-up only (`fused=flag`) or shows the flag
SPEEDUP_FLAG_ATTR = "_portcheck_speedup_flag"


def _mark_narrowed_flags(fn: ast.AST, imports: ImportTable) -> None:
    """`log_timings = log_timings and torch.cuda.is_available()` at the top of a function: after it, the
    name is true only where CUDA is (jepa's `gpu_timer`). Marks (`CUDA_FLAG_ATTR`) the reads after that
    statement when the function binds the name nowhere else (its parameter aside)."""
    for stmt in getattr(fn, "body", []):
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.BoolOp)
            and isinstance(stmt.value.op, ast.And)
            and any(is_cuda_check(term, imports) for term in stmt.value.values)
        ):
            continue
        name = stmt.targets[0].id
        inner = list(walk(fn))
        params = {a.arg for a in walk(fn.args) if isinstance(a, ast.arg)}  # type: ignore[attr-defined]
        if _binding_counts(inner).get(name, 0) != 1 + (name in params):
            continue
        for node in inner:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id == name:
                if node.lineno > stmt.end_lineno:  # type: ignore[operator]
                    setattr(node, CUDA_FLAG_ATTR, True)


def _last_name(node: ast.AST) -> str:
    return (dotted(node) or "").rsplit(".", 1)[-1]


# Decorators that skip a test on a condition.
SKIP_DECORATORS = frozenset({"skipIf", "skipUnless", "skipif"})
# `x.to(device, non_blocking=(device.type == "cuda"))`: a copy hint chosen for CUDA; elsewhere the copy is
# plainly synchronous or unpinned, which changes no result.
COPY_HINTS = frozenset({"non_blocking", "pin_memory"})


def _mark_guard_flags(nodes: Sequence[ast.AST], imports: ImportTable, imported: bool = True) -> None:
    """Mark (`GUARD_FLAG_ATTR`) `use_cuda = torch.cuda.is_available()` when every read of the name it binds
    (its own value aside) is the whole test of a pure guard (`if use_cuda: torch.cuda.synchronize()`): the
    check protects CUDA-only code, as `if torch.cuda.is_available():` written there would, and picks no
    device. The same when every read is a skip condition (`unittest.skipUnless(use_cuda, ...)`), or a copy
    hint (`use_cuda = device == "cuda"`, then only `pin_memory=use_cuda` and `non_blocking=use_cuda`):
    elsewhere the copy is plainly synchronous.
    (`UNREAD_FLAG_ATTR` instead when nothing in the module reads an instance's flag at all.)"""
    reads: Dict[str, List[ast.AST]] = {}
    tests: Set[int] = set()
    attributes: Set[str] = set()  # every attribute the module reads, of any object (`trainer.sync_cuda`)
    for node in nodes:
        key = _flag_key(node)
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and imports.resolved(node.value) is None:
            attributes.add(node.attr)  # (not a module's: `torch.device` reads no instance's `device`)
        if key is not None and isinstance(getattr(node, "ctx", None), ast.Load):
            reads.setdefault(key, []).append(node)
        elif isinstance(node, ast.If) and _flag_key(node.test) is not None and is_pure_guard(node, imports):
            tests.add(id(node.test))
        elif (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.BoolOp)
            and isinstance(node.test.op, ast.And)
            and is_pure_guard(node, imports)
        ):
            # `if self.gpu_available and show_progress: iter_data.set_postfix_str(... get_gpu_usage(...))`
            # (RecBole's trainer): each flag of the `and` guards display-only or CUDA-only code
            tests.update(id(v) for v in node.test.values if _flag_key(v) is not None)
        elif (
            isinstance(node, (ast.If, ast.IfExp))
            and _flag_key(node.test) is not None
            and is_implementation_choice(node, imports)
        ):
            tests.add(id(node.test))  # `config = self.cuda_config if is_cuda else self.cpu_config`
        elif isinstance(node, ast.keyword) and node.arg in COPY_HINTS and _flag_key(node.value) is not None:
            tests.add(id(node.value))
        elif (
            isinstance(node, ast.IfExp)
            and _flag_key(node.test) is not None
            and _loader_options(node.body)
            and _loader_options(node.orelse)
        ):
            # `kwargs = {"num_workers": 1, "pin_memory": True} if use_cuda else {}` (pytorch/examples' MNIST, copied
            # widely; wise-ft's CIFAR-10.1 loader): the check picks a data loader's options, no device
            tests.add(id(node.test))
        elif isinstance(node, ast.Call) and node.args and _last_name(node.func) in SKIP_DECORATORS:
            # `unittest.skipUnless(CUDA_AVAILABLE, reason)` (mmf's `skip_if_no_cuda`): a test's requirement
            condition = node.args[0]
            if isinstance(condition, ast.UnaryOp) and isinstance(condition.op, ast.Not):
                condition = condition.operand
            if isinstance(condition, ast.Compare) and len(condition.ops) == 1:
                # `skipUnless(torch_device == "cuda", ...)` (optimum's `require_torch_gpu`)
                sides = [condition.left, condition.comparators[0]]
                if any(_is_cuda_string(x) for x in sides):
                    condition = next((x for x in sides if _flag_key(x) is not None), condition)
            if _flag_key(condition) is not None:
                tests.add(id(condition))
    # a function's own names (not declared global): nothing outside the module can read them (found only when
    # a name's flag has no read at all)
    local: Optional[Set[int]] = None
    datasets: Optional[Set[int]] = None  # the assignments of the module's dataset classes
    declared = {name for n in nodes if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            for key, value, holder in _flag_bindings(node):
                own = {id(n) for n in walk(value)}
                names = [n for n in reads.get(key, []) if id(n) not in own]
                # a flag nothing reads (`self.sync_cuda = torch.cuda.is_available()`, motion-diffusion-model's
                # training loop; gpt-fast's `use_cuda = 'cuda' in device` in `_load_model`) picks nothing either
                # (an instance's attribute or a function's local: a module's name may be imported and read
                # elsewhere, unless nothing imports the module: mozilla/TTS's `use_cuda` in a `test_*.py`)
                if key.startswith("self."):
                    unread = not names and key[5:] not in attributes
                elif names or key in declared:
                    unread = False
                elif not imported:
                    unread = True
                else:
                    if local is None:
                        local = {
                            id(n)
                            for fn in nodes
                            if isinstance(fn, _FUNCTION_DEFS)
                            for n in walk(fn)
                            if isinstance(n, ast.Assign)
                        }
                    unread = id(node) in local
                guards = bool(names) and all(id(n) in tests for n in names)
                if unread and holder is node and _picks_by_cuda_check(value, imports) and key.startswith("self."):
                    # `self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")` in a dataset
                    # that never reads it (ViRB's datasets): the choice is made, and nothing uses it. (Only in a
                    # dataset: a trainer's or a config's device is read by subclasses and users elsewhere,
                    # splade's `BaseTrainer`, HyperText's `Config`.)
                    if datasets is None:
                        datasets = {
                            id(n)
                            for c in nodes
                            if isinstance(c, ast.ClassDef) and is_dataset_class(c)
                            for n in walk(c)
                            if isinstance(n, ast.Assign)
                        }
                    if id(node) in datasets:
                        setattr(holder, UNREAD_DEVICE_ATTR, True)
                    continue
                elif (unread or guards) and is_cuda_check(value, imports):
                    setattr(holder, UNREAD_FLAG_ATTR if unread else GUARD_FLAG_ATTR, True)
        elif isinstance(node, ast.ClassDef) and not _holds_fields(node):
            # `cuda_available: bool = torch.cuda.is_available()` in a class body (torchtnt's test case) that
            # nothing reads, as the class's or an instance's attribute or as a name (not a dataclass's or a
            # config's field, which its users read: assaying-ood's `ModelConfig.device`, handed by Hydra to
            # every model loader)
            for stmt in node.body:
                target, bound = _name_binding(stmt)
                if (
                    target is not None
                    and bound is not None
                    and target not in attributes
                    and not reads.get(target)
                    and is_cuda_check(bound, imports)
                ):
                    setattr(stmt, UNREAD_FLAG_ATTR, True)


_FIELD_DECORATORS = frozenset({"dataclass", "dataclasses.dataclass", "attr.s", "attrs.define", "define", "frozen"})
_FIELD_BASES = re.compile(r"(?:Config|BaseModel|Settings|NamedTuple|TypedDict|Args|Arguments)$")


def _holds_fields(node: ast.ClassDef) -> bool:
    """A class whose body declares fields its users read (a dataclass, a config or settings class)."""
    decorated = {dotted(d.func if isinstance(d, ast.Call) else d) or "" for d in node.decorator_list}
    return bool(decorated & _FIELD_DECORATORS) or any(_FIELD_BASES.search(name) for name in _base_names(node))


# A data loader's options that say how batches are loaded and copied, not where the model runs.
_LOADER_OPTIONS = frozenset({"num_workers", "pin_memory", "persistent_workers", "prefetch_factor", "shuffle"})


def _loader_options(node: ast.AST) -> bool:
    """`{"num_workers": 1, "pin_memory": True}`, `{}`, `dict(num_workers=4)`: only data loader options."""
    return _keywords_only(node, _LOADER_OPTIONS)


def _keywords_only(node: ast.AST, names: AbstractSet[str]) -> bool:
    """A dict literal (`{"fused": True}`) or `dict(...)` call of keyword arguments, all of `names` (or none)."""
    if isinstance(node, ast.Dict):
        return all(isinstance(k, ast.Constant) and k.value in names for k in node.keys)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "dict"
        and not node.args
        and all(k.arg in names for k in node.keywords)
    )


def _name_binding(stmt: ast.stmt) -> Tuple[Optional[str], Optional[ast.AST]]:
    """`flag = value` or `flag: bool = value` (in a class body, a block): the name and the value; (None, None) else."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return stmt.target.id, stmt.value
    return None, None


def _picks_by_cuda_check(value: ast.AST, imports: ImportTable) -> bool:
    """`torch.device("cuda:0" if torch.cuda.is_available() else "cpu")`: a value chosen by a CUDA check."""
    return any(isinstance(n, ast.IfExp) and is_cuda_check(n.test, imports) for n in walk(value))


def _flag_bindings(node: ast.Assign) -> Iterator[Tuple[str, ast.AST, ast.AST]]:
    """(flag, its value, the node to mark) for `use_cuda = ...` (the assignment is marked) and for the
    trailing names of `_, heads, is_cuda = *q.shape, q.is_cuda` (the value element is)."""
    target = node.targets[0]
    key = _flag_key(target)
    if key is not None:
        yield key, node.value, node
    elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
        for name, value in zip(reversed(target.elts), reversed(node.value.elts)):
            if isinstance(name, ast.Starred) or isinstance(value, ast.Starred):
                break
            key = _flag_key(name)
            if key is not None:
                yield key, value, value


def _flag_key(node: ast.AST) -> Optional[str]:
    """`use_cuda` -> "use_cuda", `self.cuda` -> "self.cuda": a name, or an attribute of the instance, that
    may hold a flag."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return "self." + node.attr
    return None


def is_copy_hint_assignment(node: ast.Assign, imports: ImportTable) -> bool:
    """`self.pin_memory = loader.pin_memory and torch.cuda.is_available()`: a copy hint chosen for CUDA, as
    `pin_memory=torch.cuda.is_available()` is; elsewhere the copy is plainly unpinned."""
    return _single_target_name(node) in COPY_HINTS and is_cuda_check(node.value, imports)


def _target_name(target: ast.AST) -> str:
    """`flag` of `flag = ...` or `self.flag = ...`; "" for any other target."""
    return target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else ""


def _single_target_name(node: ast.Assign) -> str:
    """The name an assignment with one target stores under (`_target_name`); "" for several targets."""
    return _target_name(node.targets[0]) if len(node.targets) == 1 else ""


# Keywords that turn on a faster implementation of the same computation (`torch.optim.AdamW(...,
# fused=True)`); without them the plain implementation runs, with the same results.
SPEEDUP_HINTS = frozenset({"fused"})


# Words of a name for a switch between a faster implementation and the plain one (`use_cuda_kernel`,
# `use_triton`, `fused`, `use_flash_attn`): a CUDA check stored under it, or passed as it, picks an
# implementation, not a device (ring-attention-pytorch's `use_cuda_kernel = default(use_cuda_kernel,
# torch.cuda.is_available())`, then `elif any_cuda_inputs and self.use_cuda_kernel:` before the PyTorch path).
_SPEEDUP_WORDS = frozenset({"fused", "kernel", "kernels", "triton", "flash", "xformers", "cutlass"})


@lru_cache(maxsize=4096)
def names_speedup_switch(name: Optional[str]) -> bool:
    """Whether `name` (a variable, attribute or keyword) is such a switch; never one that holds a device.
    (Asked of every keyword of every call the walk meets: names repeat, so answers are kept.)"""
    if not name or "device" in name.lower():
        return False
    return any(w in _SPEEDUP_WORDS for w in name_words(name))


def is_speedup_switch_assignment(node: ast.Assign, imports: ImportTable) -> bool:
    """`use_cuda_kernel = default(use_cuda_kernel, torch.cuda.is_available())`, `self.use_triton =
    torch.cuda.is_available()`: a CUDA check (anywhere in the value) stored in a speed-up switch."""
    if not names_speedup_switch(_single_target_name(node)):
        return False
    inside = list(walk(node.value))
    # (a call in the stored value that moves a tensor, `_MOVES`: the name holds that tensor, not a switch)
    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MOVES for n in inside):
        return False  # `sinc_kernel = batch["sinc_kernel"].cuda()`: a tensor called a kernel, moved
    return any(is_cuda_check(n, imports) for n in inside)


def _speedup_choice(node: ast.AST) -> bool:
    """`dict(fused=True)` (or `{"fused": True}`), or an empty `dict()` / `{}`: keyword arguments that only
    turn a speed-up on."""
    return _keywords_only(node, SPEEDUP_HINTS)


def _mark_speedup_flags(nodes: Sequence[ast.AST], imports: ImportTable) -> None:
    """Mark (`SPEEDUP_FLAG_ATTR`) `use_fused = fused_available and device_type == "cuda"` when every read
    of the name is a speed-up switch (`fused=use_fused`, `dict(fused=True) if use_fused else dict()`) or
    is shown (`print(f"using fused AdamW: {use_fused}")`), and one is a switch: elsewhere the plain
    optimizer runs, slower, with the same results (karpathy/llama2.c, nanoGPT)."""
    reads: Dict[str, List[ast.Name]] = {}
    switches: Set[int] = set()
    shown: Set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            reads.setdefault(node.id, []).append(node)
        elif isinstance(node, ast.keyword) and node.arg in SPEEDUP_HINTS and isinstance(node.value, ast.Name):
            switches.add(id(node.value))
        elif (
            isinstance(node, ast.IfExp)
            and isinstance(node.test, ast.Name)
            and _speedup_choice(node.body)
            and _speedup_choice(node.orelse)
        ):
            switches.add(id(node.test))
        elif isinstance(node, ast.FormattedValue) and isinstance(node.value, ast.Name):
            shown.add(id(node.value))
    if not switches:
        return
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            own = {id(n) for n in walk(node.value)}
            names = [id(n) for n in reads.get(node.targets[0].id, []) if id(n) not in own]
            if (
                any(n in switches for n in names)
                and all(n in switches or n in shown for n in names)
                and is_cuda_check(node.value, imports)
            ):
                setattr(node, SPEEDUP_FLAG_ATTR, True)


CUDA_OBJECT_ATTR = "_portcheck_cuda_object"  # set on a read of a name only ever bound to a CUDA-only call


def _mark_cuda_objects(fn: ast.AST) -> None:
    """Mark (`CUDA_OBJECT_ATTR`) every read of a name the function binds only to CUDA-only calls (`start =
    torch.cuda.Event(enable_timing=True)`): its methods (`start.record()`, `start.elapsed_time(end)`) are
    CUDA-only work too."""
    _mark_names_only_bound_to(
        list(walk(fn)),
        lambda name, value: isinstance(value, ast.Call) and _cuda_only_call(value),
        CUDA_OBJECT_ATTR,
    )


def _binding_counts(nodes: Sequence[ast.AST]) -> Dict[str, int]:
    """How many times the module (`nodes`, all of its nodes) binds each name: assignment and loop targets,
    `with ... as`, parameters, imports."""
    bound: Dict[str, int] = {}
    for node in nodes:
        targets: List[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets.extend(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
            targets.append(node.target)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            targets.extend(i.optional_vars for i in node.items if i.optional_vars is not None)
        if isinstance(node, ast.arg):  # a parameter of the same name is another binding
            bound[node.arg] = bound.get(node.arg, 0) + 1
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                local = alias.asname or alias.name.split(".", 1)[0]
                bound[local] = bound.get(local, 0) + 1
        for target in targets:
            for name in walk(target):
                if isinstance(name, ast.Name):
                    bound[name.id] = bound.get(name.id, 0) + 1
    return bound


def _is_bool(node: ast.AST, value: bool) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


_COUNT_CALLS = frozenset({"torch.cuda.device_count"})


def _asks_device_presence(value: ast.AST, imports: ImportTable) -> bool:
    """`torch.cuda.is_available()` (any CUDA check), or `torch.cuda.device_count() > 0`."""
    if is_cuda_check(value, imports):
        return True
    return (
        isinstance(value, ast.Compare)
        and isinstance(value.left, ast.Call)
        and imports.resolve(value.left.func) in _COUNT_CALLS
        and len(value.ops) == 1
        and isinstance(value.ops[0], (ast.Gt, ast.GtE, ast.NotEq))
    )


_OPTION_HOLDERS = re.compile(r"^(?:args|opt|opts|options|cfg|config|conf|hparams|flags|FLAGS|params)$")


def names_cpu(node: ast.AST) -> bool:
    """`"cpu"`, `torch.device("cpu")`."""
    if isinstance(node, ast.Constant):
        return node.value == "cpu"
    return isinstance(node, ast.Call) and len(node.args) == 1 and names_cpu(node.args[0])


def is_flag_device_choice(node: ast.AST) -> bool:
    """`"cuda" if args.cuda else "cpu"` (or `not args.no_cuda`): a command-line switch between CUDA and the
    CPU. It guards nothing: no rule reports the switch itself, and on any other accelerator the user's only
    choice is the CPU, so the CUDA arm is the lock-in, reported at its own severity."""
    if not isinstance(node, ast.IfExp):
        return False
    test = node.test.operand if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not) else node.test
    if not (
        isinstance(test, ast.Attribute)
        and _CUDA_FLAG.match(test.attr)
        and isinstance(test.value, ast.Name)
        and _OPTION_HOLDERS.match(test.value.id)
    ):
        return False
    negated = (test is not node.test) != test.attr.lower().startswith("no")  # `not args.cuda`, `args.no_cuda`
    return names_cpu(node.body if negated else node.orelse)


def and_terms(test: ast.AST) -> List[ast.AST]:
    """The terms of `a and b and c`, or `[test]` for any other test."""
    return list(test.values) if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]


_CUDA_ERROR_TEXT = re.compile(r"^CUDA (?:out of memory|error)")


def _asks_cuda_error(node: ast.Compare) -> bool:
    """`'CUDA out of memory' in str(e)`: a test of an error's text that only CUDA's runtime writes."""
    left = node.left
    return (
        len(node.ops) == 1
        and isinstance(node.ops[0], ast.In)
        and isinstance(left, ast.Constant)
        and isinstance(left.value, str)
        and bool(_CUDA_ERROR_TEXT.match(left.value))
    )


_ASKING_METHODS = frozenset({"startswith", "__contains__"})


def _asks_for_cuda(node: ast.AST) -> bool:
    """`args.device == "cuda"`, `"cuda" in device`, `device.startswith("cuda")`: a test of which device was chosen
    (`str(device).__contains__("cuda")` is `"cuda" in str(device)`, PAN.pytorch's predict.py)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _ASKING_METHODS:
        return len(node.args) == 1 and _is_cuda_string(node.args[0])
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return False
    left, right, op = node.left, node.comparators[0], node.ops[0]
    if isinstance(op, (ast.Eq, ast.Is)):
        return _is_cuda_string(left) != _is_cuda_string(right)
    return isinstance(op, ast.In) and _is_cuda_string(left) and not _is_cuda_string(right)


def is_xla_device_check(test: ast.AST) -> bool:
    """`tensor.device.type == "xla"`, alone or as one term of an `and`: the branch runs on XLA only."""
    terms = and_terms(test)
    for term in terms:
        if isinstance(term, ast.Compare) and len(term.ops) == 1 and isinstance(term.ops[0], (ast.Eq, ast.Is)):
            sides = (term.left, term.comparators[0])
            if any(isinstance(x, ast.Constant) and x.value == "xla" for x in sides):
                return True
    return False


_ROCM_NAMES = frozenset({"rocm", "hip"})


def is_rocm_check(test: ast.AST) -> bool:
    """`SYSTEM == "rocm"`, `torch.version.hip is not None`, `if torch.version.hip:` (alone or as one term
    of an `and`): the branch runs on a ROCm build only, whose `torch.cuda` calls are HIP's; another
    platform's code, which a port keeps as it is."""
    for term in and_terms(test):
        if isinstance(term, ast.Compare) and len(term.ops) == 1:
            sides = (term.left, term.comparators[0])
            if isinstance(term.ops[0], (ast.Eq, ast.Is)) and any(
                isinstance(x, ast.Constant) and isinstance(x.value, str) and x.value.lower() in _ROCM_NAMES
                for x in sides
            ):
                return True
            hip = none_operand(term, (ast.IsNot,))  # `torch.version.hip is not None`
            if hip is not None and (dotted(hip) or "").endswith("version.hip"):
                return True
        elif (dotted(term) or "").endswith("version.hip"):
            return True
    return False


def asks_complex(test: ast.AST) -> Optional[bool]:
    """Whether an `if` test asks if a tensor is complex: True for `torch.is_complex(x)`, `x.is_complex()`,
    `x.dtype.is_complex` (alone or as a term of an `and`: its branch only runs for a complex tensor), False
    for `not ...` of one (its `else` does), None for any other test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = asks_complex(test.operand)
        return None if inner is None else not inner
    for term in and_terms(test):
        if isinstance(term, ast.Call) and not term.keywords:
            func = term.func
            if isinstance(func, ast.Attribute) and func.attr == "is_complex" and len(term.args) <= 1:
                return True
        elif isinstance(term, ast.Attribute) and term.attr == "is_complex":
            return True
    return None


_FLOAT64 = frozenset({"torch.float64", "torch.double"})


def asks_float64(test: ast.AST) -> Optional[bool]:
    """Whether an `if` test asks if a tensor is float64: True for `x.dtype is torch.float64` (`==`,
    `torch.double`; alone or as a term of an `and`: its branch only runs for a float64 tensor, which it
    keeps in float64), False for `is not`/`!=` or `not ...` of one (its `else` does), None otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = asks_float64(test.operand)
        return None if inner is None else not inner
    for term in and_terms(test):
        if not (isinstance(term, ast.Compare) and len(term.ops) == 1):
            continue
        sides = (term.left, term.comparators[0])
        if any(isinstance(x, ast.Attribute) and x.attr == "dtype" for x in sides) and any(
            dotted(x) in _FLOAT64 for x in sides
        ):
            op = term.ops[0]
            if isinstance(op, (ast.Is, ast.Eq)):
                return True
            if isinstance(op, (ast.IsNot, ast.NotEq)) and len(and_terms(test)) == 1:
                return False
    return None


def _accelerators_tested(test: ast.AST) -> List[str]:
    """The non-CUDA accelerators an `if` test asks about, term by term of an `and`: an availability probe
    (`is_npu_available()`, `torch.xpu.is_available()`, `is_torch_tpu_available()`) or a comparison of a
    device type with another accelerator's string (`device.type == "mps"`). A negated term asks the
    opposite and counts for nothing."""
    terms = and_terms(test)
    found: List[str] = []
    for term in terms:
        if isinstance(term, ast.Call):
            name = probed_backend(dotted(term.func) or "")
            if name:
                found.append(name)
        elif isinstance(term, ast.Compare) and len(term.ops) == 1 and isinstance(term.ops[0], (ast.Eq, ast.Is)):
            for side in (term.left, term.comparators[0]):
                name = device_type_of(side.value) if isinstance(side, ast.Constant) else ""
                if name:
                    found.append(name)
    return found


def is_other_accelerator_only(test: ast.AST) -> bool:
    """`if is_npu_available():`, `if torch.backends.mps.is_available() and ...:`, `if device.type == "xpu":` (a
    term of an `and` asking for one accelerator that is neither a target nor CUDA): the branch runs on that
    accelerator only, another platform's code a port keeps as it is (FlashI2V's `freqs.to(torch.complex64)`
    for Ascend)."""
    asked = _accelerators_tested(test)
    return bool(asked) and not _TARGET_ACCELERATORS.intersection(asked)


_TARGET_ACCELERATORS = frozenset({"xla", "neuron"})


def is_xla_probe(test: ast.AST) -> bool:
    """`if is_torch_tpu_available():`, `if is_torch_xla_available() and ...:`, or a term that selects the XLA
    option (`if self.args.tpu_num_cores:`, `elif args.optim == OptimizerNames.ADAMW_TORCH_XLA:`,
    `if DebugOption.TPU_METRICS_DEBUG in self.args.debug:`): the branch runs with torch_xla only."""
    if "xla" in _accelerators_tested(test):
        return True
    terms = and_terms(test)
    return any(_xla_option(t) for t in terms)


_XLA_WORDS = frozenset({"xla", "tpu"})
_OPTION_QUESTION = re.compile(r"^_?(?:is|use|using|on|run_on|running_on)_")


def has_xla_word(name: str) -> bool:
    """`tpu_num_cores`, `ADAMW_TORCH_XLA`, `_save_tpu`: a name with the word XLA or TPU in it."""
    return any(w in _XLA_WORDS for w in re.split(r"[^a-z0-9]+", name.lower()))


def _xla_option(term: ast.AST) -> bool:
    """One term of a test that asks for the XLA option: a name, attribute or config key with the word XLA
    or TPU in it (`args.tpu_num_cores`, `fsdp_config["xla"]`, a call `is_xla()`), or a comparison with one
    (`optim == Names.ADAMW_TORCH_XLA`, `Option.TPU_METRICS_DEBUG in debug`). A negated term asks the opposite."""
    if isinstance(term, ast.Name):
        return has_xla_word(term.id)
    if isinstance(term, ast.Attribute):
        return has_xla_word(term.attr)
    if isinstance(term, ast.Subscript):
        key = term.slice
        return isinstance(key, ast.Constant) and isinstance(key.value, str) and has_xla_word(key.value)
    if isinstance(term, ast.Call) and not term.args and not term.keywords:
        # a project's own question (mmf's `is_xla()`, `use_tpu()`): named for the option it asks about
        last = _last_name(term.func)
        return bool(_OPTION_QUESTION.match(last)) and has_xla_word(last)
    if isinstance(term, ast.Compare) and len(term.ops) == 1 and isinstance(term.ops[0], (ast.Eq, ast.Is, ast.In)):
        # `x in Names.TPU_DEBUG` asks about x; `Names.TPU_DEBUG in x` and `a == Names.XLA` about the option.
        sides: List[ast.AST] = [term.left] if isinstance(term.ops[0], ast.In) else [term.left, term.comparators[0]]
        return any(isinstance(x, (ast.Name, ast.Attribute)) and _xla_option(x) for x in sides)
    return False


def is_negated_xla_option(test: ast.AST) -> bool:
    """`if not self.args.fsdp_config["xla"]: ... else: <XLA path>`: the `else` runs with torch_xla only."""
    return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and is_xla_probe(test.operand)


def dispatch_arms(node: ast.If, imports: ImportTable) -> bool:
    """Whether `node` belongs to an `if`/`elif` chain that dispatches on the accelerator: one arm asks for
    CUDA, others for several other accelerators (`if is_npu_available(): ... elif torch.cuda.is_available():
    ... elif is_xpu_available(): ... else: cpu`), as many as make the score call a project device-generic.
    A chain of CUDA and one other (`if cuda: ... elif mps: ... else: cpu`) is no such dispatch: every
    other accelerator still falls back to the CPU. The answer is kept on every `if` of the chain, which the
    walk meets from the top, so an `elif` knows the arms above it."""
    known = getattr(node, DISPATCH_ATTR, None)
    if known is not None:
        return known
    chain = [node]
    while len(chain[-1].orelse) == 1 and isinstance(chain[-1].orelse[0], ast.If):
        chain.append(chain[-1].orelse[0])
    others = {name for arm in chain if not is_cuda_check(arm.test, imports) for name in _accelerators_tested(arm.test)}
    found = (
        len(chain) > 2
        and device_generic(frozenset(others), SEVERAL_BACKENDS)
        and any(is_cuda_check(arm.test, imports) and not is_negative_cuda_check(arm.test, imports) for arm in chain)
    )
    for arm in chain:
        setattr(arm, DISPATCH_ATTR, found)
    return found


DISPATCH_ATTR = "_portcheck_dispatch"
_PRIVATEUSE1_ABOVE = "_portcheck_privateuse1_above"


def default_after_privateuse1(node: ast.If) -> bool:
    """Whether `node` is the last `if` of a chain with an arm for the PrivateUse1 backend, and has an `else`:
    `if dev == "xpu": ... elif dev == torch._C._get_privateuse1_backend_name(): ... else:
    torch.cuda.current_device()` (torch's DataLoader, copied in torchdata). Out-of-tree accelerators,
    Neuron among them, register as PrivateUse1 and take that arm; the default arm is CUDA's own. The walk
    meets the chain from the top, so each `elif` is told whether an arm above it asks."""
    above = getattr(node, _PRIVATEUSE1_ABOVE, False) or any(
        isinstance(term, ast.Compare)
        and any(
            isinstance(side, ast.Call) and (dotted(side.func) or "").endswith("_get_privateuse1_backend_name")
            for side in (term.left, *term.comparators)
        )
        for term in and_terms(node.test)
    )
    if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        setattr(node.orelse[0], _PRIVATEUSE1_ABOVE, above)
        return False
    return above and bool(node.orelse)


def _launches_op(stmt: ast.AST) -> bool:
    """A statement that runs a custom op: `Fn.apply(...)` of a `torch.autograd.Function` class, a call
    that only works with CUDA (`_C.op(...)`, `fused_cuda.run(...)`), or one named for Triton
    (`dequant_nvfp4_triton(...)`)."""
    if _cuda_only_call(stmt):
        return True
    for sub in walk(stmt):
        if not isinstance(sub, ast.Call):
            continue
        func = sub.func
        if isinstance(func, ast.Attribute) and func.attr == "apply" and isinstance(func.value, ast.Name):
            if func.value.id[:1].isupper():
                return True
        name = dotted(func) or ""
        if _TRITON_NAMED.search(name.rsplit(".", 1)[-1]):
            return True
    return False


_TRITON_NAMED = re.compile(r"(?:^|_)triton(?:_|$)", re.IGNORECASE)


def _returns_launch(stmts: Sequence[ast.AST]) -> bool:
    """Whether `stmts` return a custom op's result (`return dequant_triton(w)`, in a nested `if` too)."""
    return any(
        isinstance(sub, ast.Return) and sub.value is not None and _launches_op(sub.value)
        for stmt in stmts
        for sub in walk(stmt)
    )


def is_kernel_eligibility(node: ast.AST, imports: ImportTable) -> bool:
    """`if torch.cuda.is_available() and value.is_cuda: out = KernelFunction.apply(value, ...) else: out =
    reference(value, ...)`: the test asks where the tensor already is, picks a CUDA kernel for a CUDA
    tensor, and otherwise runs the reference path on the tensor's own device. Nothing falls back to the
    CPU and nothing needs changing; the kernel is reported where it is defined. Without an `else`, the
    body returns the kernel's result (`if w.is_cuda: return dequant_triton(w)`) and the code after the
    `if` is the reference path."""
    if not isinstance(node, ast.If) or not node.body:
        return False
    terms = and_terms(node.test)
    cuda = [t for t in terms if is_cuda_check(t, imports) and not is_negative_cuda_check(t, imports)]
    # `platform.system() == "Linux" and torch.cuda.is_available() and device != "cpu"` (GPEN's fused ops):
    # the tensor's device is asked too, and the platform only narrows where the kernel runs
    others = [t for t in terms if not any(t is c for c in cuda)]
    if not cuda or not all(_not_cpu(t) or _asks_platform(t) for t in others):
        return False
    if not any(isinstance(t, ast.Attribute) and t.attr == "is_cuda" for t in terms) and not any(
        _not_cpu(t) for t in others
    ):
        return False
    if not node.orelse:
        return _returns_launch(node.body)
    return any(_launches_op(s) for s in node.body)


def _not_cpu(term: ast.AST) -> bool:
    """`device != "cpu"`, `x.device.type != "cpu"`: the tensor is on an accelerator."""
    return (
        isinstance(term, ast.Compare)
        and len(term.ops) == 1
        and isinstance(term.ops[0], ast.NotEq)
        and any(isinstance(c, ast.Constant) and c.value == "cpu" for c in (term.left, term.comparators[0]))
    )


def _asks_platform(term: ast.AST) -> bool:
    """`platform.system() == "Linux"`, `sys.platform != "win32"`, `os.name == "posix"`: the operating system."""
    if not isinstance(term, ast.Compare):
        return False
    names = set(_names_in(term))
    return {"platform", "system"} <= names or ("sys" in names and "platform" in names) or {"os", "name"} <= names


def _moves(stmts: Sequence[ast.AST], method: str) -> bool:
    """Whether `stmts` move a value with `.cuda(...)` (`method` "cuda"), or with `.to(device)` to a device
    held in a name or attribute, not a literal (`method` "to")."""
    for stmt in stmts:
        for n in walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == method:
                if method == "cuda" or (n.args and isinstance(n.args[0], (ast.Name, ast.Attribute))):
                    return True
    return False


def is_device_move_choice(node: ast.AST, imports: ImportTable) -> bool:
    """`if args.gpu is not None and device.type == "cuda": x = x.cuda(args.gpu, non_blocking=True) else: x =
    x.to(device)`: the check only keeps `.cuda()` (reported on its own) where it works, and the `else` moves
    the data to the resolved device on any other: nothing falls back to the CPU. (A check that keeps a
    portable speed-up to CUDA, `x.pin_memory().to(device, non_blocking=True)`, is no such choice: the port
    extends it.)"""
    if not isinstance(node, ast.If) or not node.orelse or not node.body:
        return False
    if not is_cuda_check(node.test, imports) or is_negative_cuda_check(node.test, imports):
        return False
    return _moves(node.body, "cuda") and _moves(node.orelse, "to")


def is_copy_guard(node: Union[ast.If, ast.IfExp]) -> bool:
    """`x.cuda(non_blocking=True) if not x.is_cuda else x` (street_gaussians' `train.py`), `x if x.is_cuda else
    x.to(d)`, or `if not x.is_cuda: y = x.cuda()` with nothing else in the branch: the test only skips moving a
    value that is there already; the move beside it is the finding."""
    test = node.test
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if isinstance(test, ast.UnaryOp) and negated else test
    if not (isinstance(inner, ast.Attribute) and inner.attr == "is_cuda"):
        return False
    value = inner.value
    if isinstance(node, ast.IfExp):
        moved, kept = (node.body, node.orelse) if negated else (node.orelse, node.body)
        return _moves_value(moved, value) and ast.dump(kept) == ast.dump(value)
    return (
        isinstance(node, ast.If)
        and negated
        and not node.orelse
        and len(node.body) == 1
        and isinstance(node.body[0], ast.Assign)
        and _moves_value(node.body[0].value, value)
    )


def _moves_value(expr: ast.AST, value: ast.AST) -> bool:
    """`value.cuda(...)` or `value.to(...)`."""
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in ("cuda", "to")
        and ast.dump(expr.func.value) == ast.dump(value)
    )


def is_load_location_choice(node: ast.AST, imports: ImportTable) -> bool:
    """`if torch.cuda.is_available(): ckpt = load(f, map_location=lambda s, loc: s.cuda(i)) else: ckpt = load(f)`
    (mmcv's `EpochBasedRunner.resume`), or `map_location="cpu" if not torch.cuda.is_available() else None`: the
    check picks where a checkpoint's tensors are loaded before they are copied into the model, which works
    on any device. Nothing falls back to the CPU; a hard-coded CUDA location is reported on its own."""
    if isinstance(node, ast.IfExp):
        return bool(getattr(node, LOAD_LOCATION_ATTR, False)) and is_cuda_check(node.test, imports)
    if not isinstance(node, ast.If) or not node.body or not node.orelse or not is_cuda_check(node.test, imports):
        return False
    first, second = node.body[-1], node.orelse[-1]
    located = [
        n for side in (first, second) for n in walk(side) if isinstance(n, ast.keyword) and n.arg == "map_location"
    ]
    return bool(located) and _without_location(first) == _without_location(second)


LOAD_LOCATION_ATTR = "_portcheck_load_location"  # on the value of a `map_location=` keyword


def mark_load_locations(module: ast.Module) -> None:
    """Mark (`LOAD_LOCATION_ATTR`) `map_location = None if torch.cuda.is_available() else "cpu"` when every read
    of the name in its scope is a `map_location=` value (deep-person-reid's `load_checkpoint`): the choice is
    where a checkpoint loads, as it is written inline. Either may be wrapped in `torch.device(...)` (terratorch's
    `device = torch.device("cuda" if ... else "cpu")`, then `map_location=torch.device(device)`)."""
    scopes: List[ast.AST] = [module] + [n for n in module_nodes(module) if isinstance(n, _FUNCTION_DEFS)]
    for scope in scopes:
        nodes = own_nodes(scope)
        located = {
            id(_unwrapped_device(n.value)) for n in nodes if isinstance(n, ast.keyword) and n.arg == "map_location"
        }
        for node in nodes:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
                continue
            choice = _unwrapped_device(node.value)
            if isinstance(choice, ast.IfExp) and _only_read_in(nodes, node.targets[0].id, located):
                setattr(choice, LOAD_LOCATION_ATTR, True)


def _unwrapped_device(node: ast.AST) -> ast.AST:
    """The argument of `torch.device(x)` (one positional argument), else the node itself."""
    if (
        isinstance(node, ast.Call)
        and dotted(node.func) in ("torch.device", "device")
        and len(node.args) == 1
        and not node.keywords
    ):
        return node.args[0]
    return node


def _only_read_in(nodes: Sequence[ast.AST], name: str, places: Set[int]) -> bool:
    """Whether `nodes` read `name`, and every read is one of `places` (ids of nodes)."""
    reads = [n for n in nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return bool(reads) and all(id(r) in places for r in reads)


class _DropLocation(ast.NodeTransformer):
    def visit_keyword(self, node: ast.keyword) -> Optional[ast.keyword]:
        return None if node.arg == "map_location" else node


def _without_location(stmt: ast.stmt) -> str:
    """The statement's dump with every `map_location=` keyword left out (on a copy: the tree is walked on)."""
    return ast.dump(_DropLocation().visit(copy.deepcopy(stmt)))


def is_optional_library(node: ast.AST, imports: ImportTable) -> bool:
    """`if use_deepspeed and torch.cuda.is_available(): import deepspeed; self.engine =
    deepspeed.init_inference(self.model) else: self.model = self.model.eval()`: the check switches on a
    library it imports in its CUDA branch (any but torch; DeepSpeed's inference kernels here) and picks
    no device on either side; off CUDA the plain path runs on the model's own device. Nothing falls back
    to the CPU; the library, if it is CUDA lock-in, is reported where it is imported."""
    if not isinstance(node, ast.If) or not is_cuda_check(node.test, imports):
        return False
    if is_negative_cuda_check(node.test, imports):
        return False
    imported = any(
        isinstance(sub, ast.Import) and all(a.name.split(".", 1)[0] != "torch" for a in sub.names)
        or isinstance(sub, ast.ImportFrom) and not sub.level and (sub.module or "").split(".", 1)[0] != "torch"
        for stmt in node.body
        for sub in import_statements(stmt)
    )
    return imported and not _picks_device(node.body) and not _picks_device(node.orelse)


# A name that may hold a device or a device-bound object: `gpu_device`, `model_cpu`, `map_location`.
_DEVICE_HOLDER = re.compile(r"(?i)device|(?:^|_)(?:dev|devs|gpu|gpus|cpu|cuda|place|ctx|loc|location)(?:$|_|\d)")


_SETTINGS_NAME = re.compile(r"(?i)(?:config|cfg|settings|kernels?|backends?|impl|fn|func)$")


def is_runtime_provider_choice(node: ast.AST, imports: ImportTable) -> bool:
    """`'CUDAExecutionProvider' if args.device == 'cuda' else 'CPUExecutionProvider'` (V-Express's
    insightface session), and its `provider_options=[{'device_id': gpu}] if ... else []`: the check picks an
    ONNX Runtime provider for a model torch does not run. The CUDA provider is reported where it is named
    (PKG010); the CPU provider is what other devices have, so nothing falls back from the port's device."""
    if not (isinstance(node, ast.IfExp) and is_cuda_check(node.test, imports)):
        return False
    return all(_provider_entries(side) for side in (node.body, node.orelse))


def _provider_entries(node: ast.AST) -> bool:
    """A provider name, a list of them, a list of provider options (`{'device_id': 0}`), or an empty list."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.endswith("ExecutionProvider")
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(
            _provider_entries(e)
            or isinstance(e, ast.Dict)
            and all(isinstance(k, ast.Constant) and k.value in ("device_id", "gpu_mem_limit") for k in e.keys)
            for e in node.elts
        )
    return False


def is_graph_constant_patch(node: ast.AST) -> bool:
    """`if "value" in n.attributeNames() and str(n["value"]).startswith("cuda"): n.copyAttributes(device_node)`
    (CLIP's `load(..., jit=True)`, copied into many repositories): the check finds the CUDA constants of a
    traced TorchScript graph to replace them with the device asked for, which is what makes the graph run
    elsewhere; it picks no device."""
    return isinstance(node, ast.If) and any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "copyAttributes"
        for stmt in node.body
        for n in walk(stmt)
    )


def is_cuda_state_check(node: ast.AST, imports: ImportTable) -> bool:
    """`if torch.cuda._initialized:` (torch's own `checkpoint.py`, copied into many repositories), `if
    len(torch.cuda.default_generators) > 0:` (mmpretrain's revvit), `if torch.cuda.is_initialized():`: the check
    asks whether there is CUDA state to save or reuse (random number generators), which elsewhere there is
    not; it picks no device, and the other side (the CPU generator, or nothing) is what every other device runs."""
    if not isinstance(node, (ast.If, ast.IfExp)):
        return False
    for sub in walk(node.test):
        if isinstance(sub, ast.Attribute) and (imports.resolve(sub) or "") in CUDA_CHECK_ATTRIBUTES:
            return True
        if isinstance(sub, ast.Call) and imports.resolve(sub.func) == "torch.cuda.is_initialized":
            return True
    return False


def is_device_passthrough(node: ast.AST, imports: ImportTable) -> bool:
    """A comparison of a device with "cuda" whose other side hands that same device on: `f'{args.device}:{gpu}'
    if args.device == 'cuda' else args.device` (only CUDA's index is added), `if device != "cuda":
    kwargs["device_map"] = {"": device}` (ml-fastvlm), the `if`/`else` of whisperX's `device_vad`. Any
    other device passes through as it is (`--device neuron` works): the check is no fallback."""
    if not (
        isinstance(node, (ast.If, ast.IfExp))
        and isinstance(node.test, ast.Compare)
        and len(node.test.ops) == 1
        and isinstance(node.test.ops[0], (ast.Eq, ast.NotEq))
        and is_cuda_check(node.test, imports)
    ):
        return False
    compared = [side for side in [node.test.left, *node.test.comparators] if not _is_cuda_string(side)]
    if len(compared) != 1 or not isinstance(compared[0], (ast.Name, ast.Attribute)):
        return False
    device = ast.dump(compared[0])
    other = node.body if isinstance(node.test.ops[0], ast.NotEq) else node.orelse
    sides = other if isinstance(other, list) else [other]
    if not sides or any(isinstance(n, ast.Raise) for s in sides for n in walk(s)):
        return False  # `if device != "cuda": raise ValueError(device)`: a requirement, stated
    return any(
        ast.dump(n) == device and isinstance(getattr(n, "ctx", None), ast.Load)
        for s in sides
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and is_message_call(s.value))
        for n in walk(s)
    )


def is_implementation_choice(node: ast.AST, imports: ImportTable) -> bool:
    """`attn_func = xformers_attn if torch.cuda.is_available() else torch_attn` (open_lm), or the same as an
    `if`/`else` that binds one name: the check picks which function runs, and the other one runs on any
    device. Nothing falls back to the CPU; the CUDA-only side is reported where it is defined or imported.
    Names that may hold a device (`gpu_device`, `model_cpu`) are a device choice, not this."""
    if not isinstance(node, (ast.If, ast.IfExp)) or not node.orelse or not is_cuda_check(node.test, imports):
        return False
    if isinstance(node, ast.IfExp):
        sides = [node.body, node.orelse]
    else:
        if len(node.body) != 1 or len(node.orelse) != 1:
            return _binds_implementation(node, imports)
        if _imports_or_none(node.body[0], node.orelse[0]):
            return True
        first, second = _single_assignment(node.body[0]), _single_assignment(node.orelse[0])
        if first is None or second is None or first[0] != second[0]:
            return False
        sides = [cast(ast.expr, first[1]), cast(ast.expr, second[1])]
    if all(isinstance(side, ast.Call) for side in sides):
        calls = cast(List[ast.Call], sides)
        return _calls_one_of_two(calls, imports) or _replicates_or_runs(calls)
    return _two_implementations(sides, imports)


def _two_implementations(sides: Sequence[ast.expr], imports: ImportTable) -> bool:
    """Two names, neither one that may hold a device nor torch's own, for what each side of a check binds."""
    # `self.cuda_config if is_cuda else self.cpu_config` (lucidrains' attention): settings named for the
    # device they suit are settings, not a device
    names = [
        side.id if isinstance(side, ast.Name) else side.attr
        for side in sides
        if isinstance(side, ast.Name) or isinstance(side, ast.Attribute) and _SETTINGS_NAME.search(side.attr)
    ]
    return (
        len(names) == 2
        and names[0] != names[1]
        and not any(_DEVICE_HOLDER.search(name) and not _SETTINGS_NAME.search(name) for name in names)
        and not any((imports.resolve(side) or "").startswith("torch.") for side in sides)
    )


def _binds_implementation(node: ast.If, imports: ImportTable) -> bool:
    """`if torch.cuda.is_available() and pred.is_cuda: ...; calculate = sigmoid_focal_loss` / `else: ...;
    calculate = py_sigmoid_focal_loss` (mmseg's focal loss): arms of several statements that bind one name to
    two functions, and pick no device besides."""
    if _picks_device(node.body) or _picks_device(node.orelse):
        return False

    def bound(stmts: Sequence[ast.stmt]) -> Dict[str, ast.expr]:
        return {
            t.id: s.value
            for s in stmts
            if isinstance(s, ast.Assign) and isinstance(s.value, (ast.Name, ast.Attribute))
            for t in s.targets
            if isinstance(t, ast.Name)
        }

    body, other = bound(node.body), bound(node.orelse)
    return any(_two_implementations([body[n], other[n]], imports) for n in body.keys() & other.keys())


_MOVING_CALLEES = frozenset({"cuda", "cpu", "to", "device", "Tensor", "FloatTensor", "LongTensor", "tensor"})


def _imports_or_none(imported: ast.stmt, other: ast.stmt) -> bool:
    """`if torch.cuda.is_available(): from ..functions import MSDeformAttnFunction` / `else:
    MSDeformAttnFunction = None` (Deformable DETR's op in OneFormer and Mask2Former): the CUDA op is imported
    where it can be; the code that uses it picks a path of its own. No device is chosen."""
    if not isinstance(imported, (ast.Import, ast.ImportFrom)) or len(imported.names) != 1:
        return False
    bound = imported.names[0].asname or imported.names[0].name.split(".", 1)[0]
    return (
        isinstance(other, ast.Assign)
        and len(other.targets) == 1
        and isinstance(other.targets[0], ast.Name)
        and other.targets[0].id == bound
        and isinstance(other.value, ast.Constant)
        and other.value.value is None
    )


def _calls_one_of_two(calls: List[ast.Call], imports: ImportTable) -> bool:
    """`connected_components_gpu(target) if target.is_cuda else connected_components_cpu(target)` (anomalib's
    PRO metric): two functions of the project called with the same arguments, one for CUDA and one for the rest;
    or the arguments of one among the other's (Deformable DETR's `MSDeformAttnFunction.apply(value, shapes,
    level_start_index, locations, weights, im2col_step)` or `ms_deform_attn_core_pytorch(value, shapes,
    locations, weights)`). (`x.cuda() if ... else x.cpu()` moves a value: not this.)"""
    calls = _peeled(calls)
    first, second = (
        {ast.dump(_plain(a)) for a in c.args} | {f"{k.arg}={ast.dump(_plain(k.value))}" for k in c.keywords}
        for c in calls
    )
    if first != second and not ((first <= second or second <= first) and first & second):
        return False
    names = [_last_name(c.func) for c in calls]
    return (
        all(names)
        and names[0] != names[1]
        and not any(name in _MOVING_CALLEES for name in names)
        and not any((imports.resolve(c.func) or "").startswith("torch.") for c in calls)
    )


def _peeled(calls: List[ast.Call]) -> List[ast.Call]:
    """The two calls without a conversion both sides apply alike (`kernel(x, n).to(torch.int64)` and
    `reference(x, n).to(torch.int64)`, CamLiFlow's furthest point sampling): the calls that choose."""
    while all(isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Call) for c in calls):
        first, second = (cast(ast.Attribute, c.func) for c in calls)
        if first.attr != second.attr or [ast.dump(a) for a in calls[0].args] != [ast.dump(a) for a in calls[1].args]:
            break
        calls = [cast(ast.Call, first.value), cast(ast.Call, second.value)]
    return calls


# Methods that hand an argument over in another layout or dtype, the same value (`xyz.contiguous()`).
_LAYOUT_METHODS = frozenset({"contiguous", "float", "int", "long", "detach", "clone"})


def _plain(arg: ast.expr) -> ast.expr:
    """`xyz.contiguous()` -> `xyz`: an argument without a layout or dtype conversion."""
    while (
        isinstance(arg, ast.Call)
        and not arg.args
        and not arg.keywords
        and isinstance(arg.func, ast.Attribute)
        and arg.func.attr in _LAYOUT_METHODS
    ):
        arg = arg.func.value
    return arg


def _replicates_or_runs(calls: List[ast.Call]) -> bool:
    """`nn.parallel.data_parallel(self.model, input, self.gpu_ids) if input.is_cuda else self.model(input)` (the
    pix2pix generators and their copies): the same module, replicated over CUDA devices or run as it is."""
    wrapped, direct = calls
    return (
        _last_name(wrapped.func) == "data_parallel"
        and len(wrapped.args) >= 2
        and ast.dump(wrapped.args[0]) == ast.dump(direct.func)
        and [ast.dump(a) for a in direct.args] == [ast.dump(wrapped.args[1])]
    )


def _single_assignment(stmt: ast.AST) -> Optional[Tuple[str, ast.AST]]:
    """(what `stmt` assigns to, the value) for a one-target assignment or a `return` of a value, else None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        return ast.dump(stmt.targets[0]), stmt.value
    if isinstance(stmt, ast.Return) and stmt.value is not None:
        return "return", stmt.value
    return None


def _picks_device(stmts: Sequence[ast.AST]) -> bool:
    """Whether `stmts` name or move to a device: a device string, `torch.device(...)`, `.to(...)`,
    `.cuda()`, `.cpu()`, a `device=` keyword."""
    for stmt in stmts:
        for sub in walk(stmt):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _DEVICE_WORD.match(sub.value):
                return True
            if isinstance(sub, ast.keyword) and sub.arg in ("device", "device_map"):
                return True
            if isinstance(sub, ast.Call):
                func = sub.func
                if isinstance(func, ast.Attribute) and func.attr in ("to", "cuda", "cpu", "device"):
                    return True
    return False


_DEVICE_WORD = re.compile(r"^(?:cpu|cuda|mps|xla|xpu|neuron|meta)(?::\d+)?$")


def _answers_no(stmt: ast.AST) -> bool:
    """`return False`, `return None`, `return`, or `return "varlen attention requires a CUDA device"`: an
    answer of "not here" (a reason is a message, with a space; `return "cpu"` is a device, and no answer)."""
    if not isinstance(stmt, ast.Return):
        return False
    value = stmt.value
    if value is None or isinstance(value, ast.JoinedStr):
        return True
    if not isinstance(value, ast.Constant):
        return False
    return value.value is None or value.value is False or (isinstance(value.value, str) and " " in value.value)


def is_device_exit(node: ast.AST, imports: ImportTable) -> bool:
    """`if input.device.type != "cuda": return False`, `if not x.is_cuda: return False`, `if device !=
    "cuda": return None`, `if x.device.type != "cuda": return "needs a CUDA device"`: a predicate or probe
    that answers "not here" for a device or tensor that is not CUDA, so its caller takes the portable path
    on its own device. Nothing falls back to the CPU and nothing needs changing. (An availability probe,
    `if not torch.cuda.is_available(): return None`, asks about the machine, not a device: not this.)"""
    if not isinstance(node, ast.If) or node.orelse or len(node.body) != 1 or not _answers_no(node.body[0]):
        return False
    if not is_negative_cuda_check(node.test, imports):
        return False
    return any(
        (isinstance(n, ast.Attribute) and n.attr == "is_cuda")
        or (
            isinstance(n, ast.Compare)
            and any(isinstance(c, ast.Constant) and c.value == "cuda" for c in [n.left, *n.comparators])
        )
        for n in walk(node.test)
    )


ALTERNATIVE_NOTE = (
    "lowered one level: a flag switches this library on, and the `else` branch does the same work without it"
)


def is_switched_alternative(node: ast.If) -> bool:
    """`if fused_opt: from apex.optimizers import FusedSGD; opt = FusedSGD(...)` / `else: opt = SGD(...)`
    (imaginaire's `get_optimizer`): a flag (a name or an attribute, no CUDA check) switches on a library the
    branch imports, and the `else` binds the same names without it. A run that leaves the flag off never
    imports the library; the port can keep that path."""
    if not isinstance(node.test, (ast.Name, ast.Attribute)) or not node.orelse:
        return False
    if not any(m.split(".", 1)[0] != "torch" for m in imported_modules(node.body)):
        return False
    if any(imported_modules(node.orelse)):
        return False
    bound, other = _assigned_here(node.body), _assigned_here(node.orelse)
    return bool(bound) and bound == other


def _assigned_here(stmts: Sequence[ast.stmt]) -> Set[str]:
    """What `stmts` assign at their own level (`opt`, `self.opt`)."""
    return {ast.dump(t) for s in stmts if isinstance(s, ast.Assign) for t in s.targets}


REPLICATION_NOTE = (
    "lowered one level: the count only decides whether to wrap the model in `DataParallel`, which replicates"
    " over CUDA devices; elsewhere the model runs as it is, on one device"
)


def is_replication_choice(node: ast.AST) -> bool:
    """`if torch.cuda.device_count() > 1: model = torch.nn.DataParallel(model)` (or a name bound to the count:
    `mark_count_tests`): the count only picks CUDA's in-process replication. Elsewhere the single-device
    path runs; the port replaces the wrap (with DDP), and the count with it."""
    return (
        isinstance(node, ast.If)
        and ("device_count" in _names_in(node.test) or getattr(node, COUNT_TEST_ATTR, False))
        and all(_display_only(s) for s in node.orelse)
        and any(_wraps_for_gpus(s) for s in node.body)
        and all(_wraps_for_gpus(s) or _display_only(s) for s in node.body)
    )


def is_cuda_precondition(node: ast.AST, imports: ImportTable) -> bool:
    """`if "cuda" in device.type: assert gpu, "inference not supported on GPU"`: a CUDA check whose only
    work is to assert what the CUDA path needs. Elsewhere the asserts are skipped; nothing falls back."""
    return (
        isinstance(node, ast.If)
        and not node.orelse
        and all(isinstance(s, ast.Assert) for s in node.body)
        and is_cuda_check(node.test, imports)
        and not is_negative_cuda_check(node.test, imports)
    )


def asks_off_cuda(test: ast.AST, imports: ImportTable) -> bool:
    """`not x.is_cuda`, `not index.is_cuda and not value.is_cuda`: every term asks that CUDA is not in use."""
    return is_negative_cuda_check(test, imports) or all(is_negative_cuda_check(t, imports) for t in and_terms(test))


def is_cuda_requirement(node: ast.AST, imports: ImportTable) -> bool:
    """`if not torch.cuda.is_available(): raise ...` (with or without an `else`, the CUDA path; diffusers'
    `elif not torch.cuda.is_available(): raise ValueError(...)` before its xformers check),
    `assert torch.cuda.is_available(), ...`, `assert has_apex and torch.cuda.is_available()`: the check
    states that CUDA is needed and stops with an error where it is absent. Nothing falls back silently."""
    if isinstance(node, ast.Assert):
        return is_cuda_check(node.test, imports) and not asks_off_cuda(node.test, imports)
    if not isinstance(node, ast.If):
        return False
    rest = node.orelse
    while len(rest) == 1 and isinstance(rest[0], ast.If) and _OTHER_ACCELERATOR.search(ast.unparse(rest[0].test)):
        rest = rest[0].orelse  # `elif SYSTEM == "ipex": <XPU path>` (text-generation-inference): another accelerator
    last = rest[0] if len(rest) == 1 else None
    if isinstance(last, ast.If) and not last.orelse and is_negative_cuda_check(last.test, imports):
        rest = last.body  # `elif one.is_cuda == False: raise NotImplementedError()` (pytorch-pwc's correlation)
    if (
        ends_the_run(rest)
        and all(_display_only(s) for s in rest[:-1])
        and is_cuda_check(node.test, imports)
        and not is_negative_cuda_check(node.test, imports)
    ):
        return True  # `if torch.cuda.is_available(): <CUDA build> else: raise ValueError("no CUDA")`
    return (
        # a `raise`, or an exit (pdarts: `logging.info('No GPU device available')`, then `sys.exit(1)`)
        ends_the_run(node.body)
        and all(is_negative_cuda_check(t, imports) or _excludes_other_device(t) for t in and_terms(node.test))
        and any(is_negative_cuda_check(t, imports) for t in and_terms(node.test))
    )


_OTHER_ACCELERATOR = re.compile(r"\b(?:xpu|npu|mps|hpu|mlu|musa|ipex|rocm|hip|neuron|xla|tpu)\b", re.IGNORECASE)


def _excludes_other_device(term: ast.AST) -> bool:
    """`device.type != "xpu"`: a term that leaves out another accelerator (`if device.type != "cuda" and
    device.type != "xpu": raise ...` requires CUDA or XPU)."""
    return (
        isinstance(term, ast.Compare)
        and len(term.ops) == 1
        and isinstance(term.ops[0], ast.NotEq)
        and any(isinstance(c, ast.Constant) and device_type_of(c.value) for c in (term.left, term.comparators[0]))
    )


def is_build_choice(node: ast.AST, imports: ImportTable) -> bool:
    """`if CUDA_HOME is not None and torch.cuda.is_available(): extension = CUDAExtension ... else:
    extension = CppExtension`: a build condition that picks the CUDA build where the toolkit is, and has
    a build without it. What the condition reads is no more severe than the CUDA build it selects."""
    if not isinstance(node, (ast.If, ast.IfExp)) or not node.orelse or not is_cuda_check(node.test, imports):
        return False
    if _spells(node.test, "CUDA_HOME") or any(
        isinstance(n, ast.Constant) and n.value == "FORCE_CUDA" for n in walk(node.test)
    ):
        return True
    return builds_cpp_otherwise(node)


def is_toolkit_build(node: ast.AST, imports: ImportTable) -> bool:
    """`if CUDA_HOME:` (or `if CUDA_HOME is not None:`) around a `CUDAExtension(...)` and nothing else
    (zju3dv/instant-nvr's vendored torchsearchsorted, whose `CppExtension` is built either way): the CUDA build is
    made only where the toolkit is, and the package has a build without it."""
    if not isinstance(node, ast.If) or node.orelse:
        return False
    test = node.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot):
        test = test.left
    if imports.resolve(test) != "torch.utils.cpp_extension.CUDA_HOME":
        return False
    return _spells(node.body, "CUDAExtension")


def builds_cpp_otherwise(node: Union[ast.If, ast.IfExp]) -> bool:
    """`if torch.cuda.is_available() or os.getenv('FORCE_CUDA') == '1': extension = CUDAExtension ...
    else: extension = CppExtension` (BasicSR's setup.py): a build choice whose other side builds the op
    for the CPU. Nothing runs on a device here: the check picks what to compile."""
    return _spells(node.body, "CUDAExtension") and _spells(node.orelse, "CppExtension")


DEPLOYMENT_CODE_NOTE = (
    "lowered to info: in `{name}`, TensorRT deployment code (NVIDIA-only by design); a port replaces that path"
    " (torch-neuronx, ONNX Runtime) rather than changing it"
)


MODEL_PARALLEL_NOTE = (
    "lowered to info: Hugging Face's naive model parallelism (`parallelize()` and the `if self.model_parallel:`"
    " branches it switches on), deprecated and removed in transformers 5; it runs only after a call of"
    " `parallelize()`, and a port leaves it as it is"
)
_MODEL_PARALLEL_METHODS = frozenset({"parallelize", "deparallelize"})


def is_model_parallel_method(node: ast.AST) -> bool:
    """`def parallelize(self, device_map=None):` (or `deparallelize`) that sets `self.model_parallel`: the naive
    model parallelism of Hugging Face's T5, GPT-2 and GPT-J, copied into many projects (Vchitect-2.0's
    `modeling_t5.py`, VL-T5, Atlas)."""
    return (
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name in _MODEL_PARALLEL_METHODS
        and any(
            isinstance(n, ast.Attribute) and n.attr == "model_parallel" and isinstance(n.ctx, ast.Store)
            for n in walk(node)
        )
    )


def asks_model_parallel(test: ast.AST) -> bool:
    """`if self.model_parallel:` (alone or in an `and`): true only after `parallelize()`."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    return any(
        isinstance(p, ast.Attribute) and p.attr == "model_parallel" and isinstance(p.value, ast.Name)
        and p.value.id == "self"
        for p in parts
    )


def deployment_definition(node: ast.AST) -> str:
    """The name of a class or function named for TensorRT (`TrtContextWrapper`, `build_trt_engine`), or ""."""
    name = getattr(node, "name", "")
    return name if is_deployment_name(name) else ""


_BUILD_INPUT = re.compile(r"\.(?:cu|cuh|c|cc|cpp|cxx|h|hpp|o|so|a)$|^WITH_CUDA$")


def is_source_selection(node: ast.AST, imports: ImportTable) -> bool:
    """`if torch.cuda.is_available(): Sources += ['src/corr_cuda.c']; Defines += [('WITH_CUDA', None)]` (an old
    `torch.utils.ffi` build script, flownet2's correlation package): the check picks what to compile, adding
    sources, headers, objects or the `WITH_CUDA` macro to the build's lists; it chooses no device."""
    if not _bare_positive_cuda_if(node, imports):
        return False
    named = False
    for stmt in cast(ast.If, node).body:
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            value: ast.AST = stmt.value
        elif (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)
            and stmt.value.func.attr in ("append", "extend")
            and len(stmt.value.args) == 1
        ):
            value = stmt.value.args[0]
        else:
            return False
        parts = list(walk(value))
        if any(isinstance(n, (ast.Call, ast.Name, ast.Attribute)) for n in parts):
            return False
        named = named or any(
            isinstance(n, ast.Constant) and isinstance(n.value, str) and _BUILD_INPUT.search(n.value) for n in parts
        )
    return named


def _bare_positive_cuda_if(node: ast.AST, imports: ImportTable) -> bool:
    """`if <CUDA check>:` with no `else`, asking for CUDA (not `if not torch.cuda.is_available():`)."""
    return (
        isinstance(node, ast.If)
        and not node.orelse
        and is_cuda_check(node.test, imports)
        and not is_negative_cuda_check(node.test, imports)
    )


def is_extension_build(node: ast.AST, imports: ImportTable) -> bool:
    """`if torch.cuda.is_available(): fused = load("fused", sources=[...])` (GPEN's, and rosinality's,
    `op/fused_act.py`): the check picks whether to compile the CUDA extension, nothing else; it chooses no
    device. The extension is reported where it is built and used."""
    if not _bare_positive_cuda_if(node, imports):
        return False
    builds = False
    for stmt in cast(ast.If, node).body:
        if not isinstance(stmt, (ast.Assign, ast.Expr)):
            return False
        for sub in walk(stmt.value):
            if isinstance(sub, ast.Call) and imports.resolve(sub.func) in EXTENSION_LOADERS:
                builds = True
    return builds


def _spells(part: Union[ast.AST, Sequence[ast.AST]], name: str) -> bool:
    """Whether `part` (a node or statements) names `name` (`CUDAExtension`, `cpp_extension.CUDAExtension`)."""
    nodes: Sequence[ast.AST] = part if isinstance(part, list) else [cast(ast.AST, part)]
    return any(name in _names_in(node) for node in nodes)


# Queries of what precision the CUDA device supports; a rule of their own (RT008) describes them.
_PRECISION_QUERIES = frozenset({"torch.cuda.is_bf16_supported"})


def is_precision_choice(test: ast.AST, imports: ImportTable) -> bool:
    """`torch.cuda.is_available() and torch.cuda.is_bf16_supported()`: a condition that picks a precision
    or dtype (`"bf16-true" if ... else "32-true"`), not a device. Its availability term chooses no CPU; the
    precision query's own rule says what happens off CUDA, and device rules there are lowered with a note."""
    return (
        isinstance(test, ast.BoolOp)
        and isinstance(test.op, ast.And)
        and any(
            isinstance(v, ast.Call) and imports.resolve(v.func) in _PRECISION_QUERIES for v in test.values
        )
    )


_PRECISION_FLAG = re.compile(
    r"(?i)(?:^|_)(?:half|fp16|bf16|float16|bfloat16|amp|mixed_?precision|scaler|grad_?scaler)(?:$|_)"
)


def _sets_precision_only(stmts: Sequence[ast.AST]) -> Tuple[bool, bool]:
    """(every statement sets a precision flag to a bool or a name to a literal list, at least one sets a
    precision flag)."""
    precision = False
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            ok, found = _sets_precision_only(stmt.body + stmt.orelse)
            if not ok:
                return False, False
            precision = precision or found
        elif isinstance(stmt, ast.Return) and _precision_value(stmt.value):
            precision = True  # `return "bf16-mixed" if training else "bf16-true"` (TinyLlama)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and is_message_call(stmt.value):
            continue  # `warnings.warn("no bfloat16 here, using fp16")`: says which, decides nothing
        elif isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
            value = stmt.value
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                if not all(_PRECISION_FLAG.search(n) for n in names):
                    return False, False
                precision = True
            elif _precision_value(value):
                precision = True  # `torch_type = torch.bfloat16` (CogVLM's demos)
            elif not (
                isinstance(value, (ast.List, ast.Tuple))
                and all(isinstance(n, (ast.Constant, ast.List, ast.Tuple, ast.Load)) for n in walk(value))
            ):
                return False, False  # anything but a precision flag or a literal table (a device string) decides more
        else:
            return False, False
    return True, precision


def is_precision_flag_assignment(node: ast.Assign) -> bool:
    """`opt.half = torch.cuda.is_available() and opt.device != "cpu"`: a condition stored in a precision
    flag (`half`, `use_fp16`, `amp`); it picks a precision, the device comes from elsewhere."""
    names = [_target_name(t) for t in node.targets]
    condition = isinstance(node.value, (ast.BoolOp, ast.Call))
    return condition and bool(names) and all(_PRECISION_FLAG.search(n) for n in names)


# (and dtype names as strings: whisperX's `compute_type = "float16" if device == "cuda" else "float32"`)
_PRECISION_VALUE = re.compile(
    r"(?i)^(?:bf16|fp16|fp32|16|32|64|float16|float32|bfloat16|half|float)(?:-(?:mixed|true))?$"
)


# Floating-point dtypes a precision choice picks between (`torch.bfloat16`, `torch.half`).
_PRECISION_DTYPES = frozenset({"bfloat16", "float16", "half", "float32", "float"})


def _precision_value(value: Optional[ast.AST]) -> bool:
    """`"bf16-mixed"`, `"16-true"`, `"fp16"` (Lightning's precision names), a floating-point dtype
    (`torch.bfloat16`), or a ternary of them, or of one and `None`, the default precision (InternGPT's
    `revision = 'fp16' if 'cuda' in device else None`, the half-precision weights of a diffusers model)."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return bool(_PRECISION_VALUE.match(value.value))
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        return value.attr in _PRECISION_DTYPES
    if isinstance(value, ast.IfExp):
        sides = [side for side in (value.body, value.orelse) if not _is_none(side)]
        return bool(sides) and all(_precision_value(side) for side in sides)
    return False


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def is_precision_branch(node: ast.AST) -> bool:
    """`if torch.cuda.is_available(): no_half = ['1650', '1660']; if ...: use_half = True`: a CUDA check
    whose branches only set a half-precision flag (and the literals that decide it). It picks a
    precision, not a device; the device comes from elsewhere."""
    if isinstance(node, ast.IfExp):
        return _precision_value(node)  # `torch.bfloat16 if ... else torch.float16`
    if not isinstance(node, ast.If):
        return False
    ok, precision = _sets_precision_only(node.body + node.orelse)
    return ok and precision


def choice_checks(node: ast.BoolOp, imports: ImportTable) -> List[ast.AST]:
    """In `args.device == "cuda" and not torch.cuda.is_available()` (or `args.cuda and not ...`), the terms
    that ask whether the device the user chose exists: the branch rejects (or replaces) a choice that cannot
    be met, the right thing on any machine; the choice itself is where a CUDA default would be reported.
    [] for any other expression. With a positive check (`use_amp = device == "cuda" and
    torch.cuda.is_available()`) the condition decides what runs: it is left to the rules, and fixed whole."""
    if not isinstance(node.op, ast.And):
        return []
    asks: List[ast.AST] = [v for v in node.values if _asks_for_cuda(v) or _requests_cuda(v)]
    if not asks:
        return []
    checks: List[ast.AST] = []
    for value in node.values:
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
            call = value.operand
            if isinstance(call, ast.Call) and imports.resolve(call.func) in AVAILABILITY_CALLS:
                checks.append(value)
    return checks + asks if checks else []


def _requests_cuda(node: ast.AST) -> bool:
    """`args.cuda`, `opt.use_gpu`, `use_cuda`, `cuda_sync`: a switch by which the user asks for CUDA (not
    `args.no_cuda`)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _OPTION_HOLDERS.match(node.value.id):
        name = node.attr
    elif isinstance(node, ast.Name):
        name = node.id
    else:
        return False
    # (`cuda_sync`, torchtnt's timer: a switch for something only CUDA has)
    words = name_words(name)
    return (bool(_CUDA_FLAG.match(name)) or "cuda" in words) and not name.lower().startswith("no")


# A GPU index by which the user picks CUDA, with a negative index for the CPU (LASER's `--gpu`, default -1).
_GPU_INDEX = re.compile(r"(?i)^gpu(?:_?id)?$")


def _gpu_index_sign(test: ast.Compare) -> Optional[bool]:
    """`gpu >= 0`, `args.gpu > -1`, `self.gpu_id != -1` -> True (CUDA asked for); `gpu < 0`, `gpu == -1` -> False
    (the CPU); None for any other comparison."""
    if len(test.ops) != 1 or not isinstance(test.left, (ast.Name, ast.Attribute)):
        return None
    name = test.left.id if isinstance(test.left, ast.Name) else test.left.attr
    right = test.comparators[0]
    value = right.value if isinstance(right, ast.Constant) else None
    if isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub) and isinstance(right.operand, ast.Constant):
        value = -right.operand.value if isinstance(right.operand.value, int) else None
    if not _GPU_INDEX.match(name) or isinstance(value, bool) or not isinstance(value, int):
        return None
    op = test.ops[0]
    if (isinstance(op, ast.GtE) and value == 0) or (isinstance(op, (ast.Gt, ast.NotEq)) and value == -1):
        return True
    if (isinstance(op, ast.Lt) and value == 0) or (isinstance(op, ast.Eq) and value == -1):
        return False
    return None


def is_negative_cuda_check(test: ast.AST, imports: ImportTable) -> bool:
    """`not torch.cuda.is_available()`, `not x.is_cuda`, `device.type != "cuda"`, `backend != "nccl"`, `gpu < 0`:
    true when CUDA is absent."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return is_cuda_check(test.operand, imports)
    if isinstance(test, ast.Compare) and _gpu_index_sign(test) is False:
        return True
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.NotEq, ast.IsNot, ast.NotIn))
    ):
        # (`dist.get_backend() != "nccl"`, allennlp's `peak_gpu_memory`: NCCL runs on CUDA only)
        return any(_is_cuda_string(side) or _names_nccl(side) for side in (test.left, test.comparators[0]))
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(is_negative_cuda_check(v, imports) for v in test.values)
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.Eq))
        and _is_bool(test.comparators[0], False)
    ):
        return is_cuda_check(test.left, imports)  # `torch.cuda.is_available() is False`
    return _too_few_devices(test, imports)


def _too_few_devices(test: ast.AST, imports: ImportTable) -> bool:
    """`torch.cuda.device_count() == 0`, `< 2`, `<= 1`: true when CUDA is absent (or too small)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Call)):
        return False
    if imports.resolve(test.left.func) != "torch.cuda.device_count":
        return False
    bound, op = test.comparators[0], test.ops[0]
    if not (isinstance(bound, ast.Constant) and type(bound.value) is int):
        return False
    n = bound.value
    return (
        (isinstance(op, ast.Eq) and n == 0)
        or (isinstance(op, ast.Lt) and n >= 1)
        or (isinstance(op, ast.LtE) and n >= 0)
    )


def _is_modulo(node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ast.Mod) and not isinstance(node.left, (ast.Constant, ast.JoinedStr))
    return bool(getattr(node, MODULO_CALL_ATTR, False))


def _has_modulo(node: ast.AST) -> bool:
    return any(_is_modulo(n) for n in walk(node))


# Set on a call of one of the module's own divisibility predicates (`def divisible_by(num, den): return
# (num % den) == 0`, then `if divisible_by(step, validate_every):`): the call is a modulo test.
MODULO_CALL_ATTR = "_portcheck_modulo"


def _modulo_predicate(fn: ast.AST) -> bool:
    """A module-level function whose whole body (docstring aside) returns a modulo test of its arguments."""
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list:
        return False
    value = _sole_return_value(fn)
    return value is not None and _has_modulo(value)


def mark_modulo_calls(module: ast.Module) -> None:
    """Mark every call of a module-level divisibility predicate (`MODULO_CALL_ATTR`), so that a branch on
    it is periodic like `if step % k == 0:`."""
    names = {fn.name for fn in module.body if _modulo_predicate(fn)}  # type: ignore[attr-defined]
    if not names:
        return
    for node in module_nodes(module):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names:
            setattr(node, MODULO_CALL_ATTR, True)


CLAMPED_ATTR = "_portcheck_clamped"  # set on a device-count call the code reads only through `max(..., 1)`
CLAMPED_NOTE = (
    "lowered one level: the code reads the count only through `max(..., 1)`, so it already runs without a CUDA"
    " device; it just counts none of the target's"
)


def mark_clamped_counts(module: ast.Module) -> None:
    """Mark (`CLAMPED_ATTR`) each `device_count()` call whose value the code only reads through `max(..., 1)`:
    `max(torch.cuda.device_count(), 1)`, or `nd = torch.cuda.device_count()` and then every read of `nd` in
    its scope is `max(nd, 1)` (YOLO's `os.cpu_count() // max(nd, 1)` workers). A zero count is handled."""
    scopes: List[ast.AST] = [module] + [n for n in module_nodes(module) if isinstance(n, _FUNCTION_DEFS)]
    for scope in scopes:
        nodes = own_nodes(scope)
        clamps = [n for n in nodes if isinstance(n, ast.Call) and _clamps(n)]
        clamped = {id(a) for c in clamps for a in c.args}
        for node in nodes:
            if isinstance(node, ast.Call) and _last_name(node.func) == "device_count" and not node.args:
                if id(node) in clamped:
                    setattr(node, CLAMPED_ATTR, True)
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)
                and _last_name(node.value.func) == "device_count"
            ):
                if _only_read_in(nodes, node.targets[0].id, clamped):
                    setattr(node.value, CLAMPED_ATTR, True)


COUNT_TEST_ATTR = "_portcheck_count_test"  # set on an `if` whose test reads a name bound to a device count


def mark_count_tests(module: ast.Module) -> None:
    """Mark (`COUNT_TEST_ATTR`) each `if` whose test compares a name or attribute the module binds to a
    device count (ERNIE's `n_gpu = torch.cuda.device_count()`, the HF examples' `args.n_gpu = ...`), then
    `elif n_gpu > 1: model = torch.nn.DataParallel(model)`: the test asks how many devices there are, as
    `torch.cuda.device_count() > 1` written there would (see `is_replication_choice`)."""
    counts = _names_bound_to(
        module, lambda v: isinstance(v, ast.Call) and _last_name(v.func) == "device_count" and not v.args
    )
    if not counts:
        return
    for node in module_nodes(module):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            if any(dotted(side) in counts for side in [node.test.left, *node.test.comparators]):
                setattr(node, COUNT_TEST_ATTR, True)


def _names_bound_to(module: ast.Module, wanted: Callable[[ast.AST], bool]) -> Set[str]:
    """The dotted names (`n_gpu`, `args.n_gpu`) the module assigns a value `wanted` accepts."""
    return {
        name
        for node in module_nodes(module)
        if isinstance(node, ast.Assign) and wanted(node.value)
        for target in node.targets
        if (name := dotted(target))
    }


DEVICE_LOOP_ATTR = "_portcheck_device_loop"  # set on a loop or comprehension over the CUDA devices
DEVICE_LOOP_NOTE = (
    "lowered one level: it runs once per CUDA device, in a loop over `torch.cuda.device_count()`, which never runs"
    " without CUDA"
)


def mark_device_loops(module: ast.Module, imports: ImportTable) -> None:
    """Mark (`DEVICE_LOOP_ATTR`) each `for` loop and comprehension over `range(torch.cuda.device_count())`, or
    over `range(n)` of a name the module binds to that count (apple/ml-quant's `max_gpus =
    torch.cuda.device_count()`, then `[torch.cuda.get_device_capability(i) for i in range(max_gpus)]`): without
    CUDA the count is 0 and the body never runs, as the CUDA side of a check would not."""

    def is_count(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and not node.args and imports.resolved(node.func) == "torch.cuda.device_count"

    counts = _names_bound_to(module, is_count)

    def over_devices(iterable: ast.AST) -> bool:
        if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"):
            return False
        args = iterable.args
        if len(args) == 2 and isinstance(args[0], ast.Constant) and args[0].value == 0:
            args = args[1:]
        return len(args) == 1 and (is_count(args[0]) or (dotted(args[0]) or "") in counts)

    for node in module_nodes(module):
        if isinstance(node, (ast.For, ast.AsyncFor)) and over_devices(node.iter):
            setattr(node, DEVICE_LOOP_ATTR, True)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            if len(node.generators) == 1 and over_devices(node.generators[0].iter):
                setattr(node, DEVICE_LOOP_ATTR, True)


def _clamps(call: ast.Call) -> bool:
    """`max(x, 1)` (or `max(1, x)`): two arguments, one of them the literal 1."""
    return (
        isinstance(call.func, ast.Name)
        and call.func.id == "max"
        and len(call.args) == 2
        and not call.keywords
        and any(isinstance(a, ast.Constant) and a.value == 1 for a in call.args)
    )


CUDA_SIDE_ATTR = "_portcheck_cuda_side"  # set on a helper every use of which is on the CUDA side of a check


# set, to the note for the findings inside, on a definition that drives a raw CUDA kernel or runs only with
# flash-attn (`mark_raw_kernel_wrappers`, `mark_flash_attention_code`)
RAW_KERNEL_ATTR = "_portcheck_raw_kernel_wrapper"
FLASH_ONLY_NOTE = (
    "lowered to info: inside code that runs only with flash-attn (a class or function named for it that calls"
    " it, a function that always calls it, or a helper only that code calls); the port replaces it as a whole with"
    " `scaled_dot_product_attention`, reported where flash-attn is imported"
)
CUDA_ALTERNATIVE_NOTE = (
    "lowered to info: inside `{name}`, the CUDA implementation of an option its module also implements for the"
    " CPU (`{sibling}`); a port keeps to the other one, chosen where the option is read"
)
RAW_KERNEL_NOTE = (
    "lowered to info: inside code that drives a raw CUDA kernel (a CuPy or PyCUDA launch with `block=` and"
    " `grid=`, or a helper only that code calls); the port replaces the kernel and what drives it as a whole,"
    " reported where the kernel library is imported"
)


DRIVER_KERNEL_NOTE = (
    "lowered to info: inside code that launches a compiled CUDA kernel through the driver, handing it"
    " `data_ptr()` pointers (cpm_kernels' fatbin kernels), or a helper only that code calls; the port replaces the"
    " kernel and what drives it as a whole, reported where the kernel is built or loaded"
)


def launches_raw_kernel(call: ast.Call) -> bool:
    """`kernel(args=[...], block=(256, 1, 1), grid=(n, 1, 1), stream=s)`: CUDA's launch geometry, spelt out; or
    a driver-level launch handed raw device pointers (cpm_kernels' `func(gridDim, blockDim, 0, stream,
    [ctypes.c_void_p(weight.data_ptr()), ...])` in GLM-130B's and ChatGLM's quantization kernels)."""
    return _launch_geometry(call) or launches_through_driver(call)


def launches_through_driver(call: ast.Call) -> bool:
    """`func(gridDim, blockDim, 0, stream, [ctypes.c_void_p(weight.data_ptr()), ...])`: a compiled kernel launched
    with raw device pointers."""
    return len(call.args) >= 4 and any(
        isinstance(a, (ast.List, ast.Tuple)) and any(_void_pointer(e) for e in a.elts) for a in call.args
    )


def _void_pointer(node: ast.AST) -> bool:
    """`ctypes.c_void_p(x.data_ptr())`: a tensor's device address, as a C pointer."""
    return (
        isinstance(node, ast.Call)
        and (dotted(node.func) or "").rsplit(".", 1)[-1] == "c_void_p"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Call)
        and isinstance(node.args[0].func, ast.Attribute)
        and node.args[0].func.attr == "data_ptr"
    )


def mark_raw_kernel_wrappers(module: ast.Module) -> None:
    """Mark (`RAW_KERNEL_ATTR`) the module-level functions and classes that launch a raw CUDA kernel
    (involution's `_involution(Function)`, whose `forward` and `backward` assert `is_cuda`, enter
    `torch.cuda.device_of(input)` and launch the CuPy kernel), and the module's functions only they use
    (its `Dtype(t)`, which tells `torch.cuda.FloatTensor` from `DoubleTensor` for the kernel's source)."""
    definitions = {s.name: s for s in module.body if isinstance(s, _DEFINITIONS)}
    launches = {name: [n for n in walk(stmt) if isinstance(n, ast.Call)] for name, stmt in definitions.items()}
    geometry = {name for name, calls in launches.items() if any(_launch_geometry(n) for n in calls)}
    driver = {name for name, calls in launches.items() if any(launches_through_driver(n) for n in calls)} - geometry
    _mark_with_helpers(module, definitions, geometry, RAW_KERNEL_NOTE)
    _mark_with_helpers(module, definitions, driver, DRIVER_KERNEL_NOTE)


def _launch_geometry(call: ast.Call) -> bool:
    keys = {k.arg for k in call.keywords}
    return "block" in keys and "grid" in keys


_FLASH_NAME = re.compile(r"flash", re.IGNORECASE)


def mark_flash_attention_code(module: ast.Module, imports: ImportTable) -> None:
    """Mark (`RAW_KERNEL_ATTR`, with `FLASH_ONLY_NOTE`) the module-level classes and functions named for
    flash attention that call flash-attn (Medusa's and EAGLE's `LlamaFlashAttention2`, axolotl's
    `flashattn_forward`), and the module's functions only they use (their `_get_unpad_data`): code that runs
    only with flash-attn, a CUDA-only package; its devices, syncs and autocast queries are its workings."""
    definitions = {s.name: s for s in module.body if isinstance(s, _DEFINITIONS)}
    # In a module that imports flash-attn unconditionally (FastChat's `llama_flash_attn_monkey_patch.py`, copied
    # into LLaVA and its descendants), one named for it runs only with it, calling it or installing what does
    # (`replace_llama_attn_with_flash_attn`, which asks for the GPU's compute capability first).
    needs_flash = any(
        isinstance(s, ast.ImportFrom) and (s.module or "").split(".", 1)[0] == "flash_attn" and not s.level
        or isinstance(s, ast.Import) and any(a.name.split(".", 1)[0] == "flash_attn" for a in s.names)
        for s in module.body
    )
    marked = {
        name
        for name, stmt in definitions.items()
        if _FLASH_NAME.search(name)
        and not getattr(stmt, RAW_KERNEL_ATTR, "")
        and (needs_flash or any(isinstance(n, ast.Call) and _calls_flash_attn(n, imports) for n in walk(stmt)))
    }
    # A function or method that calls flash-attn whatever it is given (flash-linear-attention's
    # `BitAttention._upad_input`, whose first statements call `index_first_axis` of `flash_attn.bert_padding`)
    # runs only with it too, whatever it is called.
    for stmt in module.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and _always_calls_flash_attn(stmt, imports):
            marked.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            for method in stmt.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and _always_calls_flash_attn(
                    method, imports
                ):
                    setattr(method, RAW_KERNEL_ATTR, getattr(method, RAW_KERNEL_ATTR, "") or FLASH_ONLY_NOTE)
    _mark_with_helpers(module, definitions, marked, FLASH_ONLY_NOTE)


def _always_calls_flash_attn(function: Union[ast.FunctionDef, ast.AsyncFunctionDef], imports: ImportTable) -> bool:
    """Whether a statement of the function's own body (not one under a condition, a loop or a `try`) calls
    flash-attn."""
    for stmt in function.body:
        if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)) and any(
            isinstance(n, ast.Call) and _calls_flash_attn(n, imports) for n in walk(stmt)
        ):
            return True
    return False


def mark_cuda_alternatives(module: ast.Module) -> None:
    """Mark (`RAW_KERNEL_ATTR`, with `CUDA_ALTERNATIVE_NOTE`) the module-level classes named for CUDA beside a
    sibling named for the CPU or for nothing (BasicSR's `CUDAPrefetcher` beside `CPUPrefetcher`, copied into
    most restoration repositories and used only when a config sets `prefetch_mode: cuda`): CUDA's side of an
    option whose other side runs anywhere; its streams and devices are its workings."""
    classes = {s.name: s for s in module.body if isinstance(s, ast.ClassDef)}
    for name, stmt in classes.items():
        if not _CUDA_NAMED.search(name) or getattr(stmt, RAW_KERNEL_ATTR, None):
            continue
        others = [re.sub(pattern, repl, name) for pattern, repl in _CPU_SPELLINGS]
        sibling = next((o for o in others if o != name and o in classes), None)
        if sibling:
            setattr(stmt, RAW_KERNEL_ATTR, CUDA_ALTERNATIVE_NOTE.format(name=name, sibling=sibling))


_CUDA_NAMED = re.compile(r"CUDA|Cuda|(?:^|_)cuda(?:_|$)")
# How a class named for CUDA names its CPU sibling: `CUDAPrefetcher` -> `CPUPrefetcher`, `CudaCache` ->
# `CpuCache`, `Prefetcher`.
_CPU_SPELLINGS = (("CUDA", "CPU"), ("Cuda", "Cpu"), ("cuda", "cpu"), ("_?(?:CUDA|Cuda|cuda)_?", ""))


def _calls_flash_attn(call: ast.Call, imports: ImportTable) -> bool:
    """`flash_attn_varlen_func(...)`, `flash_attn.bert_padding.unpad_input(...)`: a function of flash-attn, by
    where it comes from or by its name (IQA-PyTorch's vendored Llama binds `flash_attn_func` to a raiser); or
    `_flash_attention_forward`, flash-attn's caller in transformers' Llama (a method of `LlamaFlashAttention2`
    before 4.42, a function of `modeling_flash_attention_utils` since) and in the modeling files copied out of
    it (LongWriter's patched Llama imports it relatively)."""
    name = imports.resolved(call.func) or dotted(call.func) or ""
    last = name.rsplit(".", 1)[-1]
    return name.split(".", 1)[0] == "flash_attn" or last.startswith("flash_attn_") or last == "_flash_attention_forward"


def _mark_with_helpers(module: ast.Module, definitions: Mapping[str, ast.AST], marked: Set[str], note: str) -> None:
    """Set `RAW_KERNEL_ATTR` to `note` on the `marked` definitions and on the module functions named only
    inside them (helpers of helpers too)."""
    if not marked:
        return
    # where each module function is named: the definition holding the name, or None outside any
    holders: Dict[str, List[Optional[str]]] = {}
    for stmt in module.body:
        holder = stmt.name if isinstance(stmt, _DEFINITIONS) else None
        for n in walk(stmt):
            if isinstance(n, ast.Name) and n.id in definitions and n.id != holder:
                holders.setdefault(n.id, []).append(holder)
    changed = True
    while changed:
        changed = False
        for name, where in holders.items():
            if name in marked or isinstance(definitions[name], ast.ClassDef):
                continue
            if all(h in marked for h in where):
                marked.add(name)
                changed = True
    for name in marked:
        if not getattr(definitions[name], RAW_KERNEL_ATTR, ""):
            setattr(definitions[name], RAW_KERNEL_ATTR, note)


def mark_cuda_side_helpers(module: ast.Module, nodes: Sequence[ast.AST], imports: ImportTable) -> None:
    """Mark (`CUDA_SIDE_ATTR`) the methods and private module functions every use of which in the module
    sits on the CUDA side of a CUDA check, or in such a helper (petals' `_optimized_apply_rotary`, called
    only under `if ... and x.device.type == "cuda":`): what runs in them runs only where CUDA is, as in
    the check's own body. A public function may be used elsewhere, and a name defined twice is ambiguous:
    neither is marked. `nodes`: every node of the module (`ast.walk`)."""
    defs: Dict[str, List[ast.AST]] = {}
    for node in nodes:
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and not stmt.name.startswith("__"):
                    defs.setdefault(stmt.name, []).append(stmt)
    for stmt in module.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name.startswith("_"):
            if not stmt.name.startswith("__"):
                defs.setdefault(stmt.name, []).append(stmt)
    candidates = {name: found[0] for name, found in defs.items() if len(found) == 1}
    if not candidates:
        return
    # Every use once, with the candidates whose bodies hold it; a use inside a marked helper is on the CUDA
    # side too, so the marks grow to a fixed point over the recorded uses (helpers of helpers).
    uses: List[Tuple[str, bool, Tuple[str, ...]]] = []
    _cuda_side_uses(module, imports, candidates, uses)
    marked: Set[str] = set()
    for _ in range(3):
        sides: Dict[str, List[bool]] = {}
        for name, side, within in uses:
            if name in within:
                continue  # its own recursive use (StyleGAN's `_conv2d_gradfix` builds its transpose with itself)
            sides.setdefault(name, []).append(side or any(w in marked for w in within))
        found = {name for name, each in sides.items() if all(each)}
        if found <= marked:
            break
        marked |= found
    for name in marked:
        setattr(candidates[name], CUDA_SIDE_ATTR, True)


def _cuda_side_uses(
    root: ast.AST,
    imports: ImportTable,
    candidates: Dict[str, ast.AST],
    uses: List[Tuple[str, bool, Tuple[str, ...]]],
) -> None:
    """Record each use of a candidate name under `root`: (name, on the CUDA side of a check, the candidates
    whose bodies hold it). An explicit stack, not recursion: a long `a + b + ...` chain nests as deep as
    it is long."""
    stack: List[Tuple[ast.AST, bool, Tuple[str, ...]]] = [(root, False, ())]
    while stack:
        node, cuda_side, within = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and candidates.get(node.name) is node:
            within = within + (node.name,)
        if isinstance(node, (ast.If, ast.IfExp)) and is_cuda_check(node.test, imports):
            negative = is_negative_cuda_check(node.test, imports)
            body = node.body if isinstance(node.body, list) else [node.body]
            orelse = node.orelse if isinstance(node.orelse, list) else [node.orelse]
            parts: List[Tuple[ast.AST, bool]] = [(node.test, cuda_side)]
            parts += [(stmt, cuda_side or not negative) for stmt in body]
            parts += [(stmt, cuda_side or negative) for stmt in orelse]
            stack.extend((part, side, within) for part, side in reversed(parts))
            continue
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            side, terms = cuda_side, []
            for value in node.values:
                terms.append((value, side))
                side = side or short_circuits_off_cuda(node.op, value, imports)
            stack.extend((term, term_side, within) for term, term_side in reversed(terms))
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in candidates:
            uses.append((node.id, cuda_side, within))
        elif isinstance(node, ast.Attribute) and node.attr in candidates:
            # `self.name`/`cls.name`: this class's; `other.name`: some other object's, or this one's
            this = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            uses.append((node.attr, cuda_side and this, within if this else ()))
        stack.extend((sub, cuda_side, within) for sub in reversed(children(node)))


def short_circuits_off_cuda(op: ast.boolop, value: ast.AST, imports: ImportTable) -> bool:
    """Whether the terms after `value` in a `BoolOp` run only where CUDA is: `value` is a positive CUDA
    check in an `and`, or a negative one in an `or`."""
    if not is_cuda_check(value, imports):
        return False
    negative = is_negative_cuda_check(value, imports)
    return negative if isinstance(op, ast.Or) else not negative


def _periodic_names(loop: ast.AST) -> FrozenSet[str]:
    """Names the loop's own body binds to a periodic test, in order (`is_log_step = step % k == 0 or last`,
    then `is_metric_step = is_log_step or ...`); nested functions and classes are not looked into."""
    cached = getattr(loop, "_portcheck_periodic", None)
    if cached is not None:
        return cached
    found: Set[str] = set()
    stack: List[ast.AST] = list(reversed(getattr(loop, "body", []) or []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if _has_modulo(value) or any(isinstance(n, ast.Name) and n.id in found for n in walk(value)):
                found.add(node.targets[0].id)
            continue
        stack.extend(reversed(children(node)))
    result = frozenset(found)
    loop._portcheck_periodic = result  # type: ignore[attr-defined]  # memo on the node
    return result


_CLOCKS = frozenset({"time", "perf_counter", "monotonic", "default_timer"})


def _reads_clock(node: ast.AST) -> bool:
    """`time.time()`, `time.perf_counter()`, `perf_counter()`, `timeit.default_timer()`: a read of the clock."""
    if not isinstance(node, ast.Call) or node.args:
        return False
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr in _CLOCKS and isinstance(func.value, ast.Name)) or (
        isinstance(func, ast.Name) and func.id in _CLOCKS
    )


def _clock_names(loop: Optional[ast.AST]) -> FrozenSet[str]:
    """Names the loop binds to a read of the clock (`now = time.time()`), once per loop (memo on the node)."""
    if loop is None:
        return frozenset()
    cached = getattr(loop, "_portcheck_clocks", None)
    if cached is None:
        cached = frozenset(
            t.id
            for node in walk(loop)
            if isinstance(node, ast.Assign) and _reads_clock(node.value)
            for t in node.targets
            if isinstance(t, ast.Name)
        )
        loop._portcheck_clocks = cached  # type: ignore[attr-defined]
    return cached


def _waits_for_interval(test: ast.AST, loop: Optional[ast.AST]) -> bool:
    """`if now - last_logging > args.log_freq_time:` (vicreg's `now = time.time()` in the loop): the branch
    runs once an interval of wall-clock time has passed, not at every iteration."""
    for node in walk(test):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        op, left, right = node.ops[0], node.left, node.comparators[0]
        elapsed = left if isinstance(op, (ast.Gt, ast.GtE)) else right if isinstance(op, (ast.Lt, ast.LtE)) else None
        if isinstance(elapsed, ast.BinOp) and isinstance(elapsed.op, ast.Sub):
            if any(
                _reads_clock(n) or (isinstance(n, ast.Name) and n.id in _clock_names(loop))
                for n in walk(elapsed.left)
            ):
                return True
    return False


def is_periodic(test: ast.AST, loop: Optional[ast.AST] = None) -> bool:
    """`if step % log_every == 0:`: the branch runs once every k iterations. Also a name the enclosing loop
    bound to such a test (`is_log_step = step % log_every == 0 or last_batch`, then `if is_log_step:`), and a
    test that waits for an interval of wall-clock time (`if time.time() - last_log > log_every_s:`)."""
    if _has_modulo(test) or _waits_for_interval(test, loop) or _in_sampled_steps(test) or _moving_threshold(test, loop):
        return True
    names = _periodic_names(loop) if loop is not None else frozenset()
    return bool(names) and any(isinstance(n, ast.Name) and n.id in names for n in walk(test))


def _moving_threshold(test: ast.AST, loop: Optional[ast.AST]) -> bool:
    """`if total_step > log_step:` where the loop moves the threshold on (`log_step += config.log_interval`,
    thu-ml/CRM's training loop): the branch runs once an interval, as `step % k == 0` does."""
    if loop is None or not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    op, left, right = test.ops[0], test.left, test.comparators[0]
    threshold = right if isinstance(op, (ast.Gt, ast.GtE)) else left if isinstance(op, (ast.Lt, ast.LtE)) else None
    key = dotted(threshold) if threshold is not None else None
    return key is not None and key in _moved_on(loop)


def _moved_on(loop: ast.AST) -> FrozenSet[str]:
    """The names the loop adds to (`log_step += log_interval`, `self.next_log += k`), once per loop (memo on the
    node: every `if` of the loop asks)."""
    cached = getattr(loop, "_portcheck_moved_on", None)
    if cached is None:
        cached = frozenset(
            key
            for node in walk(loop)
            if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)
            for key in [dotted(node.target)]
            if key is not None
        )
        loop._portcheck_moved_on = cached  # type: ignore[attr-defined]
    return cached


# Sequences that sample a range (`np.linspace(0, iterations, 10, dtype=int)`, `range(0, n, k)`): a few of its steps.
_SAMPLERS = frozenset({"linspace", "logspace", "geomspace", "arange", "range"})


def _in_sampled_steps(test: ast.AST) -> bool:
    """`if i in np.linspace(0, iterations, 10, dtype=int):` (pytorch-cnn-visualizations): the branch runs at a
    few sampled iterations, as `i % k == 0` does."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.In)
        and isinstance(test.comparators[0], ast.Call)
    ):
        return False
    call = test.comparators[0]
    name = _last_name(call.func) or ""
    return name in _SAMPLERS and len(call.args) >= 3


_ANOMALY_CHECKS = frozenset(
    {"torch.is_anomaly_enabled", "torch.autograd.is_anomaly_enabled", "torch.is_anomaly_check_nan_enabled"}
)
# (and a switch for detail printed in debugging: mit-han-lab/x-attention's `if self.fastprefillconfig.print_detail:
# torch.cuda.synchronize(); print(f"... took {time.time() - start_time:.6f} seconds")`, `if verbose:`)
_DEBUG_NAME = re.compile(r"^(?:debug|DEBUG)(?:_\w+)?$|_(?:debug|DEBUG)$|^print_details?$|^verbose$")


def is_debug_branch(test: ast.AST, imports: ImportTable) -> bool:
    """`if torch.is_anomaly_enabled():`, `if self.debug:`, `if args.debug_nan:`, `if os.environ.get('HY3DGEN_DEBUG',
    '0') == '1':`: the branch runs in debugging runs only, so a host sync in it costs nothing in the runs
    that matter, and what it does is a debugging aid."""
    if isinstance(test, ast.Call):
        return imports.resolve(test.func) in _ANOMALY_CHECKS or _reads_debug_variable(test, imports)
    if isinstance(test, ast.Compare) and len(test.comparators) == 1:
        return _reads_debug_variable(test.left, imports)
    name = test.attr if isinstance(test, ast.Attribute) else test.id if isinstance(test, ast.Name) else ""
    return bool(_DEBUG_NAME.match(name))


_DEBUG_WORD = re.compile(r"(?:^|_)DEBUG(?:_|$)", re.IGNORECASE)


def _reads_debug_variable(expr: ast.AST, imports: ImportTable) -> bool:
    """`os.environ.get("HY3DGEN_DEBUG", "0")`, `os.environ["DEBUG"]`: a read of a debugging switch."""
    name = variable_read(expr, imports)
    return name is not None and bool(_DEBUG_WORD.search(name))


def is_single_iteration(test: ast.AST, loop: Optional[ast.AST], other: bool = False) -> bool:
    """`if i == 0:` in `for i in range(n):`: the branch runs in one iteration of the loop (the prefill step of
    a decoding loop), alone or as a term of an `and`. With `other`, `if i != 0:` alone: its `else` does."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    counters = {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
    terms = [test] if other else and_terms(test)
    op = ast.NotEq if other else ast.Eq
    for term in terms:
        if isinstance(term, ast.Compare) and len(term.ops) == 1 and isinstance(term.ops[0], op):
            sides = (term.left, term.comparators[0])
            if any(isinstance(x, ast.Name) and x.id in counters for x in sides) and any(
                isinstance(x, ast.Constant) and type(x.value) is int for x in sides
            ):
                return True
    return False


# A name for the token that ends a sequence (`EOS_token`, `eos_token_id`, `tokenizer.eos_id`, `end_idx`, `STOP`).
_END_TOKEN_WORDS = frozenset({"eos", "eot", "end", "stop"})
_END_TOKEN_TEXT = frozenset({"<eos>", "</s>", "<end>", "<|endoftext|>"})


def _names_end_token(expr: ast.AST) -> bool:
    for sub in walk(expr):
        word = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute) else None
        if word is not None and _END_TOKEN_WORDS.intersection(re.split(r"_+", word.lower())):
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value.lower() in _END_TOKEN_TEXT:
            return True
    return False


_STOP_MEMO = "_portcheck_stop"


def _reads_item(expr: ast.AST) -> bool:
    """`topi.item()`, `int(topi.item())`: one value read to the host."""
    return _item_call(expr) is not None


def _item_call(expr: ast.AST) -> Optional[ast.Call]:
    """The `topi.item()` of `topi.item()` or `int(topi.item())`; None for anything else."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and len(expr.args) == 1:
        expr = expr.args[0]  # int(...)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "item":
        return expr
    return None


def _reads_reduced_flag(expr: ast.AST, loop: ast.AST) -> bool:
    """`flag.item()` of a `flag` the loop hands to `all_reduce` (`dist.all_reduce(flag, op=...)`): a value all
    processes agreed on."""
    item = _item_call(expr)
    receiver = cast(ast.Attribute, item.func).value if item is not None else None
    if not isinstance(receiver, ast.Name):
        return False
    return any(
        isinstance(n, ast.Call)
        and (dotted(n.func) or "").rsplit(".", 1)[-1] == "all_reduce"
        and n.args
        and isinstance(n.args[0], ast.Name)
        and n.args[0].id == receiver.id
        for stmt in cast(ast.For, loop).body
        for n in walk(stmt)
    )


def stop_token_tests(loop: Optional[ast.AST]) -> Tuple[FrozenSet[int], FrozenSet[str]]:
    """In a loop that trains nothing, the tests that leave it at the end token (`if topi.item() == EOS_token:
    break`, a greedy decoder's stop): the ids of their nodes, and the names they compare (`predicted_token`,
    bound to `output.argmax(-1).item()` before). Reading the token there is what decoding one token at a
    time is for on any device: the host needs it to stop and to look the word up."""
    if not isinstance(loop, _LOOPS):
        return frozenset(), frozenset()
    cached = getattr(loop, _STOP_MEMO, None)
    if cached is None:
        nodes: Set[int] = set()
        names: Set[str] = set()
        if not is_training_loop(loop):
            stack: List[ast.AST] = list(loop.body)
            while stack:
                stmt = stack.pop()
                if isinstance(stmt, (ast.If, ast.With, ast.AsyncWith, ast.Try)):
                    stack.extend(getattr(stmt, "body", []) + getattr(stmt, "orelse", []))
                if not (isinstance(stmt, ast.If) and any(isinstance(s, (ast.Break, ast.Return)) for s in stmt.body)):
                    continue
                test = stmt.test
                terms = test.values if isinstance(test, ast.BoolOp) else [test]
                for term in terms:
                    # a comparison of one token (`topi.item() == EOS_token`, `token == eos_id`); not a batch's
                    # `(tokens == eos).all()`, whose sequences a loop without syncs could mask instead
                    if not (isinstance(term, ast.Compare) and len(term.ops) == 1):
                        continue
                    if not isinstance(term.ops[0], (ast.Eq, ast.Is, ast.In)):
                        continue
                    sides = (term.left, term.comparators[0])
                    for read, other in (sides, sides[::-1]):
                        if isinstance(other, ast.Constant) and _reads_reduced_flag(read, loop):
                            # `if this_peer_finished_flag.item() == 0.0: break` after `dist.all_reduce(flag)`:
                            # the processes agreeing to stop (Hugging Face's `synced_gpus` decoding, copied
                            # into many projects), which needs the value on the host on any device
                            nodes.update(id(n) for n in walk(read))
                            nodes.add(id(test))
                            continue
                        if not _names_end_token(other) or _names_end_token(read):
                            continue
                        if isinstance(read, ast.Name):
                            names.add(read.id)
                        elif _reads_item(read):
                            nodes.update(id(n) for n in walk(read))
                            nodes.add(id(test))
        cached = (frozenset(nodes), frozenset(names))
        setattr(loop, _STOP_MEMO, cached)
    return cached


_TRAINS_MEMO = "_portcheck_trains"


def _function_trains(scope: Optional[ast.AST]) -> bool:
    """Whether a function takes a training step anywhere in its body (a seq2seq tutorial's `train()` that
    decodes without teacher forcing, stopping at EOS, then calls `loss.backward()`)."""
    if not isinstance(scope, _FUNCTION_DEFS):
        return False
    cached = getattr(scope, _TRAINS_MEMO, None)
    if cached is None:
        cached = any(isinstance(n, ast.Call) and _is_train_call(n) for n in walk(scope))
        setattr(scope, _TRAINS_MEMO, cached)
    return cached


def reads_stop_token(
    node: ast.AST, parent: Optional[ast.AST], loop: Optional[ast.AST], scope: Optional[ast.AST]
) -> bool:
    """A read (`.item()`) in, or bound to a name compared in, a decoding loop's test for its end token,
    outside a function that trains (there each token's read is a sync in the training step)."""
    nodes, names = stop_token_tests(loop)
    if not (nodes or names) or _function_trains(scope):
        return False
    if id(node) in nodes:
        return True
    return (
        isinstance(parent, ast.Assign)
        and parent.value is node
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
        and parent.targets[0].id in names
    )


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


ITER_SOURCE_ATTR = "_portcheck_iter_source"  # set on `for x in pbar:` after `pbar = tqdm(loader)`: the call


def mark_iteration_sources(module: ast.Module) -> None:
    """Mark (`ITER_SOURCE_ATTR`) each loop over a name that its block bound just before to a call (`pbar =
    tqdm(test_loader)`, then `for batch in pbar:`: model-soups' validation): the loop iterates what the call
    wraps."""
    for block in _statement_blocks(module):
        for k, stmt in enumerate(block):
            if not (isinstance(stmt, (ast.For, ast.AsyncFor)) and isinstance(stmt.iter, ast.Name)):
                continue
            name = stmt.iter.id
            # the last `name = call(...)` before the loop, if no statement between binds the name again
            j = next(
                (
                    j
                    for j in range(k - 1, -1, -1)
                    if isinstance(block[j], ast.Assign)
                    and _name_binding(block[j])[0] == name
                    and isinstance(cast(ast.Assign, block[j]).value, ast.Call)
                ),
                None,
            )
            if j is not None and not any(name in _bound_names(s) for s in block[j + 1 : k]):
                setattr(stmt, ITER_SOURCE_ATTR, cast(ast.Assign, block[j]).value)


def _iterates_loader(loop: ast.AST, names: re.Pattern = _LOADER) -> bool:
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        sources = [loop.iter, getattr(loop, ITER_SOURCE_ATTR, loop.iter)]
    elif isinstance(loop, _COMPREHENSIONS):
        sources = [g.iter for g in loop.generators]
    else:
        return False
    return any(
        isinstance(n, (ast.Name, ast.Attribute)) and names.search(n.id if isinstance(n, ast.Name) else n.attr)
        for source in sources
        for n in walk(source)
    )


# Library namespaces whose callables are no model of the project: `torch.Generator()` is a random
# number generator, `np.random.Generator` too.
_LIBRARY_HEADS = frozenset({"torch", "numpy", "np", "random"})


# What only a training step calls: the loss's backward pass, clearing gradients, the optimizer's step.
_TRAIN_CALLS = frozenset(
    {"backward", "zero_grad", "optimizer_step", "train_step", "training_step", "train_batch"}
)


def _is_train_call(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name in _TRAIN_CALLS:
        return True
    return name == "step" and isinstance(func, ast.Attribute) and "optim" in (dotted(func.value) or "").lower()


def _is_step_call(node: ast.Call) -> bool:
    if _is_train_call(node):
        return True
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name in _STEP_CALLS or name in _NO_GRAD:
        return True
    if _MODEL_CALLEE.match(name):
        head = (dotted(func) or "").split(".", 1)[0] if isinstance(func, ast.Attribute) else ""
        return head not in _LIBRARY_HEADS
    return False


def _weight_surgery(node: ast.AST) -> bool:
    """`with torch.no_grad():` around in-place edits of tensors only (`copy_`, `fill_`, `mul_`): a loop over
    modules that resizes or initialises weights, which runs no model step."""
    items = getattr(node, "items", [])
    if not any(isinstance(i.context_expr, ast.Call) and _is_step_call(i.context_expr) for i in items):
        return False
    calls = [n for stmt in getattr(node, "body", []) for n in walk(stmt) if isinstance(n, ast.Call)]
    return bool(calls) and all(
        isinstance(c.func, ast.Attribute) and c.func.attr.endswith("_") and not c.func.attr.startswith("_")
        for c in calls
    )


def is_step_loop(loop: Optional[ast.AST]) -> bool:
    """True when a loop runs a model step per iteration: its own body (not its nested loops or
    functions) trains, runs under `no_grad` or calls a model, or it iterates a data loader and moves
    the batch to a device. A loop that only looks at CPU data is not one, nor an epoch loop around one
    (`for epoch in range(start_epoch, epochs):` whose own body also zeroes gradients or switches modes,
    yolov5's train.py: what it does there runs once per epoch)."""
    if _is_epoch_loop(loop):
        return False
    return _loop_calls(loop, "_portcheck_step", _is_step_call, devices=True)


# A loop variable that counts epochs (`for epoch in range(...)`, `for ep in ...`).
_EPOCH_NAME = re.compile(r"^(?:_?epoch|epochs|ep|epoch_?(?:idx|id|num|i)|i_?epoch|cur_?epoch|e_?idx)$", re.IGNORECASE)


_EPOCH_MEMO = "_portcheck_epoch"


def _is_epoch_loop(loop: Optional[ast.AST]) -> bool:
    """`for epoch in range(n):` whose own statements hold a loop that trains or goes over a data loader."""
    if not (isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.target, ast.Name)):
        return False
    if not _EPOCH_NAME.match(loop.target.id):
        return False
    cached = getattr(loop, _EPOCH_MEMO, None)  # asked of every step-loop hit inside it
    if cached is None:
        inner = [n for s in loop.body for n in walk(s) if isinstance(n, _LOOPS)]
        cached = any(is_training_loop(n) or _iterates_loader(n) for n in inner)
        setattr(loop, _EPOCH_MEMO, cached)
    return cached


def is_training_loop(loop: Optional[ast.AST]) -> bool:
    """True when a loop's own body trains: a backward pass, `zero_grad` or an optimizer's `step`. An
    evaluation, sampling or export loop that copies its results to the host for the caller is not one, nor an
    epoch loop around the training loop (see `is_step_loop`)."""
    if _is_epoch_loop(loop):
        return False
    return _loop_calls(loop, "_portcheck_train", _is_train_call, devices=False)


def updates_weights(loop: Optional[ast.AST]) -> bool:
    """Whether a loop of an evaluation function trains: a backward pass or an optimizer's step in its own
    body, not a lone `zero_grad` (SimCLR's `test` clears the gradients of a model it never differentiates)."""
    if _is_epoch_loop(loop):
        return False
    return _loop_calls(loop, "_portcheck_updates", _is_update_call, devices=False)


def _is_update_call(node: ast.Call) -> bool:
    return _is_train_call(node) and not (isinstance(node.func, ast.Attribute) and node.func.attr == "zero_grad")


# Words of a file's or function's name that say it evaluates. Not `metrics`: a metrics module often computes
# the training losses (pytorch3d's implicitron). `val`: ultralytics' `v8/detect/val.py`, a validator run over
# a dataset.
EVALUATION_WORDS = frozenset(
    {"eval", "evals", "evaluation", "evaluations", "evaluate", "evaluator", "val", "valid", "validate", "validation",
     "validator"}
)


# A class or function that turns a model's outputs into host results (DETR's `PostProcessPanoptic` and its
# copies in every DETR derivative, a `post_process_segmentation` method): it runs once per batch, at evaluation
# or inference, and reading values on the host is its job.
POST_PROCESSING = re.compile(r"_?post_?process", re.IGNORECASE)


def is_post_processing(node: ast.AST) -> bool:
    """A class or function named for post-processing a model's outputs (`PostProcessSegm`, `postprocess`), or a
    function named for evaluating and not for training (videollm-online's `stream_evaluate`, `eval_step`; not
    `validate_coords`, which checks inputs, nor `_compute_valid_mean`, nor `train_val_step`): it turns outputs
    into results or scores, off the training step."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        words = set(name_words(node.name))
        if words & _EVALUATING_WORDS and "train" not in words:
            return True
    return isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and bool(
        POST_PROCESSING.match(node.name)
    )


# Words of a function's name that say it evaluates a model (`validate` often checks inputs; `valid` is an adjective).
_EVALUATING_WORDS = frozenset({"eval", "evals", "evaluate", "evaluation", "evaluations", "evaluator"})


# Words of a function's name that say it computes a quality metric (LDMVFI's `calc_flolpips`, `calc_psnr`,
# `compute_metrics`); a file's name is not enough (see `EVALUATION_WORDS`).
METRIC_WORDS = frozenset({"metric", "metrics", "psnr", "ssim", "lpips", "flolpips", "fid"})


# A function named for testing a model in product code (rlkit's `test_epoch`, the RL tutorials' `test_env`): its
# loops score the model, as an `evaluate` function's do (a file name with `test` is test code, asked elsewhere).
_TESTING_WORDS = frozenset({"test"})


def is_evaluation_function(scope: Optional[ast.AST]) -> bool:
    """A function named for evaluating (`validate_classifier`, `evaluate`, `run_eval`, `test_epoch`) or for a
    metric (`calc_flolpips`): its loops that train nothing score a model, whatever data they read (StudioGAN's
    `validate_classifier` reads the training set)."""
    return isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        w in EVALUATION_WORDS or w in METRIC_WORDS or w in _TESTING_WORDS for w in name_words(scope.name)
    )


def is_evaluation_loop(loop: Optional[ast.AST]) -> bool:
    """A loop over a data loader or a dataset that does not train (`for x, y in test_loader:`, `for batch
    in tqdm(validation_data):` under `no_grad`): evaluation or batch inference, where one read per batch
    is what the loop is for. A decoding or sampling loop (`for _ in range(n):`, `for t in timesteps:`)
    is not one, nor a loop over training data or one that puts a model in training mode (`for x in
    train_loader: trainer.train(); trainer.update()`: its training step may be a call away). A loop over
    positions that reads a dataset's items is one too (PIFu's `calc_error`: `for idx in range(num_tests):
    data = dataset[idx * len(dataset) // num_tests]`)."""
    if loop is None or _iterates_loader(loop, _TRAINING_DATA):
        return False
    if not _iterates_loader(loop, _DATA) and not _indexes_data(loop):
        return False
    return not is_training_loop(loop) and not _loop_calls(loop, "_portcheck_train_mode", _is_train_mode, False)


def _indexes_data(loop: ast.AST) -> bool:
    """Whether a loop over positions (`for idx in tqdm(range(n)):`) binds, in its own statements, the item of a
    dataset at its position (`data = dataset[idx]`, `sample = self.val_data[idx * step]`), not of training data.
    A lookup by a key (botorch's `X, comps = data[algo]` in `for algo in algos:`) is no such read."""
    if not isinstance(loop, ast.For) or not any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "range" for n in walk(loop.iter)
    ):
        return False
    positions = {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
    for stmt in loop.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Subscript):
            held = stmt.value.value
            name = held.id if isinstance(held, ast.Name) else held.attr if isinstance(held, ast.Attribute) else ""
            at = {n.id for n in walk(stmt.value.slice) if isinstance(n, ast.Name)}
            if at & positions and _DATA.search(name) and not _TRAINING_DATA.search(name):
                return True
    return False


def _is_train_mode(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Attribute) and node.func.attr == "train" and not node.args


_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _loop_calls(loop: Optional[ast.AST], memo: str, wanted: Callable[[ast.Call], bool], devices: bool) -> bool:
    """Whether the loop's own body (not its nested loops or functions) makes a call `wanted` accepts, or
    (`devices`) iterates a data loader and moves the batch to a device."""
    if loop is None:
        return False
    cached = getattr(loop, memo, None)
    if cached is not None:
        return cached
    found = False
    loader = devices and _iterates_loader(loop)
    if isinstance(loop, ast.DictComp):
        stack: List[ast.AST] = [loop.key, loop.value]
    elif isinstance(loop, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):  # _COMPREHENSIONS but DictComp
        stack = [loop.elt]
    else:
        stack = list(getattr(loop, "body", []) or [])
    while stack and not found:
        node = stack.pop()
        if isinstance(
            node, (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
        ):
            continue
        if isinstance(node, (ast.With, ast.AsyncWith)) and _weight_surgery(node):
            continue  # `with torch.no_grad(): w.copy_(new)`: parameters edited in place, no model run
        if isinstance(node, (ast.With, ast.AsyncWith)) and all(isinstance(s, _LOOPS) for s in node.body):
            # `with torch.no_grad(): for X, y in test_loader: ...` in an epoch loop: the context is the inner
            # loop's, whose steps run there; what the epoch loop itself does around it runs once per epoch (a
            # block that also runs a model itself, cleanrl's bootstrap value before its loop, is the step's)
            stack.extend(node.body)
            continue
        if isinstance(node, ast.Call) and (
            wanted(node) or (loader and isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cuda"))
        ):
            found = True
            break
        stack.extend(children(node))
    try:
        setattr(loop, memo, found)  # memo on the node: loops nest
    except AttributeError:  # pragma: no cover - ast nodes accept attributes
        pass
    return found


def is_availability_check(test: ast.AST) -> bool:
    """`if is_flash_attn_available():`, `if importlib.util.find_spec("apex"):`, `if is_deepspeed_zero3_enabled():`
    and friends: the code under them has a path without the package."""
    for node in walk(test):
        if isinstance(node, ast.Call):
            name = dotted(node.func) or ""
            last = name.rsplit(".", 1)[-1]
            if "available" in last or last.endswith("_enabled") or last in ("find_spec", "find_loader"):
                return True
        elif isinstance(node, ast.Name) and (
            node.id.startswith(("HAS_", "has_", "_HAS_")) or "AVAILABLE" in node.id.upper()
        ):
            return True
    return False


def catches_import_error(handler: ast.ExceptHandler) -> bool:
    exc: Optional[ast.AST] = handler.type
    if exc is None:
        return True
    names = exc.elts if isinstance(exc, ast.Tuple) else [exc]
    for item in names:
        name = dotted(item) or ""
        if name.rsplit(".", 1)[-1] in _IMPORT_ERRORS:
            return True
    return False


# What a failing CUDA or Triton call raises (no device, a kernel that does not compile, a toolkit command that
# fails): a handler for one of these that carries on is a fallback for the code it tries.
_RUNTIME_ERRORS = frozenset(
    {"RuntimeError", "CalledProcessError", "NotImplementedError", "OSError", "Exception", "BaseException"}
)


def catches_runtime_error(handler: ast.ExceptHandler) -> bool:
    """`except:`, `except Exception:`, `except (RuntimeError, subprocess.CalledProcessError):`."""
    exc: Optional[ast.AST] = handler.type
    if exc is None:
        return True
    names = exc.elts if isinstance(exc, ast.Tuple) else [exc]
    return any(_last_name(item) in _RUNTIME_ERRORS for item in names)


# Calls that skip a test or end a branch early; a CUDA check whose CUDA branch only does this guards.
_SKIPS = frozenset({"skipTest", "skip", "skipif", "xfail", "exit"})
_ASSERT_CALLS = re.compile(r"^(?:assert\w*|assert_close|assert_allclose|assert_equal|assert_array_equal)$")
_EXTENSION_HEAD = re.compile(r"^(?:_C|_ext|\w+_cuda\w*|\w+_C)$")


def _cuda_only_call(node: ast.AST) -> bool:
    """A call that only works with CUDA: a callee spelled with `cuda` (`torch.cuda.x()`, `_fused_cuda()`,
    `FloatTensor` of `torch.cuda`) or reached through a compiled extension (`_C.op()`). `x.cuda()` is
    not one: it is a device choice with a portable spelling, so a check guarding it is a fallback."""
    for sub in walk(node):
        if isinstance(sub, ast.Call):
            if isinstance(sub.func, ast.Attribute) and getattr(sub.func.value, CUDA_OBJECT_ATTR, False):
                return True  # `start.record()` after `start = torch.cuda.Event(enable_timing=True)`
            name = dotted(sub.func) or (sub.func.attr if isinstance(sub.func, ast.Attribute) else "")
            parts = name.split(".") if name else []
            if isinstance(sub.func, ast.Attribute) and sub.func.attr == "cuda" and parts[:1] != ["torch"]:
                continue  # `x.cuda()` places a tensor or module: device choice, which `.to(device)` ports
            if any("cuda" in p.lower() for p in parts) or (len(parts) > 1 and _EXTENSION_HEAD.match(parts[0])):
                return True
            if sub.args and all((dotted(a) or "").endswith("ProfilerActivity.CUDA") for a in sub.args):
                return True  # `activities.append(ProfilerActivity.CUDA)`: the profiler's CUDA activity
    return False


def _prose(text: str) -> bool:
    """Text for people, not a name or a device string (`"cuda"`, `"cuda:0"`): it has words."""
    return " " in text.strip() or "{" in text and ": " in text


def _string_leaves(node: ast.AST) -> Optional[List[str]]:
    """The literal text of a string expression made of literals, f-strings, names and `+`; None otherwise."""
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        return []
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _string_leaves(node.left), _string_leaves(node.right)
        return None if left is None or right is None else left + right
    return None


def _message_value(node: ast.AST) -> bool:
    """A value that is text for people: `f"memory: {mem}, "`, `["max mem: {memory:.0f}"]`,
    `sep.join([header, "{meters}", "max mem: {memory:.0f}"])`, `"%d MB" % n`. A device string is none."""
    if isinstance(node, (ast.List, ast.Tuple)):
        parts = [_string_leaves(e) for e in node.elts]
        return bool(parts) and all(p is not None for p in parts) and any(_prose(t) for p in parts for t in p or [])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _message_value(node.left)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("join", "format"):
        if node.func.attr == "format":
            return _message_value(node.func.value)
        return len(node.args) == 1 and _message_value(node.args[0])
    leaves = _string_leaves(node)
    return leaves is not None and any(_prose(t) for t in leaves)


def records_memory_figure(stmt: ast.AST) -> bool:
    """`log_dict["memory"] = self._get_max_memory(runner)`, `results["mem_gb"] = torch.cuda.max_memory_allocated()
    / (1024. * 1024. * 1024.)` (DomainBed): a memory figure, scaled at most, stored under a name for a log."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return False
    target = stmt.targets[0]
    if not (
        isinstance(target, ast.Subscript)
        and isinstance(target.slice, ast.Constant)
        and isinstance(target.slice.value, str)
        and "mem" in target.slice.value.lower()
    ):
        return False
    value = stmt.value
    while isinstance(value, ast.BinOp) and not any(isinstance(n, ast.Call) for n in walk(value.right)):
        value = value.left  # `... / (1024. * 1024. * 1024.)`, `... // 2**20`
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return "mem" in name.lower()


# A progress bar's text (tqdm's `set_postfix_str`, `set_description`): shown, nothing else.
_PROGRESS_TEXT = frozenset({"set_postfix", "set_postfix_str", "set_description", "set_description_str"})


def _takes_memory_figure(stmt: ast.AST) -> bool:
    """`memory_info = retriever.get_gpu_memory_usage()`: a memory figure taken under a name for a log line (beside
    output only, in a block `_display_only` accepts whole: icr-kv-caching's indexer logs it next)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    value = stmt.value
    name = _last_name(value.func) if isinstance(value, ast.Call) else ""
    return "mem" in stmt.targets[0].id.lower() and "mem" in (name or "").lower()


def _display_only(stmt: ast.AST) -> bool:
    """`print(...)`, `logger.info(...)`, `parts.append("max mem: ...")`, `log_str += f"memory: {mem}"`,
    `log_msg = sep.join([header, "max mem: {memory:.0f}"])`: output, text for it, and nothing else."""
    if isinstance(stmt, (ast.Assign, ast.AugAssign)) and _message_value(stmt.value):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return all(isinstance(t, (ast.Name, ast.Attribute, ast.Subscript)) for t in targets)
    if records_memory_figure(stmt) or _takes_memory_figure(stmt):
        return True
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return False
    call = stmt.value
    if is_message_call(call):
        return True
    func = call.func
    if isinstance(func, ast.Name) and _DISPLAY_FUNCTION.match(func.id):
        return True  # `device_info()`, `print_env_info()`: a report of the machine (showlab/cosmo's GPUtil printout)
    if isinstance(func, ast.Attribute) and func.attr in _PROGRESS_TEXT:
        return True  # `iter_data.set_postfix_str("GPU RAM: " + get_gpu_usage(device))` (RecBole's trainer)
    return (
        isinstance(func, ast.Attribute)
        and func.attr in ("append", "extend")
        and bool(call.args)
        and all(isinstance(a, (ast.Constant, ast.JoinedStr)) for a in call.args)
    )


_WARNING_FILTERS = frozenset({"simplefilter", "filterwarnings", "resetwarnings"})


def _kernel_workaround(stmt: ast.AST) -> bool:
    """`x = x.contiguous()` (the same values, laid out for a CUDA kernel), or `causal_mask =
    AttentionMaskConverter._unmask_unattended(causal_mask, min_dtype)` (HF's fix for CUDA's memory-efficient
    SDPA path on fully masked rows), also behind `if not is_tracing and torch.any(attention_mask != 1):` with
    the `is_tracing = torch.jit.is_tracing() or ...` it asks (Llama's `_update_causal_mask` in 4.38-4.40 copies)."""
    if isinstance(stmt, ast.If) and not stmt.orelse:
        return bool(stmt.body) and all(_kernel_workaround(s) for s in stmt.body)
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        return False
    if stmt.targets[0].id == "is_tracing":
        return True  # (whether the model is being traced: a question, nothing changes)
    value, target = stmt.value, stmt.targets[0].id
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return False
    if value.func.attr == "_unmask_unattended":
        return True
    return (
        value.func.attr == "contiguous"
        and not value.args
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == target
    )


def _filters_warnings(stmt: ast.AST) -> bool:
    """`warnings.simplefilter("ignore", category=UserWarning)`, `warnings.filterwarnings(...)`."""
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and isinstance(stmt.value.func, ast.Attribute)
        and stmt.value.func.attr in _WARNING_FILTERS
        and (dotted(stmt.value.func.value) or "").rsplit(".", 1)[-1].lstrip("_") == "warnings"
    )


def _skips(stmt: ast.AST) -> bool:
    if isinstance(stmt, (ast.Return, ast.Pass, ast.Continue)) and getattr(stmt, "value", None) is None:
        return True
    if isinstance(stmt, ast.Return) and _empty(stmt.value):
        return True  # `return {}` (tango's `peak_gpu_memory` without CUDA), `return None`: nothing to give
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield) and stmt.value.value is None:
        return True  # a context manager's bare `yield`, then `return` (mmdet's `profile_time`): the body runs as is
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name in _SKIPS and name != "exit"
    return False


def _empty(expr: Optional[ast.AST]) -> bool:
    """`None`, `{}`, `[]`, `()`, `dict()`, `list()`: no value, or an empty collection."""
    if isinstance(expr, ast.Constant):
        return expr.value is None
    if isinstance(expr, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
        return not (expr.keys if isinstance(expr, ast.Dict) else expr.elts)
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id in ("dict", "list", "tuple", "set")
        and not expr.args
        and not expr.keywords
    )


def _asserts_version(stmt: ast.AST) -> bool:
    """`assert digit_version(mmcv.__version__) >= ...`: an assert on a library's version."""
    return isinstance(stmt, ast.Assert) and any(
        "version" in (n.id if isinstance(n, ast.Name) else n.attr).lower()
        for n in walk(stmt.test)
        if isinstance(n, (ast.Name, ast.Attribute))
    )


def is_pure_guard(node: ast.If, imports: ImportTable) -> bool:
    """An `if` on a CUDA check whose CUDA branch only runs CUDA-only code, only prints, or only skips
    (`if torch.cuda.is_available(): torch.cuda.synchronize()`, `if not x.is_cuda: return ...`): the
    check protects the rest of the program from CUDA-only code, it is no device fallback."""
    if not is_cuda_check(node.test, imports):
        return False
    if not node.orelse and _stops_with_cuda_only(node, imports):
        return True
    negative = is_negative_cuda_check(node.test, imports)
    branch = node.orelse if negative else node.body
    other = node.body if negative else node.orelse
    if negative and not node.orelse:
        # `if not torch.cuda.is_available(): return`: an early exit before CUDA-only work; `print("pip install
        # torch_npu if ...")` (wenet's `is_torch_npu_available`): a hint, and nothing is picked
        # (`logger.info("CUDA unavailable. Not attaching OOM observer."); return`, torchtnt: both)
        # (`assert digit_version(mmcv.__version__) >= digit_version("1.4.4"), "... for CPU training!"`, mmseg's
        # `train_segmentor`: a library version the other path needs, which picks nothing either)
        return bool(node.body) and all(
            (_skips(s) and not isinstance(s, ast.Pass)) or _display_only(s) or _asserts_version(s) for s in node.body
        )
    if _in_cuda_context(branch, other) or _names_files_only(branch, other) or _adds_device_ids(branch, other):
        return True
    # `if device == "cuda": net = DataParallel(net)` only adds CUDA's replication; `if torch.cuda.device_count()
    # > 1:` asks how many devices there are, which the device-generic count answers on other accelerators too
    wraps = "device_count" not in _names_in(node.test)
    if wraps and _wraps_what_other_builds(branch, other):
        return True
    if branch and not other and all(_kernel_workaround(s) for s in branch):
        # `if query_states.device.type == "cuda" and causal_mask is not None: query_states =
        # query_states.contiguous()` (HF's SDPA attention and its copies): a CUDA kernel's bug worked around;
        # the values are the same on every device, and another device needs nothing
        return True
    if branch and not other and all(_filters_warnings(s) for s in branch):
        # `if is_RNN and torch.cuda.is_available(): warnings.simplefilter("ignore", UserWarning)` (higher): which
        # warnings show, nothing else
        return True
    shared = {ast.dump(s) for s in branch} & {ast.dump(s) for s in other}  # the work both sides time
    if _measures([s for s in branch if ast.dump(s) not in shared], _cuda_measuring) and _measures(
        [s for s in other if ast.dump(s) not in shared], _host_measuring
    ):
        # `torch.cuda.synchronize(); start = torch.cuda.Event(enable_timing=True); start.record()`, else
        # `t0 = time.time()` (segment-anything-fast's timed region; its memory figures likewise): the check
        # picks what to measure with, not a device
        return True
    # `gc.collect()` beside `torch.cuda.empty_cache()` is part of the cleanup the check guards; alone, it
    # is work other devices skip.
    branch = [s for s in branch if not _collects_garbage(s)]
    if not branch:
        return False
    # Device-generic spellings of the same calls (`torch.accelerator.synchronize()`, `torch.manual_seed`)
    # count too: they are what `portcheck fix` writes there, so fixing never turns a guard into a finding.
    bound: set = set()
    if not _guarded_work(branch, bound, wraps):
        return False
    if all(_skips(s) for s in branch):
        return False  # `if x.is_cuda: pass` guards nothing
    # The other branch may do the same thing another way (print without the CUDA figure, another
    # accelerator's API), or give what the CUDA branch computes a placeholder (`peak_flops = float("inf")`),
    # but not pick a device or a mode: then the check is a fallback after all.
    return all(
        _display_only(s) or _skips(s) or _other_accelerator(s) or isinstance(s, ast.If) or _placeholder(s, bound)
        for s in other
    )


# What measures work on CUDA: its events' methods, the device sync before reading a clock, and its memory
# counters; and what measures it on the host: its clocks and its process's memory.
_EVENT_METHODS = frozenset({"record", "synchronize", "elapsed_time", "wait", "query"})
_HOST_CLOCKS = frozenset({"time", "perf_counter", "monotonic", "time_ns", "perf_counter_ns", "monotonic_ns"})
_HOST_MEASURES = frozenset({"psutil", "resource"})
_FIGURE_NODES = (ast.BinOp, ast.UnaryOp, ast.Name, ast.Attribute, ast.Constant, ast.Subscript, ast.Load, ast.operator)


def _assigns_names(stmt: ast.stmt) -> bool:
    """An assignment to names or attributes (`a = ...`, `_, total = ...`, `total += ...`)."""
    if isinstance(stmt, ast.AugAssign):
        return isinstance(stmt.target, (ast.Name, ast.Attribute))
    return isinstance(stmt, ast.Assign) and all(
        isinstance(t, (ast.Name, ast.Attribute))
        or (isinstance(t, ast.Tuple) and all(isinstance(e, ast.Name) for e in t.elts))
        for t in stmt.targets
    )


_NUMBER_CALLS = frozenset({"int", "float", "round", "abs", "min", "max"})


def _figure(stmt: ast.stmt) -> bool:
    """`pct = int(100 * (used / total))`, `used = used >> 20`: a statement that only computes a figure from
    figures already measured (arithmetic on names; no string, no device)."""
    if not _assigns_names(stmt):
        return False
    nodes = list(walk(stmt.value))  # type: ignore[attr-defined]
    return any(isinstance(n, ast.BinOp) for n in nodes) and all(
        (isinstance(n, _FIGURE_NODES) and not (isinstance(n, ast.Constant) and isinstance(n.value, str)))
        or (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _NUMBER_CALLS)
        for n in nodes
    )


def _measures(branch: Sequence[ast.stmt], measuring: Callable[[ast.stmt], bool]) -> bool:
    """Every statement of `branch` measures (`measuring`) or computes a figure from what was measured."""
    return any(measuring(s) for s in branch) and all(measuring(s) or _figure(s) for s in branch)


def _cuda_measuring(stmt: ast.stmt) -> bool:
    """`torch.cuda.synchronize()`, `start = torch.cuda.Event(enable_timing=True)`, `end.record()`,
    `ms = start.elapsed_time(end)`, `peak = torch.cuda.max_memory_allocated() >> 20`: a statement that only
    reads CUDA's clock or memory counters."""
    if isinstance(stmt, ast.Expr):
        call = stmt.value
        return (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and (call.func.attr == "synchronize" or not _cuda_only_reference(call.func))
            and call.func.attr in _EVENT_METHODS
        )
    if not _assigns_names(stmt):
        return False
    calls = [n for n in walk(stmt.value) if isinstance(n, ast.Call)]  # type: ignore[attr-defined]
    return bool(calls) and all(
        isinstance(c.func, ast.Attribute)
        and (
            _cuda_state_query(c)
            or (_cuda_only_reference(c.func) and c.func.attr == "Event")
            or (not _cuda_only_reference(c.func) and c.func.attr in _EVENT_METHODS)
        )
        for c in calls
    ) and all(isinstance(n, (ast.Call, ast.keyword) + _FIGURE_NODES) for n in walk(stmt.value))  # type: ignore[attr-defined]


def _host_measuring(stmt: ast.stmt) -> bool:
    """`t0 = time.time()`, `elapsed = (time.perf_counter() - t0) * 1000`, `import psutil`, `total =
    psutil.virtual_memory().total`: a statement that only reads the host's clock or its process's memory."""
    if isinstance(stmt, ast.Import):
        return all(a.name in _HOST_MEASURES for a in stmt.names)
    if not _assigns_names(stmt):
        return False
    calls = 0
    for node in walk(stmt.value):  # type: ignore[attr-defined]
        if isinstance(node, ast.Call):
            root = dotted(node.func) or ""
            if isinstance(node.func, ast.Name) and node.func.id in _NUMBER_CALLS:
                continue
            if isinstance(node.func, ast.Name) and node.func.id in _HOST_CLOCKS and not node.args:
                calls += 1  # `from time import perf_counter`
                continue
            if not (
                isinstance(node.func, ast.Attribute)
                and (node.func.attr in _HOST_CLOCKS and not node.args or root.split(".", 1)[0] in _HOST_MEASURES)
            ):
                return False
            calls += 1
        elif not isinstance(node, _FIGURE_NODES):
            return False
    return calls > 0


def _stops_with_cuda_only(node: ast.If, imports: ImportTable) -> bool:
    """`if not data.is_cuda and torch.cuda.is_available(): log.info(...); raise Exception("data isnt on cuda")`
    (flair's language-model trainer): a sanity check that stops a run only where CUDA is (a conjunct asks
    for it); elsewhere the code after it runs as it is, so nothing falls back."""
    body = node.body
    if not body or not isinstance(body[-1], ast.Raise) or not all(
        isinstance(s, ast.Raise) or _display_only(s) for s in body
    ):
        return False
    return any(_true_only_with_cuda(c, imports) for c in and_terms(node.test))


def _true_only_with_cuda(term: ast.AST, imports: ImportTable) -> bool:
    """`torch.cuda.is_available()`, `x.is_cuda`, `x.device.type == "cuda"`: false wherever CUDA is not
    (unlike `rank + 1 > torch.cuda.device_count()`, true there)."""
    if isinstance(term, ast.Call):
        return (imports.resolved(term.func) or "") == "torch.cuda.is_available"
    if isinstance(term, ast.Attribute):
        return term.attr == "is_cuda"
    return (
        isinstance(term, ast.Compare)
        and len(term.ops) == 1
        and isinstance(term.ops[0], (ast.Eq, ast.Is))
        and any(isinstance(c, ast.Constant) and c.value == "cuda" for c in (term.left, term.comparators[0]))
    )


_FILE_NAME = re.compile(r"\w\.\w+$")  # `results_cuda.csv`, `trace.json`: a file name (with an extension)
_STRING_LITERAL = re.compile(r"""(['"])(?:(?!\1).)*\1""")


def _names_files_only(branch: Sequence[ast.stmt], other: Sequence[ast.stmt]) -> bool:
    """`csv_path = os.path.join(path, "bench_cuda.csv")`, else `csv_path = os.path.join(path, "bench.csv")`
    (CrypTen's benchmarks): both sides make the same value but for the names of files; the check names a file
    after the device, it picks none (a backend, a precision or a device string is a choice, and stays one)."""
    if len(branch) != 1 or len(other) != 1 or not (_assigns_names(branch[0]) and _assigns_names(other[0])):
        return False
    sides = [
        [n.value for n in walk(stmt) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        for stmt in (branch[0], other[0])
    ]
    differing = [(a, b) for a, b in zip(*sides) if a != b]
    return (
        len(sides[0]) == len(sides[1])
        and bool(differing)
        and all(_FILE_NAME.search(a) and _FILE_NAME.search(b) for a, b in differing)
        and _STRING_LITERAL.sub("''", ast.unparse(branch[0])) == _STRING_LITERAL.sub("''", ast.unparse(other[0]))
    )


def _in_cuda_context(branch: Sequence[ast.stmt], other: Sequence[ast.stmt]) -> bool:
    """`with torch.cuda.device(x.device): return f(x)` on the CUDA side, `return f(x)` on the other (esm's
    `FusedLayerNorm` wrapper): the same work, with only a CUDA context around it."""
    return (
        len(branch) == 1
        and isinstance(branch[0], ast.With)
        and all(_cuda_only_call(item.context_expr) for item in branch[0].items)
        and [ast.dump(s) for s in branch[0].body] == [ast.dump(s) for s in other]
    )


# A project's own helper named for a GPU memory readout (RecBole's `get_gpu_usage(device)`).
_GPU_MEMORY_HELPER = re.compile(r"(?i)(?:gpu|cuda)_?(?:mem|memory|usage|util)|(?:mem|memory|usage)_?(?:gpu|cuda)")


def _reads_gpu_memory(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and bool(_GPU_MEMORY_HELPER.search(_last_name(node.func)))


def is_pure_guard_expression(node: ast.IfExp, imports: ImportTable) -> bool:
    """`torch.cuda.synchronize if device_type == "cuda" else lambda: None`: a CUDA check that picks a
    CUDA-only function, and a no-op elsewhere. It protects the program from CUDA-only code, as
    `is_pure_guard`'s `if` does; it picks no device. (A CUDA-only call's result against a constant,
    `torch.cuda.current_device() if ... else -1`, is a value the program goes on with: not this.)"""
    if not is_cuda_check(node.test, imports):
        return False
    negative = is_negative_cuda_check(node.test, imports)
    cuda, other = (node.orelse, node.body) if negative else (node.body, node.orelse)
    if (_cuda_state_query(_scaled(cuda)) or _reads_gpu_memory(cuda)) and _constant_like(other):
        # `torch.cuda.get_rng_state() if torch.cuda.is_available() else None`, `torch.cuda.memory_reserved() /
        # 1e9 if torch.cuda.is_available() else 0`: CUDA's own state, or a placeholder
        return True
    if getattr(node, STATEMENT_ATTR, False) and isinstance(cuda, ast.Call) and _constant_like(other):
        # `torch.cuda.synchronize() if torch.cuda.is_available() else None` as a statement: an `if` written
        # on one line, whose value nobody keeps (`torch.accelerator.synchronize()` there too: it is what
        # `portcheck fix` writes, so fixing never turns the guard into a finding)
        return _cuda_only_reference(cuda.func) or _accelerator_reference(cuda.func)
    if (
        isinstance(cuda, ast.Call)
        and isinstance(cuda.func, ast.Attribute)
        and cuda.func.attr in ("stream", "device")
        and _cuda_only_reference(cuda.func)
        and _null_context(other)
    ):
        # `torch.cuda.stream(torch.cuda.Stream(dev)) if torch.cuda.is_available() else nullcontext()` (CosyVoice):
        # where the work runs, not how; CUDA's autocast against nothing is a precision other devices lose
        return True
    return _cuda_only_reference(cuda) and (isinstance(other, ast.Lambda) or _constant_like(other))


def _null_context(node: ast.AST) -> bool:
    """`nullcontext()` (`contextlib.nullcontext`): a context that does nothing."""
    return isinstance(node, ast.Call) and _last_name(node.func) == "nullcontext" and not node.args


# CUDA-only queries of CUDA's own state (its RNG, its memory, its device's name) and its own scheduling
# objects (fairscale's `torch.cuda.current_stream(d) if d.type == "cuda" else None`): no device comes of them.
_CUDA_STATE_QUERY = re.compile(
    r"rng_state|memory|mem_get_info|get_device_name|get_device_properties|capability|[sS]tream$|^Event$"
)


def _scaled(node: ast.AST) -> ast.AST:
    """`torch.cuda.memory_reserved() / 1e9` -> the call: a value scaled by constants."""
    while isinstance(node, ast.BinOp):
        if _constant_like(node.right):
            node = node.left
        elif _constant_like(node.left):
            node = node.right
        else:
            break
    return node


def _cuda_state_query(node: ast.AST) -> bool:
    """`torch.cuda.get_rng_state()`, `torch.cuda.max_memory_allocated(dev)`: a call of a CUDA-only query of
    CUDA's own state. Its device-generic spelling counts too (`(torch.accelerator.memory_reserved() if
    torch.accelerator.is_available() else 0)`): it is what `portcheck fix` writes there, so fixing never
    turns the guard around it into a finding."""
    if isinstance(node, ast.IfExp):
        return _cuda_state_query(node.body) and _constant_like(node.orelse)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and (_cuda_only_reference(node.func) or _accelerator_reference(node.func))
        and bool(_CUDA_STATE_QUERY.search(node.func.attr))
    )


def arguments_picked_by_cuda_check(call: ast.Call, scope: Optional[ast.AST], imports: ImportTable) -> bool:
    """`torch.backends.cuda.sdp_kernel(**config._asdict())` after `config = self.cuda_config if is_cuda else
    self.cpu_config` (lucidrains' `Attend`, in most of his repositories): every argument is a name its scope
    binds only to a choice a CUDA check makes, so what the call is given elsewhere is the other side's."""
    values = [a.value if isinstance(a, ast.Starred) else a for a in call.args] + [k.value for k in call.keywords]
    roots = {_chain_root(v) for v in values}
    if not values or None in roots or scope is None:
        return False
    bound: Dict[str, List[ast.AST]] = {}
    assigned: Set[int] = set()
    for node in walk(scope):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, []).append(node.value)
            assigned.add(id(node.targets[0]))
        elif (
            isinstance(node, ast.Name)
            and not isinstance(node.ctx, ast.Load)
            and node.id in roots
            and id(node) not in assigned
        ):
            bound.setdefault(node.id, []).append(node)  # a loop target, `with ... as`, an unpacking
    return all(
        bool(bound.get(cast(str, root)))
        and all(isinstance(v, ast.IfExp) and is_cuda_check(v.test, imports) for v in bound[cast(str, root)])
        for root in roots
    )


def _cuda_only_reference(node: ast.AST) -> bool:
    """`torch.cuda.synchronize`, `torch.cuda.max_memory_allocated`: a CUDA-only function, not called."""
    name = dotted(node) or ""
    return isinstance(node, ast.Attribute) and any(p.lower() == "cuda" for p in name.split(".")[:-1])


def _accelerator_reference(node: ast.AST) -> bool:
    """`torch.accelerator.synchronize`: the device-generic function `portcheck fix` writes for a CUDA one."""
    return (dotted(node) or "").startswith("torch.accelerator.")


def _constant_like(node: ast.AST) -> bool:
    """A constant, `None`, `float("inf")`, `-1`, `torch.nan` (`math.inf`, `np.nan`), or a function that returns
    one (`lambda: 0`)."""
    if isinstance(node, ast.Attribute) and node.attr in ("nan", "inf", "NaN", "NAN", "Inf"):
        return isinstance(node.value, ast.Name) and node.value.id in ("torch", "math", "np", "numpy")
    if isinstance(node, ast.Lambda):
        return _constant_like(node.body)
    if isinstance(node, ast.UnaryOp):
        return _constant_like(node.operand)
    if isinstance(node, ast.BinOp):
        return _constant_like(node.left) and _constant_like(node.right)  # `1024 ** 3`, `2**20`
    if isinstance(node, ast.Call):
        return (
            isinstance(node.func, ast.Name)
            and node.func.id in ("float", "int")
            and not node.keywords
            and all(isinstance(a, ast.Constant) for a in node.args)
        )
    return isinstance(node, ast.Constant)


def _placeholder(stmt: ast.AST, bound: set) -> bool:
    """`peak_flops = float("inf")` in the other branch of a guard whose CUDA branch computes `peak_flops`
    from CUDA-only queries: a stand-in value where the query cannot run."""
    return (
        isinstance(stmt, ast.Assign)
        and all(isinstance(t, ast.Name) and t.id in bound for t in stmt.targets)
        and _constant_like(stmt.value)
    )


def _collects_garbage(stmt: ast.AST) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and dotted(stmt.value.func) in ("gc.collect", "collect")
        and not stmt.value.args
    )


# Wrappers that replicate a module over the GPUs of one process; elsewhere the module runs as it is.
_GPU_WRAPPERS = frozenset({"DataParallel"})


def _adds_device_ids(branch: Sequence[ast.stmt], other: Sequence[ast.stmt]) -> bool:
    """`model = DDP(model, device_ids=[rank])`, else `model = DDP(model)` (pytorch_geometric_temporal's
    `pems_ddp.py`): the same call, the CUDA side adding only the CUDA device list of a (Distributed)DataParallel
    wrap; the model is wherever it was put, and the other side's wrap is the device-generic one."""
    pair = _one_assignment_each(branch, other)
    if pair is None or not (isinstance(pair[0].value, ast.Call) and isinstance(pair[1].value, ast.Call)):
        return False
    call, plain = pair[0].value, pair[1].value
    same = ast.dump(call.func) == ast.dump(plain.func)
    added = {k.arg for k in call.keywords} - {k.arg for k in plain.keywords}
    kept = {ast.dump(k) for k in plain.keywords} <= {ast.dump(k) for k in call.keywords}
    return (
        same
        and [ast.dump(a) for a in call.args] == [ast.dump(a) for a in plain.args]
        and kept
        and bool(added)
        and added <= {"device_ids", "output_device"}
    )


def _wraps_what_other_builds(branch: Sequence[ast.stmt], other: Sequence[ast.stmt]) -> bool:
    """`model = torch.nn.DataParallel(Model(**config))`, else `model = Model(**config)` (scruples' demo app): the
    CUDA side only spreads over CUDA's devices what the other side builds; the model is the same."""
    pair = _one_assignment_each(branch, other)
    if pair is None or not _wraps_for_gpus(pair[0]):
        return False
    wrap = cast(ast.Call, pair[0].value)
    return len(wrap.args) == 1 and ast.dump(wrap.args[0]) == ast.dump(pair[1].value)


def _one_assignment_each(
    branch: Sequence[ast.stmt], other: Sequence[ast.stmt]
) -> Optional[Tuple[ast.Assign, ast.Assign]]:
    """The two assignments when each side of a check is one assignment to the same targets (`model = ...`)."""
    if len(branch) != 1 or len(other) != 1:
        return None
    cuda, rest = branch[0], other[0]
    if not (isinstance(cuda, ast.Assign) and isinstance(rest, ast.Assign)):
        return None
    if [ast.dump(t) for t in cuda.targets] != [ast.dump(t) for t in rest.targets]:
        return None
    return cuda, rest


def _wraps_for_gpus(stmt: ast.AST) -> bool:
    """`net = torch.nn.DataParallel(net)`: the model spread over the CUDA devices of this process."""
    if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call):
        return False
    name = dotted(stmt.value.func) or ""
    return name.rsplit(".", 1)[-1] in _GPU_WRAPPERS


def _guarded_work(block, bound: set, wraps: bool = False) -> bool:
    """Whether every statement of `block` is CUDA-only, display, a skip, bookkeeping (`self.runs += 1`),
    or an `if` made of such statements (`if self.runs == self.max_runs: print(torch.cuda.memory_summary())`).
    With `wraps`, a `DataParallel` wrap counts too (the check asks about CUDA, not how many devices)."""
    return all(
        _cuda_only_call(s)
        or (wraps and _wraps_for_gpus(s))
        or _display_only(s)
        or _skips(s)
        or _other_accelerator(s)
        or _seeds(s)
        or _cuda_backend_setting(s)
        or _derived(s, bound)
        or (isinstance(s, ast.AugAssign) and isinstance(s.value, ast.Constant))
        or (isinstance(s, ast.If) and bool(s.body) and _guarded_work(s.body + s.orelse, bound, wraps))
        for s in _binding(block, bound)
    )


def _binding(branch, bound: set):
    """The statements of `branch`, adding each one's assigned names to `bound` once it is checked."""
    for stmt in branch:
        yield stmt
        if isinstance(stmt, ast.Assign):
            bound.update(t.id for t in stmt.targets if isinstance(t, ast.Name))


def _cuda_backend_setting(stmt: ast.AST) -> bool:
    """`torch.backends.cuda.matmul.allow_tf32 = True` (or a value read from a config, with no call): a
    CUDA-only switch, set only where CUDA is."""
    if not isinstance(stmt, ast.Assign) or any(isinstance(n, ast.Call) for n in walk(stmt.value)):
        return False
    names = [dotted(t) or "" for t in stmt.targets]
    return all(re.match(r"^(?:(?:torch|th)\.backends\.(?:cuda|cudnn)|cudnn)\.", n) for n in names)


def _derived(stmt: ast.AST, bound: set) -> bool:
    """`mb = allocated / 2**20` after `allocated = torch.cuda.memory_allocated()`, `flops =
    peak_flops(name)` after `name = torch.cuda.get_device_name()`: a value computed only from what the
    branch bound before (and constants); or returned (`return is_supported` after `is_supported = (9, 0) <=
    capability`, OLMo-core's `has_flash_attn_3`)."""
    if not isinstance(stmt, (ast.Assign, ast.Return)) or stmt.value is None or not bound:
        return False
    # the names a callee is spelled with (`get_peak_flops(name)`, `math.ceil(mb)`) are not values
    callees = {id(n) for c in walk(stmt.value) if isinstance(c, ast.Call) for n in walk(c.func)}
    names = [n.id for n in walk(stmt.value) if isinstance(n, ast.Name) and id(n) not in callees]
    return bool(names) and all(n in bound for n in names)


def _other_accelerator(stmt: ast.AST) -> bool:
    """`torch.xpu.empty_cache()`, `torch.mps.synchronize()`: the same operation on another backend."""
    for sub in walk(stmt):
        if isinstance(sub, ast.Call):
            name = dotted(sub.func) or ""
            if re.match(r"^(?:torch|th)\.(?:xpu|mps|npu|mlu|hpu|neuron|musa|accelerator)\.", name):
                return True
    return False


def _seeds(stmt: ast.AST) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Call)
        and (dotted(stmt.value.func) or "").endswith(
            ("torch.manual_seed", "torch.random.manual_seed", "th.manual_seed")
        )
    )


# Device-generic APIs that replaced CUDA-bound ones: a torch without them is older than any the targets run.
_GENERIC_APIS = frozenset(
    {
        "torch.accelerator",
        "torch.amp.GradScaler",
        "torch.amp.custom_fwd",
        "torch.amp.custom_bwd",
        "torch.get_device_module",
    }
)


def asks_for_accelerator_api(test: ast.AST, imports: ImportTable) -> Optional[bool]:
    """`hasattr(torch, "accelerator")`, `hasattr(torch.amp, "GradScaler")` (True) or its negation (False): a
    test for a torch recent enough to have the device-generic API; None for any other test. (glue-factory's
    `torch.amp.custom_fwd(..., device_type="cuda") if hasattr(torch.amp, "custom_fwd") else
    torch.cuda.amp.custom_fwd(...)`: the other arm runs on an old torch only.)"""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    call = test.operand if isinstance(test, ast.UnaryOp) and negated else test
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "hasattr"
        and len(call.args) == 2
        and isinstance(call.args[1], ast.Constant)
        and isinstance(call.args[1].value, str)
        and f"{imports.resolve(call.args[0])}.{call.args[1].value}" in _GENERIC_APIS
    ):
        return not negated
    recent = _asks_recent_torch(call)
    return None if recent is None else recent != negated


# The oldest torch the targets run: `neuron` and `generic` build on `torch.accelerator` (2.6). A test for a
# torch at least this recent is true wherever portcheck's targets run; its other arm serves older torch only.
_TARGET_TORCH = (2, 6)
_AT_LEAST = {ast.GtE: True, ast.Gt: True, ast.Lt: False, ast.LtE: False}
_VERSION_TEXT = re.compile(r"^(\d+)\.(\d+)")


def _asks_recent_torch(test: ast.AST) -> Optional[bool]:
    """`compare_version("torch", operator.ge, "2.4.0")` (Liger), `version.parse(torch.__version__) >=
    version.parse("2.4")`, `TORCH_VERSION >= (2, 4)` (True), their `<` forms (False): whether a test asks
    for a torch at least as recent as `_TARGET_TORCH`; None for any other test or a later version."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _AT_LEAST:
        left, right, at_least = test.left, test.comparators[0], _AT_LEAST[type(test.ops[0])]
        if _names_torch_version(right) and not _names_torch_version(left):
            left, right, at_least = right, left, not at_least
        version = _version_literal(right)
        if _names_torch_version(left) and version is not None and version <= _TARGET_TORCH:
            return at_least
        return None
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "startswith"
        and _names_torch_version(test.func.value)
        and len(test.args) == 1
    ):
        # `torch.__version__.startswith('0')` (HRNet's `bn_helper.py`): true on a torch of those majors only
        prefixes = test.args[0].elts if isinstance(test.args[0], ast.Tuple) else [test.args[0]]
        versions = [v for p in prefixes if (v := _version_literal(_as_version(p))) is not None]
        if versions and len(versions) == len(prefixes) and all(v < _TARGET_TORCH for v in versions):
            return False
        return None
    if isinstance(test, ast.Call) and "version" in (dotted(test.func) or "").lower():
        args = list(test.args) + [k.value for k in test.keywords]
        if not any(isinstance(a, ast.Constant) and a.value == "torch" for a in args):
            return None
        versions = [v for a in args if (v := _version_literal(a)) is not None]
        ops = {(dotted(a) or "").rsplit(".", 1)[-1] if not isinstance(a, ast.Constant) else str(a.value) for a in args}
        if len(versions) != 1 or versions[0] > _TARGET_TORCH:
            return None
        if ops & {"ge", "gt", ">=", ">"}:
            return True
        if ops & {"lt", "le", "<", "<="}:
            return False
    return None


def _as_version(prefix: ast.AST) -> ast.AST:
    """A version prefix as the newest version it admits below the next major: `'0'` or `'0.'` -> `'0.99'`,
    `'1.1'` stays `'1.1'` (it admits 1.10 to 1.19 too, all older than the targets' torch)."""
    if isinstance(prefix, ast.Constant) and isinstance(prefix.value, str):
        text = prefix.value.rstrip(".")
        if text.isdigit():
            return ast.Constant(f"{text}.99")
    return prefix


def _names_torch_version(node: ast.AST) -> bool:
    """`torch.__version__`, `version.parse(torch.__version__)`, `TORCH_VERSION`, `torch_version`."""
    if isinstance(node, ast.Call) and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, ast.Subscript):
        node = node.value
    name = (dotted(node) or "").lower()
    return name == "torch.__version__" or ("torch" in name and name.endswith("version"))


def _version_literal(node: ast.AST) -> Optional[Tuple[int, int]]:
    """`"2.4.0"`, `version.parse("2.4")`, `(2, 4)`: the (major, minor) a literal version names."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        found = _VERSION_TEXT.match(node.value)
        return (int(found.group(1)), int(found.group(2))) if found else None
    if isinstance(node, ast.Tuple) and len(node.elts) >= 2:
        parts = [e.value for e in node.elts[:2] if isinstance(e, ast.Constant) and isinstance(e.value, int)]
        return (parts[0], parts[1]) if len(parts) == 2 else None
    return None


def is_test_function(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(("test", "_test"))


REQUIREMENT = re.compile(
    # (`requires_gpu`, lightning-thunder's `requiresCUDA`, `requiresNVFuser`)
    r"(?i)^requires?_?\w*(?:gpu|cuda|bnb|bitsandbytes|non_cpu|accelerator|triton|flash|nccl|multi_device|nvfuser)\w*$"
    r"|^skip_?if_?(?:lt_?x_?gpu|no_?(?:gpus?|cuda|nccl))\w*$|^(?:only_?cuda|cuda_?only|gpu_?only)$"
    # fairscale's `skip_if_single_gpu`, `skip_if_less_than_four_gpu`, `skip_if_py39_no_cuda`
    r"|^skip_?if_?\w*?(?:_no|single|less_?than_?\w+?|fewer_?than_?\w+?|not_?enough)_?(?:gpus?|cuda|nccl)\w*$"
    r"|^(?:multi_?)?(?:gpu|cuda)_?tests?$"  # vissl's `@gpu_test(gpu_count=2)`: runs the test only with the GPUs
)
CUDA_WORD = re.compile(r"(?i)cuda|gpu")
# A skip condition's names that ask for CUDA, or for a CUDA-only library (`not HAS_FA3`, `no_flash_attn`,
# `not XFORMERS_AVAILABLE`, `not HAS_BNB`).
_CUDA_SKIP_WORD = re.compile(
    r"(?i)cuda|gpu|fa[23](?![a-z0-9])|flash_?att|xformers|apex|bitsandbytes|bnb(?![a-z])|transformer_?engine"
    r"|(?<![a-z])te(?![a-z])"  # TransformerEngine (`HAVE_TE`, `is_te_min_version`): NVIDIA's CUDA library
    r"|(?<![a-z])sm_?(?:\d|at_?least|version)"  # an NVIDIA compute capability (torchao's `is_sm_at_least_90()`)
    r"|nccl"  # NCCL, CUDA's collectives (ignite's `skipif(not dist.is_nccl_available())`)
)
# Environment variables only NVIDIA's containers and CUDA installs set (`NVIDIA_PYTORCH_VERSION`).
_CUDA_ENVIRONMENT = re.compile(r"^(?:NVIDIA|CUDA)_[A-Z_]+$")
# Decorators that make a function a benchmark of GPU kernels.
_KERNEL_BENCHMARKS = frozenset({"triton.testing.perf_report"})


def skips_without_cuda(node: ast.AST, imports: ImportTable) -> bool:
    """A test function or class decorated to run only with CUDA: `@unittest.skipIf(not
    torch.cuda.is_available(), ...)`, `@pytest.mark.skipif(torch.cuda.device_count() < 2, ...)`,
    `@require_torch_gpu`, `@require_bitsandbytes`, `@pytest.mark.gpu`; or a Triton benchmark
    (`@triton.testing.perf_report`), which times the module's kernels where they run. Its body cannot run
    elsewhere, so it is no lock-in of the code under test (or of the kernels, reported where they are)."""
    return any(cuda_only_decorator(deco, imports) for deco in getattr(node, "decorator_list", []))


def cuda_only_decorator(deco: ast.AST, imports: ImportTable) -> bool:
    """One decorator (or mark) of `skips_without_cuda`."""
    call = deco if isinstance(deco, ast.Call) else None
    name = dotted(call.func if call is not None else deco) or ""
    last = name.rsplit(".", 1)[-1]
    if REQUIREMENT.match(last):
        return True
    if last == "perf_report" and imports.resolve(call.func if call is not None else deco) in _KERNEL_BENCHMARKS:
        return True
    if name.startswith("pytest.mark.") and CUDA_WORD.search(last):
        return True
    if call is not None and any(_needs_cuda_devices(k) for k in call.keywords):
        return True  # Lightning's `@RunIf(min_cuda_gpus=1)`, `_RunIf(min_gpus=2)`
    if last in SKIP_DECORATORS and call is not None and call.args:
        condition = call.args[0]
        if is_cuda_check(condition, imports) or any(_CUDA_SKIP_WORD.search(n) for n in _names_in(condition)):
            return True
        if any(
            isinstance(n, ast.Constant) and isinstance(n.value, str) and _CUDA_ENVIRONMENT.match(n.value)
            for n in walk(condition)
        ):
            return True  # `skipif(Version(os.getenv("NVIDIA_PYTORCH_VERSION", "24.01")) <= ...)`: NVIDIA's container
    return False


# Keywords of a skip-unless helper that ask for CUDA devices (Lightning's `RunIf(min_cuda_gpus=1)`).
_CUDA_DEVICE_KEYWORDS = frozenset({"min_cuda_gpus", "min_gpus"})


def _needs_cuda_devices(keyword: ast.keyword) -> bool:
    value = keyword.value
    return (
        keyword.arg in _CUDA_DEVICE_KEYWORDS
        and isinstance(value, ast.Constant)
        and type(value.value) is int
        and value.value > 0
    )


def _names_in(node: ast.AST):
    for sub in walk(node):
        if isinstance(sub, ast.Name):
            yield sub.id
        elif isinstance(sub, ast.Attribute):
            yield sub.attr


def is_test_assertion_call(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return bool(_ASSERT_CALLS.match(name))


# `collect_env`, `collect_env_info`, `print_env`, `get_system_info`, `env_report`, `show_versions`,
# `_get_gpu_info` (mosaicml/llm-foundry's environment-logging callback):
# functions that read toolkit variables and versions to show them.
_DISPLAY_FUNCTION = re.compile(
    r"^_?(?:collect|print|show|dump|log|report|describe)_?(?:env|environment|system|sys|platform|versions?|cuda|gpu|hardware)\w*$"
    r"|^_?get_?(?:env|environment|system|platform|gpu|nvidia|cuda|hardware)_?info\w*$|^\w*_env_info$"
    r"|^_?(?:env|environment|system|platform|hardware|device|gpu|cuda)_?(?:info|report|summary)$"
    # memory reports (DiffRL's `mem_report`, Megatron's `report_memory`)
    r"|^_?(?:gpu_?|cuda_?)?mem(?:ory)?_?(?:report|summary|usage|stats)$|^_?(?:print|show|dump|log|report)_?(?:gpu_?|cuda_?)?mem(?:ory)?\w*$",
    re.IGNORECASE,
)


def is_display_module(path: str) -> bool:
    """`collect_env.py`, `print_env_info.py`: a module that exists to collect or show environment information."""
    name = re.split(r"[\\/]", path)[-1]
    return name.endswith(".py") and bool(_DISPLAY_FUNCTION.match(name[:-3]))


# `is_bnb_4bit_available`, `_is_te_available`, `is_package_available`: functions whose import is the question.
_PROBE_FUNCTION = re.compile(r"^_?is_\w*_?available$")


def is_probe_function(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and bool(_PROBE_FUNCTION.match(node.name))


def is_display_function(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and bool(_DISPLAY_FUNCTION.match(node.name))


_FACTORIES = frozenset(
    (
        "tensor as_tensor zeros ones empty full arange linspace logspace rand randn randint eye "
        "zeros_like ones_like empty_like full_like"
    ).split()
)


def is_host_factory(node: ast.Call, imports: ImportTable) -> bool:
    """`torch.linspace(..., dtype=torch.float64)` with no `device=`: the tensor is built on the host."""
    name = imports.resolved(node.func) or ""
    if not name.startswith("torch.") or name.count(".") != 1 or name[6:] not in _FACTORIES:
        return False
    if name.endswith("_like"):
        return False  # follows its argument's device
    return not any(k.arg == "device" or k.arg is None for k in node.keywords)


def is_fp32_island(call: ast.Call) -> bool:
    """`autocast(..., enabled=False)`, or the legacy `torch.cuda.amp.autocast(False)` (its first parameter is
    `enabled`; `torch.autocast`'s is a device type): autocast turned off for a region that must run in fp32.
    Or `autocast("cuda", dtype=torch.float32)` (ImgEdit's YOLO-World inference): the region's ops are cast to
    fp32, or autocast is disabled with a warning where the dtype is not supported, fp32 either way."""
    return fp32_island_spelling(call) is not None


_FULL_PRECISION = frozenset({"float32", "float", "float64", "double"})


def fp32_island_spelling(call: ast.Call) -> Optional[str]:
    """How `call` makes an fp32 island (`enabled=False`, `dtype=torch.float32`), or None."""
    if call.args and isinstance(call.args[0], ast.Constant) and call.args[0].value is False:
        return "False"
    for k in call.keywords:
        if k.arg == "enabled" and isinstance(k.value, ast.Constant) and k.value.value is False:
            return "enabled=False"
        if (
            k.arg == "dtype"
            and isinstance(k.value, ast.Attribute)
            and k.value.attr in _FULL_PRECISION
            and isinstance(k.value.value, ast.Name)
            and k.value.value.id == "torch"
        ):
            return f"dtype=torch.{k.value.attr}"
    return None


_HOST_NAMES_ATTR = "_portcheck_host_names"


def host_names(scope: ast.AST, imports: ImportTable) -> frozenset:
    """Names of a function (or module) bound only to host values: `d = np.array([...])` or a tensor factory
    that names no device (`m = torch.zeros(n)`), then perhaps `d = d[d.nonzero()]`. A name bound any other
    way (a parameter, a loop target, another call) is not."""
    known = getattr(scope, _HOST_NAMES_ATTR, None)
    if known is not None:
        return known
    kinds: dict = {}  # name -> list of ("np", "") / ("ref", root name) / ("param", "") / ("other", "")
    args = getattr(scope, "args", None)
    scalars: FrozenSet[str] = frozenset()
    if isinstance(args, ast.arguments):
        for a in args.posonlyargs + args.args + args.kwonlyargs + [x for x in (args.vararg, args.kwarg) if x]:
            kinds.setdefault(a.arg, []).append(("param", ""))
        scalars = _number_parameters(args)
    numpied: Set[str] = set()  # names the scope calls `.numpy()` on (`x.numpy()`, `x.detach().numpy()`)
    frames: Set[str] = set()  # names the scope reads as pandas values (`x.iloc[...]`, `x.index.tolist()`)
    unpacked: List[Set[str]] = []  # names unpacked together from one call's result (`x, y = task.get_data()`)
    stack: List[ast.AST] = list(getattr(scope, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPE_STOPS):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "numpy":
            root = _chain_root(node.func.value)
            if root is not None:
                numpied.add(root)
        required = _required_host_type(node, imports)
        if required is not None:
            numpied.add(required)  # `if not isinstance(ref, torch.IntTensor): raise TypeError(...)`: a CPU tensor
        framed = _framed_name(node)
        if framed is not None:
            frames.add(framed)  # `test_inputs.index.tolist()`: matbench's inputs are a pandas series
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            kinds.setdefault(node.targets[0].id, []).append(_host_kind(node.value, imports, scalars))
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Tuple)
            and all(isinstance(e, ast.Name) for e in node.targets[0].elts)
        ):
            # `_, predicted = torch.max(scores.cpu(), 1)`: each part of a host result is on the host
            kind = _host_kind(node.value, imports, scalars)
            for e in node.targets[0].elts:
                kinds.setdefault(cast(ast.Name, e).id, []).append(kind)
            if isinstance(node.value, ast.Call):
                unpacked.append({cast(ast.Name, e).id for e in node.targets[0].elts})
            stack.append(node.value)
            continue
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            kinds.setdefault(node.id, []).append(("other", ""))  # any other binding: for, with, +=, unpacking
            continue
        stack.extend(
            c
            for c in children(node)
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and c is node.targets[0])
        )
    # Bound to host values only; or, where the scope calls `.numpy()` on it (which raises on any device but
    # the CPU), bound only as a parameter and to itself without a move (demucs's `references =
    # references.transpose(1, 2).double()`, then `references.numpy()`): a CPU tensor all along.
    host = {
        n
        for n, ks in kinds.items()
        if all(k in ("np", "ref", "none") for k, _ in ks) and any(k == "np" for k, _ in ks)
        or n in numpied and all(k in ("np", "ref", "param", "none") for k, _ in ks)
    }
    changed = True
    while changed:
        changed = False
        for name in list(host):
            if any(k == "ref" and root != name and root not in host for k, root in kinds[name]):
                host.discard(name)
                changed = True
    # a name bound only to parts of host values (`ids = text_inputs.input_ids`, then perhaps `ids = ids.view(-1)`)
    # is one too
    changed = True
    while changed:
        changed = False
        for name, ks in kinds.items():
            if (
                name not in host
                and all(k == "ref" and (root in host or root == name) for k, root in ks)
                and any(root != name for _, root in ks)
            ):
                host.add(name)
                changed = True
    # the parts of a result one of which is a pandas value are too (matbench's `inputs, outputs =
    # task.get_test_data(fold)`, then `inputs.index.tolist()`)
    frames.update(*(names for names in unpacked if names & frames))
    found = frozenset(host | frames)
    try:
        setattr(scope, _HOST_NAMES_ATTR, found)
    except AttributeError:  # pragma: no cover - ast nodes accept attributes
        pass
    return found


def _required_host_type(node: ast.AST, imports: ImportTable) -> Optional[str]:
    """The name in `if not isinstance(ref, torch.IntTensor): raise TypeError(...)` or `assert isinstance(ref,
    torch.IntTensor)` (fairseq's `bleu.py`, copied into its forks): past it, `ref` is a CPU tensor, the only
    kind a legacy tensor type names."""
    if isinstance(node, ast.If) and node.body and isinstance(node.body[-1], ast.Raise) and not node.orelse:
        test = node.test
        if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
            return None
        check = test.operand
    elif isinstance(node, ast.Assert):
        check = node.test
    else:
        return None
    if (
        isinstance(check, ast.Call)
        and isinstance(check.func, ast.Name)
        and check.func.id == "isinstance"
        and len(check.args) == 2
        and isinstance(check.args[0], ast.Name)
        and (imports.resolved(check.args[1]) or "") in HOST_TENSOR_TYPES
    ):
        return check.args[0].id
    return None


def _number_parameters(args: ast.arguments) -> FrozenSet[str]:
    """Parameters that take a number: annotated `int`, `float` or `bool`, or defaulting to a number
    (`seq_len: int = 2048`)."""
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    out = set()
    for a, default in list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults)):
        annotated = isinstance(a.annotation, ast.Name) and a.annotation.id in ("int", "float", "bool")
        if annotated or (isinstance(default, ast.Constant) and isinstance(default.value, (int, float))):
            out.add(a.arg)
    return frozenset(out)


def _host_kind(value: ast.AST, imports: ImportTable, scalars: FrozenSet[str] = frozenset()):
    if isinstance(value, ast.Constant) and value.value is None:
        # `thickness = None`, then perhaps `thickness = torch.zeros(n)` (DiffVG's `backward`): no tensor anywhere
        return ("none", "")
    inner = value
    while isinstance(inner, ast.Attribute) and inner.attr in _ENCODING_FIELDS:
        inner = inner.value  # `tokenizer(prompt, return_tensors="pt").input_ids`
    if isinstance(inner, ast.Call) and (_makes_host_value(inner, imports) or _tokenizes(inner)):
        return ("np", "")
    called = value
    while isinstance(called, ast.Subscript):
        called = called.value  # `W = torch.qr(m)[0]`: a part of the result is where the result is
    if isinstance(called, ast.Call) and (imports.resolved(called.func) or "").startswith("torch."):
        # `t = torch.inverse(t)`: a torch function that names no device computes where its first argument is
        first = called.args[0] if called.args and not any(k.arg == "device" for k in called.keywords) else None
        if isinstance(first, (ast.Tuple, ast.List)) and first.elts:
            # `torch.cat((lens, torch.arange(0, n, k)))` (flash-linear-attention's `tokenize`): where its parts are
            kinds = {_operand_kind(e, imports) for e in first.elts}
            refs = {kind for kind in kinds if kind[0] != "np"}
            return ("np", "") if not refs else refs.pop() if len(refs) == 1 else ("other", "")
        return _operand_kind(first, imports) if first is not None else ("other", "")
    if (
        isinstance(called, ast.Call)
        and isinstance(called.func, ast.Attribute)
        and called.func.attr not in _MOVES
        and isinstance(called.func.value, ast.Call)
    ):
        # `torch.tensor(lengths).cumsum(0)`, `t.unique().sort()[0]`: a method that moves nothing is where its
        # receiver is
        return _host_kind(called.func.value, imports, scalars)
    if isinstance(value, ast.BinOp) and (
        isinstance(value.right, (ast.Constant, ast.Attribute))
        or isinstance(value.right, ast.Name)
        and value.right.id in scalars
    ):
        # `predicted % model.classes`, `offsets % seq_len` of a parameter `seq_len: int`: arithmetic with a
        # number stays where `predicted` is
        if isinstance(value.left, (ast.Call, ast.Subscript)):
            return _host_kind(value.left, imports, scalars)
        root = _chain_root(value.left)
        return ("ref", root) if root is not None else ("other", "")
    root = _chain_root(value)
    if root is not None and not isinstance(value, ast.Name):
        return ("ref", root)
    return ("other", "")


def _operand_kind(operand: ast.AST, imports: ImportTable):
    """Where a torch function's tensor operand is, as `_host_kind` says it."""
    if isinstance(operand, ast.Call) and is_host_value(operand, None, imports):
        # `torch.max(scores.cpu(), 1)`, `torch.qr(torch.FloatTensor(c, c).normal_())` (waveglow's
        # `Invertible1x1Conv`): of a host copy or a host tensor, on the host
        return ("np", "")
    if isinstance(operand, ast.UnaryOp):
        return _operand_kind(operand.operand, imports)
    if isinstance(operand, ast.BinOp):
        # `torch.bernoulli(1 - mask_rates)` (GraphMAE's `mask_edge`): arithmetic with a number stays where the
        # tensor is
        tensors = [s for s in (operand.left, operand.right) if not _is_number(s)]
        if len(tensors) == 1:
            return _operand_kind(tensors[0], imports)
    root = _chain_root(operand)
    return ("ref", root) if root is not None else ("other", "")


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


# The tensors of a tokenizer's output (`BatchEncoding`): built on the host.
_ENCODING_FIELDS = frozenset({"input_ids", "attention_mask", "token_type_ids"})


def _tokenizes(call: ast.Call) -> bool:
    """`tokenizer(prompt, return_tensors="pt")`, `self.tokenizer_2(...)`: a tokenizer's tensors are host tensors
    (PhotoMaker's truncation check `torch.equal(text_input_ids, untruncated_ids)` reads ids on the host)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return "tokenizer" in name.lower()


# Attributes that read a value kept where its owner is: a tensor's views, a tokenizer output's tensors.
_SAME_STORAGE_FIELDS = frozenset({"data", "T", "mT", "real", "imag"}) | _ENCODING_FIELDS

# Tensor methods that may return a tensor on another device than their receiver's.
_MOVES = frozenset({"to", "cuda", "cpu", "numpy", "pin_memory", "type", "new_tensor", "new_zeros", "new_ones"})


def _chain_root(expr: ast.AST) -> Optional[str]:
    """The name a chain of subscripts, attributes and method calls that move nothing starts from
    (`d[i]`, `x.transpose(1, 2).double()`, `x.detach()` -> `x`); None for any other expression."""
    node = _chain_root_node(expr)
    return node.id if node is not None else None


def _chain_root_node(expr: ast.AST) -> Optional[ast.Name]:
    """`_chain_root`'s name, as the node that reads it."""
    node = expr
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr not in _MOVES:
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr in _SAME_STORAGE_FIELDS:
            node = node.value
        else:
            break
    return node if isinstance(node, ast.Name) else None


# set on a read of a name a later statement moves to the device, or an earlier one copied to the host: host data
BEFORE_MOVE_ATTR = "_portcheck_before_move"

# A project's helper that moves its arguments to the device and hands them back (XLM's `to_cuda(x, y)`).
_MOVE_HELPER = re.compile(r"^(?:to_(?:cuda|gpu|device)|move_to(?:_device|_cuda)?)$")


def _moved_names(stmt: ast.stmt) -> Set[str]:
    """Names a statement rebinds to themselves moved to a device: `x = x.cuda()`, `x = x.to(device)`,
    `x = x.to(self.device, non_blocking=True)`, `x, y = to_cuda(x, y)`."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.value, ast.Call):
        return set()
    target, call = stmt.targets[0], stmt.value
    if isinstance(target, ast.Name) and isinstance(call.func, ast.Attribute) and call.func.attr in ("cuda", "to"):
        # a move to a device, not a cast (`done = done.to(torch.float)`)
        root = _chain_root(call.func.value)
        return {target.id} if root == target.id and _places_on_device(call) else set()
    if isinstance(target, ast.Tuple) and _MOVE_HELPER.match(_last_name(call.func) or ""):
        names = [e.id for e in target.elts if isinstance(e, ast.Name)]
        args = [a.id for a in call.args if isinstance(a, ast.Name)]
        return set(names) & set(args) if names == args else set()
    return set()


def _bound_names(stmt: ast.stmt) -> Set[str]:
    """Names a statement binds anywhere in it (assignment and loop targets, `with ... as`, nested blocks)."""
    out: Set[str] = set()
    for node in walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
    return out


def mark_moved_later(module: ast.Module) -> None:
    """Mark (`BEFORE_MOVE_ATTR`) the reads of a name in the statements of a block before the one that moves it
    to the device (`y = x2[1:].masked_select(mask)` before `x2, y = to_cuda(x2, y)`, XLM's trainer): up to
    where the block last binds it, the name holds the batch as the data loader gave it, on the host."""
    for block in _statement_blocks(module):
        for k, stmt in enumerate(block):
            active = _moved_names(stmt)
            reads: Dict[str, List[ast.Name]] = {}
            for earlier in reversed(block[:k]):
                if not active:
                    break
                bound = _bound_names(earlier)
                for node in walk(earlier):
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in active - bound:
                        reads.setdefault(node.id, []).append(node)
                for name in active & bound:
                    if _places_on_device(earlier):
                        reads.pop(name, None)  # `mask = torch.rand(n, device=device)`: on the device already
                active -= bound
            for nodes in reads.values():
                for node in nodes:
                    setattr(node, BEFORE_MOVE_ATTR, True)


def mark_copied_to_host(module: ast.Module) -> None:
    """Mark (`BEFORE_MOVE_ATTR`: a read of host data) the reads of a name in the statements of a block after one
    that rebinds it to its host copy (`A = A.cpu()`, then `torch.svd(A, some=False)`: meshrcnn's
    `projtransform.py`; or a list the block made, to a tensor on the default device: `loss_list =
    torch.tensor(loss_list)`, then `loss_list.mean().item()` in Youku-mPLUG's step), up to where the block binds
    it again."""
    for block in _statement_blocks(module):
        for k, stmt in enumerate(block):
            listed = _list_binding(stmt)
            if listed is not None:
                _mark_later_reads(block, k, listed, PYTHON_LIST_ATTR)
            copied = _host_tensor_binding(stmt) or _host_copy_binding(stmt)
            if copied is not None:
                _mark_later_reads(block, k, copied, BEFORE_MOVE_ATTR)
            for name in _unpacked_host_names(stmt):
                _mark_later_reads(block, k, name, BEFORE_MOVE_ATTR)


def _mark_later_reads(block: Sequence[ast.stmt], k: int, name: str, attr: str) -> None:
    """Set `attr` on the reads of `name` in the statements of `block` after the `k`th, up to where it is bound
    again (a statement that binds it somewhere inside ends the marking before it)."""
    for later in block[k + 1 :]:
        rebinds = name in _bound_names(later)
        if rebinds and not isinstance(later, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            break  # a block that binds it again somewhere inside: which read sees which value is its own
        for node in walk(later):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                setattr(node, attr, True)
        if rebinds and not (isinstance(later, ast.AugAssign) and isinstance(later.target, ast.Name)):
            break  # (`metrics /= world_size` changes the values in place, where they are)


PYTHON_LIST_ATTR = "_portcheck_python_list"  # set on a read of a name the block last bound to a Python list


def _list_binding(stmt: ast.stmt) -> Optional[str]:
    """The name of `x = [...]`, `x = [f(t) for t in ts]` or `x = [bos_id] + ids`: a Python list, whatever it
    holds."""
    target, value = _name_binding(stmt) if isinstance(stmt, ast.Assign) else (None, None)
    while isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        value = value.left if isinstance(value.left, (ast.List, ast.ListComp)) else value.right
    return target if isinstance(value, (ast.List, ast.ListComp)) else None


def _host_tensor_binding(stmt: ast.stmt) -> Optional[str]:
    """The name of `x = torch.tensor(...)` (no `device=`) of a list or tuple display (`torch.tensor([loss, acc,
    n])`: btard's step sums such a tuple of metrics over its CPU process group) or of itself, a list the block made
    (`x = [torch.zeros_like(loss) for _ in ...]`, then `x = torch.tensor(x)`): a tensor made from a Python list is
    on the default device."""
    target, call = _name_binding(stmt) if isinstance(stmt, ast.Assign) else (None, None)
    if (
        target is None
        or not isinstance(call, ast.Call)
        or dotted(call.func) != "torch.tensor"
        or len(call.args) != 1
        or any(kw.arg in (None, "device") for kw in call.keywords)
    ):
        return None
    made = call.args[0]
    own_list = isinstance(made, ast.Name) and made.id == target and getattr(made, PYTHON_LIST_ATTR, False)
    return target if isinstance(made, (ast.List, ast.Tuple)) or own_list else None


def _unpacked_host_names(stmt: ast.stmt) -> List[str]:
    """The names `a, b = list(x)` (or `= x`, `= x.sort(descending=True)`: any method that moves nothing) binds
    from a host tensor `x` (a read already marked `BEFORE_MOVE_ATTR`): each is a piece of it, on the host too."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple)):
        return []
    value = stmt.value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("list", "tuple")
        and len(value.args) == 1
        and not value.keywords
    ):
        value = value.args[0]
    root = _chain_root_node(value)
    if root is None or not getattr(root, BEFORE_MOVE_ATTR, False):
        return []
    return [e.id for e in stmt.targets[0].elts if isinstance(e, ast.Name)]


def _host_copy_binding(stmt: ast.stmt) -> Optional[str]:
    """The name of `scores = x.mm(y.t())[0].cpu()` (a chain that ends in a copy to the host: `.cpu()` or
    `.to("cpu")`, then only methods and subscripts that move nothing; `x = x.detach().cpu()`, meshrcnn's
    `projtransform.py`, rebinds a name to its own host copy), or of `y = x.sort()[1]` from a host `x`: posescript's
    recall loop ranks its scores on the host."""
    target, value = _name_binding(stmt) if isinstance(stmt, ast.Assign) else (None, None)
    if target is None or value is None:
        return None
    node = value
    while True:  # the methods and subscripts after the copy
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if _copies_to_host(node):
                return target
            if node.func.attr in _MOVES:
                return None
            node = node.func.value
        else:
            break
    root = _chain_root_node(value)
    return target if root is not None and getattr(root, BEFORE_MOVE_ATTR, False) else None


def _copies_to_host(call: ast.Call) -> bool:
    """`x.cpu()`, `x.to("cpu")`."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr == "cpu":
        return not call.args
    return (
        func.attr == "to"
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Constant)
        and call.args[0].value == "cpu"
        and not call.keywords
    )


DEAD_ARM_ATTR = "_portcheck_dead_arm"  # on an `if`: "body" or "orelse", the arm a flag set just before rules out


def mark_constant_branches(module: ast.Module) -> None:
    """Mark (`DEAD_ARM_ATTR`) the arm of an `if` that a flag the same block set to `True` or `False` before it
    rules out (DyNAS-T's `args.latcpu = True`, `args.latgpu = False`, then `if args.latcpu: model.cpu()` / `elif
    args.latgpu: model.cuda()`): nothing rebinds the flag, or what holds it, in between, so that arm never runs.
    An `elif` chain is followed while its tests are such flags. What may rebind it ends what is known: a statement
    that stores to it or to what holds it, a call handed what holds it (`update(args)`), `exec` (nanoGPT's
    `exec(open('configurator.py').read())` overrides its module's settings), `setattr`, `globals()`; a name some
    function declares `global` is never known."""
    declared = {n for node in module_nodes(module) if isinstance(node, ast.Global) for n in node.names}
    for block in _statement_blocks(module):
        known: Dict[str, bool] = {}
        for stmt in block:
            if isinstance(stmt, ast.If) and known:
                _mark_dead_arms(stmt, known)
            flag = _constant_flag(stmt)
            if known and _may_rebind_anything(stmt):
                known = {}
            stored = {name for node in walk(stmt) if (name := _stored_dotted(node))} | _handed_holders(stmt)
            if stored:
                known = {k: v for k, v in known.items() if not any(k == s or k.startswith(s + ".") for s in stored)}
            if flag is not None and flag[0].split(".", 1)[0] not in declared:
                known[flag[0]] = flag[1]


_REBINDING_CALLS = frozenset({"exec", "eval", "setattr", "globals", "locals", "vars"})


def _may_rebind_anything(stmt: ast.stmt) -> bool:
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _REBINDING_CALLS
        for node in walk(stmt)
    )


def _handed_holders(stmt: ast.stmt) -> Set[str]:
    """What a call in the statement is handed that may hold a flag as an attribute (`update(args)`)."""
    out: Set[str] = set()
    for node in walk(stmt):
        if isinstance(node, ast.Call):
            for value in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(value, (ast.Name, ast.Attribute)) and (name := dotted(value)):
                    out.add(name)
    return out


def _constant_flag(stmt: ast.stmt) -> Optional[Tuple[str, bool]]:
    """`args.latgpu = False`, `use_gpu = True`: the dotted name and the constant."""
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, bool)
        and (name := dotted(stmt.targets[0]))
    ):
        return name, stmt.value.value
    return None


def _stored_dotted(node: ast.AST) -> Optional[str]:
    """The dotted name a node stores to (`args`, `args.latgpu`), or None."""
    if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
        return dotted(node)
    return None


def _mark_dead_arms(node: ast.If, known: Mapping[str, bool]) -> None:
    test, negated = node.test, False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, True
    value = known.get(dotted(test) or "")
    if value is None:
        return
    if value != negated:  # the test is true: the `else` never runs
        if node.orelse:
            setattr(node, DEAD_ARM_ATTR, "orelse")
        return
    setattr(node, DEAD_ARM_ATTR, "body")
    if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        _mark_dead_arms(node.orelse[0], known)


NEEDED_AFTER_ATTR = "_portcheck_needed_after"  # set on a `try` whose body binds what the code after it reads


def mark_tries_needed_after(module: ast.Module) -> None:
    """Mark (`NEEDED_AFTER_ATTR`) each `try` whose body binds a name that the statements after it in its block
    read and that a handler does not bind (CodeGeeX2's `try: model = ....to("cuda:0")` / `except Exception
    as e: logger.error(e)`, then `model = model.eval()`): the handler logs and goes on, but what follows
    fails without the body's work, so the handler is no fallback for it."""
    for block in _statement_blocks(module):
        for k, stmt in enumerate(block):
            # (only a short `try` with a handler that catches runtime errors and goes on is asked: see the walker)
            if not (
                isinstance(stmt, ast.Try)
                and len(stmt.body) <= 3
                and any(catches_runtime_error(h) and continues(h) for h in stmt.handlers)
            ):
                continue
            bound = _bound(stmt.body)
            missing = {name for name in bound if not all(name in _bound(h.body) for h in stmt.handlers)}
            if missing and _reads_before_binding(block[k + 1 :], missing):
                setattr(stmt, NEEDED_AFTER_ATTR, True)


def _bound(block: Sequence[ast.stmt]) -> Set[str]:
    """Names the statements bind (assignments, loops, `with ... as`, imports), not inside nested definitions."""
    out: Set[str] = set()
    stack: list = list(block)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".", 1)[0] for a in node.names)
        stack.extend(children(node))
    return out


def _reads_before_binding(block: Sequence[ast.stmt], names: Set[str]) -> bool:
    """Whether a statement of `block` reads one of `names` before the block binds it again."""
    live = set(names)
    for stmt in block:
        if any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in live for n in walk(stmt)):
            return True
        live -= _bound([stmt])
        if not live:
            return False
    return False


_BLOCKS_ATTR = "_portcheck_statement_blocks"


def _statement_blocks(module: ast.Module) -> List[List[ast.stmt]]:
    """Every list of statements in the module: bodies of functions, loops, branches, `with`, `try` (found
    once per module: four passes ask)."""
    known = getattr(module, _BLOCKS_ATTR, None)
    if known is not None:
        return known
    found = [
        value
        for node in module_nodes(module)
        for field in ("body", "orelse", "finalbody")
        if isinstance(value := getattr(node, field, None), list) and value and isinstance(value[0], ast.stmt)
    ]
    setattr(module, _BLOCKS_ATTR, found)
    return found


# The legacy tensor types of the CPU: calling one builds a tensor in host memory (`torch.LongTensor(codes)`).
HOST_TENSOR_TYPES = frozenset(
    f"torch.{kind}Tensor"
    for kind in ("Double", "Float", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool")
)


# Methods numpy arrays and scipy matrices have and tensors do not: what they return is host data.
_ARRAY_ONLY_METHODS = frozenset({"astype", "toarray", "todense", "tocsr", "tocoo", "tocsc", "getA1"})


def _makes_host_value(call: ast.Call, imports: ImportTable, copies: bool = True) -> bool:
    """A numpy call, a tensor factory that names no device and takes no tensor to follow
    (`torch.rand(1, generator=rng)`, `torch.zeros(n)`; not `torch.tensor(t)`, which keeps `t`'s device), or
    (with `copies`) a copy to the host (`x.cpu()`, `x.to("cpu")`, `x.numpy()`, any call given `device="cpu"`)."""
    func = call.func
    if copies and isinstance(func, ast.Attribute) and (
        func.attr in ("cpu", "numpy")
        or (
            func.attr == "to"
            and call.args
            and isinstance(call.args[0], ast.Constant)
            and call.args[0].value == "cpu"
        )
    ):
        return True
    if copies and any(k.arg == "device" and names_cpu(k.value) for k in call.keywords):
        return True  # `x.to(device="cpu")`, skorch's `to_tensor(val, device='cpu')`: on the host, copied if need be
    if isinstance(func, ast.Attribute) and func.attr in _ARRAY_ONLY_METHODS:
        return True  # `dataset.inter_matrix(form="csr").astype(np.float32)`: numpy's and scipy's, not a tensor's
    if copies and host_type_copy(call, imports):
        return True
    name = imports.resolved(call.func) or ""
    if name.startswith(("numpy.", "pandas.")) or name in HOST_TENSOR_TYPES or name == "torch.from_numpy":
        # `torch.from_numpy(a)` shares a numpy array's memory: a CPU tensor; a pandas frame or series
        # (`pd.DataFrame(...)`, `pd.read_csv(...)`) is host data, and so is what it holds (`df["id"].unique()`)
        return True
    if name in ("torch.tensor", "torch.as_tensor"):
        # `torch.tensor([[0.57, -0.81], ...])` of literals builds a host tensor; of a tensor, it keeps its device
        # (a shape is host data too: allennlp's `torch.tensor(grad_data.shape)`)
        # (or of a list the block made: SEED-Story's `torch.tensor(input_ids)` of `[bos_id] + input_ids`)
        return (
            bool(call.args)
            and (_literal_or_shape(call.args[0]) or getattr(call.args[0], PYTHON_LIST_ATTR, False))
            and is_host_factory(call, imports)
        )
    return is_host_factory(call, imports)


def host_type_copy(call: ast.Call, imports: ImportTable) -> bool:
    """`x.type(torch.DoubleTensor)`: a copy in a legacy CPU tensor type, which is on the host whatever the device
    of `x` (the CUDA types are `torch.cuda.*Tensor`)."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "type"
        and len(call.args) == 1
        and imports.resolved(call.args[0]) in HOST_TENSOR_TYPES
    )


def _tensor_of_list(node: ast.AST, imports: ImportTable) -> bool:
    """`torch.tensor([..])` or `torch.tensor(ids)` of a list the block made, with no device: a host tensor of one
    dimension or more."""
    return (
        isinstance(node, ast.Call)
        and (imports.resolved(node.func) or "") in ("torch.tensor", "torch.as_tensor")
        and len(node.args) == 1
        and (isinstance(node.args[0], (ast.List, ast.ListComp)) or getattr(node.args[0], PYTHON_LIST_ATTR, False))
        and is_host_factory(node, imports)
    )


def _literal_or_shape(node: ast.AST) -> bool:
    """`[[0.57, -0.81]]`, `3`, `x.shape`, `x.size()`, `[inp.shape[-1] for inp in x]`: literals, a list built in
    Python (esvit's crop widths), or a tensor's shape (a host `torch.Size`)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Constant, ast.ListComp)):
        return True
    if isinstance(node, ast.Attribute):
        return node.attr == "shape"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size"


_SHOWN_NAMES_ATTR = "_portcheck_shown_names"


def in_units(value: ast.AST) -> bool:
    """`mem // 1024**2`, `mem / 2**30`, `mem / 1e9`, `mem / mega_bytes`: a value divided by a constant (or a
    name for a unit), scaled to units."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Div, ast.FloorDiv))):
        return False
    right = value.right
    if isinstance(right, ast.Name):
        return bool(_UNIT_NAME.search(right.id))
    return all(isinstance(n, (ast.Constant, ast.BinOp, ast.operator)) for n in walk(right))


# A name for a unit of memory: `mega_bytes`, `MB`, `GiB`, `bytes_per_gb`.
_UNIT_NAME = re.compile(r"(?i)(?:^|_)(?:[kmgt]i?b|(?:kilo|mega|giga|tera)_?bytes?)$")

# What a process has used of a device's memory (not what the device has: `total_memory` sizes a cache).
_MEMORY_USAGE = re.compile(r"^(?:max_)?memory_(?:allocated|reserved|cached)$")


# A command that only reports (`nvidia-smi`, `nvidia-smi -L`, `nvidia-smi topo -m`): it changes nothing.
_STATUS_COMMAND = re.compile(
    r"^\s*nvidia-smi(?:\s+(?:-L|-q|topo\s+-m|--query-[\w-]+=\S+|--format=\S+|-i\s+\d+))*\s*$"
)
_SHELL_CALLS = frozenset({"os.system", "subprocess.run", "subprocess.call"})


def shows_command_output(call: ast.AST, imports: ImportTable) -> bool:
    """`os.system("nvidia-smi")`, `subprocess.run(["nvidia-smi", "-L"])` as a statement of their own: a status
    command whose output goes to the console and whose result nobody reads (nothing captured)."""
    if not isinstance(call, ast.Call) or (imports.resolved(call.func) or "") not in _SHELL_CALLS:
        return False
    if len(call.args) != 1 or any(k.arg in ("stdout", "capture_output", "check") for k in call.keywords):
        return False
    arg = call.args[0]
    words = [e.value for e in getattr(arg, "elts", ()) if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if isinstance(arg, (ast.List, ast.Tuple)) and len(words) == len(arg.elts):
        command = " ".join(words)
    elif isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        command = arg.value
    else:
        return False
    return bool(_STATUS_COMMAND.match(command))


def scaled_usage_figure(node: ast.BinOp) -> bool:
    """`torch.cuda.max_memory_allocated() // 1e9`, `torch.cuda.memory_reserved(dev) / 2 ** 20`: what a process
    has used of a device's memory, read and scaled to units right there (nothing computes with megabytes)."""
    value: ast.AST = node
    while isinstance(value, ast.BinOp) and in_units(value):
        value = value.left
    return isinstance(value, ast.Call) and bool(_MEMORY_USAGE.match(_last_name(value.func) or ""))


def returns_usage_figure(node: ast.Return, scope: Optional[ast.AST]) -> bool:
    """`return mem_usage_bytes / 1024 / 1024` in a function that reads a memory usage counter
    (`torch.cuda.max_memory_allocated()`; pycls's `gpu_mem_usage`): a figure in units, for a log. (A device's
    total memory in GB sizes something; an image divided by 255 is no figure.)"""
    if node.value is None or not in_units(node.value) or not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return any(
        isinstance(n, ast.Call) and bool(_MEMORY_USAGE.match(_last_name(n.func) or "")) for n in walk(scope)
    )


_UNREAD_LOCALS_ATTR = "_portcheck_unread_locals"


def unread_locals(scope: ast.AST) -> FrozenSet[str]:
    """Names a function binds once, by a plain assignment, and never reads, in its body or a function inside it
    (ChronoPhyBench's `quant_config = BitsAndBytesConfig(load_in_4bit=True, ...)`, then `from_pretrained(...)`
    without it); none in a function that reads names by string (`locals()`) or declares them global."""
    known = getattr(scope, _UNREAD_LOCALS_ATTR, None)
    if known is not None:
        return known
    found: FrozenSet[str] = frozenset()
    if isinstance(scope, _FUNCTION_DEFS):
        bound: Dict[str, int] = {}
        read: Set[str] = set()
        for node in walk(scope):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    read.add(node.id)
                else:
                    bound[node.id] = bound.get(node.id, 0) + 1
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                read.update(node.names)
        if not read & READS_NAMES_BY_STRING:
            found = frozenset(name for name, count in bound.items() if count == 1 and name not in read)
    try:
        setattr(scope, _UNREAD_LOCALS_ATTR, found)
    except AttributeError:  # pragma: no cover - ast nodes accept attributes
        pass
    return found


def builds_value_only(node: ast.AST) -> bool:
    """A value whose making runs nothing on a device: a literal, a name or attribute read, a comparison, a choice
    between such values on such a test (DomainBed's `device = "cuda" if x.is_cuda else "cpu"`), `torch.device(...)`,
    a device query that raises nowhere (`torch.cuda.is_available()`, `device_count()`), a settings object
    (`BitsAndBytesConfig(...)`, `SomethingConfig(...)`), from parts that are such values too (`getattr(torch,
    "float16")` among them)."""
    stack = [node]  # (a stack, not recursion: a `+` chain of a thousand terms nests a thousand deep)
    while stack:
        part = stack.pop()
        if isinstance(part, ast.Call):
            name = (dotted(part.func) or "").rsplit(".", 1)[-1]
            if name not in _VALUE_CALLS and not name.endswith("Config"):
                return False
            stack.extend([*part.args, *(k.value for k in part.keywords)])
        elif isinstance(part, (ast.Starred, *_VALUE_NODES)):
            stack.extend(ast.iter_child_nodes(part))
        elif not isinstance(part, (ast.expr_context, ast.boolop, ast.cmpop, ast.operator, ast.unaryop)):
            return False
    return True


# Calls that make a value and run nothing on a device (what `builds_value_only` accepts).
_VALUE_CALLS = frozenset({"device", "getattr", "is_available", "device_count", "is_bf16_supported", "str", "int"})
_VALUE_NODES = (
    ast.Constant,
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.BinOp,
    ast.IfExp,
    ast.JoinedStr,
    ast.FormattedValue,
    ast.Tuple,
    ast.List,
    ast.Dict,
)


def shown_names(scope: ast.AST) -> FrozenSet[str]:
    """Names of a function (or module) bound by plain assignments only and only ever shown: every read
    sits in a print or log call, an f-string, a `%` format, a `.format()`, `round(x, n)` or a memory usage
    figure returned in units (`return mem / 1024 / 1024`)
    (`peak = torch.cuda.max_memory_allocated()`, then `print(f"peak {peak / 2**30:.1f} GB")`)."""
    known = getattr(scope, _SHOWN_NAMES_ATTR, None)
    if known is not None:
        return known
    assigned: dict = {}
    reads: dict = {}  # name -> every read shown so far
    stack: List[Tuple[ast.AST, bool]] = [(n, False) for n in getattr(scope, "body", [])]
    while stack:
        node, shown = stack.pop()
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                reads[node.id] = reads.get(node.id, True) and shown
            else:
                assigned[node.id] = assigned.get(node.id, 0) | 2  # a loop target, `with ... as`, unpacking
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned[node.targets[0].id] = assigned.get(node.targets[0].id, 0) | 1
            stack.append((node.value, shown))
            continue
        if isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
            assigned[node.target.id] = assigned.get(node.target.id, 0) | 2
        inner = shown
        if isinstance(node, ast.Call):
            func = node.func
            inner = (
                is_message_call(node)
                or (isinstance(func, ast.Name) and func.id == "round" and len(node.args) == 2)
                or (isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant))
            )
            stack.append((func, shown))
            stack.extend((c, shown or inner) for c in list(node.args) + [k.value for k in node.keywords])
            continue
        if isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant)
        ):
            inner = True
        elif isinstance(node, ast.Return) and returns_usage_figure(node, scope):
            inner = True  # `return mem / 1024 / 1024`: a figure in MB, for a log
        stack.extend((c, inner) for c in children(node))
    # bound by plain assignments only (a placeholder first is fine: optimum's `pt_cuda_available = "NA"`)
    found = frozenset(name for name, count in assigned.items() if count == 1 and reads.get(name) is True)
    try:
        setattr(scope, _SHOWN_NAMES_ATTR, found)
    except AttributeError:  # pragma: no cover - ast nodes accept attributes
        pass
    return found


_INIT_ONLY_ATTR = "_portcheck_init_only"


def mark_init_only_methods(cls: ast.ClassDef) -> None:
    """Mark the methods a class calls (as `self.name(...)`) only from its `__init__`, directly or through
    other such methods (`register_schedule`, called once to build buffers), or only to set the object up on
    first use (under `if self.step_index is None:`): they run once per object, as the constructor does (which
    matters where objects of the class are built once: a module, a scheduler; threestudio's `Mesh`, built on
    every step, computes its lazy `edges` on every step). A method called from anywhere else in the class, or
    never, is not marked."""
    methods = {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    callers: dict = {}
    for name, method in methods.items():
        stack: List[Tuple[ast.AST, bool]] = [(method, False)]
        while stack:
            sub, lazy = stack.pop()
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and isinstance(sub.func.value, ast.Name)
                and sub.func.value.id == "self"
                and sub.func.attr in methods
            ):
                # (a call under `if self.step_index is None:`, a diffusers scheduler's `_init_step_index` on the
                # first step: set up once, as by `__init__`)
                callers.setdefault(sub.func.attr, set()).add(_LAZY_SETUP if lazy else name)
            if isinstance(sub, ast.If) and _tests_unset_attribute(sub.test):
                stack.append((sub.test, lazy))
                stack.extend((s, True) for s in sub.body)
                stack.extend((s, lazy) for s in sub.orelse)
            else:
                stack.extend((child, lazy) for child in children(sub))
    once = {"__init__", _LAZY_SETUP}
    changed = True
    while changed:
        changed = False
        for name, by in callers.items():
            if name not in once and by <= once:
                once.add(name)
                changed = True
    for name in once - {"__init__", _LAZY_SETUP}:
        setattr(methods[name], _INIT_ONLY_ATTR, True)


_LAZY_SETUP = "<lazy set-up>"  # the caller of what a class sets up on first use (`mark_init_only_methods`)


def _tests_unset_attribute(test: ast.AST) -> bool:
    """`self.step_index is None`: whether an attribute of the object is still unset."""
    unset = none_operand(test, (ast.Is,))
    return isinstance(unset, ast.Attribute) and isinstance(unset.value, ast.Name) and unset.value.id == "self"


def is_init_only(node: ast.AST) -> bool:
    return getattr(node, "name", "") == "__init__" or bool(getattr(node, _INIT_ONLY_ATTR, False))


def _base_names(node: ast.ClassDef) -> List[str]:
    """The last names of a class's bases (`torch.utils.data.IterableDataset` -> `IterableDataset`)."""
    return [_last_name(base) for base in node.bases]


# (a variant's suffix too: matsciml's `ParallelCollater_DGL`, `ParallelCollater_GAANet`)
_COLLATOR = re.compile(r"Collat(?:or|er|e|eFn)(?:_[A-Za-z0-9]+)?$")
LOADER_CLASS_ATTR = "_portcheck_loader_class"  # set on a class a data-loader class of its module builds


def is_dataset_class(node: ast.ClassDef) -> bool:
    """`class PairDataset(FairseqDataset)`, `class Shards(torch.utils.data.IterableDataset)`, `class
    MaskCollator:`: the data loader runs its methods (`__getitem__`, collaters, noising) on the host, usually
    in worker processes; so do the methods of the classes such a class builds (see `mark_loader_classes`)."""
    marked = getattr(node, LOADER_CLASS_ATTR, None)  # (a module's top-level classes: `mark_loader_classes`)
    return marked if marked is not None else _loads_data(node)


def is_stopping_criterion(node: ast.ClassDef) -> bool:
    """`class KeywordsStoppingCriteria(StoppingCriteria)` (LLaVA's, copied into most vision-language models) and
    MiniGPT-4's `StoppingCriteriaSub`: what `generate` asks after each token whether to stop. Its answer is a host
    bool by contract (`generate` reads it on the host, once per token, whatever the criterion does), so a sync
    or a branch on a tensor there costs nothing `generate` does not pay already."""
    return any(name.endswith("StoppingCriteria") for name in _base_names(node))


def _loads_data(node: ast.ClassDef, module_classes: Optional[Dict[str, ast.ClassDef]] = None) -> bool:
    """`module_classes`: the classes of the class's module by name, to follow its bases there."""
    bases = _base_names(node)
    if any(name.endswith("Dataset") for name in bases) or any(_PREPROCESSOR_BASE.search(name) for name in bases):
        return True
    iterates = any(isinstance(n, _FUNCTION_DEFS) and n.name == "__iter__" for n in node.body)
    if iterates and _DATA_SAMPLERS.intersection(bases):
        # `class DistributedWeightedSampler(Sampler)` with its `__iter__` (atlantes): the loader asks it which
        # indices to load next, on the host (a diffusion sampler, named alike, has no `__iter__`)
        return True
    if _PREPROCESSOR_NAME.search(node.name) and any(_PREPROCESSOR_NAME.search(name) for name in bases):
        # `class PenguinVLQwen3Processor(PenguinVLBaseProcessor)`: a processor derived from one of its project's;
        # not a module of the model (SongGeneration's `Feature1DProcessor(SampleProcessor)`, whose base is a
        # `torch.nn.Module` of the same file, normalises features in the forward pass)
        return not (_places_on_device(node) or _derives_from_module(node, module_classes))
    return bool(_COLLATOR.search(node.name)) and not _places_on_device(node)


# torch's data samplers (`torch.utils.data`), the bases of a loader's own index samplers.
_DATA_SAMPLERS = frozenset(
    {"Sampler", "DistributedSampler", "BatchSampler", "RandomSampler", "SequentialSampler", "SubsetRandomSampler",
     "WeightedRandomSampler"}
)
# The bases of what turns raw inputs into a model's tensors on the host, before any step: a tokenizer, a
# multimodal processor, an image processor or feature extractor (Hugging Face's classes and their subclasses:
# robust-tableqa's `CustomTapasTokenizer(PreTrainedTokenizer)`, Penguin-VL's `ProcessorMixin` subclass).
# (Named exactly: a project's `FeatureExtractor` or `BaseTokenizer` may be a module that runs on the device.)
_PREPROCESSOR_BASE = re.compile(
    r"^(?:PreTrainedTokenizer(?:Fast|Base)?|ProcessorMixin|(?:Base)?ImageProcessor(?:Fast)?|ImageProcessingMixin"
    r"|SequenceFeatureExtractor|FeatureExtractionMixin|(?:Base)?VideoProcessor)$"
)
# A processor class by its name, not one that runs in the model or in generation (diffusers' attention
# processors, `LogitsProcessor`s run on the device at every step)
_PREPROCESSOR_NAME = re.compile(r"^(?!.*(?:Logits|Attn|Attention)).*Processor$")


def _derives_from_module(node: ast.ClassDef, module_classes: Optional[Dict[str, ast.ClassDef]]) -> bool:
    """Whether a base of the class, or of one of its module's classes it derives from, is a `Module`."""
    seen: Set[str] = set()
    pending = [node]
    while pending:
        cls = pending.pop()
        for name in _base_names(cls):
            if name.endswith("Module"):
                return True
            base = (module_classes or {}).get(name)
            if base is not None and name not in seen:
                seen.add(name)
                pending.append(base)
    return False


def _places_on_device(node: ast.AST) -> bool:
    """Whether code moves values to a device (`.cuda()`, `.to(self.device)`, `device=device`): a collate
    step that builds its batch on the device (stable-dreamfusion's `collate` casts rays there) is no host code."""
    for sub in walk(node):
        if isinstance(sub, ast.Call):
            if isinstance(sub.func, ast.Attribute) and sub.func.attr == "cuda":
                return True
            placed = [k.value for k in sub.keywords if k.arg == "device"]
            if isinstance(sub.func, ast.Attribute) and sub.func.attr == "to" and sub.args:
                placed.append(sub.args[0])
            for value in placed:
                if isinstance(value, ast.Constant) and value.value == "cpu":
                    continue
                if "device" in (dotted(value) or "").lower() or _is_cuda_string(value):
                    return True
    return False


def mark_loader_classes(module: ast.Module) -> None:
    """Mark (`LOADER_CLASS_ATTR`) whether each of the module's classes runs on host data: a data-loader class
    (its bases followed through the module: `_loads_data`), or one such a class builds (jepa's `MaskCollator`
    calls `_MaskGenerator(...)` objects that sample masks): they run in the data loader too."""
    classes = {node.name: node for node in module.body if isinstance(node, ast.ClassDef)}
    loaders = [c for c in classes.values() if _loads_data(c, classes)]
    for cls in classes.values():
        setattr(cls, LOADER_CLASS_ATTR, cls in loaders)
    for cls in loaders:
        for sub in walk(cls):
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in classes:
                if sub.func.id != cls.name:
                    setattr(classes[sub.func.id], LOADER_CLASS_ATTR, True)


def runs_on_host_data(node: ast.AST) -> bool:
    """`def collate_fn(batch):`, `def video_collate(samples):`: a data loader's collate function, run on the host;
    a function a Hugging Face dataset maps over its examples (`mark_dataset_map_functions`); a pickler's hook
    (`persistent_id`: lit_gpt's `incremental_save`, copied from torch's own checkpoint writer, reads the storages
    it is handed)."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or _places_on_device(node):
        return False
    return (
        "collate" in node.name.lower()
        or node.name in _PICKLER_HOOKS
        or bool(_MEDIA_LOADER.match(node.name))
        or bool(getattr(node, _MAPPED_ATTR, False))
    )


# `def load_audio(audiopath, sampling_rate):` (tortoise's, copied into many TTS projects), `read_image`,
# `load_wav_to_torch`: reads a file into host memory, checks and resamples it there (one that moves what it
# read to a device is no such function: `_places_on_device`)
_MEDIA_LOADER = re.compile(r"^_?(?:load|read)_(?:audio|wav|wave|waveform|image|img|video|frames|mel|pcm)(?:_|s?$)")


_PICKLER_HOOKS = frozenset({"persistent_id", "persistent_load", "reducer_override"})
_MAPPED_ATTR = "_portcheck_dataset_mapped"
# Keywords of `datasets.Dataset.map`/`filter` that no tensor op takes: the call maps a function over examples.
_DATASET_MAP_KEYWORDS = frozenset(
    {"batched", "num_proc", "remove_columns", "fn_kwargs", "load_from_cache_file", "with_indices", "input_columns"}
)


def mark_dataset_map_functions(module: ast.Module) -> None:
    """Mark (`_MAPPED_ATTR`) the functions a Hugging Face dataset maps over its examples (`dataset.map(
    format_and_tokenize, batched=False, num_proc=4)`, sail-sg/ActivePRM's preprocessing): they run on the host,
    on the tokenizer's tensors, before any step."""
    mapped: Set[str] = set()
    for node in walk(module):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("map", "filter")
            and any(k.arg in _DATASET_MAP_KEYWORDS for k in node.keywords)
        ):
            given = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "function"), None)
            if isinstance(given, ast.Name):
                mapped.add(given.id)
    if mapped:
        for node in walk(module):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in mapped:
                setattr(node, _MAPPED_ATTR, True)


# Base classes whose objects a program builds once, before its steps: modules, datasets, samplers, loaders.
# (`TensorDictModuleBase`, torchrl's base of its modules: a base class named for one; diffusers' `SchedulerMixin`,
# the base of a pipeline's noise schedulers)
# (an optimizer or learning-rate scheduler too: LLMart's `GreedyCoordinateGradient(Optimizer)` sets up its token
# tables once, when the training script builds it)
_BUILT_ONCE = re.compile(
    r"(?:Module|Dataset|Sampler|DataLoader)(?:Base)?$|^SchedulerMixin$|^Optimizer$|^_?LRScheduler$"
)


BUILT_ONCE_ATTR = "_portcheck_built_once"  # set on a class whose base is a built-once class of its module


def is_built_once_class(node: ast.ClassDef) -> bool:
    """`class Quantized(nn.Module)`, `class Shards(IterableDataset)`: its constructor runs when the model or
    the data pipeline is built, not once per step (unlike a value class such as `SparseTensor(object)`); so
    does a subclass of such a class of the same module (see `mark_built_once_classes`)."""
    return getattr(node, BUILT_ONCE_ATTR, False) or any(_BUILT_ONCE.search(name) for name in _base_names(node))


def mark_built_once_classes(module: ast.Module) -> None:
    """Mark (BUILT_ONCE_ATTR) the classes of a module derived from a built-once class the module defines
    (wenet's `class RopePositionalEncoding(PositionalEncoding)`, `class PositionalEncoding(torch.nn.Module)`)."""
    classes = [n for n in module_nodes(module) if isinstance(n, ast.ClassDef)]
    built = {n.name for n in classes if is_built_once_class(n)}
    for _ in range(4):  # subclasses of subclasses: a few rounds reach a fixed point in practice
        added = [n for n in classes if n.name not in built and any(b in built for b in _base_names(n))]
        if not added:
            break
        for n in added:
            setattr(n, BUILT_ONCE_ATTR, True)
            built.add(n.name)


def is_host_value(expr: ast.AST, scope: Optional[ast.AST], imports: ImportTable, copies: bool = True) -> bool:
    """`d`, `d[i]`, `np.sum(a)` or `torch.rand(1)`: a value on the host, by what it was built from (a numpy
    call, a tensor factory that names no device, a name bound only to those in its scope). With `copies`, also
    a copy made right there (`x.cpu()`); without, such an inline copy is the sync itself, not host data."""
    root = expr
    while isinstance(root, ast.Subscript) or isinstance(root, ast.Attribute) and root.attr in _FRAME_AXES:
        root = root.value  # `inputs.index` of a pandas `inputs`: where `inputs` is
    if isinstance(root, ast.Compare) and len(root.comparators) == 1:
        # `(query[i] != self.tokenizer.pad_token_id)` of a host `query`: compared on the host
        # (a 1-d host tensor made from a list compared with any name: SEED-Story's `torch.tensor(input_ids) ==
        # boi_token_id`; with a device tensor it would raise, not move)
        # (a name the block copied to the host compared with any name: posescript's `indices_rank == x_ind`)
        other = root.comparators[0]
        return is_host_value(root.left, scope, imports, copies) and (
            isinstance(other, (ast.Constant, ast.Attribute))
            or (isinstance(other, ast.Name) and (_tensor_of_list(root.left, imports) or _read_on_host(root.left)))
            or is_host_value(other, scope, imports, copies)
        )
    if isinstance(root, ast.BinOp):
        # `(len2 - 1)` of a host `len2`: arithmetic with a constant or another host value stays on the host
        return all(
            isinstance(side, ast.Constant) or is_host_value(side, scope, imports, copies)
            for side in (root.left, root.right)
        ) and not all(isinstance(side, ast.Constant) for side in (root.left, root.right))
    if isinstance(root, (ast.Tuple, ast.List)):
        # `(lens, torch.arange(0, n, k))`, the parts `torch.cat` joins: each on the host
        return bool(root.elts) and all(is_host_value(e, scope, imports, copies) for e in root.elts)
    if isinstance(root, ast.Call):
        # `torch.isnan(latents)` of host latents: a torch function of a host tensor computes on the host
        if _makes_host_value(root, imports, copies) or torch_call_on_host(root, scope, imports, copies):
            return True
        if (
            isinstance(root.func, ast.Name)
            and root.func.id in _BUILTIN_REDUCTIONS
            and root.func.id not in imports.aliases
            and len(root.args) == 1
            and is_host_value(root.args[0], scope, imports, copies)
        ):
            return True  # `max(predicted)` of a host tensor (continual-learning's evaluate.py)
    if (
        isinstance(root, ast.Call)
        and isinstance(root.func, ast.Attribute)
        and root.func.attr not in _MOVES
        and isinstance(root.func.value, (ast.BinOp, ast.Call))
    ):
        # a method that moves nothing is where its receiver is: `(len2 - 1).sum()` of a host `len2`,
        # `memories.cpu().t()` (GEM's `project2cone2`)
        return is_host_value(root.func.value, scope, imports, copies)
    # `d`, and a method of it that moves nothing (`d.transpose(1, 2)`): where `d` is; or a name read before the
    # statement that moves it to the device
    if _read_on_host(root):
        return True
    if is_pandas_value(root, imports):
        return True
    node = _chain_root_node(root)
    return node is not None and scope is not None and node.id in host_names(scope, imports)


def _read_on_host(expr: ast.AST) -> bool:
    """A name (or a chain that moves nothing from one) read where its block holds it on the host
    (`BEFORE_MOVE_ATTR`)."""
    node = _chain_root_node(expr)
    return node is not None and bool(getattr(node, BEFORE_MOVE_ATTR, False))


_FRAME_NAME = re.compile(r"^df$|^df_|_df$")  # the names pandas code gives its frames (`df`, `df_train`, `pred_df`)

# Attributes only a pandas frame or series has (no tensor, array or module has them): a chain through one is
# pandas data, on the host (TabCSDI's `data.iloc[:, col].unique()`). `loc` is left out: a torch distribution
# has one (`Normal(...).loc`).
_FRAME_ONLY_ATTRS = frozenset(
    {"iloc", "iat", "nunique", "value_counts", "groupby", "reset_index", "set_index", "sort_values", "iterrows",
     "itertuples", "to_csv"}
)
# A frame's or a series's axes (no tensor has these attributes): where the frame is
_FRAME_AXES = frozenset({"index", "columns"})
# What is read of a frame's index (`inputs.index.tolist()`): an `index` attribute read this way is a frame's,
# not a list's `index()` method or a search index's
_FRAME_INDEX_READS = frozenset({"tolist", "to_list", "values", "to_numpy"})


def _frame_accessor(node: ast.Attribute) -> bool:
    """`x.iloc`, `x.value_counts`, `x.index.tolist`: an attribute only a pandas value has."""
    return node.attr in _FRAME_ONLY_ATTRS or (
        node.attr in _FRAME_INDEX_READS and isinstance(node.value, ast.Attribute) and node.value.attr == "index"
    )


def is_pandas_value(expr: ast.AST, imports: ImportTable) -> bool:
    """A pandas frame or series, or what is read of one: a chain through an attribute only pandas values have
    (`data.iloc[:, col]`), or one rooted in a name pandas code gives its frames, in a module that uses pandas
    (`df_dataset[df_dataset["uuid"] == uuid]["obj_uri"]`)."""
    node = expr
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Attribute):
            if _frame_accessor(node):
                return True
            node = node.value
        else:
            break
    return isinstance(node, ast.Name) and bool(_FRAME_NAME.search(node.id)) and imports.imports_any(("pandas",))


def _framed_name(node: ast.AST) -> Optional[str]:
    """`inputs` of `inputs.index.tolist()`, `data.iloc[...]` or `data.columns`: a name read as a pandas value."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
        inner = node.value
        if _frame_accessor(node) and isinstance(inner.value, ast.Name) and inner.attr == "index":
            return inner.value.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if node.attr in _FRAME_ONLY_ATTRS or node.attr == "columns":
            return node.value.id
    return None


_BUILTIN_REDUCTIONS = frozenset({"max", "min", "sum", "abs"})


def torch_call_on_host(call: ast.Call, scope: Optional[ast.AST], imports: ImportTable, copies: bool = True) -> bool:
    """`torch.inverse(M)` of a host tensor `M` (`M = torch.tensor([[...]])`): a torch function that names no
    device and computes on its first argument's device, the host (`copies` as for `is_host_value`)."""
    return (
        bool(call.args)
        and (imports.resolved(call.func) or "").startswith("torch.")
        and not any(k.arg == "device" for k in call.keywords)
        and is_host_value(call.args[0], scope, imports, copies)
    )


def on_host_array(call: ast.Call, scope: Optional[ast.AST], imports: ImportTable) -> bool:
    """`d.nonzero()`, `np.sum(a).tolist()`, `m.double()`: a method that moves nothing, called on a host value."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr in _MOVES:
        return False
    return is_host_value(func.value, scope, imports)


def numpy_of_host_tensor(call: ast.Call) -> bool:
    """`lengths.long().numpy()`, `x.detach().numpy()`: `.numpy()` raises on a CUDA tensor (unless `force=True`), so
    code that runs on CUDA calls it this way, with no host copy (`.cpu()`, `.to(...)`) in the chain, only on a tensor
    already on the host (a batch's lengths before they are moved: r9y9/deepvoice3_pytorch's train.py)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "numpy" and not call.args):
        return False
    if any(k.arg == "force" for k in call.keywords):
        return False
    expr: ast.AST = func.value
    while True:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            if expr.func.attr in ("cpu", "to", "type"):
                return False
            expr = expr.func.value
        elif isinstance(expr, (ast.Attribute, ast.Subscript)):
            expr = expr.value
        elif isinstance(expr, (ast.Compare, ast.BinOp)):
            # `(tokens == mask_idx).nonzero().numpy()` (LAMA's `roberta_connector`): a tensor compared with values
            # or a field of a batch (`(encoding['attention_mask'] == 1).nonzero().numpy()`, robust-tableqa's tokenizer)
            operands = [expr.left, *expr.comparators] if isinstance(expr, ast.Compare) else [expr.left, expr.right]
            return all(_plain_operand(o) for o in operands)
        else:
            return isinstance(expr, ast.Name)


def _plain_operand(expr: ast.AST) -> bool:
    """`tokens`, `self.mask_idx`, `1`, `batch["mask"]`: an operand that moves nothing (no call in it)."""
    while isinstance(expr, ast.Subscript) and isinstance(expr.slice, (ast.Constant, ast.Name)):
        expr = expr.value
    return isinstance(expr, (ast.Name, ast.Attribute, ast.Constant))


NUMPY_RECEIVER_ATTR = "_portcheck_numpy_receiver"  # set on the calls a host tensor's `.numpy()` chain makes


def mark_numpy_receivers(module: ast.Module) -> None:
    """Mark (`NUMPY_RECEIVER_ATTR`) the calls of the chain a `.numpy()` with no host copy ends
    (`(tokens == mask_idx).nonzero().numpy()`): `numpy_of_host_tensor` says the chain works on a host
    tensor, so its calls run on the host."""
    for node in module_nodes(module):
        if isinstance(node, ast.Call) and numpy_of_host_tensor(node):
            expr = cast(ast.Attribute, node.func).value
            while isinstance(expr, (ast.Call, ast.Attribute, ast.Subscript)):
                if isinstance(expr, ast.Call):
                    setattr(expr, NUMPY_RECEIVER_ATTR, True)
                    expr = expr.func
                else:
                    expr = expr.value


def switch_words(node: ast.AST) -> FrozenSet[str]:
    """The lower-case words of the names in a positive `if` test (`elif xformers:`, `if args.use_bnb_linear
    is not None:` -> args, use, bnb, linear), and of the strings it asks a value to equal (Megatron's `if
    self.transformer_impl == 'transformer_engine':` -> transformer, impl, engine), or of a function's name;
    none for a negated test."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset(name_words(node.name))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return frozenset()
    words: Set[str] = set()
    for sub in walk(node):
        if isinstance(sub, ast.UnaryOp) and isinstance(sub.op, ast.Not):
            return frozenset()
        if isinstance(sub, ast.Name):
            words.update(name_words(sub.id))
        elif isinstance(sub, ast.Attribute):
            words.update(name_words(sub.attr))
        elif isinstance(sub, ast.Compare) and all(isinstance(op, (ast.Eq, ast.In)) for op in sub.ops):
            for side in (sub.left, *sub.comparators):
                values = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                words.update(
                    w for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)
                    for w in name_words(v.value)
                )
    return frozenset(
        words
        | {_SHORT_WORDS[w] for w in words if w in _SHORT_WORDS}
        | ({"bitsandbytes"} if any(w.endswith("8bit") for w in words) else set())
    )


# A switch's word and the short form a library's name uses (`self.use_flash_attention` switches on `flash_attn`),
# or the library it is short for (`OptimizerNames.ADAMW_BNB`). A word ending in `8bit` names bitsandbytes too: HF
# Trainer's `if optimizer_cls.__name__ == "Adam8bit": import bitsandbytes`, copied into LLaVA-style trainers.
_SHORT_WORDS = {"attention": "attn", "bnb": "bitsandbytes"}


TESTED_ATTR = "_portcheck_tested"  # set on a reference an earlier operand of its `and` chain tests for truth
ARGUMENT_OF_ATTR = "_portcheck_argument_of"  # set on a call passed as an argument of another call: that call


def mark_call_arguments(node: ast.Call) -> None:
    """Mark (`ARGUMENT_OF_ATTR`) each call among `node`'s positional arguments with `node`, so a matcher can
    tell `torch.cuda.current_device()` inside `torch.cuda.get_device_name(torch.cuda.current_device())`."""
    for arg in node.args:
        if isinstance(arg, ast.Call):
            setattr(arg, ARGUMENT_OF_ATTR, node)


def _not_none_operand(test: ast.expr) -> ast.expr:
    """`x` of `x is not None` (or `None is not x`); `test` itself otherwise."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot):
        left, right = test.left, test.comparators[0]
        if isinstance(right, ast.Constant) and right.value is None:
            return left
        if isinstance(left, ast.Constant) and left.value is None:
            return right
    return test


def mark_tested_references(node: ast.BoolOp) -> None:
    """`torch.version.cuda and parse(torch.version.cuda) >= (11, 0)`: the later reads of a value the chain
    first tests for truth (or against None: openvla's `(torch.version.cuda is not None) and ...`) run only
    where it is set; the test is where it is reported."""
    if not isinstance(node.op, ast.And):
        return
    for i, value in enumerate(node.values[:-1]):
        value = _not_none_operand(value)
        name = dotted(value) if isinstance(value, (ast.Attribute, ast.Name)) else None
        if not name:
            continue
        for later in node.values[i + 1 :]:
            for sub in walk(later):
                if isinstance(sub, (ast.Attribute, ast.Name)) and dotted(sub) == name:
                    setattr(sub, TESTED_ATTR, True)
