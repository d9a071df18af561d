"""Checks of one instruction file on its own: size, frontmatter, placement, content, imports.

Every check here depends only on the file and what it imports on disk, never on which other
files were passed: pre-commit may split the file list across parallel runs in any way.
Imports are walked by the discovery `Loader` itself, with the policy's depth limit, so lint
and `render` apply the same import rules.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
import math
import operator
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .. import codes
from ..clients import registry
from ..clients.base import Advice, Client, FileKind, FileRole
from ..clients.claude_code.memory_index import truncate_index
from ..codes import Code
from ..discovery.context import Context, Run, build_context
from ..discovery.disk import Disk, Observer
from ..discovery.loader import READ_FAILURES, Loader, Reading, reached_out, unreadable_message
from ..discovery.locations import OPEN_SKILL_HOME, RealDirs, in_skill_folder
from ..discovery.reader import ReadResult, ReadStatus, read_text
from ..display import PATTERN_CHARS
from ..display import shown as display_form
from ..errors import PolicyError
from ..model import Diagnostic, Layer, Limits, LintSettings, Policy, Severity
from ..output.sections import (
    MARKDOWN_HEADING,
    markdown_headings,
    section_tags,
    structure_pattern,
)
from ..parsing import frontmatter as fm
from ..parsing.imports import TEXT_EXTENSIONS, iter_imports
from ..parsing.parse import Dialect, Parsed, Switches, parse
from ..parsing.positions import Lines
from ..policy import agent_policy
from ..tokens import estimate_tokens
from ..versions import NO_VERSION, ClientVersion
from .git import GitRepo
from .scan import SKIPPED, Held, Scan, ScanBudget, Scans, hold, suppressions

# Lint reads a file with every step a client may take before it loads it (frontmatter split
# off, closed block comments stripped, imports found), whichever agent's file it is: the
# shared checks look at what any of them loads.
EVERY_STEP = Switches(strip_frontmatter=True, strip_comments=True, find_imports=True)

Add = Callable[[int, int, Code, str], None]


def relative_shown(path: str | Path, base: Path) -> str:
    """`path` as lint shows it: relative to `base` when below it, `/`-separated."""
    try:
        return Path(path).relative_to(base).as_posix()
    except ValueError:
        return Path(path).as_posix()


class Finding(NamedTuple):
    path: str
    line: int
    col: int
    code: str
    message: str
    severity: Severity | None = None  # filled in from the catalogue and the configuration


class Checked(NamedTuple):
    """One path's own findings, and what the checks of the file it reaches found (`held`,
    shared by all its paths); `scan`: the file's text and its parse for the checks that follow
    (None, or its `text` None, when it cannot be read or the run's scan budget is spent)."""

    findings: list[Finding]
    scan: Scan | None = None
    held: tuple[Held, ...] = ()


class FileInfo(NamedTuple):
    """What a file is, and to which client."""

    path: Path  # absolute, as given (links not resolved)
    shown: str  # as the user passed it / relative to where lint runs
    role: FileRole
    client: Client[Any] | None  # None: no registered client's file (another agent's, or unknown)
    clients: tuple[Client[Any], ...] = ()  # every client that loads it (`client` first)

    @property
    def kind(self) -> FileKind:
        return self.role.kind

    @property
    def load_dir(self) -> Path:
        return self.role.load_dir


def is_instruction_file(rel: str) -> bool:
    """Whether whole-repository lint checks the file at `rel` (`/`-separated): one of a
    registered client's (`instruction_files`)."""
    return _compiled(_patterns()).search(rel) is not None


def instruction_files_pattern() -> str:
    """Every registered client's `instruction_files`, as one regular expression: the files
    whole-repository lint checks, and the pre-commit hook's `files:`."""
    return _union(_patterns())


def _patterns() -> tuple[str, ...]:
    return tuple(c.instruction_files for c in registry.clients() if c.instruction_files)


def _union(patterns: tuple[str, ...]) -> str:
    return "|".join(f"(?:{p})" for p in dict.fromkeys(patterns)) or "(?!)"


@functools.lru_cache(maxsize=8)
def _compiled(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """The registered clients' patterns as one, compiled once (lint asks for every path git
    lists)."""
    return re.compile(_union(patterns), re.DOTALL)


def classify(path: Path, shown: str, first: Client[Any] | None = None) -> FileInfo:
    """What `path` is: to `first` (the policy's client), else to another registered client;
    `clients` lists every client that loads it, whose checks all apply. In a skill's folder
    only an agent that reads skills (`skill_homes`) has files of its own: another agent's
    file there is the skill's reference, read with the skill, whoever else might claim it."""
    others = tuple(c for c in registry.clients() if c is not first)
    found = [
        (client, role)
        for client in ((first, *others) if first else others)
        if (role := client.classify(path)) is not None
    ]
    if found and in_skill_folder(path, skill_homes()):
        readers = [(client, role) for client, role in found if client.skill_homes]
        if not readers:
            return FileInfo(path, shown, FileRole(FileKind.REFERENCE, path.parent), None)
        found = readers
    if found:
        client, role = found[0]
        return FileInfo(path, shown, role, client, tuple(c for c, _ in found))
    return FileInfo(path, shown, FileRole(FileKind.OTHER, path.parent), None)


def user_dirs(home: Path) -> list[Path]:
    """The directories of the user's own files of every registered agent (`Client.user_dir`)."""
    return [d for c in registry.clients() if (d := c.user_dir(home)) is not None]


def _size_limit(limit: int) -> str:
    """A policy's byte limit as its message says it: `4 MiB`, or `1,000,000-byte`."""
    mib, rest = divmod(limit, 1024 * 1024)
    return f"{mib} MiB" if mib and not rest else f"{limit:,}-byte"


def _advice(info: FileInfo) -> Advice:
    """How the agent of `info` words the advice of the shared checks (no agent's: neutral)."""
    return info.client.advice if info.client is not None else Advice()


def skill_homes() -> frozenset[str]:
    """The directories whose `skills/<name>/` folders hold skills: every registered client's
    and the open layout's."""
    return frozenset({OPEN_SKILL_HOME, *(h for c in registry.clients() for h in c.skill_homes)})


_LINE_END = re.compile(r"[\r\n]")  # as CommonMark ends a line


# --- secrets ------------------------------------------------------------------------------

# Each pattern with the literal text it cannot match without: a pattern runs only on text that
# holds one of its needles (a `str` search is far cheaper than a regex tried at every word).
_SECRETS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (label, needles, re.compile(pattern))
    for label, needles, pattern in (
        ("a private key block", ("PRIVATE KEY",), r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        ("an Anthropic API key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        ("an OpenAI API key", ("sk-",), r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}"),
        ("an AWS access key id", ("AKIA", "ASIA"), r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("a GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
        ("a GitLab token", ("glpat-",), r"\bglpat-[A-Za-z0-9_-]{20,}"),
        ("a Slack token", ("xox",), r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
        ("a Google API key", ("AIza",), r"\bAIza[0-9A-Za-z_-]{35}"),
        ("a Stripe secret key", ("k_live_",), r"\b[sr]k_live_[0-9A-Za-z]{20,}"),
        ("a JSON web token", ("eyJ",), r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    )
)  # fmt: skip
# `NAME = value` / `name: value`, the name a credential's, maybe after other words
# (`AWS_SECRET_ACCESS_KEY`, `db_password`). Only a word's start is tried (the lookbehind),
# so a long run of words costs each word once.
_ASSIGNED = re.compile(
    r"(?i)(?<![A-Za-z0-9_-])(?:[A-Za-z0-9]+[_-])*"
    r"(?:api[_-]?key|secret(?:[_-]?(?:access[_-]?)?key)?|access[_-]?token|auth[_-]?token|password|passwd)\b"
    r"[\"']?\s*[:=]\s*(?:\"([^\"\s]{12,})\"|'([^'\s]{12,})'|([A-Za-z0-9+/_.=-]{20,}))"
)
# What `_ASSIGNED` cannot match without: the end of a credential's name, then `:` or `=`,
# searched in the case-folded text (folding maps the Kelvin sign and the long s as `(?i)` does).
_ASSIGNED_NEEDLE = re.compile(r"(?:key|secret|token|password|passwd)[\"']?\s*[:=]")
# `scheme://user:password@host`; the scheme is bounded so that a long word costs no rescans.
_URL_CREDENTIALS = re.compile(
    r"(?i)(?<![A-Za-z0-9+.-])[a-z][a-z0-9+.-]{0,31}://[^\s:/?#@\[\]]{0,256}:([^\s/?#@]{1,256})@[^\s/?#@]"
)
_PLACEHOLDER = re.compile(r"(?i)your|here|example|placeholder|change.?me|x{4,}|\.{3}|[<>{}$]")
_MASKED = re.compile(r"\*+|%s|%\(\w+\)s")  # `:****@`, a format string's `%s`


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _secrets(text: str) -> Iterator[tuple[int, str]]:
    """(offset, what it looks like) of each secret; a match overlapping one found by an
    earlier pattern is the same secret. Sorted starts and `bisect` keep this O(n log n)."""
    found: list[int] = []  # starts of the secrets found so far, sorted
    for label, needles, pattern in _SECRETS:
        if not any(needle in text for needle in needles):
            continue
        new = []
        for match in pattern.finditer(text):
            at = bisect.bisect_left(found, match.start())
            if at == len(found) or found[at] >= match.end():
                new.append(match.start())
                yield match.start(), label
        found = sorted(found + new)
    seen = set(found)
    assigned = _ASSIGNED.finditer(text) if _ASSIGNED_NEEDLE.search(text.casefold()) else ()
    for match in assigned:
        group = next(i for i in (1, 2, 3) if match.group(i))
        value = match.group(group)
        if (
            match.start(group) not in seen
            and _entropy(value) >= 3.5
            and not _PLACEHOLDER.search(value)
            and not re.fullmatch(r"[a-z_.-]+", value)
        ):
            yield match.start(group), "a credential assigned in the text"
    for match in _URL_CREDENTIALS.finditer(text) if "://" in text else ():
        value = match.group(1)
        if not _PLACEHOLDER.search(value) and not _MASKED.fullmatch(value):
            yield match.start(1), "a password in a URL"


# --- the checks ---------------------------------------------------------------------------


class Machine:
    """The machine lint checks against (where `~` is, the managed directory, the environment),
    and the facts of each directory an agent could start in, found once per run."""

    __slots__ = ("_canonical", "_contexts", "environ", "git_roots", "home", "managed_dir", "real")

    def __init__(self, home: Path, managed_dir: Path, environ: Mapping[str, str]) -> None:
        self.home, self.managed_dir, self.environ = home, managed_dir, environ
        self._contexts: dict[Path, Context | None] = {}
        self.real = RealDirs()  # real paths, each directory resolved once per run
        self.git_roots: dict[str, Path | None] = {}  # each directory tested for `.git` once
        self._canonical: dict[Path, Path] = {}  # each git root's main repository root

    def context(self, directory: Path) -> Context | None:
        """The machine facts of an agent started in `directory` (None when it cannot start)."""
        if directory not in self._contexts:
            from ..errors import AssemblerError

            try:
                found: Context | None = build_context(
                    directory,
                    self.home,
                    self.managed_dir,
                    self.environ,
                    Disk(),
                    self.git_roots,
                    self.real,
                    self._canonical,
                )
            except AssemblerError:
                found = None
            self._contexts[directory] = found
        return self._contexts[directory]


class FileChecker:
    """Runs every single-file check; `repo` answers git questions (None outside git)."""

    def __init__(
        self,
        policy: Policy,
        machine: Machine,
        repo: GitRepo | None,
        reads: Observer | None = None,
        version: ClientVersion = NO_VERSION,
    ) -> None:
        self.policy = policy
        self.machine = machine
        self.repo = repo
        self._version = version  # the release modelled: how imports are followed
        self._reads = reads  # shared by the run: each imported file read and parsed once
        self._resolved: dict[tuple[str, tuple[str, ...]], Sequence[tuple[str, str]]] = {}
        self._structure = structure_pattern(section_tags(policy), policy.boundary)
        self._tracked = TrackedFiles(repo) if repo is not None else None
        self._agents: dict[str, Policy] = {}  # another agent's built-in policy, by name

    def _sized_by(self, info: FileInfo) -> tuple[LintSettings, Limits]:
        """The size limits that apply to `info`: the run's agent's (its policy, a project's
        `[lint]` included) and, where it has none, those of the agent the file is for (one
        agent's file, checked under another's policy, keeps its own agent's guidance); never
        a third agent's."""
        run = self.policy
        agent = info.client
        if agent is None or agent.name == run.client:
            return run.lint, run.limits
        if agent.name not in self._agents:
            try:
                self._agents[agent.name] = agent_policy(agent)
            except PolicyError:  # a client of a plug-in whose policy is not built in
                self._agents[agent.name] = run._replace(lint=LintSettings(), limits=Limits())
        own = self._agents[agent.name]
        return (
            run.lint._replace(
                max_lines=run.lint.max_lines or own.lint.max_lines,
                max_bytes=run.lint.max_bytes or own.lint.max_bytes,
            ),
            run.limits._replace(
                large_file_chars=run.limits.large_file_chars or own.limits.large_file_chars,
                index_lines=run.limits.index_lines or own.limits.index_lines,
                index_chars=run.limits.index_chars or own.limits.index_chars,
            ),
        )

    def check(self, info: FileInfo, scans: Scans, st: os.stat_result | None = None) -> Checked:
        """The findings at one path (`st`: the `stat` of the file it reaches, None: none
        could be taken), and those of the file's content, checked once for all its paths."""
        out: list[Finding] = []

        def add(line: int, col: int, code: Code, message: str) -> None:
            out.append(Finding(info.shown, line, col, code.code, message))

        self._private(info, add)
        self._outside(info, add)
        scan = scans.of(st, lambda: self.scan(info, st, scans.budget))
        held = [scan.held]
        for client in info.clients:  # each agent's own checks (unreadable: of its place only)
            if scan.text is None:
                for note in client.check_file(info.path, None, self._tracked):
                    add(note.line, note.col, note.code, note.message)
            else:
                held.append(self._client_checks(client, info, scan, scans.budget))
        if scan.skipped:
            return Checked(out)
        if scan.text is None:
            self._unloadable(info, scan.result, add)
            return Checked(out)
        assert scan.parsed is not None
        self._size(info, scan, add)
        if info.kind is not FileKind.AGENT:  # a prompt, not instructions: never skipped
            self._content(info, scan, add)
        if info.kind not in (FileKind.MEMORY, FileKind.REFERENCE, FileKind.AGENT):
            self._imports(info, scan, scans.budget, add)  # the client follows none in a prompt
        return Checked(out, scan, tuple(h for group in held for h in group))

    def scan(self, info: FileInfo, st: os.stat_result | None, budget: ScanBudget) -> Scan:
        """The checks of the content of the file `info` reaches, whatever its name: made once
        for all the paths of one file (`lint.scan`), within the run's `budget`."""
        limit = max(self.policy.limits.skip_bytes, 1)
        regular = st is not None and stat.S_ISREG(st.st_mode) and st.st_size <= limit
        if regular and st is not None and not budget.fits(st.st_size):  # chars <= bytes
            budget.skip(info.shown)
            return Scan(SKIPPED, skipped=True)
        result = read_text(str(info.path), limit, st)
        if not result.ok:
            return Scan(result)
        text = result.text
        budget.charge(len(text))
        found: list[tuple[int, int, str, str]] = []

        def add(line: int, col: int, code: Code, message: str) -> None:
            found.append((line, col, code.code, message))

        if result.replaced >= 0:
            add(
                1,
                1,
                codes.INVALID_UTF8,
                f"invalid UTF-8 at byte {result.replaced}: re-save the file as UTF-8",
            )
        # As much of the frontmatter as the file's agents parse (the first path's, for every path).
        bound = info.role.frontmatter_chars
        steps = (
            EVERY_STEP._replace(dialect=Dialect(frontmatter_chars=bound)) if bound else EVERY_STEP
        )
        parsed = parse(text, steps)
        self._frontmatter(parsed.frontmatter, add)
        lines = Lines(text)
        self._secrets_and_tags(lines, parsed.text, add)
        hidden = suppressions(text)
        return Scan(result, text, parsed, hold(found, hidden), hidden)

    def _client_checks(
        self, client: Client[Any], info: FileInfo, scan: Scan, budget: ScanBudget
    ) -> tuple[Held, ...]:
        """`client`'s own checks of the file, once for all its paths with one `check_key`
        (each run scans the text once more: counted in the budget)."""
        text = scan.text
        assert text is not None
        if type(client).check_file is Client.check_file:
            return ()  # no checks of its own: nothing to scan
        key = ("client", client.name, client.check_key(info.path), id(self._tracked))
        found: tuple[Held, ...] | None = scan.known(key)
        if found is None:
            if not budget.take(len(text), info.shown):
                return ()  # nothing remembered: each path that needs it is noted
            notes = client.check_file(info.path, text, self._tracked)
            found = hold(((n.line, n.col, n.code.code, n.message) for n in notes), scan.hidden)
            scan.remember(key, found)
        return found

    def _private(self, info: FileInfo, add: Add) -> None:
        """A file private to one user (`FileKind.LOCAL`) that git tracks or does not ignore."""
        if info.kind is FileKind.LOCAL and self.repo is not None:
            tracked = self.repo.is_tracked(info.path)
            ignored = tracked or self.repo.is_ignored(info.path)
            if self.repo.failure is not None:
                return  # git could not say (CTX009 reports it)
            if tracked:
                add(
                    1, 1, codes.LOCAL_NOT_IGNORED,
                    f"{info.path.name} is tracked by git: `git rm --cached` it and add it to .gitignore",
                )  # fmt: skip
            elif not ignored:
                add(
                    1, 1, codes.LOCAL_NOT_IGNORED,
                    f"{info.path.name} is not git-ignored: add it to .gitignore so it stays private",
                )  # fmt: skip

    def _unloadable(self, info: FileInfo, result: ReadResult, add: Add) -> None:
        if result.status is ReadStatus.TOO_LARGE:
            add(
                1, 1, codes.TOO_LARGE,
                f"{result.size:,} bytes, over the {_size_limit(self.policy.limits.skip_bytes)} limit: {_advice(info).too_large}",
            )  # fmt: skip
            return
        code = READ_FAILURES.get(result.status, codes.UNREADABLE)
        add(1, 1, code, unreadable_message(result, "the file"))

    def _size(self, info: FileInfo, scan: Scan, add: Add) -> None:
        text, size = scan.text or "", scan.result.size
        lines = scan.newlines + (0 if text.endswith("\n") or not text else 1)
        guidance = self._sized_by(info)[0]
        # Not for an index the client cuts (CTX106), a skill's reference, read on demand, nor
        # a client's settings file.
        guided = info.kind not in (FileKind.MEMORY, FileKind.REFERENCE, FileKind.SETTINGS)
        if guided and guidance.max_lines and lines > guidance.max_lines:
            add(
                guidance.max_lines + 1, 1, codes.TOO_MANY_LINES,
                f"{lines:,} lines, over the {guidance.max_lines:,}-line limit: {_advice(info).split}",
            )  # fmt: skip
        if guided and guidance.max_bytes and size > guidance.max_bytes:
            add(
                1, 1, codes.TOO_MANY_BYTES,
                f"{size:,} bytes, over the {guidance.max_bytes:,}-byte limit: move detail into imported files",
            )  # fmt: skip
        chars = self.policy.limits.file_chars
        if chars and len(text) > chars:
            add(
                1, 1, codes.FILE_CHARS,
                f"{len(text):,} characters, over the policy's {chars:,}-character limit: it is cut; shorten it",
            )  # fmt: skip

    def _content(self, info: FileInfo, scan: Scan, add: Add) -> None:
        """Empty, a memory index the client cuts, or large enough to hurt performance."""
        parsed = scan.parsed
        assert parsed is not None
        processed = parsed.text
        limits = self._sized_by(info)[1]
        if not parsed.stripped:
            add(
                1, 1, codes.EMPTY,
                "empty once frontmatter and comments are removed: the client skips it; add text or delete it",
            )  # fmt: skip
        elif info.kind is FileKind.MEMORY:
            name = info.path.name
            cut = scan.memo(
                ("index", name, limits.index_lines, limits.index_chars),
                lambda: truncate_index(processed, limits.index_lines, limits.index_chars, name),
            )
            if cut is not None:
                add(
                    1, 1, codes.INDEX_CUT,
                    f"{info.path.name} is {cut[1]}: the client cuts it; keep one line per entry, detail in topic files",
                )  # fmt: skip
        elif limits.large_file_chars and len(processed) > limits.large_file_chars:
            add(
                1, 1, codes.LARGE_FILE,
                f"{len(processed):,} characters (over {limits.large_file_chars:,}): {_advice(info).large}",
            )  # fmt: skip

    def _secrets_and_tags(self, lines: Lines, processed: str, add: Add) -> None:
        text = lines.text
        for offset, label in _secrets(text):
            line, col = lines.at(offset)
            add(
                line,
                col,
                codes.SECRET,
                f"looks like {label}: remove it from the file and rotate it",
            )
        self._forged(text, processed, add)

    def _forged(self, text: str, processed: str, add: Add) -> None:
        """Each tag of ctxasm's sections, each boundary marker and each line shaped like a
        section heading of its markdown format in what loads: the native formats neutralise
        them (`output.sections`), a client's own format sends them as they are."""
        boundary_marker = self.policy.boundary
        tags = "<" in processed or bool(boundary_marker and boundary_marker in processed)
        if not tags and "##" not in processed:
            return
        found = heapq.merge(
            ((m.start(), m) for m in self._structure.finditer(processed)) if tags else (),
            ((m.end("indent"), m) for m in markdown_headings(processed)),
            key=operator.itemgetter(0),
        )
        # Positions in the file, found in order: line and column are counted as the scan goes.
        scanned = after = 0
        line, line_start = 1, 0
        for start, match in found:
            heading = match.re is MARKDOWN_HEADING
            boundary = None if heading else match.group("boundary")
            if heading:
                end = _LINE_END.search(processed, start)
                written = processed[start : end.start() if end else len(processed)]
            elif boundary is not None:
                written = boundary
            else:
                close = processed.find(">", match.end("tag"), match.end("tag") + 40)
                written = processed[start : close + 1 if close >= 0 else match.end("tag")]
            # The processed text is the file less comments: a tag split by one is not in
            # the file as such; from then on, positions are the last one found (one search
            # of the rest per failure would be quadratic).
            at = text.find(written, after) if after >= 0 else -1
            if at < 0:
                at, after = scanned, -1
            if (newlines := text.count("\n", scanned, at)) > 0:
                line, line_start = line + newlines, text.rfind("\n", scanned, at) + 1
            scanned, after = at, at + len(written) if after >= 0 else -1
            col = at - line_start + 1
            if heading:
                add(
                    line, col, codes.FORGED_STRUCTURE,
                    f"contains {display_form(written.rstrip(), PATTERN_CHARS)}, a line shaped like a section heading of ctxasm's markdown format: escaped there, sent as is in the other formats; reword it",
                )  # fmt: skip
            elif boundary is not None:
                add(
                    line, col, codes.FORGED_STRUCTURE,
                    f"contains {boundary}, ctxasm's dynamic boundary marker: neutralised in the native formats, sent as is in a client's own; reword it",
                )  # fmt: skip
            elif match.group("slash"):
                add(
                    line, col, codes.CLOSING_TAG,
                    f"contains {written}, a closing tag of ctxasm's sections: reword it",
                )  # fmt: skip
            else:
                add(
                    line, col, codes.FORGED_STRUCTURE,
                    f"contains {written}, an opening tag of ctxasm's sections: escaped in the native formats, sent as is in a client's own; reword it",
                )  # fmt: skip

    def _frontmatter(self, frontmatter: fm.Frontmatter, add: Add) -> None:
        """Frontmatter no agent can read (the keys each reads are its own checks)."""
        if not frontmatter.present:
            return
        if frontmatter.too_complex:
            add(
                1, 1, codes.FRONTMATTER_TOO_COMPLEX,
                f"YAML frontmatter {frontmatter.too_complex}: ctxasm drops it and any paths:; simplify it",
            )  # fmt: skip
            return
        if frontmatter.error:
            add(
                1, 1, codes.FRONTMATTER_INVALID,
                f"invalid YAML frontmatter ({frontmatter.error}): the client ignores it and any paths:; fix the YAML",
            )  # fmt: skip
            return
        if frontmatter.cut:
            add(1, 1, codes.FRONTMATTER_CUT, f"YAML frontmatter {frontmatter.cut}: shorten them")

    def _outside(self, info: FileInfo, add: Add) -> None:
        """A file of the project that is a symlink to a file outside it (CTX801/CTX802), if
        the client loads it (a `.txt` in a rules directory it ignores says so: CTX403)."""
        context = self.machine.context(info.load_dir)
        if context is None or info.kind in (FileKind.OTHER, FileKind.NEVER_LOADED):
            return
        written = os.path.normpath(info.path)
        real = self.machine.real.of_file(written)
        code = reached_out(written, real, str(context.project_root), str(self.machine.home))
        if code is None:
            return
        where = "in your home directory" if code is codes.OUTSIDE_HOME else "outside the project"
        add(
            1, 1, code,
            f"links to {display_form(real)}, {where}: "
            "the client loads it into the prompt; copy what belongs here into the repository",
        )  # fmt: skip

    # --- imports, walked by the discovery `Loader` ------------------------------------------

    def _imports(self, info: FileInfo, scan: Scan, budget: ScanBudget, add: Add) -> None:
        """Each direct import as the client loads it started in the file's directory, with
        what its chain leads to: missing, external, not text, a directory, a cycle, too deep,
        an imported file that cannot be read. At most `IMPORT_WALK_BUDGET` imports are
        followed from one file (every linted file walks its own graph), and what is left of
        the run's `budget` (`lint.scan.MAX_RUN_IMPORTS`)."""
        context = self.machine.context(info.load_dir)
        parsed = scan.parsed
        if parsed is None or not parsed.imports or not self.policy.imports or context is None:
            return
        home = self.machine.home
        user_file = any(info.path.is_relative_to(d) for d in user_dirs(home))
        include_external = user_file or info.kind is FileKind.OTHER
        real = self.machine.real.of_file(os.path.normpath(info.path))
        run = Run(context, self.policy, estimate_tokens, Disk(self._reads), version=self._version)
        reading = registry.get(self.policy.client).reading(run)
        walk = min(IMPORT_WALK_BUDGET, budget.imports_left)
        if walk <= 0:
            budget.skip(info.shown)  # the run's walks are spent: counted in one CTX008
            return
        loader = _WalkLoader(run, self._resolved, walk, reading)
        loader.processed.update({os.path.normpath(info.path), os.path.normpath(real)})
        layer = Layer.USER if user_file else Layer.PROJECT
        chain = (os.path.normpath(real),)
        imports = resolved_imports(scan, os.path.dirname(real), str(home))
        try:
            for i, (token, target) in enumerate(imports):
                line, col = imports.position(i)
                if loader.imports_left <= 0:
                    said = _walk_stopped(token, walk, budget.imports)
                    add(line, col, codes.FINDINGS_CAPPED, said)
                    return
                before = len(loader.diagnostics)
                loader.load_imports(
                    info.shown,
                    [(token, target)],
                    layer,
                    include_external,
                    1,
                    chain,
                    found_in=os.path.normpath(info.path),
                )
                shown = loader.display(target)
                for message, code in _import_findings(
                    token, shown, loader.diagnostics[before:], self.policy, _advice(info), target
                ):
                    add(line, col, code, message)

        finally:
            budget.imports_left -= walk - loader.imports_left


def _walk_stopped(token: str, walk: int, run: int) -> str:
    """Why lint follows no more imports from a file: its own limit, or the run's (`run`)."""
    if walk == IMPORT_WALK_BUDGET:
        stopped = f"after {IMPORT_WALK_BUDGET:,} from one file"
    else:
        stopped = f"after {run:,} in one run (all files together)"
    return (
        f"lint stops following imports {stopped}: @{token} and the imports after it are not "
        "checked; import fewer files"
    )


# Imports lint follows from one file, all hops counted (a hostile clique of N files that all
# import each other has N² imports, walked again from each file).
IMPORT_WALK_BUDGET = 2_000


class _WalkLoader(Loader):
    """The discovery `Loader`, following at most `budget` imports (its own import cap),
    resolving each file's imports once per lint run (`resolved` is shared by every file lint
    walks from)."""

    __slots__ = ("_memo",)

    def __init__(
        self,
        run: Run,
        resolved: dict[tuple[str, tuple[str, ...]], Sequence[tuple[str, str]]],
        budget: int,
        reading: Reading,
    ) -> None:
        super().__init__(run, max_imports=budget, reading=reading)
        self._memo = resolved

    def imports_of(self, parsed: Parsed, base_dir: str) -> Sequence[tuple[str, str]]:
        key = (base_dir, parsed.imports)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = super().imports_of(parsed, base_dir)
        return found


class ResolvedImports:
    """A file's imports resolved from one directory (in order, each target once) and where
    each is in the text, asked in that order (`Positions`): every path of the file whose real
    directory is that one resolves the same, so it is done once for them all, as far as any
    of them goes."""

    __slots__ = ("_files", "_found", "_next", "_places", "_positions")

    def __init__(self, tokens: Sequence[str], base_dir: str, home: str, lines: Lines) -> None:
        self._next = iter_imports(tokens, base_dir, home)
        self._found: list[tuple[str, str]] = []
        self._positions = Positions(lines)
        self._places: list[tuple[int, int]] = []
        self._files: dict[int, list[tuple[str, str]]] = {}

    def __iter__(self) -> Iterator[tuple[str, str]]:
        i = 0
        while True:
            if i == len(self._found):
                found = next(self._next, None)
                if found is None:
                    return
                self._found.append(found)
            yield self._found[i]
            i += 1

    def position(self, i: int) -> tuple[int, int]:
        """Line and column of the `i`-th import (those before it found first)."""
        while len(self._places) <= i:
            self._places.append(self._positions.of(self._found[len(self._places)][0]))
        return self._places[i]

    def files(self, limit: int) -> list[tuple[str, str]]:
        """Of the first `limit` imports, those whose target is a file."""
        found = self._files.get(limit)
        if found is None:
            found = self._files[limit] = [
                (token, target)
                for token, target in itertools.islice(self, limit)
                if os.path.isfile(target)
            ]
        return found


def resolved_imports(scan: Scan, base_dir: str, home: str) -> ResolvedImports:
    """The imports of the file `scan` read, resolved from `base_dir` (once a file)."""
    assert scan.parsed is not None and scan.lines is not None
    tokens, lines = scan.parsed.imports, scan.lines
    return scan.memo(
        ("imports", base_dir, home), lambda: ResolvedImports(tokens, base_dir, home, lines)
    )


class TrackedFiles:
    """The files git tracks in one repository, as a client's check of its file asks them
    (`clients.base.Tracked`): each directory and glob asked once per run (rules repeat their
    globs), over one sorted list."""

    __slots__ = ("_matched", "_repo", "_sorted")

    def __init__(self, repo: GitRepo) -> None:
        self._repo = repo
        self._matched: dict[tuple[str, str], bool] = {}  # (directory prefix, glob) -> matches
        self._sorted: list[str] | None = None

    def under(self, directory: Path) -> str | None:
        base = self._repo.relative(directory)
        if base is None or not self._repo.tracked() or not self._repo.complete:
            return None  # no listing, or not all of it
        return "" if base == "." else base

    def matches(self, directory: Path, pattern: str, match: Callable[[str], object]) -> bool:
        base = self.under(directory)
        prefix = base + "/" if base else ""
        key = (prefix, pattern)
        found = self._matched.get(key)
        if found is None:
            if self._sorted is None:
                self._sorted = sorted(self._repo.tracked())
            start = bisect.bisect_left(self._sorted, prefix)
            after = itertools.islice(self._sorted, start, None)
            under = itertools.takewhile(lambda p: p.startswith(prefix), after)
            found = self._matched[key] = any(match(p[len(prefix) :]) for p in under)
        return found


class Positions:
    """Where each import token is, searching on from the last one found: tokens come in order
    of appearance (the first of each target), so the text is scanned once, not once per import;
    text that only looks like an import (in a code block) cannot be reported for a later one."""

    __slots__ = ("_at", "_lines")

    def __init__(self, lines: Lines) -> None:
        self._lines = lines
        self._at = 0

    def of(self, token: str) -> tuple[int, int]:
        text = self._lines.text
        for needle in dict.fromkeys(("@" + token.replace(" ", "\\ "), "@" + token)):
            at = text.find(needle, self._at)
            if at >= 0:
                self._at = at + 1
                return self._lines.at(at)
        return 1, 1


def _import_findings(
    token: str,
    target: str,
    notes: list[Diagnostic],
    policy: Policy,
    advice: Advice,
    resolved: str = "",
) -> Iterator[tuple[str, Code]]:
    """What lint says about one direct import, from what the loader noted while following it:
    everything about the import itself; of the files it leads to, cycles, depth and files that
    cannot be read (render reports those wherever they are imported)."""
    said: set[str] = set()
    for note in notes:
        code = registry.lookup(note.code)
        direct = note.path == target
        if code.code in said or code not in (_DIRECT_CODES if direct else _CHAIN_CODES):
            continue
        message = _import_message(token, code, note, policy, advice, direct, resolved)
        if message is not None:
            said.add(code.code)
            yield message, code


# Of the files an import leads to: cycles, depth, files render refuses to read, and files
# from outside the project.
_CHAIN_CODES = (
    codes.IMPORT_CYCLE,
    codes.IMPORT_TOO_DEEP,
    *READ_FAILURES.values(),
    codes.OUTSIDE_PROJECT,
    codes.OUTSIDE_HOME,
    codes.CASE_FOLDED,
)
_DIRECT_CODES = (
    *_CHAIN_CODES,
    codes.IMPORT_MISSING,
    codes.IMPORT_EXTERNAL,
    codes.IMPORT_NOT_TEXT,
    codes.IMPORT_DIRECTORY,
)


# Punctuation that ends a sentence and that the client's import pattern keeps in the path
# (`See @docs/style.md.` imports `docs/style.md.`, which does not exist).
_TRAILING = ".,;:!?)]}'\""


def _missing_message(token: str, resolved: str) -> str | None:
    """CTX201 for an import of a file that does not exist; None for a bare word (`@alice`),
    more likely a mention than a path."""
    shown = f"@{token}"
    bare = token.rstrip(_TRAILING)
    if bare != token and _looks_like_a_path(bare):
        cut = token[len(bare) :]
        meant = resolved[: len(resolved) - len(cut)] if resolved.endswith(cut) else ""
        hint = f"did you mean @{bare}? " if meant and os.path.isfile(meant) else ""
        return (
            f"{shown} does not exist: the client reads the {cut!r} after it as part of the "
            f"path; {hint}put a space before the punctuation, or write `@{bare}` on its own"
        )
    if _looks_like_a_path(token):
        return f"{shown} does not exist: fix the path or remove the import"
    return None


def _looks_like_a_path(token: str) -> bool:
    ext = os.path.splitext(token)[1].lower()
    return ext in TEXT_EXTENSIONS or token.startswith(("./", "../", "~/", "/"))


def _import_message(
    token: str,
    code: Code,
    note: Diagnostic,
    policy: Policy,
    advice: Advice,
    direct: bool,
    resolved: str = "",
) -> str | None:
    shown = f"@{token}"
    if code is codes.IMPORT_MISSING:
        return _missing_message(token, resolved)
    if code is codes.IMPORT_EXTERNAL:
        return f"{shown} points outside the directory the agent starts in: {advice.external_import}"
    if code is codes.IMPORT_NOT_TEXT:
        return f"{shown} has no text extension: the client skips it; rename it (e.g. .md)"
    if code is codes.IMPORT_DIRECTORY:
        return f"{shown} is a directory: nothing is loaded; import a file in it"
    if code is codes.IMPORT_CYCLE:
        return f"{shown} leads back to {note.path} (an import cycle): break the cycle"
    if code is codes.IMPORT_TOO_DEEP:
        return (
            f"{shown} leads to {note.path} beyond {policy.import_depth} hops: the client drops it; "
            "import it from a shallower file"
        )
    if not direct:
        return f"{shown} leads to {note.path}, which cannot be loaded: {note.message}"
    return f"{shown}: {note.message}"  # the imported file cannot be loaded
