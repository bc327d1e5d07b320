"""Files that are not Python: dependency lists, Dockerfiles, shell, CMake, C++ and CUDA sources."""

from __future__ import annotations

import pytest
from helpers import scan_snippet

from portcheck.filetypes import classify
from portcheck.pyscan.matchers import MatcherError
from portcheck.textscan import build_text, dependencies, normalize, strip_comment


def found(source: str, filename: str, target: str = "neuron") -> list:
    return [(f.code, f.line, f.column, f.end_column) for f in scan_snippet(source, filename, target)]


def codes(source: str, filename: str, target: str = "neuron") -> list:
    return [f.code for f in scan_snippet(source, filename, target)]


# -- file kinds -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,kind",
    [
        ("kernel.cu", "cuda"),
        ("kernel.cuh", "cuda"),
        ("requirements-dev.txt", "requirements"),
        ("pyproject.toml", "pyproject"),
        ("environment.yml", "conda"),
        ("Dockerfile", "dockerfile"),
        ("Dockerfile.train", "dockerfile"),
        ("docker-compose.yml", "dockerfile"),
        ("launch.sh", "shell"),
        ("job.slurm", "shell"),
        ("CMakeLists.txt", "cmake"),
        ("ops.cpp", "cpp"),
        ("ops.h", "cpp"),
        ("README.md", None),
    ],
)
def test_file_kinds_by_name(name, kind):
    assert classify(name) == kind


# -- comments -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line,kind,expected",
    [
        ("# FROM nvidia/cuda", "dockerfile", ""),
        ("export A=1  # CUDA_VISIBLE_DEVICES", "shell", "export A=1  "),
        ('echo "# not a comment" CUDA', "shell", 'echo "# not a comment" CUDA'),
        ("url#egg=apex", "requirements", "url#egg=apex"),
        ("#!/bin/bash", "shell", ""),
        ("// #include <cuda.h>", "cpp", ""),
        ("int x; // cuda", "cpp", "int x; "),
        ("__global__ void k();", "cuda", "__global__ void k();"),
    ],
)
def test_comments_are_removed_before_matching(line, kind, expected):
    assert strip_comment(line, kind) == expected


def test_c_block_comments_span_lines():
    src = "/* old code:\n#include <cuda_runtime.h>\n*/\n#include <vector>\n"
    assert "KRN008" not in codes(src, "ops.cpp")


# -- dependency declarations ----------------------------------------------------------------------------------


def test_requirements_names_skip_options_and_urls():
    lines = ["--extra-index-url https://example.com/simple", "-r base.txt", "flash-attn==2.5 ; sys_platform == 'linux'",
             "https://example.com/pkg.whl", "xformers[all]>=0.0.26", "  ", "# triton"]
    assert [d[3] for d in dependencies("requirements", lines)] == ["flash-attn", "xformers"]


def test_pypi_apex_is_not_nvidia_apex():
    assert "PKG001" not in codes("apex==0.9.10\n", "requirements.txt")
    assert "PKG001" in codes("git+https://github.com/NVIDIA/apex.git\n", "requirements.txt")


def test_pyproject_reads_dependency_sections_only():
    src = (
        '[project]\nname = "triton-demo"\nkeywords = ["xformers"]\ndependencies = [\n  "torch>=2.4",\n'
        '  "triton>=2.3; platform_system == \'Linux\'",\n]\n\n'
        '[project.optional-dependencies]\nquant = ["bitsandbytes>=0.43"]\n'
        '\n[tool.poetry.dependencies]\npython = "^3.10"\ndeepspeed = "^0.14"\n\n[tool.ruff]\nselect = ["flash-attn"]\n'
    )
    names = [d[3] for d in dependencies("pyproject", src.splitlines())]
    assert names == ["torch", "triton", "bitsandbytes", "deepspeed"]


def test_setup_py_reads_install_requires():
    src = (
        'setup(\n    name="flash_attn_demo",\n    install_requires=[\n'
        '        "torch",\n        "xformers>=0.0.26",\n    ],\n)\n'
    )
    assert [d[3] for d in dependencies("setup-py", src.splitlines())] == ["torch", "xformers"]
    assert "PKG003" in codes(src, "setup.py")


