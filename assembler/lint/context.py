"""Checks that need the assembled context: duplicated text, imports a deeper start drops, budget.

Each check is computed for one linted file (or one directory) from what the policy's client
loads there, so the results do not depend on which other files were passed in the same run.
Discovery of each directory runs once per lint run, and every file is read and parsed once
across all of them (`_SharedReads`).
"""

from __future__ import annotations

import itertools
import os
import re
import time
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from .. import codes
from ..clients import registry
from ..clients.base import Client, FileKind
from ..discovery.context import Discovery, Run
from ..discovery.disk import Compute, Disk, QuietObserver
from ..discovery.loader import RUN_MAX_IMPORTS
from ..discovery.locations import is_within
from ..model import Policy
from ..parsing.imports import iter_imports
from ..parsing.parse import CLIENT, parse
from ..tokens import estimate_tokens
from .files import FileInfo, Finding, Lines, Machine, Positions
from .git import GitRepo

if TYPE_CHECKING:
    from ..assembly import Assembly
    from ..discovery.cache import ReadCache

T = TypeVar("T")
_MIN_PARAGRAPH = 40
LOADS_AT_START = frozenset({FileKind.INSTRUCTIONS, FileKind.LOCAL, FileKind.RULE})
# Files a client's discovery of their directory may say something about, at a position.
_SAYS_AT_START = LOADS_AT_START | {FileKind.SETTINGS}


def _paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """(offset, normalised text) of each paragraph worth comparing."""
    for match in re.finditer(r"(?:[^\n]*\S[^\n]*(?:\n|$))+", text):
        block = match.group(0)
        lines = [
            ln
            for ln in block.splitlines()
            if not ln.lstrip().startswith(("#", "```", "~~~", "<!--"))
        ]
        normal = " ".join(" ".join(lines).split())
        if len(normal) >= _MIN_PARAGRAPH:
            yield match.start(), normal


_NAMED_STARTS = 10  # deeper directories CTX207 names (the rest are counted)


