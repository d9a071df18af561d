"""What the report page shows, gathered from what the other commands compute.

* every agent side by side, what each skipped and why, what each touched path attaches:
  `live.side_by_side` (`explain --policy all`), whose runs are `explain()`'s;
* where each agent's tokens go: its explanation's rows in the native section order
  (`output.sections`), each file as the budgeter counts it (`output.sections.source_tokens`), with the
  dynamic boundary where the sections put it and the cache tiers of `output.tiers`;
* lint findings: `lint()` of the instruction files under the directory and of every file of
  the project an agent loads there, with the whole context of the directory;
* the cache: each agent's `output.cache` report, against its snapshot when one is given.

Nothing here decides what an agent loads. What the page lists is bounded (`docs/security.md`,
*Output*): the rows and findings it lists, and the file text it holds, each past its limit
counted, so a repository at every limit still gives a page of a few hundred KB.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Unpack

from .. import codes
from ..clients import registry
from ..discovery.disk import Disk
from ..errors import CacheError
from ..lint import LintResult, lint
from ..lint.files import Finding
from ..live.explain import Explanation, Row, Status
from ..live.explain_view import listed
from ..live.side_by_side import AgentRun, FileRow, Passage, SideBySide, agents, side_by_side
from ..live.side_by_side_view import MAX_PASSAGES
from ..model import Diagnostic, Layer, Severity, Source
from ..output.cache import CacheReport, Snapshot, build_report, load_snapshot
from ..output.sections import sections, source_tokens
from ..output.tiers import CachePlan, plan_for
from ..request import Options, PathLike

# What one page lists; past each limit the rest is counted, and the command that lists all
# of it is named on the page.
MAX_FILE_ROWS = 500  # files in the side-by-side table
MAX_WHY_NOT = 200  # rows of one agent's skipped and cut candidates (after explain's 100 a kind)
MAX_NOTES = 200  # findings of one agent's run at load
MAX_FINDINGS = 1_000  # lint findings
MAX_FILE_BYTES = 40_000  # the text of one file the page holds (its first lines)
MAX_TEXT_BYTES = 200_000  # the text of all files the page holds
MAX_PASSAGE_CHARS = 2_000  # the text of one paragraph only some agents see
BAR_STEPS = 250  # a file under 1/BAR_STEPS of the widest bar is drawn with its small neighbours


class Segment(NamedTuple):
    """One stretch of an agent's bar: a file, or small neighbouring files of one layer."""

    path: str  # as displayed (the first file's, when several)
    layer: Layer
    start: int  # tokens before it
    tokens: int
    files: int = 1
    card: int | None = None  # the file's text on the page (one file only)


class Marker(NamedTuple):
    """A point of an agent's bar: the end of a cache tier, or the dynamic boundary."""

    at: int  # tokens before it
    kind: str  # "tier" or "boundary"
    label: str  # the tier's name and its breakpoint's TTL ("" when none); "" for the boundary
    breakpoint: bool = False
    tokens: int = 0  # what the boundary marker itself costs


class Bar(NamedTuple):
    segments: tuple[Segment, ...]
    markers: tuple[Marker, ...]
    total: int  # what explain counts: every section and the boundary
    budget: int  # 0: none


class Attached(NamedTuple):
    """What one touched path attached for one agent."""

    touched: str
    rows: tuple[Row, ...]


class AgentPage(NamedTuple):
    run: AgentRun
    title: str
    bar: Bar
    why_not: tuple[Row, ...]  # skipped, dropped and cut candidates, in load order
    why_not_left: tuple[tuple[str, int], ...]  # (kind, how many not listed)
    absent: int  # candidate locations that do not exist
    notes: tuple[Diagnostic, ...]  # other findings of its run, at load
    notes_left: int
    lazy: tuple[Attached, ...]
    cache: CacheReport
    compared: bool  # whether `cache` holds a comparison with its snapshot

    @property
    def version(self) -> str:
        """The release of the agent modelled ("" when ctxasm models no particular one)."""
        return self.run.explanation.assembly.client_version

    @property
    def explanation(self) -> Explanation:
        return self.run.explanation

    @property
    def errors(self) -> int:
        return len(self.explanation.assembly.errors)


