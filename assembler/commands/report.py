"""`ctxasm report`: one self-contained HTML page of what every agent loads in a directory."""

from __future__ import annotations

import os
import webbrowser
from pathlib import Path

import click

from ..display import counted, shown
from ..errors import CacheError
from ..model import Severity
from ..output.cache import snapshot_text
from ..output.write import write_file
from ..report.build import build, snapshots
from ..report.page import render
from .echo import sources_of
from .options import Command, DiscoveryArgs, agents_discovery_options, path_argument

DEFAULT_OUT = Path("ctxasm-report.html")


@click.command(
    "report",
    cls=Command,
    examples=(
        "ctxasm report              # ctxasm-report.html: every agent started here",
        "ctxasm report services/api --touch services/api/src/app.ts --open",
        "ctxasm report --against base-cache --out report.html",
    ),
)
@path_argument
@agents_discovery_options
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help=f"Write the page here (default: {DEFAULT_OUT} in the current directory).",
)
@click.option("--open", "open_page", is_flag=True, help="Open the page in the browser.")
@click.option(
    "--against",
    type=click.Path(file_okay=False, path_type=Path),
    help="A directory of cache snapshots, AGENT.json each (from --save-cache): what the "
    "change since costs each agent's prompt cache.",
)
@click.option(
    "--save-cache",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write each agent's cache snapshot (AGENT.json) into this directory, for a later "
    "--against.",
)
def report(
    path: Path,
    discovery: DiscoveryArgs,
    out: Path | None,
    open_page: bool,
    against: Path | None,
    save_cache: Path | None,
) -> int:
    """Write one page (HTML, self-contained) of what every agent loads in PATH: side by
    side, where the tokens go, what was skipped and why, lint findings, lazy loading, cache."""
    if save_cache is not None and not os.path.isdir(save_cache):
        raise CacheError(f"{save_cache}: no such directory; create it for --save-cache")
    previous = snapshots(against) if against is not None else None
    name = str(against) if against is not None else None
    result = build(path, against=previous, against_name=name, **discovery.options())
    target = out if out is not None else DEFAULT_OUT
    sources = [p for a in result.side.agents for p in sources_of(a.explanation.assembly)]
    project = result.side.project_root
    write_file(target, render(result), sources=sources, project=project)
    if save_cache is not None:
        for agent in result.agents:
            snapshot = snapshot_text(agent.cache.snapshot)
            file = save_cache / f"{agent.run.client}.json"
            write_file(file, snapshot, sources=sources, project=project, option="--save-cache")
    click.echo(shown(str(target)))
    if open_page and not webbrowser.open(Path(os.path.abspath(target)).as_uri()):
        click.echo(  # no display, no browser: it did nothing and said nothing
            f"ctxasm: no browser to open it with here; open {shown(str(target))} where there is one",
            err=True,
        )
    if result.errors:  # exit 1 said, not left to guess (the page holds the detail)
        lint_errors = sum(1 for f in result.lint.findings if f.severity is Severity.ERROR)
        found = [counted(lint_errors, "lint error")] if lint_errors else []
        if result.side.errors:
            found.append("a file an agent cannot load")
        said = " and ".join(found) or "errors"
        click.echo(f"ctxasm: the page shows {said}; `ctxasm lint` lists them", err=True)
    return 1 if result.errors else 0
