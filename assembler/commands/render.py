"""`ctxasm render`: the context an agent started in a directory sees."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import click

from ..assembly import Assembly, assemble
from ..clients import registry
from ..compaction import Compaction
from ..display import counted
from ..errors import RequestError
from ..live.side_by_side import Elsewhere, loading_elsewhere
from ..output.tiers import RequestOptions
from ..request import checked_date
from .echo import finish, write_output
from .format_option import format_option
from .options import (
    Command,
    DiscoveryArgs,
    compact_options,
    discovery_options,
    out_option,
    path_argument,
    subagent_option,
)
from .request_options import request_options


def _date(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise click.BadParameter(f"{value!r} is not a date like 2026-01-31")
    try:
        return checked_date(value)
    except RequestError:
        raise click.BadParameter(f"{value!r} is not a calendar date like 2026-01-31") from None


@click.command(
    "render",
    cls=Command,
    examples=(
        "ctxasm render                        # what an agent started here loads",
        "ctxasm render services/api --touch services/api/src/app.ts --format markdown",
        "ctxasm render --format anthropic --ttl 1h --out request.json",
    ),
)
@path_argument
@discovery_options
@subagent_option
@compact_options
@format_option
@click.option(
    "--date",
    callback=_date,
    help="Date for a client's own format (YYYY-MM-DD; default today).",
)
@out_option
@request_options(api=True)
def render(
    path: Path,
    discovery: DiscoveryArgs,
    after: Compaction | None,
    fmt: str | None,
    date: str | None,
    out: Path | None,
    env: bool,
    request: RequestOptions | None,
    subagent: str | None,
) -> int:
    """Print the context an agent started in PATH would see."""
    options = discovery.options()
    options["subagent"] = subagent
    options["after_compact"] = after
    assembly = assemble(path, environment=env, **options)
    write_output(assembly.render(fmt, date=date, options=request), out, assembly)
    if elsewhere := loading_elsewhere(assembly, path, **options):
        click.echo(f"ctxasm: {elsewhere_line(assembly, elsewhere)}", err=True)
    elif not assembly.sources and not assembly.diagnostics:  # else they say why
        click.echo(f"ctxasm: {nothing_line(assembly)}", err=True)
    return finish(assembly)


def nothing_line(assembly: Assembly) -> str:
    """One line when the context holds no instruction file (and no other agent loads one
    here): render printed nothing, exit 0, and a user could not tell why."""
    title = registry.get(assembly.policy.client).title
    if assembly.agent is not None:
        return (
            f"the {assembly.agent.name} agent starts with no instruction files here ({title} "
            "gives it none); `ctxasm explain --subagent NAME` shows what each agent gets"
        )
    return (
        f"nothing loads here for {title}: no instruction file in any place it reads; "
        "`ctxasm explain --all` lists every place"
    )


def elsewhere_line(assembly: Assembly, elsewhere: Sequence[Elsewhere]) -> str:
    """One line: nothing loads for this agent, but these agents load files here."""
    others = "; ".join(
        f"{e.title} loads {counted(e.files, 'file')} (--policy {e.policy})" for e in elsewhere
    )
    title = registry.get(assembly.policy.client).title
    return (
        f"nothing loads here for {title}; {others}; all side by side: ctxasm explain --policy all"
    )