class ContextChecker:
    """Assembles the context of a directory once per run and checks files against it."""

    def __init__(self, policy: Policy, machine: Machine, max_tokens: int) -> None:
        self.policy = policy
        # What loads at start, for comparing files: the skills index is not a file.
        self._discovery_policy = policy._replace(skills=False)
        self.client = registry.get(policy.client)
        self.machine = machine
        self.max_tokens = max_tokens
        self._assemblies: dict[Path, Assembly] = {}
        self._discoveries: dict[Path, Discovery | None] = {}
        self._other_discoveries: dict[tuple[str, Path], Discovery | None] = {}
        self._reads: _SharedReads | None = None
        self._realpaths: dict[str, str] = {}
        self._paragraph_cache: dict[tuple[str, str], tuple[str, ...]] = {}
        self._loaded_in: dict[Path, frozenset[str]] = {}

    def applies(self, info: FileInfo) -> bool:
        """Whether `info` is a file the policy's client loads at start from its directory."""
        return info.client is self.client and info.kind in LOADS_AT_START

    def discovery(self, cwd: Path) -> Discovery | None:
        """What loads at start in `cwd` (no budget, no rendering: cheaper than an assembly);
        None when no agent can start there."""
        if cwd not in self._discoveries:
            from ..errors import AssemblerError

            disk = Disk(self.shared_reads() if self._discoveries else None)
            ctx = self.machine.context(cwd)
            found = None
            if ctx is not None:
                try:
                    found = self.client.discover(
                        Run(ctx, self._discovery_policy, estimate_tokens, disk)
                    )
                except AssemblerError:
                    found = None
            self._discoveries[cwd] = found
        return self._discoveries[cwd]

    def client_notes(self, info: FileInfo) -> list[Finding]:
        """What each client that loads `info` at start says about it at a position when it
        discovers the file's directory (Codex: the line where its byte budget stops reading;
        Gemini: an import that leaves the project, a bad `context.fileName`), for that
        client's checks only."""
        out: list[Finding] = []
        me = self._real(str(info.path))
        for client in registry.clients():
            role = client.classify(info.path)
            if role is None or role.kind not in _SAYS_AT_START:
                continue
            discovery = self._client_discovery(client, role.load_dir)
            for note in discovery.notes if discovery is not None else ():
                if note.code in client.lint_codes and self._real(note.path) == me:
                    out.append(Finding(info.shown, note.line, note.col, note.code, note.message))
        return out

    def _client_discovery(self, client: Client, cwd: Path) -> Discovery | None:
        """`discovery(cwd)` for any client, with that client's built-in policy when there is one."""
        if client is self.client:
            return self.discovery(cwd)
        key = (client.name, cwd)
        if key not in self._other_discoveries:
            from ..errors import AssemblerError
            from ..policy import builtin_names, load_policy

            ctx = self.machine.context(cwd)
            found = None
            if ctx is not None:
                try:
                    policy = (
                        load_policy(client.name)
                        if client.name in builtin_names()
                        else self._discovery_policy
                    )
                    run = Run(ctx, policy._replace(skills=False), estimate_tokens, Disk())
                    found = client.discover(run)
                except AssemblerError:
                    found = None
            self._other_discoveries[key] = found
        return self._other_discoveries[key]

    def assembly(self, cwd: Path) -> Assembly:
        """The whole assembly of `cwd` (budgets, rendering): only for the budget check."""
        if cwd not in self._assemblies:
            from ..assembly import run
            from ..request import Request

            machine = self.machine
            request = Request.of(
                cwd,
                policy=self.policy,
                home=machine.home,
                managed_dir=machine.managed_dir,
                environ=machine.environ,
                max_tokens=0,
            )
            self._assemblies[cwd] = run(request, observer=self.shared_reads())
        return self._assemblies[cwd]

    def shared_reads(self) -> _SharedReads:
        """From the second directory on, each file is read and parsed once per run."""
        if self._reads is None:
            from ..discovery.cache import ReadCache

            self._reads = _SharedReads(ReadCache())
        return self._reads

    def _real(self, path: str) -> str:
        real = self._realpaths.get(path)
        if real is None:
            real = self._realpaths[path] = os.path.realpath(path)
        return real

    def _paragraphs_of(self, path: str, content: str) -> tuple[str, ...]:
        """A source's paragraphs; the same file loads for many directories of one run."""
        key = (path, content)
        found = self._paragraph_cache.get(key)
        if found is None:
            found = self._paragraph_cache[key] = tuple(p for _, p in _paragraphs(content))
        return found

    def _loaded(self, cwd: Path) -> frozenset[str]:
        """The files that load at start in `cwd`: their paths, and the real paths of links."""
        found = self._loaded_in.get(cwd)
        if found is None:
            discovery = self.discovery(cwd)
            paths = (
                {s.path for s in discovery.sources if os.path.isabs(s.path)} if discovery else set()
            )
            found = self._loaded_in[cwd] = frozenset(
                paths | {self._real(p) for p in paths if os.path.islink(p)}
            )
        return found

    def duplicates(self, info: FileInfo, lines: Lines, body: str) -> list[Finding]:
        """Paragraphs of this file that another file loading with it already says."""
        discovery = self.discovery(info.load_dir) if self.applies(info) else None
        if discovery is None:
            return []
        me = self._real(str(info.path))
        others: dict[str, str] = {}
        for source in discovery.sources:
            if self._real(source.path) == me:
                continue
            for paragraph in self._paragraphs_of(source.path, source.content):
                others.setdefault(paragraph, source.display)
        out = []
        base = len(lines.text) - len(body)
        for offset, paragraph in _paragraphs(body):
            where = others.get(paragraph)
            if where is not None:
                line, col = lines.at(base + offset)
                out.append(
                    Finding(
                        info.shown,
                        line,
                        col,
                        codes.DUPLICATE.code,
                        f"this paragraph is also in {where}, which loads with it: keep it in one place",
                    )
                )
        return out

    def dropped_for_deeper_starts(
        self, info: FileInfo, lines: Lines, repo: GitRepo | None
    ) -> list[Finding]:
        """Imports that an agent started in a deeper directory with its own instructions drops:
        the deeper start loads this file but not what it imports (as its discovery shows)."""
        if not self.applies(info) or repo is None or not info.load_dir.is_dir():
            return []
        text = lines.text
        real_dir = os.path.dirname(os.path.realpath(info.path))
        home = str(self.machine.home)
        found = iter_imports(parse(text, CLIENT).imports, real_dir, home)
        imports = [
            (token, target)
            for token, target in itertools.islice(found, RUN_MAX_IMPORTS)  # as a run follows
            if os.path.isfile(target) and is_within(target, str(info.load_dir))
        ]
        # Cheapest questions first: git and discovery only when something could be dropped.
        if not imports:
            return []
        deeper = instruction_dirs_below(repo, info.load_dir, self.client)
        me = {str(info.path), self._real(str(info.path))}
        positions = Positions(lines)
        out = []
        for token, target in imports:
            starts = [
                d
                for d in deeper
                if not is_within(target, str(d))
                and me & (loaded := self._loaded(d))
                and target not in loaded
                and self._real(target) not in loaded
            ]
            if not starts:
                continue
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
                    "instructions): approve external imports, or import it from those "
                    "directories' CLAUDE.md too",
                )
            )
        return out

    def over_budget(self, cwd: Path, shown_base: Path) -> list[Finding]:
        """The whole context of `cwd` against the token budget (policy or --max-tokens)."""
        budget = self.max_tokens or self.policy.limits.max_tokens
        if not budget:
            return []
        assembly = self.assembly(cwd)
        total = assembly.counter(assembly.text)
        if total <= budget:
            return []
        live = [s for s in assembly.sources if not s.dropped]
        biggest = sorted(live, key=lambda s: -s.stats.tokens)[:3]
        names = ", ".join(f"{s.display} ({s.stats.tokens:,})" for s in biggest)
        own = [
            s.path
            for s in live
            if os.path.isabs(s.path) and _load_dir(self.client, Path(s.path)) == cwd
        ]
        anchor = own[0] if own else str(cwd)
        return [
            Finding(
                _relative(anchor, shown_base),
                1,
                1,
                codes.OVER_BUDGET.code,
                f"the context for {_relative(str(cwd), shown_base)}/ is {total:,} tokens, over the "
                f"{budget:,}-token budget: shorten the largest sources: {names}",
            )
        ]