def test_conda_channels_are_not_packages():
    src = (
        "name: env\nchannels:\n  - nvidia\n  - pytorch\n"
        "dependencies:\n  - python=3.11\n  - pytorch-cuda=12.1\n  - pip:\n    - flash-attn\n"
    )
    assert [d[3] for d in dependencies("conda", src.splitlines())] == ["python", "pytorch-cuda", "flash-attn"]
    assert sorted(codes(src, "environment.yml")) == ["ENV004", "PKG002"]


def test_pip_install_commands_in_dockerfiles_and_scripts():
    line = (
        "RUN pip install --no-cache-dir -r requirements.txt --index-url https://x/simple flash-attn==2.5 "
        "&& echo xformers"
    )
    assert [d[3] for d in dependencies("dockerfile", [line])] == ["flash-attn"]
    assert "PKG004" in codes("pip3 install -U bitsandbytes\n", "setup_env.sh")
    # `--no-binary NAME` takes a value: the package is the argument after it
    line = "RUN pip install --no-build-isolation --no-binary flash-attn flash-attn==2.5.6"
    ((_, start, _, name),) = dependencies("dockerfile", [line])
    assert name == "flash-attn" and start == line.index("flash-attn==")


def test_wildcards_and_exclusions_in_package_lists():
    matcher = build_text(
        {"kind": "requirement", "files": ["requirements"], "packages": ["nvidia-*"], "exclude": ["nvidia-ml-py"]}
    )
    assert matcher.wanted("nvidia_cudnn_cu12") and not matcher.wanted("nvidia-ml-py") and not matcher.wanted("numpy")
    assert normalize("Flash_Attn") == "flash-attn"


# -- positions ---------------------------------------------------------------------------------------------------


def test_positions_are_one_based_with_exclusive_end():
    assert found("numpy\nflash-attn==2.5\n", "requirements.txt") == [("PKG002", 2, 1, 11)]


@pytest.mark.parametrize(
    "source,filename",
    [
        (
            'triton>=2.0.0;platform_machine=="x86_64" and sys_platform=="linux" or sys_platform=="linux2"\n',
            "requirements.txt",
        ),
        ("[project]\ndependencies = [\n  \"triton>=2; sys_platform=='linux'\",\n]\n", "pyproject.toml"),
    ],
)
def test_a_requirement_with_a_platform_marker_is_lowered_with_the_reason(source, filename):
    marked = [f for f in scan_snippet(source, filename, "neuron") if f.code == "PKG006"]
    plain = [f for f in scan_snippet("triton>=2.0.0\n", "requirements.txt", "neuron") if f.code == "PKG006"]
    assert [f.severity.value for f in plain] == ["blocker"] and not plain[0].guarded
    assert [f.severity.value for f in marked] == ["major"]
    assert marked[0].guarded and "environment marker" in marked[0].note


def test_cuda_source_is_one_finding_with_its_line_count():
    (finding,) = scan_snippet("#include <cuda.h>\n__global__ void k() {}\n\n", "fused.cu", "neuron")
    assert (finding.code, finding.line, finding.column) == ("KRN002", 1, 1)
    assert "3 lines" in finding.message


# -- rules by file type -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source,filename,code",
    [
        ("project(ops LANGUAGES CXX CUDA)\n", "CMakeLists.txt", "KRN007"),
        ('set(TORCH_CUDA_ARCH_LIST "8.0")\n', "CMakeLists.txt", "KRN007"),
        ("FROM nvcr.io/nvidia/pytorch:24.05-py3\n", "Dockerfile", "ENV003"),
        ("docker run --gpus all trainer\n", "run.sh", "ENV003"),
        ("CUDA_VISIBLE_DEVICES=0,1 python train.py\n", "run.sh", "DEV007"),
        ("nvidia-smi -L\n", "check.sh", "ENV001"),
        ("export NCCL_DEBUG=INFO\n", "run.sh", "DIST005"),
        ("torch==2.3.1+cu121\n", "requirements.txt", "ENV004"),
        ("#include <ATen/cuda/CUDAContext.h>\n", "ops.cpp", "KRN008"),
        ("TORCH_LIBRARY_IMPL(myops, CUDA, m) {}\n", "ops.cpp", "KRN006"),
    ],
)
def test_each_file_type_has_its_rules(source, filename, code):
    assert code in codes(source, filename)


