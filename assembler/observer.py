"""Watching one discovery run from the inside: what `explain` and the `Assembler` listen to.

A run has no observer unless one is put on its `Context` (`assemble(observer=...)`): plain
runs pay one `is None` test per hook. The `Loader` calls the hooks below; a stage that reads
files without the `Loader` calls `Context.observe(path)` so that `ctxasm watch` and the
incremental `Assembler` know the result depends on that path.

Two observers exist: `explain.Trace` (every candidate in load order and what became of it) and
`incremental.Recorder` (every path the result depends on, `stat`ed when first seen, and a cache
of processed files keyed by path + stat).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .loader import Loader
    from .model import Diagnostic, Layer, Reason, Source
    from .parse import Parsed


class Observer(Protocol):
    def candidate(self, path: str, layer: Layer, reason: Reason) -> None:
        """`path` is about to be considered as a source (it may not exist)."""

    def saw(self, path: str) -> None:
        """The result depends on `path`: its content, its existence or what it points to."""

    def listed(self, directory: str) -> None:
        """The entries of `directory` were read (a rules directory): adding one matters."""

    def loaded(self, source: Source) -> None:
        """`source` was loaded (a conditional rule too, before it waits for a match)."""

    def noted(self, path: str, diagnostic: Diagnostic) -> None:
        """A diagnostic about `path` (absolute) was recorded."""

    def read(
        self, loader: Loader, path: str, what: str, st: os.stat_result | None
    ) -> Parsed | None:
        """`loader.read_file(path, what, st)`, or what it returned before for the same file."""

    def content(self, path: str, data: bytes) -> None:
        """The loader read `data` from `path` (a text or binary file it opened)."""


class QuietObserver:
    """Every hook does nothing and reads go to the file: a base for observers that need few."""

    def candidate(self, path: str, layer: Layer, reason: Reason) -> None:
        pass

    def saw(self, path: str) -> None:
        pass

    def listed(self, directory: str) -> None:
        pass

    def loaded(self, source: Source) -> None:
        pass

    def noted(self, path: str, diagnostic: Diagnostic) -> None:
        pass

    def read(
        self, loader: Loader, path: str, what: str, st: os.stat_result | None
    ) -> Parsed | None:
        return loader.read_file(path, what, st)

    def content(self, path: str, data: bytes) -> None:
        pass
