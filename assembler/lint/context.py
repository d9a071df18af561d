"""What loads at start in each directory a lint run asks about (`Starts`), and the checks of
it (`StartChecks`): content from outside, a client's findings at a position, imports a
deeper start drops, the token budget. Duplicated text is `lint.duplicates`'.

Each check is computed for one linted file (or one directory) from what the policy's client
loads there, so the results do not depend on which other files were passed in the same run.
Discovery of each directory runs once per lint run, and every file is read and parsed once
across all of them (`_SharedReads`).
"""

from __future__ import annotations

import bisect
import itertools
import os
from collections.abc import Callable, Container, Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .. import codes
from ..clients import registry
from ..clients.base import Client, FileKind
from ..discovery.cache import ONE_RUN
from ..discovery.context import Discovery, Run
from ..discovery.disk import Compute, Disk, Observer, QuietObserver
from ..discovery.loader import RUN_MAX_IMPORTS
from ..discovery.locations import is_within, within
from ..discovery.prefixes import Prefixes
from ..model import Layer, Policy, Reason, TokenCounter
from ..output.sections import context_tokens, source_tokens
from ..tokens import estimate_tokens, estimated
from ..versions import NO_VERSION, ClientVersion
from .files import (
    FileInfo,
    Finding,
    Machine,
    Positions,
    is_instruction_file,
    relative_shown,
    resolved_imports,
)
from .git import GitRepo
from .scan import Scan, ScanBudget

if TYPE_CHECKING:
    from ..assembly import Assembly
    from ..discovery.cache import ReadCache

T = TypeVar("T")
LOADS_AT_START = frozenset({FileKind.INSTRUCTIONS, FileKind.LOCAL, FileKind.RULE})
# Files a client's discovery of their directory may say something about, at a position.
_SAYS_AT_START = LOADS_AT_START | {FileKind.SETTINGS}


_NAMED_STARTS = 10  # deeper directories CTX207 names (the rest are counted)
_FROM_OUTSIDE = frozenset(
    c.code for c in (codes.OUTSIDE_PROJECT, codes.OUTSIDE_HOME, codes.MEMORY_MOVED)
)


