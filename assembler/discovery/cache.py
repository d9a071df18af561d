"""Processed files kept between runs, and the file signatures that prove them current.

A signature is what `os.stat` says of a path (mtime, size, inode, device, ctime; or the errno
of a failed `stat`). A `ReadCache` keeps what processing a file gave (its parse and what the
loader noted about it), keyed by path, how it was processed and its signature, so an
unchanged file is never read or parsed twice: the incremental `Assembler` keeps one across
its runs, `ctxasm lint` one across the directories of a run.

A signature only proves "unchanged" once the file's times are older than the filesystem's
timestamp granularity (git's "racily clean" entries): a file written twice within one clock
tick can keep its size and times. A signature younger than that is never trusted.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")
# (st_mtime_ns, st_size, st_ino, st_dev, st_ctime_ns); a directory that was not listed: its
# identity (st_ino, st_dev), since what matters in it is watched entry by entry (a log file
# written into cwd, or git touching `.git`, must not count as a change); or the errno of a
# failed `stat`.
Signature = tuple[int, int, int, int, int] | tuple[int, int] | int

# Times within this much of the run's start are too fresh to prove a file unchanged: one clock
# tick of the kernel's coarse clock (<= 10 ms) with a margin, or 2 s where the filesystem keeps
# whole seconds only (FAT, HFS+, ext3): there a timestamp has no fraction.
FRESH_NS = 50_000_000
FRESH_WHOLE_SECONDS_NS = 2_000_000_000


def of_stat(st: os.stat_result) -> Signature:
    """The signature of a file (or a listed directory) from its `stat`."""
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns)


def signature(path: str, *, listed: bool = False) -> Signature:
    """The `stat` (following links) that changes whenever the file's content could have; of a
    directory, its identity unless its entries were `listed` (then a new entry matters)."""
    try:
        st = os.stat(path)
    except OSError as err:
        return err.errno or -1
    except ValueError:  # a NUL in the path: nothing can be there
        return -1
    if not listed and stat.S_ISDIR(st.st_mode):
        return (st.st_ino, st.st_dev)
    return of_stat(st)


def settled(sig: Signature, since_ns: int) -> bool:
    """Whether any later change to the file is sure to change `sig` (see the module doc)."""
    if isinstance(sig, int) or len(sig) == 2:
        return True
    newest = max(sig[0], sig[4])  # ctime on POSIX; mtime where ctime is the creation time
    whole = sig[0] % 1_000_000_000 == 0 and sig[4] % 1_000_000_000 == 0
    return newest <= since_ns - (FRESH_WHOLE_SECONDS_NS if whole else FRESH_NS)


def unchanged(paths: Sequence[str], signatures: Sequence[Signature]) -> bool:
    """One `stat` per path, stopping at the first difference. The hot path of re-assembly."""
    stat_of, is_dir = os.stat, stat.S_ISDIR
    for path, expected in zip(paths, signatures, strict=True):
        try:
            st = stat_of(path)
        except OSError as err:
            if expected != err.errno:
                return False
            continue
        except ValueError:
            if expected != -1:
                return False
            continue
        if isinstance(expected, tuple) and len(expected) == 2:  # a directory's identity
            if expected != (st.st_ino, st.st_dev) or not is_dir(st.st_mode):
                return False
        elif expected != of_stat(st):
            return False
    return True


class _Entry(NamedTuple):
    signature: Signature
    value: Any


# File bytes (`st_size`) of the distinct files whose processing one cache keeps: a repository
# of many large instruction files is read again past it, never held whole.
HELD_BYTES = 64 * 1024 * 1024
# `since_ns` for a cache of one run: every file counts as settled (a file changed while one
# run reads it is a race the run loses either way).
ONE_RUN = 1 << 62
_MISSING = object()


class ReadCache:
    """Processed files (what reading and parsing gave, diagnostics included), keyed by path,
    how it was processed, and the file's signature: an unchanged file is never read twice.

    Processing depends on the file, not on the name it is read by, so paths with the same
    signature (links to one file, hard links) share one value: a thousand rules linked to one
    file are read and parsed once, and held once. The distinct files held are bounded
    (`HELD_BYTES` of their sizes); past it a file is processed each time it is asked for."""

    __slots__ = ("_entries", "_held", "_same", "_used", "_used_before")

    def __init__(self) -> None:
        self._entries: dict[tuple[str, Hashable], _Entry] = {}
        self._same: dict[tuple[Signature, Hashable], Any] = {}  # by the file, not its name
        self._held = 0  # bytes of the files in `_same`
        self._used: set[tuple[str, Hashable]] = set()
        self._used_before: set[tuple[str, Hashable]] = set()

    def __len__(self) -> int:
        return len(self._entries)

    def cached(
        self,
        path: str,
        key: Hashable,
        st: os.stat_result | None,
        compute: Callable[[os.stat_result | None], T],
        since_ns: int,
    ) -> T:
        if st is None:
            try:
                st = os.stat(path)
            except (OSError, ValueError):  # let the computation say why (broken link, loop, ...)
                return compute(None)
        sig = of_stat(st)
        entry_key = (path, key)
        self._used.add(entry_key)
        entry = self._entries.get(entry_key)
        if entry is not None and entry.signature == sig:
            value: T = entry.value
            return value
        if not settled(sig, since_ns):
            self._entries.pop(entry_key, None)
            return compute(st)
        value = self._same.get((sig, key), _MISSING)
        if value is _MISSING:
            value = compute(st)
            if self._held + st.st_size > HELD_BYTES:
                self._entries.pop(entry_key, None)
                return value
            self._same[(sig, key)] = value
            self._held += st.st_size
        self._entries[entry_key] = _Entry(sig, value)
        return value

    def prune(self) -> None:
        """Forget files neither of the last two runs read (deleted, renamed, no longer in)."""
        keep = self._used | self._used_before
        for key in [k for k in self._entries if k not in keep]:
            del self._entries[key]
        self._used_before, self._used = self._used, set()
        held = {(e.signature, key): e.value for (_, key), e in self._entries.items()}
        self._same = held
        self._held = sum(sig[1] for sig, _ in held if isinstance(sig, tuple) and len(sig) == 5)
