"""The report as one self-contained HTML page: `templates/report/page.html.j2`.

Jinja2 (imported here only, on the path that renders) escapes every value for HTML
(`autoescape`), and before that every text goes through the page's display form (`visible`,
the environment's `finalize`): a name, a message or a line of a file is one printable line
whatever it holds, its control characters, line separators and bidirectional controls
written as escapes (`display.shown`), tabs kept. The template cannot forget either: a value
is finalized and escaped wherever it is put. The page loads nothing: its Content Security
Policy allows no script, no request and no frame, only its own inline styles.
"""

from __future__ import annotations

from typing import Any

from .. import resources
from ..display import shown
from ..live.explain import Status
from ..live.side_by_side import Cell
from ..live.side_by_side_view import cell_kind, cell_words
from ..model import Layer
from .build import MAX_FILE_BYTES, Report

TEMPLATE = "report/page.html.j2"


def visible(text: str) -> str:
    """`text` as the page shows it: `display.shown` around its tabs."""
    if text.isprintable():
        return text
    return "\t".join(shown(part) for part in text.split("\t"))


def _finalize(value: Any) -> Any:
    # Only plain strings: a macro's output (`Markup`) is the page's own markup.
    return visible(value) if type(value) is str else value


def render(report: Report) -> str:
    """The page: the same report always gives the same bytes."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resources.data_dir("templates"))),
        autoescape=True,
        finalize=_finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    # jinja2's own `join` returns markup, which `finalize` would pass as it is.
    env.filters["join"] = lambda items, sep="": sep.join(visible(str(i)) for i in items)
    env.filters["num"] = lambda n: f"{n:,}"
    env.filters["cell"] = cell_words
    env.filters["cellclass"] = cell_class
    env.globals["zip"] = zip
    titles = {agent.run.client: agent.title for agent in report.agents}
    env.filters["agent_title"] = lambda client: titles.get(client, client)
    used = {segment.layer for agent in report.agents for segment in agent.bar.segments}
    return str(
        env.get_template(TEMPLATE).render(
            report=report,
            layers=[layer.value for layer in Layer],
            used_layers=[layer.value for layer in Layer if layer in used],
            Status=Status,
            marked=_marked(report),
            max_file_bytes=MAX_FILE_BYTES,
        )
    )


def cell_class(cell: Cell) -> str:
    """The class of a file's cell in one agent's column (how its words are coloured)."""
    kind = cell_kind(cell)
    return "skipped" if kind == "not matched" else kind


def _marked(report: Report) -> dict[int, frozenset[int]]:
    """The lines of each file text that a lint finding names (each gets an anchor)."""
    lines: dict[int, set[int]] = {}
    for group in report.lint_files:
        if group.card is not None:
            lines.setdefault(group.card.number, set()).update(f.line for f in group.findings)
    return {number: frozenset(found) for number, found in lines.items()}