class Starts:
    """What the policy's client loads at start in each directory of one lint run: one
    discovery per directory, every file read and parsed once across all of them
    (`_SharedReads`), and the real paths asked on the way."""

    def __init__(
        self,
        policy: Policy,
        machine: Machine,
        version: ClientVersion = NO_VERSION,
        counter: TokenCounter = estimate_tokens,
    ) -> None:
        self.policy = policy
        self.version = version  # the release of the policy's client modelled
        self.counter = counter  # the caller's: every count of the run is made with it
        # What loads at start, for comparing files: the skills index is not a file.
        self._discovery_policy = policy._replace(skills=False)
        self.client = registry.get(policy.client)
        self.machine = machine
        self._discoveries: dict[Path, Discovery[Any] | None] = {}
        self._other_discoveries: dict[tuple[str, Path], Discovery[Any] | None] = {}
        self._reads: _SharedReads | None = None
        self._realpaths: dict[str, str] = {}
        self._links: dict[str, bool] = {}
        self._loaded_in: dict[Path, frozenset[str]] = {}
        self._prefixes: Prefixes[Any] = Prefixes()  # the discoveries down the tree share work
        # Told of each discovery of the policy's client (the index checks itself on them).
        self.discovered: Callable[[Path, Discovery[Any]], None] | None = None

    def applies(self, info: FileInfo) -> bool:
        """Whether `info` is a file the policy's client loads at start from its directory."""
        return info.client is self.client and info.kind in LOADS_AT_START

    def discovery(self, cwd: Path) -> Discovery[Any] | None:
        """What loads at start in `cwd` (no budget, no rendering: cheaper than an assembly);
        None when no agent can start there."""
        if cwd not in self._discoveries:
            found = self._discover(cwd, self.shared_reads(), prefixes=self._prefixes)
            self._discoveries[cwd] = found
            if found is not None and self.discovered is not None:
                self.discovered(cwd, found)
        return self._discoveries[cwd]

    def _discover(
        self,
        cwd: Path,
        observer: Observer | None,
        client: Client[Any] | None = None,
        policy: Policy | None = None,
        *,
        prefixes: Prefixes[Any] | None = None,
    ) -> Discovery[Any] | None:
        """What `client` (the policy's) loads at start in `cwd` with `policy` (the run's);
        `prefixes`: shared with the other discoveries of the run (only with quiet reads)."""
        from ..errors import AssemblerError

        run = self._run(cwd, observer, policy, prefixes)
        if run is None:
            return None
        try:
            return (client or self.client).discover(run)
        except AssemblerError:
            return None

    def _run(
        self,
        cwd: Path,
        observer: Observer | None,
        policy: Policy | None = None,
        prefixes: Prefixes[Any] | None = None,
    ) -> Run | None:
        """A discovery run started in `cwd` (None when no agent can start there)."""
        ctx = self.machine.context(cwd)
        if ctx is None:
            return None
        chosen = policy or self._discovery_policy
        version = self.version if chosen is self._discovery_policy else NO_VERSION
        return Run(ctx, chosen, self.counter, Disk(observer), prefixes, version)

    def at_release(self, cwd: Path, release: str) -> Discovery[Any] | None:
        """What the policy's client loads at start in `cwd` when it models `release` (another
        of its modelled releases than the run's), every file read once per run still."""
        from ..errors import AssemblerError

        run = self._run(cwd, self.shared_reads())
        if run is None:
            return None
        try:
            return self.client.discover(run._replace(version=ClientVersion(release)))
        except AssemblerError:
            return None

    def memory_files(self, cwd: Path) -> list[Path]:
        """The auto memory index the client loads at start in `cwd` (it lives outside the
        repository, in the user's config directory, and goes into every prompt)."""
        discovery = self.discovery(cwd)
        sources = discovery.sources if discovery is not None else ()
        return [Path(s.path) for s in sources if s.layer is Layer.MEMORY and os.path.isabs(s.path)]

    def start_files(self, cwd: Path) -> list[Path]:
        """What `lint --cwd` checks without files: the files whole-repository lint would check
        of those the client loads at start in `cwd` (an agent's instruction file, by name, in
        the project: cwd's own, its ancestors', rules), in load order, a link followed to its
        target; the auto memory index is `memory_files`'. An imported file is checked through
        its importer; files from outside the project, through the start's notes."""
        ctx, discovery = self.machine.context(cwd), self.discovery(cwd)
        if ctx is None or discovery is None:
            return []
        root = str(ctx.project_root)
        found: dict[Path, None] = {}
        for source in discovery.sources:
            if not os.path.isabs(source.path):
                continue  # a pseudo path: `<managed-settings>`
            paths = [source.path]
            if self.is_link(source.path):
                paths.append(self.real(source.path))
            found.update(
                (Path(p), None) for p in paths if is_instruction_file(p) and is_within(p, root)
            )
        return list(found)

    def client_discovery(self, client: Client[Any], cwd: Path) -> Discovery[Any] | None:
        """`discovery(cwd)` for any client, with the policy it runs with when only it is named
        (`policy.agent_policy`), or the run's when it has none."""
        if client is self.client:
            return self.discovery(cwd)
        key = (client.name, cwd)
        if key not in self._other_discoveries:
            from ..errors import PolicyError
            from ..policy import agent_policy

            try:
                policy: Policy | None = agent_policy(client)._replace(skills=False)
            except PolicyError:
                policy = None  # a client without a usable policy of its own: the run's
            self._other_discoveries[key] = self._discover(cwd, None, client, policy)
        return self._other_discoveries[key]

    def shared_reads(self) -> _SharedReads:
        """What the run's discoveries share: each file read and parsed once per run."""
        if self._reads is None:
            from ..discovery.cache import ReadCache

            self._reads = _SharedReads(ReadCache())
        return self._reads

    def real(self, path: str) -> str:
        real = self._realpaths.get(path)
        if real is None:
            real = self._realpaths[path] = self.machine.real.realpath(path)
        return real

    def is_link(self, path: str) -> bool:
        found = self._links.get(path)
        if found is None:
            found = self._links[path] = os.path.islink(path)
        return found

    def loaded(self, cwd: Path) -> frozenset[str]:
        """The files that load at start in `cwd`: their paths, and the real paths of links."""
        found = self._loaded_in.get(cwd)
        if found is None:
            discovery = self.discovery(cwd)
            paths = (
                {s.path for s in discovery.sources if os.path.isabs(s.path)} if discovery else set()
            )
            found = self._loaded_in[cwd] = frozenset(
                paths | {self.real(p) for p in paths if self.is_link(p)}
            )
        return found


