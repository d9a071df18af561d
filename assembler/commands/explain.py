"""`ctxasm explain`: every candidate source and its fate; with `all`, every agent side by side."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..clients import registry
from ..compaction import Compaction
from ..live import compact_view, explain_view, side_by_side_view
from ..live.explain import explain as run_explain
from ..live.side_by_side import side_by_side
from ..policy import agent_policy
from .echo import write_output
from .options import (
    Command,
    DiscoveryArgs,
    compact_options,
    discovery_options,
    path_argument,
    subagent_option,
)


@click.command(
    "explain",
    cls=Command,
    examples=(
        "ctxasm explain services/api",
        "ctxasm explain --policy all --touch src/app.ts",
        "ctxasm explain --json | jq '.sources[] | select(.status == \"skipped\")'",
    ),
)
@path_argument
@discovery_options
@subagent_option
@compact_options
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="The same facts as JSON (schema in docs/explain-and-watch.md).",
)
@click.option(
    "--all", "show_all", is_flag=True, help="Also list candidate locations that do not exist."
)
@click.option(
    "--client",
    help="A client, with its built-in policy (like --policy); 'all': every agent side by "
    "side, as --policy all.",
)
def explain(
    path: Path,
    discovery: DiscoveryArgs,
    after: Compaction | None,
    as_json: bool,
    show_all: bool,
    client: str | None,
    subagent: str | None,
) -> int:
    """Every candidate source in load order: why it is there, its size, what became of it.
    With --policy all (or --client all): every agent side by side, and where they differ."""
    if client is not None and discovery.policy is not None:
        raise click.UsageError("--client and --policy both name a policy; give one")
    if "all" in (client, discovery.policy):
        if show_all:
            raise click.UsageError("--all lists one agent's absent candidates; not with all")
        if subagent is not None:
            raise click.UsageError("--subagent names one agent's subagent; not with all")
        if after is not None:
            raise click.UsageError("--after-compact shows one agent's compaction; not with all")
        return _side_by_side(path, discovery, as_json)
    options = discovery.options()
    options["after_compact"] = after
    if client is not None:
        options["policy"] = agent_policy(registry.get(client))
    options["subagent"] = subagent
    result = run_explain(path, **options)
    if as_json:
        text = explain_view.json_text(result, show_all=show_all)
    else:
        is_tty = explain_view.on_terminal()
        text = explain_view.text(result, environ=os.environ, is_tty=is_tty, show_all=show_all)
        if result.assembly.compacted is not None:
            text += "\n" + compact_view.text(result.assembly.compacted)
    write_output(text, None)
    return 1 if result.assembly.errors else 0


def _side_by_side(path: Path, discovery: DiscoveryArgs, as_json: bool) -> int:
    """`explain --policy all`: every agent side by side."""
    options = discovery.options()
    del options["policy"]
    result = side_by_side(path, **options)
    if as_json:
        text = side_by_side_view.json_text(result)
    else:
        is_tty = explain_view.on_terminal()
        text = side_by_side_view.text(result, environ=os.environ, is_tty=is_tty)
    write_output(text, None)
    return 1 if result.errors else 0
