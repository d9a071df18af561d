"""Checks of one instruction file on its own: size, frontmatter, placement, content, imports.

Every check here depends only on the file and what it imports on disk, never on which other
files were passed: pre-commit may split the file list across parallel runs in any way.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from . import content as fm
from .gitinfo import GitRepo
from .imports import TEXT_EXTENSIONS, has_text_extension, resolve_imports
from .locations import is_within
from .parse import CLIENT, Parsed, parse
from .policy import Policy
from .reader import ReadStatus, read_text

MAX_LINES = 200
MAX_BYTES = 25_000
LARGE_CHARS = 40_000
MAX_HOPS = 4
_RULE_KEYS = frozenset({"paths", "description"})
_FILE_KEYS = frozenset({"description", "title", "name"})


Add = Callable[[int, int, str, str], None]


class Finding(NamedTuple):
    path: str
    line: int
    col: int
    code: str
    message: str
    severity: str = ""  # filled in from the catalogue and the configuration


class Checked(NamedTuple):
    findings: list[Finding]
    text: str | None
    body: str


class FileInfo(NamedTuple):
    """What a file is for the client, by where it sits."""

    path: Path  # absolute, as given (links not resolved)
    shown: str  # as the user passed it / relative to where lint runs
    kind: str  # claude | local | dot-claude-local | rule | memory | agents | other
    load_dir: Path  # the directory an agent starts in for this file to load at start


def classify(path: Path, shown: str) -> FileInfo:
    name = path.name
    parts = path.parts
    if ".claude" in parts[:-1]:
        at = len(parts) - 1 - parts[::-1].index(".claude")
        dot_claude = Path(*parts[: at + 1])
        inside = parts[at + 1 :]
        if inside[:1] == ("rules",) and len(inside) > 1:
            return FileInfo(path, shown, "rule", dot_claude.parent)
        if inside == ("CLAUDE.local.md",):
            return FileInfo(path, shown, "dot-claude-local", dot_claude.parent)
        if inside == ("CLAUDE.md",):
            return FileInfo(path, shown, "claude", dot_claude.parent)
    kinds = {
        "CLAUDE.md": "claude",
        "CLAUDE.local.md": "local",
        "MEMORY.md": "memory",
        "AGENTS.md": "agents",
        "GEMINI.md": "agents",
    }
    return FileInfo(path, shown, kinds.get(name, "other"), path.parent)


def line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _line_of(text: str, pattern: str) -> int:
    match = re.search(pattern, text, re.MULTILINE)
    return line_col(text, match.start())[0] if match else 1


# --- secrets ------------------------------------------------------------------------------

_SECRETS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern))
    for label, pattern in (
        ("a private key block", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        ("an Anthropic API key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        ("an OpenAI API key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}"),
        ("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
        ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
        ("a Slack token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
        ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
        ("a Stripe secret key", r"\b[sr]k_live_[0-9A-Za-z]{20,}"),
        ("a JSON web token", r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    )
)
_ASSIGNED = re.compile(
    r"(?i)\b(?:api[_-]?key|secret(?:[_-]?key)?|access[_-]?token|auth[_-]?token|password|passwd)\b"
    r"[\"']?\s*[:=]\s*(?:\"([^\"\s]{12,})\"|'([^'\s]{12,})'|([A-Za-z0-9+/_.=-]{20,}))"
)
_PLACEHOLDER = re.compile(r"(?i)your|here|example|placeholder|change.?me|x{4,}|\.{3}|[<>{}$]")


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _secrets(text: str) -> Iterator[tuple[int, str]]:
    seen: set[int] = set()
    for label, pattern in _SECRETS:
        for match in pattern.finditer(text):
            if not any(match.start() <= s < match.end() for s in seen):
                seen.add(match.start())
                yield match.start(), label
    for match in _ASSIGNED.finditer(text):
        group = next(i for i in (1, 2, 3) if match.group(i))
        value = match.group(group)
        if (
            match.start(group) not in seen
            and _entropy(value) >= 3.5
            and not _PLACEHOLDER.search(value)
            and not re.fullmatch(r"[a-z_.-]+", value)
        ):
            yield match.start(group), "a credential assigned in the text"


# --- the checks ---------------------------------------------------------------------------


class FileChecker:
    """Runs every single-file check; `repo` answers git questions (None outside git)."""

    def __init__(self, policy: Policy, home: Path, repo: GitRepo | None) -> None:
        self.policy = policy
        self.home = home
        self.repo = repo
        tags = {tag for _, tag in policy.tags} | {f.tag for f in policy.workspace}
        alternatives = "|".join(re.escape(t) for t in sorted(tags))
        self._closing = re.compile(rf"</\s*(?:{alternatives})\s*>", re.IGNORECASE) if tags else None

    def check(self, info: FileInfo) -> Checked:
        """The file's own findings, and its text (None when unreadable) for later checks."""
        out: list[Finding] = []

        def add(line: int, col: int, code: str, message: str) -> None:
            out.append(Finding(info.shown, line, col, code, message))

        if info.kind == "dot-claude-local":
            add(
                1,
                1,
                "CTX401",
                ".claude/CLAUDE.local.md is never loaded: move it to CLAUDE.local.md next to .claude/",
            )
        if info.kind == "rule" and not info.path.name.endswith(".md"):
            add(
                1,
                1,
                "CTX403",
                f"{info.path.name} is in .claude/rules but not a .md file: the client ignores it; rename it",
            )
        if info.kind == "local" and self.repo is not None:
            if self.repo.is_tracked(info.path):
                add(
                    1,
                    1,
                    "CTX402",
                    "CLAUDE.local.md is tracked by git: `git rm --cached` it and add it to .gitignore",
                )
            elif not self.repo.is_ignored(info.path):
                add(
                    1,
                    1,
                    "CTX402",
                    "CLAUDE.local.md is not git-ignored: add it to .gitignore so it stays private",
                )
        limit = max(self.policy.limits.skip_bytes, 1)
        result = read_text(str(info.path), limit)
        if result.status is ReadStatus.TOO_LARGE:
            add(
                1,
                1,
                "CTX105",
                f"{result.size:,} bytes, over the 4 MiB limit: Claude Code skips it silently; split it",
            )
            return Checked(out, None, "")
        if not result.ok:
            reason = result.detail or result.status.value
            add(1, 1, "CTX001", f"cannot be loaded ({reason}): make it a readable UTF-8 text file")
            return Checked(out, None, "")
        text = result.text
        if result.replaced >= 0:
            add(
                1,
                1,
                "CTX002",
                f"invalid UTF-8 at byte {result.replaced}: re-save the file as UTF-8",
            )
        self._size(info, text, result.size, add)
        parsed = parse(text, CLIENT)
        body, processed = parsed.body, parsed.text
        self._frontmatter(info, parsed.frontmatter, text, add)
        if not parsed.stripped:
            add(
                1,
                1,
                "CTX404",
                "empty once frontmatter and comments are removed: the client skips it; add text or delete it",
            )
        elif info.kind == "memory":
            from .budget import truncate_index

            cut = truncate_index(
                processed, self.policy.limits.index_lines, self.policy.limits.index_chars
            )
            if cut is not None:
                add(
                    1,
                    1,
                    "CTX106",
                    f"MEMORY.md is {cut[1]}: the client cuts it; keep one line per entry, detail in topic files",
                )
        elif len(processed) > LARGE_CHARS:
            add(
                1,
                1,
                "CTX104",
                f"{len(processed):,} characters (over 40,000): Claude Code warns this hurts performance; split it",
            )
        for offset, label in _secrets(text):
            line, col = line_col(text, offset)
            add(line, col, "CTX501", f"looks like {label}: remove it from the file and rotate it")
        if self._closing is not None:
            for match in self._closing.finditer(processed):
                line, col = line_col(
                    text, text.find(match.group(0)) if match.group(0) in text else 0
                )
                add(
                    line,
                    col,
                    "CTX503",
                    f"contains {match.group(0)}, a closing tag of ctxasm's sections: reword it",
                )
                break
        if info.kind != "memory":
            self._imports(info, parsed, text, add)
        return Checked(out, text, body)

    def _size(self, info: FileInfo, text: str, size: int, add: Add) -> None:
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if info.kind != "memory" and lines > MAX_LINES:
            add(
                MAX_LINES + 1,
                1,
                "CTX101",
                f"{lines} lines, over the 200-line limit: move detail into .claude/rules or imported files",
            )
        if info.kind != "memory" and size > MAX_BYTES:
            add(
                1,
                1,
                "CTX102",
                f"{size:,} bytes, over the 25,000-byte limit: move detail into imported files",
            )
        chars = self.policy.limits.file_chars
        if chars and len(text) > chars:
            add(
                1,
                1,
                "CTX103",
                f"{len(text):,} characters, over the policy's {chars:,}-character limit: it is cut; shorten it",
            )

    def _frontmatter(
        self, info: FileInfo, frontmatter: fm.Frontmatter, text: str, add: Add
    ) -> None:
        if not frontmatter.present:
            return
        if frontmatter.error:
            add(
                1,
                1,
                "CTX301",
                f"invalid YAML frontmatter ({frontmatter.error}): the client ignores it and any paths:; fix the YAML",
            )
            return
        known = _RULE_KEYS if info.kind == "rule" else _FILE_KEYS | {"paths"}
        for key in frontmatter.data:
            if key not in known:
                hint = (
                    " (Claude Code reads `paths`, not Cursor's `globs`)" if key == "globs" else ""
                )
                add(
                    _line_of(text, rf"^{re.escape(key)}\s*:"),
                    1,
                    "CTX302",
                    f"frontmatter key '{key}' is not read for this file{hint}: remove it",
                )
        if "paths" in frontmatter.data and info.kind != "rule":
            add(
                _line_of(text, r"^paths\s*:"),
                1,
                "CTX303",
                "paths: only works in .claude/rules files; this file always loads: remove paths: or make it a rule",
            )
        if info.kind == "rule":
            self._globs(info, frontmatter, text, add)

    def _globs(self, info: FileInfo, frontmatter: fm.Frontmatter, text: str, add: Add) -> None:
        globs = fm.conditional_globs(frontmatter)
        if globs is None:
            return
        line = _line_of(text, r"^paths\s*:")
        for raw in globs.over_budget:
            add(
                line,
                1,
                "CTX306",
                f"'{raw[:60]}' expands to over 1,000 patterns: the client uses it unexpanded and it matches nothing; list fewer alternatives",
            )
        from .rules import invalid_patterns

        bad = set(invalid_patterns(globs))
        for pattern in sorted(bad):
            add(line, 1, "CTX304", f"glob '{pattern}' is invalid and matches nothing: fix it")
        if self.repo is None:
            return
        base = self.repo.relative(info.load_dir)
        tracked = self.repo.tracked()
        if base is None or not tracked:
            return
        import pathspec

        prefix = "" if base in ("", ".") else base + "/"
        candidates = [p[len(prefix) :] for p in tracked if p.startswith(prefix)]
        for pattern in globs.patterns:
            if pattern in bad or pattern in globs.over_budget:
                continue
            spec = pathspec.GitIgnoreSpec.from_lines([pattern])
            if not any(spec.match_file(c) for c in candidates):
                add(
                    line,
                    1,
                    "CTX305",
                    f"glob '{pattern}' matches no tracked file under {base or '.'}/: the rule never loads; fix or remove it",
                )

    def _imports(self, info: FileInfo, parsed: Parsed, text: str, add: Add) -> None:
        real_dir = os.path.dirname(os.path.realpath(info.path))
        user_file = info.path.is_relative_to(self.home / ".claude")
        for token, target in resolve_imports(parsed.imports, real_dir, str(self.home)):
            line, col = self._position(text, token)
            shown = f"@{token}"
            if not os.path.lexists(target):
                ext = os.path.splitext(token)[1].lower()
                if ext in TEXT_EXTENSIONS or token.startswith(("./", "../", "~/", "/")):
                    add(
                        line,
                        col,
                        "CTX201",
                        f"{shown} does not exist: fix the path or remove the import",
                    )
                continue
            if os.path.isdir(target):
                add(
                    line,
                    col,
                    "CTX206",
                    f"{shown} is a directory: nothing is loaded; import a file in it",
                )
                continue
            if not has_text_extension(target):
                add(
                    line,
                    col,
                    "CTX205",
                    f"{shown} has no text extension: the client skips it; rename it (e.g. .md)",
                )
                continue
            if not user_file and info.kind != "other" and not is_within(target, str(info.load_dir)):
                where = (
                    "outside the repository"
                    if self.repo is None or self.repo.relative(Path(target)) is None
                    else f"outside {info.load_dir.name}/"
                )
                add(
                    line,
                    col,
                    "CTX204",
                    f"{shown} points {where}: Claude Code drops it unless external imports are approved (and it may leak files); move or copy it",
                )
                continue
            self._chain(info, target, token, line, col, add)

    def _chain(self, info: FileInfo, first: str, token: str, line: int, col: int, add: Add) -> None:
        """Follow the import chain from one direct import: cycles and hops beyond four."""
        start = os.path.realpath(info.path)
        stack: list[tuple[str, int, tuple[str, ...]]] = [(first, 1, (start,))]
        reported: set[str] = set()
        while stack:
            path, depth, chain = stack.pop()
            real = os.path.realpath(path)
            if real in chain:
                if "cycle" not in reported:
                    reported.add("cycle")
                    names = " → ".join(Path(p).name for p in (*chain, real))
                    add(
                        line,
                        col,
                        "CTX202",
                        f"@{token} starts an import cycle ({names}): break the cycle",
                    )
                continue
            if depth > MAX_HOPS:
                if "deep" not in reported:
                    reported.add("deep")
                    add(
                        line,
                        col,
                        "CTX203",
                        f"@{token} leads to {Path(path).name} at {depth} hops (limit 4): the client drops it; import it from a shallower file",
                    )
                continue
            result = read_text(path, self.policy.limits.skip_bytes)
            if not result.ok:
                continue
            tokens = parse(result.text, CLIENT).imports
            for _, target in reversed(
                resolve_imports(tokens, os.path.dirname(real), str(self.home))
            ):
                if os.path.isfile(target) and has_text_extension(target):
                    stack.append((target, depth + 1, (*chain, real)))

    @staticmethod
    def _position(text: str, token: str) -> tuple[int, int]:
        for needle in ("@" + token.replace(" ", "\\ "), "@" + token):
            at = text.find(needle)
            if at >= 0:
                return line_col(text, at)
        return 1, 1
