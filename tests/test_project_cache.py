"""The project pass from the persistent cache: a warm scan neither reads nor summarizes unchanged files,
and after an edit, a deletion or a rename every module's project findings are those of a cold scan."""

from __future__ import annotations

import marshal
import os
from dataclasses import replace
from pathlib import Path
from typing import Dict, List

import pytest

import portcheck.project_cache as project_cache
import portcheck.project_index as project_index
from portcheck.cache import Cache
from portcheck.catalog import load_catalog
from portcheck.config import Config
from portcheck.project_cache import decode_summary, encode_summary
from portcheck.project_index import Sources, dependents, index_project, summarize
from portcheck.runner import scan_paths, scan_paths_targets
from portcheck.scanner import settings_from

KERNELS = """\
import triton


@triton.jit
def _add_kernel(x_ptr, n):
    pass


def add(x):
    _add_kernel[(1,)](x, x.numel())
    return x
"""

# The same module without the kernel: `add` is plain Python.
PLAIN_KERNELS = """\
def add(x):
    return x + x
"""

EXT = """\
from torch.utils.cpp_extension import load

_ext = load(name="fused", sources=["fused.cpp", "fused_cuda.cu"])


def fused(x):
    return _ext.forward(x)
"""

PLAIN_EXT = """\
def fused(x):
    return x * 2
"""

MODEL = """\
from pkg.ops.kernels import add
from pkg.ops import ext


def forward(x):
    return add(x) + ext.fused(x)
"""

LAYER = """\
from .model import forward


def run(x):
    return forward(x)
"""

PROJECT = {
    "pkg/__init__.py": "",
    "pkg/ops/__init__.py": "",
    "pkg/ops/kernels.py": KERNELS,
    "pkg/ops/ext.py": EXT,
    "pkg/model.py": MODEL,
    "pkg/layer.py": LAYER,
    "pkg/other.py": "import numpy as np\n\n\ndef f():\n    return np.zeros(3)\n",
    "tests/test_model.py": "from pkg.model import forward\n\n\ndef test_forward():\n    assert forward(1)\n",
}


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    for name, text in PROJECT.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def work(monkeypatch):
    """What the project pass does per file: reads, summaries, findings made at sites."""
    done: Dict[str, List[str]] = {"read": [], "summarized": [], "findings": []}
    real_read, real_summary, real_findings = (
        project_cache.read_python,
        project_cache.summarize_or_none,
        project_index._site_findings,
    )

    def read(path):
        done["read"].append(Path(os.path.relpath(path)).as_posix())
        return real_read(path)

    def summary(text, path):
        done["summarized"].append(path)
        return real_summary(text, path)

    def findings(path, *args):
        done["findings"].append(path)
        return real_findings(path, *args)

    monkeypatch.setattr(project_cache, "read_python", read)
    monkeypatch.setattr(project_cache, "summarize_or_none", summary)
    monkeypatch.setattr(project_index, "_site_findings", findings)
    return done


def fresh(root: Path, target: str = "generic"):
    return scan_paths([Path(".")], Config(root=root), target=target, jobs=1, cache=None)


def cached(root: Path, target: str = "generic"):
    return scan_paths([Path(".")], Config(root=root), target=target, jobs=1, cache=Cache(root, load_catalog().digest))


def project_sites(result) -> Dict[str, List[tuple]]:
    """The project pass's findings by file: (line, column, message)."""
    out: Dict[str, List[tuple]] = {}
    for f in result.findings:
        if f.code == "KRN009":
            out.setdefault(f.path, []).append((f.line, f.column, f.message))
    return out


def labels(result, path: str) -> List[str]:
    return sorted(m.split("`")[1] for _, _, m in project_sites(result).get(path, []))


def test_summaries_round_trip_through_the_cache_encoding():
    texts = dict(PROJECT, **{"pkg/guarded.py": "import fused_cuda\nimport torch\nif torch.cuda.is_available():\n"
                             "    y = fused_cuda.op(1)\n"})
    for path, text in texts.items():
        summary = summarize(text, path)
        encoded = encode_summary(summary)
        assert decode_summary(marshal.loads(marshal.dumps(encoded))) == summary
    assert summarize(KERNELS, "pkg/ops/kernels.py").definitions  # the sample is not empty