class StartChecks:
    """The checks of what an agent started in a directory loads: content from outside no
    linted file holds (`start_notes`), what a client says of a file at a position when it
    starts in its directory (`client_notes`), imports a deeper start drops (`CTX207`), the
    token budget (`CTX601`). `wanted`: the codes the run reports; a check whose code is not
    among them does no work."""

    def __init__(
        self, starts: Starts, max_tokens: int, wanted: Container[str], detail: bool = False
    ) -> None:
        self.starts = starts
        self.max_tokens = max_tokens
        self._wanted = wanted
        self._detail = detail  # CTX605 file by file, not one summary
        self._assemblies: dict[Path, Assembly] = {}
        self._drops: dict[Path, bool] = {}
        self._start_dirs: dict[GitRepo, StartDirs] = {}

    def note_starts(self, start: Sequence[Path], load_dirs: Iterable[Path]) -> list[Path]:
        """The starts whose notes (`start_notes`) lint reports: `start` (the repository's own,
        or `--cwd`), and each start of a checked file with settings of its own
        (`Client.start_settings`), which may load from outside what the others do not."""
        if not start or not any(code in self._wanted for code in _FROM_OUTSIDE):
            return list(start)
        names = self.starts.client.start_settings
        own = {
            directory
            for directory in load_dirs
            if directory not in start
            and any(os.path.lexists(os.path.join(directory, name)) for name in names)
        }
        return [*start, *sorted(own)]

    def start_notes(self, cwd: Path, shown_base: Path) -> list[Finding]:
        """What the client started in `cwd` says of content from outside that no linted file
        holds (`Discovery.notes`): a file of a directory above the repository that reaches
        elsewhere (CTX801, CTX802), auto memory the repository's settings moved (CTX804).
        Nothing to ask, no discovery, when none of those checks is on."""
        if not any(code in self._wanted for code in _FROM_OUTSIDE):
            return []
        discovery = self.starts.discovery(cwd)
        return [
            Finding(
                relative_shown(note.path, shown_base), note.line, note.col, note.code, note.message
            )
            for note in (discovery.notes if discovery is not None else ())
            if note.code in _FROM_OUTSIDE and note.code in self.starts.client.lint_codes
        ]

    def settings_notes(self, cwd: Path, shown_base: Path) -> list[Finding]:
        """Settings files of the repository that the client started in `cwd` cannot use
        (CTX701: invalid JSON, a key of the wrong type), as render and explain say: the
        pre-commit hook sees them too. The home's settings are the user's, not the
        repository's, and are left to render."""
        if codes.SETTINGS_INVALID.code not in self._wanted:
            return []
        if codes.SETTINGS_INVALID.code not in self.starts.client.lint_codes:
            return []
        discovery = self.starts.discovery(cwd)
        root = os.path.realpath(shown_base)
        out: list[Finding] = []
        for d in discovery.diagnostics if discovery is not None else ():
            if d.code != codes.SETTINGS_INVALID.code or d.path.startswith("~"):
                continue  # `~/...`: the home's, shown from it
            path = os.path.realpath(os.path.join(cwd, d.path))
            if within(path, root):
                out.append(Finding(relative_shown(path, shown_base), 1, 1, d.code, d.message))
        return out

    def agent_notes(self, cwd: Path, shown_base: Path) -> list[Finding]:
        """What the client started in `cwd` finds wrong with the agent types it can start
        (`Client.agents`: their definitions, and its files speaking to types that will not
        see them), for its own checks; none to ask when it starts no subagents."""
        wanted = [c for c in self.starts.client.lint_codes if c in self._wanted]
        if not wanted:
            return []
        assembly = self.assembly(cwd)
        root = assembly.context.project_root
        found = assembly.agents(observer=self.starts.shared_reads(), lint=True).diagnostics
        return [
            Finding(_lint_path(d.path, root, shown_base), 1, 1, d.code, d.message)
            for d in found
            if d.code in wanted and _of_the_project(d.path, root)
        ]

    def client_notes(self, info: FileInfo) -> list[Finding]:
        """What each client that loads `info` at start says about it at a position when it
        discovers the file's directory (the line where a byte budget stops reading, an import
        that leaves the project, a bad setting), for that
        client's checks only."""
        out: list[Finding] = []
        me = self.starts.real(str(info.path))
        for client in info.clients:
            if not client.notes_at_start:
                continue  # nothing to ask: no discovery of its directory for it
            role = client.classify(info.path)
            if role is None or role.kind not in _SAYS_AT_START:
                continue
            discovery = self.starts.client_discovery(client, role.load_dir)
            for note in discovery.notes if discovery is not None else ():
                if note.code in client.lint_codes and self.starts.real(note.path) == me:
                    out.append(Finding(info.shown, note.line, note.col, note.code, note.message))
        return out

    def dropped_for_deeper_starts(
        self, info: FileInfo, scan: Scan, repo: GitRepo | None, budget: ScanBudget
    ) -> list[Finding]:
        """Imports that an agent started in a deeper directory with its own instructions drops:
        the deeper start loads this file but not what it imports (as its discovery shows).
        The file's imports are resolved once for all its paths (`scan`); the paths compared,
        and the text searched for the positions, at each path count in the run's `budget`."""
        if (
            codes.IMPORT_DEEPER_START.code not in self._wanted
            or not self.starts.applies(info)
            or repo is None
            or scan.lines is None
            or not info.load_dir.is_dir()
        ):
            return []
        real_dir = os.path.dirname(self.starts.real(str(info.path)))
        home = str(self.starts.machine.home)
        files = resolved_imports(scan, real_dir, home).files(RUN_MAX_IMPORTS)  # as a run follows
        if not files or not budget.take(sum(len(t) for _, t in files), info.shown):
            return []
        imports = [
            (token, target) for token, target in files if is_within(target, str(info.load_dir))
        ]
        # Cheapest questions first: git and discovery only when something could be dropped.
        if not imports:
            return []
        index = self._start_dirs.get(repo)
        if index is None:
            index = self._start_dirs[repo] = StartDirs(repo, self.starts.client)
        deeper = index.below(info.load_dir)
        me = {str(info.path), self.starts.real(str(info.path))}
        positions = Positions(scan.lines)
        out: list[Finding] = []
        for token, target in imports:
            starts = [
                d
                for d in deeper
                if not is_within(target, str(d))
                and self._drops_outside(d)
                and me & (loaded := self.starts.loaded(d))
                and target not in loaded
                and self.starts.real(target) not in loaded
            ]
            if not starts:
                continue
            if not out and not budget.take(len(scan.lines.text), info.shown):
                return []  # the text is searched for the positions at each path
            line, col = positions.of(token)
            named = [f"{d.relative_to(info.load_dir).as_posix()}/" for d in starts[:_NAMED_STARTS]]
            more = len(starts) - len(named)
            where = ", ".join(named) + (f" and {more:,} more" if more else "")
            out.append(
                Finding(
                    info.shown,
                    line,
                    col,
                    codes.IMPORT_DEEPER_START.code,
                    f"@{token} is dropped when the agent starts in {where} (each has its own "
                    f"instructions): {self.starts.client.advice.deeper_start}",
                )
            )
        return out

    def _drops_outside(self, cwd: Path) -> bool:
        """Whether the agent started in `cwd` may drop an import outside it (asked of the
        client before a discovery: one that follows imports outside cwd drops none)."""
        found = self._drops.get(cwd)
        if found is None:
            from ..errors import AssemblerError

            run = self.starts._run(cwd, self.starts.shared_reads(), prefixes=self.starts._prefixes)
            found = False  # no agent starts there
            if run is not None:
                try:
                    found = not self.starts.client.follows_imports_outside_cwd(run)
                except AssemblerError:
                    found = True  # unknown: its discovery tells
            self._drops[cwd] = found
        return found

    def over_budget(self, cwd: Path, shown_base: Path) -> list[Finding]:
        """The whole context of `cwd` against the token budget (policy or --max-tokens)."""
        budget = self.max_tokens or self.starts.policy.limits.max_tokens
        if not budget or codes.OVER_BUDGET.code not in self._wanted:
            return []
        assembly = self.assembly(cwd)
        policy, counter = assembly.policy, assembly.counter
        total = context_tokens(assembly.sources, policy, counter).total  # as explain counts
        if total <= budget:
            return []
        live = [s for s in assembly.sources if not s.dropped]
        counts = {s.key: source_tokens(s, policy, counter) for s in live}
        biggest = sorted(live, key=lambda s: -counts[s.key])[:3]
        names = ", ".join(f"{s.display} ({counts[s.key]:,})" for s in biggest)
        own = [
            s.path
            for s in live
            if os.path.isabs(s.path) and _load_dir(self.starts.client, Path(s.path)) == cwd
        ]
        anchor = own[0] if own else str(cwd)
        return [
            Finding(
                relative_shown(anchor, shown_base),
                1,
                1,
                codes.OVER_BUDGET.code,
                f"the context for {relative_shown(str(cwd), shown_base)}/ is {total:,} tokens"
                f"{' (estimated)' if estimated(counter) else ''}, over the {budget:,}-token "
                f"budget: shorten the largest sources: {names}",
            )
        ]

    def version_dependent(self, starts: Iterable[Path], shown_base: Path) -> list[Finding]:
        """CTX605: a file that loads at start in one of `starts` under one modelled release of
        the policy's client and not under another (or with other text), at the first
        `MAX_VERSION_STARTS` starts: where the answer depends on the client's release."""
        client, mine = self.starts.client, self.starts.version.modelled
        table = client.versions
        if codes.VERSION_DEPENDENT.code not in self._wanted or table is None or not mine:
            return []
        if self.starts.version.asked not in ("", "latest") and not self._detail:
            return []  # the user named the release they run: the others are not theirs
        others = [release for release in table.modelled if release != mine]
        differs: dict[str, list[str]] = {}
        for cwd in sorted(set(starts))[:MAX_VERSION_STARTS]:
            here = _loaded_text(self.starts.discovery(cwd))
            for release in others:
                there = _loaded_text(self.starts.at_release(cwd, release))
                where = relative_shown(str(cwd), shown_base)
                for path in sorted(set(here) | set(there)):
                    if here.get(path) != there.get(path):
                        said = _how_it_differs(path in here, path in there, mine, release)
                        differs.setdefault(path, []).append(f"{said} starting in {where}/")
        if len(differs) > 1 and not self._detail:
            return [self._one_summary(differs, others, shown_base)]
        return [
            Finding(
                relative_shown(path, shown_base),
                1,
                1,
                codes.VERSION_DEPENDENT.code,
                f"{client.title}: {'; '.join(said[:_NAMED_STARTS])}"
                + (
                    f" and {len(said) - _NAMED_STARTS:,} more starts"
                    if len(said) > _NAMED_STARTS
                    else ""
                )
                + ": what loads depends on the release; check the release you run (--client-version)",
            )
            for path, said in differs.items()
        ]

    def _one_summary(
        self, differs: Mapping[str, list[str]], others: Sequence[str], shown_base: Path
    ) -> Finding:
        """CTX605 once, on the first file, for a run where many files load differently at
        another release (Prefect's lint: 41 of 44 lines): how many, which, and how to see each."""
        client, mine = self.starts.client, self.starts.version.modelled
        paths = [relative_shown(path, shown_base) for path in differs]
        named = ", ".join(paths[:_NAMED_FILES])
        more = f" and {len(paths) - _NAMED_FILES:,} more" if len(paths) > _NAMED_FILES else ""
        releases = " or ".join(others)
        return Finding(
            paths[0], 1, 1, codes.VERSION_DEPENDENT.code,
            f"{client.title}: {len(paths):,} files load differently under {releases} than under "
            f"{mine} ({named}{more}): what loads depends on the release; name the release you "
            "run (--client-version), or see each file with --select CTX605",
        )  # fmt: skip

    def assembly(self, cwd: Path) -> Assembly:
        """The whole assembly of `cwd` (budgets, rendering): for the budget check and the
        agent types the start offers."""
        if cwd not in self._assemblies:
            from ..assembly import run
            from ..request import Request

            machine = self.starts.machine
            request = Request.of(
                cwd,
                policy=self.starts.policy,
                home=machine.home,
                managed_dir=machine.managed_dir,
                environ=machine.environ,
                max_tokens=0,
                client_version=self.starts.version.modelled or None,
                counter=self.starts.counter,
            )
            self._assemblies[cwd] = run(request, observer=self.starts.shared_reads())
        return self._assemblies[cwd]


