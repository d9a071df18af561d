"""Paragraphs a file repeats from another file that loads with it (`CTX502`).

Whole-repository lint first indexes every paragraph any start in the repository can load
(`lint.universe`), so that only directories where a file may repeat another's paragraph are
discovered; without a complete index, each file is compared with what loads in its own
directory, as its start (`lint.context.Starts`) discovers it.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Iterator, Sequence
from pathlib import Path

from .. import codes
from ..parsing.positions import Lines
from .context import LOADS_AT_START, Recording, Starts
from .files import FileInfo, Finding
from .universe import Universe

_MIN_PARAGRAPH = 40


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
        self._universe: Universe | None = None
        self._indexing: Universe | None = None  # between `start_index` and `finish_index`

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

    def duplicates(self, info: FileInfo, lines: Lines, body: str) -> list[Finding]:
        """Paragraphs of this file that another file loading with it already says."""
        if codes.DUPLICATE.code not in self._wanted or not self.starts.applies(info):
            return []
        me = self.starts.real(str(info.path))
        mine = list(_paragraphs(body))
        others = (
            self._universe.indexed_duplicates(info.load_dir, me, (p for _, p in mine))
            if self._universe is not None
            else None
        )
        if others is None:  # the index cannot tell: what loads there, in order
            discovery = self.starts.discovery(info.load_dir)
            if discovery is None:
                return []
            others = {}
            for source in discovery.sources:
                if self.starts.real(source.path) == me:
                    continue
                for paragraph in self._paragraphs_of(source.path, source.content):
                    others.setdefault(paragraph, source.display)
        out = []
        base = len(lines.text) - len(body)
        for offset, paragraph in mine:
            where = others.get(paragraph)
            if where is not None:
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

    def _paragraphs_of(self, path: str, content: str) -> tuple[str, ...]:
        """A source's paragraphs; the same file loads for many directories of one run."""
        key = (path, content)
        found = self._paragraph_cache.get(key)
        if found is None:
            found = self._paragraph_cache[key] = tuple(p for _, p in _paragraphs(content))
        return found
