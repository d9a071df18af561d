"""How `ctxasm explain` shows an `Explanation`: a table and a budget bar (rich), or JSON.

rich is imported only here, inside `show`, so `import assembler` and `ctxasm lint` never load
it. Colour only on a terminal and never when `NO_COLOR` is set (https://no-color.org): then
the output is plain text without a single escape code, each layer drawn with its own letter.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from ..clients import registry
from ..display import counted, dumps, shown
from ..model import AgentType, Diagnostic, Layer, Why
from ..output.render import agent_json
from ..tokens import estimated
from .explain import Explanation, Row, Skip, Status, rules_order_text

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from ..assembly import Assembly

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


def _modelled(assembly: Assembly) -> str:
    """`, <client title> <release>`: the release of its client the assembly models ("" for none)."""
    if not assembly.client_version:
        return ""
    return f", {registry.get(assembly.policy.client).title} {assembly.client_version}"


def explanation_json(explanation: Explanation, *, show_all: bool = False) -> dict[str, Any]:
    """The explanation as plain data; the schema (version 1) is in docs/explain-and-watch.md."""
    a = explanation.assembly
    data: dict[str, Any] = {
        "version": SCHEMA_VERSION,
        "policy": a.policy.name,
        "client_version": a.client_version or None,
        "cwd": str(a.context.cwd),
        "project_root": str(a.context.project_root),
        "rules_order": explanation.rules_order.value if explanation.rules_order else None,
        "subagent": agent_json(a.agent) if a.agent is not None else None,
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
        "notes": [diagnostic_json(d) for d in explanation.notes],
        "subagents": agents_json(explanation),
        "subagents_note": explanation.agents_note or None,
    }
    if a.compacted is not None:
        data["after_compact"] = a.compacted.as_json()
    return data


def agent_text(agent: AgentType, skills_here: bool = True) -> str:
    """A subagent type on one line: what it receives at its start (`skills_here`: whether
    there are skills to list in this context)."""
    files = (
        "the main agent's conversation, its files included"
        if agent.shares_parent
        else "the instruction files loaded at start"
        if agent.instructions
        else "no instruction files (only the date)"
    )
    skills = "the skills list" if agent.skills and skills_here else "no skills list"
    if agent.skills and not skills_here:
        skills += " (no skills here)"
    tools = ", ".join(agent.tools) if agent.tools else "all tools"
    if agent.excluded:
        tools += f" but {', '.join(agent.excluded)}"
    model = agent.model or "the main agent's model"
    prompt = f"; its own prompt, {len(agent.prompt):,} chars" if agent.prompt else ""
    origin = shown(agent.origin)
    return f"{agent.name} ({origin}): {files}; {skills}; {tools}; {model}{prompt}"


def agent_lines(explanation: Explanation) -> list[str]:
    """The subagents section: each agent type beside the main agent, the instruction files it
    receives of those the main agent loaded at start, and the client's plain words."""
    rows = explanation.agents
    if not rows:
        return []
    main = rows[0]
    width = max(len(shown(r.name)) for r in rows)
    out = ["subagents: what each agent type receives at its start, beside the main agent"]
    for row in rows:
        if row.shares_parent:
            files = "the main agent's whole conversation, its reads included"
        elif row is main:
            files = f"{counted(len(row.files), 'instruction file')} loaded at start"
        elif not row.files:  # before "the same": not "the same 0 instruction files"
            files = "no instruction files"
        elif row.files == main.files:
            files = f"the same {counted(len(row.files), 'instruction file')}"
        else:
            files = f"{counted(len(row.files), 'instruction file')}: " + ", ".join(
                shown(f) for f in row.files
            )
        skills = "skills list" if row.skills else "no skills list"
        origin = f" ({shown(row.origin)})" if row.origin else ""
        out.append(f"  {shown(row.name):<{width}}  {files}; {skills}{origin}")
    if explanation.agents_note and main.files:  # nothing to start without, else
        out.append(f"  {explanation.agents_note}.")
    return out


def agents_json(explanation: Explanation) -> list[dict[str, Any]]:
    return [
        {
            "name": r.name,
            "origin": r.origin or None,
            "files": list(r.files),
            "skills": r.skills,
            "shares_parent": r.shares_parent,
        }
        for r in explanation.agents
    ]


def diagnostic_json(d: Diagnostic) -> dict[str, Any]:
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
        "notes": [diagnostic_json(d) for d in row.notes],
    }


# --- terminal -----------------------------------------------------------------------------


def on_terminal() -> bool:
    """Whether stdout is a terminal: then colour (unless `NO_COLOR`), and rich measures it."""
    return sys.stdout is not None and sys.stdout.isatty()