class Card(NamedTuple):
    """The text of one file, as the page holds it."""

    number: int
    path: str  # as displayed
    file: str  # its real path, or a pseudo path like `<skills>`
    lines: tuple[str, ...]
    whole: bool  # False: only its first lines (the file is larger than the page holds)
    origin: str  # "disk": the file as it is on disk; "loaded": as an agent loads it; "": none
    missing: str = ""  # why there is no text


class LintFile(NamedTuple):
    """The findings of one file, and its text on the page."""

    path: str
    card: Card | None
    findings: tuple[Finding, ...]


class Report(NamedTuple):
    side: SideBySide
    agents: tuple[AgentPage, ...]
    rows: tuple[tuple[FileRow, Card | None], ...]  # listed file rows, and each one's text
    rows_left: int
    drift: tuple[Passage, ...]
    drift_left: int
    lint: LintResult
    lint_files: tuple[LintFile, ...]
    findings_left: int
    cards: tuple[Card, ...]  # every file text on the page, by number
    scale: int  # the tokens the widest bar stands for
    against: str | None  # the snapshot directory compared with

    @property
    def errors(self) -> bool:
        """An agent's run or lint found an error (what fails the command)."""
        return self.side.errors or self.lint.failed

    def severities(self) -> dict[str, int]:
        """How many lint findings of each severity ("error", "warning", "info")."""
        counts = dict.fromkeys(
            (s.value for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)), 0
        )
        for finding in self.lint.findings:
            counts[(finding.severity or Severity.INFO).value] += 1
        return counts

    def percent(self, tokens: int) -> str:
        """`tokens` as a share of the widest bar, for a CSS length."""
        return f"{100 * tokens / self.scale:.3f}%" if self.scale else "0%"


def snapshots(directory: PathLike, clients: Sequence[str] | None = None) -> dict[str, Snapshot]:
    """The snapshot of each agent in `directory` (`<client>.json`, as `ctxasm cache --save`
    and `report --save-cache` write them); an agent without one is left out."""
    disk, name = Disk(), os.fspath(directory)
    if not disk.is_dir(name):
        raise CacheError(
            f"{directory}: no such directory of snapshots; write one with "
            "`ctxasm report --save-cache DIR`"
        )
    names = clients if clients is not None else [c.name for c in agents()]
    found = {}
    for client in names:
        path = os.path.join(name, f"{client}.json")
        if disk.lexists(path):
            found[client] = load_snapshot(path)
    return found


def build(
    cwd: PathLike = ".",
    *,
    against: Mapping[str, Snapshot] | None = None,
    against_name: str | None = None,
    **options: Unpack[Options],
) -> Report:
    """Everything the page of `cwd` shows (same options as `explain()`, without `policy`:
    each agent runs with its own; lint runs with the project's). `against`: each agent's
    snapshot to compare its cache with (`snapshots`), named `against_name` on the page."""
    result = side_by_side(cwd, **options)
    lint_result = lint(_lint_files(result), cwd=result.cwd, base=result.project_root, **options)
    disk = Disk()
    outside = Outside.of(result)
    cards = _Cards(disk, result, outside)
    rows = tuple((row, cards.of_row(row)) for row in result.files[:MAX_FILE_ROWS])
    lint_files, findings_left = _lint_files_of(lint_result.findings, result.project_root, cards)
    scale = max((max(a.explanation.total, a.explanation.budget) for a in result.agents), default=0)
    card_of = {card.file: card.number for card in cards.all}
    pages = tuple(
        _agent(run, result.touched, card_of, scale, (against or {}).get(run.client), disk)
        for run in result.agents
    )
    return Report(
        side=result,
        agents=pages,
        rows=rows,
        rows_left=len(result.files) - len(rows),
        drift=tuple(_short(p, outside) for p in result.drift[:MAX_PASSAGES]),
        drift_left=max(0, len(result.drift) - MAX_PASSAGES),
        lint=lint_result,
        lint_files=lint_files,
        findings_left=findings_left,
        cards=tuple(cards.all),
        scale=scale,
        against=against_name if against is not None else None,
    )


