"""The scoring model: hand-computed anchor values, the blocker cap, the environment penalty, and its properties."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from typing import List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_report_samples import CATALOG, sample_scan

from portcheck.model import FileError, FileResult, Finding, FixSafety, ScanResult, Severity, Target
from portcheck.parts import part_of
from portcheck.score import ScoreCard, grade_for, score_scan

G = Target.GENERIC


def hit(path: str, code: str = "X1", severity: str = "major", line: int = 1, safety: FixSafety = FixSafety.NONE,
        category: str = "device") -> Finding:
    return Finding(
        path=path, line=line, column=1, end_line=line, end_column=2, code=code, name=code.lower(), category=category,
        severity=Severity(severity), message="m", fixable=safety is FixSafety.SAFE, fix_safety=safety,
        fixes=(("generic", safety.value),) if safety is not FixSafety.NONE else (),
    )


def scan_of(*files: FileResult, target: Target = G) -> ScanResult:
    return ScanResult(target=target, files=tuple(files))


def card(*files: FileResult, catalog=None, target: Target = G) -> ScoreCard:
    return score_scan(scan_of(*files, target=target), catalog, target)


# -- anchor values, each worked out by hand from S = 100 / (1 + (W / 600) ** 0.8) ---------------------------

def test_one_major_left_alone_scores_95_8():
    # W = 12 -> (0.02 ** 0.8 = 0.0437) -> 100 / 1.0437 = 95.81
    c = card(FileResult("a.py", (hit("a.py", severity="major"),), lines=100))
    assert c.score == 95.8 and c.score_after_fix == 95.8 and c.grade == "A"
    assert c.effort.work == 12.0


def test_one_blocker_rule_caps_at_50():
    # W = 60 -> 86.32, but one distinct blocker rule without a fallback caps the scope at 50
    c = card(FileResult("k.py", (hit("k.py", severity="blocker"),), lines=100))
    assert c.score == 50.0 and c.grade == "C" and c.effort.blocker_cap == 50.0


def test_repeats_count_as_the_square_root():
    # four minors of one rule: W = 3 * 4 ** 0.5 = 6 -> 97.55; four different rules: W = 12 -> 95.81
    same = card(FileResult("a.py", tuple(hit("a.py", "X1", "minor", line=i) for i in range(4)), lines=10))
    different = card(FileResult("a.py", tuple(hit("a.py", f"X{i}", "minor", line=i) for i in range(4)), lines=10))
    assert same.score == 97.5 and same.effort.work == 6.0
    assert different.score == 95.8


def test_repeats_group_across_files():
    # the same rule in four files is one group of four: W = 3 * 2 = 6, as in one file
    c = card(*[FileResult(f"m{i}.py", (hit(f"m{i}.py", "X1", "minor"),), lines=10) for i in range(4)])
    assert c.effort.work == 6.0


def test_safe_fixes_vanish_after_fix_and_unsafe_ones_stay_until_unsafe_fixes_are_asked_for():
    # ten safe minors: W = 3 * sqrt(10) = 9.49 -> 96.50 now, nothing left after the fix
    safe = card(FileResult("a.py", tuple(hit("a.py", "X1", "minor", i, FixSafety.SAFE) for i in range(10)), lines=10))
    assert (safe.score, safe.score_after_fix) == (96.5, 100.0)
    # one unsafe major: `portcheck fix` leaves it without --unsafe-fixes, so W = 12 before and after -> 95.81
    unsafe = card(FileResult("a.py", (hit("a.py", "X1", "major", safety=FixSafety.UNSAFE),), lines=10))
    assert (unsafe.score, unsafe.score_after_fix) == (95.8, 95.8)
    assert unsafe.effort.by_fix["unsafe"] == 1


def test_info_findings_are_not_scored():
    c = card(FileResult("a.py", (hit("a.py", severity="info"),), lines=10))
    assert c.score == 100.0 and c.score_after_fix == 100.0 and c.effort.by_severity["info"] == 1


def test_work_is_not_diluted_by_clean_code():
    # a million clean lines do not hide a finding: the work is the same, so is the score (W = 3 -> 98.58)
    alone = card(FileResult("a.py", (hit("a.py", severity="minor"),), lines=1))
    diluted = card(
        FileResult("a.py", (hit("a.py", severity="minor"),), lines=1), FileResult("b.py", (), lines=1_000_000)
    )
    assert alone.score == diluted.score == 98.6


def test_files_that_could_not_be_scanned_add_nothing():
    broken = FileResult("b.py", error=FileError("b.py", "syntax error"), lines=5000)
    c = card(FileResult("a.py", (hit("a.py"),), lines=100), broken)
    assert c.score == 95.8


def kernel_file(path: str, lines: int, severity: str = "major", guarded: bool = False) -> FileResult:
    return FileResult(
        path, (replace(hit(path, "KRN002", severity, category="kernel"), guarded=guarded),), lines=lines, kind="cuda"
    )


def test_kernel_sources_weigh_by_their_size():
    # a kernel file weighs sqrt(lines / 100) times its severity: 400 lines -> 12 * 2 = 24 -> 92.92;
    # 1,600 lines -> 12 * 4 = 48 -> 88.29; a 4-line file weighs at least half: 12 * 0.5 = 6
    assert card(kernel_file("k.cu", 400)).effort.work == 24.0
    assert card(kernel_file("k.cu", 400)).score == 92.9
    assert card(kernel_file("k.cu", 1600)).score == 88.3
    assert card(kernel_file("k.cu", 4)).effort.work == 6.0
    c = card(kernel_file("k.cu", 1600))
    assert c.effort.kernel_lines == 1600 and c.effort.kernel_files == 1 and c.effort.kernels == 1


def test_a_kernel_file_keeps_its_size_after_fix_whatever_the_order_of_its_findings():
    # Two whole-file findings of one kernel source, one with a safe fix and one without: the size
    # goes with the one a fix leaves, so the score after fix does not depend on which came first.
    fixed = hit("k.cu", "KRN002", "blocker", line=1, safety=FixSafety.SAFE, category="kernel")
    manual = hit("k.cu", "KRN002", "blocker", line=2, category="kernel")
    orders = ((fixed, manual), (manual, fixed))
    cards = [card(FileResult("k.cu", findings, lines=1600, kind="cuda")) for findings in orders]
    assert cards[0] == cards[1]
    assert cards[0].files[0].score_after_fix < 100.0


def test_triton_kernels_count_as_sixty_lines_each():
    # @triton.jit weighs sqrt(60 / 100) = 0.775 of its severity (major on generic): 12 * 0.775 = 9.30
    f = replace(hit("k.py", "KRN003", "major", category="kernel"), source_line="@triton.jit")
    c = card(FileResult("k.py", (f,), lines=100))
    assert c.effort.work == 9.3 and c.effort.triton_kernels == 1


def test_tens_of_kernels_without_fallback_grade_d_for_every_target():
    # 20 small kernel files (W = 20 * 6 = 120 -> 78.37 alone) hit the many-kernels cap of 35
    many = card(*[kernel_file(f"csrc/k{i}.cu", 4) for i in range(20)])
    assert many.score == 35.0 and many.grade == "D" and many.effort.kernels == 20
    assert any("20 custom kernels" in line for line in many.why)
    fewer = card(*[kernel_file(f"csrc/k{i}.cu", 4) for i in range(19)])
    assert fewer.score > 40.0
    # behind a working fallback they are not counted as kernels without one (and weigh one level less)
    guarded = card(*[kernel_file(f"csrc/k{i}.cu", 4, "minor", guarded=True) for i in range(20)])
    assert guarded.effort.kernels == 0 and guarded.score > 40.0


def test_a_blocker_with_a_fallback_does_not_cap():
    # KRN003 is a blocker on neuron with has-fallback: W = 60 -> 86.32, no cap
    scan = scan_of(
        FileResult("t.py", (hit("t.py", "KRN003", "blocker"),), lines=10),
        FileResult("c.py", (), lines=990),
        target=Target.NEURON,
    )
    c = score_scan(scan, CATALOG, Target.NEURON)
    assert c.score == 86.3
    assert c.effort.blockers[0].code == "KRN003" and not c.effort.blockers[0].caps


@pytest.mark.parametrize("rules,cap", [(1, 50.0), (2, 35.0), (3, 25.0), (5, 25.0)])
def test_distinct_blocker_rules_lower_the_cap(rules, cap):
    files = [FileResult(f"b{i}.py", (hit(f"b{i}.py", f"B{i}", "blocker"),), lines=1) for i in range(rules)]
    assert card(*files).score == cap


def test_repeating_one_blocker_rule_does_not_lower_the_cap_further():
    # four findings of one blocker rule: W = 60 * 2 = 120 -> 78.37, capped at 50 by one rule
    files = [FileResult(f"b{i}.py", (hit(f"b{i}.py", "B", "blocker"),), lines=1) for i in range(4)]
    assert card(*files).score == 50.0


def test_safe_fixed_blockers_lift_the_cap_after_fix():
    files = [
        FileResult("b.py", (hit("b.py", "B", "blocker", safety=FixSafety.SAFE),), lines=1),
        FileResult("c.py", (), lines=999),
    ]
    c = card(*files)
    assert c.score == 50.0 and c.score_after_fix == 100.0


def test_environment_files_weigh_at_most_a_minor_and_are_bounded():
    # requirements: one minor, W = 3 -> 98.58
    req = FileResult("requirements.txt", (hit("requirements.txt", "P1", "minor"),), lines=10, kind="requirements")
    assert card(req, FileResult("a.py", (), lines=100)).score == 98.6
    # a Dockerfile blocker weighs as a minor (W = 3) and caps nothing
    docker = FileResult("Dockerfile", (hit("Dockerfile", "E1", "blocker"),), lines=10, kind="dockerfile")
    c = card(docker, FileResult("a.py", (), lines=100))
    assert c.score == 98.6 and c.effort.environment_penalty == 3.0 and c.effort.blocker_cap == 100.0
    # forty different environment rules: 40 * 3 = 120, bounded at 15 -> 95.03
    many = FileResult(
        "Dockerfile", tuple(hit("Dockerfile", f"E{i}", "major", line=i) for i in range(40)), lines=50, kind="dockerfile"
    )
    assert card(many).score == 95.0 and card(many).effort.environment_penalty == 15.0


def test_a_dotenv_file_is_an_environment_file():
    # `CUDA_VISIBLE_DEVICES=0` in `.env`: a major weighs as a minor (W = 3), bounded with the other environment files
    env = FileResult(".env", (hit(".env", "E1", "major"),), lines=5, kind="dotenv")
    c = card(env, FileResult("a.py", (), lines=100))
    assert c.score == 98.6 and c.effort.environment_penalty == 3.0


def test_repo_level_rules_in_setup_py_count_as_environment():
    c = score_scan(
        scan_of(
            FileResult("setup.py", (hit("setup.py", "PKG008", "minor"),), lines=100),
            FileResult("big.py", (), lines=10_000),
        ),
        CATALOG,
        G,
    )
    assert c.score == 98.6 and c.effort.environment_penalty == 3.0


def test_repo_level_rules_in_other_code_are_code():
    c = score_scan(
        scan_of(
            FileResult("pkg/build.py", (hit("pkg/build.py", "PKG008", "minor"),), lines=100),
            FileResult("big.py", (), lines=10_000),
        ),
        CATALOG,
        G,
    )
    assert c.score == 98.6 and c.effort.environment_penalty == 0.0


def test_compiler_model_cautions_weigh_a_quarter():
    # XLA001 (float64) is major on neuron but a caution, not lock-in: 12 * 0.25 = 3
    f = hit("m.py", "XLA001", "major", category="xla")
    c = score_scan(scan_of(FileResult("m.py", (f,), lines=10), target=Target.NEURON), CATALOG, Target.NEURON)
    assert c.effort.work == 3.0


def test_importing_the_project_itself_is_not_a_dependency():
    own = replace(hit("deepspeed/ops/a.py", "PKG005", "major", category="package"), source_line="import deepspeed.comm")
    other = replace(hit("tools/b.py", "PKG005", "major", category="package"), source_line="from deepspeed import init")
    inside = card(FileResult("deepspeed/ops/a.py", (own,), lines=10), FileResult("deepspeed/__init__.py", (), lines=5))
    outside = card(FileResult("tools/b.py", (other,), lines=10))
    assert inside.score == 100.0
    assert outside.score == 95.8


def test_tests_examples_benchmarks_and_docs_are_scored_beside_product_code():
    # tests: 30 different majors, W = 360 -> 60.13; examples: one blocker rule, capped at 50
    files = [
        FileResult("pkg/a.py", (hit("pkg/a.py"),), lines=100),
        FileResult(
            "tests/test_a.py", tuple(hit("tests/test_a.py", f"T{i}", "major", line=i) for i in range(30)), lines=300
        ),
        FileResult("examples/run.py", (hit("examples/run.py", "E", "blocker"),), lines=30),
        FileResult("benchmarks/b.py", (), lines=30),
    ]
    c = card(*files)
    assert c.headline == "product" and c.score == 95.8
    parts = {p.part: p for p in c.parts}
    assert list(parts) == ["product", "tests", "benchmarks", "examples"]
    assert parts["tests"].score == 60.1 and parts["examples"].score == 50.0 and parts["benchmarks"].score == 100.0
    assert c.whole_score < c.score
    assert any(line.startswith("scored beside product code: tests") for line in c.why)


def test_without_product_code_the_headline_is_the_whole_scan():
    c = card(FileResult("tests/test_a.py", (hit("tests/test_a.py"),), lines=10))
    assert c.headline == "all" and c.score == 95.8


def test_part_patterns_come_from_the_configuration():
    files = [FileResult("spec/a.py", (hit("spec/a.py"),), lines=10), FileResult("pkg/b.py", (), lines=10)]
    assert card(*files).score == 95.8
    configured = score_scan(scan_of(*files), None, G, parts={"tests": ["spec"]})
    assert configured.score == 100.0 and {p.part for p in configured.parts} == {"product", "tests"}


def test_directories_list_the_root_and_collapse_clean_ones():
    c = card(
        FileResult("pkg/sub/a.py", (hit("pkg/sub/a.py"),), lines=100),
        FileResult("pkg/b.py", (), lines=100),
        FileResult("clean/c.py", (), lines=100),
        FileResult("clean/deep/d.py", (), lines=100),
        FileResult("top.py", (), lines=1),
    )
    by_dir = {d.path: d for d in c.directories}
    assert set(by_dir) == {".", "pkg", "pkg/sub"}
    assert by_dir["."].files == 5 and by_dir["."].score == c.whole_score
    assert by_dir["pkg"].score == 95.8 and by_dir["pkg"].files == 2 and by_dir["pkg"].lines == 200
    assert c.clean_directories == 2


def test_a_folder_that_holds_every_scanned_file_is_not_listed_beside_the_root():
    # a scan of `src/` alone, or of one file given as ../../x/a.py: every ancestor holds the whole scan
    for paths in (("src/pkg/a.py", "src/pkg/b.py"), ("../../tmp/x/a.py",)):
        c = card(*(FileResult(p, (hit(p),), lines=100) for p in paths))
        assert [d.path for d in c.directories] == ["."], paths
        assert c.clean_directories == 0


def test_why_names_the_binding_cap_and_the_top_contributors():
    files = [FileResult("a.py", (hit("a.py", "B1", "blocker"), hit("a.py", "M1", "major")), lines=10)]
    why = card(*files).why
    assert why[0].startswith("1 blocker rule with no fallback (B1) caps the score at 50")
    assert any(line.startswith("B1 b1: 1 finding in 1 file, 83% of the work") for line in why)


def test_code_of_a_project_that_already_runs_on_other_accelerators_weighs_one_level_less():
    # product code naming two non-CUDA accelerators: the major DEV005 weighs as a minor (W = 3 -> 98.6); the
    # kernel (KRN002, 100 lines: 1 x 12) is rewritten whatever dispatches to it, and keeps its weight
    code = FileResult("pkg/state.py", (hit("pkg/state.py", "DEV005", "major"),), lines=100)
    kernel = FileResult("csrc/k.cu", (hit("csrc/k.cu", "KRN002", "major", category="kernel"),), lines=100, kind="cuda")
    plain = card(code, kernel)
    assert plain.effort.work == 24.0 and not plain.effort.device_generic
    generic = card(replace(code, backends=("npu", "xpu")), kernel)
    assert generic.effort.work == 15.0 and generic.effort.device_generic
    assert generic.effort.backends == ("npu", "xpu")
    assert any("already runs on more than CUDA" in line and "npu, xpu" in line for line in generic.why)
    assert plain.score == 92.9 and generic.score == 95.0


def test_a_device_abstraction_counts_and_one_other_accelerator_does_not():
    code = FileResult("pkg/a.py", (hit("pkg/a.py", "DEV005", "major"),), lines=100)
    assert card(replace(code, backends=("mps",))).effort.work == 12.0  # a cuda/mps/cpu choice is not a dispatch
    abstraction = card(replace(code, backends=("accelerator",)))  # torch.get_device_module, get_accelerator()
    assert abstraction.effort.work == 3.0 and abstraction.score == 98.6  # W = 3 -> 98.58
    # the evidence may sit in any product file; a blocker lowered to a major no longer caps
    other = FileResult("pkg/b.py", (), lines=10, backends=("hpu", "xpu"))
    blocker = FileResult("pkg/a.py", (hit("pkg/a.py", "B1", "blocker"),), lines=100)
    assert card(blocker).score == 50.0 and card(blocker, other).score == 95.8


def test_tests_naming_other_accelerators_say_nothing_about_the_product():
    code = FileResult("pkg/a.py", (hit("pkg/a.py", "DEV005", "major"),), lines=100)
    tests = FileResult("tests/test_a.py", (), lines=10, backends=("npu", "xpu"))
    assert card(code, tests).effort.work == 12.0
    assert card(code, replace(tests, path="pkg/dispatch.py")).effort.work == 3.0


def test_a_guarded_finding_is_not_lowered_twice_in_a_device_generic_project():
    guarded = replace(hit("pkg/a.py", "DEV005", "minor"), guarded=True)
    c = card(FileResult("pkg/a.py", (guarded,), lines=100, backends=("npu", "xpu")))
    assert c.effort.work == 3.0


def test_severity_comes_from_the_catalog_when_the_scan_ran_for_another_target():
    # a generic scan scored for neuron: KRN002 is major on generic but a blocker on neuron (10 lines: 0.5 x weight)
    scan = scan_of(FileResult("k.cu", (hit("k.cu", "KRN002", "major", category="kernel"),), lines=10, kind="cuda"))
    assert score_scan(scan, CATALOG, G).effort.work == 6.0
    neuron = score_scan(scan, CATALOG, Target.NEURON)
    assert neuron.effort.work == 30.0 and neuron.score == 50.0


def test_a_guarded_finding_stays_lowered_for_other_targets():
    guarded = replace(hit("t.py", "KRN002", "major"), guarded=True, severity=Severity.MINOR)  # generic major, lowered
    c = score_scan(scan_of(FileResult("t.py", (guarded,), lines=10)), CATALOG, Target.NEURON)
    assert c.score == 95.8 and c.effort.by_severity["major"] == 1  # neuron blocker, lowered to major


def test_a_rule_without_a_fix_for_the_target_needs_a_person():
    from test_report_samples import make_rule

    from portcheck.catalog import Catalog, CompiledRule

    rule = replace(make_rule("Y1", "y", "device", ("minor",) * 3, FixSafety.SAFE), autofix={"generic": {"kind": "x"}})
    catalog = Catalog(rules=(CompiledRule(rule, (), (), "y", False, True),), digest="y")
    f = replace(hit("a.py", "Y1", "minor", safety=FixSafety.SAFE))
    neuron = score_scan(scan_of(FileResult("a.py", (f,), lines=1), target=Target.NEURON), catalog, Target.NEURON)
    generic = score_scan(scan_of(FileResult("a.py", (f,), lines=1)), catalog, G)
    assert neuron.effort.by_fix == {"safe": 0, "unsafe": 0, "manual": 1} and neuron.score_after_fix == 98.6
    assert generic.effort.by_fix == {"safe": 1, "unsafe": 0, "manual": 0} and generic.score_after_fix == 100.0


@pytest.mark.parametrize(
    "score,grade",
    [(100.0, "A"), (90.0, "A"), (89.9, "B"), (70.0, "B"), (69.9, "C"), (40.0, "C"), (39.9, "D"), (0.0, "D")],
)
def test_grade_bands(score, grade):
    assert grade_for(score) == grade


def test_sample_project_scores():
    # Worked by hand (see test_report_samples). Product code (the notebook is an example):
    # KRN002 on an 800-line kernel: 12 * sqrt(8) = 33.94; DEV002 x3 unsafe minor: 3 * sqrt(3) = 5.20;
    # KRN003 guarded (major -> minor): 3; BK001 info: 0; DEV001 x2 safe minor: 3 * sqrt(2) = 4.24; DEV005 major 12;
    # DEV004 major 12; requirements PKG008 minor: 3. W = 73.38 -> 84.30.
    generic = score_scan(sample_scan(G), CATALOG, G)
    assert (generic.score, generic.grade) == (84.3, "B")
    assert generic.effort.work == 73.4
    # neuron: KRN002 is a blocker (60 * sqrt(8) = 169.7) and caps the score at 50
    neuron = score_scan(sample_scan(Target.NEURON), CATALOG, Target.NEURON)
    assert (neuron.score, neuron.score_after_fix, neuron.grade) == (50.0, 50.0, "C")
    assert generic.effort.by_severity == {"blocker": 0, "major": 3, "minor": 7, "info": 1}
    assert generic.effort.kernel_lines == 800
    assert [b.code for b in neuron.effort.blockers] == ["KRN002"]
    assert generic.effort.rules[0].code == "KRN002"
    assert {p.part for p in generic.parts} == {"product", "examples"}
    assert {f.path for f in generic.files} == {
        "csrc/kernels/attention.cu",
        "models/net.py",
        "notebooks/demo.ipynb",
        "requirements.txt",
        "train.py",
    }


def test_rule_points_are_the_score_gained_without_the_rule():
    scan = sample_scan(G)
    c = score_scan(scan, CATALOG, G)
    for impact in c.effort.rules[:3]:
        files = tuple(replace(fr, findings=tuple(f for f in fr.findings if f.code != impact.code)) for fr in scan.files)
        without = score_scan(replace(scan, files=files), CATALOG, G)
        assert impact.points == round(without.score - c.score, 1)
        assert abs(impact.work - (c.effort.work - without.effort.work)) <= 0.11
    assert c.effort.rules[0].code == "KRN002" and c.effort.rules[0].points > 5


def test_json_top_has_the_documented_keys():
    top = score_scan(sample_scan(G), CATALOG, G).to_json_top()
    assert {
        "score",
        "score_after_fix",
        "grade",
        "headline",
        "whole_score",
        "parts",
        "why",
        "effort",
        "files",
        "directories",
        "clean_directories",
    } <= set(top)
    assert set(top["effort"]) >= {"by_severity", "by_fix", "kernel_lines", "kernels", "blockers", "work"}


# -- properties ------------------------------------------------------------------------------------------------

PATHS = [
    "a.py",
    "pkg/b.py",
    "pkg/c.py",
    "pkg/sub/d.py",
    "csrc/k.cu",
    "requirements.txt",
    "other/e.py",
    "tests/test_f.py",
    "examples/g.py",
]
KINDS = {"csrc/k.cu": "cuda", "requirements.txt": "requirements"}
CODES = ["DEV001", "DEV002", "DEV004", "DEV005", "KRN002", "KRN003", "PKG008", "BK001", "ZZZ9"]
SEVERITIES = ["blocker", "major", "minor", "info"]
SAFETIES = list(FixSafety)
BACKEND_NAMES = ["accelerator", "mps", "npu", "xpu"]


@st.composite
def findings_for(draw, path: str) -> List[Finding]:
    out = []
    # a few codes drawn often, so rules repeat within a file as they do in real code
    codes = draw(st.lists(st.sampled_from(CODES), min_size=1, max_size=3, unique=True))
    for line in range(draw(st.integers(0, 8))):
        safety = draw(st.sampled_from(SAFETIES))
        f = hit(path, draw(st.sampled_from(codes)), draw(st.sampled_from(SEVERITIES)), line + 1, safety)
        out.append(replace(f, guarded=draw(st.booleans())))
    return out


@st.composite
def scans(draw) -> ScanResult:
    files = []
    for path in draw(st.lists(st.sampled_from(PATHS), min_size=1, max_size=len(PATHS), unique=True)):
        broken = draw(st.integers(0, 9)) == 0
        files.append(
            FileResult(
                path=path,
                findings=tuple(draw(findings_for(path))),
                error=FileError(path, "bad") if broken else None,
                lines=draw(st.integers(0, 2000)),
                kind=KINDS.get(path, "python"),
                backends=tuple(sorted(draw(st.sets(st.sampled_from(BACKEND_NAMES), max_size=2)))),
            )
        )
    return ScanResult(target=draw(st.sampled_from(list(Target))), files=tuple(files))


CATALOGS = st.sampled_from([None, CATALOG])
TARGETS_ST = st.sampled_from(list(Target))
PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def all_scores(c: ScoreCard):
    """Every score in a card, keyed so two cards of the same files compare place by place."""
    out = {("total", ""): (c.score, c.score_after_fix)}
    out.update({("part", p.part): (p.score, p.score_after_fix) for p in c.parts})
    out.update({("file", f.path): (f.score, f.score_after_fix) for f in c.files})
    out.update({("dir", d.path): (d.score, d.score_after_fix) for d in c.directories})
    return out


def at_most(more: ScoreCard, fewer: ScoreCard) -> None:
    """Every score of `more` (a superset of findings) is at most the matching score of `fewer`."""
    low, high = all_scores(more), all_scores(fewer)
    for key, (now, after) in low.items():
        base = high.get(key, (100.0, 100.0))  # a file without findings is not listed: it scores 100
        assert now <= base[0] and after <= base[1], key


def with_finding(scan: ScanResult, index: int, extra: Finding) -> ScanResult:
    files = list(scan.files)
    fr = files[index]
    files[index] = replace(fr, findings=fr.findings + (replace(extra, path=fr.path),))
    return replace(scan, files=tuple(files))


@PROPERTY
@given(scans(), st.data(), CATALOGS, TARGETS_ST)
def test_adding_a_finding_never_raises_a_score(scan, data, catalog, target):
    index = data.draw(st.integers(0, len(scan.files) - 1))
    extra = data.draw(findings_for(scan.files[index].path).filter(bool))[0]
    at_most(score_scan(with_finding(scan, index, extra), catalog, target), score_scan(scan, catalog, target))


@PROPERTY
@given(scans(), st.data(), CATALOGS, TARGETS_ST)
def test_removing_a_finding_never_lowers_a_score(scan, data, catalog, target):
    candidates = [(i, j) for i, fr in enumerate(scan.files) for j in range(len(fr.findings))]
    if not candidates:
        return
    i, j = data.draw(st.sampled_from(candidates))
    files = list(scan.files)
    files[i] = replace(files[i], findings=files[i].findings[:j] + files[i].findings[j + 1 :])
    at_most(score_scan(scan, catalog, target), score_scan(replace(scan, files=tuple(files)), catalog, target))


@PROPERTY
@given(scans(), CATALOGS, TARGETS_ST)
def test_score_after_fix_is_never_below_score(scan, catalog, target):
    for key, (now, after) in all_scores(score_scan(scan, catalog, target)).items():
        assert after >= now, key


@PROPERTY
@given(scans(), CATALOGS, TARGETS_ST)
def test_exactly_100_when_nothing_scored_remains(scan, catalog, target):
    c = score_scan(scan, catalog, target)
    headline = [fr for fr in scan.files if part_of(fr.path) == "product"] or list(scan.files)
    scored_now = any(
        i.severity in (Severity.BLOCKER, Severity.MAJOR, Severity.MINOR)
        for i in _items(replace(scan, files=tuple(headline)), catalog, target)
    )
    assert (c.score == 100.0) == (not scored_now)
    info_only = replace(
        scan,
        files=tuple(
            replace(fr, findings=tuple(replace(f, severity=Severity.INFO) for f in fr.findings)) for fr in scan.files
        ),
        target=target,
    )
    assert score_scan(info_only, None, target).score == 100.0


def _items(scan: ScanResult, catalog, target: Target):
    from portcheck.backends import device_generic
    from portcheck.score import SEVERAL_BACKENDS, _unit, project_backends

    rules = {code: e.rule for code, e in catalog.by_code().items()} if catalog is not None else {}
    generic = device_generic(project_backends(scan.files), SEVERAL_BACKENDS)
    return [i for fr in scan.files for i in _unit(fr, rules, scan.target, target, generic=generic).items]


@PROPERTY
@given(scans(), CATALOGS, TARGETS_ST)
def test_every_score_is_bounded(scan, catalog, target):
    c = score_scan(scan, catalog, target)
    for key, (now, after) in all_scores(c).items():
        assert 0.0 <= now <= 100.0 and 0.0 <= after <= 100.0, key
    assert 0.0 <= c.whole_score <= 100.0


@PROPERTY
@given(scans(), CATALOGS, TARGETS_ST)
def test_blocker_rules_without_a_fallback_cap_the_headline(scan, catalog, target):
    from portcheck.score import BLOCKER_CAPS

    c = score_scan(scan, catalog, target)
    capping = [b for b in c.effort.blockers if b.caps]
    assert c.score <= BLOCKER_CAPS[min(len(capping), len(BLOCKER_CAPS) - 1)]


@PROPERTY
@given(scans(), CATALOGS, TARGETS_ST, st.randoms(use_true_random=False))
def test_the_result_does_not_depend_on_file_order(scan, catalog, target, rnd: random.Random):
    files = [replace(fr, findings=tuple(rnd.sample(fr.findings, len(fr.findings)))) for fr in scan.files]
    rnd.shuffle(files)
    shuffled = replace(scan, files=tuple(files))
    assert score_scan(shuffled, catalog, target) == score_scan(scan, catalog, target)


def test_scores_are_pure():
    scan = sample_scan(G)
    assert score_scan(scan, CATALOG, G) == score_scan(scan, CATALOG, G)
    assert not math.isnan(score_scan(scan, CATALOG, G).score)


# -- product code and the rest: configuration and the CLI --------------------------------------------------------


def test_part_patterns_are_read_from_tool_portcheck(tmp_path):
    from portcheck.config import load_file

    (tmp_path / "pyproject.toml").write_text('[tool.portcheck.parts]\ntests = ["spec", "qa/*"]\n', encoding="utf-8")
    assert load_file(tmp_path / "pyproject.toml").parts == {"tests": ("spec", "qa/*")}


@pytest.mark.parametrize(
    "table,message",
    [
        ('parts = ["tests"]', "expected a table"),
        ('parts = { product = ["src"] }', "unknown part"),
        ("parts = { tests = 3 }", "expected a list of strings"),
    ],
)
def test_bad_part_patterns_are_config_errors(tmp_path, table, message):
    from portcheck.config import ConfigError, load_file

    (tmp_path / "portcheck.toml").write_text(table + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_file(tmp_path / "portcheck.toml")


def test_the_cli_scores_product_code_as_configured(tmp_path, monkeypatch):
    import json

    from click.testing import CliRunner

    from portcheck.cli import main

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "model.py").write_text("import torch\n\ndef f(x):\n    return x\n", encoding="utf-8")
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "check.py").write_text(
        "import torch\nx = torch.zeros(1).cuda()\ntorch.cuda.synchronize()\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)

    def headline() -> dict:
        out = CliRunner().invoke(
            main, ["scan", "-q", "--no-cache", "-j", "1", "--exit-zero", "--output-format", "json", "."]
        )
        assert out.exit_code == 0, out.output
        return json.loads(out.output)

    before = headline()
    assert before["score"] < 100.0  # spec/ is product code by default
    (tmp_path / "portcheck.toml").write_text('parts = { tests = ["spec"] }\n', encoding="utf-8")
    after = headline()
    assert after["score"] == 100.0
    assert {p["part"]: p["score"] for p in after["parts"]}["tests"] == before["score"]


def test_platform_markers_in_requirements_lower_a_pin():
    # a CUDA-only pin installed only on Linux x86: one level less than the minor cap of environment files -> info
    line = 'triton==3.1.0; platform_system == "Linux" and platform_machine == "x86_64"'
    marked = replace(hit("requirements.txt", "P1", "major"), source_line=line)
    plain = replace(hit("requirements.txt", "P1", "major"), source_line="triton==3.1.0")
    assert card(FileResult("requirements.txt", (marked,), lines=1, kind="requirements")).score == 100.0
    assert card(FileResult("requirements.txt", (plain,), lines=1, kind="requirements")).score == 98.6