def use_color(environ: Mapping[str, str], is_tty: bool) -> bool:
    return is_tty and not environ.get("NO_COLOR")


def make_console(file: TextIO, environ: Mapping[str, str], is_tty: bool) -> Console:
    """The console explain prints with: colour only on a terminal without `NO_COLOR`; without
    a terminal, `COLUMNS` wide, else `PLAIN_WIDTH`."""
    from rich.console import Console

    color = use_color(environ, is_tty)
    columns = environ.get("COLUMNS", "")
    return Console(
        file=file,
        color_system="auto" if color else None,
        force_terminal=color,
        no_color=not color,
        highlight=False,
        markup=False,
        emoji=False,
        width=None if is_tty else int(columns) if columns.isdigit() else PLAIN_WIDTH,
    )


def show(
    explanation: Explanation,
    *,
    file: TextIO,
    environ: Mapping[str, str],
    is_tty: bool,
    show_all: bool = False,
) -> None:
    """Print the table of sources, the notes and the budget picture to `file`."""
    color = use_color(environ, is_tty)
    console = make_console(file, environ, is_tty)
    a = explanation.assembly
    width = console.width

    def say(line: str, style: str = "") -> None:
        console.print(unbroken(line, width), style=style, overflow="fold")

    say(f"ctxasm explain: {shown(str(a.context.cwd))} (policy {a.policy.name}{_modelled(a)})")
    order = explanation.rules_order
    if order is not None and show_all:  # the same every run: shown when everything is asked
        client = explanation.assembly.policy.client
        say(f"rules order: {order.value}: {rules_order_text(order, client)}")
    if a.agent is not None:
        skills_here = any(s.reason.why is Why.SKILLS for s in a.sources)
        say(f"subagent: {agent_text(a.agent, skills_here)}")
    if a.touched:
        say(f"touched: {', '.join(shown(t) for t in a.touched)}")
    rows, left_out = listed(explanation.visible(show_all))
    console.print(_table(rows, color, width))
    for line in _details(rows):
        say(line, "dim" if color else "")
    if left_out:
        kinds = ", ".join(f"{kind}: {n:,}" for kind, n in left_out.items())
        console.print(
            f"{sum(left_out.values()):,} more skipped candidates not listed ({kinds}): "
            f"the table lists {MAX_SKIPPED_ROWS} of each kind; --json lists them all"
        )
    if not show_all and (absent := sum(r.status is Status.ABSENT for r in explanation.rows)):
        them = (
            "1 candidate location does not"
            if absent == 1
            else f"{absent:,} candidate locations do not"
        )
        console.print(f"{them} exist (--all lists them)")
    for note in explanation.notes:
        say(note.line())
    for line in agent_lines(explanation):
        say(line)
    for picture in _budget(explanation, color, min(BAR_WIDTH, console.width - 2)):
        console.print(picture)


def text(
    explanation: Explanation,
    *,
    environ: Mapping[str, str],
    is_tty: bool,
    show_all: bool = False,
) -> str:
    """What `show` prints, as one string: written at once, a reader that has gone is one
    error line, not one per row."""
    buffer = io.StringIO()
    show(explanation, file=buffer, environ=environ, is_tty=is_tty, show_all=show_all)
    return buffer.getvalue()


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


def _status_words(row: Row) -> str:
    word = row.status.value
    if row.status is Status.TRUNCATED and row.cuts:
        word += f" -{sum(c.tokens for c in row.cuts):,} tokens"
    elif row.skip is not None:
        word += f"\n{row.skip.value}"
    return word


def _status(row: Row, color: bool) -> Text:
    from rich.text import Text

    style = "yellow" if row.skip is Skip.BUDGET else STATUS_STYLE[row.status]
    return Text(_status_words(row), style=style if color else "")


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


def folded(path: str, width: int) -> str:
    """`path` in at most `width` cells, folded from the left: `…/rules/name.md`, cut after a
    `/` where that leaves the name whole."""
    from rich.cells import cell_len

    if cell_len(path) <= width:
        return path
    room = max(1, width - 1)  # the ellipsis takes one cell
    tail = ""
    slash = path.rfind("/")
    while slash > 0 and cell_len(path[slash:]) <= room:  # from the right: at most `room` steps
        tail = path[slash:]
        slash = path.rfind("/", 0, slash)
    if not tail:  # even the name is too long: its last cells
        tail = path[-room:]
        while cell_len(tail) > room:
            tail = tail[1:]
    return "…" + tail


