"""Where things live: defaults for home and environ, git roots, how paths are shown.

The defaults (`default_home`, `default_environ`, and the managed policy directory's,
`clients.registry.default_managed_dir`) are the only places the library looks at the real
machine; tests replace them so that touching the real home or managed directory fails loudly.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path

from .disk import Disk
from .reader import ReadStatus

# A `.git` file, `commondir` or `gitdir` holds one path: anything longer is not git's.
GIT_POINTER_BYTES = 64 * 1024
_TRUTHY = frozenset({"1", "true", "yes", "on"})
_FALSY = frozenset({"0", "false", "no", "off"})


def default_home() -> Path:
    return Path.home()


def default_environ() -> Mapping[str, str]:
    return os.environ


def env_truthy(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() in _TRUTHY


def env_falsy(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() in _FALSY


# Where skills live in the open Agent Skills layout (agentskills.io), which agents besides a
# client's own skills directories read: `.agents/skills/<name>/`.
OPEN_SKILL_HOME = ".agents"


def in_skill_folder(path: Path, homes: Collection[str]) -> bool:
    """Whether `path` is inside a skill's folder, `<home>/skills/<name>/...` for one of
    `homes` (directory names): a skill's own file, read with the skill."""
    parts = path.parts
    return any(parts[i] in homes and parts[i + 1] == "skills" for i in range(len(parts) - 3))


_MAX_OWNERS = 16  # work trees owning one another (submodules of submodules)


def find_git_root(
    start: Path, disk: Disk, known: dict[str, Path | None] | None = None
) -> Path | None:
    """The nearest directory at or above `start` holding `.git` (a directory or a file).

    `known` remembers the answer for every directory walked, so that a caller asking for many
    directories of one tree (lint) tests each directory for `.git` once."""
    walked: list[str] = []
    directory = str(start)
    while True:
        if known is not None and directory in known:
            found = known[directory]
            break
        walked.append(directory)
        if disk.lexists(os.path.join(directory, ".git")):
            found = Path(directory)
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            found = None
            break
        directory = parent
    if known is not None:
        known.update(dict.fromkeys(walked, found))
    return found


def canonical_git_root(git_root: Path, disk: Disk) -> Path:
    """For a linked worktree, the main repository's root; otherwise `git_root` itself."""
    dot_git = git_root / ".git"
    content = _pointer(dot_git, disk)
    if content is None or not content.startswith("gitdir:"):
        return git_root
    worktree_git_dir = Path(os.path.realpath(git_root / content[len("gitdir:") :].strip()))
    common_dir = _pointer(worktree_git_dir / "commondir", disk)
    backlink = _pointer(worktree_git_dir / "gitdir", disk)
    if common_dir is None or backlink is None:
        return git_root
    common = Path(os.path.realpath(worktree_git_dir / common_dir))
    if worktree_git_dir.parent != common / "worktrees":
        return git_root
    # Relative (`worktree.useRelativePaths`) from the worktree's git directory, as git reads
    # it; never from the directory ctxasm runs in.
    if Path(os.path.realpath(worktree_git_dir / backlink)) != Path(os.path.realpath(dot_git)):
        return git_root
    return common if common.name != ".git" else common.parent


def owning_work_trees(root: Path, disk: Disk) -> list[Path]:
    """`root` (a git work tree's root) and the work trees that own it, nearest first: whose
    git directory holds `root`'s (`.git` a file `gitdir: <owner>/.git/modules/...` for a
    submodule, `<owner>/.git/worktrees/...` for a linked worktree), and theirs in turn, at
    most `_MAX_OWNERS`. A superproject is as much the repository's as its submodule."""
    out = [root]
    for _ in range(_MAX_OWNERS):
        current = out[-1]
        content = _pointer(current / ".git", disk)
        if content is None or not content.startswith("gitdir:"):
            break
        git_dir = os.path.realpath(os.path.join(current, content[len("gitdir:") :].strip()))
        owner, marker, _ = git_dir.partition(f"{os.sep}.git{os.sep}")
        if not marker or not owner or Path(owner) in out:
            break
        out.append(Path(owner))
    return out


def _pointer(path: Path, disk: Disk) -> str | None:
    """The stripped text of one of git's one-line files (`.git`, `commondir`, `gitdir`)."""
    result = disk.read(str(path), GIT_POINTER_BYTES)
    return result.text.strip() if result.status is ReadStatus.OK else None


