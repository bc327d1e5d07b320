"""The command line: a thin layer over portcheck's Python API.

Exit codes: 0 nothing to report, 1 findings (or score below --fail-under), 2 usage, config or internal error.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import click

from portcheck import __version__
from portcheck.targets import SCAN_TARGETS, normalize, refusal

FORMATS = ("text", "json", "sarif", "github", "markdown", "html")
EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class TargetType(click.ParamType):
    """A target name from the shared vocabulary (portcheck.targets), in any case."""

    name = "target"

    def __init__(self, accepted: Tuple[str, ...]) -> None:
        self.accepted = accepted

    def get_metavar(self, param: click.Parameter, *args: object, **kwargs: object) -> str:
        return "[" + "|".join(self.accepted) + "]"

    def shell_complete(self, ctx, param, incomplete):
        from click.shell_completion import CompletionItem

        return [CompletionItem(t) for t in self.accepted if t.startswith(normalize(incomplete))]

    def convert(self, value, param, ctx):
        problem = refusal(str(value), self.accepted)
        if problem:
            self.fail(problem, param, ctx)
        return normalize(str(value))


def _split(values: Sequence[str]) -> Tuple[str, ...]:
    out: List[str] = []
    for v in values:
        out.extend(p.strip() for p in v.split(",") if p.strip())
    return tuple(out)


def _fail(message: str) -> "click.exceptions.Exit":
    click.echo(f"portcheck: error: {message}", err=True)
    return click.exceptions.Exit(EXIT_ERROR)


def _check_paths(paths: Sequence[Path]) -> None:
    """A path that does not exist is a usage error (a typo must not pass a CI gate with an empty scan)."""
    for path in paths:
        if not os.path.lexists(path):
            raise _fail(f"{path}: no such file or directory")


def _check_rule_patterns(catalog, config, select: Sequence[str], ignore: Sequence[str]) -> None:
    """Every rule code, prefix, category or name given (config or flags) must match a rule."""
    from portcheck.selection import unknown_pattern

    source = f"{config.source}: key " if config.source else "config: key "
    checks = [
        (config.select, f"{source}'select'", False),
        (config.ignore, f"{source}'ignore'", False),
        *((codes, f"{source}'per-file-ignores.{glob}'", True) for glob, codes in dict(config.per_file_ignores).items()),
        (select, "--select", False),
        (ignore, "--ignore", False),
    ]
    for patterns, where, codes_only in checks:
        problem = unknown_pattern(catalog, patterns, where, codes_only)
        if problem:
            raise _fail(problem)


def _use_color(output_file: Optional[str]) -> bool:
    if output_file or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def _write(text: str, output_file: Optional[str], color: bool = False) -> None:
    if output_file:
        from portcheck.fsutil import write_output

        try:
            write_output(Path(output_file), text)
        except OSError as exc:
            raise _fail(f"cannot write {output_file}: {exc.strerror or exc}") from None
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

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Each command's whole first sentence, wrapped, rather than click's cut at one line ("...").
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=1000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            raise click.exceptions.Exit(130) from None
        except Exception as exc:  # an internal error: one line, exit 2, traceback on request
            if os.environ.get("PORTCHECK_DEBUG"):
                raise
            click.echo(
                f"portcheck: internal error: {type(exc).__name__}: {exc} (set PORTCHECK_DEBUG=1 for a traceback)",
                err=True,
            )
            raise click.exceptions.Exit(EXIT_ERROR) from None


@click.group(cls=PortcheckGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="portcheck")
def main() -> None:
    """Find CUDA lock-in in a PyTorch codebase, score its readiness for Neuron, XLA or any
    accelerator, and fix the mechanical part."""


def _load(paths: Sequence[Path], config_file: Optional[str], overrides: dict):
    """Check the paths, load the catalog and the config, check every rule pattern, apply the flags."""
    from portcheck.catalog import CatalogError, load_catalog
    from portcheck.config import ConfigError, load_config

    _check_paths(paths)
    try:
        catalog = load_catalog()
    except CatalogError as exc:
        raise _fail(f"rule catalog: {exc}") from None
    try:
        config = load_config(paths[0] if paths else Path("."), Path(config_file) if config_file else None)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    _check_rule_patterns(catalog, config, overrides.get("select") or (), overrides.get("ignore") or ())
    return catalog, config.merged(**overrides)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "-t",
    "--target",
    type=TargetType(SCAN_TARGETS),
    help="Backend to score against, any case; all: every backend [default: the config's, else generic].",
)
@click.option("--select", multiple=True, help="Rule codes, prefixes, categories or names to enable (comma-separated).")
@click.option("--ignore", multiple=True, help="Rule codes, prefixes, categories or names to disable (comma-separated).")
@click.option("--exclude", multiple=True, help="Globs to exclude (replaces the configured list).")
@click.option("--extend-exclude", multiple=True, help="Globs to exclude in addition to the configured ones.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    help="Use this config file instead of searching for one.",
)
@click.option(
    "--output-format",
    "fmt",
    type=click.Choice(FORMATS, case_sensitive=False),
    default="text",
    show_default=True,
    help="text for people; json and sarif for tools; github for workflow annotations; "
    "markdown for a pull-request comment; html for a self-contained page.",
)
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), help="Write the report here instead of stdout.")
@click.option(
    "--fail-under",
    type=click.FloatRange(0, 100),
    help="Exit 1 when the readiness score (with --target all: the lowest of the three) is below this; "
    "findings alone then do not fail.",
)
@click.option(
    "--fail-on",
    type=click.Choice(["blocker", "major", "minor", "info"]),
    help="Lowest severity that makes the scan fail [default: info].",
)
@click.option("--statistics", is_flag=True, help="Add a table of findings per rule (count, code, name, fixable).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option(
    "--baseline", type=click.Path(dir_okay=False), help="Report and fail only on findings not in this baseline file."
)
@click.option(
    "--write-baseline", type=click.Path(dir_okay=False), help="Record the current findings as the baseline and exit 0."
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), help="Worker processes [default: all cores].")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def scan(
    paths,
    target,
    select,
    ignore,
    exclude,
    extend_exclude,
    config_file,
    fmt,
    output_file,
    fail_under,
    fail_on,
    statistics,
    exit_zero,
    baseline,
    write_baseline,
    no_cache,
    jobs,
    quiet,
):
    """Scan PATHS (default: the current folder) for CUDA lock-in and score readiness per target.

    Exit codes: 0 nothing to report, 1 findings (or a score below --fail-under), 2 usage,
    configuration or internal error.
    """
    from portcheck.model import Severity, Target
    from portcheck.report import build_report, renderer
    from portcheck.runner import scan_paths_targets

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
            raise _fail(str(exc)) from None
    cache = None
    if not no_cache:
        from portcheck.cache import Cache

        cache = Cache.for_config(config, catalog)
    from portcheck.progress import maybe_progress, wanted

    progress = maybe_progress if wanted(fmt, output_file, quiet) else None

    # One pass for every target: matches are the same, only severities and `off` rules differ.
    scanned = scan_paths_targets(paths, config, [t.value for t in targets], jobs=jobs, cache=cache, progress=progress)
    scans = dict(zip(targets, scanned))
    if cache is not None and cache.refused:
        click.echo(f"portcheck: warning: {cache.refused}; scanned without the cache", err=True)

    if write_baseline:
        from portcheck.baseline import write_baseline as write_bl

        try:
            count = write_bl(Path(write_baseline), list(scans.values()))
        except OSError as exc:
            raise _fail(f"cannot write {write_baseline}: {exc.strerror or exc}") from None
        click.echo(f"portcheck: wrote {count} finding{'s' if count != 1 else ''} to {write_baseline}", err=True)
        raise click.exceptions.Exit(EXIT_OK)
    shown = dict(scans)
    if known is not None:
        from portcheck.baseline import filter_new

        shown = {t: filter_new(s, known) for t, s in scans.items()}
    result = shown[Target(primary)]

    rescored = len(targets) > 1 or known is not None  # scored below from the per-target scans instead
    report = build_report(
        result,
        catalog,
        targets=targets,
        statistics=statistics,
        baseline_scan=None,
        with_scores=not rescored,
        per_target=shown if len(targets) > 1 else None,
        parts=config.parts,
    )
    if rescored:
        import dataclasses

        from portcheck.score import score_scan

        # Scores always describe the whole code base, not just the findings a baseline lets through.
        scores = {t: score_scan(scans[t], catalog, t, config.parts) for t in targets}
        report = dataclasses.replace(report, scores=scores)
        if known is not None:
            from portcheck.baseline import baseline_only

            # "Before" is the code without the findings the baseline does not know.
            baseline_scores = {
                t: score_scan(baseline_only(scans[t], known), catalog, t, config.parts) for t in targets
            }
            report = dataclasses.replace(report, baseline_scores=baseline_scores)
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
    # With several targets a finding fails the scan when its severity for any of them reaches the threshold.
    failing = [f for section in report.sections() for f in section.findings if f.severity.rank >= threshold]
    raise click.exceptions.Exit(EXIT_FINDINGS if failing else EXIT_OK)


@main.command()
@click.option(
    "-t",
    "--target",
    type=TargetType(SCAN_TARGETS),
    default="all",
    show_default=True,
    help="Show severities for this backend only (rules that are off for it are left out).",
)
@click.option(
    "--output-format",
    "fmt",
    type=click.Choice(["text", "json"], case_sensitive=False),
    default="text",
    show_default=True,
    help="text: a table; json: a list of rules for tools.",
)
def rules(target, fmt):
    """List the rule catalog with each rule's severity per target."""
    import json

    from portcheck.catalog import CatalogError, load_catalog
    from portcheck.model import TARGETS as ALL_TARGETS
    from portcheck.model import Severity, Target

    try:
        catalog = load_catalog()
    except CatalogError as exc:
        raise _fail(f"rule catalog: {exc}") from None
    targets = ALL_TARGETS if target == "all" else (Target(target),)
    entries = [e.rule for e in catalog.rules]
    if target != "all":
        entries = [r for r in entries if r.severity_for(targets[0]) is not Severity.OFF]
    if fmt == "json":
        data = [
            {
                "code": r.code,
                "name": r.name,
                "category": r.category,
                "summary": r.summary,
                "severity": {t.value: r.severity_for(t).value for t in targets},
                "fix_safety": r.fix_safety.value,
                "fixable": r.fixable,
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


@main.command(short_help="Explain a rule by code or name.")
@click.argument("rule")
def explain(rule):
    """Explain RULE (a code such as DEV002, or a name such as dot-cuda-call): what it finds, why it
    matters per target, an example, what to use instead, and whether its fix is safe."""
    from portcheck.catalog import load_catalog
    from portcheck.explain import explain_text, find_rule
    from portcheck.selection import closest

    catalog = load_catalog()
    found = find_rule(catalog, rule)
    if found is None:
        near = closest(catalog, rule)
        hint = f"; closest known: {', '.join(near)}" if near else ""
        raise _fail(f"unknown rule {rule!r}{hint} (`portcheck rules` lists them)")
    click.echo(explain_text(found), nl=False)
