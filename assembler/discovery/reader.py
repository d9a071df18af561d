"""Reading untrusted instruction files: bounded memory, never blocking, never following loops.

A file is stat'ed before it is opened: directories, FIFOs, sockets and devices are refused
without opening them (opening a FIFO would block), files over the size limit are refused
without reading them (a 1 GB sparse instruction file costs one stat), and at most `max_bytes + 1`
bytes are ever read.
"""

from __future__ import annotations

import errno
import os
import stat
from enum import Enum
from typing import NamedTuple


class ReadStatus(Enum):
    OK = "ok"
    MISSING = "missing"
    BROKEN_LINK = "broken symlink"
    DIRECTORY = "directory"
    SPECIAL = "not a regular file"
    TOO_LARGE = "too large"
    UNREADABLE = "unreadable"
    LOOP = "symlink loop"
    BINARY = "binary"


class ReadResult(NamedTuple):
    status: ReadStatus
    text: str = ""
    size: int = 0
    detail: str = ""
    replaced: int = -1  # byte offset of the first invalid UTF-8 sequence, or -1
    data: bytes = b""  # the bytes read (text and binary files)

    @property
    def ok(self) -> bool:
        return self.status is ReadStatus.OK


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _stat_failure(path: str, err: OSError) -> ReadResult:
    if err.errno == errno.ELOOP:
        return ReadResult(ReadStatus.LOOP, detail="symlink loop")
    if err.errno in (errno.ENOENT, errno.ENOTDIR):
        if os.path.islink(path):
            return ReadResult(ReadStatus.BROKEN_LINK, detail=f"points to {os.readlink(path)}")
        return ReadResult(ReadStatus.MISSING)
    if err.errno == errno.ENAMETOOLONG:
        return ReadResult(ReadStatus.MISSING)
    return ReadResult(ReadStatus.UNREADABLE, detail=err.strerror or str(err))


def probe(path: str) -> os.stat_result | ReadResult:
    """`os.stat` (following links), or the reason the path cannot be a file we read."""
    try:
        return os.stat(path)
    except OSError as err:
        return _stat_failure(path, err)


def read_text(path: str, max_bytes: int, st: os.stat_result | None = None) -> ReadResult:
    """The decoded text of `path`, or why not. Invalid UTF-8 is replaced (and reported)."""
    return _read(path, max_bytes, st, head=False)


def read_head(path: str, max_bytes: int) -> ReadResult:
    """The first `max_bytes` bytes of `path` however large it is (`size`: the whole file's),
    as a client that reads a file up to a byte budget does (project docs under a budget). `data`
    may end inside a character: `text` is decoded with replacement, for the caller to cut."""
    return _read(path, max_bytes, None, head=True)


def _read(path: str, max_bytes: int, st: os.stat_result | None, *, head: bool) -> ReadResult:
    if st is None:
        probed = probe(path)
        if isinstance(probed, ReadResult):
            return probed
        st = probed
    if stat.S_ISDIR(st.st_mode):
        return ReadResult(ReadStatus.DIRECTORY, detail="is a directory")
    if not stat.S_ISREG(st.st_mode):
        return ReadResult(ReadStatus.SPECIAL, detail="not a regular file (FIFO, socket or device)")
    if st.st_size > max_bytes and not head:
        return ReadResult(ReadStatus.TOO_LARGE, size=st.st_size)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as err:
        return _stat_failure(path, err)
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            return ReadResult(ReadStatus.SPECIAL, detail="not a regular file")
        chunks: list[bytes] = []
        remaining = max_bytes if head else max_bytes + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as err:
        return ReadResult(ReadStatus.UNREADABLE, detail=err.strerror or str(err))
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if head:
        size = max(opened.st_size, len(data))
        nul = data.find(b"\0")
        if nul >= 0:
            detail = f"NUL byte at offset {nul}"
            return ReadResult(ReadStatus.BINARY, size=size, detail=detail, data=data)
        return ReadResult(ReadStatus.OK, data.decode("utf-8", "replace"), size, data=data)
    if len(data) > max_bytes:
        return ReadResult(ReadStatus.TOO_LARGE, size=len(data))
    nul = data.find(b"\0")
    if nul >= 0:
        return ReadResult(
            ReadStatus.BINARY, size=len(data), detail=f"NUL byte at offset {nul}", data=data
        )
    try:
        return ReadResult(ReadStatus.OK, data.decode("utf-8"), len(data), data=data)
    except UnicodeDecodeError as err:
        text = data.decode("utf-8", "replace")
        return ReadResult(ReadStatus.OK, text, len(data), replaced=err.start, data=data)
