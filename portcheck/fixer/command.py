"""The `portcheck fix` command: a thin layer over `fix_paths` that prints diffs and the summary."""

from __future__ import annotations

from pathlib import Path

import click

from portcheck.cli import TargetType
from portcheck.targets import FIX_TARGETS, fix_target_for

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "-t",
    "--target",
    type=TargetType(FIX_TARGETS),
    help="Any case. generic: any accelerator through torch.accelerator, CPU fallback; cpu: resolve to the CPU; "
    'neuron: generic, or "neuron" with literal-device; xla: torch_xla '
    "[default: the config's target (generic for all), else generic].",
)
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff and write nothing.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when anything would change.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes marked unsafe (review the diff).")
@click.option("--select", multiple=True, help="Rule codes, prefixes, categories or names to fix (comma-separated).")
@click.option(
    "--ignore", multiple=True, help="Rule codes, prefixes, categories or names to leave alone (comma-separated)."
)
@click.option("--exclude", multiple=True, help="Globs to exclude (replaces the configured list).")
@click.option("--extend-exclude", multiple=True, help="Globs to exclude in addition to the configured ones.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    help="Use this config file instead of searching for one.",
)
@click.option("-j", "--jobs", type=click.IntRange(1, 256), help="Worker processes [default: all cores].")
def fix(paths, target, show_diff, check, unsafe_fixes, select, ignore, exclude, extend_exclude, config_file, jobs):
    """Rewrite PATHS (default: the current folder) so device code runs off CUDA.

    Exit codes: 0 nothing left for a person, 1 findings remain (or, with --check/--diff, something
    would change), 2 usage or configuration error.
    """
    from portcheck.cli import _load, _split
    from portcheck.fixer.paths import fix_paths
    from portcheck.fixer.summary import summary_text
    from portcheck.model import Severity

    paths = list(paths) or [Path(".")]
    overrides = dict(select=_split(select) or None, ignore=_split(ignore) or None, exclude=_split(exclude) or None)
    catalog, config = _load(paths, config_file, overrides)
    target = target or fix_target_for(config.target)
    if extend_exclude:
        config = config.merged(extend_exclude=tuple(config.extend_exclude) + _split(extend_exclude))
    write = not (show_diff or check)
    report = fix_paths(
        paths, target=target, unsafe=unsafe_fixes, write=write, config=config, catalog=catalog, jobs=jobs
    )
    if show_diff:
        for item in report.changed:
            click.echo(item.diff(), nl=False)
    rules = {entry.rule.code: entry.rule for entry in catalog.rules}
    click.echo(summary_text(report, rules), err=True, nl=False)

    threshold = Severity(config.fail_on).rank
    remaining = [item for item in report.left if item.finding.severity.rank >= threshold]
    would_change = not write and bool(report.changed)
    raise click.exceptions.Exit(EXIT_FINDINGS if remaining or report.refused or would_change else EXIT_OK)
