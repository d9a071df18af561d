"""`ctxasm explain --policy all`: every agent of the repository side by side, and where they
disagree.

Each registered client that is a coding agent of a repository (`Client.repository_agent`:
not a fixed workspace) runs once in the same directory, with the same machine and touched
paths, under its own policy (`Client.default_policy`: by default the built-in policy named
after it), through `explain()`. Nothing here knows a client by name.

What disagrees is read from what each run gave, at two grains a team can act on:

* files: which agents load each file, whole, cut by a limit or the budget (as the budgeter
  recorded it), dropped, attached by a touch, or skipped (and why);
* paragraphs: text (blank-line separated blocks of the loaded content) that reaches only some
  agents, or reaches some only in part, when the file rows do not already tell it: an import
  one agent inlines and another leaves as a line, the part of a file one agent cuts, comments
  one agent strips. A paragraph whose agents are exactly the agents that load its file(s) whole
  is no news beyond the file row and is left out, and so is one whose every line the other
  agents that load its file see there too (in paragraphs of their own: a comment one agent
  keeps joins two lines the other sees apart). Paragraphs are listed by the first file
  they are in (in the files' order), then by their place in it.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Unpack

from ..assembly import Assembly
from ..assembly import run as assemble_run
from ..budget import BUDGET_MARKER
from ..clients import registry
from ..clients.base import Client
from ..discovery.disk import Disk
from ..errors import RequestError
from ..model import Diagnostic, Policy, Source, TokenCounter
from ..policy import agent_policy
from ..request import Options, PathLike, Request
from ..versions import INSTALLED, LATEST
from .explain import Explanation, Row, Skip, Status, explain


class AgentRun(NamedTuple):
    """One agent's run: its client's name and its whole explanation."""

    client: str
    explanation: Explanation

    @property
    def loaded(self) -> int:
        """Sources in its context (not dropped)."""
        return sum(1 for s in self.explanation.assembly.sources if not s.dropped)

    @property
    def cut_tokens(self) -> int:
        """Tokens its limits and budget cut from what it loaded."""
        return sum(c.tokens for s in self.explanation.assembly.sources for c in s.cuts)


class Cell(NamedTuple):
    """What became of one file in one agent's run."""

    status: Status | None  # None: the agent never looked for this file
    path: str = ""  # as this agent's run displays it (another agent may name it otherwise)
    skip: Skip | None = None
    tokens: int | None = None  # as loaded (after cuts); None when not in its context
    cut_tokens: int = 0
    lazy: bool = False  # attached by a touch
    detail: str = ""
    notes: tuple[Diagnostic, ...] = ()  # other findings of this agent's run about the file

    @property
    def whole(self) -> bool:
        return self.status is Status.LOADED

    @property
    def present(self) -> bool:
        """In the agent's context, whole or cut."""
        return self.status in (Status.LOADED, Status.TRUNCATED)


class FileRow(NamedTuple):
    """One file some agent loads, and what each agent (in `SideBySide.agents` order) did."""

    path: str  # as displayed (by the first agent that loads it)
    file: str  # its real path (a pseudo path, like `<managed-settings>`, as it is)
    cells: tuple[Cell, ...]

    @property
    def shared(self) -> bool:
        """Loaded whole by every agent."""
        return all(c.whole for c in self.cells)


class Sighting(NamedTuple):
    """One agent that sees a paragraph: whole or only its start, and in which files."""

    client: str
    whole: bool
    files: tuple[str, ...]  # displayed paths


class Passage(NamedTuple):
    """A paragraph not every agent sees whole."""

    text: str
    lines: int
    tokens: int
    seen: tuple[Sighting, ...]  # in agent order
    missed: tuple[str, ...]  # the agents that do not see it at all
    line: str  # the line to look at: the first one an agent that loads its file lacks there


class SideBySide(NamedTuple):
    cwd: Path
    project_root: Path
    touched: tuple[str, ...]
    agents: tuple[AgentRun, ...]
    files: tuple[FileRow, ...]  # in first-load order, agent by agent
    drift: tuple[Passage, ...]  # in first-seen order, agent by agent

    @property
    def drift_tokens(self) -> int:
        return sum(p.tokens for p in self.drift)

    @property
    def errors(self) -> bool:
        return any(a.explanation.assembly.errors for a in self.agents)


def agents() -> tuple[Client[Any], ...]:
    """The registered clients that are coding agents of a repository, in registry order."""
    return tuple(c for c in registry.clients() if c.repository_agent)


class Elsewhere(NamedTuple):
    """Another agent that loads files where the one asked loads none."""

    policy: str  # its built-in policy, for `--policy`
    title: str
    files: int


