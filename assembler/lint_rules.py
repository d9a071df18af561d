"""The lint catalogue: every check's stable code, name, default severity and one-line summary.

Codes never change meaning once released; a retired check keeps its code unused.
"""

from __future__ import annotations

from typing import NamedTuple


class Rule(NamedTuple):
    code: str
    name: str
    severity: str  # "error" | "warning" | "info"
    summary: str


RULES: tuple[Rule, ...] = (
    # Files that cannot be loaded at all.
    Rule(
        "CTX001",
        "not-loadable",
        "error",
        "binary, unreadable, a FIFO/device or a symlink loop: not loaded",
    ),
    Rule(
        "CTX002", "invalid-utf8", "warning", "not valid UTF-8: loaded with replacement characters"
    ),
    # Size.
    Rule(
        "CTX101",
        "too-many-lines",
        "warning",
        "over 200 lines (Claude Code's guidance per CLAUDE.md)",
    ),
    Rule("CTX102", "too-many-bytes", "warning", "over 25,000 bytes"),
    Rule(
        "CTX103",
        "over-file-char-limit",
        "warning",
        "over the policy's per-file character limit: cut",
    ),
    Rule(
        "CTX104",
        "large-file",
        "warning",
        "over 40,000 characters: Claude Code warns it will hurt performance",
    ),
    Rule("CTX105", "over-4mib", "error", "over 4 MiB: Claude Code skips the file silently"),
    Rule(
        "CTX106",
        "memory-index-cut",
        "warning",
        "MEMORY.md over 200 lines or 25,000 characters: the client cuts it",
    ),
    # Imports.
    Rule("CTX201", "import-missing", "warning", "@import of a file that does not exist"),
    Rule("CTX202", "import-cycle", "warning", "@imports that form a cycle"),
    Rule("CTX203", "import-too-deep", "warning", "@import beyond 4 hops: the client drops it"),
    Rule(
        "CTX204",
        "import-external",
        "warning",
        "@import outside the file's directory: dropped without approval; data-leak risk",
    ),
    Rule(
        "CTX205",
        "import-not-text",
        "warning",
        "@import without a text extension: the client skips it",
    ),
    Rule("CTX206", "import-directory", "warning", "@import of a directory: nothing is loaded"),
    Rule(
        "CTX207",
        "import-external-for-cwd",
        "warning",
        "@import dropped when the agent starts in a deeper directory",
    ),
    # Frontmatter.
    Rule(
        "CTX301",
        "frontmatter-invalid",
        "error",
        "invalid YAML frontmatter: the client drops it and any paths:",
    ),
    Rule(
        "CTX302",
        "frontmatter-unknown-key",
        "warning",
        "frontmatter key the client does not read for this kind of file",
    ),
    Rule(
        "CTX303",
        "paths-on-claude-md",
        "warning",
        "paths: on a CLAUDE.md is ignored: the file always loads",
    ),
    Rule("CTX304", "invalid-glob", "error", "a paths: glob that is invalid: it matches nothing"),
    Rule("CTX305", "dead-glob", "warning", "a paths: glob that matches no file tracked by git"),
    Rule(
        "CTX306",
        "brace-budget",
        "error",
        "brace expansion over 1,000 patterns: the glob matches nothing",
    ),
    # Placement.
    Rule("CTX401", "dot-claude-local", "error", ".claude/CLAUDE.local.md is never loaded"),
    Rule(
        "CTX402", "local-not-ignored", "error", "CLAUDE.local.md tracked by git or not git-ignored"
    ),
    Rule(
        "CTX403",
        "rule-not-md",
        "warning",
        "a file in .claude/rules without .md: ignored by the client",
    ),
    Rule("CTX404", "empty", "warning", "empty after removing frontmatter and comments: skipped"),
    # Content.
    Rule("CTX501", "secret", "error", "looks like a secret (API key, token, private key)"),
    Rule("CTX502", "duplicate", "warning", "paragraph repeated in another file that loads with it"),
    Rule("CTX503", "closing-tag", "warning", "contains a closing tag of ctxasm's own sections"),
    # The whole context.
    Rule(
        "CTX601",
        "context-over-budget",
        "error",
        "the assembled context is over the policy's token budget",
    ),
)

BY_CODE = {rule.code: rule for rule in RULES}
LEVELS = ("error", "warning", "info", "off")