def test_cold_and_warm_scans_match_a_scan_without_cache(project, work):
    expected = fresh(project)
    assert labels(expected, "pkg/model.py") == ["add", "ext.fused", "ext.fused", "pkg.ops.kernels.add"]
    assert labels(expected, "pkg/layer.py") == ["forward", "pkg.model.forward"]
    cold = cached(project)
    assert cold == expected
    assert sorted(work["read"]) == sorted(PROJECT)
    assert work["summarized"]
    for done in work.values():
        done.clear()
    warm = cached(project)
    assert warm == expected
    # Nothing read, summarized or made again: every fact and finding came from the cache.
    assert work == {"read": [], "summarized": [], "findings": []}


def test_every_target_shares_the_summaries(project, work):
    cached(project)
    expected = fresh(project, "neuron"), fresh(project, "xla")
    for done in work.values():
        done.clear()
    cache = Cache(project, load_catalog().digest)
    both = scan_paths_targets([Path(".")], Config(root=project), ["neuron", "xla"], jobs=1, cache=cache)
    assert both == expected
    assert work["summarized"] == []
    # New settings: their findings are made from the cached summaries, reading only the files with sites.
    assert sorted(set(work["findings"])) == sorted(set(work["read"])) == sorted(project_sites(both[0]))


@pytest.mark.parametrize(
    "edits",
    [
        pytest.param([("pkg/ops/kernels.py", PLAIN_KERNELS)], id="kernel-removed"),
        pytest.param([("pkg/ops/ext.py", PLAIN_EXT)], id="loader-removed"),
        pytest.param([("pkg/ops/kernels.py", PLAIN_KERNELS), ("pkg/ops/ext.py", PLAIN_EXT)], id="both-removed"),
        pytest.param([("pkg/model.py", MODEL.replace("ext.fused(x)", "1"))], id="importer-edited"),
        pytest.param([("pkg/other.py", "from pkg.ops.kernels import add\nz = add(1)\n")], id="new-user"),
    ],
)
def test_an_edit_changes_the_findings_of_its_importers_as_a_cold_scan_does(project, work, edits):
    before = cached(project)
    for path, text in edits:
        (project / path).write_text(text, encoding="utf-8")
    for done in work.values():
        done.clear()
    after = cached(project)
    done = {k: set(v) for k, v in work.items()}
    assert after == fresh(project)
    assert project_sites(after) != project_sites(before)
    edited = {path for path, _ in edits}
    texts = {p: (project / p).read_text(encoding="utf-8") for p in PROJECT}
    by_module = {summarize(t, p).module: p for p, t in texts.items()}
    reached = {by_module[m] for m in dependents([summarize(t, p) for p, t in texts.items()], by_module_of(edited))}
    # Only the edited files are summarized again; only they and the modules importing them
    # (transitively) are read again, for new findings where their sites changed.
    assert done["summarized"] <= edited
    assert edited <= done["read"] <= edited | reached
    assert done["findings"] <= edited | reached
    assert done["read"] - edited == done["findings"] - edited
    # Among the unedited modules, exactly those whose findings change get new ones.
    old, new = project_sites(before), project_sites(after)
    assert done["findings"] - edited == {p for p in new if old.get(p) != new[p]} - edited


def by_module_of(paths):
    return [project_index.module_name(p)[0] for p in paths]


def test_a_kernel_that_goes_and_comes_back(project):
    kernels = project / "pkg/ops/kernels.py"
    cached(project)
    kernels.write_text(PLAIN_KERNELS, encoding="utf-8")
    gone = cached(project)
    assert labels(gone, "pkg/model.py") == ["ext.fused", "ext.fused"]  # the loader still binds `forward`
    assert labels(gone, "pkg/layer.py") == ["forward", "pkg.model.forward"]
    (project / "pkg/ops/ext.py").write_text(PLAIN_EXT, encoding="utf-8")
    none = cached(project)
    assert project_sites(none) == {}
    assert none == fresh(project)
    kernels.write_text(KERNELS, encoding="utf-8")
    back = cached(project)
    assert back == fresh(project)
    assert labels(back, "pkg/model.py") == ["add", "pkg.ops.kernels.add"]
    assert labels(back, "pkg/layer.py") == ["forward", "pkg.model.forward"]


def test_deleting_the_defining_module(project):
    cached(project)
    (project / "pkg/ops/kernels.py").unlink()
    after = cached(project)
    assert after == fresh(project)
    assert labels(after, "pkg/model.py") == ["ext.fused", "ext.fused"]
    assert "pkg/ops/kernels.py" not in {r.path for r in after.files}


