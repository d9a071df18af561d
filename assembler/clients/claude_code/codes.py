"""Claude Code's own diagnostic codes: checks of files only it reads (`.claude/`, `CLAUDE.md`).
`clients.registry.catalogue()` lists them with the shared ones (`assembler.codes`)."""

from __future__ import annotations

from ...codes import ERROR, INFO, WARNING, Code, Skip

# fmt: off
PATHS_ON_FILE = Code("CTX303", "paths-on-claude-md", "paths: on a CLAUDE.md is ignored: the file always loads", WARNING)
NEVER_LOADED = Code("CTX401", "dot-claude-local", ".claude/CLAUDE.local.md is never loaded", ERROR)
AGENTS_MD_INSTEAD = Code("CTX408", "agents-md-not-loaded", "an AGENTS.md the agents-md plugin leaves out: a CLAUDE.md loads on the way to cwd", None, INFO, Skip.INSTEAD)
RULE_NOT_MD = Code("CTX403", "rule-not-md", "a file in .claude/rules without .md: ignored by the client", WARNING)
AGENT_FRONTMATTER = Code("CTX410", "agent-frontmatter", "a custom agent's frontmatter the client cannot use (no name, bad YAML, a key or value it does not read)", WARNING, WARNING)
AGENT_NO_DESCRIPTION = Code("CTX411", "agent-no-description", "a custom agent without a description: the client skips it", ERROR, WARNING)
AGENT_UNKNOWN_TOOL = Code("CTX412", "agent-unknown-tool", "a custom agent's tools: names a tool the client does not have", WARNING, WARNING)
AGENT_DUPLICATE = Code("CTX413", "agent-duplicate", "two custom agents of one name (project and user): only the project's is used", WARNING, WARNING)
SUBAGENTS_UNINFORMED = Code("CTX414", "subagents-uninformed", "instructions speak of subagents, but Explore and Plan start without them", INFO, INFO)
# fmt: on

CODES = (
    PATHS_ON_FILE,
    NEVER_LOADED,
    AGENTS_MD_INSTEAD,
    RULE_NOT_MD,
    AGENT_FRONTMATTER,
    AGENT_NO_DESCRIPTION,
    AGENT_UNKNOWN_TOOL,
    AGENT_DUPLICATE,
    SUBAGENTS_UNINFORMED,
)
