"""The store: `tool-results/` (level 1's saved outputs) and the session files, `raw.jsonl` (the
full list, appended before anything is dropped) and `ctx.json` (the list after a
compaction), as the first article keeps them (section 3.3).

**Confined.** The directory the caller gives (`store_dir`, or `sessions_dir` given to
`compact`) is theirs, but not a link standing at it: `.agent/sessions` in a checkout is where
a repository would plant one, so a link there is refused, naming the directory it reaches to
pass instead (as `output.write` refuses a planted `--out` link). Links above it are
followed: they are the machine's layout (`/tmp` on macOS, a home on another disk), which
nothing here could tell from a planted one without knowing the project, and the runtime
reads nothing of the project. Below it nothing is followed: each directory is opened
relative to its parent's descriptor with `O_NOFOLLOW` (and created there if missing), and
each file relative to its directory's, so a link, a FIFO or another file planted at
`tool-results`, `sessions`, `raw.jsonl` or `ctx.json` is refused (or, for `ctx.json`,
replaced), never written through. It does not write through
`output.write.write_file`, which follows links on purpose (the user's `--out` may be one),
but replaces `ctx.json` with the same `replace_in`, relative to its directory's descriptor.

`raw.jsonl` gets one JSON line per compaction, flushed and fsynced (and its directory, when
the file is new) before the caller may drop a message. A write that fails (a full disk, a
read-only directory, `sessions_dir` being a file, a planted link) is truncated back to where
it began and raises `ConversationError`: the file holds whole lines only, and the caller
drops nothing. A saved output never replaces another file (`save_new`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..display import shown
from ..errors import ConversationError
from ..output.write import replace_in
from .messages import dumps

PathLike = str | os.PathLike[str]
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
# A FIFO opened for writing with no reader would wait forever: O_NONBLOCK fails it at once.
_BELOW = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_READ_CHUNK = 1 << 20


class Below(NamedTuple):
    """The directory `parts` below the caller's `root`: links above `root` are followed (the
    caller's machine), none at it or below it. `given`: the parameter that named `root`, for
    the message that refuses a link at it."""

    root: Path
    parts: tuple[str, ...] = ()
    given: str = "store_dir"

    @classmethod
    def of(cls, place: PathLike | Below) -> Below:
        """A path the caller gave as `sessions_dir`."""
        return place if isinstance(place, Below) else cls(Path(place), given="sessions_dir")

    @property
    def path(self) -> Path:
        return self.root.joinpath(*self.parts)


class Refused(OSError):
    """Something planted in the store: `strerror` says what, for the one-line error."""


def _refuse(dir_fd: int, name: str, err: OSError, *, directory: bool = False) -> OSError:
    """`err` from opening `name`, as what stands there when it is something planted."""
    if err.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK, errno.ENXIO, errno.EISDIR):
        return err
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        return err
    if stat.S_ISLNK(mode):
        what = "is a link, and the store follows no link below the directory it was given"
    elif directory:
        what = "is not a directory"
    else:
        what = "is a directory" if stat.S_ISDIR(mode) else "is not a regular file"
    return Refused(err.errno, f"{shown(name)} {what}; move it away")


def _linked_root(place: Below) -> Refused:
    """The refusal of a link standing at `place.root`: what it reaches, to pass instead."""
    root = str(place.root)
    try:
        reached = os.path.realpath(root, strict=True)
    except OSError as err:
        if err.errno == errno.ELOOP:
            where = f"to {shown(os.readlink(root))}, a loop of links"
            then = f"pass another {place.given}"
        else:  # dangling: following it would create its target
            reached = os.path.realpath(root)
            where = f"to {shown(reached)}, which does not exist"
            then = f"pass {place.given}={shown(reached)!r} to write there"
    else:
        where = f"to {shown(reached)}"
        then = f"pass {place.given}={shown(reached)!r} to write there"
    return Refused(
        errno.ELOOP,
        f"{shown(root)} is a symlink {where}; a link at the store's directory may have been "
        f"planted and is not written through: {then}",
    )


@contextlib.contextmanager
def directory(place: Below) -> Iterator[int]:
    """A descriptor of `place`, each part created as needed and opened without following
    a link at its root or below it; raises `OSError` (a `Refused` one for something
    planted)."""
    if os.path.islink(place.root):  # before `makedirs`, which fails on a dangling one unsaid
        raise _linked_root(place)
    os.makedirs(place.root, exist_ok=True)
    try:
        fd = os.open(place.root, _DIRECTORY | os.O_NOFOLLOW)
    except OSError as err:
        raise _linked_root(place) if os.path.islink(place.root) else err from None
    try:
        for part in place.parts:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=fd)
            try:
                inner = os.open(part, _DIRECTORY | _BELOW, dir_fd=fd)
            except OSError as err:
                raise _refuse(fd, part, err, directory=True) from None
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _reason(path: Path, err: OSError) -> ConversationError:
    return ConversationError(
        f"{shown(str(path))}: cannot save the conversation ({err.strerror or err}); "
        "nothing was dropped"
    )


def _line(messages: Sequence[Any]) -> bytes:
    """One JSON line; what is not JSON cannot be kept, so nothing is dropped."""
    text = dumps(list(messages), strict=True)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, still lossless
        return (dumps(list(messages), strict=True, ascii=True) + "\n").encode("ascii")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _open_raw(dir_fd: int) -> tuple[int, bool]:
    """`raw.jsonl` for appending, and whether it is new; only a regular file of one link."""
    name, flags = "raw.jsonl", os.O_WRONLY | os.O_APPEND | _BELOW
    try:
        fd, new = os.open(name, flags | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=dir_fd), True
    except FileExistsError:
        try:
            fd, new = os.open(name, flags, dir_fd=dir_fd), False
        except OSError as err:
            raise _refuse(dir_fd, name, err) from None
    info = os.fstat(fd)
    problem = ""
    if not stat.S_ISREG(info.st_mode):
        problem = "is not a regular file"
    elif info.st_nlink > 1:  # a hard link: the same file stands somewhere else too
        problem = "has other hard links, so appending would write elsewhere too"
    if problem:
        os.close(fd)
        raise Refused(errno.EPERM, f"{name} {problem}; move it away")
    return fd, new


def append_raw(sessions_dir: PathLike | Below, messages: Sequence[Any]) -> Path:
    """Append `messages` as one line to `sessions_dir/raw.jsonl`, durably."""
    place = Below.of(sessions_dir)
    path = place.path / "raw.jsonl"
    data = _line(messages)
    try:
        with directory(place) as dir_fd:
            fd, new = _open_raw(dir_fd)
            try:
                start = os.fstat(fd).st_size
                try:
                    _write_all(fd, data)
                    os.fsync(fd)
                except OSError:
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, start)
                    raise
            finally:
                os.close(fd)
            if new:
                with contextlib.suppress(OSError):  # not every file system syncs a directory
                    os.fsync(dir_fd)
    except OSError as err:
        raise _reason(path, err) from None
    return path


def write_snapshot(sessions_dir: PathLike | Below, messages: Sequence[Any]) -> Path:
    """`sessions_dir/ctx.json`: the list, indented, replaced atomically (a temporary file in
    the same directory, renamed over it: whatever stood there, a planted link included, is
    replaced, never written through)."""
    place = Below.of(sessions_dir)
    path = place.path / "ctx.json"
    text = dumps(list(messages), strict=True, indent=2)
    try:
        data = (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped
        data = (dumps(list(messages), strict=True, ascii=True, indent=2) + "\n").encode("ascii")
    try:
        with directory(place) as dir_fd:
            replace_in(dir_fd, "ctx.json", data, like=None, mode=0o600)
    except OSError as err:
        raise ConversationError(
            f"{shown(str(path))}: cannot write ({err.strerror or err}); the list was not changed"
        ) from None
    return path


def _holds(dir_fd: int, name: str, data: bytes) -> bool:
    """Whether `name` is a regular file holding exactly `data` (a link, a FIFO: no)."""
    try:
        fd = os.open(name, os.O_RDONLY | _BELOW, dir_fd=dir_fd)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(data):
            return False
        view = memoryview(data)
        while chunk := file.read(_READ_CHUNK):
            if chunk != view[: len(chunk)]:
                return False
            view = view[len(chunk) :]
        return not view


def save_new(place: Below, names: Sequence[str], data: bytes) -> Path:
    """Save `data` as the first of `names` (plain names, no `/`) that is free, or that
    already holds exactly `data` (saved before: reused); never over another file. Raises
    `OSError` when every name is taken."""
    with directory(place) as dir_fd:
        for name in names:
            try:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BELOW
                fd = os.open(name, flags, 0o644, dir_fd=dir_fd)
            except FileExistsError:
                if _holds(dir_fd, name, data):
                    return place.path / name
                continue
            try:
                try:
                    _write_all(fd, data)
                finally:
                    os.close(fd)
            except BaseException:  # a part-written file is ours: no one else may take it
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=dir_fd)
                raise
            return place.path / name
    taken = " and ".join(shown(n) for n in names)
    raise Refused(errno.EEXIST, f"{taken} hold other output; move them away")
