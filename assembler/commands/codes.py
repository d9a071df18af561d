"""`ctxasm codes`: the catalogue of diagnostic codes."""

from __future__ import annotations

import click

from ..clients.registry import catalogue
from ..codes import catalogue_json, catalogue_text
from .echo import columns, write_output
from .options import Command


@click.command(
    "codes",
    cls=Command,
    examples=(
        "ctxasm codes",
        "ctxasm codes --json",
    ),
)
@click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
def codes(as_json: bool) -> int:
    """List every diagnostic code: its name, severity in lint and at load, and summary."""
    entries = catalogue()
    write_output(catalogue_json(entries) if as_json else catalogue_text(entries, columns()), None)
    return 0
