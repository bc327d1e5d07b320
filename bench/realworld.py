"""Real entry scripts, fixed by `portcheck fix`, run on a CPU-only torch and on testaccel.

    python bench/realworld.py /work/corpus/karpathy+nanoGPT /work/corpus/NVlabs+stylegan3 \
        /work/corpus/karpathy+llm.c /work/corpus/karpathy+llama2.c /work/corpus/pytorch+examples \
        /work/corpus/lucidrains+x-transformers
    python bench/realworld.py CORPUS_DIR... --only nanoGPT/train.py --keep --json out.json

Each folder is a fetched public repository, named `owner+name` as in the corpus. For every recipe
of that repository (RECIPES below, data only) the bench:

1. copies the repository to a temporary folder and lays out the recipe's synthetic inputs (stub
   files, and a setup snippet run with plain CPU torch: tiny data sets, tiny checkpoints);
2. runs the script as written on the CPU-only torch: it must fail (else the recipe proves nothing);
3. runs `portcheck fix --unsafe-fixes` on the whole copy, keeps the diff (bench/results/realworld/);
4. runs the fixed script on the CPU-only torch, then on testaccel (tests/accel), where every
   process's device counters must show tensors allocated and operators run on the device.

A script passes when it failed as written and both fixed runs exit 0 (and print what the recipe
expects). The last line is `N passed, N failed`; scripts whose Python modules are missing here
are listed as skipped, with the module. No network: recipes use tiny configs passed on the
command line and synthetic data; nothing is downloaded.

Every run uses the interpreter running this file; it needs torch and the recipes' modules:
`pip install numpy click pillow scipy tqdm matplotlib requests imageio imageio-ffmpeg 'setuptools<81'
sentencepiece gymnasium einops einx loguru torch-einops-utils lion-pytorch` (sentencepiece: llama2.c's
data module imports it; gymnasium: the RPC reinforcement-learning example's CartPole; the last five:
x-transformers and its parity script's optimizer). A recipe's stub files are plain files in the
copy (data, a tokenizer that downloads nothing, a tqdm that ends a loop whose length the script fixes
in code); the script's folder goes on PYTHONPATH so that a stub shadows an installed module from
the interpreter's start.
The fix step runs this checkout's portcheck. torchvision is not a requirement: the torchvision release
for torch 2.13 (0.28.0) does not import beside a CPU torch (`operator torchvision::nms does not
exist`), so no recipe uses a script that imports it (docs/runtime-proof.md lists the scripts left out).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results" / "realworld"
sys.path.insert(0, str(REPO / "tests"))  # tests/accel: the test accelerator and its loader


@dataclass(frozen=True)
class Recipe:
    repo: str  # the corpus folder's name, owner+name
    script: str  # path of the entry script inside the repository
    argv: Tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    stubs: Mapping[str, str] = field(default_factory=dict)  # relative path -> text, written first
    setup: str = ""  # Python run once in the copy (plain CPU torch) before any run
    expect: str = ""  # a substring of stdout that a successful run prints
    needs: Tuple[str, ...] = ()  # importable modules the script needs besides torch
    time_limit: int = 300  # seconds per run
    ranks: int = 0  # > 0: launched with `torchrun --standalone --nproc_per_node=RANKS`
    label: str = ""  # tells two recipes of one script apart

    @property
    def name(self) -> str:
        base = f"{self.repo.split('+', 1)[-1]}/{self.script}"
        return f"{base} [{self.label}]" if self.label else base


# --- synthetic inputs --------------------------------------------------------------------------

_NANOGPT_DATA = """
import os, pickle
import numpy as np
os.makedirs("data/tiny", exist_ok=True)
chars = [chr(ord("a") + i) for i in range(26)] + [" ", "\\n"]
with open("data/tiny/meta.pkl", "wb") as f:
    pickle.dump({"vocab_size": len(chars), "stoi": {c: i for i, c in enumerate(chars)},
                 "itos": {i: c for i, c in enumerate(chars)}}, f)
rng = np.random.default_rng(0)
for split in ("train", "val"):
    rng.integers(0, len(chars), 4096).astype(np.uint16).tofile(f"data/tiny/{split}.bin")
"""

_NANOGPT_CKPT = _NANOGPT_DATA + """
import torch
from model import GPTConfig, GPT
args = dict(n_layer=1, n_head=2, n_embd=32, block_size=16, bias=False, vocab_size=len(chars), dropout=0.0)
model = GPT(GPTConfig(**args))
os.makedirs("out", exist_ok=True)
torch.save({"model": model.state_dict(), "model_args": args, "iter_num": 0, "best_val_loss": 9.9,
            "config": {"dataset": "tiny"}}, "out/ckpt.pt")
