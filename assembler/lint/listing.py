"""Which files `ctxasm lint` checks: the instruction files under a directory (git's view, else
a walk), and the files given, each listing one value (`Listing`): the files, where listing
stopped at a limit (`CTX008`), and which of them git ignores (an agent reads them anyway).

What an instruction file is, and which ignored files an agent reads all the same, the
registered clients say (`instruction_files`, `read_when_ignored`, `scratch_dirs`).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from ..clients import registry
from ..discovery.locations import within
from ..discovery.rules import RULES_MAX_FILES
from .files import is_instruction_file
from .git import GitRepo

# Directories a walk never enters: git's own, and vendored or built trees (a package's
# instruction files under `.venv/` are not the project's).
SKIP_DIRS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", "dist", "build"}
)
# Files a walk lists at most under the directory linted (through a symlinked rules directory:
# as many as the client's walk loads, `RULES_MAX_FILES`), and entries it looks at (a link to
# `/` in a rules directory must not make lint list the whole machine).
MAX_WALK_FILES = 10_000
MAX_WALK_ENTRIES = 200_000


class Listing(NamedTuple):
    """What one listing found: files in order, where it stopped at a limit (each once), and
    which of the files git ignores."""

    files: tuple[Path, ...] = ()
    stopped: tuple[Path, ...] = ()
    ignored: tuple[Path, ...] = ()
    # Links where instruction files go (a rules directory, or one in it) to a directory
    # outside the tree listed that holds more than lint lists through a link: one finding
    # each, its files not listed (a link to `/` listed 1,000 of the machine's files, 1,900
    # lines of findings none of which the repository can fix).
    linked_out: tuple[tuple[Path, str], ...] = ()  # (the link, its real target)

    def stop(self, top: Path) -> Listing:
        """This listing, having stopped under `top`."""
        return self._replace(stopped=tuple(dict.fromkeys((*self.stopped, top))))

    def joined(self, other: Listing, files: Iterable[Path] | None = None) -> Listing:
        """Both listings as one; `files`: the files in their order (default: both, in turn)."""
        return merged((self, other), (*self.files, *other.files) if files is None else files)


def merged(parts: Sequence[Listing], files: Iterable[Path]) -> Listing:
    """`parts` as one listing of `files` (in that order): where any stopped, each once, and
    every file any found git-ignored."""
    stopped = dict.fromkeys(top for part in parts for top in part.stopped)
    out = dict.fromkeys(link for part in parts for link in part.linked_out)
    ignored = tuple(p for part in parts for p in part.ignored)
    return Listing(tuple(files), tuple(stopped), ignored, tuple(out))


def read_when_ignored() -> tuple[str, ...]:
    """Git pathspecs of the git-ignored files an agent reads all the same (every registered
    client's `read_when_ignored`): whole-repository lint asks git for them and checks them."""
    globs = (g for client in registry.clients() for g in client.read_when_ignored)
    return tuple(dict.fromkeys(f":(glob){g}" for g in globs))


def ignored_but_read() -> re.Pattern[str]:
    """Which of the ignored files git lists for `read_when_ignored` lint checks: those the
    globs match (git lists a whole ignored directory's files), not in vendored or built trees
    (`.venv/.../` holds a package's files, not the project's) nor in a directory an agent
    keeps copies of the project in (`Client.scratch_dirs`)."""
    clients = registry.clients()
    globs = tuple(g for client in clients for g in client.read_when_ignored)
    scratch = tuple(d for client in clients for d in client.scratch_dirs)
    return _ignored_pattern(globs, (*sorted(SKIP_DIRS - {".git"}), *scratch))


@functools.lru_cache(maxsize=8)
def _ignored_pattern(globs: tuple[str, ...], skipped: tuple[str, ...]) -> re.Pattern[str]:
    below = "|".join(re.escape(d) for d in dict.fromkeys(skipped))
    wanted = "|".join(dict.fromkeys(_glob_regex(g) for g in globs)) or "(?!)"
    return re.compile(rf"^(?!.*(?:^|/)(?:{below})/)(?:{wanted})$")


def _glob_regex(glob: str) -> str:
    """A git `:(glob)` pathspec as a regular expression: `**/` any directories (none too),
    `*` and `?` within one name."""
    out = []
    for part in re.split(r"(\*\*/|/\*\*$|\*|\?)", glob):
        if part == "**/":
            out.append("(?:[^/]+/)*")
        elif part == "/**":
            out.append("/.+")
        elif part == "*":
            out.append("[^/]*")
        elif part == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(part))
    return "".join(out)


def instruction_files(root: Path, repo: GitRepo | None) -> Listing:
    """Instruction files under `root`: git's view (tracked + untracked, not ignored, and the
    ignored ones an agent reads anyway), else a walk. A symlinked directory where instruction
    files go (a rules directory linked to `../shared`) is listed through the link, as the
    client loads it (git lists only the link); one outside `root` that holds more than the
    client's walk loads is not listed, only named (`Listing.linked_out`)."""
    if repo is None:
        return walk(root, root)
    repo.walk(read_when_ignored())
    tracked = tracked_files(root, repo)
    return together(tracked, other_files(root, repo, tracked.files))


def together(tracked: Listing, rest: Listing) -> Listing:
    """Both parts, the files in path order; without tracked files, `rest`'s as they came (a
    walk's order)."""
    files = sorted({*tracked.files, *rest.files}) if tracked.files else rest.files
    return tracked.joined(rest, files)


