"""`ctxasm watch`: render again whenever a source, or a place where one could appear, changes."""

from __future__ import annotations

import contextlib
import logging
import signal
from pathlib import Path

import click

from ..live.assembler import Assembler
from ..live.watch import Update, Watcher, printable
from .echo import report, write_output
from .format_option import format_option
from .options import Command, DiscoveryArgs, discovery_options, out_option, path_argument


@click.command(
    "watch",
    cls=Command,
    examples=(
        "ctxasm watch --out context.xml",
        "ctxasm watch services/api --format markdown",
    ),
)
@path_argument
@discovery_options
@format_option
@out_option
@click.option(
    "--debounce",
    type=click.IntRange(min=0),
    default=100,
    show_default=True,
    help="Milliseconds of quiet before rendering again.",
)
def watch(
    path: Path,
    discovery: DiscoveryArgs,
    fmt: str | None,
    out: Path | None,
    debounce: int,
) -> int:
    """Render again whenever a source, or a place where one could appear, changes."""
    _quiet_ending()
    assembler = Assembler(path, **discovery.options(touched=False))
    with (
        Watcher(
            assembler,
            render=lambda a: a.render(fmt),
            touched=discovery.touched,
            debounce=debounce / 1000,
            out=out,
        ) as watcher,
        contextlib.suppress(KeyboardInterrupt),  # Ctrl-C is how a watch ends: exit 0
    ):
        for update in watcher.updates():
            if not _shown(update, out):
                break  # the reader has gone: nobody is left to watch for
    return 0


def _quiet_ending() -> None:
    """Ctrl-C and SIGTERM end a watch quietly."""
    # Ctrl-C must end a watch even when it was started from a shell that ignores SIGINT in
    # background jobs (Python then installs no handler of its own); SIGTERM ends it cleanly too.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    # watchdog logs a race of its own threads at shutdown as an error ("queue_events()
    # called when the thread is inactive"); with no handler Python would print it to
    # stderr after our last line. What a watch must report reaches us as exceptions.
    logging.getLogger("watchdog").addHandler(logging.NullHandler())


def _shown(update: Update, out: Path | None) -> bool:
    """The update's line and diagnostics on stderr, its render on stdout or into `out`;
    False when stdout's reader has gone."""
    click.echo(update.line, err=True)
    report(update.diagnostics)
    if update.text is None:
        return True
    return write_output(update.text if out else printable(update.text), out, update.assembly)
