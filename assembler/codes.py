"""The catalogue of diagnostic codes: one table for `render`, `explain`, `watch` and `lint`.

This module holds the codes every agent shares; a client's own codes (a check only it makes,
a file only it reads) are its own (`Client.own_codes`), and `clients.registry.catalogue()`
lists them all.

Every finding ctxasm reports has a stable `CTXnnn` code, a name, a one-line summary, and the
severity it has where it is reported: `lint` (a check of the files) and `load` (discovery and
the budgeter, as `render`'s stderr, `explain` and `watch` show them). A few facts weigh
differently in the two places: a missing `@import` is a bug to fix in review (lint: warning)
but something the client skips silently at run time (load: info). `ctxasm codes` prints the
table.

Codes never change meaning once released; a retired code stays unused.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from .model import Diagnostic, Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


class Skip(enum.Enum):
    """Why a file was not loaded (or was dropped), in the words of `explain`'s row: the
    closed set a code's `skip` names (the diagnostic's message says the particulars)."""

    TOO_LARGE = "too large"
    EMPTY = "empty"
    EXCLUDED = "excluded by settings"
    EXTERNAL = "external import not approved"
    TOO_DEEP = "import too deep"
    NOT_MATCHED = "conditional rule not matched"
    BINARY = "binary"
    UNREADABLE = "unreadable"
    SPECIAL = "not a regular file"
    SYMLINK_LOOP = "symlink loop"
    BROKEN_SYMLINK = "broken symlink"
    DIRECTORY = "a directory"
    NOT_TEXT = "not a text file"
    MISSING = "missing"
    CYCLE = "import cycle"
    DUPLICATE = "already loaded"
    BUDGET = "dropped by the token budget"
    CLIENT_BUDGET = "past the client's byte budget"
    REQUESTED = "agent-requested: listed by description"
    MANUAL = "applied only by hand"
    EXCLUDED_AGENT = "excluded for this agent"
    FARTHER = "a nearer instruction file takes precedence"
    INSTEAD = "another instruction file loads instead"


class Code(NamedTuple):
    code: str
    name: str
    summary: str
    lint: Severity | None = None  # None: lint never reports it
    load: Severity | None = None  # None: discovery and the budgeter never report it
    skip: Skip | None = None  # how `explain` names a file this code keeps out (None: it does not)
    # A file over a size limit, or cut by the client that loads it: an error in lint's
    # `size_errors` mode, the pre-commit hook's default (docs/lint.md, "The hook").
    size: bool = False

    def at(self, path: str, message: str) -> Diagnostic:
        """The diagnostic discovery or the budgeter records for `path` (shown as given)."""
        assert self.load is not None, f"{self.code} is not a load-time diagnostic"
        return Diagnostic(self.code, self.load, path, message)


# Each entry is bound to a name for the code that reports it (`codes.TOO_LARGE.at(...)`).
CATALOGUE: tuple[Code, ...] = (
    # Files that cannot be loaded.
    (UNREADABLE := Code("CTX001", "unreadable", "cannot be read (permissions, I/O error): not loaded", ERROR, ERROR, Skip.UNREADABLE)),
    (INVALID_UTF8 := Code("CTX002", "invalid-utf8", "not valid UTF-8: loaded with replacement characters", WARNING, WARNING)),
    (BINARY := Code("CTX003", "binary", "binary (holds a NUL byte): not loaded", ERROR, ERROR, Skip.BINARY)),
    (SPECIAL := Code("CTX004", "not-regular-file", "a FIFO, socket or device: never opened", ERROR, ERROR, Skip.SPECIAL)),
    (SYMLINK_LOOP := Code("CTX005", "symlink-loop", "a symlink loop: not loaded", ERROR, ERROR, Skip.SYMLINK_LOOP)),
    (BROKEN_SYMLINK := Code("CTX006", "broken-symlink", "a symlink to nothing: not loaded", ERROR, WARNING, Skip.BROKEN_SYMLINK)),
    (DIRECTORY := Code("CTX007", "directory", "a directory where an instruction file is expected", ERROR, WARNING, Skip.DIRECTORY)),
    (FINDINGS_CAPPED := Code("CTX008", "findings-left-out", "lint left findings out: over 100 of one code in a file, imports past the 2,000 it follows from one file, files past its walk limits, or content past the characters one run scans", WARNING)),
    (GIT_UNLISTED := Code("CTX009", "repository-not-listed", "git could not list the repository (a FIFO or device where git reads, or git stuck): lint checked what a walk finds", ERROR)),
    # Size.
    (TOO_MANY_LINES := Code("CTX101", "too-many-lines", "over the agent's line guidance for one file (its policy's `[lint] max_lines`)", WARNING, size=True)),
    (TOO_MANY_BYTES := Code("CTX102", "too-many-bytes", "over the agent's size guidance for one file (its policy's `[lint] max_bytes`)", WARNING, size=True)),
    (FILE_CHARS := Code("CTX103", "over-file-char-limit", "over the policy's per-file character limit: cut", WARNING, WARNING, size=True)),
    (LARGE_FILE := Code("CTX104", "large-file", "over the agent's large-file warning (its policy's `large_file_chars`): large enough to hurt its performance", WARNING, size=True)),
    (TOO_LARGE := Code("CTX105", "over-4mib", "over the largest file the agent reads (its policy's `skip_bytes`): not loaded", ERROR, ERROR, Skip.TOO_LARGE, size=True)),
    (INDEX_CUT := Code("CTX106", "memory-index-cut", "a memory index over the agent's index limits (`index_lines`, `index_chars`): the client cuts it", WARNING, WARNING, size=True)),
    # Imports.
    (IMPORT_MISSING := Code("CTX201", "import-missing", "@import of a file that does not exist", WARNING, INFO, Skip.MISSING)),
    (IMPORT_CYCLE := Code("CTX202", "import-cycle", "@imports that form a cycle", WARNING, INFO, Skip.CYCLE)),
    (IMPORT_TOO_DEEP := Code("CTX203", "import-too-deep", "@import beyond the policy's depth (4 hops): the client drops it", WARNING, WARNING, Skip.TOO_DEEP)),
    (IMPORT_EXTERNAL := Code("CTX204", "import-external", "@import outside the working directory: dropped without approval; data-leak risk", WARNING, WARNING, Skip.EXTERNAL)),
    (IMPORT_NOT_TEXT := Code("CTX205", "import-not-text", "@import without a text extension: the client skips it", WARNING, WARNING, Skip.NOT_TEXT)),
    (IMPORT_DIRECTORY := Code("CTX206", "import-directory", "@import of a directory: nothing is loaded", WARNING, WARNING, Skip.DIRECTORY)),
    (IMPORT_DEEPER_START := Code("CTX207", "import-external-for-cwd", "@import dropped when the agent starts in a deeper directory", WARNING)),
    (IMPORT_DUPLICATE := Code("CTX208", "import-duplicate", "@import of a file loaded earlier: not loaded again", None, INFO, Skip.DUPLICATE)),
    (IMPORT_OF_CONDITIONAL := Code("CTX209", "import-of-conditional-rule", "imported by a conditional rule: loads at start, not when the rule matches", None, WARNING)),
    # Frontmatter.
    (FRONTMATTER_INVALID := Code("CTX301", "frontmatter-invalid", "invalid YAML frontmatter: the client drops it and any paths:", ERROR, WARNING)),
    (FRONTMATTER_KEY := Code("CTX302", "frontmatter-unknown-key", "frontmatter key the client does not read for this kind of file", WARNING)),
    (INVALID_GLOB := Code("CTX304", "invalid-glob", "a paths: glob that is invalid: it matches nothing", ERROR)),
    (DEAD_GLOB := Code("CTX305", "dead-glob", "a paths: glob that matches no file tracked by git", WARNING)),
    (BRACE_BUDGET := Code("CTX306", "brace-budget", "brace expansion over 1,000 patterns: the glob matches nothing", ERROR, WARNING)),
    (GLOB_TOO_COMPLEX := Code("CTX307", "glob-too-complex", "a glob over 1,024 characters, past 64 KiB of globs, or not linear to match: it matches nothing", ERROR, WARNING)),
    (FRONTMATTER_TOO_COMPLEX := Code("CTX308", "frontmatter-too-complex", "YAML frontmatter over 20,000 nodes or 4 Mi characters (aliases expanded), 64 levels deep, or too long for a client without limits: dropped", ERROR, WARNING)),
    (FRONTMATTER_CUT := Code("CTX309", "frontmatter-cut", "frontmatter of a client that documents no limit, with lines too long to parse whole: the start of each parsed", WARNING, WARNING)),
    # Placement.
    (LOCAL_NOT_IGNORED := Code("CTX402", "local-not-ignored", "a private instruction file tracked by git or not git-ignored", ERROR)),
    (EMPTY := Code("CTX404", "empty", "empty after removing frontmatter and comments: skipped", WARNING, INFO, Skip.EMPTY)),
    (EXCLUDED := Code("CTX405", "excluded", "excluded by the client's settings: not loaded", None, INFO, Skip.EXCLUDED)),
    (WORKSPACE_MISSING := Code("CTX406", "workspace-file-missing", "a workspace file that does not exist: its placeholder text renders", None, WARNING, Skip.MISSING)),
    (TOUCH_OUTSIDE := Code("CTX407", "touch-outside-cwd", "a touched path outside the working directory: nothing attached", None, INFO)),
    # Content.
    (SECRET := Code("CTX501", "secret", "looks like a secret (API key, token, private key)", ERROR)),
    (DUPLICATE := Code("CTX502", "duplicate", "paragraph repeated in another file that loads with it", WARNING)),
    (CLOSING_TAG := Code("CTX503", "closing-tag", "contains a closing tag of ctxasm's own sections (escaped when rendered)", WARNING, WARNING)),
    (FORGED_STRUCTURE := Code("CTX504", "forged-structure", "contains an opening tag of ctxasm's sections, a line shaped like a markdown section heading of its own, or the boundary marker (neutralised when rendered)", WARNING, WARNING)),
    # The whole context.
    (OVER_BUDGET := Code("CTX601", "context-over-budget", "the assembled context is over the token budget", ERROR, ERROR)),
    (BUDGET_TRIMMED := Code("CTX602", "budget-trimmed", "a source trimmed to fit the token budget", None, WARNING)),
    (BUDGET_DROPPED := Code("CTX603", "budget-dropped", "a source dropped to fit the token budget", None, WARNING, Skip.BUDGET)),
    (VERSION_APPROXIMATED := Code("CTX604", "client-version-approximated", "the client release asked for is not modelled: the nearest older model is used", None, WARNING)),
    (VERSION_DEPENDENT := Code("CTX605", "client-version-dependent", "what loads at a start differs between the modelled releases of the client", WARNING)),
    (PATH_ENTRY_SKIPPED := Code("CTX606", "path-entry-skipped", "relative or empty PATH entries not looked in for the client's program: a program there would be the repository's", None, WARNING)),
    # Settings, rules directories and skills.
    (SETTINGS_INVALID := Code("CTX701", "settings-invalid", "a settings file that cannot be used: its keys are ignored", WARNING, WARNING)),
    (RULES_UNREADABLE := Code("CTX702", "rules-unreadable", "a rules directory that cannot be listed: its rules are not loaded", None, ERROR)),
    (RULES_LOOP := Code("CTX703", "rules-loop", "a rules directory reached again through a symlink: not re-entered", None, INFO)),
    (RULES_LIMIT := Code("CTX704", "rules-limit", "a rules directory over the file, entry or depth limits: the rest is not loaded", None, WARNING)),
    (LOAD_LIMIT := Code("CTX705", "load-limit", "a run that loaded 16 Mi characters or followed 10,000 imports: the rest is not loaded", None, WARNING)),
    (INDEX_ENTRY_CUT := Code("CTX706", "index-entry-cut", "a name over 256 or a description over 4,096 characters in an index the agent sees (skills, requested rules), or past 1 Mi characters of them: cut, or not listed", WARNING, WARNING)),
    (SKILL_UNREADABLE := Code("CTX711", "skill-unreadable", "a SKILL.md that cannot be read: the skill is not listed", None, WARNING)),
    (SKILL_CONDITIONAL := Code("CTX712", "skill-conditional", "a skill with paths: offered only once a matching file is touched", None, INFO)),
    (SKILL_HIDDEN := Code("CTX713", "skill-hidden", "a skill with disable-model-invocation: never offered to the model", None, INFO)),
    (SKILL_DUPLICATE := Code("CTX714", "skill-duplicate", "a skill whose name is listed already: not listed again", None, INFO)),
    # Content from outside the project.
    (OUTSIDE_PROJECT := Code("CTX801", "outside-project", "loaded from outside the project through a symlink or an approved import", WARNING, WARNING)),
    (OUTSIDE_HOME := Code("CTX802", "outside-project-home", "loaded from the home directory, outside the project: private files may reach the prompt", ERROR, WARNING)),
    (CASE_FOLDED := Code("CTX803", "case-folded-import", "@import inside the working directory only when case is ignored, as the client compares", WARNING, WARNING)),
    (MEMORY_MOVED := Code("CTX804", "memory-moved", "auto memory read where the repository's settings move it: loaded as the user's own", ERROR, WARNING)),
)  # fmt: skip

BY_CODE = {entry.code: entry for entry in CATALOGUE}
LINT_CODES = tuple(entry for entry in CATALOGUE if entry.lint is not None)


def lookup(code: str) -> Code:
    """The catalogue entry of `code` (`KeyError` when there is none)."""
    return BY_CODE[code]


def catalogue_text(entries: tuple[Code, ...], width: int | None = None) -> str:
    """The table `ctxasm codes` prints: code, lint and load severity, name, summary; one line
    a code. When a line would be wider than `width` (None: no limit), each code takes two or
    more: code, severities and name, then the summary below, indented and wrapped."""
    import textwrap

    heads, summaries = [], []
    for entry in entries:
        lint = entry.lint.value if entry.lint else "-"
        load = entry.load.value if entry.load else "-"
        heads.append(f"{entry.code:<7} {lint:<8} {load:<8} {entry.name}")
        summaries.append(entry.summary)
    one_line = [f"{head:<53} {summary}" for head, summary in zip(heads, summaries, strict=True)]
    if width is None or max(map(len, one_line), default=0) <= width:
        return (
            "\n".join([f"{'code':<7} {'lint':<8} {'load':<8} {'name':<27} summary", *one_line])
            + "\n"
        )
    indent = " " * 8
    lines = [f"{'code':<7} {'lint':<8} {'load':<8} name", f"{indent}summary"]
    for head, summary in zip(heads, summaries, strict=True):
        lines.append(head)
        lines += textwrap.wrap(
            summary,
            max(20, width),
            initial_indent=indent,
            subsequent_indent=indent,
            break_long_words=False,  # a name, a path: whole, even past the width
            break_on_hyphens=False,
        )
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
