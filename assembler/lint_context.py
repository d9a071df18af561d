"""Checks that need the assembled context: duplicated text, imports a deeper start drops, budget.

Each check is computed for one linted file (or one directory) from what is on disk, so the
results do not depend on which other files were passed in the same run.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from .gitinfo import GitRepo
from .imports import resolve_imports
from .lint_file import FileInfo, Finding, classify, line_col
from .locations import is_within
from .observer import QuietObserver
from .parse import CLIENT, parse
from .policy import Policy

if TYPE_CHECKING:
    from .assembly import Assembly
    from .discover import Discovery
    from .incremental import ReadCache
    from .loader import Context, Loader
    from .parse import Parsed

_MIN_PARAGRAPH = 40
_LOADS_AT_START = frozenset({"claude", "local", "rule"})


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


class ContextChecker:
    """Assembles the context of a directory once per run and checks files against it."""

    def __init__(
        self,
        policy: Policy,
        home: Path,
        managed_dir: Path,
        environ: Mapping[str, str],
        max_tokens: int,
    ) -> None:
        self.policy = policy
        self.home = home
        self.managed_dir = managed_dir
        self.environ = environ
        self.max_tokens = max_tokens
        self._assemblies: dict[Path, Assembly] = {}
        self._discoveries: dict[Path, tuple[Context, Discovery]] = {}
        self._claude = policy.discoverer == "claude-code"  # these checks model Claude Code
        self._reads: _SharedReads | None = None
        self._realpaths: dict[str, str] = {}
        self._paragraph_cache: dict[tuple[str, str], tuple[str, ...]] = {}

    def discovery(self, cwd: Path) -> tuple[Context, Discovery]:
        """What loads at start in `cwd` (no budget, no rendering: cheaper than an assembly)."""
        if cwd not in self._discoveries:
            from .discover import build_context, discover_claude_code, with_client_settings
            from .tokens import estimate_tokens

            ctx = with_client_settings(
                build_context(cwd, self.home, self.managed_dir, self.environ)
            )
            if self._discoveries:  # more than one directory: read each file once per run
                ctx = ctx._replace(observer=self._shared_reads())
            self._discoveries[cwd] = (ctx, discover_claude_code(ctx, self.policy, estimate_tokens))
        return self._discoveries[cwd]

    def assembly(self, cwd: Path) -> Assembly:
        if cwd not in self._assemblies:
            from .assembly import assemble

            self._assemblies[cwd] = assemble(
                cwd,
                policy=self.policy,
                home=self.home,
                managed_dir=self.managed_dir,
                environ=self.environ,
                max_tokens=0,
            )
        return self._assemblies[cwd]

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

    def _shared_reads(self) -> _SharedReads:
        if self._reads is None:
            from .incremental import ReadCache

            self._reads = _SharedReads(ReadCache())
        return self._reads

    def duplicates(self, info: FileInfo, text: str, body: str) -> list[Finding]:
        """Paragraphs of this file that another file loading with it already says."""
        if not self._claude or info.kind not in _LOADS_AT_START or not info.load_dir.is_dir():
            return []
        me = self._real(str(info.path))
        others: dict[str, str] = {}
        for source in self.discovery(info.load_dir)[1].sources:
            if self._real(source.path) == me:
                continue
            for paragraph in self._paragraphs_of(source.path, source.content):
                others.setdefault(paragraph, source.display)
        out = []
        base = len(text) - len(body)
        for offset, paragraph in _paragraphs(body):
            where = others.get(paragraph)
            if where is not None:
                line, col = line_col(text, base + offset)
                out.append(
                    Finding(
                        info.shown,
                        line,
                        col,
                        "CTX502",
                        f"this paragraph is also in {where}, which loads with it: keep it in one place",
                    )
                )
        return out

    def dropped_for_deeper_starts(
        self, info: FileInfo, text: str, repo: GitRepo | None
    ) -> list[Finding]:
        """Imports that an agent started in a deeper directory with its own instructions drops."""
        if (
            not self._claude
            or info.kind not in _LOADS_AT_START
            or repo is None
            or not info.load_dir.is_dir()
        ):
            return []
        real_dir = os.path.dirname(os.path.realpath(info.path))
        imports = [
            (token, target)
            for token, target in resolve_imports(
                parse(text, CLIENT).imports, real_dir, str(self.home)
            )
            if os.path.isfile(target) and is_within(target, str(info.load_dir))
        ]
        # Cheapest questions first: git and the assembly only when something could be dropped.
        if not imports:
            return []
        deeper = _instruction_dirs_below(repo, info.load_dir)
        if not deeper or self.discovery(info.load_dir)[0].include_external:
            return []
        out = []
        for token, target in imports:
            start = next(
                (
                    d
                    for d in deeper
                    if not is_within(target, str(d)) and not _loads_at_start(target, d)
                ),
                None,
            )
            if start is None:
                continue
            at = text.find("@" + token)
            line, col = line_col(text, at) if at >= 0 else (1, 1)
            shown = start.relative_to(info.load_dir).as_posix()
            out.append(
                Finding(
                    info.shown,
                    line,
                    col,
                    "CTX207",
                    f"@{token} is dropped when Claude Code starts in {shown}/ (it has its own instructions): "
                    "approve external imports, or import it from that directory's CLAUDE.md too",
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
            if os.path.isabs(s.path) and classify(Path(s.path), s.path).load_dir == cwd
        ]
        anchor = own[0] if own else str(cwd)
        return [
            Finding(
                _relative(anchor, shown_base),
                1,
                1,
                "CTX601",
                f"the context for {_relative(str(cwd), shown_base)}/ is {total:,} tokens, over the "
                f"{budget:,}-token budget: shorten the largest sources: {names}",
            )
        ]


class _SharedReads(QuietObserver):
    """An observer that only shares processed files between the directories of one lint run."""

    def __init__(self, cache: ReadCache) -> None:
        self.cache = cache
        self.since = time.time_ns()

    def read(
        self, loader: Loader, path: str, what: str, st: os.stat_result | None
    ) -> Parsed | None:
        return self.cache.read(loader, path, what, st, self.since)


def _relative(path: str, base: Path) -> str:
    try:
        return Path(path).relative_to(base).as_posix()
    except ValueError:
        return path


def _loads_at_start(path: str, cwd: Path) -> bool:
    """Whether `path` is an instruction file an agent started in `cwd` loads anyway."""
    info = classify(Path(path), path)
    return info.kind in _LOADS_AT_START and cwd.is_relative_to(info.load_dir)


def _instruction_dirs_below(repo: GitRepo, directory: Path) -> list[Path]:
    """Directories strictly below `directory` that hold their own tracked instruction files."""
    base = repo.relative(directory)
    if base is None:
        return []
    prefix = "" if base in ("", ".") else base + "/"
    found: set[Path] = set()
    for rel in repo.tracked():
        if not rel.startswith(prefix):
            continue
        info = classify(repo.root / rel, rel)
        if (
            info.kind in _LOADS_AT_START
            and info.load_dir != directory
            and info.load_dir.is_relative_to(directory)
        ):
            found.add(info.load_dir)
    return sorted(found)
