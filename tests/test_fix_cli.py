"""`portcheck fix` on the command line: writing, --diff, --check, exit codes, the summary, options."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import portcheck
from portcheck.catalog import load_catalog
from portcheck.cli import main
from portcheck.fixer.summary import EXPLAIN_HINT

MOVES = "import torch\nmodel = Net().cuda()\nx = batch.cuda(non_blocking=True)\n"
FIXED_MOVES = (
    "import torch\n\n"
    "DEVICE = torch.device(torch.accelerator.current_accelerator().type "
    'if torch.accelerator.is_available() else "cpu")\n'
    "model = Net().to(DEVICE)\nx = batch.to(DEVICE, non_blocking=True)\n"
)
CHECKS = "def f(x):\n    if x.is_cuda:\n        return 1\n    return 0\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args):
    return CliRunner().invoke(main, ["fix", *args])


def name_of(code: str) -> str:
    return load_catalog().get(code).name


def test_fix_writes_the_file_and_exits_0_when_nothing_is_left(project):
    (project / "train.py").write_text(MOVES)
    result = invoke("train.py")
    assert result.exit_code == 0, result.output
    assert (project / "train.py").read_text() == FIXED_MOVES
    assert result.stdout == ""
    assert re.search(rf"^  DEV002 +{name_of('DEV002')} +2$", result.stderr, re.MULTILINE), result.stderr
    assert result.stderr.startswith("Fixed 2 findings in 1 file (target generic):")


def test_diff_prints_a_unified_diff_writes_nothing_and_exits_1(project):
    (project / "train.py").write_text(MOVES)
    result = invoke("--diff", "train.py")
    assert result.exit_code == 1
    assert (project / "train.py").read_text() == MOVES
    assert result.stdout.startswith("--- a/train.py\n+++ b/train.py\n")
    assert "-model = Net().cuda()\n" in result.stdout and "+model = Net().to(DEVICE)\n" in result.stdout
    assert result.stderr.startswith("Would fix 2 findings in 1 file")


def test_check_exits_1_when_something_would_change_and_0_when_clean(project):
    (project / "train.py").write_text(MOVES)
    first = invoke("--check", ".")
    assert first.exit_code == 1 and first.stdout == ""
    assert (project / "train.py").read_text() == MOVES
    assert invoke(".").exit_code == 0
    again = invoke("--check", ".")
    assert again.exit_code == 0, again.output
    assert again.stderr.startswith("Nothing to fix")


def test_findings_left_for_a_person_exit_1_and_are_named_with_the_reason(project):
    (project / "check.py").write_text(CHECKS)
    result = invoke(".")
    assert result.exit_code == 1
    assert (project / "check.py").read_text() == CHECKS
    line = re.search(rf"^  DEV004 +{name_of('DEV004')} +1  (.*)$", result.stderr, re.MULTILINE)
    assert line, result.stderr
    assert "--unsafe-fixes" in line.group(1)
    assert result.stderr.rstrip("\n").endswith(EXPLAIN_HINT)


def test_unsafe_fixes_applies_the_unsafe_fix(project):
    (project / "check.py").write_text(CHECKS)
    result = invoke("--unsafe-fixes", ".")
    assert result.exit_code == 0, result.output
    assert 'if x.device.type == DEVICE.type != "cpu":' in (project / "check.py").read_text()


def test_select_and_ignore_limit_the_rules(project):
    (project / "a.py").write_text("import torch\nx = y.cuda()\nz = torch.zeros(1).to('cuda')\n")
    result = invoke("--ignore", "DEV002", "--diff", ".")
    assert "-x = y.cuda()" not in result.stdout and "+z = torch.zeros(1).to(DEVICE)" in result.stdout
    result = invoke("--select", "DEV002", "--diff", ".")
    assert "+x = y.to(DEVICE)" in result.stdout and "+z = torch.zeros(1).to(DEVICE)" not in result.stdout


def test_exclude_skips_files(project):
    (project / "keep.py").write_text(MOVES)
    (project / "skip.py").write_text(MOVES)
    assert invoke("--exclude", "skip.py", ".").exit_code == 0
    assert (project / "keep.py").read_text() == FIXED_MOVES
    assert (project / "skip.py").read_text() == MOVES


def test_config_file_sets_literal_device(project):
    (project / "a.py").write_text("x = y.cuda()\n")
    (project / "portcheck.toml").write_text("literal-device = true\n")
    assert invoke("--target", "neuron", ".").exit_code == 0
    assert (project / "a.py").read_text() == 'x = y.to("neuron")\n'


def test_refused_files_are_listed_and_exit_1(project):
    (project / "broken.py").write_text("x = y.cuda(\n")
    result = invoke(".")
    assert result.exit_code == 1
    assert "Not changed: 1 file:\n  broken.py: syntax error" in result.stderr


def test_a_file_the_rewriter_fails_on_is_named_on_one_line_and_exits_1_not_2(project):
    odd = b'model.to("cuda")\nwith x:\n\x0c    pass\n'  # libcst cannot write new code for this indent
    (project / "odd.py").write_bytes(odd)
    (project / "train.py").write_text(MOVES)
    result = invoke(".")
    assert result.exit_code == 1, result.output
    assert (project / "odd.py").read_bytes() == odd
    assert (project / "train.py").read_text() == FIXED_MOVES
    assert re.search(
        r"^Not changed: 1 file:\n  odd\.py: could not be fixed: ValueError: [^\n]*default_indent[^\n]*\n",
        result.stderr,
        re.MULTILINE,
    ), result.stderr


@pytest.mark.parametrize("args", [["--target", "tpu"], ["--no-such-flag"]])
def test_usage_errors_exit_2(project, args):
    assert invoke(*args).exit_code == 2


def test_bad_config_exits_2(project):
    (project / "portcheck.toml").write_text('min-torch = "soon"\n')
    (project / "a.py").write_text(MOVES)
    result = invoke(".")
    assert result.exit_code == 2
    assert "min-torch" in result.stderr
    assert (project / "a.py").read_text() == MOVES


def test_python_api_fix(project):
    (project / "a.py").write_text(MOVES + CHECKS)
    report = portcheck.fix(["a.py"], target="generic", unsafe=False, write=False)
    assert [f.path for f in report.changed] == ["a.py"]
    assert "+model = Net().to(DEVICE)\n" in report.changed[0].diff()
    assert report.applied_by_rule() == {"DEV002": 2}
    assert list(report.left_by_rule()) == ["DEV004"]
    assert (project / "a.py").read_text() == MOVES + CHECKS


def test_rules_lists_each_rules_fix_class(project):
    out = CliRunner().invoke(main, ["rules", "--target", "generic"]).stdout
    assert re.search(r"^DEV002 .* safe$", out, re.MULTILINE)
    assert re.search(r"^DEV004 .* unsafe$", out, re.MULTILINE)


EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "train.py"


@pytest.mark.skipif(not EXAMPLE.is_file(), reason="the example project is not in this checkout")
def test_the_example_projects_training_script(project):
    shutil.copy(EXAMPLE, project / "train.py")
    result = invoke("--diff", "--unsafe-fixes", "train.py")
    for line in (
        "+DEVICE = torch.device(torch.accelerator.current_accelerator().type "
        'if torch.accelerator.is_available() else "cpu")\n',
        '+    parser.add_argument("--device", default=DEVICE.type, help="device to train on")\n',
        "+    if torch.accelerator.is_available():\n+        torch.accelerator.set_device_index(local_rank)\n",
        "+    dist.init_process_group(backend=torch.distributed.get_default_backend_for_device(DEVICE))\n",
        '+        model = DDP(model, device_ids=None if DEVICE.type == "cpu" else [local_rank])\n',
        "+    scaler = torch.amp.GradScaler(DEVICE.type, enabled=args.amp)\n",
        "+        state = torch.load(args.resume, map_location=DEVICE)\n",
        "+            with torch.autocast(device_type=DEVICE.type, dtype=torch.float16, enabled=args.amp):\n",
    ):
        assert line in result.stdout, result.stdout
    assert re.search(r"^  BK001 +cudnn-benchmark +1  no autofix for target generic$", result.stderr, re.MULTILINE)