# The starts lint compares across a client's modelled releases (CTX605), the first in name
# order: each costs one more discovery per release.
MAX_VERSION_STARTS = 200
_NAMED_FILES = 3  # files a CTX605 summary names


def _of_the_project(display: str, root: Path) -> bool:
    """Whether a path a run displays is a file of the project or the home (`~/...`), not one
    outside both that a link brought in (a rules directory linked to `/`)."""
    if display.startswith("~"):
        return True
    return within(os.path.normpath(root / display), os.path.normpath(root))


def _lint_path(display: str, root: Path, shown_base: Path) -> str:
    """A path as a run displays it (relative to the project root, `~/...`, absolute) as lint
    shows it (relative to its base)."""
    if display.startswith("~"):
        return display
    return relative_shown(os.path.normpath(root / display), shown_base)


def _loaded_text(discovery: Discovery[Any] | None) -> dict[str, str]:
    """Each file loaded at start (by its path) and the text it loads with."""
    sources = discovery.sources if discovery is not None else ()
    return {s.path: s.content for s in sources if os.path.isabs(s.path)}


def _how_it_differs(mine: bool, theirs: bool, release: str, other: str) -> str:
    if mine and theirs:
        return f"loads with other text under {release} than under {other}"
    present, absent = (release, other) if mine else (other, release)
    return f"loads under {present} but not under {absent}"