def test_renaming_modules(project, work):
    cached(project)
    (project / "pkg/ops/kernels.py").rename(project / "pkg/ops/triton_ops.py")
    (project / "pkg/ops/ext.py").rename(project / "pkg/ops/loader.py")
    moved = cached(project)
    assert moved == fresh(project)
    assert project_sites(moved).keys() == {"pkg/ops/triton_ops.py", "pkg/ops/loader.py"}  # no importer left
    (project / "pkg/model.py").write_text(
        MODEL.replace("kernels", "triton_ops").replace("import ext", "import loader as ext"), encoding="utf-8"
    )
    for done in work.values():
        done.clear()
    renamed = cached(project)
    assert renamed == fresh(project)
    assert labels(renamed, "pkg/model.py") == ["add", "ext.fused", "ext.fused", "pkg.ops.triton_ops.add"]
    assert labels(renamed, "pkg/layer.py") == ["forward", "pkg.model.forward"]
    assert work["read"] == ["pkg/model.py"]


def test_a_file_that_no_longer_parses_and_parses_again(project):
    cached(project)
    model = project / "pkg/model.py"
    model.write_text(MODEL + "def broken(:\n", encoding="utf-8")
    broken = cached(project)
    assert broken == fresh(project)
    assert "pkg/model.py" not in project_sites(broken)
    model.write_text(MODEL, encoding="utf-8")
    assert cached(project) == fresh(project)


def test_a_skipped_file_stays_out_and_comes_back(project):
    cached(project)
    ext = project / "pkg/ops/ext.py"
    ext.write_text("# portcheck: skip-file\n" + EXT, encoding="utf-8")
    skipped = cached(project)
    assert skipped == fresh(project)
    ext.write_text(EXT, encoding="utf-8")
    assert cached(project) == fresh(project)


@pytest.mark.parametrize(
    "damage",
    [
        lambda digest, display: (digest, "x"),
        lambda digest, display: (digest,),
        lambda digest, display: (digest, display, True, True, None, None, 1, ("not", "a", "summary")),
        lambda digest, display: (digest, display, True, True, None, None, 1, None),
        lambda digest, display: (digest, display, "yes", True, None, None, 0, None),
        lambda digest, display: (digest, display, True, True, frozenset([1]), 5, 0, None),
        lambda digest, display: (digest, display, repr([]), ((1, 2),)),  # a findings entry gone bad
    ],
    ids=["short", "digest-only", "bad-summary", "missing-summary", "bad-flag", "bad-words", "bad-findings"],
)
def test_a_damaged_project_table_is_a_miss(project, damage):
    expected = cached(project)
    assert expected.findings
    cache = Cache(project, load_catalog().digest)
    for table in (cache.project_table(), cache.findings_table(fresh_settings(project))):
        assert table.entries
        cache.write(table.name, b"not marshal data")
        assert cached(project) == expected
        table = type(table)(cache, table.name)
        damaged = {k: damage(v[0], v[1]) for k, v in table.entries.items()}
        cache.write(table.name, marshal.dumps((2, damaged)))
        assert cached(project) == expected


def fresh_settings(root: Path):
    """The settings of `cached(root)`'s scan (it scans ".", so no folder is named as a root)."""
    return replace(settings_from(Config(root=root), "generic"), roots=())


class _Counting(Sources):
    def __init__(self, texts: Dict[str, str]) -> None:
        self.texts = texts
        self.tries: Dict[str, int] = {}

    def paths(self):
        return list(self.texts)

    def text(self, path: str) -> str:
        return self.texts[path]

    def summary(self, path: str):
        self.tries[path] = self.tries.get(path, 0) + 1
        assert self.tries[path] < 3, f"{path} summarized again and again"
        return super().summary(path)


def test_a_user_that_does_not_parse_is_tried_once():
    texts = {
        "k.py": "import triton\n\n@triton.jit\ndef kern(x):\n    pass\n",
        "m.py": "from k import kern\ndef f(:\n    kern[1](2)\n",
    }
    sources = _Counting(texts)
    project, resolved, summaries = index_project(sources)
    assert ("k", "kern") in resolved.kernels
    assert set(summaries) == {"k.py"}
    assert sources.tries == {"k.py": 1, "m.py": 1}