"""

_NO_TIKTOKEN = "def get_encoding(name):\n    raise RuntimeError('no tokenizer downloads in this benchmark')\n"

_LLMC_DATA = """
import numpy as np
header = np.zeros(256, dtype=np.int32)
header[:3] = (20240520, 1, 4096)
with open("tiny.bin", "wb") as f:
    f.write(header.tobytes())
    f.write(np.random.default_rng(0).integers(0, 50257, 4096).astype(np.uint16).tobytes())
"""

_FAKE_TIKTOKEN = (
    "class _Encoding:\n"
    "    max_token_value = 50256\n"
    "    eot_token = 50256\n"
    "    def decode_bytes(self, ids):\n"
    "        return bytes(i % 256 for i in ids)\n"
    "    def decode(self, ids):\n"
    "        return self.decode_bytes(ids).decode('latin-1')\n"
    "def get_encoding(name):\n"
    "    return _Encoding()\n"
)

_NANOGPT_TINY = ("--n_layer=1", "--n_head=2", "--n_embd=32", "--block_size=16", "--batch_size=2", "--compile=False")

_STYLEGAN_NET = """
import pickle
import torch
from training.{module} import Generator
torch.manual_seed(0)
G = Generator(z_dim=8, c_dim=0, w_dim=8, img_resolution=16, img_channels=3,
              mapping_kwargs=dict(num_layers=1), {synthesis})
with open("tiny.pkl", "wb") as f:
    G = G.eval().requires_grad_(False)
    pickle.dump({{"G": G, "D": torch.nn.Identity(), "G_ema": G}}, f)
"""

_NANOGPT_TRAIN = (
    "--dataset=tiny",
    "--max_iters=2",
    "--eval_interval=1",
    "--eval_iters=1",
    "--gradient_accumulation_steps=1",
    "--warmup_iters=1",
    "--lr_decay_iters=2",
)

# x-transformers' train_parity.py trains until a length curriculum ends (`while train_seq_len <
# stop_length`), counting steps only with tqdm's `pbar.update(1)`. This stand-in for tqdm ends the run
# after BENCH_STEPS steps; it changes nothing else, and x_transformers itself does not import tqdm.
_TQDM_STEPS = """
import os, sys
_STEPS = int(os.environ.get("BENCH_STEPS", "1"))
class tqdm:
    def __init__(self, iterable=None, *args, **kwargs):
        self.iterable, self.n = iterable, 0
    def __iter__(self):
        return iter(self.iterable)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return False
    def update(self, n=1):
        self.n += n
        if self.n >= _STEPS:
            print(f"bench: stopped after {self.n} steps", flush=True)
            sys.exit(0)
"""

_LLAMA2C_DATA = """
import os
import numpy as np
os.makedirs("data/tok64", exist_ok=True)
rng = np.random.default_rng(0)
for shard in range(2):  # shard 0 is the validation split, the others train
    rng.integers(0, 64, 4096).astype(np.uint16).tofile(f"data/tok64/data{shard:02d}.bin")