class _SharedReads(QuietObserver):
    """An observer that only shares processed files between the directories of one lint run."""

    def __init__(self, cache: ReadCache) -> None:
        self.cache = cache
        # One lint run is one run, however many directories it discovers: every file counts
        # as settled (as `Disk` counts them within one), so a file written just before the
        # run (a checkout in CI) is processed once too, not once per directory.
        self.since = ONE_RUN

    def cached(self, path: str, key: Hashable, st: os.stat_result | None, compute: Compute[T]) -> T:
        return self.cache.cached(path, key, st, compute, self.since)


class Recording(_SharedReads):
    """Shared reads, and every path the run depends on that it did not consider as a source
    (its settings, not its instruction files and imports), in `seen`."""

    def __init__(self, reads: _SharedReads) -> None:
        self.cache, self.since = reads.cache, reads.since
        self._seen: list[str] = []
        self._sources: set[str] = set()

    def candidate(self, path: str, layer: Layer, reason: Reason) -> None:
        self._sources.add(os.path.normpath(path))

    def saw(self, path: str) -> None:
        self._seen.append(path)

    def cached(self, path: str, key: Hashable, st: os.stat_result | None, compute: Compute[T]) -> T:
        self.saw(path)  # read before in the run or not, the start depends on it
        return super().cached(path, key, st, compute)

    @property
    def seen(self) -> list[str]:
        return [p for p in self._seen if os.path.normpath(p) not in self._sources]


def _load_dir(client: Client[Any], path: Path) -> Path | None:
    role = client.classify(path)
    return role.load_dir if role is not None else None


class StartDirs:
    """The directories holding a client's tracked instruction files that load at start, of one
    repository, found once (every tracked path classified once) and asked by subtree."""

    def __init__(self, repo: GitRepo, client: Client[Any]) -> None:
        found: set[str] = set()
        for rel in repo.tracked():
            role = client.classify(repo.root / rel)
            if role is not None and role.kind in LOADS_AT_START:
                found.add(str(role.load_dir))
        self._dirs = sorted(found)  # a subtree's directories are one run of this list

    def below(self, directory: Path) -> list[Path]:
        """Those strictly below `directory`, in path order."""
        prefix = str(directory).rstrip(os.sep) + os.sep
        start = bisect.bisect_left(self._dirs, prefix)
        after = itertools.islice(self._dirs, start, None)
        found = itertools.takewhile(lambda d: d.startswith(prefix), after)
        return sorted(map(Path, found))