def tracked_files(root: Path, repo: GitRepo) -> Listing:
    """The first part of `instruction_files`: the instruction files git tracks under `root`
    (git's index: no walk of the working tree)."""
    base = repo.relative(root)
    if base is None:
        return Listing()
    found = _of_names(repo, sorted(repo.tracked()), base, MAX_WALK_FILES)
    return found if repo.complete else found.stop(root)  # git listed more than lint keeps


def other_files(root: Path, repo: GitRepo, tracked: Sequence[Path]) -> Listing:
    """The rest of `instruction_files`, once git has walked the working tree (`GitRepo.walk`,
    started before `tracked_files`): untracked files and ignored ones an agent reads; all of
    them by a walk when git lists no file at all (or `root` is not in it)."""
    untracked, ignored_names = repo.walked()
    base = repo.relative(root)
    if base is None or not (untracked or repo.tracked()):
        return walk(root, root)
    room = MAX_WALK_FILES - len(tracked)
    listing = _of_names(repo, untracked, base, room)
    found = set(listing.files)
    have = set(tracked)
    prefix = "" if base in ("", ".") else base + "/"
    read_anyway = ignored_but_read()
    ignored: list[Path] = []
    for name in ignored_names:
        path = repo.root / name
        if (
            name.startswith(prefix)
            and read_anyway.match(name)
            and path not in have
            and path not in found
        ):
            if len(found) >= room:
                listing = listing.stop(root)
                break
            found.add(path)
            ignored.append(path)
    return listing._replace(files=tuple(sorted(found)), ignored=tuple(ignored))


def _of_names(repo: GitRepo, names: Iterable[str], base: str, limit: int) -> Listing:
    """Of git's `names` (relative to the repository), the instruction files under `base`, a
    linked directory where instruction files go listed through the link: at most `limit`
    (the first ones git lists), and past it, stopped under `base`."""
    prefix = "" if base in ("", ".") else base + "/"
    found: set[Path] = set()
    listing = Listing()
    for name in names:
        if len(found) > limit:
            break
        if not name.startswith(prefix):
            continue
        if holds_instruction_files(name) and os.path.isdir(repo.root / name):
            linked = _through_link(repo.root / name, repo.root)
            found.update(linked.files)
            listing = listing.joined(linked._replace(files=()))
        elif is_instruction_file(name):
            found.add(repo.root / name)
    if len(found) > limit:
        listing = listing.stop(repo.root / base if prefix else repo.root)
    return listing._replace(files=tuple(sorted(found)[: max(limit, 0)]))


def walk(top: Path, root: Path, max_files: int = MAX_WALK_FILES) -> Listing:
    """Instruction files under `top` (names relative to `root`), in sorted order, without
    recursion (a tree thousands of directories deep is no error). Symlinked directories are
    followed only where instruction files go (the client follows them in rules
    directories), each real directory once. Past `max_files` files or `MAX_WALK_ENTRIES`
    entries it stops under `top`."""
    found: list[Path] = []
    out: list[tuple[Path, str]] = []
    seen: set[tuple[int, int]] = set()  # (device, inode) of each directory listed
    stack = [top]
    looked = 0
    stopped = False
    while stack:
        if len(found) > max_files or looked >= MAX_WALK_ENTRIES:
            stopped = True
            break
        directory = stack.pop()
        try:
            st = os.stat(directory)
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        looked += len(entries)
        below = []
        for entry in entries:
            path = Path(directory) / entry.name
            rel = path.relative_to(root).as_posix()
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                linked_dir = entry.is_symlink() and entry.is_dir()
            except OSError:  # a link that loops, or that cannot be followed
                is_dir = linked_dir = False
            if linked_dir and holds_instruction_files(rel) and _outside(path, root):
                linked = _through_link(path, root)
                found += linked.files
                out += linked.linked_out
                continue
            if (is_dir and entry.name not in SKIP_DIRS) or (
                linked_dir and holds_instruction_files(rel)
            ):
                below.append(path)
                if _named_like_a_file(rel):  # a directory with a file's name: render warns
                    found.append(path)
            elif not is_dir and not linked_dir and is_instruction_file(rel):
                found.append(path)  # a link that loops too: render says it is not loaded
        stack += reversed(below)
    listing = Listing(tuple(found[:max_files]), linked_out=tuple(out))
    return listing.stop(top) if stopped or len(found) > max_files else listing


def _through_link(link: Path, root: Path) -> Listing:
    """The instruction files below a linked directory where they go, as many as the client's
    walk loads (`RULES_MAX_FILES`); for a link out of `root` to more than that (`/`, a home
    directory), none, and the link in `linked_out`."""
    linked = walk(link, root, RULES_MAX_FILES)
    target = _outside(link, root)
    if target is not None and linked.stopped:
        return Listing(linked_out=((link, target),))
    return linked


def _outside(link: Path, root: Path) -> str:
    """The real directory `link` names when it is outside `root`, else ""."""
    try:
        target = os.path.realpath(link)
        inside = os.path.realpath(root)
    except (OSError, ValueError):
        return ""
    return "" if within(target, inside) else target


def _named_like_a_file(rel: str) -> bool:
    """Whether the directory `rel` has the name of an instruction file, not of a directory
    instruction files go in (a rules directory's subdirectory)."""
    return is_instruction_file(rel) and not holds_instruction_files(rel)


def holds_instruction_files(rel: str) -> bool:
    """Whether a file directly in the directory `rel` would be an instruction file."""
    return is_instruction_file(rel + "/x.md")