def unbroken(text: str, width: int) -> str:
    """`text` with each word (a path, mostly) longer than `width` cells folded from the left,
    so wrapping at spaces never splits one."""
    from rich.cells import cell_len

    if cell_len(text) <= width:
        return text
    return " ".join(folded(word, width) for word in text.split(" "))


def _number(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


NUMBERS = ("lines", "bytes", "chars", "tokens")
DROPPED_FIRST = ("bytes", "chars", "lines")  # tokens stay: they are what the budget counts
SOURCE = "source (why it is there)"
GAP = 2  # cells between two columns
MIN_SOURCE = 16  # below this the table may be wider than the terminal


class Layout(NamedTuple):
    numbers: tuple[str, ...]  # the number columns shown
    status: int  # cells of the status column
    source: int  # cells of the source column: every path fits in it, folded if need be


def layout(rows: Sequence[tuple[int, Row]], width: int) -> Layout:
    """Column widths for a table at most `width` cells wide where no path wraps and each
    reason (the "why it is there" under a path) takes at most two lines: when they do not
    fit, the status column wraps between words, then the number columns go (bytes, chars,
    lines), then reasons take more lines, then paths are folded from the left (`folded`).
    The source column takes the room left, up to its longest line."""
    from rich.cells import cell_len

    def wide(header: str, cells: Sequence[str]) -> int:
        return max([cell_len(header), *map(cell_len, cells)])

    numbers = {n: wide(n, [_number(getattr(r, n)) for _, r in rows]) for n in NUMBERS}
    statuses = [_status_words(r) for _, r in rows]
    status = wide("status", [line for s in statuses for line in s.split("\n")])
    fixed = wide("#", [str(i) for i, _ in rows])
    fixed += wide("layer", [r.layer.value if r.layer else "-" for _, r in rows])
    paths = [shown(r.path) for _, r in rows]
    reasons = [shown(r.reason.text) for _, r in rows if r.reason]
    need = wide(SOURCE.split(" ")[0], [*paths, *(w for r in reasons for w in r.split(" "))])
    want = max([need, *map(cell_len, paths), *(_two_lines(r) for r in reasons)])

    def room() -> int:
        return width - fixed - status - sum(numbers.values()) - GAP * (len(numbers) + 3)

    if room() < want:
        status = wide("status", [w for s in statuses for w in s.split()])
    for name in DROPPED_FIRST:
        if room() >= want:
            break
        del numbers[name]
    longest = max([need, *map(cell_len, paths), *map(cell_len, reasons)])
    return Layout(tuple(numbers), status, max(MIN_SOURCE, min(longest, room())))


def _two_lines(text: str) -> int:
    """The fewest cells in which `text` wraps at spaces into at most two lines."""
    from rich.cells import cell_len

    words = text.split(" ")
    if len(words) == 1:
        return cell_len(text)
    return min(
        max(cell_len(" ".join(words[:i])), cell_len(" ".join(words[i:])))
        for i in range(1, len(words))
    )


def _table(rows: Sequence[tuple[int, Row]], color: bool, width: int) -> Any:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    cols = layout(rows, width)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True, show_edge=False)
    for name in ("#", "layer"):
        table.add_column(name, no_wrap=True)
    table.add_column(SOURCE, width=cols.source)
    for name in cols.numbers:
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("status", width=cols.status)
    for i, row in rows:
        dim = "dim" if row.status is Status.ABSENT and color else ""
        source = Text(folded(shown(row.path), cols.source), style=dim)
        if row.reason is not None:
            reason = unbroken(shown(row.reason.text), cols.source)
            source.append("\n" + reason, style="dim" if color else "")
        table.add_row(
            Text(str(i), style=dim),
            Text(row.layer.value if row.layer else "-", style=dim),
            source,
            *(_number(getattr(row, name)) for name in cols.numbers),
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
    estimate = "estimated" if estimated(explanation.assembly.counter) else ""
    if budget:
        share = ", ".join(filter(None, (estimate, f"{100 * total / budget:.0f}%")))
        title = f"budget: {total:,} of {budget:,} tokens ({share})"
        if total > budget:
            title += f", over by {total - budget:,}"
    else:
        title = f"budget: {total:,} tokens{f' ({estimate})' if estimate else ''}, no total budget (--max-tokens)"
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
        legend.append(f" {lt.layer.value} {lt.tokens:,} ({counted(lt.sources, 'source')})  ")
    if explanation.boundary_tokens:
        legend.append(f"| boundary {explanation.boundary_tokens:,}  ")
    if budget > total:
        legend.append(f". free {budget - total:,}")
    return [Text(title), bar, legend]


def json_text(explanation: Explanation, *, show_all: bool = False) -> str:
    return dumps(explanation_json(explanation, show_all=show_all), indent=2) + "\n"
