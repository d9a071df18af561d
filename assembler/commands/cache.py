"""`ctxasm cache`: the cache tiers of a run, or where the cache breaks against a snapshot."""

from __future__ import annotations

from pathlib import Path

import click

from ..assembly import assemble
from ..clients import registry
from ..display import shown
from ..errors import CacheError
from ..output.cache import (
    build_report,
    foreign,
    load_snapshot,
    report_json,
    report_text,
    snapshot_text,
)
from ..output.tiers import RequestOptions, plan_for
from .echo import columns, finish, wrapped, write_output
from .options import Command, DiscoveryArgs, discovery_options, path_argument
from .request_options import request_options


@click.command(
    "cache",
    cls=Command,
    examples=(
        "ctxasm cache --save before.json      # hashes and token counts, no text",
        "ctxasm cache --against before.json   # the first tier that changed; its cost",
    ),
)
@path_argument
@discovery_options
@request_options(api=False)
@click.option(
    "--against",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A snapshot (from --save) to compare with: the first diverging tier and the cost.",
)
@click.option(
    "--save",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write this run's snapshot here (hashes and token counts, no text).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def cache(
    path: Path,
    discovery: DiscoveryArgs,
    env: bool,
    request: RequestOptions | None,
    against: Path | None,
    save: Path | None,
    as_json: bool,
) -> int:
    """Per tier: tokens, hash and breakpoints; against a snapshot: where the cache breaks."""
    previous = load_snapshot(against) if against else None
    assembly = assemble(path, environment=env, **discovery.options())
    client = assembly.policy.client
    if previous is not None and foreign(previous, client):
        theirs = (
            registry.get(previous.client).title
            if previous.client in registry.names()
            else previous.client
        )
        raise CacheError(
            f"{against}: a snapshot of {theirs}'s context, and this run is "
            f"{registry.get(client).title}'s: compare it with --policy {previous.client}, or "
            "save one for this agent with --save"
        )
    result = build_report(plan_for(assembly, request), previous, client)
    if save:
        write_output(snapshot_text(result.snapshot), save, assembly, "--save")
        click.echo(f"ctxasm: snapshot saved to {shown(str(save))}", err=True)
    text = report_json(result) if as_json else wrapped(report_text(result, str(against)), columns())
    write_output(text, None)
    return finish(assembly)
