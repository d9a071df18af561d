"""Paragraphs a file repeats from another file that loads with it (`CTX502`).

Whole-repository lint first indexes every paragraph any start in the repository can load
(`lint.universe`), so that only directories where a file may repeat another's paragraph are
discovered; without a complete index, each file is compared with what loads in its own
directory, as its start (`lint.context.Starts`) discovers it.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from .. import codes
from ..model import Source
from .context import LOADS_AT_START, Recording, Starts
from .files import FileInfo, Finding
from .scan import Scan, ScanBudget
from .universe import Universe

_MIN_PARAGRAPH = 40


def _by_paragraph(text: str) -> dict[str, list[int]]:
    """Each paragraph worth comparing, with the offsets where it is, in order."""
    found: dict[str, list[int]] = {}
    for offset, paragraph in _paragraphs(text):
        found.setdefault(paragraph, []).append(offset)
    return found


def _paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """(offset, normalised text) of each paragraph worth comparing."""
    for match in re.finditer(r"(?:[^\n]*\S[^\n]*(?:\n|$))+", text):
        block = match.group(0)
        lines = [
            ln
            for ln in block.splitlines()
            if not ln.lstrip().startswith(("#", "```", "~~~", "<!--"))
        ]
        normal = " ".join(" ".join(lines).split())
        if len(normal) >= _MIN_PARAGRAPH:
            yield match.start(), normal


class Duplicates:
    """The paragraphs of each linted file against those of the files loading with it, over
    one run's `Starts`. `wanted`: the codes the run reports; without `CTX502` nothing is
    indexed or compared."""

    def __init__(self, starts: Starts, wanted: Container[str]) -> None:
        self.starts = starts
        self._wanted = wanted
        self._paragraph_cache: dict[tuple[str, str], tuple[str, ...]] = {}
        self._tables: dict[tuple[str, str], frozenset[str]] = {}
        self._universe: Universe | None = None
        self._indexing: Universe | None = None  # between `start_index` and `finish_index`

    @property
    def indexed(self) -> bool:
        """Whether the repository's index is whole (then it tells where duplicates can be)."""
        return self._universe is not None

    @property
    def wanted(self) -> bool:
        """Whether the run reports duplicates (without, nothing is indexed)."""
        return codes.DUPLICATE.code in self._wanted

    def index_repository(self, root: Path, paths: Sequence[Path], complete: bool) -> None:
        """Whole-repository lint: index what every start can load (`Universe`), so that only
        directories where a file may repeat another's paragraph are discovered. `complete`:
        `paths` are all the instruction files under `root` (no walk stopped at its limits).
        In three steps for a caller that lists files while it indexes: `start_index`,
        `index_files` (as often as needed), `finish_index`."""
        self.start_index(root)
        self.index_files(paths)
        self.finish_index(complete)

    def start_index(self, root: Path) -> None:
        if codes.DUPLICATE.code not in self._wanted:
            return  # the index is for duplicates only
        recording = Recording(self.starts.shared_reads())
        root_discovery = self.starts._discover(root, recording)
        self._indexing = Universe(
            root, root_discovery, recording.seen, self.starts.machine, self.starts.policy, self.starts.shared_reads(),
            self._paragraphs_of, lambda path: self.starts.client.classify(path) is not None, self.starts.real,
            self.starts.version,
        )  # fmt: skip

    def index_files(self, paths: Iterable[Path]) -> None:
        universe = self._indexing
        if universe is None:
            return  # not indexing: duplicates are not checked
        for path in paths:
            role = self.starts.client.classify(path)
            loads = role is not None and role.kind in LOADS_AT_START
            universe.add_linted(path, role.load_dir if loads and role is not None else None)

    def finish_index(self, complete: bool) -> None:
        universe = self._indexing
        if universe is None:
            return
        universe.finish()
        universe.complete = universe.complete and complete
        self._universe = universe if universe.complete else None
        self._indexing = None
        if self._universe is not None:  # each discovery from now on checks the index
            self.starts.discovered = self._universe.checked

    def duplicates(self, info: FileInfo, scan: Scan, budget: ScanBudget) -> list[Finding]:
        """Paragraphs of this file that another file loading with it already says. The file's
        paragraphs are found once for all its paths (`scan`); what is compared at each path
        counts in the run's `budget`, each paragraph as the 40 characters it holds at least."""
        if codes.DUPLICATE.code not in self._wanted or not self.starts.applies(info):
            return []
        parsed, lines = scan.parsed, scan.lines
        assert parsed is not None and lines is not None
        me = self.starts.real(str(info.path))
        mine = scan.memo(("paragraphs",), lambda: _by_paragraph(parsed.body))
        if not mine:
            return []
        others = None
        if (universe := self._universe) is not None:
            asked = scan.memo(
                ("contested", me, universe.version), lambda: universe.contested(me, mine)
            )
            if not budget.take(_MIN_PARAGRAPH * len(asked), info.shown):
                return []
            others = universe.indexed_duplicates(info.load_dir, me, asked)
        if others is None:  # the index cannot tell: what loads there, in order
            discovery = self.starts.discovery(info.load_dir)
            if discovery is None:
                return []
            sources = [s for s in discovery.sources if self.starts.real(s.path) != me]
            others = self._said_by(sources, mine, budget, info.shown)
        repeated = [(offset, where) for p, where in others.items() for offset in mine[p]]
        if not repeated or not budget.take(_MIN_PARAGRAPH * len(repeated), info.shown):
            return []
        base = len(lines.text) - len(parsed.body)
        out = []
        for offset, where in repeated:
            line, col = lines.at(base + offset)
            out.append(
                Finding(
                    info.shown,
                    line,
                    col,
                    codes.DUPLICATE.code,
                    f"this paragraph is also in {where}, which loads with it: keep it in one place",
                )
            )
        return out

    def _said_by(
        self,
        sources: Sequence[Source],
        mine: Mapping[str, Sequence[int]],
        budget: ScanBudget,
        shown: str,
    ) -> dict[str, str]:
        """Of the paragraphs `mine`, those `sources` say, each with the first source saying
        it: whichever is fewer, each of mine asked of every source or each of theirs of mine
        (none when the comparison does not fit in the budget)."""
        tables = [self._table(s.path, s.content) for s in sources]
        asked = len(mine) * len(tables)
        theirs = sum(map(len, tables))
        if not tables or not budget.take(_MIN_PARAGRAPH * min(asked, theirs), shown):
            return {}
        found: dict[str, str] = {}
        if asked <= theirs:
            for paragraph in mine:
                for source, table in zip(sources, tables, strict=True):
                    if paragraph in table:
                        found[paragraph] = source.display
                        break
        else:
            for source, table in zip(sources, tables, strict=True):
                for paragraph in table:
                    if paragraph in mine:
                        found.setdefault(paragraph, source.display)
        return found

    def _table(self, path: str, content: str) -> frozenset[str]:
        key = (path, content)
        found = self._tables.get(key)
        if found is None:
            found = self._tables[key] = frozenset(self._paragraphs_of(path, content))
        return found

    def _paragraphs_of(self, path: str, content: str) -> tuple[str, ...]:
        """A source's paragraphs; the same file loads for many directories of one run."""
        key = (path, content)
        found = self._paragraph_cache.get(key)
        if found is None:
            found = self._paragraph_cache[key] = tuple(p for _, p in _paragraphs(content))
        return found