def test_text_rules_follow_the_target():
    assert "ENV005" in codes("export CUDA_LAUNCH_BLOCKING=1\n", "run.sh", target="generic")
    # XLA-era settings are the right thing on the XLA target, so the rule is off there.
    assert codes("import os\nos.environ['NEURON_CC_FLAGS'] = '-O1'\n", "x.py", target="xla") == []


def test_notebook_shell_escapes_are_scanned_as_shell():
    import json

    cell = {
        "cell_type": "code",
        "metadata": {},
        "outputs": [],
        "execution_count": None,
        "source": ["import torch\n", "!nvidia-smi\n"],
    }
    doc = {
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# GPUs"]}, cell],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (finding,) = [f for f in scan_snippet(json.dumps(doc), "explore.ipynb", "neuron") if f.code == "ENV001"]
    assert (finding.cell, finding.line) == (2, 2)


# -- matcher validation ---------------------------------------------------------------------------------------------


def test_a_malformed_rule_file_names_the_file_rule_and_key(tmp_path):
    from portcheck.catalog import CatalogError, load_files

    bad = tmp_path / "broken.toml"
    bad.write_text(
        '[[rule]]\ncode = "ZZ001"\nname = "x"\ncategory = "device"\nseverity = "minor"\nsummary = "s"\nwhy = "w"\n'
        'bad = "b"\ngood = "g"\nfix = "f"\nfix-safety = "none"\nmatch = { kind = "line", files = ["shell"] }\n'
    )
    with pytest.raises(CatalogError, match=r"broken\.toml: rule ZZ001: key 'match'.*pattern"):
        load_files([bad])


def test_yields_to_must_list_rule_codes(tmp_path):
    from portcheck.catalog import CatalogError, load_files

    bad = tmp_path / "broken.toml"
    bad.write_text(
        '[[rule]]\ncode = "ZZ001"\nname = "x"\ncategory = "device"\nseverity = "minor"\nsummary = "s"\nwhy = "w"\n'
        'bad = "b"\ngood = "g"\nfix = "f"\nfix-safety = "none"\nyields-to = "XLA006"\n'
        'match = { kind = "line", files = ["shell"], pattern = "x" }\n'
    )
    with pytest.raises(CatalogError, match=r"rule ZZ001: key 'yields-to'"):
        load_files([bad])


@pytest.mark.parametrize(
    "table,problem",
    [
        ({"kind": "line", "files": ["markdown"], "pattern": "x"}, "markdown"),
        ({"kind": "line", "files": ["shell"]}, "pattern"),
        ({"kind": "line", "files": ["shell"], "pattern": "("}, "pattern"),
        ({"kind": "requirement", "files": ["requirements"], "packages": ["a"], "colour": "red"}, "colour"),
        ({"kind": "line", "files": ["shell"], "pattern": "x", "lower-note": "lowered one level: why"}, "needs 'lower'"),
        ({"kind": "line", "files": ["shell"], "pattern": "x", "lower": "y", "lower-note": "why"}, "lower-note"),
    ],
)
def test_malformed_text_matchers_name_the_problem(table, problem):
    with pytest.raises(MatcherError, match=problem):
        build_text(table)


@pytest.mark.parametrize(
    "name,kind",
    [
        ("config.yaml", "config"),
        ("conf/train.yml", "config"),
        (".env", "dotenv"),
        ("prod.env", "dotenv"),
        (".env.example", "dotenv"),
        ("environment.yml", "conda"),
        ("docker-compose.yml", "dockerfile"),
        (".pre-commit-config.yaml", None),
    ],
)
def test_run_configurations_are_classified(name, kind):
    assert classify(name) == kind


def test_a_line_pattern_reports_its_at_group():
    matcher = build_text({"kind": "line", "files": ["config"], "pattern": r"device:\s*(?P<at>cuda)"})
    assert list(matcher.scan("config", ["trainer:", "  device: cuda  # the GPU"])) == [(2, 11, 2, 15, "cuda")]


def test_yaml_device_and_backend_are_reported_at_the_value():
    findings = found("trainer:\n  device: cuda\ndistributed:\n  backend: NCCL\n", "conf/config.yaml")
    assert sorted(findings) == [("DEV001", 2, 11, 15), ("DIST001", 4, 12, 16)]


def test_commented_settings_in_env_files_are_not_reported():
    assert not found("# DEVICE=cuda\n# NCCL_DEBUG=INFO\nDEVICE=cpu\n", ".env")


def test_project_matcher_takes_no_parameters():
    with pytest.raises(MatcherError):
        build_text({"kind": "project", "files": ["python"]})


def test_explicit_indexes_are_the_lines_of_explicit_uv_index_tables():
    from portcheck.textscan import explicit_indexes

    text = (
        "[[tool.uv.index]]\nname = 'pytorch-cu128'\nurl = 'https://download.pytorch.org/whl/cu128'\nexplicit = true\n"
        "\n[[tool.uv.index]]\nname = 'pytorch-cu126'\nurl = 'https://download.pytorch.org/whl/cu126'\n"
        "\n[tool.other]\nurl = 'https://download.pytorch.org/whl/cu121'\nexplicit = true\n"
    )
    found = explicit_indexes(text.splitlines())
    assert found.get(3) == "pytorch-cu128"
    assert 8 not in found and 11 not in found  # not explicit; not an index table


def test_cuda_conditional_lines_are_the_cuda_branch_of_preprocessor_conditionals():
    from portcheck.textscan import cuda_conditional_lines

    text = (
        "#include <torch/extension.h>\n#ifdef WITH_CUDA\n#include <cuda.h>\n#else\n#include <cpu.h>\n#endif\n"
        "#if defined(USE_CUDA) && X\n#include <cublas_v2.h>\n#endif\n#ifndef WITH_CUDA\n#include <a.h>\n#endif\n"
    )
    assert cuda_conditional_lines(text.splitlines()) == {3, 8}


def test_cmake_conditional_lines_are_inside_a_gpu_build_switch():
    from portcheck.textscan import cmake_conditional_lines

    text = (
        "if (GGML_CUBLAS)\n  enable_language(CUDA)\n  if (NOT DEFINED CMAKE_CUDA_ARCHITECTURES)\n    set(A 70)\n"
        "  endif()\nelseif (GGML_HIPBLAS)  # ROCm\n  add_library(r ggml-cuda.cu)\n"
        "else()\n  add_library(c a.c)\nendif()\n"
        "if (NOT USE_CUDA)\n  set(B 1)\nendif()\nenable_language(CUDA)\n"
    )
    found = cmake_conditional_lines(text.splitlines())
    assert sorted(found) == [2, 3, 4, 5, 7]
    assert found[3] == "GGML_CUBLAS" and found[7] == "GGML_HIPBLAS"


def test_a_launchers_gpu_variable_is_lowered_unless_the_script_counts_the_gpus_itself():
    launch = "torchrun --nproc_per_node $GPUS_PER_NODE finetune.py\n"
    set_by_launcher = [f for f in scan_snippet(launch, "finetune.sh", "neuron") if f.code == "DIST006"]
    assert [(f.severity.value, f.guarded) for f in set_by_launcher] == [("info", True)]
    counted = "GPUS_PER_NODE=$(python -c 'import torch; print(torch.cuda.device_count())')\n" + launch
    by_script = [f for f in scan_snippet(counted, "finetune.sh", "neuron") if f.code == "DIST006"]
    assert [(f.line, f.severity.value, f.guarded) for f in by_script] == [(2, "minor", False)]


def test_lower_unless_needs_lower():
    with pytest.raises(MatcherError):
        build_text({"kind": "line", "files": ["shell"], "pattern": "x", "lower-unless": "y"})


def test_a_build_script_is_one_build_configuration_reported_at_its_first_line():
    # detectron2's `dev/packaging/pkg_helpers.bash` (copied into BoxTeacher): one `CUDA_HOME` per CUDA release
    script = (
        "setup_cuda() {\n  case \"$CU_VERSION\" in\n    cu102)\n      export CUDA_HOME=/usr/local/cuda-10.2/\n"
        "      export TORCH_CUDA_ARCH_LIST=\"3.7;5.0\"\n      ;;\n"
        "    cu100)\n      export CUDA_HOME=/usr/local/cuda-10.0/\n"
        "      ;;\n  esac\n}\n"
    )
    found = [f for f in scan_snippet(script, "dev/packaging/pkg_helpers.bash", "neuron") if f.code == "KRN007"]
    assert [f.line for f in found] == [4, 5, 8], found
    assert found[0].severity.value != "info" and not found[0].note
    assert all(f.severity.value == "info" and "(line 4)" in f.note for f in found[1:]), found
