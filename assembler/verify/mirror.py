"""The mirror an agent's program runs in: a private copy of exactly what ctxasm's prediction
looked at, each file, directory and link at its own absolute path under a new directory
(`Relocation.root`), the user's home included, and nothing else.

Which paths those are is not listed anywhere: the prediction for the real tree is observed
(`Heard`, on the run's `Disk`), and every path it looked at is laid out again in the mirror
(`lay_out`), resolved one component at a time as the kernel resolves it, so that every link
on the way is a link again in the mirror (an absolute target moved into it) and what it leads
to is there too. What the program would obey there is its client's to decide
(`Headless.mirrored`: settings reduced to the keys that change what loads, account files to
the approvals, a file that configures programs left out); git's own files are reduced here to
what makes a repository (`HEAD`, `objects/`, `refs/`, a worktree's pointers), so no
`.git/config` or hook of the repository's is ever in the mirror.

Bounded: a file over `MAX_FILE` bytes is left out (a file the program is made to read is
made again at its size, empty), 40 links are followed on the way to one path, and a copy over
`MAX_TOTAL` bytes or `MAX_ENTRIES` entries stops with a `VerifyError`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from ..clients.headless import Headless, Mirrored, Relocation
from ..discovery.disk import Compute, Disk, QuietObserver, T
from ..display import shown
from ..errors import VerifyError
from ..model import Layer, Reason

MAX_FILE = 4 * 1024 * 1024  # what the clients skip as too large
MAX_TOTAL = 64 * 1024 * 1024
MAX_ENTRIES = 20_000
MAX_LINKS = 40  # links followed on the way to one path (the kernel's limit)
GIT = ".git"
# What a repository's git directory holds in the mirror: enough for git to take it as one.
_GIT_HEAD = b"ref: refs/heads/main\n"
# git's one-line files ctxasm reads to find a linked worktree's main repository
# (`discovery.locations.canonical_git_root`): copied, an absolute path in them moved.
_GIT_POINTERS = frozenset({"commondir", "gitdir"})


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


class Laid(NamedTuple):
    """What `lay_out` made: the files written (mirror path -> bytes), and what the client
    kept back, each once (`Mirrored.withheld`), with the variables its settings set."""

    files: Mapping[str, bytes]
    withheld: tuple[str, ...]
    environ: tuple[tuple[str, str, str], ...]  # (settings file, variable, value)


def lay_out(
    paths: Iterable[str], where: Relocation, headless: Headless, sized: Sequence[str] = ()
) -> Laid:
    """Lay out every path of `paths` (absolute, as the prediction looked at them) in the
    mirror `where.root` (a new, private directory); `sized`: files the program is made to
    read, made again at their size when too large to copy."""
    layer = _Layer(where, headless, frozenset(sized))
    for path in paths:
        layer.place(path)
    return Laid(dict(layer.written), tuple(dict.fromkeys(layer.withheld)), tuple(layer.environ))


class _Layer:
    """One lay-out: what is made so far, bounded."""

    def __init__(self, where: Relocation, headless: Headless, sized: frozenset[str]) -> None:
        self.where = where
        self.headless = headless
        self.sized = sized
        self.disk = Disk()
        self.done: set[str] = set()  # physical paths made in the mirror
        self.written: dict[str, bytes] = {}
        self.withheld: list[str] = []
        self.environ: list[tuple[str, str, str]] = []
        self.total = 0

    def place(self, path: str) -> None:
        """Resolve `path` a component at a time, making each directory and link met on the
        way in the mirror, and the file or directory it ends at."""
        pending = [c for c in path.split(os.sep) if c][::-1]
        current, hops = os.sep, 0
        while pending:
            name = pending.pop()
            if name == ".":
                continue
            if name == "..":
                current = os.path.dirname(current)
                continue
            candidate = os.path.join(current, name)
            try:
                st = self.disk.lstat(candidate)
            except OSError:
                return  # looked for, not there: the mirror has none either
            if stat.S_ISLNK(st.st_mode):
                hops += 1
                target = self._link(candidate)
                if target is None or hops > MAX_LINKS:
                    return
                if os.path.isabs(target):
                    current = os.sep
                pending += [c for c in target.split(os.sep) if c][::-1]
            elif stat.S_ISDIR(st.st_mode):
                self._directory(candidate)
                current = candidate
            else:
                if not pending:
                    self._file(candidate, path, st)
                return

    def _count(self, physical: str) -> bool:
        """Whether `physical` is new to the mirror (and room is left for it)."""
        if physical in self.done:
            return False
        self.done.add(physical)
        if len(self.done) > MAX_ENTRIES:
            raise VerifyError(_too_much(f"more than {MAX_ENTRIES} entries"))
        return True

    def _directory(self, physical: str) -> None:
        if not self._count(physical):
            return
        made = self.where.inside(physical)
        os.makedirs(made, mode=0o700, exist_ok=True)
        if os.path.basename(physical) == GIT:
            _git_skeleton(made)

    def _link(self, physical: str) -> str | None:
        """The link at `physical` made again in the mirror; its target, None if unreadable."""
        try:
            target = os.readlink(physical)
        except OSError:
            return None
        if self._count(physical) and not _inside_git(physical):
            made = self.where.inside(physical)
            os.makedirs(os.path.dirname(made), mode=0o700, exist_ok=True)
            if not os.path.lexists(made):
                os.symlink(_moved_target(physical, target, self.where), made)
        return target

    def _file(self, physical: str, named: str, st: os.stat_result) -> None:
        if not self._count(physical) and physical not in self.sized:
            return
        made = self.where.inside(physical)
        if os.path.basename(physical) == GIT or _inside_git(physical):
            data = self._git_file(physical)
            if data is not None:
                self._write(made, data)
            return
        if not stat.S_ISREG(st.st_mode):
            return  # a FIFO, socket or device: the mirror has none
        if st.st_size > MAX_FILE:
            if physical in self.sized or named in self.sized:
                write_new(Path(made), b"", size=st.st_size)
            return
        result = self.disk.read(physical, MAX_FILE, st)
        kept = self.headless.mirrored(
            tuple(dict.fromkeys((named, physical))), result.data, self.where
        )
        self._keep(physical, kept)
        if kept.data is not None:
            self._write(made, kept.data)

    def _keep(self, physical: str, kept: Mirrored) -> None:
        if kept.withheld:
            self.withheld.append(f"{shown(physical)}: {', '.join(kept.withheld)}")
        self.environ += ((physical, name, value) for name, value in kept.environ.items())

    def _write(self, made: str, data: bytes) -> None:
        self.total += len(data)
        if self.total > MAX_TOTAL:
            raise VerifyError(_too_much(f"more than {MAX_TOTAL // 2**20} MiB"))
        if os.path.lexists(made):
            return
        write_new(Path(made), data)
        self.written[made] = data

    def _git_file(self, physical: str) -> bytes | None:
        """A `.git` pointer file, or one of git's pointer files in a git directory, its
        absolute path moved into the mirror; nothing else of a git directory."""
        name = os.path.basename(physical)
        if name != GIT and name not in _GIT_POINTERS:
            return None
        result = self.disk.read(physical, 64 * 1024)
        if not result.ok:
            return None
        text = result.data.decode("utf-8", "replace")
        if name == GIT:
            head, _, rest = text.partition("gitdir:")
            pointed = rest.strip()
            if head.strip() or not pointed:
                return None
            return f"gitdir: {_moved_path(pointed, self.where)}\n".encode()
        head_file = os.path.join(self.where.inside(os.path.dirname(physical)), "HEAD")
        if not os.path.lexists(head_file):
            self._write(head_file, _GIT_HEAD)
        return (_moved_path(text.strip(), self.where) + "\n").encode()


def _inside_git(physical: str) -> bool:
    return GIT in physical.split(os.sep)[:-1]


def _git_skeleton(made: str) -> None:
    """What makes a directory a git repository to git, and nothing of the repository's own
    (its config, hooks, index)."""
    for directory in ("objects", os.path.join("refs", "heads")):
        os.makedirs(os.path.join(made, directory), mode=0o700, exist_ok=True)
    head = os.path.join(made, "HEAD")
    if not os.path.lexists(head):
        write_new(Path(head), _GIT_HEAD)


def _moved_path(text: str, where: Relocation) -> str:
    return where.inside(text) if os.path.isabs(text) else text


def _moved_target(link: str, target: str, where: Relocation) -> str:
    """A link's target in the mirror: an absolute one moved into it; a relative one kept,
    unless it climbs above the root, which the mirror's own directories would take."""
    if os.path.isabs(target):
        return where.inside(target)
    depth = len([c for c in os.path.dirname(link).split(os.sep) if c])
    for name in target.split(os.sep):
        if name == "..":
            depth -= 1
            if depth < 0:
                return where.inside(os.path.normpath(os.path.join(os.path.dirname(link), target)))
        elif name not in ("", "."):
            depth += 1
    return target


def _too_much(what: str) -> str:
    return f"{what} to copy into the mirror the agent runs in; verify a smaller tree or --home"


def write_files(target: Path, files: Mapping[str, bytes]) -> None:
    """Write a client's own files into the program's home, replacing a copy of that name."""
    for rel, data in files.items():
        path = target / rel
        if path.is_symlink() or path.exists():
            path.unlink()
        write_new(path, data)


def write_new(path: Path, data: bytes, size: int | None = None) -> None:
    """A new private file in the mirror (its directories made), never through a link;
    `size`: made at that size (sparse) instead."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
        if size is not None:
            out.truncate(size)
