"""The one door between a discovery run and the filesystem, and who may listen at it.

Every `stat`, listing and read a run makes (the working directory and git markers, project
and policy files, settings, instruction files, rules directories, skills, imports) goes
through the run's `Disk`. Reads are bounded (`reader.read_text`: stat first, no FIFOs or
devices, never more than the caller's limit). An `Observer` on the `Disk` hears each access
before it happens, so the incremental `Assembler` and `ctxasm watch` learn what a result
depends on by watching the run itself: a client that reads a new kind of file is followed
with no list to keep up to date anywhere else.

A `Disk` without an observer (plain `assemble()`, `ctxasm render`) costs one `is None` test
per access. Two observers exist: `live.explain.Trace` (every candidate in load order and what
became of it) and `live.assembler.Recorder` (the signature of every path the result depends
on, and a cache of processed files keyed by path + signature).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Protocol, TypeVar

from .cache import ONE_RUN, ReadCache
from .reader import ReadResult, read_head, read_text

if TYPE_CHECKING:
    from ..model import Diagnostic, Layer, Reason, Source

T = TypeVar("T")
Compute = Callable[[os.stat_result | None], T]


class Observer(Protocol):
    def candidate(self, path: str, layer: Layer, reason: Reason) -> None:
        """`path` is about to be considered as a source (it may not exist)."""

    def saw(self, path: str) -> None:
        """The result depends on `path`: its content, its existence or what it points to."""

    def read(self, path: str) -> None:
        """The result depends on what `path` holds: it is about to be read (`saw` too)."""

    def listed(self, directory: str) -> None:
        """The entries of `directory` were read (a rules directory): adding one matters."""

    def loaded(self, source: Source) -> None:
        """`source` was loaded (a conditional rule too, before it waits for a match)."""

    def noted(self, path: str, diagnostic: Diagnostic) -> None:
        """A diagnostic about `path` (absolute) was recorded."""

    def cached(self, path: str, key: Hashable, st: os.stat_result | None, compute: Compute[T]) -> T:
        """`compute(st)`: what processing `path` gives (`key` says how it is processed), or
        what it gave before for the same file and key."""


class QuietObserver:
    """Every hook does nothing and nothing is cached: a base for observers that need few."""

    def candidate(self, path: str, layer: Layer, reason: Reason) -> None:
        pass

    def saw(self, path: str) -> None:
        pass

    def read(self, path: str) -> None:
        self.saw(path)

    def listed(self, directory: str) -> None:
        pass

    def loaded(self, source: Source) -> None:
        pass

    def noted(self, path: str, diagnostic: Diagnostic) -> None:
        pass

    def cached(self, path: str, key: Hashable, st: os.stat_result | None, compute: Compute[T]) -> T:
        return compute(st)


class Disk:
    """A run's filesystem access: `os` calls that tell the observer first, and bounded reads.

    The methods raise as the `os` functions they wrap; the predicates (`lexists`, `is_dir`,
    `is_file`) answer False for any error, as `os.path` does.
    """

    __slots__ = ("_reads", "observer")

    def __init__(self, observer: Observer | None = None) -> None:
        self.observer = observer
        self._reads: ReadCache | None = None  # the run's own, made when first asked

    def saw(self, path: str) -> None:
        """Record a dependency on `path` without touching it."""
        if self.observer is not None:
            self.observer.saw(path)

    def lstat(self, path: str) -> os.stat_result:
        if self.observer is not None:
            self.observer.saw(path)
        return os.lstat(path)

    def stat(self, path: str) -> os.stat_result:
        if self.observer is not None:
            self.observer.saw(path)
        return os.stat(path)

    def lexists(self, path: str) -> bool:
        if self.observer is not None:
            self.observer.saw(path)
        return os.path.lexists(path)

    def is_dir(self, path: str) -> bool:
        if self.observer is not None:
            self.observer.saw(path)
        return os.path.isdir(path)

    def is_file(self, path: str) -> bool:
        if self.observer is not None:
            self.observer.saw(path)
        return os.path.isfile(path)

    def realpath(self, path: str, *, strict: bool = False) -> str:
        if self.observer is not None:
            self.observer.saw(path)
        return os.path.realpath(path, strict=strict)

    def scandir(self, directory: str) -> list[os.DirEntry[str]]:
        """The entries of `directory`, in the order the filesystem gives them."""
        if self.observer is not None:
            self.observer.listed(directory)
        with os.scandir(directory) as it:
            return list(it)

    def read(self, path: str, max_bytes: int, st: os.stat_result | None = None) -> ReadResult:
        """`reader.read_text`: at most `max_bytes`, never blocking, never a special file."""
        if self.observer is not None:
            self.observer.read(path)
        return read_text(path, max_bytes, st)

    def read_head(self, path: str, max_bytes: int) -> ReadResult:
        """`reader.read_head`: the first `max_bytes` bytes, however large the file is."""
        if self.observer is not None:
            self.observer.read(path)
        return read_head(path, max_bytes)

    def cached(self, path: str, key: Hashable, st: os.stat_result | None, compute: Compute[T]) -> T:
        """`compute(st)`, or what it gave before for the same file and `key`: in this run
        (`ReadCache`: under any name, so links to one file are processed once), or in an
        earlier one the observer kept."""
        if self._reads is None:
            self._reads = ReadCache()
        reads = self._reads

        def once_a_run(st: os.stat_result | None) -> T:
            return reads.cached(path, key, st, compute, ONE_RUN)

        if self.observer is None:
            return once_a_run(st)
        return self.observer.cached(path, key, st, once_a_run)
