"""`ctxasm lint`: check instruction files the way the pre-commit hook and CI need.

With files: each file is checked on its own and against the context it loads with (results
never depend on how pre-commit splits the list). Without files: every instruction file under
the directory (every registered client's, and other agents'), plus the whole context of every
directory that holds the policy's client's files. With `--cwd DIR`: also the whole context of
DIR; without files, the instruction files that load at DIR's start are the files checked. Codes, names and default severities come from the one catalogue (`assembler.codes`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, Unpack

from .. import codes
from ..clients import registry
from ..discovery.disk import Disk
from ..discovery.locations import find_git_root
from ..discovery.rules import RULES_MAX_FILES
from ..display import shown as display_form
from ..errors import AssemblerError
from ..model import Policy, Severity, TokenCounter
from ..policy import resolve_policy
from ..request import Options, PathLike, Request, checked_path, checked_paths
from ..tokens import estimate_tokens
from ..versions import NO_VERSION, ClientVersion
from .context import LOADS_AT_START, StartChecks, Starts
from .duplicates import Duplicates
from .files import (
    Checked,
    FileChecker,
    FileInfo,
    Finding,
    Machine,
    classify,
    is_instruction_file,
    relative_shown,
)
from .git import MAX_LISTED, GitRepo
from .listing import (
    MAX_WALK_ENTRIES,
    MAX_WALK_FILES,
    Listing,
    holds_instruction_files,
    instruction_files,
    merged,
    other_files,
    read_when_ignored,
    together,
    tracked_files,
    walk,
)
from .scan import MAX_PER_CODE, MAX_SCAN_CHARS, Held, ScanBudget, Scans, by_file, suppressions

_LEVELS = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO, "off": None}

__all__ = [
    "MAX_PER_CODE",
    "MAX_SCAN_CHARS",
    "LintError",
    "LintResult",
    "is_instruction_file",
    "lint",
    "suppressions",
]


class LintError(AssemblerError):
    """A usage problem: a file that does not exist, an unknown code."""


class LintResult(NamedTuple):
    findings: tuple[Finding, ...]
    files: tuple[str, ...]
    ignored: tuple[str, ...] = ()  # of `files`, those git ignores (an agent reads them anyway)
    memory: tuple[str, ...] = ()  # of `files`, the repository's auto memory (outside it)
    modelled: str = ""  # the policy's client and the release modelled (its title and the release)
    scanned: int = 0  # characters the content checks scanned (each file's once: `lint.scan`)

    @property
    def failed(self) -> bool:
        """Whether an error was found (what fails `ctxasm lint` and the hook by default)."""
        return self.fails()

    def fails(self, *, strict: bool = False) -> bool:
        """Whether an error was found, or with `strict` a warning too."""
        failing = (Severity.ERROR, Severity.WARNING) if strict else (Severity.ERROR,)
        return any(f.severity in failing for f in self.findings)


def _levels(
    policy: Policy, select: Sequence[str], ignore: Sequence[str], size_errors: bool = False
) -> dict[str, Severity | None]:
    """The effective severity of every lint code (None: not selected). With `size_errors`, a
    size code (`Code.size`) is an error unless the project's `[lint.severity]` says otherwise:
    the hook blocks an oversized file by default, and a repository relaxes it in its config."""
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
        default = Severity.ERROR if size_errors and entry.size else entry.lint
        level = _LEVELS[overrides[entry.code]] if entry.code in overrides else default
        levels[entry.code] = level if on else None
    return levels


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
    size_errors: bool = False,
    max_scan_chars: int = MAX_SCAN_CHARS,
    **options: Unpack[Options],
) -> LintResult:
    """Lint `files` (or every instruction file under `base`); paths are shown relative to `base`.

    `cwd` also checks the whole context of that directory, and without `files` the
    instruction files that load at its start; `size_errors` makes a file over a size limit,
    or cut by its client, an error (the pre-commit hook's default) unless the policy's
    `[lint.severity]` sets that code; `max_scan_chars`: the characters the run's content
    checks may scan, all files together (past it, `CTX008` says what was not checked);
    `options` are `assemble()`'s (`touched` is not used: lint checks what loads at start)."""
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
    machine = Machine(request.home, request.managed_dir, request.environ)
    client = registry.get(policy.client)
    version = client.choose_version(request.client_version, request.environ)
    levels = _levels(policy, select, ignore, size_errors)
    detail = "CTX605" in {c.strip().upper() for given in select for c in given.split(",")}
    run = _Run.of(
        policy, machine, levels, request.max_tokens or 0, version, request.counter, detail
    )
    whole_tree = not files and cwd is None
    repos = _Repos()
    try:
        if whole_tree:
            listing, memory = _index_whole_tree(here, repos.of(here), run)
        elif files:
            listing, memory = _given(files, here, repos), ()
            if len(listing.files) >= INDEX_FROM_FILES:
                _index_repository(repos.of(here), run.duplicates)
        else:  # `--cwd DIR` alone: the files that load at that start, and its whole context
            listing = Listing(tuple(run.starts.start_files(request.cwd)))
            memory = tuple(
                m for m in run.starts.memory_files(request.cwd) if m not in listing.files
            )
        paths = (*listing.files, *memory)
        findings = _leveled((_stopped(top, here) for top in listing.stopped), run.levels)
        findings += _leveled((_linked_out(*out, here) for out in listing.linked_out), run.levels)
        budget = ScanBudget(max_scan_chars)
        checked, load_dirs, starts = _check_files(paths, here, run, repos, budget)
        findings += checked
        findings += _leveled(_unscanned(budget), run.levels)
        start = [here] if whole_tree else [request.cwd] if cwd is not None else []
        # What loads from outside, that no linted file holds: at the repository's start (or
        # cwd), and at each start with settings of its own (they may move its auto memory).
        for directory in run.checks.note_starts(start, load_dirs):
            findings += _leveled(run.checks.start_notes(directory, here), run.levels)
        for directory in start:  # the agent types a start offers (their own files)
            findings += _leveled(run.checks.agent_notes(directory, here), run.levels)
            findings += _leveled(run.checks.settings_notes(directory, here), run.levels)
        for directory in sorted(load_dirs) if whole_tree else start:
            findings += run.checks.over_budget(directory, here)
        findings += _leveled(run.checks.version_dependent([*start, *starts], here), run.levels)
        findings += _leveled(repos.unlisted(here), run.levels)
    finally:
        repos.close()
    result = _finish(findings, run.levels, paths, here, listing.ignored, memory)
    modelled = f"{client.title} {version.modelled}" if version.modelled else ""
    return result._replace(modelled=modelled, scanned=budget.scanned)


class _Run(NamedTuple):
    """What the checks of one lint run share: the policy, the machine, each code's level (and
    the codes reported), what loads at each start, the duplicates index, the start checks."""

    policy: Policy
    machine: Machine
    levels: Mapping[str, Severity | None]
    starts: Starts
    duplicates: Duplicates
    checks: StartChecks

    @classmethod
    def of(
        cls,
        policy: Policy,
        machine: Machine,
        levels: Mapping[str, Severity | None],
        max_tokens: int,
        version: ClientVersion = NO_VERSION,
        counter: TokenCounter = estimate_tokens,
        detail: bool = False,
    ) -> _Run:
        """`detail`: every file CTX605 is about on a line of its own (`--select CTX605`),
        not one summary."""
        wanted = frozenset(code for code, level in levels.items() if level is not None)
        starts = Starts(policy, machine, version, counter)
        checks = StartChecks(starts, max_tokens, wanted, detail)
        return cls(policy, machine, levels, starts, Duplicates(starts, wanted), checks)


def _stopped(top: Path, here: Path) -> Finding:
    """`CTX008` where listing files stopped at one of its limits."""
    return Finding(
        relative_shown(top, here), 1, 1, codes.FINDINGS_CAPPED.code,
        f"lint stopped listing files here after {MAX_WALK_FILES:,} files ({RULES_MAX_FILES:,} through a link), "
        f"{MAX_WALK_ENTRIES:,} entries walked or {MAX_LISTED:,} paths git lists: the files beyond are not "
        "checked; is a link pointing at a large directory?",
    )  # fmt: skip


def _linked_out(link: Path, target: str, here: Path) -> Finding:
    """`CTX801` once on a link where instruction files go to a directory outside the tree
    lint checks, holding more than lint lists through a link: its files are not listed one
    by one (a link to `/` gave 1,900 lines)."""
    return Finding(
        relative_shown(link, here), 1, 1, codes.OUTSIDE_PROJECT.code,
        f"links to {display_form(target)}, a directory outside the project with more than "
        f"{RULES_MAX_FILES:,} files or {MAX_WALK_ENTRIES:,} entries: the client loads rules "
        "from it into the prompt, and lint checks none of them; link only what belongs here, "
        "or copy it into the repository",
    )  # fmt: skip


def _unscanned(budget: ScanBudget) -> list[Finding]:
    """`CTX008` at the first path whose checks did not fit in the run's scan budget."""
    if not budget.skipped:
        return []
    first, *rest = budget.skipped
    more = f" and {len(rest):,} more" if rest else ""
    message = (
        f"lint stopped checking content here: one run's checks scan at most {budget.limit:,} "
        f"characters and follow at most {budget.imports:,} imports, and this run reached a "
        f"limit; the content of this path{more} is not fully checked (secrets, size, imports, "
        "duplicates): lint fewer or smaller files at once"
    )
    return [Finding(first, 1, 1, codes.FINDINGS_CAPPED.code, message)]


def _index_whole_tree(
    here: Path, repo: GitRepo | None, run: _Run
) -> tuple[Listing, tuple[Path, ...]]:
    """Every instruction file under `here`, and the repository's auto memory (outside it),
    indexed as they are found: the tracked files while git walks the working tree for the
    others (on a large tree the walk takes as long as indexing)."""
    duplicates = run.duplicates
    if repo is not None:
        repo.walk(read_when_ignored())
    duplicates.start_index(here)
    tracked = tracked_files(here, repo) if repo is not None else Listing()
    duplicates.index_files(tracked.files)
    rest = other_files(here, repo, tracked.files) if repo is not None else walk(here, here)
    duplicates.index_files(rest.files)
    listing = together(tracked, rest)
    memory = tuple(m for m in run.starts.memory_files(here) if m not in listing.files)
    duplicates.index_files(memory)
    duplicates.finish_index(complete=not listing.stopped)
    return listing, memory


# From this many files given, lint indexes the repository (`lint.universe`) before checking
# them: a few files are checked faster without (indexing reads every instruction file).
INDEX_FROM_FILES = 64


def _index_repository(repo: GitRepo | None, duplicates: Duplicates) -> None:
    """Many files given (`pre-commit run --all-files`): index the whole repository as
    whole-repository lint does; each result is the same, only found sooner."""
    if repo is None or not duplicates.wanted:
        return  # the index is for duplicates only
    every = instruction_files(repo.root, repo)
    duplicates.index_repository(repo.root, every.files, complete=not every.stopped)


def _given(files: Sequence[PathLike], here: Path, repos: _Repos) -> Listing:
    """The files given; a symlinked rules directory (git, and so pre-commit, sees a file)
    stands for the instruction files in it, and a directory (`ctxasm lint .`) for every
    instruction file under it, found as whole-repository lint finds them."""
    parts: list[Listing] = []
    for path in (Path(os.path.abspath(here / f)) for f in files):
        if not os.path.lexists(path):
            raise LintError(
                f"{relative_shown(path, here)}: no such file; pass existing instruction files"
            )
        if path.is_symlink() and path.is_dir() and holds_instruction_files(path.as_posix()):
            parts.append(walk(path, Path(path.anchor), RULES_MAX_FILES))
        elif path.is_dir() and not path.is_symlink() and not is_instruction_file(path.name):
            parts.append(instruction_files(path, repos.of(path)))
        else:
            parts.append(Listing((path,)))
    return merged(parts, dict.fromkeys(p for part in parts for p in part.files))


def _check_files(
    paths: Sequence[Path], here: Path, run: _Run, repos: _Repos, budget: ScanBudget
) -> tuple[list[Finding], set[Path], set[Path]]:
    """Each file's findings, the directories an agent starts in to load one of the policy's
    client's files at start (their whole context is checked against the budget), and those
    for any agent's instruction files (where what loads may depend on the release). The
    paths of one file are checked together: its content once (`lint.scan`)."""
    for path in paths:
        if (repo := repos.of(path.parent)) is not None:
            repo.will_ask([path])  # whether it is git-ignored: one git run for all
    checkers: dict[GitRepo | None, FileChecker] = {}
    scans = Scans(budget)
    findings: list[Finding] = []
    load_dirs: set[Path] = set()
    starts: set[Path] = set()
    for path, st in by_file(paths):
        if _links_to_instruction_file(path):
            continue  # its target is linted under its own name: report each problem once
        info = classify(path, relative_shown(path, here), run.starts.client)
        repo = repos.of(path.parent)
        if repo not in checkers:
            reads = run.starts.shared_reads()
            checkers[repo] = FileChecker(run.policy, run.machine, repo, reads, run.starts.version)
        checked = checkers[repo].check(info, scans, st)
        found, held = _check_file(info, checked, repo, run, budget)
        shared, more = _unheld(held, info.shown, run.levels)
        findings += _capped([*_leveled(found, run.levels), *shared], more)
        if run.starts.applies(info):
            load_dirs.add(info.load_dir)
        if info.kind in LOADS_AT_START:
            starts.add(info.load_dir)
    return findings, load_dirs, starts


def _check_file(
    info: FileInfo, checked: Checked, repo: GitRepo | None, run: _Run, budget: ScanBudget
) -> tuple[list[Finding], tuple[Held, ...]]:
    """One path's own findings and those against the context it loads with, minus suppressed
    ones, and what the checks of its file found (`Held`, suppressed already); of both, those
    of checks that apply to its client's files."""
    found = list(checked.findings)
    scan, held = checked.scan, checked.held
    if scan is not None and scan.text is not None:
        found += run.duplicates.duplicates(info, scan, budget)
        found += run.checks.dropped_for_deeper_starts(info, scan, repo, budget)
        found += run.checks.client_notes(info)
        found = [f for f in found if not scan.hidden.hides(f)]
    if info.clients:  # the checks of every agent that loads it, and no other
        applied = frozenset().union(*(c.lint_codes for c in info.clients))
        found = [f for f in found if f.code in applied]
        held = tuple(h for h in held if h.code in applied)
    return found, held


def _unheld(
    held: Iterable[Held], shown: str, levels: Mapping[str, Severity | None]
) -> tuple[list[Finding], dict[tuple[str, str], int]]:
    """A file's held findings at the path `shown` (of selected codes, with their level), and
    how many of each code were left out when they were held."""
    out: list[Finding] = []
    more: dict[tuple[str, str], int] = {}
    for group in held:
        level = levels[group.code]
        if level is None:
            continue
        out += (
            Finding(shown, line, col, group.code, message, level)
            for line, col, message in group.kept
        )
        if group.more:
            more[(shown, group.code)] = more.get((shown, group.code), 0) + group.more
    return out, more


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


def _capped(
    findings: Iterable[Finding], more: Mapping[tuple[str, str], int] | None = None
) -> list[Finding]:
    """At most `MAX_PER_CODE` findings of each code in each file (the first ones), and for
    each code with more, a CTX008 finding where the first one left out is, with the count.
    `more`: of each (path, code), how many were left out when a file's findings were held
    (`lint.scan.hold`: all after the ones held, which include the first one left out)."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in dict.fromkeys(findings):
        groups.setdefault((f.path, f.code), []).append(f)
    out: list[Finding] = []
    for (path, code), group in groups.items():
        extra = more.get((path, code), 0) if more else 0
        if len(group) + extra <= MAX_PER_CODE or code == codes.FINDINGS_CAPPED.code:
            out += group
            continue
        group.sort(key=_position)
        out += group[:MAX_PER_CODE]
        first = group[MAX_PER_CODE]
        out.append(
            first._replace(
                code=codes.FINDINGS_CAPPED.code,
                message=f"{len(group) + extra - MAX_PER_CODE:,} more {code} findings in {path} are not "
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