def loading_elsewhere(
    assembly: Assembly, cwd: PathLike | Request = ".", **options: Unpack[Options]
) -> tuple[Elsewhere, ...]:
    """When `assembly` (of `cwd` with `options`) loads nothing: the other repository agents
    that load files there, each with its own policy and the same machine, so a command can
    say where to look. Nothing is run when it loads something, or when it is not the main
    agent's start (a subagent's, such as Explore's empty block, or after a compaction)."""
    if assembly.sources or assembly.agent is not None or assembly.compacted is not None:
        return ()
    request = Request.of(cwd, **options)
    version = request.client_version if request.client_version in (LATEST, INSTALLED) else None
    out = []
    for client in agents():
        if client.name == assembly.policy.client:
            continue
        policy = agent_policy(client)
        other = assemble_run(request._replace(policy=policy, client_version=version, touched=()))
        if other.sources:
            out.append(Elsewhere(policy.name, client.title, len(other.sources)))
    return tuple(out)


def side_by_side(
    cwd: PathLike | Request = ".",
    *,
    clients: Sequence[str] | None = None,
    **options: Unpack[Options],
) -> SideBySide:
    """Explain each agent in `cwd` (same options as `explain()`, without `policy`) and compare.

    `clients`: the clients to compare, by name (default: every repository agent registered).
    """
    request = Request.of(cwd, **options)
    if request.policy is not None:
        raise RequestError("policy: each agent runs with its own policy; leave it out")
    if request.client_version not in (None, LATEST, INSTALLED):
        raise RequestError(
            f"--client-version {request.client_version} (client_version=): a release is one "
            f"agent's; with every agent pass {LATEST} or {INSTALLED} (each agent's own)"
        )
    chosen = agents() if clients is None else tuple(map(registry.get, dict.fromkeys(clients)))
    if not chosen:
        raise RequestError("clients: no agent to compare; name at least one")
    runs = tuple(
        AgentRun(c.name, explain(request._replace(policy=agent_policy(c)))) for c in chosen
    )
    names = _Names()
    files = _files(runs, names)
    first = runs[0].explanation.assembly
    return SideBySide(
        cwd=first.context.cwd,
        project_root=first.context.project_root,
        touched=first.touched,
        agents=runs,
        files=files,
        drift=_drift(runs, files, names, request.counter),
    )


# --- files --------------------------------------------------------------------------------


def _cell(row: Row) -> Cell:
    cut = sum(c.tokens for c in row.cuts)
    present = row.status in (Status.LOADED, Status.TRUNCATED)
    tokens = row.tokens if present else None
    return Cell(row.status, row.path, row.skip, tokens, cut, row.lazy, row.detail, row.notes)


def _rank(cell: Cell) -> int:
    """Which of an agent's rows of one file speaks for it: in its context first, then dropped
    by the budget, then any other skip."""
    if cell.present:
        return 0
    return 1 if cell.skip is Skip.BUDGET else 2


class _Names:
    """Each file as the agents name it -> one key: its real path (one file read under two
    names, one agent's file a link to another's, is one row), asked through a `Disk`."""

    def __init__(self) -> None:
        self.disk = Disk()
        self.key: dict[str, str] = {}

    def of(self, file: str) -> str:
        key = self.key.get(file)
        if key is None:
            key = self.key[file] = self.disk.realpath(file) if os.path.isabs(file) else file
        return key


def _files(runs: Sequence[AgentRun], names: _Names) -> tuple[FileRow, ...]:
    """A row per file some agent loads, in the agents' load orders merged: a file one agent
    loads and no earlier one does goes right after the file that agent loaded before it."""
    shown: dict[str, str] = {}  # file -> displayed path
    after: dict[str, str] = {"": ""}  # the files as a linked ring from "" (before the first)
    cells: list[dict[str, Cell]] = []
    for run in runs:
        mine: dict[str, Cell] = {}
        previous = ""
        for row in run.explanation.rows:
            if row.status is Status.ABSENT:
                continue
            cell, file = _cell(row), names.of(row.file)
            if file not in mine or _rank(cell) < _rank(mine[file]):
                mine[file] = cell
            if _rank(cell) == 2:
                continue
            if file not in shown:
                shown[file] = row.path
                after[file], after[previous] = after[previous], file
            previous = file
        cells.append(mine)
    order, file = [], after[""]
    while file:
        order.append(file)
        file = after[file]
    return tuple(
        FileRow(shown[file], file, tuple(mine.get(file, Cell(None)) for mine in cells))
        for file in order
    )


# --- paragraphs ---------------------------------------------------------------------------

_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def paragraphs(text: str) -> list[str]:
    """`text` as blank-line separated blocks, each without trailing spaces on its lines."""
    out = []
    for block in _BLANK_LINE.split(text):
        block = "\n".join(line.rstrip() for line in block.strip("\n").split("\n")).strip()
        if block:
            out.append(block)
    return out


