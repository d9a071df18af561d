"""`ctxasm lint`: check instruction files; the pre-commit hook's entry."""

from __future__ import annotations

from pathlib import Path

import click

from ..lint import lint as run_lint
from ..lint.report import render as render_findings
from ..lint.report import size_note, summary
from .echo import write_output
from .options import Command, DiscoveryArgs, start_discovery_options


def _codes(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """`--select CTX2,ctx301 --select CTX5` as ("CTX2", "CTX301", "CTX5")."""
    return tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())


@click.command(
    "lint",
    cls=Command,
    examples=(
        "ctxasm lint                          # every instruction file of the repo",
        "ctxasm lint services/api --format sarif   # the instruction files under it",
        "ctxasm lint --cwd services/api --select CTX2,CTX3",
    ),
)
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, path_type=Path),
    help="The directory an agent starts in: check its whole context and (without FILES) "
    "the instruction files that load there.",
)
@start_discovery_options
@click.option(
    "--select",
    multiple=True,
    callback=_codes,
    help="Only these codes or prefixes (comma-separated, repeatable).",
)
@click.option(
    "--ignore",
    multiple=True,
    callback=_codes,
    help="Skip these codes or prefixes (comma-separated, repeatable).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "json", "sarif")),
    default="text",
    show_default=True,
    help="text: one line per finding; json; sarif: for code scanning.",
)
@click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too, not only errors.")
@click.option(
    "--size-errors/--no-size-errors",
    default=False,
    help="A file over a size limit, or cut by its client, is an error (the pre-commit hook's "
    "default); [lint.severity] still sets a code's own.",
)
@click.option("--quiet", "-q", is_flag=True, help="No summary line after the findings.")
def lint(
    files: tuple[Path, ...],
    cwd: Path | None,
    discovery: DiscoveryArgs,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    fmt: str,
    strict: bool,
    size_errors: bool,
    quiet: bool,
) -> int:
    """Check instruction files (all of them under . when neither FILES nor --cwd is given)."""
    options = discovery.options(touched=False)
    result = run_lint(
        files, cwd=cwd, select=select, ignore=ignore, size_errors=size_errors, **options
    )
    write_output(render_findings(result.findings, fmt), None)
    if fmt == "text" and not quiet:
        if size_errors and (note := size_note(result.findings)):
            click.echo(note, err=True)
        counts = (len(result.files), result.ignored, result.memory, result.modelled)
        click.echo(summary(result.findings, *counts), err=True)
    return 1 if result.fails(strict=strict) else 0
