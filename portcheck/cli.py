"""The command line: a thin layer over portcheck's Python API.

Exit codes: 0 nothing to report, 1 findings (or score below --fail-under), 2 usage, config or internal error.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional, Sequence, Tuple

import click

from portcheck import __version__

TARGETS = ("neuron", "xla", "generic")
FORMATS = ("text", "json", "sarif", "github", "markdown", "html")
EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _split(values: Sequence[str]) -> Tuple[str, ...]:
    out = []
    for v in values:
        out.extend(p.strip() for p in v.split(",") if p.strip())
    return tuple(out)


def _fail(message: str) -> "click.exceptions.Exit":
    click.echo(f"portcheck: error: {message}", err=True)
    return click.exceptions.Exit(EXIT_ERROR)


def _use_color(output_file: Optional[str]) -> bool:
    if output_file or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def _write(text: str, output_file: Optional[str], color: bool = False) -> None:
    if output_file:
        from portcheck.fsutil import atomic_write_text

        atomic_write_text(Path(output_file), text)
    else:
        # click strips ANSI codes off a terminal; colour we chose (FORCE_COLOR into a pipe) must survive.
        click.echo(text, nl=False, color=True if color else None)


class PortcheckGroup(click.Group):
    # Subcommands that live in their own modules, imported only when used (keeps start-up fast).
    lazy_subcommands = {
        "fix": "portcheck.fixer.command:fix",
        "clean": "portcheck.cache:clean_command",
    }

    def list_commands(self, ctx: click.Context):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_subcommands))

    def get_command(self, ctx: click.Context, name: str):
        if name in self.lazy_subcommands:
            import importlib

            module, attr = self.lazy_subcommands[name].split(":")
            # A broken import is a bug to see, not "No such command".
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            raise click.exceptions.Exit(130)
        except Exception as exc:  # an internal error: one line, exit 2, traceback on request
            if os.environ.get("PORTCHECK_DEBUG"):
                raise
            click.echo(f"portcheck: internal error: {type(exc).__name__}: {exc} (set PORTCHECK_DEBUG=1 for a traceback)", err=True)
            raise click.exceptions.Exit(EXIT_ERROR)


@click.group(cls=PortcheckGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="portcheck")
def main() -> None:
    """Find CUDA lock-in in a PyTorch codebase, score its readiness for Neuron, XLA or any
    accelerator, and fix the mechanical part."""


def _load(paths: Sequence[Path], config_file: Optional[str], overrides: dict):
    from portcheck.catalog import CatalogError, load_catalog
    from portcheck.config import ConfigError, load_config

    try:
        catalog = load_catalog()
    except CatalogError as exc:
        raise _fail(f"rule catalog: {exc}")
    try:
        config = load_config(paths[0] if paths else Path("."), Path(config_file) if config_file else None)
    except ConfigError as exc:
        raise _fail(str(exc))
    return catalog, config.merged(**overrides)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("-t", "--target", type=click.Choice(TARGETS + ("all",)), help="Backend to score against [default: generic].")
@click.option("--select", multiple=True, help="Rule codes, prefixes or categories to enable (comma-separated).")
@click.option("--ignore", multiple=True, help="Rule codes, prefixes or categories to disable (comma-separated).")
@click.option("--exclude", multiple=True, help="Globs to exclude (replaces the configured list).")
@click.option("--extend-exclude", multiple=True, help="Globs to exclude in addition to the configured ones.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Use this config file instead of searching for one.")
@click.option("--output-format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), help="Write the report here instead of stdout.")
@click.option("--fail-under", type=click.FloatRange(0, 100), help="Exit 1 when the readiness score (with --target all: the lowest of the three) is below this; findings alone then do not fail.")
@click.option("--fail-on", type=click.Choice(["blocker", "major", "minor", "info"]), help="Lowest severity that makes the scan fail [default: info].")
@click.option("--statistics", is_flag=True, help="Show counts per rule.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--baseline", type=click.Path(dir_okay=False), help="Report and fail only on findings not in this baseline file.")
@click.option("--write-baseline", type=click.Path(dir_okay=False), help="Record the current findings as the baseline and exit 0.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), help="Worker processes [default: all cores].")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def scan(paths, target, select, ignore, exclude, extend_exclude, config_file, fmt, output_file, fail_under, fail_on,
         statistics, exit_zero, baseline, write_baseline, no_cache, jobs, quiet):
    """Scan PATHS (default: the current folder) for CUDA lock-in."""
    from portcheck.model import Severity, Target
    from portcheck.report import build_report, renderer
    from portcheck.scanner import scan_paths

    paths = list(paths) or [Path(".")]
    overrides = dict(
        select=_split(select) or None,
        ignore=_split(ignore) or None,
        exclude=_split(exclude) or None,
        fail_on=fail_on,
        fail_under=fail_under,
    )
    catalog, config = _load(paths, config_file, overrides)
    if extend_exclude:  # extends the configured list rather than replacing it
        config = config.merged(extend_exclude=tuple(config.extend_exclude) + _split(extend_exclude))
    target_name = target or config.target
    targets = (Target.NEURON, Target.XLA, Target.GENERIC) if target_name == "all" else (Target(target_name),)
    primary = "generic" if target_name == "all" else target_name

    known = None
    if baseline and not write_baseline:
        from portcheck.baseline import BaselineError, load_baseline

        try:  # before the scan: a bad baseline should not cost a full scan to report
            known = load_baseline(Path(baseline))
        except BaselineError as exc:
            raise _fail(str(exc))
    cache = None
    if not no_cache:
        from portcheck.cache import Cache

        cache = Cache.for_config(config, catalog)
    from portcheck.progress import maybe_progress, wanted

    progress = maybe_progress if wanted(fmt, output_file, quiet) else None

    # One scan per target: severities differ, matches do not.
    scans = {t: scan_paths(paths, config, target=t.value, jobs=jobs, cache=cache, progress=progress) for t in targets}
    result = scans[Target(primary)]

    if write_baseline:
        from portcheck.baseline import write_baseline as write_bl

        count = write_bl(Path(write_baseline), list(scans.values()))
        click.echo(f"portcheck: wrote {count} finding{'s' if count != 1 else ''} to {write_baseline}", err=True)
        raise click.exceptions.Exit(EXIT_OK)
    if known is not None:
        from portcheck.baseline import filter_new

        result = filter_new(result, known)

    rescored = len(targets) > 1 or known is not None  # scored below from the per-target scans instead
    report = build_report(result, catalog, targets=targets, statistics=statistics, baseline_scan=None, with_scores=not rescored)
    if rescored:
        import dataclasses

        from portcheck.score import score_scan

        # Scores always describe the whole code base, not just the findings a baseline lets through.
        fields = {"scores": {t: score_scan(scans[t], catalog, t) for t in targets}}
        if known is not None:
            from portcheck.baseline import baseline_only

            # "Before" is the code without the findings the baseline does not know.
            fields["baseline_scores"] = {t: score_scan(baseline_only(scans[t], known), catalog, t) for t in targets}
        report = dataclasses.replace(report, **fields)
    render = renderer(fmt)
    color = _use_color(output_file) and fmt == "text"
    text = render(report, color=color)
    _write(text, output_file, color=color)

    if exit_zero:
        raise click.exceptions.Exit(EXIT_OK)
    if config.fail_under is not None:
        # The score alone decides; with several targets, every one of them must reach the threshold.
        score = min((report.scores[t].score for t in report.targets if t in report.scores), default=100.0)
        raise click.exceptions.Exit(EXIT_FINDINGS if score < config.fail_under else EXIT_OK)
    threshold = Severity(config.fail_on).rank
    failing = [f for f in report.findings if f.severity.rank >= threshold]
    raise click.exceptions.Exit(EXIT_FINDINGS if failing else EXIT_OK)


@main.command()
@click.option("-t", "--target", type=click.Choice(TARGETS + ("all",)), default="all", show_default=True)
@click.option("--output-format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules(target, fmt):
    """List the rule catalog with each rule's severity per target."""
    import json

    from portcheck.catalog import CatalogError, load_catalog
    from portcheck.model import TARGETS as ALL_TARGETS, Severity, Target

    try:
        catalog = load_catalog()
    except CatalogError as exc:
        raise _fail(f"rule catalog: {exc}")
    targets = ALL_TARGETS if target == "all" else (Target(target),)
    entries = [e.rule for e in catalog.rules]
    if target != "all":
        entries = [r for r in entries if r.severity_for(targets[0]) is not Severity.OFF]
    if fmt == "json":
        data = [
            {
                "code": r.code, "name": r.name, "category": r.category, "summary": r.summary,
                "severity": {t.value: r.severity_for(t).value for t in targets},
                "fix_safety": r.fix_safety.value, "fixable": r.fixable,
            }
            for r in entries
        ]
        click.echo(json.dumps(data, indent=2))
        return
    head = f"{'code':8} {'name':34} {'category':13} " + " ".join(f"{t.value:8}" for t in targets) + " fix"
    click.echo(head)
    for r in entries:
        sev = " ".join(f"{r.severity_for(t).value:8}" for t in targets)
        fix = r.fix_safety.value if r.fixable else "-"
        click.echo(f"{r.code:8} {r.name:34} {r.category:13} {sev} {fix}")
    click.echo(f"\n{len(entries)} rules. `portcheck explain CODE` shows what a rule finds, why, and how to fix it.")


@main.command()
@click.argument("code")
def explain(code):
    """Explain a rule: what it finds, why it matters per target, an example, and its fix."""
    from portcheck.catalog import load_catalog
    from portcheck.explain import explain_text

    rule = load_catalog().get(code)
    if rule is None:
        raise _fail(f"unknown rule code {code!r}; `portcheck rules` lists them")
    click.echo(explain_text(rule), nl=False)
