"""The catalogue of diagnostic codes: one table for `render`, `explain`, `watch` and `lint`.

Every finding ctxasm reports has a stable `CTXnnn` code, a name, a one-line summary, and the
severity it has where it is reported: `lint` (a check of the files) and `load` (discovery and
the budgeter, as `render`'s stderr, `explain` and `watch` show them). A few facts weigh
differently in the two places: a missing `@import` is a bug to fix in review (lint: warning)
but something the client skips silently at run time (load: info). `ctxasm codes` prints the
table.

Codes never change meaning once released; a retired code stays unused.
"""

from __future__ import annotations

from typing import NamedTuple

from .model import Diagnostic, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


class Code(NamedTuple):
    code: str
    name: str
    summary: str
    lint: Severity | None = None  # None: lint never reports it
    load: Severity | None = None  # None: discovery and the budgeter never report it

    def at(self, path: str, message: str) -> Diagnostic:
        """The diagnostic discovery or the budgeter records for `path` (shown as given)."""
        assert self.load is not None, f"{self.code} is not a load-time diagnostic"
        return Diagnostic(self.code, self.load, path, message)


# Each entry is bound to a name for the code that reports it (`codes.TOO_LARGE.at(...)`).
CATALOGUE: tuple[Code, ...] = (
    # Files that cannot be loaded.
    (UNREADABLE := Code("CTX001", "unreadable", "cannot be read (permissions, I/O error): not loaded", ERROR, ERROR)),
    (INVALID_UTF8 := Code("CTX002", "invalid-utf8", "not valid UTF-8: loaded with replacement characters", WARNING, WARNING)),
    (BINARY := Code("CTX003", "binary", "binary (holds a NUL byte): not loaded", ERROR, ERROR)),
    (SPECIAL := Code("CTX004", "not-regular-file", "a FIFO, socket or device: never opened", ERROR, ERROR)),
    (SYMLINK_LOOP := Code("CTX005", "symlink-loop", "a symlink loop: not loaded", ERROR, ERROR)),
    (BROKEN_SYMLINK := Code("CTX006", "broken-symlink", "a symlink to nothing: not loaded", ERROR, WARNING)),
    (DIRECTORY := Code("CTX007", "directory", "a directory where an instruction file is expected", ERROR, WARNING)),
    (FINDINGS_CAPPED := Code("CTX008", "findings-left-out", "lint left findings out: over 100 of one code in a file, imports past the 2,000 it follows from one file, or files past its walk limits", WARNING)),
    (GIT_UNLISTED := Code("CTX009", "repository-not-listed", "git could not list the repository (a FIFO or device where git reads, or git stuck): lint checked what a walk finds", ERROR)),
    # Size.
    (TOO_MANY_LINES := Code("CTX101", "too-many-lines", "over 200 lines (Claude Code's guidance per CLAUDE.md)", WARNING)),
    (TOO_MANY_BYTES := Code("CTX102", "too-many-bytes", "over 25,000 bytes", WARNING)),
    (FILE_CHARS := Code("CTX103", "over-file-char-limit", "over the policy's per-file character limit: cut", WARNING, WARNING)),
    (LARGE_FILE := Code("CTX104", "large-file", "over 40,000 characters: Claude Code warns it will hurt performance", WARNING)),
    (TOO_LARGE := Code("CTX105", "over-4mib", "over 4 MiB: Claude Code skips the file silently", ERROR, ERROR)),
    (INDEX_CUT := Code("CTX106", "memory-index-cut", "MEMORY.md over 200 lines or 25,000 characters: the client cuts it", WARNING, WARNING)),
    # Imports.
    (IMPORT_MISSING := Code("CTX201", "import-missing", "@import of a file that does not exist", WARNING, INFO)),
    (IMPORT_CYCLE := Code("CTX202", "import-cycle", "@imports that form a cycle", WARNING, INFO)),
    (IMPORT_TOO_DEEP := Code("CTX203", "import-too-deep", "@import beyond the policy's depth (4 hops): the client drops it", WARNING, WARNING)),
    (IMPORT_EXTERNAL := Code("CTX204", "import-external", "@import outside the working directory: dropped without approval; data-leak risk", WARNING, WARNING)),
    (IMPORT_NOT_TEXT := Code("CTX205", "import-not-text", "@import without a text extension: the client skips it", WARNING, WARNING)),
    (IMPORT_DIRECTORY := Code("CTX206", "import-directory", "@import of a directory: nothing is loaded", WARNING, WARNING)),
    (IMPORT_DEEPER_START := Code("CTX207", "import-external-for-cwd", "@import dropped when the agent starts in a deeper directory", WARNING)),
    (IMPORT_DUPLICATE := Code("CTX208", "import-duplicate", "@import of a file loaded earlier: not loaded again", None, INFO)),
    (IMPORT_OF_CONDITIONAL := Code("CTX209", "import-of-conditional-rule", "imported by a conditional rule: loads at start, not when the rule matches", None, WARNING)),
    # Frontmatter.
    (FRONTMATTER_INVALID := Code("CTX301", "frontmatter-invalid", "invalid YAML frontmatter: the client drops it and any paths:", ERROR, WARNING)),
    (FRONTMATTER_KEY := Code("CTX302", "frontmatter-unknown-key", "frontmatter key the client does not read for this kind of file", WARNING)),
    (PATHS_ON_FILE := Code("CTX303", "paths-on-claude-md", "paths: on a CLAUDE.md is ignored: the file always loads", WARNING)),
    (INVALID_GLOB := Code("CTX304", "invalid-glob", "a paths: glob that is invalid: it matches nothing", ERROR)),
    (DEAD_GLOB := Code("CTX305", "dead-glob", "a paths: glob that matches no file tracked by git", WARNING)),
    (BRACE_BUDGET := Code("CTX306", "brace-budget", "brace expansion over 1,000 patterns: the glob matches nothing", ERROR, WARNING)),
    (GLOB_TOO_COMPLEX := Code("CTX307", "glob-too-complex", "a glob over 1,024 characters, past 64 KiB of globs, or not linear to match: it matches nothing", ERROR, WARNING)),
    (FRONTMATTER_TOO_COMPLEX := Code("CTX308", "frontmatter-too-complex", "YAML frontmatter over 20,000 nodes (aliases expanded) or 64 levels deep: dropped", ERROR, WARNING)),
    # Placement.
    (NEVER_LOADED := Code("CTX401", "dot-claude-local", ".claude/CLAUDE.local.md is never loaded", ERROR)),
    (LOCAL_NOT_IGNORED := Code("CTX402", "local-not-ignored", "CLAUDE.local.md tracked by git or not git-ignored", ERROR)),
    (RULE_NOT_MD := Code("CTX403", "rule-not-md", "a file in .claude/rules without .md: ignored by the client", WARNING)),
    (EMPTY := Code("CTX404", "empty", "empty after removing frontmatter and comments: skipped", WARNING, INFO)),
    (EXCLUDED := Code("CTX405", "excluded", "excluded by claudeMdExcludes: not loaded", None, INFO)),
    (WORKSPACE_MISSING := Code("CTX406", "workspace-file-missing", "a workspace file that does not exist: its placeholder text renders", None, WARNING)),
    (TOUCH_OUTSIDE := Code("CTX407", "touch-outside-cwd", "a touched path outside the working directory: nothing attached", None, INFO)),
    # Content.
    (SECRET := Code("CTX501", "secret", "looks like a secret (API key, token, private key)", ERROR)),
    (DUPLICATE := Code("CTX502", "duplicate", "paragraph repeated in another file that loads with it", WARNING)),
    (CLOSING_TAG := Code("CTX503", "closing-tag", "contains a closing tag of ctxasm's own sections (escaped when rendered)", WARNING, WARNING)),
    (FORGED_STRUCTURE := Code("CTX504", "forged-structure", "contains an opening tag of ctxasm's sections, a line shaped like a markdown section heading of its own, or the boundary marker (neutralised when rendered)", WARNING, WARNING)),
    # The whole context.
    (OVER_BUDGET := Code("CTX601", "context-over-budget", "the assembled context is over the token budget", ERROR, ERROR)),
    (BUDGET_TRIMMED := Code("CTX602", "budget-trimmed", "a source trimmed to fit the token budget", None, WARNING)),
    (BUDGET_DROPPED := Code("CTX603", "budget-dropped", "a source dropped to fit the token budget", None, WARNING)),
    # Settings, rules directories and skills.
    (SETTINGS_INVALID := Code("CTX701", "settings-invalid", "a settings file that cannot be used: its keys are ignored", None, WARNING)),
    (RULES_UNREADABLE := Code("CTX702", "rules-unreadable", "a rules directory that cannot be listed: its rules are not loaded", None, ERROR)),
    (RULES_LOOP := Code("CTX703", "rules-loop", "a rules directory reached again through a symlink: not re-entered", None, INFO)),
    (RULES_LIMIT := Code("CTX704", "rules-limit", "a rules directory over the file, entry or depth limits: the rest is not loaded", None, WARNING)),
    (LOAD_LIMIT := Code("CTX705", "load-limit", "a run that loaded 16 Mi characters or followed 10,000 imports: the rest is not loaded", None, WARNING)),
    (INDEX_ENTRY_CUT := Code("CTX706", "index-entry-cut", "a name over 256 or a description over 4,096 characters in an index the agent sees (skills, Cursor's requested rules), or past 1 Mi characters of them: cut, or not listed", WARNING, WARNING)),
    (SKILL_UNREADABLE := Code("CTX711", "skill-unreadable", "a SKILL.md that cannot be read: the skill is not listed", None, WARNING)),
    (SKILL_CONDITIONAL := Code("CTX712", "skill-conditional", "a skill with paths: offered only once a matching file is touched", None, INFO)),
    (SKILL_HIDDEN := Code("CTX713", "skill-hidden", "a skill with disable-model-invocation: never offered to the model", None, INFO)),
    (SKILL_DUPLICATE := Code("CTX714", "skill-duplicate", "a skill whose name is listed already: not listed again", None, INFO)),
    # Content from outside the project.
    (OUTSIDE_PROJECT := Code("CTX801", "outside-project", "loaded from outside the project through a symlink or an approved import", WARNING, WARNING)),
    (OUTSIDE_HOME := Code("CTX802", "outside-project-home", "loaded from the home directory, outside the project: private files may reach the prompt", ERROR, WARNING)),
    (CASE_FOLDED := Code("CTX803", "case-folded-import", "@import inside the working directory only when case is ignored, as the client compares", WARNING, WARNING)),
    (MEMORY_MOVED := Code("CTX804", "memory-moved", "auto memory read where the repository's settings (autoMemoryDirectory) move it: loaded as the user's own", ERROR, WARNING)),
    # Codex CLI (AGENTS.md) and Gemini CLI (GEMINI.md).
    (CODEX_DOC_CUT := Code("CTX901", "codex-doc-cut", "AGENTS.md text past Codex's project_doc_max_bytes: Codex stops reading there", WARNING, WARNING)),
    (CODEX_DOC_DROPPED := Code("CTX902", "codex-doc-dropped", "a project doc after Codex's byte budget is spent: Codex does not load it", WARNING, WARNING)),
    (CODEX_CONFIG_INVALID := Code("CTX903", "codex-config-invalid", "CODEX_HOME/config.toml unusable, or a value of the wrong type: the default is used", None, WARNING)),
    (CODEX_DOCS_FAILED := Code("CTX904", "codex-docs-failed", "a project doc Codex finds but cannot read: Codex loads no project doc at all", None, ERROR)),
    (CODEX_DOC_SHADOWED := Code("CTX905", "codex-doc-shadowed", "a project doc beside an earlier candidate name in its directory: Codex reads only the first", None, INFO)),
    (GEMINI_IMPORT_OUTSIDE := Code("CTX911", "gemini-import-outside", "a GEMINI.md @import that leaves the project: Gemini CLI refuses it", WARNING, WARNING)),
    (GEMINI_IMPORT_TOO_DEEP := Code("CTX912", "gemini-import-too-deep", "a GEMINI.md @import past Gemini CLI's 5 levels: left in the text unread", None, WARNING)),
    (GEMINI_IMPORT_FAILED := Code("CTX913", "gemini-import-failed", "a GEMINI.md @import that cannot be read: Gemini CLI inlines an error comment", WARNING, INFO)),
    (GEMINI_IMPORT_CYCLE := Code("CTX914", "gemini-import-cycle", "GEMINI.md @imports that come back to a file of the chain: Gemini CLI inlines a marker", WARNING, INFO)),
    (GEMINI_SETTINGS_INVALID := Code("CTX915", "gemini-settings-invalid", "a Gemini settings.json unusable, or a context.fileName of the wrong type: it is ignored", WARNING, WARNING)),
    # Cursor (.cursor/rules/**/*.mdc, AGENTS.md, .cursorrules).
    (CURSOR_AUTO := Code("CTX921", "cursor-rule-auto-attached", "a Cursor rule with globs: attached once a matching file is touched", None, INFO)),
    (CURSOR_REQUESTED := Code("CTX922", "cursor-rule-agent-requested", "a Cursor rule with only a description: listed by it, read when the agent asks", None, INFO)),
    (CURSOR_MANUAL := Code("CTX923", "cursor-rule-manual", "a Cursor rule with no alwaysApply, globs or description: loaded only when @-mentioned", None, INFO)),
    (CURSOR_MD_RULE := Code("CTX924", "cursor-rule-not-mdc", "a file in .cursor/rules that is not .mdc: Cursor ignores it", WARNING, INFO)),
    (CURSOR_KEY := Code("CTX925", "cursor-unknown-key", "a .mdc frontmatter key Cursor does not read (description, globs, alwaysApply)", WARNING)),
    (CURSOR_ALWAYS_APPLY := Code("CTX926", "cursor-invalid-always-apply", "alwaysApply that is not true or false: Cursor takes it as false", ERROR, WARNING)),
    (CURSOR_GLOBS := Code("CTX927", "cursor-invalid-globs", "globs that are not a comma string or a list of strings, or a glob that matches nothing", ERROR, WARNING)),
    (CURSOR_DESCRIPTION := Code("CTX928", "cursor-invalid-description", "a description that is not a string: the agent cannot request the rule by it", WARNING)),
    # GitHub Copilot (.github/copilot-instructions.md, .github/instructions, AGENTS.md).
    (COPILOT_APPLY_TO := Code("CTX931", "copilot-apply-to", "path-specific instructions: attached once a file matching applyTo is touched", None, INFO)),
    (COPILOT_NO_APPLY_TO := Code("CTX932", "copilot-no-apply-to", "an .instructions.md without applyTo: never applied automatically", WARNING, INFO)),
    (COPILOT_EXCLUDED := Code("CTX933", "copilot-excluded-agent", "excludeAgent: coding-agent: the coding agent does not read the file", None, INFO)),
    (COPILOT_AGENTS_FARTHER := Code("CTX934", "copilot-agents-md-not-nearest", "an AGENTS.md farther than another: the nearest one takes precedence", None, INFO)),
    (COPILOT_KEY := Code("CTX935", "copilot-unknown-key", "an .instructions.md frontmatter key Copilot does not read (applyTo, excludeAgent)", WARNING)),
    (COPILOT_APPLY_TO_INVALID := Code("CTX936", "copilot-invalid-apply-to", "applyTo that is not a string of comma-separated globs, or a glob that matches nothing", ERROR, WARNING)),
    (COPILOT_EXCLUDE_INVALID := Code("CTX937", "copilot-invalid-exclude-agent", "excludeAgent other than \"code-review\" or \"coding-agent\": no agent is excluded", ERROR, WARNING)),
    (COPILOT_REVIEW_CUT := Code("CTX938", "copilot-review-4000", "over 4,000 characters: Copilot code review reads only the first 4,000", WARNING)),
)  # fmt: skip

BY_CODE = {entry.code: entry for entry in CATALOGUE}
LINT_CODES = tuple(entry for entry in CATALOGUE if entry.lint is not None)


def lookup(code: str) -> Code:
    """The catalogue entry of `code` (`KeyError` when there is none)."""
    return BY_CODE[code]


def catalogue_text(entries: tuple[Code, ...]) -> str:
    """The table `ctxasm codes` prints: code, lint and load severity, name, summary."""
    lines = [f"{'code':<7} {'lint':<8} {'load':<8} {'name':<27} summary"]
    for entry in entries:
        lint = entry.lint.value if entry.lint else "-"
        load = entry.load.value if entry.load else "-"
        lines.append(f"{entry.code:<7} {lint:<8} {load:<8} {entry.name:<27} {entry.summary}")
    return "\n".join(lines) + "\n"


def catalogue_json(entries: tuple[Code, ...]) -> str:
    import json

    rows = [
        {
            "code": e.code,
            "name": e.name,
            "summary": e.summary,
            "lint": e.lint.value if e.lint else None,
            "load": e.load.value if e.load else None,
        }
        for e in entries
    ]
    return json.dumps(rows, indent=2) + "\n"
