"""Writing an output where the user asked for it: stdout, or a file given with `--out`.

`render`, `watch` and `cache --save` write through `write_file`, so every one of them:

* replaces a regular file atomically (a temporary file in the same directory, then
  `os.replace`), keeping its permission bits; a new file gets the umask's, like `>`;
* writes through a symlink to its target (the target is replaced, the link stays);
* writes a FIFO, a character device (`/dev/null`, a terminal) or whatever a descriptor path
  (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`) reaches in place, opened without creating
  or truncating it, and never replaces it (a rename over `/dev/full`, as root, would destroy
  the device node);
* refuses a directory, a socket or a block device, and a file that is a source of the context
  being written (it would be overwritten by its own rendering).

A write that fails (a full disk, a missing directory) is one `AssemblerError` line, never a
traceback. A pipe whose reader has gone (`| head -1`) is no failure: see `write_stdout`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
from collections.abc import Iterable

from ..display import shown
from ..errors import AssemblerError

PathLike = str | os.PathLike[str]
# Paths that name an open descriptor of this process: what they reach is never replaced.
_DESCRIPTOR = r"/(?:dev/(?:fd/|std(?:in|out|err)$)|proc/[^/]+/fd/)"
_PLACE = {errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.EROFS}


def write_stdout(text: str) -> bool:
    """`text` on stdout as UTF-8 whatever the locale (plus a newline on a terminal). False
    when the reader of the pipe has gone (`| head -1`): not an error, the reader has what it
    wanted; stdout is pointed at /dev/null, so the command ends quietly with its own code."""
    stream = sys.stdout
    if stream is None:  # started with stdout closed (`>&-`)
        raise AssemblerError("stdout is closed: nothing can be written; use --out or redirect it")
    try:
        if stream.isatty() and not text.endswith("\n"):
            text += "\n"
        stream.flush()
        # Exact bytes (click.echo would strip ANSI escapes an instruction file may really hold).
        data = memoryview(text.encode("utf-8", "surrogateescape"))
        while data:  # a pipe takes part of a large write, and the failure comes on the next
            data = data[stream.buffer.write(data) :]
        stream.buffer.flush()
    except BrokenPipeError:  # the reader closed the pipe (EPIPE; Python ignores SIGPIPE)
        _discard_stdout()
        return False
    except OSError as err:  # a full disk (`> /dev/full`)
        _discard_stdout()
        raise AssemblerError(f"stdout: cannot write ({_reason(err)})") from None
    return True


def _discard_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered is dropped at exit instead of failing
    again with a traceback (https://docs.python.org/3/library/signal.html#note-on-sigpipe)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def write_file(path: PathLike, text: str, *, sources: Iterable[str] = ()) -> None:
    """Write `text` (UTF-8) to `path` as the module doc says; `sources`: the paths of the
    context's sources, which `path` must not be."""
    data = text.encode("utf-8", "surrogateescape")
    name = os.fspath(path)
    try:
        try:
            st: os.stat_result | None = os.stat(name)  # through links: what a write reaches
        except FileNotFoundError:
            st = None  # new, or a symlink to a file still to create
        if st is not None:
            _refuse_source(name, st, sources)
            if stat.S_ISDIR(st.st_mode):
                raise AssemblerError(f"{shown(name)}: is a directory; pass a file to write")
            if (
                stat.S_ISFIFO(st.st_mode)
                or stat.S_ISCHR(st.st_mode)
                or re.match(_DESCRIPTOR, os.path.abspath(name))
            ):
                _write_in_place(name, data)
                return
            if not stat.S_ISREG(st.st_mode):
                raise AssemblerError(
                    f"{shown(name)}: a socket or block device; refusing to write it, "
                    "pass a regular file"
                )
        _replace(os.path.realpath(name), data, st)
    except OSError as err:
        hint = "; check the directory exists and is writable" if err.errno in _PLACE else ""
        raise AssemblerError(f"{shown(name)}: cannot write ({_reason(err)}){hint}") from None


def _refuse_source(name: str, st: os.stat_result, sources: Iterable[str]) -> None:
    for source in sources:
        try:
            other = os.stat(source)
        except (OSError, ValueError):
            continue
        if (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            raise AssemblerError(
                f"{shown(name)}: is {shown(source)}, a source of this context; "
                "write the output elsewhere"
            )


def _write_in_place(name: str, data: bytes) -> None:
    """A FIFO, a character device, or what a descriptor path (`/dev/stdout`) reaches: opened
    for writing only, never created or truncated (a file behind `/dev/stdout` was set up by
    the shell, `>` or `>>`: it is appended to); a FIFO waits for its reader."""
    fd = os.open(name, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _replace(target: str, data: bytes, st: os.stat_result | None) -> None:
    """A temporary file beside `target`, renamed over it: readers see the old or the new
    text, never half of it. An existing file keeps its mode (and, as root, its owner)."""
    directory, base = os.path.split(target)
    while True:
        temp = os.path.join(directory, f".{base}.{os.urandom(4).hex()}.tmp")
        try:
            # 0o666 less the umask for a new file, as `>` does; 0o600 until chmod otherwise.
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                         0o666 if st is None else 0o600)  # fmt: skip
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if st is not None:
                os.fchmod(f.fileno(), stat.S_IMODE(st.st_mode))
                if os.geteuid() == 0 and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                    os.fchown(f.fileno(), st.st_uid, st.st_gid)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _reason(err: OSError) -> str:
    return err.strerror or str(err)
