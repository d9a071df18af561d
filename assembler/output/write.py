"""Writing an output where the user asked for it: stdout, or a file given with `--out`.

`render`, `watch` and `cache --save` write through `write_file`, so every one of them:

* replaces a regular file atomically (a temporary file in the same directory, then
  `os.replace`), keeping its permission bits; a new file gets the umask's, like `>`;
* writes through a symlink the user made to its target (the target is replaced, the link
  stays), and refuses one the repository may have planted: any link at a component of the
  path that stands in the project (the run's project root, the git work tree the command
  runs in, and the work trees that own either: a submodule's superproject), whatever it
  reaches, since a link into the project may reach the user's own `.git/hooks/pre-commit`;
  and, for a relative path written from a directory outside git (an unpacked download, or
  home), a link there that leads out of it or into a loop. Every link on the way is checked
  where it really stands, as the kernel follows it (a chain, a directory link, `..` after a
  link), and the write goes to the path that was checked. A refusal names the link and the
  path it reaches, to pass instead when that is really where the output should go;
* writes a FIFO, a character device (`/dev/null`, a terminal) or whatever a descriptor path
  (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`) reaches in place, opened without creating
  or truncating it, and never replaces it (a rename over `/dev/full`, as root, would destroy
  the device node); a FIFO is opened without blocking, and one that has no reader within
  `FIFO_WAIT` seconds is an error, not a hang;
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
import time
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from ..display import shown
from ..errors import AssemblerError

PathLike = str | os.PathLike[str]
# Paths that name an open descriptor of this process: what they reach is never replaced.
_DESCRIPTOR = r"/(?:dev/(?:fd/|std(?:in|out|err)$)|proc/[^/]+/fd/)"
_PLACE = {errno.ENOENT, errno.ENOTDIR, errno.EACCES, errno.EPERM, errno.EROFS}
_MAX_LINKS = 40  # links one path may pass through, as the kernel's limit (ELOOP past it)
FIFO_WAIT = 1.0  # seconds a FIFO at the output path may stay without a reader


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


def write_file(
    path: PathLike,
    text: str,
    *,
    sources: Iterable[str] = (),
    project: PathLike | None = None,
    option: str = "--out",
) -> None:
    """Write `text` (UTF-8) to `path` as the module doc says; `sources`: the paths of the
    context's sources, which `path` must not be; `project`: the run's project root (real),
    whose links are checked (None: no project, every link is the caller's); `option`: what
    a refusal tells the user to pass instead."""
    data = text.encode("utf-8", "surrogateescape")
    name = os.fspath(path)
    try:
        trees = _trees(project, name) if project is not None else ()
        target = _reached(name, trees, option)
        try:
            st: os.stat_result | None = os.stat(target)  # what a write reaches
        except FileNotFoundError:
            st = None  # a file to create
        if st is not None:
            _refuse_source(name, st, sources)
            if stat.S_ISDIR(st.st_mode):
                raise AssemblerError(f"{shown(name)}: is a directory; pass a file to write")
            if (
                stat.S_ISFIFO(st.st_mode)
                or stat.S_ISCHR(st.st_mode)
                or re.match(_DESCRIPTOR, target)
            ):
                _write_in_place(name, target, data, fifo=stat.S_ISFIFO(st.st_mode))
                return
            if not stat.S_ISREG(st.st_mode):
                raise AssemblerError(
                    f"{shown(name)}: a socket or block device; refusing to write it, "
                    "pass a regular file"
                )
        _replace(target, data, st)
    except OSError as err:
        hint = "; check the directory exists and is writable" if err.errno in _PLACE else ""
        raise AssemblerError(f"{shown(name)}: cannot write ({_reason(err)}){hint}") from None


class _Tree(NamedTuple):
    """A tree a link on the way to the output may have been planted in. `strict`: a
    repository's (the run's project, the git work tree the command runs in, and the work
    trees that own them), where no link is written through, whatever it reaches; otherwise
    the directory a relative output is written from when it is in no git work tree (an
    unpacked download, or the user's home), where a link that leads out of it or nowhere is
    refused."""

    path: str
    strict: bool


def _trees(project: PathLike, name: str) -> tuple[_Tree, ...]:
    """Where a link is the repository's (`_Tree`): the run's project root and, when the
    command runs inside a git work tree, that work tree (a relative `--out` is relative to
    it, and it may be another repository than the one rendered: `render vendor/submodule`
    run in a clone), each with the work trees that own it (a submodule's superproject)."""
    from ..discovery.disk import Disk
    from ..discovery.locations import find_git_root, owning_work_trees

    disk = Disk()
    cwd = os.path.realpath(os.getcwd())
    here = find_git_root(Path(cwd), disk)
    roots = [Path(project), *([here] if here is not None else [])]
    strict = dict.fromkeys(os.fspath(t) for root in roots for t in owning_work_trees(root, disk))
    trees = [_Tree(path, True) for path in strict]
    if here is None and not os.path.isabs(name):
        trees.append(_Tree(cwd, False))
    return tuple(trees)


def _reached(name: str, trees: Sequence[_Tree], option: str) -> str:
    """The path a write to `name` reaches, each link on the way followed as the kernel follows
    it and checked where it stands (`_check_link`). A path that names a descriptor of this
    process (`/dev/stdout`) is left to the kernel; a missing component ends the walk (the
    write reports it)."""
    current = "/" if os.path.isabs(name) else os.getcwd()
    pending = _parts(name)
    links = 0
    while pending:
        part = pending.popleft()
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)  # `current` is real: its parent is too
            continue
        candidate = os.path.join(current, part)
        rest = os.path.join(candidate, *pending)
        if re.match(_DESCRIPTOR, rest):
            return rest
        try:
            st = os.lstat(candidate)
        except (FileNotFoundError, NotADirectoryError):
            return rest
        if not stat.S_ISLNK(st.st_mode):
            current = candidate
            continue
        links += 1
        if links > _MAX_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
        _check_link(name, candidate, current, trees, option)
        target = os.readlink(candidate)
        pending.extendleft(reversed(_parts(target)))
        if os.path.isabs(target):
            current = "/"
    return current


def _parts(path: str) -> deque[str]:
    return deque(path.split(os.sep))


def _check_link(name: str, link: str, where: str, trees: Sequence[_Tree], option: str) -> None:
    """Refuse `link` (standing in the real directory `where`) when it stands in a repository's
    tree (`_Tree.strict`), whatever it reaches: the repository may have planted it to turn a
    write into the project into a write elsewhere (`~/.bashrc`), or into a file of the user's
    inside it (`.git/hooks/pre-commit`, `.venv/bin/activate`); or when it stands in the
    directory a relative output is written from outside git and leads out of it, or into a
    loop."""
    tree = next((t for t in trees if _under(where, t.path)), None)
    if tree is None:
        return  # the user's own link (in /tmp, in the home configuration)
    try:
        reached, problem = os.path.realpath(link, strict=True), ""
    except OSError as err:  # dangling (a file to create), or a loop
        reached = os.path.realpath(link)
        problem = "a loop of links" if err.errno == errno.ELOOP else "which does not exist"
    if not tree.strict and problem != "a loop of links" and _under(reached, tree.path):
        return  # stays in the directory
    if problem:
        where_to = f"to {shown(os.readlink(link))}, {problem}"
    else:
        where_to = f"to {shown(reached)}" if tree.strict else "that leads out of it"
    place = "the project" if tree.strict else "the directory outside git"
    raise AssemblerError(
        f"{shown(name)}: {shown(link)} is a symlink in {place} {shown(tree.path)} {where_to}; "
        "a link the repository may have planted is not written through: "
        f"pass {option} {shown(os.path.realpath(name))} to write there"
    )


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


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


def _write_in_place(name: str, target: str, data: bytes, *, fifo: bool) -> None:
    """A FIFO, a character device, or what a descriptor path (`/dev/stdout`) reaches: opened
    for writing only, never created or truncated (a file behind `/dev/stdout` was set up by
    the shell, `>` or `>>`: it is appended to). Opened without blocking: a FIFO with no
    reader fails at once (`ENXIO`) instead of waiting forever; it is tried again for
    `FIFO_WAIT` seconds, so that a reader that reopens it (`while :; do cat pipe; done`
    beside a watch) is not missed. The writes then block as any write to a pipe does."""
    deadline = time.monotonic() + FIFO_WAIT
    while True:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | os.O_NONBLOCK)
            break
        except OSError as err:
            if err.errno != errno.ENXIO or not fifo:
                raise
            if time.monotonic() >= deadline:
                raise AssemblerError(
                    f"{shown(name)}: a FIFO with no reader; start its reader first, "
                    "or pass a regular file"
                ) from None
            time.sleep(0.02)
    os.set_blocking(fd, True)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _replace(target: str, data: bytes, st: os.stat_result | None) -> None:
    """`target` replaced atomically (`replace_in` its directory)."""
    directory, base = os.path.split(target)
    fd = os.open(directory or ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        replace_in(fd, base, data, like=st)
    finally:
        os.close(fd)


def replace_in(
    dir_fd: int, name: str, data: bytes, *, like: os.stat_result | None, mode: int = 0o666
) -> None:
    """`name` in the directory `dir_fd` replaced by `data`: a temporary file beside it, fsynced
    and renamed over it, so readers see the old or the new text, never half of it, and
    whatever stood at `name` (a link included) is replaced, never written through. With
    `like` (the file being replaced), it keeps that file's mode (and, as root, its owner);
    without, a new file gets `mode` less the umask (0o666, as `>` does). The conversation
    store writes `ctx.json` with it (`mode` 0o600), relative to a directory it opened without
    links."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        temp = f".{name}.{os.urandom(4).hex()}.tmp"
        try:
            fd = os.open(temp, flags, mode if like is None else 0o600, dir_fd=dir_fd)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            if like is not None:
                os.fchmod(f.fileno(), stat.S_IMODE(like.st_mode))
                owner = (like.st_uid, like.st_gid)
                if os.geteuid() == 0 and owner != (os.geteuid(), os.getegid()):
                    os.fchown(f.fileno(), *owner)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):  # not every file system syncs a directory
        os.fsync(dir_fd)


def _reason(err: OSError) -> str:
    return err.strerror or str(err)
