"""`ctxasm explain`: every candidate source in load order, why it is there, what it costs, and
what became of it (loaded, truncated, skipped and why), with the budget per layer.

The rows come from the run itself, not from a second walk: a `Trace` observer records every
candidate the loader considers and every diagnostic, in order; each skip diagnostic belongs to
the latest candidate with its path. Touched paths are applied one at a time so that what a
touch attached is listed where it was attached.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple, Unpack

from ..assembly import Assembly, after_compact, receives, run
from ..clients import registry
from ..codes import Skip as Skip  # rows name their skip with it (`Row.skip`)
from ..discovery.disk import QuietObserver
from ..display import PATTERN_CHARS, shown
from ..model import AgentType, Cut, Diagnostic, Layer, Reason, RulesOrder, Source, Why
from ..output.sections import LayerTokens as LayerTokens  # `Explanation.layers` holds them
from ..output.sections import context_tokens, source_tokens
from ..request import Options, PathLike, Request


class Status(enum.Enum):
    LOADED = "loaded"
    TRUNCATED = "truncated"
    SKIPPED = "skipped"
    ABSENT = "absent"  # a candidate location that does not exist (listed with --all)


def skip_of(code: str) -> Skip | None:
    """What a file the diagnostic `code` keeps out is called in a row (`codes.Code.skip`, of
    the shared catalogue or a client's own), or None for a code that keeps nothing out."""
    try:
        return registry.lookup(code).skip
    except KeyError:
        return None


def rules_order_text(order: RulesOrder, client: str) -> str:
    """What the rules order of a run means, for the policy's `client` (a registry name)."""
    if order is RulesOrder.NAME:
        return 'sorted by name (policy: [rules] order = "name")'
    return (
        f"raw directory order (os.scandir, unsorted), as {registry.get(client).title} reads rules"
    )


class Row(NamedTuple):
    """One candidate source: where, why, how big, and what became of it."""

    layer: Layer | None
    path: str  # as displayed: relative to the project root, `~/...` or absolute
    file: str  # as the client names it (absolute), or a pseudo path like `<managed-settings>`
    reason: Reason | None
    status: Status
    skip: Skip | None = None
    code: str = ""  # the diagnostic behind a skip
    detail: str = ""  # the skip's or the cut's explanation, one line
    lines: int | None = None
    bytes: int | None = None
    chars: int | None = None
    tokens: int | None = None
    cuts: tuple[Cut, ...] = ()
    paths: tuple[str, ...] = ()  # globs of a conditional rule
    lazy: bool = False
    notes: tuple[Diagnostic, ...] = ()  # other findings about this file


class AgentRow(NamedTuple):
    """One agent type the main agent can start, beside it: the instruction files loaded at
    start that it receives (display paths, in order), and whether it gets the skills list."""

    name: str
    origin: str  # "built-in", or its definition's path as shown
    files: tuple[str, ...]
    skills: bool
    shares_parent: bool = False  # a fork: the main agent's conversation, reads included


class Explanation(NamedTuple):
    assembly: Assembly
    rows: tuple[Row, ...]
    layers: tuple[LayerTokens, ...]
    boundary_tokens: int
    total: int
    budget: int  # 0: no total budget
    rules_order: RulesOrder | None  # None: the run read no directory, so no order mattered
    notes: tuple[Diagnostic, ...]  # diagnostics about no listed file (settings, rules dirs)
    agents: tuple[AgentRow, ...] = ()  # the main agent first, then each subagent type
    agents_note: str = ""  # the client's plain words about them

    def visible(self, show_all: bool) -> tuple[Row, ...]:
        return (
            self.rows if show_all else tuple(r for r in self.rows if r.status is not Status.ABSENT)
        )


class _Event(NamedTuple):
    phase: int
    path: str
    layer: Layer | None = None
    reason: Reason | None = None
    diagnostic: Diagnostic | None = None
    source: Source | None = None


_NOT_FILES = frozenset({Why.SKILLS, Why.ENVIRONMENT})  # sections, not instruction files


class Trace(QuietObserver):
    """Observer recording, in order, each candidate, each diagnostic and each loaded source."""

    __slots__ = ("events", "listed_any", "phase")

    def __init__(self) -> None:
        self.events: list[_Event] = []
        self.phase = 0  # 0: start-up; n: the n-th touched path
        self.listed_any = False  # whether the run read a directory (then its order matters)

    def candidate(self, path: str, layer: Layer, reason: Reason) -> None:
        self.events.append(_Event(self.phase, path, layer, reason))

    def saw(self, path: str) -> None:
        pass

    def listed(self, directory: str) -> None:
        self.listed_any = True

    def loaded(self, source: Source) -> None:
        self.events.append(_Event(self.phase, source.path, source=source))

    def noted(self, path: str, diagnostic: Diagnostic) -> None:
        self.events.append(_Event(self.phase, path, diagnostic=diagnostic))


def explain(cwd: PathLike | Request = ".", **options: Unpack[Options]) -> Explanation:
    """Assemble as `assemble()` does (same arguments) and explain every candidate."""
    request = Request.of(cwd, **options)
    trace = Trace()
    assembly = run(request._replace(touched=(), after_compact=None), observer=trace)
    attached_in: dict[str, int] = {}
    for phase, path in enumerate(request.touched, 1):
        trace.phase = phase
        before, assembly = assembly, assembly.touch(path, observer=trace)
        for source in assembly.attached(before):
            attached_in[source.path] = phase
    if request.after_compact is not None:
        assembly = after_compact(assembly, request.after_compact, request.touched, trace)
    order = assembly.policy.rules_order if trace.listed_any else None
    explained = _explanation(assembly, trace.events, attached_in, order)
    if assembly.agent is not None:
        return explained
    agents = assembly.agents()
    if not agents.types:
        return explained
    return explained._replace(agents=_agent_rows(assembly, agents.types), agents_note=agents.note)


def _agent_rows(assembly: Assembly, types: Sequence[AgentType]) -> tuple[AgentRow, ...]:
    """The main agent's start files and skills list, then what each type receives of them."""
    started = [s for s in assembly.sources if not s.lazy and not s.dropped]
    files = [s for s in started if s.reason.why not in _NOT_FILES]
    skills = any(s.reason.why is Why.SKILLS for s in started)
    main = AgentRow("main agent", "", tuple(s.display for s in files), skills)
    return (
        main,
        *(
            AgentRow(
                t.name,
                t.origin,
                tuple(s.display for s in files if receives(t, s)),
                skills and t.skills,
                t.shares_parent,
            )
            for t in types
        ),
    )


# --- rows ---------------------------------------------------------------------------------


class _Candidate:
    """One time the loader considered a path, and what it recorded about it."""

    __slots__ = ("index", "layer", "loaded", "path", "phase", "reason", "skip")

    def __init__(self, index: int, event: _Event) -> None:
        self.index = index
        self.phase = event.phase
        self.path = event.path
        self.layer = event.layer
        self.reason = event.reason
        self.skip: Diagnostic | None = None
        self.loaded: Source | None = None


def _candidates(events: Sequence[_Event]) -> tuple[list[_Candidate], list[tuple[int, _Event]]]:
    """Candidates with their skip diagnostic or loaded source; skips of no candidate."""
    candidates: list[_Candidate] = []
    latest: dict[str, _Candidate] = {}
    orphans: list[tuple[int, _Event]] = []
    for index, event in enumerate(events):
        if event.source is not None:
            if (found := latest.get(event.path)) is not None:
                found.loaded = event.source
        elif event.diagnostic is not None:
            if skip_of(event.diagnostic.code) is None:
                continue
            found = latest.get(event.path)
            if found is not None and found.skip is None and found.loaded is None:
                found.skip = event.diagnostic
            else:
                orphans.append((index, event))
        else:
            latest[event.path] = candidate = _Candidate(index, event)
            candidates.append(candidate)
    return candidates, orphans


# A source's token count (`budget.source_tokens` with the run's policy and counter).
Count = Callable[[Source], int]


def _source_row(source: Source, count: Count, note: Diagnostic | None = None) -> Row:
    status, skip, detail = Status.LOADED, None, ""
    if note is not None:  # in the output all the same (a workspace file's placeholder)
        status, skip, detail = Status.SKIPPED, skip_of(note.code), note.message
    elif source.dropped:
        status, skip = Status.SKIPPED, Skip.BUDGET
        detail = "; ".join(c.reason for c in source.cuts if c.kind == "budget-drop")
    elif source.cuts:
        status = Status.TRUNCATED
        detail = "; ".join(
            f"cut {c.lines:,} lines, {c.chars:,} chars, {c.tokens:,} tokens: {c.reason}"
            for c in source.cuts
        )
    stats = source.original if source.dropped else source.stats
    return Row(
        source.layer,
        source.display,
        source.path,
        source.reason,
        status,
        skip,
        note.code if note else "budget-dropped" if source.dropped else "",
        detail,
        stats.lines,
        stats.bytes,
        stats.chars,
        count(source),  # what it adds to the context (dropped: what it would have added)
        source.cuts,
        source.paths,
        source.lazy,
    )


def _size(path: str) -> int | None:
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return None


def _patterns(patterns: Sequence[str]) -> str:
    """A rule's globs for one line of text: each long one as its head and tail."""
    return ", ".join(shown(p, PATTERN_CHARS) for p in patterns)


def _candidate_row(
    c: _Candidate, display: str, earlier: _Earlier, count: Count, agent: AgentType | None
) -> Row:
    """Why a candidate is not in the assembly (`agent`: the subagent's, if it is one's)."""
    base = Row(c.layer, display, c.path, c.reason, Status.SKIPPED)
    if c.skip is not None:
        skip = skip_of(c.skip.code)
        size = _size(c.path) if skip is not Skip.MISSING else None
        return base._replace(skip=skip, code=c.skip.code, detail=c.skip.message, bytes=size)
    if c.loaded is not None:  # loaded, yet not in the assembly: a rule waiting for its paths
        s = c.loaded.stats
        if agent is not None and not c.loaded.paths and not receives(agent, c.loaded):
            return base._replace(
                skip=Skip.EXCLUDED_AGENT,
                detail=f"the main agent has it; the {agent.name} subagent starts without it",
                lines=s.lines, bytes=s.bytes, chars=s.chars, tokens=count(c.loaded),
            )  # fmt: skip
        return base._replace(
            skip=Skip.NOT_MATCHED,
            detail=f"paths: {_patterns(c.loaded.paths)}; loaded when the agent touches a matching file",
            lines=s.lines,
            bytes=s.bytes,
            chars=s.chars,
            tokens=count(c.loaded),
            paths=c.loaded.paths,
        )
    if not os.path.lexists(c.path):
        return base._replace(status=Status.ABSENT, detail="looked for; does not exist")
    if c.layer is Layer.MEMORY and os.path.realpath(c.path) not in earlier.real():
        return base._replace(skip=Skip.EMPTY, detail="empty after removing comments")
    return base._replace(skip=Skip.DUPLICATE, detail="the same file was loaded earlier")


class _Rows:
    """Skipped candidates and orphan skips, each once, placed by the event that gave it."""

    def __init__(self) -> None:
        self.pending: list[tuple[int, Row]] = []
        self._seen: set[tuple[object, ...]] = set()

    def add(self, index: int, row: Row) -> None:
        key = (row.file, row.status, row.skip, row.detail)
        if key not in self._seen:
            self._seen.add(key)
            self.pending.append((index, row))

    def ordered(self) -> list[tuple[int, Row]]:
        return sorted(self.pending, key=lambda item: item[0])


def _explanation(
    assembly: Assembly,
    events: Sequence[_Event],
    attached_in: Mapping[str, int],
    rules_order: RulesOrder | None,
) -> Explanation:
    policy, counter = assembly.policy, assembly.counter

    def count(source: Source) -> int:
        return source_tokens(source, policy, counter)

    final = {s.key: s for s in assembly.sources}
    candidates, orphans = _candidates(events)
    skipped = _Rows()
    shown_as = assembly.context.display
    where = _placed(candidates, final, attached_in, shown_as, skipped, count, assembly.agent)
    placeholders = _orphan_rows(orphans, final, skipped)
    rows = _merge(assembly.sources, where, skipped.ordered(), placeholders, count)
    rows, notes = _attach_notes(rows, assembly.diagnostics)
    tokens = context_tokens(assembly.sources, policy, counter)
    return Explanation(
        assembly=assembly,
        rows=tuple(rows),
        layers=tokens.layers,
        boundary_tokens=tokens.boundary,
        total=tokens.total,
        budget=assembly.max_tokens,
        rules_order=rules_order,
        notes=notes,
    )


def _placed(
    candidates: Sequence[_Candidate],
    final: Mapping[tuple[str, bool], Source],
    attached_in: Mapping[str, int],
    display: Callable[[str], str],
    skipped: _Rows,
    count: Count,
    agent: AgentType | None,
) -> dict[tuple[str, bool], int]:
    """The event where each source in the assembly was loaded; a row for every other one."""
    where: dict[tuple[str, bool], int] = {}
    earlier = _Earlier()
    for c in candidates:
        key = (c.path, c.phase > 0)  # a read may attach again what was loaded at start
        source = final.get(key)
        if c.skip is None and source is not None:
            wanted = attached_in.get(c.path, 0) if key[1] else 0
            if c.phase == wanted and key not in where:
                where[key] = c.index
        elif c.skip is None and (c.path, True) in final:
            pass  # not kept here (a conditional rule at start): listed where a read attached it
        elif c.skip is None and c.phase > 0 and (c.path, False) in final:
            pass  # loaded at start, met again by a read (a rule when a touch reads rules again)
        else:
            skipped.add(c.index, _candidate_row(c, display(c.path), earlier, count, agent))
        earlier.paths.append(c.path)
    return where


class _Earlier:
    """The candidates met so far; their real paths only when a row asks (one `realpath` per
    candidate would cost seconds for a file of 200,000 missing imports)."""

    __slots__ = ("_done", "_real", "paths")

    def __init__(self) -> None:
        self.paths: list[str] = []
        self._real: set[str] = set()
        self._done = 0  # how many of `paths` are in `_real`

    def real(self) -> set[str]:
        self._real.update(os.path.realpath(p) for p in self.paths[self._done :])
        self._done = len(self.paths)
        return self._real


def _orphan_rows(
    orphans: Sequence[tuple[int, _Event]],
    final: Mapping[tuple[str, bool], Source],
    skipped: _Rows,
) -> dict[str, Diagnostic]:
    """Skips of no candidate: a row each, or the placeholder note of a source in the output."""
    placeholders: dict[str, Diagnostic] = {}
    for index, event in orphans:
        assert event.diagnostic is not None
        if (event.path, False) in final or (event.path, True) in final:
            placeholders[event.path] = event.diagnostic
            continue
        skipped.add(
            index,
            Row(
                None,
                event.diagnostic.path,
                event.path,
                None,
                Status.SKIPPED,
                skip_of(event.diagnostic.code),
                event.diagnostic.code,
                event.diagnostic.message,
            ),
        )
    return placeholders


def _merge(
    sources: Sequence[Source],
    where: Mapping[tuple[str, bool], int],
    pending: Sequence[tuple[int, Row]],
    placeholders: Mapping[str, Diagnostic],
    count: Count,
) -> list[Row]:
    """Sources in load order, each skipped candidate placed where the loader met it."""
    rows: list[Row] = []
    waiting = list(pending)
    at = 0
    for source in sources:
        index = where.get(source.key)
        if index is not None:
            while at < len(waiting) and waiting[at][0] < index:
                rows.append(waiting[at][1])
                at += 1
        rows.append(_source_row(source, count, placeholders.get(source.path)))
    rows += [row for _, row in waiting[at:]]
    return rows


def _attach_notes(
    rows: Sequence[Row], diagnostics: Sequence[Diagnostic]
) -> tuple[list[Row], tuple[Diagnostic, ...]]:
    """Each remaining diagnostic on the first row of its path; the others stay general."""
    first: dict[str, int] = {}
    for i, row in enumerate(rows):
        first.setdefault(row.path, i)
    extra: dict[int, list[Diagnostic]] = {}
    general: list[Diagnostic] = []
    for d in diagnostics:
        if skip_of(d.code) is not None:
            continue
        at = first.get(d.path)
        if at is None:
            general.append(d)
        else:
            extra.setdefault(at, []).append(d)
    out = [row._replace(notes=tuple(extra[i])) if i in extra else row for i, row in enumerate(rows)]
    return out, tuple(general)