# --- lint ---------------------------------------------------------------------------------


def _under(path: str, directory: Path) -> bool:
    return path == str(directory) or path.startswith(str(directory).rstrip("/") + "/")


def _lint_files(result: SideBySide) -> list[str]:
    """The directory (every instruction file under it, as `ctxasm lint` there finds them) and
    each file of the project an agent loads from outside it (an ancestor's, an import's)."""
    disk = Disk()
    outside = [
        row.file
        for row in result.files
        if os.path.isabs(row.file)
        and _under(row.file, result.project_root)
        and not _under(row.file, result.cwd)
        and disk.is_file(row.file)
    ]
    return [str(result.cwd), *outside]


def _lint_files_of(
    findings: Sequence[Finding], root: Path, cards: _Cards
) -> tuple[tuple[LintFile, ...], int]:
    """The listed findings grouped by file (in lint's order), each file with its text."""
    groups: dict[str, list[Finding]] = {}
    for finding in findings[:MAX_FINDINGS]:
        groups.setdefault(finding.path, []).append(finding)
    out = tuple(
        LintFile(path, cards.of_path(path, root), tuple(found)) for path, found in groups.items()
    )
    return out, max(0, len(findings) - MAX_FINDINGS)


# --- text from outside the project -------------------------------------------------------

# The findings that say a run read text the repository reached outside of itself: a link or
# an import out of the project, auto memory its settings move. A page is an artifact others
# may read (CI uploads it): it names such files and why, never holds their text.
OUTSIDE = frozenset(c.code for c in (codes.OUTSIDE_PROJECT, codes.OUTSIDE_HOME, codes.MEMORY_MOVED))
WITHHELD = (
    "read from outside the project through the repository (a link, an import or moved auto "
    "memory); its text is not put on a page others may read: `ctxasm render` prints it"
)


class Outside(NamedTuple):
    """What each run read from outside the project, by the findings that say so."""

    names: frozenset[str]  # the files, as displayed
    agents: frozenset[str]  # the agents that read any

    @classmethod
    def of(cls, result: SideBySide) -> Outside:
        found = [
            (run.client, d.path)
            for run in result.agents
            for d in run.explanation.assembly.diagnostics
            if d.code in OUTSIDE
        ]
        return cls(frozenset(path for _, path in found), frozenset(agent for agent, _ in found))

    def holds(self, row: FileRow) -> bool:
        """Whether some agent read this file from outside the project."""
        return bool({row.path, *(c.path for c in row.cells if c.path)} & self.names)

    def taints(self, passage: Passage) -> bool:
        """Whether an agent that sees the paragraph read text from outside the project (an
        import it inlines has no row of its own)."""
        return any(s.client in self.agents for s in passage.seen)


# --- file text ----------------------------------------------------------------------------


