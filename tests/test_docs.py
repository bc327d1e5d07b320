"""The documentation site: generated rule pages are current, the nav lists every page, and
`mkdocs build --strict` passes (a broken link or anchor fails the suite)."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from portcheck import rulepages
from portcheck.catalog import Catalog, load_catalog
from portcheck.explain import explain_markdown, explain_text

ROOT = Path(__file__).resolve().parent.parent
NAV_PAGES = ["index", "getting-started", "cli", "configuration", "rules", "notebooks", "scoring", "fixing",
             "runtime-proof", "output-formats", "ci", "benchmarks", "accuracy", "safety", "architecture", "development"]


def test_generated_rule_pages_are_current():
    stale = rulepages.stale(ROOT, load_catalog())
    assert not stale, f"stale: {[str(p.relative_to(ROOT)) for p in stale]}; run `python -m portcheck.rulepages`"


def copy_docs(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    return tmp_path


def test_an_edited_rule_makes_its_page_stale_and_regenerating_fixes_it(tmp_path):
    root = copy_docs(tmp_path)
    catalog = load_catalog()
    first = catalog.rules[0]
    edited = dataclasses.replace(first, rule=dataclasses.replace(first.rule, why="A new reason."))
    changed = Catalog(rules=(edited, *catalog.rules[1:]), digest=catalog.digest)
    assert rulepages.stale(root, changed) == [root / "docs" / "rules" / f"{first.rule.code}.md"]
    rulepages.write(root, changed)
    assert rulepages.stale(root, changed) == []
    assert "A new reason." in (root / "docs" / "rules" / f"{first.rule.code}.md").read_text(encoding="utf-8")


def test_a_removed_rule_leaves_no_page_behind(tmp_path):
    root = copy_docs(tmp_path)
    catalog = load_catalog()
    fewer = Catalog(rules=catalog.rules[1:], digest=catalog.digest)
    gone = root / "docs" / "rules" / f"{catalog.rules[0].rule.code}.md"
    assert gone in rulepages.stale(root, fewer)
    rulepages.write(root, fewer)
    assert not gone.exists() and f"rules/{catalog.rules[0].rule.code}.md" not in (root / "mkdocs.yml").read_text()


def test_check_mode_exits_1_and_names_the_stale_page(tmp_path, capsys):
    root = copy_docs(tmp_path)
    page = root / "docs" / "rules" / "DEV002.md"
    page.write_text(page.read_text(encoding="utf-8") + "hand edit\n", encoding="utf-8")
    assert rulepages.main(["--check", "--root", str(root)]) == 1
    assert "DEV002.md: stale" in capsys.readouterr().err
    assert rulepages.main(["--root", str(root)]) == 0
    assert rulepages.main(["--check", "--root", str(root)]) == 0


def test_a_rule_page_and_explain_say_the_same_things():
    for entry in load_catalog().rules:
        rule = entry.rule
        page, terminal = explain_markdown(rule), explain_text(rule)
        for part in (
            rule.summary,
            rule.fix,
            rule.bad.strip("\n").splitlines()[0],
            rule.good.strip("\n").splitlines()[0],
        ):
            assert part in page and part in terminal, (rule.code, part)
        for heading in ("## What it does", "## Why it matters", "## Example", "## Use instead", "## Fix"):
            assert heading in page, (rule.code, heading)
        assert "Fix safety: " in page and "Fix safety: " in terminal


def test_the_nav_lists_every_page_and_every_page_exists():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = re.findall(r":\s+(\S+\.md)\s*$", config, re.MULTILINE)
    for name in NAV_PAGES:
        assert f"{name}.md" in listed, name
    for page in listed:
        assert (ROOT / "docs" / page).is_file(), page
    on_disk = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert on_disk == set(listed), on_disk ^ set(listed)


def test_mkdocs_builds_the_site_with_warnings_as_errors(tmp_path):
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            raise  # tests/run.sh installs the docs extra; CI must build the site
        pytest.skip("mkdocs and mkdocs-material are not installed (pip install '.[docs]')")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "rules" / "DEV002" / "index.html").is_file()
    assert (tmp_path / "site" / "cli" / "index.html").is_file()
