"""The facts one discovery run depends on, and what it hands back.

`Context` is the machine as the run found it (frozen), `Run` adds the policy, the token
counter and the run's `Disk` (through which every file access goes), and `Discovery` is what
a client's discovery returns: sources in load order, diagnostics, and what it needs later.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Generic, NamedTuple, TypeVar

from ..errors import DiscoveryError
from ..model import Diagnostic, Policy, Skill, Source, TokenCounter
from ..versions import NO_VERSION, ClientVersion
from .disk import Disk
from .locations import RealDirs, canonical_git_root, display_path, find_git_root
from .prefixes import Prefixes


class Context(NamedTuple):
    """Everything about the machine a run depends on, fixed at the start of the run."""

    cwd: Path  # real path, as the client's `process.cwd()`
    home: Path
    managed_dir: Path
    environ: Mapping[str, str]
    git_root: Path | None
    canonical_root: Path | None  # the main repository's root when cwd is in a linked worktree
    project_root: Path  # the git root, else cwd: what displayed paths are relative to

    def display(self, path: str) -> str:
        return display_path(path, self.project_root, self.home)

    def environ_path(self, name: str) -> Path | None:
        """The path in the environment variable `name` (None: unset or empty) as the client
        takes it: a relative one from its process directory, which is cwd, never from the
        directory ctxasm runs in."""
        value = self.environ.get(name)
        return self.cwd / value if value else None


class Run(NamedTuple):
    """One discovery run: the machine, the policy, how tokens are counted, the `Disk`, and
    the version of its client the run models (`NO_VERSION`: the newest)."""

    context: Context
    policy: Policy
    counter: TokenCounter
    disk: Disk
    # Shared by the discoveries of one run over many directories (lint): a client may resume
    # from what it loaded for a directory above (`discovery.prefixes`); None: not shared.
    prefixes: Prefixes[Any] | None = None
    version: ClientVersion = NO_VERSION


class LoadNote(NamedTuple):
    """A finding about one file a discovery read, at a line: what `ctxasm lint` reports for
    the file when it lints it for this client (a load diagnostic has no position)."""

    path: str  # absolute, as the client reads it
    line: int
    col: int
    code: str
    message: str


S = TypeVar("S")


class Discovery(NamedTuple, Generic[S]):
    """What a client's discovery found: sources in load order, diagnostics, the conditional
    rules waiting for a touched path, the skills listed (the index itself is a source), the
    client's own state for its later touches (`S`: its settings, the rules waiting for a
    file), and findings with a position for lint."""

    sources: tuple[Source, ...]
    diagnostics: tuple[Diagnostic, ...]
    conditional: tuple[Source, ...] = ()
    skills: tuple[Skill, ...] = ()
    state: S | None = None  # None in what a touch attaches
    notes: tuple[LoadNote, ...] = ()  # positioned findings for lint (see `LoadNote`)


def build_context(
    cwd: Path,
    home: Path,
    managed_dir: Path,
    environ: Mapping[str, str],
    disk: Disk,
    git_roots: dict[str, Path | None] | None = None,
    real_dirs: RealDirs | None = None,
    canonical_roots: dict[Path, Path] | None = None,
) -> Context:
    """Fix the machine facts for one run. `cwd` is resolved like the client's `process.cwd()`;
    `git_roots` remembers git roots across the runs of one lint (`find_git_root`),
    `real_dirs` the real paths of directories and `canonical_roots` each git root's main
    repository root."""
    try:
        if real_dirs is not None and os.path.isabs(cwd) and not _goes_up(str(cwd)):
            real = Path(real_dirs.of(os.path.normpath(cwd)))
        else:
            real = Path(disk.realpath(str(cwd), strict=True))
    except OSError as err:
        raise DiscoveryError(
            f"{cwd}: no such directory ({err.strerror}); pass an existing PATH"
        ) from None
    except ValueError:  # a NUL byte in the path
        raise DiscoveryError(f"{str(cwd)!r}: not a valid path; pass an existing PATH") from None
    if not disk.is_dir(str(real)):
        raise DiscoveryError(f"{cwd}: not a directory; pass the directory the agent starts in")
    git_root = find_git_root(real, disk, git_roots)
    canonical = None
    if git_root is not None:
        canonical = canonical_roots.get(git_root) if canonical_roots is not None else None
        if canonical is None:
            canonical = canonical_git_root(git_root, disk)
            if canonical_roots is not None:
                canonical_roots[git_root] = canonical
    return Context(
        cwd=real,
        home=Path(os.path.abspath(home)),
        managed_dir=Path(os.path.abspath(managed_dir)),
        environ=environ,
        git_root=git_root,
        canonical_root=canonical,
        project_root=git_root or real,
    )


def _goes_up(path: str) -> bool:
    """Whether `path` has a `..` part (either separator where the system has two)."""
    return ".." in path.replace(os.altsep or os.sep, os.sep).split(os.sep)


def ancestors(cwd: Path) -> list[str]:
    """Every directory from just below the filesystem root down to cwd."""
    dirs = []
    directory = str(cwd)
    while (parent := os.path.dirname(directory)) != directory:
        dirs.append(directory)
        directory = parent
    return dirs[::-1]
