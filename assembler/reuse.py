"""A repeated `assemble()` request answered from its last result, once that is proven current.

SPEC section 10: an agent calls `assemble()` every turn, and a re-assembly when nothing
changed on disk must cost little more than the I/O that proves nothing changed. The
`Assembler` does that for callers that keep an object; this module does it for plain
`assemble()` calls, with a stronger proof, because the caller never opted in:

- every path the result depends on (each candidate found or not, rules and skills
  directories, settings, approvals, policy files, git markers; what the `Assembler`
  records) has the same `stat` signature, ctime included, which every write changes;
- every rules and skills directory listed still has the same entries;
- every instruction file the run read is read again and is the same, byte for byte.

Only then is the last `Assembly` returned (the same object; it is immutable). A result is
kept only when every signature is "settled" (older than the clock granularity, see
`incremental.settled`): a file written twice within one clock tick can keep its size and
times. A request is recorded the second time it is seen, so a one-shot `ctxasm render` pays
nothing for this. Requests with an observer (`explain`, the `Assembler`, `watch`) or the
environment section (it runs git) always run discovery.

The memo is per process, bounded (entries and bytes kept for comparison) and thread-safe;
`forget()` empties it, `info()` counts what it did.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .reader import ReadStatus, read_text, same_bytes

if TYPE_CHECKING:
    from .assembly import Assembly, Request
    from .incremental import Signature

KEEP_RESULTS = 16
KEEP_SIGHTINGS = 64
MEMO_BYTES = 16 << 20  # all results together: bytes kept for comparison + source text

Key = tuple[object, ...]


class Info(NamedTuple):
    hits: int  # requests answered from a kept result
    runs: int  # requests that ran discovery
    results: int  # results kept now
    size: int  # what they hold: bytes kept for comparison and characters of source text


class _Kept(NamedTuple):
    assembly: Assembly
    paths: tuple[str, ...]
    signatures: tuple[Signature, ...]
    listings: tuple[tuple[str, frozenset[str]], ...]
    contents: tuple[tuple[str, bytes], ...]
    size: int


class _Memo:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.results: OrderedDict[Key, _Kept] = OrderedDict()
        self.sighted: OrderedDict[Key, None] = OrderedDict()
        self.size = self.hits = self.runs = 0

    def get(self, key: Key) -> _Kept | None:
        with self.lock:
            return self.results.get(key)

    def sight(self, key: Key | None) -> bool:
        """Whether `key` was requested before (and remember that it now was); a run follows."""
        with self.lock:
            self.runs += 1
            if key is None:
                return False
            seen = key in self.sighted
            self.sighted[key] = None
            self.sighted.move_to_end(key)
            while len(self.sighted) > KEEP_SIGHTINGS:
                self.sighted.popitem(last=False)
            return seen

    def hit(self, key: Key, kept: _Kept) -> None:
        with self.lock:
            self.hits += 1
            if self.results.get(key) is kept:
                self.results.move_to_end(key)

    def keep(self, key: Key, kept: _Kept) -> None:
        with self.lock:
            self.drop(key)
            if kept.size > MEMO_BYTES // 4:
                return
            self.results[key] = kept
            self.size += kept.size
            while len(self.results) > KEEP_RESULTS or self.size > MEMO_BYTES:
                self.drop(next(iter(self.results)))

    def drop(self, key: Key) -> None:
        old = self.results.pop(key, None)
        if old is not None:
            self.size -= old.size


_MEMO = _Memo()


def forget() -> None:
    """Empty the memo: the next requests run discovery (benchmarks and tests use this)."""
    global _MEMO
    _MEMO = _Memo()


def info() -> Info:
    memo = _MEMO
    with memo.lock:
        return Info(memo.hits, memo.runs, len(memo.results), memo.size)


def assemble_reusing(request: Request) -> Assembly:
    """`assembly.run(request)`, or its last result when that is proven current."""
    from .assembly import run

    key = request_key(request)
    memo = _MEMO
    if key is None:  # nothing to compare it with
        memo.sight(key)
        return run(request)
    kept = memo.get(key)
    if kept is not None and current(kept):
        memo.hit(key, kept)
        return kept.assembly.dated(request.now)
    if not memo.sight(key):
        return run(request)
    assembly, recorded = _recorded_run(request)
    if recorded is not None:
        memo.keep(key, recorded)
    return assembly


def request_key(request: Request) -> Key | None:
    """What makes two requests the same; None when one cannot be compared (an unhashable
    `Policy` or counter). The process's directory is part of it: relative paths (a relative
    `CLAUDE_CONFIG_DIR`, say) mean something else from elsewhere."""
    from .policy import is_policy_path

    policy = request.policy
    if isinstance(policy, str | os.PathLike) and is_policy_path(os.fspath(policy)):
        policy = os.path.abspath(policy)
    key = (
        os.getcwd(),
        os.path.abspath(request.cwd),
        policy,
        os.path.abspath(request.home),
        os.path.abspath(request.managed_dir),
        frozenset(request.environ.items()),
        tuple(os.path.abspath(p) for p in request.touched),
        request.max_tokens,
        request.counter,
        request.now,
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def current(kept: _Kept) -> bool:
    """Whether disk still holds what `kept` was assembled from (see the module doc)."""
    from .incremental import unchanged

    if not unchanged(kept.paths, kept.signatures):
        return False
    if any(_entries(directory) != names for directory, names in kept.listings):
        return False
    return all(same_bytes(path, data) for path, data in kept.contents)


def _entries(directory: str) -> frozenset[str] | None:
    """The names in `directory`, or None when it cannot be listed."""
    try:
        with os.scandir(directory) as it:
            return frozenset(entry.name for entry in it)
    except OSError:
        return None


def _recorded_run(request: Request) -> tuple[Assembly, _Kept | None]:
    """A run that records what its result depends on; the record when it can be trusted."""
    from .assembly import run
    from .incremental import ContentRecorder, record_setup, settled

    since = time.time_ns()
    recorder = ContentRecorder(since)
    setup_files = record_setup(
        recorder,
        Path(os.path.abspath(request.cwd)),
        request.home,
        request.managed_dir,
        request.environ,
        request.policy,
    )
    for path in request.touched:
        recorder.saw(os.path.abspath(path))
    assembly = run(request, observer=recorder).detached()
    signatures = tuple(recorder.seen.values())
    if not all(settled(s, since) for s in signatures):
        return assembly, None
    # A directory that cannot be listed (missing, unreadable) is left to its signature.
    listed = ((directory, _entries(directory)) for directory in recorder.listed_dirs)
    listings = tuple((directory, names) for directory, names in listed if names is not None)
    read = recorder.contents
    for path in setup_files:  # settings, approvals, policy files, SKILL.md: read them too
        if path not in read:
            found = read_text(path, MEMO_BYTES // 4)
            if found.status in (ReadStatus.OK, ReadStatus.BINARY):
                read[path] = found.data
    contents = tuple(read.items())
    kept = _Kept(
        assembly,
        tuple(recorder.seen),
        signatures,
        listings,
        contents,
        sum(len(data) for _, data in contents) + sum(len(s.content) for s in assembly.discovered),
    )
    return assembly, kept
