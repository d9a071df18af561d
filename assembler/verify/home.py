"""The temporary home an agent's program runs with: copies of the files of the user's home
that ctxasm reads for the same run, and nothing else, so the program never writes into the
real home and ctxasm predicts with the very files the program sees.

Which files those are is not listed anywhere: a prediction made with the user's home is
observed (`Heard`, on the run's `Disk`), and every file, directory and link it looked at
under that home is laid out again under the temporary one. A client may keep back part of a
file (`Headless.home_file`: an agent's account file keeps only the project approvals).
Bounded: a file over `MAX_FILE` bytes is left out, and a copy over `MAX_TOTAL` bytes or
`MAX_ENTRIES` entries stops with a `VerifyError`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Hashable, Iterable, Mapping
from pathlib import Path

from ..clients.headless import Headless
from ..discovery.disk import Compute, Disk, QuietObserver, T
from ..display import shown
from ..errors import VerifyError
from ..model import Layer, Reason

MAX_FILE = 4 * 1024 * 1024  # what the clients skip as too large
MAX_TOTAL = 64 * 1024 * 1024
MAX_ENTRIES = 10_000


class Heard(QuietObserver):
    """Every path a run looked at, in order."""

    def __init__(self) -> None:
        self.paths: dict[str, None] = {}

    def candidate(self, path: str, layer: Layer, reason: Reason) -> None:
        self.paths[path] = None

    def saw(self, path: str) -> None:
        self.paths[path] = None

    def listed(self, directory: str) -> None:
        self.paths[directory] = None

    def cached(self, path: str, key: Hashable, st: os.stat_result | None, compute: Compute[T]) -> T:
        self.paths[path] = None
        return compute(st)


def in_home(paths: Iterable[str], home: Path, project: Path) -> list[str]:
    """The paths under `home` (relative, sorted so that a directory comes before what it
    holds), without the project's own files when the project lies inside the home (they
    are read where they are)."""
    home_text = os.path.abspath(home)
    project_text = os.path.abspath(project)
    skip_project = _is_under(project_text, home_text) and project_text != home_text
    found = set()
    for path in paths:
        full = os.path.abspath(path)
        if full == home_text or not _is_under(full, home_text):
            continue
        if skip_project and _is_under(full, project_text):
            continue
        found.add(os.path.relpath(full, home_text))
    return sorted(found, key=lambda rel: rel.split(os.sep))


def lay_out(
    source: Path, target: Path, relatives: Iterable[str], headless: Headless
) -> dict[str, bytes]:
    """Copy `relatives` from `source` into `target` (a new, private directory): directories
    made, links made again (an absolute target inside `source` moved into `target`, and what
    a link leads to inside `source` copied too), regular files copied as
    `headless.home_file` keeps them. Returns the files written."""
    disk = Disk()
    written: dict[str, bytes] = {}
    pending, done, total = list(relatives), set(), 0
    while pending:
        rel = pending.pop(0)
        if rel in done:
            continue
        done.add(rel)
        if len(done) > MAX_ENTRIES:
            raise VerifyError(_too_much(source, f"more than {MAX_ENTRIES} entries"))
        origin = source / rel
        try:
            st = disk.lstat(str(origin))
        except OSError:
            continue  # looked for, not there: the copy has none either
        if stat.S_ISDIR(st.st_mode):
            (target / rel).mkdir(parents=True, exist_ok=True, mode=0o700)
        elif stat.S_ISLNK(st.st_mode):
            _link(origin, target / rel, source, target)
            led = os.path.realpath(origin)
            if _is_under(led, os.path.abspath(source)) and led != os.path.abspath(source):
                pending.append(os.path.relpath(led, source))
        elif stat.S_ISREG(st.st_mode) and st.st_size <= MAX_FILE:
            result = disk.read(str(origin), MAX_FILE)
            kept = headless.home_file(rel, result.data) if result.ok or result.data else None
            if kept is None:
                continue
            total += len(kept)
            if total > MAX_TOTAL:
                raise VerifyError(_too_much(source, f"more than {MAX_TOTAL // 2**20} MiB"))
            write_new(target / rel, kept)
            written[rel] = kept
    return written


def _too_much(source: Path, what: str) -> str:
    return f"{shown(str(source))}: {what} to copy into the temporary home; pass a smaller --home"


def write_files(target: Path, files: Mapping[str, bytes]) -> None:
    """Write a client's own files into the temporary home, replacing a copy of that name."""
    for rel, data in files.items():
        path = target / rel
        if path.is_symlink() or path.exists():
            path.unlink()
        write_new(path, data)


def write_new(path: Path, data: bytes) -> None:
    """A new private file in the temporary home (its directories made), never through a link."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _link(origin: Path, copy: Path, source: Path, target: Path) -> None:
    pointed = os.readlink(origin)
    if os.path.isabs(pointed) and _is_under(os.path.abspath(pointed), os.path.abspath(source)):
        pointed = str(target / os.path.relpath(pointed, source))
    copy.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not copy.is_symlink() and not copy.exists():
        os.symlink(pointed, copy)


def _is_under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)
