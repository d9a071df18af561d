"""How `ctxasm explain --policy all` shows a `SideBySide`: tables (rich) or JSON.

The same console as `explain` (`explain_view.make_console`): colour only on a terminal, plain
text otherwise; a path never wraps, it is folded from the left (`explain_view.folded`).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ..display import dumps, shown
from .explain import Skip, Status
from .explain_view import STATUS_STYLE, diagnostic_json, make_console, unbroken, use_color
from .explain_view import folded as fold_path
from .side_by_side import AgentRun, Cell, FileRow, Passage, SideBySide

if TYPE_CHECKING:
    from rich.table import Table

SCHEMA_VERSION = 1
MAX_PASSAGES = 50  # paragraphs the terminal lists; --json has them all
MIN_FILE = 16  # below this the files table may be wider than the terminal
GAP = 2


# --- JSON ---------------------------------------------------------------------------------


def side_by_side_json(result: SideBySide) -> dict[str, Any]:
    """The comparison as plain data; the schema is in docs/explain-and-watch.md."""
    return {
        "version": SCHEMA_VERSION,
        "cwd": str(result.cwd),
        "project_root": str(result.project_root),
        "touched": list(result.touched),
        "agents": [_agent_json(a) for a in result.agents],
        "files": [_file_json(row, result.agents) for row in result.files],
        "drift": [_passage_json(p) for p in result.drift],
        "summary": {
            "files": len(result.files),
            "shared_files": sum(1 for row in result.files if row.shared),
            "drift_paragraphs": len(result.drift),
            "drift_tokens": result.drift_tokens,
        },
    }


def _agent_json(agent: AgentRun) -> dict[str, Any]:
    e = agent.explanation
    diagnostics = e.assembly.diagnostics
    return {
        "client": agent.client,
        "policy": e.assembly.policy.name,
        "client_version": e.assembly.client_version or None,
        "sources": agent.loaded,
        "tokens": e.total,
        "cut_tokens": agent.cut_tokens,
        "max_tokens": e.budget,
        "errors": len(e.assembly.errors),
        "diagnostics": len(diagnostics),
        "notes": [diagnostic_json(d) for d in e.notes],
    }


def _file_json(row: FileRow, agents: Sequence[AgentRun]) -> dict[str, Any]:
    return {
        "path": row.path,
        "file": row.file,
        "shared": row.shared,
        "agents": [
            {
                "client": agent.client,
                "path": cell.path or None,
                "status": cell.status.value if cell.status else None,
                "skip": cell.skip.value if cell.skip else None,
                "tokens": cell.tokens,
                "cut_tokens": cell.cut_tokens,
                "lazy": cell.lazy,
                "detail": cell.detail or None,
                "notes": [diagnostic_json(d) for d in cell.notes],
            }
            for agent, cell in zip(agents, row.cells, strict=True)
        ],
    }


def _passage_json(passage: Passage) -> dict[str, Any]:
    return {
        "text": passage.text,
        "lines": passage.lines,
        "tokens": passage.tokens,
        "seen": [
            {"client": s.client, "whole": s.whole, "files": list(s.files)} for s in passage.seen
        ],
        "missed": list(passage.missed),
        "line": passage.line,
    }


def json_text(result: SideBySide) -> str:
    return dumps(side_by_side_json(result), indent=2) + "\n"


# --- terminal -----------------------------------------------------------------------------


def cell_kind(cell: Cell) -> str:
    """A file's fate in one agent's run, in a word: "none" (never looked for), "loaded",
    "attached", "cut", "dropped", "not matched" or "skipped"."""
    if cell.status is None:
        return "none"
    if cell.status is Status.LOADED:
        return "attached" if cell.lazy else "loaded"
    if cell.status is Status.TRUNCATED:
        return "cut"
    if cell.skip is Skip.BUDGET:
        return "dropped"
    return "not matched" if cell.skip is Skip.NOT_MATCHED else "skipped"


def cell_words(cell: Cell) -> str:
    """A file's fate in one agent's column."""
    kind = cell_kind(cell)
    if kind == "none":
        return "-"
    return f"cut -{cell.cut_tokens:,}" if kind == "cut" else kind


def _cell_style(cell: Cell) -> str:
    if cell.status is None:
        return "dim"
    return "yellow" if cell.skip is Skip.BUDGET else STATUS_STYLE[cell.status]


def show(result: SideBySide, *, file: TextIO, environ: Mapping[str, str], is_tty: bool) -> None:
    """Print the agents, the files each loads, and the text only some agents see."""
    color = use_color(environ, is_tty)
    console = make_console(file, environ, is_tty)
    width = console.width

    def say(line: str, style: str = "") -> None:
        console.print(unbroken(line, width), style=style if color else "", overflow="fold")

    names = ", ".join(a.client for a in result.agents)
    say(f"ctxasm explain: {shown(str(result.cwd))} (every agent: {names})")
    if result.touched:
        say(f"touched: {', '.join(shown(t) for t in result.touched)}")
    console.print(_agents_table(result.agents))
    console.print()
    if not result.files:
        say("no agent loads a file here")
        return
    console.print(_files_table(result, color, width))
    for line in _details(result):
        say(line, "dim")
    for agent in result.agents:  # what no file row explains (settings, rules directories)
        for note in agent.explanation.notes:
            say(f"{agent.client}: {note.line()}")
    shared = sum(1 for row in result.files if row.shared)
    say(f"files: {shared} of {len(result.files)} loaded whole by every agent")
    if not result.drift:
        say("text: agents that load the same file see the same text in it")
        return
    count = len(result.drift)
    console.print()
    say(
        f"text only some agents see: {count} paragraph{'s' if count != 1 else ''}, "
        f"{result.drift_tokens:,} tokens"
    )
    for number, passage in enumerate(result.drift[:MAX_PASSAGES], 1):
        for i, line in enumerate(_passage_lines(number, passage, width)):
            say(line, "dim" if color and i else "")
    if count > MAX_PASSAGES:
        say(f"{count - MAX_PASSAGES:,} more paragraphs not listed; --json lists them all")


def text(result: SideBySide, *, environ: Mapping[str, str], is_tty: bool) -> str:
    """What `show` prints, as one string (as `explain_view.text`)."""
    buffer = io.StringIO()
    show(result, file=buffer, environ=environ, is_tty=is_tty)
    return buffer.getvalue()


def _agents_table(agents: Sequence[AgentRun]) -> Table:
    """Per agent: the release modelled, sources, tokens, tokens cut; its policy when not named
    after the client."""
    from rich import box
    from rich.table import Table

    policies = [agent.explanation.assembly.policy.name for agent in agents]
    named = any(p != a.client for p, a in zip(policies, agents, strict=True))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True, show_edge=False)
    for name in ("agent", "policy") if named else ("agent",):
        table.add_column(name, no_wrap=True)
    table.add_column("version", no_wrap=True)
    for name in ("sources", "tokens", "cut"):
        table.add_column(name, justify="right", no_wrap=True)
    for agent, policy in zip(agents, policies, strict=True):
        table.add_row(
            shown(agent.client),
            *((shown(policy),) if named else ()),
            agent.explanation.assembly.client_version or "-",
            f"{agent.loaded:,}",
            f"{agent.explanation.total:,}",
            f"{agent.cut_tokens:,}",
        )
    return table


def _files_table(result: SideBySide, color: bool, width: int) -> Table:
    from rich import box
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    columns = [
        max([cell_len(shown(a.client)), *(len(cell_words(r.cells[i])) for r in result.files)])
        for i, a in enumerate(result.agents)
    ]
    number = len(str(len(result.files)))
    paths = [shown(row.path) for row in result.files]
    need = max([cell_len("file"), *map(cell_len, paths)])
    room = width - number - sum(columns) - GAP * (len(columns) + 1)
    file_width = max(MIN_FILE, min(need, room))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True, show_edge=False)
    table.add_column("#", no_wrap=True)
    table.add_column("file", width=file_width, no_wrap=True)
    for agent, cells in zip(result.agents, columns, strict=True):
        table.add_column(shown(agent.client), width=cells, no_wrap=True)
    for i, (row, path) in enumerate(zip(result.files, paths, strict=True), 1):
        table.add_row(
            str(i),
            fold_path(path, file_width),
            *(Text(cell_words(c), style=_cell_style(c) if color else "") for c in row.cells),
        )
    return table


def _details(result: SideBySide) -> list[str]:
    """One line per other name, cut, skip and finding of a file some agent loads, by row."""
    out = []
    for i, row in enumerate(result.files, 1):
        for agent, cell in zip(result.agents, row.cells, strict=True):
            if cell.path and cell.path != row.path:
                out.append(
                    f"{i:>3}  {shown(row.path)}: {agent.client}: reads it as {shown(cell.path)}"
                )
            if cell.detail and not cell.whole:
                out.append(f"{i:>3}  {shown(row.path)}: {agent.client}: {shown(cell.detail)}")
            out += [
                f"{i:>3}  {shown(row.path)}: {agent.client}: {n.severity.value}: "
                f"{shown(n.message)} [{n.code}]"
                for n in cell.notes
            ]
    return out


def _passage_lines(number: int, passage: Passage, width: int) -> list[str]:
    whole = [s.client for s in passage.seen if s.whole]
    part = [s.client for s in passage.seen if not s.whole]
    says = []
    if whole:
        says.append(f"seen by {', '.join(whole)}")
    if part:
        says.append(f"only its start by {', '.join(part)}")
    if passage.missed:
        says.append(f"not by {', '.join(passage.missed)}")
    where: dict[str, list[str]] = {}
    for sighting in passage.seen:
        for path in sighting.files:
            where.setdefault(path, []).append(sighting.client)
    files = ", ".join(f"{shown(path)} ({', '.join(who)})" for path, who in where.items())
    first = passage.line
    rest = passage.lines - 1
    more = f" (+{rest} line{'s' if rest != 1 else ''})" if rest else ""
    return [
        f"{number:>3}  {passage.tokens:,} tokens: {'; '.join(says)}",
        f"     in {files}",
        "     > " + _clipped(shown(first), width - 7 - len(more)) + more,
    ]


def _clipped(text: str, width: int) -> str:
    """`text` in at most `width` cells, its end replaced by an ellipsis when cut."""
    from rich.cells import cell_len

    if cell_len(text) <= width:
        return text
    text = text[: max(0, width)]
    while text and cell_len(text) + 1 > width:
        text = text[:-1]
    return text + "…"
