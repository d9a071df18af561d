"""Claude Code's own checks of its files, as lint reports them (`ClaudeCode.check_file`): a
file where Claude Code never reads it (`.claude/CLAUDE.local.md`, a rule that is not
markdown), the frontmatter keys it reads, `paths:` on a file that always loads, and each
rule's `paths:` globs (refused, invalid, past the brace budget, matching no tracked file).

What every agent's files share (size, secrets, imports, frontmatter that does not parse) lint
checks itself; the facts about Claude Code's files live here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ... import codes
from ...codes import Code
from ...display import PATTERN_CHARS
from ...display import shown as display_form
from ...parsing import frontmatter as fm
from ...parsing import globs as compiled_globs
from ...parsing.parse import Switches, parse
from ...parsing.positions import Lines
from ..base import FileKind, FileNote, FileRole, Tracked
from .codes import NEVER_LOADED, PATHS_ON_FILE, RULE_NOT_MD

# What Claude Code does to a file before it loads it: frontmatter split off, closed block
# comments stripped, `@imports` found (the built-in `claude-code` policy's switches).
PROCESSING = Switches(strip_frontmatter=True, strip_comments=True, find_imports=True)
# The frontmatter keys it reads: a rule's `paths` (and a description), a file's metadata.
_RULE_KEYS = frozenset({"paths", "description"})
_FILE_KEYS = frozenset({"description", "title", "name"})

Add = Callable[[int, int, Code, str], None]


def check_file(
    role: FileRole, path: Path, text: str | None, tracked: Tracked | None
) -> list[FileNote]:
    """Claude Code's findings about `path` (its `role`), from its text (None: unreadable)."""
    out: list[FileNote] = []

    def add(line: int, col: int, code: Code, message: str) -> None:
        out.append(FileNote(line, col, code, message))

    _placement(role, path, add)
    if text is None:
        return out
    if role.kind is FileKind.AGENT:  # a definition, read as the client reads it
        from .subagents import definition_problems

        return [
            *out,
            *(FileNote(1, 1, code, message) for code, message in definition_problems(path, text)),
        ]
    head = parse(text, PROCESSING).frontmatter
    if head.present and not head.too_complex and not head.error:  # else lint says so
        _frontmatter(role, head, Lines(text), tracked, add)
    return out


def _placement(role: FileRole, path: Path, add: Add) -> None:
    if role.kind is not FileKind.NEVER_LOADED:
        return
    if path.name == "CLAUDE.local.md" and path.parent.name == ".claude":
        add(
            1, 1, NEVER_LOADED,
            ".claude/CLAUDE.local.md is never loaded: move it to CLAUDE.local.md next to .claude/",
        )  # fmt: skip
    else:  # a file in .claude/rules without .md
        add(
            1, 1, RULE_NOT_MD,
            f"{path.name} is in .claude/rules but not a .md file: the client ignores it; rename it",
        )  # fmt: skip


def _frontmatter(
    role: FileRole, frontmatter: fm.Frontmatter, lines: Lines, tracked: Tracked | None, add: Add
) -> None:
    rule = role.kind is FileKind.RULE
    known = _RULE_KEYS if rule else _FILE_KEYS | {"paths"}
    for key in frontmatter.data:
        if key not in known:
            hint = " (Claude Code reads `paths`, not Cursor's `globs`)" if key == "globs" else ""
            add(
                lines.of_key(key, frontmatter), 1, codes.FRONTMATTER_KEY,
                f"frontmatter key '{key}' is not read for this file{hint}: remove it",
            )  # fmt: skip
    if "paths" in frontmatter.data and not rule:
        add(
            lines.of_key("paths", frontmatter), 1, PATHS_ON_FILE,
            "paths: only works in .claude/rules files; this file always loads: remove paths: or make it a rule",
        )  # fmt: skip
    if rule:
        _globs(role, frontmatter, lines, tracked, add)


def _globs(
    role: FileRole, frontmatter: fm.Frontmatter, lines: Lines, tracked: Tracked | None, add: Add
) -> None:
    globs = fm.conditional_globs(frontmatter)
    if globs is None:
        return
    line = lines.of_key("paths", frontmatter)
    for pattern, why in globs.too_complex:
        add(
            line, 1, codes.GLOB_TOO_COMPLEX,
            f"glob '{display_form(pattern, PATTERN_CHARS)}' is refused ({why}) and matches nothing: simplify it",
        )  # fmt: skip
    for raw in globs.over_budget:
        add(
            line, 1, codes.BRACE_BUDGET,
            f"'{display_form(raw, PATTERN_CHARS)}' is past the 1,000 patterns one rule's paths: share: the client uses it unexpanded and it matches nothing; list fewer alternatives",
        )  # fmt: skip
    if globs.over_count > len(globs.over_budget):
        add(
            line, 1, codes.BRACE_BUDGET,
            f"{globs.over_count - len(globs.over_budget):,} more patterns are past the budget; list fewer",
        )  # fmt: skip
    problems = {p: compiled_globs.gitignore(p).problem for p in globs.patterns}
    written = dict(zip(globs.patterns, globs.written or globs.patterns, strict=True))
    for pattern in sorted(p for p, problem in problems.items() if problem):
        shown_as = display_form(written[pattern], PATTERN_CHARS)
        if problems[pattern] == compiled_globs.TOO_COMPLEX:
            add(
                line, 1, codes.GLOB_TOO_COMPLEX,
                f"glob '{shown_as}' is too complex to match in linear time and matches nothing: simplify it",
            )  # fmt: skip
        else:
            add(
                line, 1, codes.INVALID_GLOB,
                f"glob '{shown_as}' is invalid and matches nothing: fix it",
            )  # fmt: skip
    base = tracked.under(role.load_dir) if tracked is not None else None
    if tracked is None or base is None:
        return  # no listing, or not all of it: no glob can be shown dead
    for pattern in globs.patterns:
        match = compiled_globs.gitignore(pattern).match
        if problems[pattern] or pattern in globs.over_budget or match is None:
            continue
        if not tracked.matches(role.load_dir, pattern, match):
            add(
                line, 1, codes.DEAD_GLOB,
                f"glob '{display_form(written[pattern], PATTERN_CHARS)}' matches no tracked file under {base or '.'}/: the rule never loads; fix or remove it",
            )  # fmt: skip