class _Cards:
    """The file texts of the page, numbered in the order they are asked for, within
    `MAX_TEXT_BYTES` in all; one card per real file."""

    def __init__(self, disk: Disk, result: SideBySide, outside: Outside) -> None:
        self.disk = disk
        self.result = result
        self.outside = outside
        self.left = MAX_TEXT_BYTES
        self.all: list[Card] = []
        self.by_file: dict[str, Card] = {}

    def of_row(self, row: FileRow) -> Card:
        return self._card(row.path, row.file, row)

    def of_path(self, path: str, root: Path) -> Card | None:
        """The card of a file lint names (relative to `root`, or absolute)."""
        full = os.path.join(root, path)
        if not self.disk.is_file(full):
            return None  # a directory, a `.git` entry: no text to show
        return self._card(path, self.disk.realpath(full), None)

    def _card(self, path: str, file: str, row: FileRow | None) -> Card:
        if file in self.by_file:
            return self.by_file[file]
        number = len(self.all) + 1
        lines, whole, origin, missing = self._text(file, row)
        card = Card(number, path, file, lines, whole, origin, missing)
        self.all.append(card)
        self.by_file[file] = card
        return card

    def _text(self, file: str, row: FileRow | None) -> tuple[tuple[str, ...], bool, str, str]:
        if self._withheld(file, row):
            return (), False, "", WITHHELD
        if self.left <= 0:
            return (), False, "", "the page holds no more file text"
        room = min(MAX_FILE_BYTES, self.left)
        if os.path.isabs(file) and self.disk.is_file(file):
            found = self.disk.read_head(file, room)
            if not found.ok:
                return (), False, "", found.detail or found.status.value
            text, whole = found.text, found.size <= len(found.data)
            origin = "disk"
        else:  # a pseudo path (`<skills>`), a directory: the text an agent loads for it
            content = self._loaded(file, row)
            if content is None:
                return (), False, "", "no text"
            text, whole, origin = content, True, "loaded"
            if len(text.encode("utf-8", "surrogateescape")) > room:
                text = text.encode("utf-8", "surrogateescape")[:room].decode("utf-8", "replace")
                whole = False
        if not whole and "\n" in text:
            text = text[: text.rfind("\n") + 1]  # whole lines only
        self.left -= len(text.encode("utf-8", "surrogateescape"))
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return tuple(lines), whole, origin, ""

    def _withheld(self, file: str, row: FileRow | None) -> bool:
        """A file some agent read from outside the project; a file lint names that is really
        outside it; a text an agent made (a skills index) when it read from outside."""
        if row is None:
            return os.path.isabs(file) and not _under(file, self.result.project_root)
        if self.outside.holds(row):
            return True
        first = next(
            (run for run, c in zip(self.result.agents, row.cells, strict=True) if c.present), None
        )
        return not os.path.isabs(file) and first is not None and first.client in self.outside.agents

    def _loaded(self, file: str, row: FileRow | None) -> str | None:
        """The content of the source that stands for `file` in the first agent that has it."""
        if row is None:
            return None
        for run, cell in zip(self.result.agents, row.cells, strict=True):
            if not cell.present:
                continue
            for source in run.explanation.assembly.sources:
                if not source.dropped and self._same(source, file):
                    return source.content
        return None

    def _same(self, source: Source, file: str) -> bool:
        if source.path == file:
            return True
        return os.path.isabs(source.path) and self.disk.realpath(source.path) == file


# --- one agent ----------------------------------------------------------------------------


def _agent(
    run: AgentRun,
    touched: Sequence[str],
    card_of: Mapping[str, int],
    scale: int,
    previous: Snapshot | None,
    disk: Disk,
) -> AgentPage:
    explanation = run.explanation
    assembly = explanation.assembly
    why, left = _why_not(explanation.rows)
    plan = plan_for(assembly)
    notes = [n for row in explanation.rows for n in row.notes] + list(explanation.notes)
    return AgentPage(
        run=run,
        title=registry.get(run.client).title,
        bar=_bar(explanation, plan, card_of, scale, disk),
        why_not=why,
        why_not_left=left,
        absent=sum(1 for r in explanation.rows if r.status is Status.ABSENT),
        notes=tuple(notes[:MAX_NOTES]),
        notes_left=max(0, len(notes) - MAX_NOTES),
        lazy=_lazy(explanation.rows, touched),
        cache=build_report(plan, previous, run.client),
        compared=previous is not None,
    )


