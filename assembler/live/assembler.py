"""The `Assembler`: `assemble()` with memory, for agents and `ctxasm watch`.

SPEC section 10: an agent re-assembles every turn, and a re-assembly when nothing changed on
disk must cost little more than the `stat` calls that prove nothing changed. So an
`Assembler` keeps, per request, the `Assembly` and the signature (mtime, size, inode, device,
ctime) of every path the result depends on, taken when the run first touched it. It learns
those paths by observing the run's `Disk` (`discovery.disk`), through which every access
goes: each candidate looked at (found or not), each directory listed, each file read, the
settings, approval, policy and git marker files; there is no list of them to keep. The next
request `stat`s those paths; when every signature is unchanged it returns the same
`Assembly` object. Otherwise discovery runs again with a cache of processed files keyed by
path + stat, so only the files that changed are read.

Everything is kept on the object, never in a module: a watch must not see stale data. A
signature younger than the filesystem's clock granularity proves nothing (`discovery.cache`),
so such a file is read again by the next request.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, NamedTuple, TypeVar, Unpack

from ..assembly import Assembly, run
from ..discovery.cache import ReadCache, Signature, settled, signature, unchanged
from ..discovery.disk import Compute, QuietObserver
from ..request import Options, PathLike, Request, checked_paths
from ..versions import INSTALLED

if TYPE_CHECKING:
    from ..model import Layer, Reason

T = TypeVar("T")
KEEP_RESULTS = 8  # requests (touched-path lists) whose result is kept


class Dependencies(NamedTuple):
    """What a result depends on: paths (files, directories, missing candidates) and the
    directories whose entries were read (a new entry there matters). `read`: those of the
    paths whose content matters, read or considered as a source (a missing candidate); the
    others only had their type or existence looked at (an entry of a rules directory)."""

    paths: tuple[str, ...] = ()
    listed: tuple[str, ...] = ()
    read: frozenset[str] = frozenset()


class Recorder(QuietObserver):
    """The observer of one run of an `Assembler`: each path's signature when first seen."""

    __slots__ = ("content", "listed_dirs", "reads", "seen", "since")

    def __init__(self, reads: ReadCache | None, since_ns: int) -> None:
        self.reads = reads
        self.since = since_ns
        self.seen: dict[str, Signature] = {}
        self.listed_dirs: dict[str, None] = {}
        self.content: set[str] = set()  # `Dependencies.read`

    def candidate(self, path: str, layer: Layer, reason: Reason) -> None:
        self.read(path)

    def saw(self, path: str) -> None:
        if path not in self.seen:
            self.seen[path] = signature(path)

    def read(self, path: str) -> None:
        self.saw(path)
        self.content.add(path)

    def listed(self, directory: str) -> None:
        if directory not in self.listed_dirs:  # its entries matter now, not only its identity
            self.seen[directory] = signature(directory, listed=True)
        self.listed_dirs[directory] = None

    def cached(self, path: str, key: Hashable, st: os.stat_result | None, compute: Compute[T]) -> T:
        self.read(path)
        if self.reads is None:
            return compute(st)
        return self.reads.cached(path, key, st, compute, self.since)

    def dependencies(self) -> Dependencies:
        return Dependencies(tuple(self.seen), tuple(self.listed_dirs), frozenset(self.content))


class _Result(NamedTuple):
    assembly: Assembly
    dependencies: Dependencies
    signatures: tuple[Signature, ...]
    settled: bool


class Assembler:
    """Assembles the context of one working directory again and again, cheaply.

    The arguments are those of `assemble()`; home, managed directory, environment and the
    client's release are fixed when the object is made (`installed` is asked on the first
    run, and the release it reports kept). `assemble(touched)` returns what `assemble()` would; when nothing
    it depends on changed since the same request, the very same `Assembly` object, for the
    price of one `stat` per dependency. Not thread-safe: one `Assembler` per thread.
    """

    def __init__(self, cwd: PathLike | Request = ".", **options: Unpack[Options]) -> None:
        request = Request.of(cwd, **options)
        self.request = request._replace(cwd=request.cwd.absolute(), touched=())
        self.runs = 0  # requests that ran discovery
        self.reuses = 0  # requests answered by `stat` calls alone
        self.dependencies = Dependencies()  # of the last request, even a failed one
        self._reads = ReadCache()
        self._results: OrderedDict[tuple[str, ...], _Result] = OrderedDict()

    @property
    def cwd(self) -> str:
        return str(self.request.cwd)

    def assemble(self, touched: Sequence[PathLike] = ()) -> Assembly:
        """The context for this directory after the agent read `touched` (in order)."""
        key = tuple(os.path.abspath(p) for p in checked_paths(touched, "touched"))
        found = self._results.get(key)
        if (
            found is not None
            and found.settled
            and unchanged(found.dependencies.paths, found.signatures)
        ):
            self.reuses += 1
            self._results.move_to_end(key)
            self.dependencies = found.dependencies
            return self._dated(key, found)
        return self._run(key)

    def _run(self, key: tuple[str, ...]) -> Assembly:
        self._results.pop(key, None)
        since = time.time_ns()
        recorder = Recorder(self._reads, since)
        self.runs += 1
        try:
            assembly = run(self.request._replace(touched=key), observer=recorder)
        finally:
            self.dependencies = recorder.dependencies()
            self._reads.prune()
        if self.request.client_version == INSTALLED:  # asked once: the release it reported
            self.request = self.request._replace(client_version=assembly.version.found)
        signatures = tuple(recorder.seen.values())
        self._results[key] = _Result(
            assembly,
            self.dependencies,
            signatures,
            all(settled(s, since) for s in signatures),
        )
        while len(self._results) > KEEP_RESULTS:
            self._results.popitem(last=False)
        return assembly

    def _dated(self, key: tuple[str, ...], found: _Result) -> Assembly:
        """The kept result, its date moved on if midnight passed (the new one is kept)."""
        dated = found.assembly.dated(self.request.now)
        if dated is not found.assembly:
            self._results[key] = found._replace(assembly=dated)
        return dated
