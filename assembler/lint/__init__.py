"""`ctxasm lint`: check instruction files the way the pre-commit hook and CI need.

With files: each file is checked on its own and against the context it loads with (results
never depend on how pre-commit splits the list). Without files: every instruction file under
the directory (every registered client's, and other agents'), plus the whole context of every
directory that holds the policy's client's files. With `--cwd DIR`: also the whole context of
DIR. Codes, names and default severities come from the one catalogue (`assembler.codes`).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Unpack

from .. import codes
from ..clients import registry
from ..discovery.disk import Disk
from ..discovery.locations import find_git_root
from ..discovery.rules import RULES_MAX_FILES
from ..errors import AssemblerError
from ..model import Policy, Severity
from ..policy import resolve_policy
from ..request import Options, PathLike, Request, checked_path, checked_paths
from .context import ContextChecker
from .files import (
    FileChecker,
    FileInfo,
    Finding,
    Machine,
    classify,
    is_instruction_file,
    relative_shown,
)
from .git import MAX_LISTED, GitRepo

_SUPPRESS = re.compile(r"<!--\s*ctxasm:\s*(disable(?:-next-line)?)\s*=\s*([A-Za-z0-9_,\s]+?)\s*-->")
_SKIP_DIRS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", "dist", "build"}
)
_LEVELS = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO, "off": None}

__all__ = ["LintError", "LintResult", "is_instruction_file", "lint", "suppressions"]


class LintError(AssemblerError):
    """A usage problem: a file that does not exist, an unknown code."""


class LintResult(NamedTuple):
    findings: tuple[Finding, ...]
    files: tuple[str, ...]
    ignored: tuple[str, ...] = ()  # of `files`, those git ignores (an agent reads them anyway)
    memory: tuple[str, ...] = ()  # of `files`, the repository's auto memory (outside it)

    @property
    def failed(self) -> bool:
        """Whether an error was found (what fails `ctxasm lint` and the hook by default)."""
        return self.fails()

    def fails(self, *, strict: bool = False) -> bool:
        """Whether an error was found, or with `strict` a warning too."""
        failing = (Severity.ERROR, Severity.WARNING) if strict else (Severity.ERROR,)
        return any(f.severity in failing for f in self.findings)


class _Suppressed(NamedTuple):
    everywhere: frozenset[str]
    by_line: Mapping[int, frozenset[str]]

    def hides(self, finding: Finding) -> bool:
        def match(codes: frozenset[str]) -> bool:
            return "all" in codes or finding.code in codes

        return match(self.everywhere) or match(self.by_line.get(finding.line, frozenset()))


def suppressions(text: str) -> _Suppressed:
    """`<!-- ctxasm: disable=CTX101,CTX501 -->` (whole file) and `disable-next-line=...`."""
    everywhere: set[str] = set()
    by_line: dict[int, frozenset[str]] = {}
    for match in _SUPPRESS.finditer(text):
        found = frozenset(c.strip() for c in re.split(r"[,\s]+", match.group(2)) if c.strip())
        if match.group(1) == "disable":
            everywhere |= found
        else:
            line = text.count("\n", 0, match.end()) + 2
            by_line[line] = by_line.get(line, frozenset()) | found
    return _Suppressed(frozenset(everywhere), by_line)


def _levels(
    policy: Policy, select: Sequence[str], ignore: Sequence[str]
) -> dict[str, Severity | None]:
    """The effective severity of every lint code (None: not selected)."""
    chosen_select = tuple(select) or policy.lint.select
    chosen_ignore = (*policy.lint.ignore, *ignore)
    every = registry.lint_codes()
    for code in (*chosen_select, *chosen_ignore):
        if not any(entry.code.startswith(code) for entry in every):
            raise LintError(f"{code}: no such lint code; `ctxasm codes` lists them")
    overrides = dict(policy.lint.severity)
    for code in overrides:
        if code not in {entry.code for entry in every}:
            raise LintError(
                f"{policy.origin}: lint.severity names unknown code '{code}'; `ctxasm codes` lists them"
            )
    levels: dict[str, Severity | None] = {}
    for entry in every:
        # Selecting codes keeps CTX008 on: it says that findings of those codes were left out.
        on = (
            not chosen_select
            or any(entry.code.startswith(c) for c in chosen_select)
            or entry is codes.FINDINGS_CAPPED
        ) and not any(entry.code.startswith(c) for c in chosen_ignore)
        level = _LEVELS[overrides[entry.code]] if entry.code in overrides else entry.lint
        levels[entry.code] = level if on else None
    return levels


def _read_when_ignored() -> tuple[str, ...]:
    """Git pathspecs of the git-ignored files an agent reads all the same (every registered
    client's `read_when_ignored`): whole-repository lint asks git for them and checks them."""
    globs = (g for client in registry.clients() for g in client.read_when_ignored)
    return tuple(dict.fromkeys(f":(glob){g}" for g in globs))


def _ignored_but_read() -> re.Pattern[str]:
    """Which of the ignored files git lists for `_read_when_ignored` lint checks: those the
    globs match (git lists a whole ignored directory's files), not in vendored or built trees
    (`.venv/.../` holds a package's files, not the project's) nor in a directory an agent
    keeps copies of the project in (`Client.scratch_dirs`)."""
    clients = registry.clients()
    globs = tuple(g for client in clients for g in client.read_when_ignored)
    scratch = tuple(d for client in clients for d in client.scratch_dirs)
    return _ignored_pattern(globs, (*sorted(_SKIP_DIRS - {".git"}), *scratch))


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


def _discover_files(
    root: Path, repo: GitRepo | None, stopped: list[Path], ignored: list[Path]
) -> list[Path]:
    """Instruction files under `root`: git's view (tracked + untracked, not ignored, and the
    ignored ones an agent reads anyway, added to `ignored`), else a walk. A symlinked
    directory where instruction files go (a rules directory linked to `../shared`) is listed through the
    link, as the client loads it (git lists only the link)."""
    if repo is None:
        return _walk(root, root, stopped)
    repo.walk(_read_when_ignored())
    tracked = _tracked_files(root, repo, stopped)
    return _together(tracked, _other_files(root, repo, stopped, ignored, tracked))


def _together(tracked: list[Path], rest: list[Path]) -> list[Path]:
    """Both parts in path order; without tracked files, `rest` as it came (a walk's order)."""
    return sorted({*tracked, *rest}) if tracked else rest


def _tracked_files(root: Path, repo: GitRepo, stopped: list[Path]) -> list[Path]:
    """The first part of `_discover_files`: the instruction files git tracks under `root`
    (git's index: no walk of the working tree)."""
    base = repo.relative(root)
    if base is None:
        return []
    found = _instruction_files(repo, sorted(repo.tracked()), base, stopped, MAX_WALK_FILES)
    if not repo.complete:  # git listed more paths than lint keeps
        _stop(stopped, root)
    return found


def _other_files(
    root: Path, repo: GitRepo, stopped: list[Path], ignored: list[Path], tracked: Sequence[Path]
) -> list[Path]:
    """The rest of `_discover_files`, once git has walked the working tree (`GitRepo.walk`,
    started before `_tracked_files`): untracked files and ignored ones an agent reads, added to
    `ignored`; all of them by a walk when git lists no file at all (or `root` is not in it)."""
    untracked, ignored_names = repo.walked()
    base = repo.relative(root)
    if base is None or not (untracked or repo.tracked()):
        return _walk(root, root, stopped)
    room = MAX_WALK_FILES - len(tracked)
    found = set(_instruction_files(repo, untracked, base, stopped, room))
    have = set(tracked)
    prefix = "" if base in ("", ".") else base + "/"
    read_anyway = _ignored_but_read()
    for name in ignored_names:
        path = repo.root / name
        if (
            name.startswith(prefix)
            and read_anyway.match(name)
            and path not in have
            and path not in found
        ):
            if len(found) >= room:
                _stop(stopped, root)
                break
            found.add(path)
            ignored.append(path)
    return sorted(found)


def _instruction_files(
    repo: GitRepo, names: Iterable[str], base: str, stopped: list[Path], limit: int
) -> list[Path]:
    """Of git's `names` (relative to the repository), the instruction files under `base`, a
    linked directory where instruction files go listed through the link: at most `limit`
    (the first ones git lists), past it `base` is added to `stopped`."""
    prefix = "" if base in ("", ".") else base + "/"
    found: set[Path] = set()
    for name in names:
        if len(found) > limit:
            break
        if not name.startswith(prefix):
            continue
        if _holds_instruction_files(name) and os.path.isdir(repo.root / name):
            found.update(_walk(repo.root / name, repo.root, stopped, RULES_MAX_FILES))
        elif is_instruction_file(name):
            found.add(repo.root / name)
    if len(found) > limit:
        _stop(stopped, repo.root / base if prefix else repo.root)
    return sorted(found)[: max(limit, 0)]


def _stop(stopped: list[Path], top: Path) -> None:
    """Say once that lint stopped listing files under `top`."""
    if top not in stopped:
        stopped.append(top)


# Files a walk lists at most under the directory linted (through a symlinked rules directory:
# as many as the client's walk loads, `RULES_MAX_FILES`), and entries it looks at (a link to
# `/` in a rules directory must not make lint list the whole machine).
MAX_WALK_FILES = 10_000
MAX_WALK_ENTRIES = 200_000


def _walk(
    top: Path, root: Path, stopped: list[Path], max_files: int = MAX_WALK_FILES
) -> list[Path]:
    """Instruction files under `top` (names relative to `root`), in sorted order, without
    recursion (a tree thousands of directories deep is no error). Symlinked directories are
    followed only where instruction files go (the client follows them in rules
    directories), each real directory once. Past `MAX_WALK_FILES` files or `MAX_WALK_ENTRIES`
    entries it stops, and adds `top` to `stopped`."""
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()  # (device, inode) of each directory listed
    stack = [top]
    looked = 0
    while stack:
        if len(found) > max_files or looked >= MAX_WALK_ENTRIES:
            stopped.append(top)
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
            except OSError:
                continue
            if (is_dir and entry.name not in _SKIP_DIRS) or (
                linked_dir and _holds_instruction_files(rel)
            ):
                below.append(path)
            elif not is_dir and not linked_dir and is_instruction_file(rel):
                found.append(path)
        stack += reversed(below)
    if len(found) > max_files and top not in stopped:
        stopped.append(top)
    return found[:max_files]


def _holds_instruction_files(rel: str) -> bool:
    """Whether a file directly in the directory `rel` would be an instruction file."""
    return is_instruction_file(rel + "/x.md")


class _Repos:
    """One `GitRepo` per repository met in a run, its file list fetched in the background."""

    def __init__(self) -> None:
        self._repos: dict[Path, GitRepo] = {}
        self._roots: dict[str, Path | None] = {}  # each directory tested for `.git` once

    def of(self, directory: Path) -> GitRepo | None:
        root = find_git_root(directory, Disk(), self._roots)
        if root is None:
            return None
        if root not in self._repos:
            repo = self._repos[root] = GitRepo(root)
            repo.prefetch()  # most checks of a repository's files want its file list
        return self._repos[root]

    def unlisted(self, here: Path) -> list[Finding]:
        """A finding for each repository git could not list (a FIFO where git reads)."""
        return [
            Finding(
                relative_shown(repo.failure.path, here),
                1,
                1,
                codes.GIT_UNLISTED.code,
                repo.failure.why,
            )
            for repo in self._repos.values()
            if repo.failure is not None
        ]

    def close(self) -> None:
        for repo in self._repos.values():
            repo.close()


def lint(
    files: Sequence[PathLike] = (),
    *,
    cwd: PathLike | None = None,
    base: PathLike | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    **options: Unpack[Options],
) -> LintResult:
    """Lint `files` (or every instruction file under `base`); paths are shown relative to `base`.

    `cwd` also checks the whole context of that directory; `options` are `assemble()`'s
    (`touched` is not used: lint checks what loads at start)."""
    files = checked_paths(files, "files")
    if base is not None:
        checked_path(base, "base")
    if cwd is not None:
        checked_path(cwd, "cwd")
    here = Path(os.path.abspath(base if base is not None else os.getcwd()))
    if cwd is not None and not os.path.isdir(cwd):
        raise LintError(f"{cwd}: no such directory; pass the directory an agent starts in to --cwd")
    request = Request.of(os.path.abspath(cwd) if cwd is not None else here, **options)
    git_root = find_git_root(request.cwd, Disk())
    policy = resolve_policy(request.policy, request.cwd, git_root or request.cwd)
    levels = _levels(policy, select, ignore)
    machine = Machine(request.home, request.managed_dir, request.environ)
    repos = _Repos()
    try:
        whole_tree = not files and cwd is None
        stopped: list[Path] = []
        ignored: list[Path] = []
        wanted = frozenset(code for code, level in levels.items() if level is not None)
        context = ContextChecker(policy, machine, request.max_tokens or 0, wanted)
        memory: list[Path] = []
        if whole_tree:
            paths = _index_whole_tree(here, repos.of(here), context, stopped, ignored, memory)
        else:
            paths = _given(files, here, stopped, repos, ignored)
        many = not whole_tree and len(paths) >= INDEX_FROM_FILES
        indexes = codes.DUPLICATE.code in wanted  # the index is for duplicates only
        if many and indexes and (repo := repos.of(here)) is not None:
            # Many files given (`pre-commit run --all-files`): index the whole repository as
            # whole-repository lint does; each result is the same, only found sooner.
            unlisted: list[Path] = []
            every = _discover_files(repo.root, repo, unlisted, [])
            context.index_repository(repo.root, every, complete=not unlisted)
        checkers: dict[GitRepo | None, FileChecker] = {}
        findings = _leveled(
            (
                Finding(
                    relative_shown(top, here),
                    1,
                    1,
                    codes.FINDINGS_CAPPED.code,
                    f"lint stopped listing files here after {MAX_WALK_FILES:,} files ({RULES_MAX_FILES:,} through a link), "
                    f"{MAX_WALK_ENTRIES:,} entries walked or {MAX_LISTED:,} paths git lists: the files beyond are not "
                    "checked; is a link pointing at a large directory?",
                )
                for top in stopped
            ),
            levels,
        )
        for path in paths:
            if (repo := repos.of(path.parent)) is not None:
                repo.will_ask([path])  # whether it is git-ignored: one git run for all
        load_dirs: set[Path] = set()
        for path in paths:
            if _links_to_instruction_file(path):
                continue  # its target is linted under its own name: report each problem once
            info = classify(path, relative_shown(path, here), context.client)
            repo = repos.of(path.parent)
            if repo not in checkers:
                checkers[repo] = FileChecker(policy, machine, repo, context.shared_reads())
            findings += _capped(_leveled(_check_file(info, checkers[repo], repo, context), levels))
            if context.applies(info):
                load_dirs.add(info.load_dir)
        start = [here] if whole_tree else ([request.cwd] if cwd is not None else [])
        for directory in start:  # what loads there from outside, that no linted file holds
            findings += _leveled(context.start_notes(directory, here), levels)
        budget_dirs = sorted(load_dirs) if whole_tree else start
        for directory in budget_dirs:
            findings += context.over_budget(directory, here)
        findings += _leveled(repos.unlisted(here), levels)
    finally:
        repos.close()
    return _finish(findings, levels, paths, here, ignored, memory)


def _index_whole_tree(
    here: Path,
    repo: GitRepo | None,
    context: ContextChecker,
    stopped: list[Path],
    ignored: list[Path],
    memory: list[Path],
) -> list[Path]:
    """Every instruction file under `here` and the repository's auto memory (added to
    `memory`), indexed as they are found: the tracked files while git walks the working tree
    for the others (on a large tree the walk takes as long as indexing)."""
    if repo is not None:
        repo.walk(_read_when_ignored())
    context.start_index(here)
    tracked = _tracked_files(here, repo, stopped) if repo is not None else []
    context.index_files(tracked)
    rest = (
        _other_files(here, repo, stopped, ignored, tracked)
        if repo is not None
        else _walk(here, here, stopped)
    )
    context.index_files(rest)
    paths = _together(tracked, rest)
    memory += [m for m in context.memory_files(here) if m not in paths]
    context.index_files(memory)
    context.finish_index(complete=not stopped)
    return [*paths, *memory]


# From this many files given, lint indexes the repository (`lint.universe`) before checking
# them: a few files are checked faster without (indexing reads every instruction file).
INDEX_FROM_FILES = 64


def _given(
    files: Sequence[PathLike], here: Path, stopped: list[Path], repos: _Repos, ignored: list[Path]
) -> list[Path]:
    """The files given; a symlinked rules directory (git, and so pre-commit, sees a file)
    stands for the instruction files in it, and a directory (`ctxasm lint .`) for every
    instruction file under it, found as whole-repository lint finds them."""
    paths = []
    for path in (Path(os.path.abspath(here / f)) for f in files):
        if not os.path.lexists(path):
            raise LintError(
                f"{relative_shown(path, here)}: no such file; pass existing instruction files"
            )
        if path.is_symlink() and path.is_dir() and _holds_instruction_files(path.as_posix()):
            paths += _walk(path, Path(path.anchor), stopped, RULES_MAX_FILES)
        elif path.is_dir() and not path.is_symlink() and not is_instruction_file(path.name):
            paths += _discover_files(path, repos.of(path), stopped, ignored)
        else:
            paths.append(path)
    return list(dict.fromkeys(paths))


def _check_file(
    info: FileInfo, checker: FileChecker, repo: GitRepo | None, context: ContextChecker
) -> list[Finding]:
    """One file's own findings, those against the context it loads with, minus suppressed
    ones and those of checks that do not apply to its client's files."""
    checked = checker.check(info)
    found = list(checked.findings)
    if checked.text is not None and checked.lines is not None:
        found += context.duplicates(info, checked.lines, checked.body)
        found += context.dropped_for_deeper_starts(info, checked.lines, repo)
        found += context.client_notes(info)
        hidden = suppressions(checked.text)
        found = [f for f in found if not hidden.hides(f)]
    if info.clients:  # the checks of every agent that loads it, and no other
        applied = frozenset().union(*(c.lint_codes for c in info.clients))
        found = [f for f in found if f.code in applied]
    return found


def _finish(
    findings: Iterable[Finding],
    levels: Mapping[str, Severity | None],
    paths: Sequence[Path],
    here: Path,
    ignored: Sequence[Path] = (),
    memory: Sequence[Path] = (),
) -> LintResult:
    kept = sorted(set(_leveled(findings, levels)), key=_position)
    shown_ignored = tuple(sorted(relative_shown(p, here) for p in ignored))
    shown_memory = tuple(relative_shown(p, here) for p in memory)
    files = tuple(relative_shown(p, here) for p in paths)
    return LintResult(tuple(kept), files, shown_ignored, shown_memory)


def _leveled(findings: Iterable[Finding], levels: Mapping[str, Severity | None]) -> list[Finding]:
    """The findings of selected codes, with their configured severity."""
    return [f._replace(severity=levels[f.code]) for f in findings if levels[f.code] is not None]


def _position(f: Finding) -> tuple[str, int, int, str, str]:
    return (f.path, f.line, f.col, f.code, f.message)


# Findings of one code in one file past this many are counted in one CTX008 finding, so that
# a hostile file (60,000 secrets, 200,000 missing imports) gives a bounded report.
MAX_PER_CODE = 100


def _capped(findings: Iterable[Finding]) -> list[Finding]:
    """At most `MAX_PER_CODE` findings of each code in each file (the first ones), and for
    each code with more, a CTX008 finding where the first one left out is, with the count."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in dict.fromkeys(findings):
        groups.setdefault((f.path, f.code), []).append(f)
    out: list[Finding] = []
    for (path, code), group in groups.items():
        if len(group) <= MAX_PER_CODE or code == codes.FINDINGS_CAPPED.code:
            out += group
            continue
        group.sort(key=_position)
        out += group[:MAX_PER_CODE]
        first = group[MAX_PER_CODE]
        out.append(
            first._replace(
                code=codes.FINDINGS_CAPPED.code,
                message=f"{len(group) - MAX_PER_CODE:,} more {code} findings in {path} are not "
                f"shown: lint reports the first {MAX_PER_CODE} of each code in a file",
                severity=codes.FINDINGS_CAPPED.lint,
            )
        )
    return out


def _links_to_instruction_file(path: Path) -> bool:
    """One agent's instruction file linked to another's: the same text under another
    instruction name."""
    if not path.is_symlink():
        return False
    real = Path(os.path.realpath(path))
    return real.is_file() and is_instruction_file(real.as_posix())
