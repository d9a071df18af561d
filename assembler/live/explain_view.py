"""How `ctxasm explain` shows an `Explanation`: a table and a budget bar (rich), or JSON.

rich is imported only here, inside `show`, so `import assembler` and `ctxasm lint` never load
it. Colour only on a terminal and never when `NO_COLOR` is set (https://no-color.org): then
the output is plain text without a single escape code, each layer drawn with its own letter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ..display import dumps, shown
from ..model import Diagnostic, Layer
from .explain import RULES_ORDER, Explanation, Row, Skip, Status

if TYPE_CHECKING:
    from rich.text import Text

SCHEMA_VERSION = 1
BAR_WIDTH = 60
PLAIN_WIDTH = 120  # when not on a terminal and COLUMNS is unset (rich would use 80)

# (letter in plain output, colour) per layer; a coloured bar uses full blocks.
LAYER_LOOK = {
    Layer.BASE: ("B", "bright_black"),
    Layer.MANAGED: ("M", "magenta"),
    Layer.USER: ("U", "blue"),
    Layer.PROJECT: ("P", "green"),
    Layer.LOCAL: ("L", "cyan"),
    Layer.SUBDIRECTORY: ("S", "yellow"),
    Layer.MEMORY: ("A", "red"),
    Layer.ENVIRONMENT: ("E", "white"),
}
STATUS_STYLE = {
    Status.LOADED: "green",
    Status.TRUNCATED: "yellow",
    Status.SKIPPED: "red",
    Status.ABSENT: "dim",
}


# --- JSON ---------------------------------------------------------------------------------


def explanation_json(explanation: Explanation, *, show_all: bool = False) -> dict[str, Any]:
    """The explanation as plain data; the schema (version 1) is in docs/explain-and-watch.md."""
    a = explanation.assembly
    return {
        "version": SCHEMA_VERSION,
        "policy": a.policy.name,
        "cwd": str(a.context.cwd),
        "project_root": str(a.context.project_root),
        "rules_order": explanation.rules_order.value if explanation.rules_order else None,
        "touched": list(a.touched),
        "sources": [_row_json(r) for r in explanation.visible(show_all)],
        "budget": {
            "max_tokens": explanation.budget,
            "total": explanation.total,
            "boundary": explanation.boundary_tokens,
            "layers": [
                {"layer": lt.layer.value, "sources": lt.sources, "tokens": lt.tokens}
                for lt in explanation.layers
            ],
        },
        "notes": [_diagnostic_json(d) for d in explanation.notes],
    }


def _diagnostic_json(d: Diagnostic) -> dict[str, Any]:
    return {"code": d.code, "severity": d.severity.value, "path": d.path, "message": d.message}


def _row_json(row: Row) -> dict[str, Any]:
    reason = row.reason
    return {
        "layer": row.layer.value if row.layer else None,
        "path": row.path,
        "file": row.file,
        "why": reason.why.name.lower() if reason else None,
        "reason": reason.text if reason else None,
        "parent": reason.parent if reason else None,
        "depth": reason.depth if reason else None,
        "pattern": reason.pattern if reason else None,
        "touched": reason.touched if reason else None,
        "status": row.status.value,
        "skip": row.skip.value if row.skip else None,
        "code": row.code or None,
        "detail": row.detail or None,
        "lines": row.lines,
        "bytes": row.bytes,
        "chars": row.chars,
        "tokens": row.tokens,
        "cuts": [c._asdict() for c in row.cuts],
        "paths": list(row.paths),
        "lazy": row.lazy,
        "notes": [_diagnostic_json(d) for d in row.notes],
    }


# --- terminal -----------------------------------------------------------------------------


def use_color(environ: Mapping[str, str], is_tty: bool) -> bool:
    return is_tty and not environ.get("NO_COLOR")


def show(
    explanation: Explanation,
    *,
    file: TextIO,
    environ: Mapping[str, str],
    is_tty: bool,
    show_all: bool = False,
) -> None:
    """Print the table of sources, the notes and the budget picture to `file`."""
    from rich.console import Console

    color = use_color(environ, is_tty)
    columns = environ.get("COLUMNS", "")
    console = Console(
        file=file,
        color_system="auto" if color else None,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        markup=False,
        emoji=False,
        width=None if is_tty else int(columns) if columns.isdigit() else PLAIN_WIDTH,
    )
    a = explanation.assembly
    console.print(f"ctxasm explain: {shown(str(a.context.cwd))} (policy {a.policy.name})")
    order = explanation.rules_order
    if order is not None:
        console.print(f"rules order: {order.value}: {RULES_ORDER[order]}")
    if a.touched:
        console.print(f"touched: {', '.join(shown(t) for t in a.touched)}")
    rows, left_out = listed(explanation.visible(show_all))
    console.print(_table(rows, color))
    for line in _details(rows):
        console.print(line, style="dim" if color else "", overflow="fold")
    if left_out:
        kinds = ", ".join(f"{kind}: {n:,}" for kind, n in left_out.items())
        console.print(
            f"{sum(left_out.values()):,} more skipped candidates not listed ({kinds}): "
            f"the table lists {MAX_SKIPPED_ROWS} of each kind; --json lists them all"
        )
    if not show_all and (absent := sum(r.status is Status.ABSENT for r in explanation.rows)):
        console.print(f"{absent} candidate locations do not exist (--all lists them)")
    for note in explanation.notes:
        console.print(note.line())
    for picture in _budget(explanation, color, min(BAR_WIDTH, console.width - 2)):
        console.print(picture)


# Skipped rows of one kind the table lists (a file of 200,000 missing imports, a clique of
# files that all import each other): a terminal table of them all would take minutes.
MAX_SKIPPED_ROWS = 100


def listed(rows: Sequence[Row]) -> tuple[list[tuple[int, Row]], dict[str, int]]:
    """(number, row) of the rows the table shows, and how many skipped rows of each kind it
    leaves out. Rows keep their numbers in the whole list."""
    shown: list[tuple[int, Row]] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(rows, 1):
        kind = row.skip.value if row.skip else row.status.value
        if row.status in (Status.SKIPPED, Status.ABSENT):
            seen[kind] = seen.get(kind, 0) + 1
            if seen[kind] > MAX_SKIPPED_ROWS:
                continue
        shown.append((number, row))
    return shown, {k: n - MAX_SKIPPED_ROWS for k, n in seen.items() if n > MAX_SKIPPED_ROWS}


def _status(row: Row, color: bool) -> Text:
    from rich.text import Text

    word = row.status.value
    if row.status is Status.TRUNCATED and row.cuts:
        word += f" -{sum(c.tokens for c in row.cuts):,} tokens"
    elif row.skip is not None:
        word += f"\n{row.skip.value}"
    style = "yellow" if row.skip is Skip.BUDGET else STATUS_STYLE[row.status]
    return Text(word, style=style if color else "")


def _details(rows: Sequence[tuple[int, Row]]) -> list[str]:
    """One line per explanation of a skip or a cut, and per other finding, by row number."""
    out: list[str] = []
    for i, row in rows:
        if row.detail and row.status is not Status.ABSENT:
            out.append(f"{i:>3}  {shown(row.path)}: {shown(row.detail)}")
        out += [
            f"{i:>3}  {shown(row.path)}: {n.severity.value}: {shown(n.message)}" for n in row.notes
        ]
    return out


def _number(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _table(rows: Sequence[tuple[int, Row]], color: bool) -> Any:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True, show_edge=False)
    for name in ("#", "layer"):
        table.add_column(name, no_wrap=True)
    table.add_column("source (why it is there)", overflow="fold")
    for name in ("lines", "bytes", "chars", "tokens"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("status")
    for i, row in rows:
        dim = "dim" if row.status is Status.ABSENT and color else ""
        source = Text(shown(row.path), style=dim)
        if row.reason is not None:
            source.append("\n" + shown(row.reason.text), style="dim" if color else "")
        table.add_row(
            Text(str(i), style=dim),
            Text(row.layer.value if row.layer else "-", style=dim),
            source,
            _number(row.lines),
            _number(row.bytes),
            _number(row.chars),
            _number(row.tokens),
            _status(row, color),
        )
    return table


def _cells(parts: Sequence[int], scale: int, width: int) -> list[int]:
    """Cells out of `width` per part when `scale` tokens fill the bar (largest remainder);
    a part with tokens gets at least one cell."""
    if scale <= 0:
        return [0] * len(parts)
    exact = [p * width / scale for p in parts]
    cells = [max(1 if p else 0, int(x)) for p, x in zip(parts, exact, strict=True)]
    order = sorted(range(len(parts)), key=lambda i: exact[i] - int(exact[i]), reverse=True)
    room = min(width, round(sum(exact))) - sum(cells)
    for i in order[: max(0, room)]:
        cells[i] += 1
    return cells


def _budget(explanation: Explanation, color: bool, width: int) -> list[Text]:
    """The budget picture: one stacked bar of tokens per layer against the total budget."""
    from rich.text import Text

    total, budget = explanation.total, explanation.budget
    if budget:
        share = f" ({100 * total / budget:.0f}%)" if budget else ""
        title = f"budget: {total:,} of {budget:,} tokens{share}"
        if total > budget:
            title += f", over by {total - budget:,}"
    else:
        title = f"budget: {total:,} tokens, no total budget (--max-tokens)"
    parts = [(LAYER_LOOK[lt.layer], lt.tokens) for lt in explanation.layers]
    parts.append((("|", "white"), explanation.boundary_tokens))
    cells = _cells([t for _, t in parts], max(total, budget), width)
    bar = Text("[")
    for ((letter, colour), _), n in zip(parts, cells, strict=True):
        bar.append(("\u2588" if color else letter) * n, style=colour if color else "")
    bar.append("." * (width - sum(cells)) + "]")
    legend = Text()
    for lt in explanation.layers:
        letter, colour = LAYER_LOOK[lt.layer]
        legend.append("\u2588" if color else letter, style=colour if color else "")
        count = f"{lt.sources} source{'s' if lt.sources != 1 else ''}"
        legend.append(f" {lt.layer.value} {lt.tokens:,} ({count})  ")
    if explanation.boundary_tokens:
        legend.append(f"| boundary {explanation.boundary_tokens:,}  ")
    if budget > total:
        legend.append(f". free {budget - total:,}")
    return [Text(title), bar, legend]


def json_text(explanation: Explanation, *, show_all: bool = False) -> str:
    return dumps(explanation_json(explanation, show_all=show_all), indent=2) + "\n"