class _SharedReads(QuietObserver):
    """An observer that only shares processed files between the directories of one lint run."""

    def __init__(self, cache: ReadCache) -> None:
        self.cache = cache
        self.since = time.time_ns()

    def cached(self, path: str, key: Hashable, st: os.stat_result | None, compute: Compute[T]) -> T:
        return self.cache.cached(path, key, st, compute, self.since)


def _relative(path: str, base: Path) -> str:
    try:
        return Path(path).relative_to(base).as_posix()
    except ValueError:
        return path


def _load_dir(client: Client, path: Path) -> Path | None:
    role = client.classify(path)
    return role.load_dir if role is not None else None


def instruction_dirs_below(repo: GitRepo, directory: Path, client: Client) -> list[Path]:
    """Directories strictly below `directory` that hold their own tracked instruction files."""
    base = repo.relative(directory)
    if base is None:
        return []
    prefix = "" if base in ("", ".") else base + "/"
    found: set[Path] = set()
    for rel in repo.tracked():
        if not rel.startswith(prefix):
            continue
        role = client.classify(repo.root / rel)
        if (
            role is not None
            and role.kind in LOADS_AT_START
            and role.load_dir != directory
            and role.load_dir.is_relative_to(directory)
        ):
            found.add(role.load_dir)
    return sorted(found)