def _uncut(source: Source, policy: Policy) -> str:
    """A cut source's content without the marker its cut added."""
    content = source.content
    for marker in (BUDGET_MARKER, policy.limits.truncation_marker):
        if marker and content.endswith(marker):
            return content.removesuffix(marker)
    return content


# A cut end is matched with the paragraphs of the same file, and with those of any file that
# start with the same PREFIX characters (the same text under another name: one agent's
# file a link to another's); a shorter cut end only within its file.
PREFIX = 16


class _Seen:
    """Per paragraph: agent index -> (whole, files), and where it comes first: (file row,
    paragraph number in that file)."""

    def __init__(self, rows: Mapping[str, int]) -> None:
        self.by_text: dict[str, dict[int, tuple[bool, list[str]]]] = {}
        self.at: dict[str, tuple[int, int]] = {}
        self.rows = rows
        self.in_file: dict[str, dict[str, None]] = {}  # file -> its paragraphs, any agent's
        self.starting: dict[str, dict[str, None]] = {}  # the first PREFIX chars -> paragraphs

    def add(self, text: str, agent: int, where: str, number: int) -> None:
        agents = self.by_text.setdefault(text, {})
        files = agents.setdefault(agent, (True, []))[1]
        if where not in files:
            files.append(where)
        self.in_file.setdefault(where, {})[text] = None
        self.starting.setdefault(text[:PREFIX], {})[text] = None
        at = (self.rows.get(where, len(self.rows)), number)
        self.at[text] = min(self.at.get(text, at), at)


def _drift(
    runs: Sequence[AgentRun], files: Sequence[FileRow], names: _Names, counter: TokenCounter
) -> tuple[Passage, ...]:
    loads = {row.file: {i for i, c in enumerate(row.cells) if c.present} for row in files}
    seen = _Seen({row.file: i for i, row in enumerate(files)})
    ends: list[tuple[str, int, str]] = []  # the last paragraph of each cut source
    lines_in: dict[tuple[int, str], set[str]] = {}  # (agent, file) -> the lines it sees there
    for i, run in enumerate(runs):
        assembly = run.explanation.assembly
        for source in assembly.sources:
            if source.dropped:
                continue
            blocks = paragraphs(_uncut(source, assembly.policy) if source.cuts else source.content)
            file = names.of(source.path)
            for number, block in enumerate(blocks):
                seen.add(block, i, file, number)
                lines_in.setdefault((i, file), set()).update(block.split("\n"))
            if source.cuts and blocks:
                ends.append((blocks[-1], i, file))
    for text, agent, where in ends:  # a cut mid-paragraph: the start of another's paragraph
        _as_partial(seen, text, agent, where)
    shown = [{row.file: row.cells[i].path for row in files} for i in range(len(runs))]
    out: list[Passage] = []
    for text in sorted(seen.by_text, key=seen.at.__getitem__):
        agents = seen.by_text[text]
        whole = {i for i, (w, _) in agents.items() if w}
        if len(whole) == len(runs):
            continue
        wheres = {f for _, fs in agents.values() for f in fs}
        if len(whole) == len(agents) and all(loads.get(f) == whole for f in wheres):
            continue  # exactly the agents that load its files: the file rows say it
        others = set().union(*(loads.get(f, set()) for f in wheres)) - whole
        lacking = [  # its lines some agent that loads one of its files does not see there
            line
            for line in text.split("\n")
            if any(all(line not in lines_in.get((o, f), ()) for f in wheres) for o in others)
        ]
        if not lacking and len(whole) == len(agents):
            continue  # every line reaches them all, in other paragraphs: the file rows say it
        sightings = tuple(
            Sighting(runs[i].client, agents[i][0], tuple(shown[i].get(f, f) for f in agents[i][1]))
            for i in sorted(agents)
        )
        missed = tuple(run.client for i, run in enumerate(runs) if i not in agents)
        line = lacking[0] if lacking else text.split("\n", 1)[0]
        passage = Passage(text, text.count("\n") + 1, counter(text), sightings, missed, line)
        out.append(passage)
    return tuple(out)


def _as_partial(seen: _Seen, text: str, agent: int, where: str) -> None:
    """Count `agent`'s sighting of `text` (the end of a cut in `where`) as seeing only the
    start of a paragraph other agents see whole, when there is one."""
    agents = seen.by_text.get(text, {})
    if set(agents) != {agent} or agents[agent][1] != [where]:
        return  # another agent, or another file, has the very same text: not a cut end
    longer = next(
        (
            seen.by_text[other]
            for other in itertools.chain(
                seen.in_file[where], seen.starting[text[:PREFIX]] if len(text) >= PREFIX else ()
            )
            if other != text and other.startswith(text) and agent not in seen.by_text[other]
        ),
        None,
    )
    if longer is not None:
        del seen.by_text[text], seen.at[text], seen.in_file[where][text]
        del seen.starting[text[:PREFIX]][text]
        longer[agent] = (False, [where])
