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

Everything is kept on the object, never in a module: a watch must not see stale data.

A signature only proves "unchanged" once the file's times are older than the filesystem's
timestamp granularity (git's "racily clean" entries): a file written twice within one clock
tick can keep its size and times. A signature younger than that is never trusted, so the next
request reads the file again.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, Unpack

from ..assembly import Assembly, run
from ..discovery.disk import Compute, QuietObserver
from ..request import Options, PathLike, Request

if TYPE_CHECKING:
    from ..model import Layer, Reason

T = TypeVar("T")
# (st_mtime_ns, st_size, st_ino, st_dev, st_ctime_ns), or the errno of a failed `stat`.
Signature = tuple[int, int, int, int, int] | int

# Times within this much of the run's start are too fresh to prove a file unchanged: one clock
# tick of the kernel's coarse clock (<= 10 ms) with a margin, or 2 s where the filesystem keeps
# whole seconds only (FAT, HFS+, ext3): there a timestamp has no fraction.
FRESH_NS = 50_000_000
FRESH_WHOLE_SECONDS_NS = 2_000_000_000
KEEP_RESULTS = 8


def signature(path: str) -> Signature:
    """The `stat` (following links) that changes whenever the file's content could have."""
    try:
        st = os.stat(path)
    except OSError as err:
        return err.errno or -1
    except ValueError:  # a NUL in the path: nothing can be there
        return -1
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns)


def settled(sig: Signature, since_ns: int) -> bool:
    """Whether any later change to the file is sure to change `sig` (see the module doc)."""
    if isinstance(sig, int):
        return True
    newest = max(sig[0], sig[4])  # ctime on POSIX; mtime where ctime is the creation time
    whole = sig[0] % 1_000_000_000 == 0 and sig[4] % 1_000_000_000 == 0
    return newest <= since_ns - (FRESH_WHOLE_SECONDS_NS if whole else FRESH_NS)


def unchanged(paths: Sequence[str], signatures: Sequence[Signature]) -> bool:
    """One `stat` per path, stopping at the first difference. The hot path of re-assembly."""
    stat = os.stat
    for path, expected in zip(paths, signatures, strict=True):
        try:
            st = stat(path)
        except OSError as err:
            if expected != err.errno:
                return False
            continue
        except ValueError:
            if expected != -1:
                return False
            continue
        if expected != (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns):
            return False
    return True


class Dependencies(NamedTuple):
    """What a result depends on: paths (files, directories, missing candidates) and the
    directories whose entries were read (a new entry there matters)."""

    paths: tuple[str, ...] = ()
    listed: tuple[str, ...] = ()


class _Entry(NamedTuple):
    signature: Signature
    value: Any


class ReadCache:
    """Processed files (what reading and parsing gave, diagnostics included), keyed by path,
    how it was processed, and the file's signature: an unchanged file is never read twice."""

    __slots__ = ("_entries", "_used", "_used_before")

    def __init__(self) -> None:
        self._entries: dict[tuple[str, Hashable], _Entry] = {}
        self._used: set[tuple[str, Hashable]] = set()
        self._used_before: set[tuple[str, Hashable]] = set()

    def __len__(self) -> int:
        return len(self._entries)

    def cached(
        self,
        path: str,
        key: Hashable,
        st: os.stat_result | None,
        compute: Compute[T],
        since_ns: int,
    ) -> T:
        if st is None:
            try:
                st = os.stat(path)
            except (OSError, ValueError):  # let the computation say why (broken link, loop, ...)
                return compute(None)
        sig = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns)
        entry_key = (path, key)
        self._used.add(entry_key)
        entry = self._entries.get(entry_key)
        if entry is not None and entry.signature == sig:
            value: T = entry.value
            return value
        value = compute(st)
        if settled(sig, since_ns):
            self._entries[entry_key] = _Entry(sig, value)
        else:
            self._entries.pop(entry_key, None)
        return value

    def prune(self) -> None:
        """Forget files neither of the last two runs read (deleted, renamed, no longer in)."""
        keep = self._used | self._used_before
        for key in [k for k in self._entries if k not in keep]:
            del self._entries[key]
        self._used_before, self._used = self._used, set()


class Recorder(QuietObserver):
    """The observer of one run of an `Assembler`: each path's signature when first seen."""

    __slots__ = ("listed_dirs", "reads", "seen", "since")

    def __init__(self, reads: ReadCache | None, since_ns: int) -> None:
        self.reads = reads
        self.since = since_ns
        self.seen: dict[str, Signature] = {}
        self.listed_dirs: dict[str, None] = {}

    def candidate(self, path: str, layer: Layer, reason: Reason) -> None:
        self.saw(path)

    def saw(self, path: str) -> None:
        if path not in self.seen:
            self.seen[path] = signature(path)

    def listed(self, directory: str) -> None:
        self.saw(directory)
        self.listed_dirs[directory] = None

    def cached(self, path: str, key: Hashable, st: os.stat_result | None, compute: Compute[T]) -> T:
        self.saw(path)
        if self.reads is None:
            return compute(st)
        return self.reads.cached(path, key, st, compute, self.since)

    def dependencies(self) -> Dependencies:
        return Dependencies(tuple(self.seen), tuple(self.listed_dirs))


class _Result(NamedTuple):
    assembly: Assembly
    dependencies: Dependencies
    signatures: tuple[Signature, ...]
    settled: bool


class Assembler:
    """Assembles the context of one working directory again and again, cheaply.

    The arguments are those of `assemble()`; home, managed directory and environment are fixed
    when the object is made. `assemble(touched)` returns what `assemble()` would; when nothing
    it depends on changed since the same request, the very same `Assembly` object, for the
    price of one `stat` per dependency. Not thread-safe: one `Assembler` per thread.
    """

    def __init__(self, cwd: PathLike | Request = ".", **options: Unpack[Options]) -> None:
        request = Request.of(cwd, **options)
        self.request = dataclasses.replace(request, cwd=request.cwd.absolute(), touched=())
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
        key = tuple(os.path.abspath(p) for p in touched)
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
            assembly = run(dataclasses.replace(self.request, touched=key), observer=recorder)
        finally:
            self.dependencies = recorder.dependencies()
            self._reads.prune()
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