class RealDirs:
    """`os.path.realpath` of directories: one `lstat` per directory, remembered, and no
    recursion however deep the tree (a repository chooses its depth)."""

    __slots__ = ("_known",)

    def __init__(self, known: Iterable[str] = ()) -> None:
        self._known = {directory: directory for directory in known}

    def of(self, directory: str) -> str:
        """The real path of `directory` (absolute, normalized); raises `OSError`."""
        below: list[str] = []
        current = directory
        while (real := self._known.get(current)) is None:
            parent, name = os.path.split(current)
            if not name:
                real = current
                break
            below.append(current)
            current = parent
        for path in reversed(below):
            if stat.S_ISLNK(os.lstat(path).st_mode):
                real = os.path.realpath(path, strict=True)
            else:
                real = os.path.join(real, os.path.basename(path))
            self._known[path] = real
        return real

    def realpath(self, path: str) -> str:
        """`os.path.realpath(path)`, with one `lstat` for the path itself once its directory
        is known (a deep path costs `realpath` one `lstat` per component, each time)."""
        if not os.path.isabs(path) or path != os.path.normpath(path) or path.startswith("//"):
            return os.path.realpath(path)  # `.`, `..`, `//`: left to `realpath`
        return self._file(path, os.path.realpath)

    def of_file(self, path: str) -> str:
        """The real path of `path`, a file or not there at all (then as it would be)."""
        return self._file(path, os.path.abspath)

    def _file(self, path: str, otherwise: Callable[[str], str]) -> str:
        """The real path of file `path` from its directory's, or `otherwise(path)` when a
        part of it cannot be `lstat`ed."""
        parent, name = os.path.split(path)
        try:
            full = os.path.join(self.of(parent), name)
            if stat.S_ISLNK(os.lstat(full).st_mode):
                return os.path.realpath(full)
        except (OSError, ValueError):
            return otherwise(path)
        return full


def within(path: str, directory: str) -> bool:
    """Whether normalized absolute `path` is `directory` or below it, case and all (the
    containment ctxasm reports by; `is_within` is the client's, which ignores case)."""
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def is_within(path: str, directory: str) -> bool:
    """The client's `pathInWorkingPath` (case-insensitive, `..` never inside)."""
    return keys_within(containment_key(path), containment_key(directory))


def containment_key(path: str) -> str:
    """What `is_within` compares of a path (normalized, `/private` folded, lower case): a
    caller asking about one directory many times computes its key once."""
    return _mac_private(os.path.normpath(path)).lower()


def keys_within(a: str, b: str) -> bool:
    """`is_within` of the paths whose `containment_key`s are `a` and `b`."""
    if (
        os.path.isabs(a)
        and os.path.isabs(b)
        and not (a.startswith("//") or b.startswith("//"))
        and "\\" not in a
        and "\\" not in b
    ):
        # Normalized absolute paths have no `..`: `relpath` below would say the same (POSIX
        # keeps a leading `//`, which `relpath` reads as `/`, and the client takes `\..` for
        # a way up: both left to it).
        return a == b or a.startswith(b.rstrip(os.sep) + os.sep)
    rel = os.path.relpath(a, b) if os.path.isabs(a) == os.path.isabs(b) else a
    if rel == ".":
        return True
    if re.search(r"(?:^|[\\/])\.\.(?:[\\/]|$)", rel):
        return False
    return not os.path.isabs(rel)


def _mac_private(path: str) -> str:
    if not path.startswith("/private/"):
        return path
    path = re.sub(r"^/private/var/", "/var/", path)
    return re.sub(r"^/private/tmp(/|$)", r"/tmp\1", path)


def _under(path: str, base: str) -> bool:
    return path == base or path.startswith(base if base.endswith(os.sep) else base + os.sep)


def display_path(path: str, project_root: str | Path, home: str | Path) -> str:
    """How a path is shown before the boundary: the same on every machine that has the repo.

    Relative to the project root, or `~/...` under the home directory (whichever base is
    deeper); else `../...` when it sits in a directory above the project root; else absolute.
    Plain string work: it runs for every candidate of every run.
    """
    if not os.path.isabs(path):  # a pseudo path such as `<managed-settings>`
        return path
    root, home_dir = os.fspath(project_root), os.fspath(home)
    in_project, in_home = _under(path, root), _under(path, home_dir)
    if in_home and (not in_project or _under(home_dir, root)):
        rel = path[len(home_dir) :].lstrip(os.sep)
        return "~/" + rel.replace(os.sep, "/") if rel else "~"
    if in_project:
        return path[len(root) :].lstrip(os.sep).replace(os.sep, "/") or "."
    parent, name = os.path.split(path)
    if _under(root, parent):
        ups = root[len(parent) :].strip(os.sep).count(os.sep) + 1
        return "../" * ups + name
    return path.replace(os.sep, "/")
