"""The agents ctxasm models, one module or package each, subclasses of one seam
(`base.Client`), found through one registry (`registry`): Claude Code (`claude_code/`), the
seed article's bootstrap workspace (`bootstrap`), Codex CLI (`codex/`), Gemini CLI
(`gemini/`), Cursor (`cursor`) and GitHub Copilot (`copilot`); Codex and Gemini share their
root-to-cwd walk (`walk`), Cursor and Copilot their rule-file walking (`rulefiles`). Every
fact of an agent lives here; see docs/architecture.md for adding one."""
