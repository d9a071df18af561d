"""`ctxasm verify`: run the installed agent headless against a local stand-in for its provider
and compare the instruction context it sends with ctxasm's, file by file and byte by byte."""

from __future__ import annotations

from pathlib import Path

import click

from ..clients import registry
from ..verify.check import TIMEOUT
from ..verify.check import verify as run_verify
from .echo import report, write_output
from .options import Command, path_argument

_VERIFIABLE = [c.name for c in registry.clients() if c.headless is not None]


@click.command(
    "verify",
    cls=Command,
    examples=(
        "ctxasm verify services/api       # the default agent's program, as installed",
        "ctxasm verify --touch src/app.ts  # and what reading that file attaches",
        "ctxasm verify --client-version 2.1.197  # predicted as another release",
    ),
)
@path_argument
@click.option(
    "--policy",
    type=click.Choice(_VERIFIABLE),
    default=registry.default_policy(),
    show_default=True,
    help="The agent whose program is run (its built-in policy predicts).",
)
@click.option(
    "--touch",
    "touch",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A file the agent is made to read, in turn; what it attaches is compared. Repeatable.",
)
@click.option("--bin", "program", help="The agent's program (default: found on PATH).")
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="The home whose files are copied for the run (default: ~; never written).",
)
@click.option(
    "--managed-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Managed policy directory ctxasm predicts with (default: the machine's, the one the agent reads).",
)
@click.option(
    "--client-version",
    help="Predict for this version instead of the one the program reports.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=TIMEOUT,
    show_default=True,
    help="Seconds one run of the program may take.",
)
def verify(
    path: Path,
    policy: str,
    touch: tuple[Path, ...],
    program: str | None,
    home: Path | None,
    managed_dir: Path | None,
    client_version: str | None,
    timeout: float,
) -> int:
    """Start the agent's own program in PATH, offline, and compare the instruction context it
    sends with ctxasm's: 0 the same, 1 different (the report says where), 2 it could not be
    run (docs/verify.md)."""
    verdict = run_verify(
        path,
        policy,
        reads=touch,
        program=program,
        home=home,
        managed_dir=managed_dir,
        version=client_version,
        timeout=timeout,
    )
    report(verdict.notes)
    for line in verdict.withheld:
        click.echo(f"ctxasm: verify: left out of the copy the agent ran in: {line}", err=True)
    write_output(verdict.text(), None)
    return 0 if verdict.agree else 1
