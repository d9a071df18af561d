"""The session files: `raw.jsonl` (the full list, appended before anything is dropped) and
`ctx.json` (the list after a compaction), as the first article keeps them (section 3.3).

`raw.jsonl` gets one JSON line per compaction, flushed and fsynced (and its directory, when
the file is new) before the caller may drop a message. A write that fails (a full disk, a
read-only directory, `sessions_dir` being a file) is truncated back to where it began and
raises `ConversationError`: the file holds whole lines only, and the caller drops nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..display import shown
from ..errors import AssemblerError, ConversationError
from ..output.write import write_file
from .messages import dumps

PathLike = str | os.PathLike[str]


def _line(messages: Sequence[Any]) -> bytes:
    """One JSON line; what is not JSON cannot be kept, so nothing is dropped."""
    text = dumps(list(messages), strict=True)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped, still lossless
        return (dumps(list(messages), strict=True, ascii=True) + "\n").encode("ascii")


def _reason(path: Path, err: OSError) -> ConversationError:
    return ConversationError(
        f"{shown(str(path))}: cannot save the conversation ({err.strerror or err}); "
        "nothing was dropped"
    )


def append_raw(sessions_dir: PathLike, messages: Sequence[Any]) -> Path:
    """Append `messages` as one line to `sessions_dir/raw.jsonl`, durably."""
    path = Path(sessions_dir) / "raw.jsonl"
    data = _line(messages)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        new = not path.exists()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    except OSError as err:
        raise _reason(path, err) from None
    try:
        start = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as err:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise _reason(path, err) from None
    finally:
        os.close(fd)
    if new:
        _sync_dir(path.parent)
    return path


def _sync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system syncs a directory
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_snapshot(sessions_dir: PathLike, messages: Sequence[Any]) -> Path:
    """`sessions_dir/ctx.json`: the list, indented, through the one file writer (replaced
    atomically)."""
    path = Path(sessions_dir) / "ctx.json"
    text = dumps(list(messages), strict=True, indent=2)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped
        text = dumps(list(messages), strict=True, ascii=True, indent=2)
    try:
        write_file(path, text + "\n")
    except AssemblerError as err:
        raise ConversationError(f"{err}; the list was not changed") from None
    return path
