"""Which side of a CUDA check is guarded: the side that runs where CUDA is, and only that side. A host sync
(XLA005) probes it: on the guarded side it is not reported at all (that side never runs on XLA or Neuron),
on the other it is, as anywhere."""

import ast

import pytest

from portcheck.config import Config
from portcheck.pyscan.context import is_cuda_check
from portcheck.pyscan.imports import ImportTable
from portcheck.runner import scan_paths


def _notes(tmp_path, text):
    # one file of a library: each definition may be what other modules or its users call (an application's
    # unused ones, or a whole library's, are `info`)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'lib'\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(text, encoding="utf-8")
    paths = [tmp_path / "train.py"]
    result = scan_paths(paths, Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    return {(f.line, f.code): f.note for r in result.files for f in r.findings}


LOOP = "    for batch in loader:\n        loss = model(batch)\n        loss.backward()\n        print(loss.item())\n"


def test_the_body_of_a_positive_check_is_guarded_and_its_else_is_not(tmp_path):
    notes = _notes(tmp_path, "import torch\nif torch.cuda.is_available():\n" + LOOP + "else:\n" + LOOP)
    assert (6, "XLA005") not in notes
    assert notes[(11, "XLA005")] == ""  # every other device runs the `else`


def test_the_else_of_a_negative_check_is_guarded_and_its_body_is_not(tmp_path):
    notes = _notes(tmp_path, "import torch\nif not torch.cuda.is_available():\n" + LOOP + "else:\n" + LOOP)
    assert notes[(6, "XLA005")] == ""
    assert (11, "XLA005") not in notes


def test_a_backend_other_than_nccl_is_a_negative_check(tmp_path):
    # allenai/allennlp's `peak_gpu_memory`: `if dist.get_backend() != "nccl": return {}` leaves CUDA behind
    head = "import torch\nimport torch.distributed as dist\nif dist.get_backend() != 'nccl':\n"
    notes = _notes(tmp_path, head + LOOP + "else:\n" + LOOP)
    assert notes[(7, "XLA005")] == ""
    assert (12, "XLA005") not in notes


def test_an_xla_arm_after_a_cuda_check_is_the_xla_path(tmp_path):
    text = (
        "import torch\nimport torch_xla.core.xla_model as xm\n"
        "if torch.cuda.is_available():\n    name = torch.cuda.get_device_name()\n"
        "elif is_xla_installed():\n    name = xm.xla_device_hw(xm.xla_device())\n"
    )
    assert not [key for key in _notes(tmp_path, text) if key[0] == 6]


def test_a_module_divisibility_helper_makes_a_branch_periodic(tmp_path):
    text = (
        "import torch\n\ndef divisible_by(num, den):\n    return (num % den) == 0\n\n"
        "for i, batch in enumerate(loader):\n    loss = model(batch)\n    loss.backward()\n"
        "    if divisible_by(i, 100):\n        print(loss.item())\n"
    )
    assert (10, "XLA005") not in _notes(tmp_path, text)


BLOCK = """\
import torch


class Block:
    def _optimized(self, x):
        s = torch.cuda.Stream()
        return x

    def forward(self, x):
        if x.size(1) == 1 and x.device.type == "cuda":
            return self._optimized(x)
        return x
"""


def test_a_method_used_only_on_the_cuda_side_of_checks_is_guarded(tmp_path):
    # petals' `_optimized_apply_rotary`: CUDA graphs built only where `x.device.type == "cuda"`
    assert "CUDA check" in _notes(tmp_path, BLOCK)[(6, "RT006")]
    # one use elsewhere, and it runs wherever that does
    unguarded = BLOCK + "\n    def warmup(self, x):\n        return self._optimized(x)\n"
    assert _notes(tmp_path, unguarded)[(6, "RT006")] == ""
    # a public module function may be used by other modules: not marked
    public = (
        "import torch\n\n\ndef optimized(x):\n    s = torch.cuda.Stream()\n    return x\n\n\n"
        "def forward(x):\n    if x.device.type == 'cuda':\n        return optimized(x)\n    return x\n"
    )
    assert _notes(tmp_path, public)[(5, "RT006")] == ""


def test_a_long_expression_beside_the_helper_marks_is_analysed(tmp_path):
    # a 1,200-term `+` chain nests 1,200 deep: walking it must not exhaust the recursion limit
    chain = "TABLE = " + " + ".join(["[0]"] * 1200) + "\n"
    notes = _notes(tmp_path, BLOCK + "\n\n" + chain)
    assert "CUDA check" in notes[(6, "RT006")]


CAPABILITY = "torch.cuda.get_device_capability()[0] >= 8"
READ_OK = "\n\ndef use_bf16():\n    return ok\n"
GUARDED_BY_A_CHECK = [
    # what comes after a CUDA check in `and` (or after a negative one in `or`) runs only where CUDA is
    # (each read afterwards: a module-level name nothing reads is info, whatever guards it)
    (f"import torch\nok = torch.cuda.is_available() and {CAPABILITY}\n{READ_OK}", 2, "RT007", True),
    (f"import torch\nok = not torch.cuda.is_available() or {CAPABILITY}\n{READ_OK}", 2, "RT007", True),
    (f"import torch\nok = {CAPABILITY} and torch.cuda.is_available()\n{READ_OK}", 2, "RT007", False),
    # a name bound once to a check is the check (MODNet's `GPU = True if ... device_count() > 0 else False`)
    (
        "import torch\nGPU = True if torch.cuda.device_count() > 0 else False\nif GPU:\n    x = x.cuda()\n",
        4,
        "DEV002",
        True,
    ),
    ("import torch\nok = torch.cuda.is_available()\nif ok:\n    x = x.cuda()\n", 4, "DEV002", True),
    # bound twice, or a parameter of the same name elsewhere: no longer that check's answer
    # (rebound to what is no check; rebound to `False`, the body would never run: `mark_constant_branches`)
    ("import torch\nok = torch.cuda.is_available()\nok = bool(x)\nif ok:\n    x = x.cuda()\n", 5, "DEV002", False),
    (
        "import torch\nok = torch.cuda.is_available()\n\n\ndef f(x, ok):\n    if ok:\n        x = x.cuda()\n",
        7,
        "DEV002",
        False,
    ),
    # narrowed at the top of a function (jepa's `log_timings = log_timings and torch.cuda.is_available()`)
    (
        "import torch\n\n\ndef timed(fn, log=True):\n    log = log and torch.cuda.is_available()\n"
        "    if log:\n        x = fn().cuda()\n    return x\n",
        7,
        "DEV002",
        True,
    ),
    (
        "import torch\n\n\ndef timed(fn, log=True):\n    log = log and torch.cuda.is_available()\n"
        "    log = True\n    if log:\n        x = fn().cuda()\n    return x\n",
        8,
        "DEV002",
        False,
    ),
]


@pytest.mark.parametrize("text,line,code,guarded", GUARDED_BY_A_CHECK)
def test_what_a_check_guards_through_and_or_and_names(tmp_path, text, line, code, guarded):
    note = _notes(tmp_path, text)[(line, code)]
    assert ("CUDA check" in note) is guarded, note


TIMER = (
    "import torch\n\n\ndef gpu_timer(closure, log_timings=True):\n"
    "    log_timings = log_timings and torch.cuda.is_available()\n"
    "    if log_timings:\n        start = torch.cuda.Event(enable_timing=True)\n"
    "        end = torch.cuda.Event(enable_timing=True)\n        start.record()\n"
    "    result = closure()\n    if log_timings:\n        end.record()\n        torch.cuda.synchronize()\n"
    "        elapsed = start.elapsed_time(end)\n    return result\n"
)


def test_a_flag_that_only_guards_cuda_only_work_is_no_fallback(tmp_path):
    # jepa's `gpu_timer`: the check only turns the CUDA timing off; the events' own methods are CUDA work
    notes = _notes(tmp_path, TIMER)
    assert (5, "DEV005") not in notes, notes
    assert "CUDA check" in notes[(13, "RT001")] and "CUDA check" in notes[(7, "RT006")]
    flag = "import torch\nuse_cuda = torch.cuda.is_available()\nif use_cuda:\n    torch.cuda.synchronize()\n"
    assert (2, "DEV005") not in _notes(tmp_path, flag)
    # a read that picks a device makes the check a fallback again
    picked = flag + "device = 'cuda' if use_cuda else 'cpu'\n"
    assert (2, "DEV005") in _notes(tmp_path, picked)


def test_a_debugging_branch_lowers_what_it_runs(tmp_path):
    # Hunyuan3D-2's `synchronize_timer`: CUDA events only when HY3DGEN_DEBUG=1
    text = (
        "import os\nimport torch\n\n\ndef timed(fn):\n    if os.environ.get('HY3DGEN_DEBUG', '0') == '1':\n"
        "        torch.cuda.synchronize()\n    out = fn()\n    torch.cuda.synchronize()\n    return out\n"
    )
    notes = _notes(tmp_path, text)
    assert "debugging" in notes[(7, "RT001")], notes
    assert "debugging" not in notes[(9, "RT001")], notes
    # x-attention's `if self.fastprefillconfig.print_detail:` around a timed section
    detail = text.replace("os.environ.get('HY3DGEN_DEBUG', '0') == '1'", "self.config.print_detail")
    assert "debugging" in _notes(tmp_path, detail)[(7, "RT001")]
    other = text.replace("os.environ.get('HY3DGEN_DEBUG', '0') == '1'", "self.config.print_memory")
    assert "debugging" not in _notes(tmp_path, other)[(7, "RT001")]


def test_a_try_around_a_whole_job_is_no_fallback(tmp_path):
    # TRELLIS's extraction loop under a bare `except:` that prints: the job stops, nothing runs instead
    head = "import torch\n\n\ndef run(x):\n    try:\n"
    job = head + "        for y in x:\n            y = y.cuda()\n    except:\n        print('failed')\n"
    attempt = head + "        return x.cuda()\n    except RuntimeError:\n        print('failed')\n    return x\n"
    assert "handler" not in _notes(tmp_path, job)[(7, "DEV002")]
    assert "handler" in _notes(tmp_path, attempt)[(6, "DEV002")]


@pytest.mark.parametrize(
    "test, flag",
    [
        ("self.use_gpu", True),  # ColBERT's `self.use_gpu = config.total_visible_gpus > 0`
        ("run_on_gpu", True),
        ("args.cuda", True),
        ("gpu_available", True),
        ("config.gpu is not None", False),  # a device index: `model.cuda(config.gpu)` else `model.cuda()`
        ("args.gpus", False),
        ("cpu_state == CPUState.GPU", False),
        ("torch.Tensor(target).cuda()", False),  # a move, not the flag `args.cuda`
        ("args.cuda and x.cuda().sum() > 0", True),
    ],
)
def test_a_flag_named_for_the_gpu_asks_for_cuda_and_a_device_index_does_not(test, flag):
    module = ast.parse(f"if {test}:\n    pass\n")
    assert is_cuda_check(module.body[0].test, ImportTable.from_module(module)) is flag  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "body, clamped",
    [
        ("nd = torch.cuda.device_count()\nnw = os.cpu_count() // max(nd, 1)\n", True),
        ("nd = torch.cuda.device_count()\nnw = os.cpu_count() // max(nd, 1)\nbatch = 16 * nd\n", False),
        ("nd = torch.cuda.device_count()\nnw = os.cpu_count() // max(nd, 2)\n", False),
        ("world = max(torch.cuda.device_count(), 1)\n", True),
    ],
)
def test_a_device_count_read_only_through_max_one_is_lowered(tmp_path, body, clamped):
    (tmp_path / "a.py").write_text("import os\nimport torch\n" + body, encoding="utf-8")
    result = scan_paths([tmp_path], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    (count,) = [f for r in result.files for f in r.findings if f.code == "DEV006"]
    assert ("max(..., 1)" in count.note) is clamped, count


def test_what_follows_an_early_return_without_cuda_in_an_if_elif_chain_is_guarded(tmp_path):
    text = (
        "import os\nimport torch\n\n\ndef initialize(local_rank):\n"
        "    if not torch.cuda.is_available():\n        print('no CUDA, using the CPU')\n        return\n"
        "    elif 'RANK' not in os.environ:\n        return\n"
        "    torch.cuda.set_device(local_rank)\n\n\ninitialize(0)\n"
    )
    (tmp_path / "dist.py").write_text(text, encoding="utf-8")
    result = scan_paths([tmp_path], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    (found,) = [f for r in result.files for f in r.findings if f.line == 11]
    assert found.guarded and "CUDA check" in found.note, found


@pytest.mark.parametrize(
    "cuda_side, host_side, picks_a_device",
    [
        (
            "torch.cuda.synchronize()\n    start = torch.cuda.Event(enable_timing=True)\n    start.record()",
            "t0 = time.time()",
            False,
        ),
        (
            "end.record()\n    torch.cuda.synchronize()\n    ms = start.elapsed_time(end)",
            "ms = (time.time() - t0) * 1000",
            False,
        ),
        (
            "peak = torch.cuda.max_memory_allocated()\n    _, total = torch.cuda.mem_get_info()\n"
            "    pct = int(100 * (peak / total))",
            "import psutil\n    total = psutil.virtual_memory().total\n    pct = int(100 * peak / total)",
            False,
        ),
        # the same work timed on both sides (glue-factory's benchmark)
        (
            "starter.record()\n    _ = model(data)\n    ender.record()\n    torch.cuda.synchronize()\n"
            "    ms = starter.elapsed_time(ender)",
            "start = time.perf_counter()\n    _ = model(data)\n    ms = (time.perf_counter() - start) * 1e3",
            False,
        ),
        # a device (or a mode) picked beside the clock: a fallback after all
        ("device = 'cuda'\n    t0 = torch.cuda.Event()", "device = 'cpu'\n    t0 = time.time()", True),
        ("n = torch.cuda.memory_allocated()\n    on = 1", "n = psutil.virtual_memory().used\n    on = 0", True),
    ],
)
def test_a_check_that_picks_a_clock_or_a_memory_counter_is_no_fallback(tmp_path, cuda_side, host_side, picks_a_device):
    text = f"import time\nimport torch\nif torch.cuda.is_available():\n    {cuda_side}\nelse:\n    {host_side}\n"
    (tmp_path / "bench.py").write_text(text, encoding="utf-8")
    result = scan_paths([tmp_path], Config(respect_gitignore=False), target="neuron", cwd=tmp_path, jobs=1)
    checks = [f for r in result.files for f in r.findings if f.code == "DEV005"]
    assert bool(checks) is picks_a_device, checks


@pytest.mark.parametrize("value, guarded", [("True", False), ("args.gpu", True)])
def test_a_cuda_flag_only_ever_set_to_true_is_no_check(tmp_path, value, guarded):
    # ByteTrack's ctracker tutorial: `use_gpu = True`, then `if use_gpu: retinanet = retinanet.cuda()` always runs
    text = (
        f"import torch\n\ndef main(model, args):\n    use_gpu = {value}\n"
        "    if use_gpu:\n        model = model.cuda()\n"
    )
    note = _notes(tmp_path, text)[(6, "DEV002")]
    assert ("CUDA check" in note) is guarded, note


def _switch(head, test, body="model = model.cuda()"):
    """A module whose last line, `body`, runs under `if {test}:` at the end of `head`'s block."""
    return f"import torch\n{head}    if {test}:\n        {body}\n"


@pytest.mark.parametrize(
    "text, guarded",
    [
        # Cadene's vqa.pytorch `def factory(opt, cuda=True, ...)`: on unless a caller turns it off
        (_switch("def main(model, cuda=True):\n", "cuda"), False),
        (_switch("def main(model, *, use_cuda=True):\n", "use_cuda"), False),
        (_switch("def main(model, cuda=False):\n", "cuda"), True),
        (_switch("def main(model, cuda=True):\n    cuda = cuda and torch.cuda.is_available()\n", "cuda"), True),
        # hszhao/SAN's `position(h, w, is_cuda=True)`, called as `position(h, w, x.is_cuda)`
        (_switch("def f(x):\n    return main(x, x.is_cuda)\ndef main(model, is_cuda=True):\n", "is_cuda"), True),
        (_switch("def f(x):\n    return main(x, use_cuda=True)\ndef main(model, use_cuda=True):\n", "use_cuda"), False),
        # a method: `self.main(...)` skips its own first parameter
        (
            "import torch\nclass A:\n    def f(self, x):\n        return self.main(x, x.is_cuda)\n"
            "    def main(self, model, is_cuda=True):\n        if is_cuda:\n            model = model.cuda()\n",
            True,
        ),
        (
            "import torch\nclass A:\n    def f(self, x):\n        return self.main(x, True)\n"
            "    def main(self, model, is_cuda=True):\n        if is_cuda:\n            model = model.cuda()\n",
            False,
        ),
        # lyeoni's nlp-tutorial: `p.add_argument('--cuda', default=True, type=bool)`, then `if config.cuda:`
        (_switch("p.add_argument('--cuda', default=True, type=bool)\ndef main(m, config):\n", "config.cuda"), False),
        (_switch("p.add_argument('--use-cuda', action='store_true')\ndef main(m, config):\n", "config.use_cuda"), True),
        (
            _switch(
                "p.add_argument('--cuda', default=True)\nargs = p.parse_args()\n"
                "args.cuda = args.cuda and torch.cuda.is_available()\ndef main(model, config):\n",
                "config.cuda",
            ),
            True,
        ),
        # Attention_ocr.pytorch's decoder: `self.use_gpu = True`, the module's only value for it
        (_switch("class D:\n  def __init__(self):\n    self.use_gpu = True\n  def f(self):\n", "self.use_gpu"), False),
        (_switch("class D:\n  def __init__(self, g):\n    self.use_gpu = g\n  def f(self):\n", "self.use_gpu"), True),
        # DropEdge's `--mixmode`, narrowed to where CUDA is
        (
            "import torch\nargs = parser.parse_args()\n"
            "args.mixmode = args.no_cuda and args.mixmode and torch.cuda.is_available()\n"
            "if args.mixmode:\n    adj = adj.cuda()\n",
            True,
        ),
        # nerfplusplus's `args.world_size = torch.cuda.device_count()`: a count that sizes a spawn, not a switch
        (
            "import torch\nargs = parser.parse_args()\nargs.mixmode = torch.cuda.device_count()\n"
            "if args.mixmode:\n    adj = adj.cuda()\n",
            False,
        ),
    ],
)
def test_what_guards_a_cuda_call(tmp_path, text, guarded):
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ".cuda()" in ln)
    note = _notes(tmp_path, text)[(line, "DEV002")]
    assert ("CUDA check" in note) is guarded, note


@pytest.mark.parametrize(
    "other, guarded",
    [
        ("raise RuntimeError('needs CUDA')", False),
        ("device = 'cpu'", True),
        ("raise", True),  # an error handler's re-raise (s3prl's `if 'CUDA out of memory' in str(e): ... else: raise`)
    ],
)
def test_the_cuda_side_of_a_requirement_is_not_guarded(tmp_path, other, guarded):
    # MONAI's tutorials: `if torch.cuda.is_available(): device = torch.device("cuda:0") else: raise ...`
    text = f"import torch\nif torch.cuda.is_available():\n    device = torch.device('cuda:0')\nelse:\n    {other}\n"
    note = _notes(tmp_path, text)[(3, "DEV001")]
    assert ("CUDA check" in note) is guarded, note


def test_a_check_of_a_setting_that_moves_to_cuda_in_its_body_is_no_cuda_check(tmp_path):
    # A-ViT's `if args.distr_prior_alpha > 0.: self.distr_target = torch.Tensor(...).cuda()`: `.cuda()` in the
    # value read as the flag `self.cuda` made it an unread CUDA flag, lowered to info
    text = (
        "import torch\nclass M:\n    def __init__(self, args):\n        if args.distr_prior_alpha > 0.:\n"
        "            self.target = torch.Tensor(make_target()).cuda()\n"
    )
    assert "flag" not in _notes(tmp_path, text)[(5, "DEV002")]


@pytest.mark.parametrize(
    "test, flag",
    [
        ("torch.cuda._initialized", True),  # torch's own `checkpoint.py`
        ("len(torch.cuda.default_generators) > 0", True),  # mmpretrain's revvit
        ("torch.cuda.manual_seed_all", False),
        ("str(self.device).__contains__('cuda')", True),  # WenmuZhou/PAN.pytorch's predict.py
        ("str(self.device).__contains__('cpu')", False),
        ("name.endswith('cuda')", False),
        # junyanz/pytorch-CycleGAN-and-pix2pix's generators (copied into Attention-Gated-Networks and many more)
        ("self.gpu_ids and isinstance(input.data, torch.cuda.FloatTensor)", True),
        ("isinstance(x, (torch.FloatTensor, torch.cuda.FloatTensor))", True),
        ("isinstance(input.data, torch.FloatTensor)", False),
        ("opt['data.cuda']", True),  # jakesnell/prototypical-networks' option dictionary
        ("'CUDA out of memory' in str(e)", True),  # s3prl's runner: only after CUDA's runtime raised
        ("'out of memory' in str(e)", False),
        ("opt['data.path']", False),
    ],
)
def test_what_an_if_test_asks_about_cuda(test, flag):
    module = ast.parse(f"import torch\nif {test}:\n    pass\n")
    assert is_cuda_check(module.body[1].test, ImportTable.from_module(module)) is flag  # type: ignore[attr-defined]


CLEARED = (
    "import torch\n"
    "args.distributed = num_gpus > 1\n"
    "if not args.no_cuda and torch.cuda.is_available():\n"
    "    args.device = 'cuda'\n"
    "else:\n"
    "    args.distributed = False\n"
    "    args.device = 'cpu'\n"
    "{rebind}"
    "if args.distributed:\n"
    "    torch.cuda.set_device(args.local_rank)\n"
)


def test_a_flag_cleared_where_cuda_is_absent_guards_what_it_switches_on(tmp_path):
    # awesome-semantic-segmentation-pytorch's scripts: `args.distributed` is True only where CUDA is
    notes = _notes(tmp_path, CLEARED.format(rebind=""))
    assert "CUDA check" in notes[(9, "DIST002")]


def test_a_flag_set_again_after_it_was_cleared_guards_nothing(tmp_path):
    notes = _notes(tmp_path, CLEARED.format(rebind="args.distributed = world_size > 1\n"))
    assert notes[(10, "DIST002")] == ""


INSTANCE_FLAG = (
    "import torch\n"
    "class Iter:\n"
    "    def __init__(self, loader):\n"
    "        self.pin_memory = loader.pin_memory and torch.cuda.is_available()\n"
    "{rebind}"
    "    def start(self):\n"
    "        if self.pin_memory:\n"
    "            return torch.cuda.current_device()\n"
)


REBOUND = "    def off(self):\n        self.pin_memory = True\n"


@pytest.mark.parametrize("rebind,guarded", [("", True), (REBOUND, False)])
def test_an_instance_flag_set_once_to_a_cuda_check_guards_what_it_switches_on(tmp_path, rebind, guarded):
    # the DataLoader copied into EDSR-PyTorch and RCAN: `current_device()` runs only where CUDA is
    notes = _notes(tmp_path, INSTANCE_FLAG.format(rebind=rebind))
    line = 7 + rebind.count("\n")
    assert ("CUDA check" in notes[(line, "DEV009")]) is guarded


SET_ON_CUDA = (
    "import torch\n"
    "def run(model, inputs):\n"
    "    cuda_flag = {before}\n"
    "    if torch.cuda.is_available():\n"
    "        model = model.cuda()\n"
    "        cuda_flag = True\n"
    "    if cuda_flag:\n"
    "        inputs = inputs.cuda()\n"
    "    return model(inputs)\n"
)


@pytest.mark.parametrize("before,guarded", [("False", True), ("True", False), ("args.gpu", False)])
def test_a_flag_set_true_only_beside_cuda_guards_what_it_switches_on(tmp_path, before, guarded):
    # ckkelvinchan/RealBasicVSR's inference script: `cuda_flag` is True only where CUDA is
    notes = _notes(tmp_path, SET_ON_CUDA.format(before=before))
    assert ("CUDA check" in notes[(8, "DEV002")]) is guarded


@pytest.mark.parametrize("members,guarded", [("['nccl']", True), ("['nccl', 'gloo']", False)])
def test_membership_in_nccl_alone_asks_for_cuda(members, guarded):
    # mobile-vision's `if backend.lower() in ["nccl"]: torch.cuda.set_device(...)`
    test = ast.parse(f"backend.lower() in {members}", mode="eval").body
    assert is_cuda_check(test, ImportTable.from_module(ast.parse(""))) is guarded


def test_an_is_cuda_available_flag_guards_what_it_switches_on(tmp_path):
    # snap-research/EfficientFormer's `tools/deploy_test.py` (mmseg's ONNX Runtime segmentor): the flag named for
    # CUDA's availability picks the CUDA provider and the `.cuda()` move, the CPU sides beside them
    text = (
        "import onnxruntime as ort\nimport torch\n\n\nclass Segmentor:\n    def __init__(self, device_id):\n"
        "        providers = ['CPUExecutionProvider']\n        is_cuda_available = ort.get_device() == 'GPU'\n"
        "        if is_cuda_available:\n            providers.insert(0, 'CUDAExecutionProvider')\n"
        "        self.is_cuda_available = is_cuda_available\n        self.device_id = device_id\n\n"
        "    def simple_test(self, img):\n        if not self.is_cuda_available:\n"
        "            img = img.detach().cpu()\n"
        "        elif self.device_id >= 0:\n            img = img.cuda(self.device_id)\n        return img\n"
    )
    notes = _notes(tmp_path, text)
    assert "CUDA check" in notes[(10, "PKG010")] and "CUDA check" in notes[(18, "DEV002")], notes


def test_a_config_field_is_read_by_the_configs_users(tmp_path):
    # assaying-ood's `ModelConfig.device`, which Hydra hands to every model loader: no unread flag
    field = "    device: str = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
    config = "import dataclasses\nimport torch\n\n\n@dataclasses.dataclass\nclass ModelConfig:\n" + field
    assert "nothing in this module reads" not in _notes(tmp_path, config)[(7, "DEV005")]
    plain = "import torch\n\n\nclass Case:\n" + field
    assert "nothing in this module reads" in _notes(tmp_path, plain)[(5, "DEV005")]
