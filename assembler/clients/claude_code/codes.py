"""Claude Code's own diagnostic codes: checks of files only it reads (`.claude/`, `CLAUDE.md`).
`clients.registry.catalogue()` lists them with the shared ones (`assembler.codes`)."""

from __future__ import annotations

from ...codes import ERROR, WARNING, Code

# fmt: off
PATHS_ON_FILE = Code("CTX303", "paths-on-claude-md", "paths: on a CLAUDE.md is ignored: the file always loads", WARNING)
NEVER_LOADED = Code("CTX401", "dot-claude-local", ".claude/CLAUDE.local.md is never loaded", ERROR)
RULE_NOT_MD = Code("CTX403", "rule-not-md", "a file in .claude/rules without .md: ignored by the client", WARNING)
# fmt: on

CODES = (
    PATHS_ON_FILE,
    NEVER_LOADED,
    RULE_NOT_MD,
)