"""

RECIPES: Tuple[Recipe, ...] = (
    Recipe(
        "karpathy+nanoGPT",
        "train.py",
        argv=(*_NANOGPT_TRAIN, *_NANOGPT_TINY),
        setup=_NANOGPT_DATA,
        expect="iter 2:",
        needs=("numpy",),
    ),
    Recipe(
        "karpathy+nanoGPT",
        "train.py",
        label="torchrun, 2 ranks",
        ranks=2,
        argv=(*_NANOGPT_TRAIN, *_NANOGPT_TINY, "--gradient_accumulation_steps=2"),
        setup=_NANOGPT_DATA,
        expect="iter 2:",
        needs=("numpy",),
    ),
    Recipe(
        "karpathy+nanoGPT",
        "sample.py",
        argv=(
            "--init_from=resume",
            "--out_dir=out",
            "--num_samples=1",
            "--max_new_tokens=8",
            "--start=ab",
            "--compile=False",
        ),
        stubs={"tiktoken.py": _NO_TIKTOKEN},
        setup=_NANOGPT_CKPT,
        expect="---------------",
        needs=("numpy",),
    ),
    Recipe(
        "NVlabs+stylegan3",
        "gen_images.py",
        label="stylegan2",
        argv=("--network=tiny.pkl", "--seeds=0-1", "--outdir=out", "--trunc=1"),
        setup=_STYLEGAN_NET.format(module="networks_stylegan2", synthesis="channel_base=256, channel_max=16"),
        expect="Generating image for seed 1",
        needs=("numpy", "click", "PIL", "requests", "pkg_resources"),
    ),
    Recipe(
        "NVlabs+stylegan3",
        "gen_images.py",
        label="stylegan3-t",
        argv=("--network=tiny.pkl", "--seeds=0", "--outdir=out", "--trunc=1"),
        setup=_STYLEGAN_NET.format(
            module="networks_stylegan3", synthesis="channel_base=256, channel_max=16, num_layers=4"
        ),
        expect="Generating image for seed 0",
        needs=("numpy", "click", "PIL", "scipy", "requests", "pkg_resources"),
    ),
    Recipe(
        "NVlabs+stylegan3",
        "gen_video.py",
        argv=("--network=tiny.pkl", "--seeds=0-2", "--w-frames=2", "--output=out.mp4"),
        setup=_STYLEGAN_NET.format(module="networks_stylegan2", synthesis="channel_base=256, channel_max=16"),
        needs=("numpy", "click", "PIL", "scipy", "requests", "pkg_resources", "imageio", "imageio_ffmpeg"),
    ),
    Recipe(
        "NVlabs+stylegan3",
        "avg_spectra.py",
        label="stats",
        # `calc` needs an FFT kernel the test accelerator does not have (DispatchStub: missing kernel).
        argv=("stats", "--source=tiny.pkl", "--num=2"),
        setup=_STYLEGAN_NET.format(module="networks_stylegan2", synthesis="channel_base=256, channel_max=16"),
        expect="--mean=",
        needs=("numpy", "click", "PIL", "scipy", "matplotlib", "tqdm", "requests", "pkg_resources"),
    ),
    Recipe(
        "karpathy+llm.c",
        "train_gpt2.py",
        label="torchrun, 1 rank",
        ranks=1,
        argv=(
            "--model=d12",
            "--input_bin=tiny.bin",
            "--batch_size=1",
            "--sequence_length=8",
            "--total_batch_size=8",
            "--num_iterations=1",
            "--write_tensors=0",
            "--dtype=float32",
        ),
        stubs={"tiktoken.py": _FAKE_TIKTOKEN},
        setup=_LLMC_DATA,
        expect="step    1/1",
        needs=("numpy",),
        time_limit=600,
    ),
    Recipe(
        "karpathy+llama2.c",
        "train.py",
        argv=(
            "--vocab_source=custom",
            "--vocab_size=64",
            "--dim=32",
            "--n_layers=1",
            "--n_heads=2",
            "--n_kv_heads=2",
            "--multiple_of=8",
            "--max_seq_len=16",
            "--batch_size=2",
            "--gradient_accumulation_steps=1",
            "--max_iters=2",
            "--eval_interval=1",
            "--eval_iters=1",
            "--warmup_iters=1",
            "--compile=False",
        ),
        setup=_LLAMA2C_DATA,
        expect="step 2: train loss",
        needs=("numpy", "requests", "sentencepiece", "tqdm"),
    ),
    Recipe(
        "pytorch+examples",
        "distributed/ddp-tutorial-series/single_gpu.py",
        argv=("2", "1", "--batch_size=256"),
        expect="Epoch 1 | Training checkpoint saved at",
    ),
    Recipe(
        "pytorch+examples",
        "distributed/ddp-tutorial-series/multigpu_torchrun.py",
        label="torchrun, 2 ranks",
        ranks=2,
        argv=("2", "1", "--batch_size=256"),
        expect="Epoch 1 | Training snapshot saved at",
    ),
    Recipe(
        "pytorch+examples",
        "distributed/ddp-tutorial-series/multinode.py",
        label="torchrun, 2 ranks",
        ranks=2,
        argv=("2", "1", "--batch_size=256"),
        expect="Epoch 1 | Training snapshot saved at",
    ),
    Recipe(
        "pytorch+examples",
        "distributed/rpc/batch/reinforce.py",
        argv=("--num-episode=2", "--max-world-size=3"),
        expect="2, ",
        needs=("gymnasium",),
    ),
    Recipe(
        "lucidrains+x-transformers",
        "train_parity.py",
        env={"BENCH_STEPS": "3"},
        stubs={"tqdm.py": _TQDM_STEPS},
        expect="bench: stopped after 3 steps",
        needs=("einops", "einx", "loguru", "torch_einops_utils", "lion_pytorch"),
    ),
)


# --- running ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    ok: bool
    seconds: float
    code: int
    detail: str  # the last line of stderr when it failed; the device counters on testaccel
    device: Tuple[Dict[str, int], ...] = ()


@dataclass(frozen=True)
class Outcome:
    name: str
    status: str  # passed | failed | skipped
    reason: str
    as_written: Optional[Run] = None
    fixed_cpu: Optional[Run] = None
    fixed_testaccel: Optional[Run] = None
    hunks: int = 0
    diff: str = ""


def _last_error(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    ranks = [line for line in lines if line.startswith("[rank") and ("Error" in line or "Exception" in line)]
    if ranks:  # under torchrun, the launcher's ChildFailedError comes last; the cause is a rank's
        return ranks[-1][:200]
    lines = [line for line in lines if "ChildFailedError" not in line]  # torchrun's summary, not the cause
    errors = [line for line in lines if "Error" in line or "error:" in line or line.startswith("Exception")]
    return (errors or lines or ["(no output)"])[-1][:200]


def _env(extra: Mapping[str, str]) -> Dict[str, str]:
    env = dict(
        os.environ,
        CUDA_VISIBLE_DEVICES="",
        OMP_NUM_THREADS="1",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONWARNINGS="ignore",
        HF_HUB_OFFLINE="1",
        WANDB_MODE="disabled",
    )
    env.pop("PYTHONPATH", None)
    env.update(extra)
    return env


def _python(folder: Path, recipe: Recipe, extra: Mapping[str, str]) -> subprocess.CompletedProcess:
    script = folder / recipe.script
    command = [sys.executable, script.name, *recipe.argv]
    if recipe.ranks:
        command[1:1] = ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={recipe.ranks}"]
    env = _env({**recipe.env, **extra})
    if recipe.stubs:
        # A stub must shadow the installed module from the start: on testaccel, sitecustomize imports
        # torch (and torch.hub imports tqdm) before the script's folder joins sys.path.
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(script.parent)) if p)
    try:
        return subprocess.run(
            command,
            cwd=script.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=recipe.time_limit,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return subprocess.CompletedProcess(command, -9, out, f"TimeoutError: over {recipe.time_limit} s")


def _run(folder: Path, recipe: Recipe, library: Optional[Path] = None) -> Run:
    extra: Dict[str, str] = {}
    report = folder / ".testaccel-report"
    if library is not None:
        import accel

        shutil.rmtree(report, ignore_errors=True)
        extra = accel.bootstrap_env(library, report)
    started = time.perf_counter()
    result = _python(folder, recipe, extra)
    seconds = time.perf_counter() - started
    ok = result.returncode == 0 and (not recipe.expect or recipe.expect in result.stdout)
    detail = "" if ok else (_last_error(result.stderr) if result.returncode else f"no {recipe.expect!r} in its output")
    device: Tuple[Dict[str, int], ...] = ()
    if library is not None:
        import accel

        device = (
            tuple(c for c in accel.read_reports(report).values() if c.get("allocations")) if report.is_dir() else ()
        )
        if ok and not any(c.get("fallback_ops") for c in device):
            ok, detail = False, "ran, but put nothing on the device"
    return Run(ok, round(seconds, 1), result.returncode, detail, device)


def _diff(original: Path, fixed: Path) -> Tuple[str, int]:
    chunks: List[str] = []
    for path in sorted(fixed.rglob("*.py")):
        rel = path.relative_to(fixed)
        before_path = original / rel
        if not before_path.is_file():
            continue
        before, after = before_path.read_text(errors="replace"), path.read_text(errors="replace")
        if before != after:
            chunks.extend(
                difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{rel}", f"b/{rel}", n=2)
            )
    text = "".join(chunks)
    return text, sum(1 for line in text.splitlines() if line.startswith("@@"))


def _missing(recipe: Recipe) -> List[str]:
    return [name for name in recipe.needs if importlib.util.find_spec(name) is None]


def run_recipe(recipe: Recipe, source: Path, library: Path, work: Path) -> Outcome:
    missing = _missing(recipe)
    if missing:
        return Outcome(recipe.name, "skipped", f"needs {', '.join(missing)} (pip install it)")
    folders = {}
    for kind in ("as-written", "fixed"):
        folder = work / kind
        shutil.copytree(source, folder, ignore=shutil.ignore_patterns(".git", "__pycache__"), symlinks=True)
        for rel, text in recipe.stubs.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text, encoding="utf-8")
        if recipe.setup:
            setup = subprocess.run(
                [sys.executable, "-c", textwrap.dedent(recipe.setup)],
                cwd=(folder / recipe.script).parent,
                env=_env({}),
                capture_output=True,
                text=True,
                timeout=recipe.time_limit,
            )
            if setup.returncode:
                return Outcome(recipe.name, "failed", f"setup failed: {_last_error(setup.stderr)}")
        folders[kind] = folder
    as_written = _run(folders["as-written"], recipe)
    fix = subprocess.run(
        [sys.executable, "-m", "portcheck", "fix", "--target", "generic", "--unsafe-fixes", "."],
        cwd=folders["fixed"],
        env=_env({"PYTHONPATH": str(REPO)}),  # this checkout's fixer, not whichever portcheck is installed
        capture_output=True,
        text=True,
        timeout=600,
    )
    diff, hunks = _diff(source, folders["fixed"])
    if fix.returncode not in (0, 1):
        return Outcome(
            recipe.name, "failed", f"portcheck fix exited {fix.returncode}: {_last_error(fix.stderr)}", as_written
        )
    fixed_cpu = _run(folders["fixed"], recipe)
    fixed_accel = _run(folders["fixed"], recipe, library)
    reasons = []
    if as_written.ok:
        reasons.append("runs on the CPU as written")
    if not fixed_cpu.ok:
        reasons.append(f"cpu: {fixed_cpu.detail}")
    if not fixed_accel.ok:
        reasons.append(f"testaccel: {fixed_accel.detail}")
    status = "failed" if reasons else "passed"
    return Outcome(recipe.name, status, "; ".join(reasons), as_written, fixed_cpu, fixed_accel, hunks, diff)


def _line(outcome: Outcome) -> str:
    if outcome.status == "skipped":
        return f"skipped  {outcome.name}: {outcome.reason}"
    parts = [f"{outcome.status:<7}  {outcome.name}"]
    if outcome.as_written is not None:
        parts.append(
            f"as written: {'ran' if outcome.as_written.ok else 'fails'} ({outcome.as_written.detail or 'exit 0'})"
        )
    for label, run in (("fixed cpu", outcome.fixed_cpu), ("fixed testaccel", outcome.fixed_testaccel)):
        if run is not None:
            extra = ""
            if run.device:
                extra = (
                    f", {len(run.device)} process(es), {sum(c['allocations'] for c in run.device)} device allocations"
                )
            parts.append(
                f"{label}: {'ok' if run.ok else 'FAIL'} {run.seconds}s{extra}" + ("" if run.ok else f" ({run.detail})")
            )
    if outcome.hunks:
        parts.append(f"{outcome.hunks} hunks")
    if outcome.reason and outcome.status == "failed" and outcome.as_written is None:
        parts.append(outcome.reason)
    return "\n    ".join(parts)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="fetched repositories, named owner+name")
    parser.add_argument("--only", action="append", default=[], help="run only recipes whose name contains this")
    parser.add_argument("--json", type=Path, help="also write every outcome to this JSON file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copies (their path is printed)")
    args = parser.parse_args(argv)

    import accel

    started = time.perf_counter()
    library = accel.build()
    print(f"testaccel: built or reused in {time.perf_counter() - started:.1f}s ({library})", flush=True)
    by_repo = {folder.resolve().name: folder.resolve() for folder in args.folders}
    for folder in args.folders:
        if not folder.is_dir():
            parser.error(f"{folder}: not a folder")
    recipes = [r for r in RECIPES if r.repo in by_repo and (not args.only or any(o in r.name for o in args.only))]
    if not recipes:
        parser.error("no recipe for these folders; known repositories: " + ", ".join(sorted({r.repo for r in RECIPES})))
    work = Path(tempfile.mkdtemp(prefix="portcheck-realworld-"))
    RESULTS.mkdir(parents=True, exist_ok=True)
    outcomes: List[Outcome] = []
    for index, recipe in enumerate(recipes):
        outcome = run_recipe(recipe, by_repo[recipe.repo], library, work / f"{index:02d}")
        outcomes.append(outcome)
        if outcome.diff:
            safe = outcome.name.replace("/", "_").replace(" ", "_").replace("[", "").replace("]", "")
            (RESULTS / f"{safe}.diff").write_text(outcome.diff, encoding="utf-8")
        print(_line(outcome), flush=True)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"copies kept in {work}")
    passed = sum(o.status == "passed" for o in outcomes)
    failed = sum(o.status == "failed" for o in outcomes)
    skipped = sum(o.status == "skipped" for o in outcomes)
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    if args.json:
        args.json.write_text(json.dumps([{**asdict(o), "diff": None} for o in outcomes], indent=2), encoding="utf-8")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