def _why_not(rows: Sequence[Row]) -> tuple[tuple[Row, ...], tuple[tuple[str, int], ...]]:
    """The candidates kept out or cut: explain's table of them (at most 100 of a kind), then
    at most `MAX_WHY_NOT`; how many of each kind are left out."""
    kept_out = [r for r in rows if r.status in (Status.SKIPPED, Status.TRUNCATED)]
    numbered, left = listed(kept_out)
    shown = [row for _, row in numbered]
    for row in shown[MAX_WHY_NOT:]:
        kind = row.skip.value if row.skip else row.status.value
        left[kind] = left.get(kind, 0) + 1
    return tuple(shown[:MAX_WHY_NOT]), tuple(left.items())


def _lazy(rows: Sequence[Row], touched: Sequence[str]) -> tuple[Attached, ...]:
    """What each touched path attached, in the order they were touched."""
    by_touch: dict[str, list[Row]] = {t: [] for t in touched}
    for row in rows:
        if row.lazy and row.status in (Status.LOADED, Status.TRUNCATED):
            key = row.reason.touched if row.reason and row.reason.touched else ""
            by_touch.setdefault(key, []).append(row)
    return tuple(Attached(t, tuple(found)) for t, found in by_touch.items())


def _bar(
    explanation: Explanation, plan: CachePlan, card_of: Mapping[str, int], scale: int, disk: Disk
) -> Bar:
    """The agent's tokens in the order of its native sections: a segment per file (small
    neighbours of one layer together), the boundary, and the end of each cache tier."""
    assembly = explanation.assembly
    policy, counter = assembly.policy, assembly.counter
    smallest = scale / BAR_STEPS
    segments: list[Segment] = []
    markers: list[Marker] = []
    ends: list[int] = []  # where each source section ends
    pending: Segment | None = None
    at = 0

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            segments.append(pending)
            pending = None

    for section in sections(assembly.sources, policy):
        if section.source is None:
            flush()
            markers.append(Marker(at, "boundary", "", tokens=explanation.boundary_tokens))
            at += explanation.boundary_tokens
            continue
        source = section.source
        cost = source_tokens(source, policy, counter)
        if cost >= smallest:
            flush()
            card = card_of.get(_real(source.path, disk))
            segments.append(Segment(source.display, source.layer, at, cost, 1, card))
        else:
            if pending is not None and (
                pending.layer is not source.layer or pending.tokens >= smallest
            ):
                flush()
            if pending is None:
                pending = Segment(source.display, source.layer, at, cost)
            else:
                pending = pending._replace(tokens=pending.tokens + cost, files=pending.files + 1)
        at += cost
        ends.append(at)
    flush()
    markers += _tiers(plan, ends)
    markers.sort(key=lambda m: (m.at, m.kind))
    return Bar(tuple(segments), tuple(markers), explanation.total, explanation.budget)


def _tiers(plan: CachePlan, ends: Sequence[int]) -> Iterable[Marker]:
    """The end of each cache tier (`output.tiers`: a run of sections of one layer, its
    sources in section order), and its breakpoint's TTL where the plan puts one."""
    count = 0
    for index, tier in enumerate(plan.tiers):
        count += len(tier.sources)
        point = plan.at(index)
        label = f"{tier.name} {point.ttl.value}" if point else tier.name
        yield Marker(ends[count - 1], "tier", label, point is not None)


def _real(path: str, disk: Disk) -> str:
    return disk.realpath(path) if os.path.isabs(path) else path


def _short(passage: Passage, outside: Outside) -> Passage:
    """A paragraph with at most `MAX_PASSAGE_CHARS` of its text; none when an agent that sees
    it read from outside the project."""
    if outside.taints(passage):
        return passage._replace(text="", line="")
    if len(passage.text) <= MAX_PASSAGE_CHARS:
        return passage
    return passage._replace(text=passage.text[:MAX_PASSAGE_CHARS] + "\n…")
