"""The agents ctxasm models, one module each behind one seam (`base.Client`), found through
one registry (`registry`): Claude Code (`claude_code`), the seed article's bootstrap
workspace (`bootstrap`), Codex CLI (`codex`) and Gemini CLI (`gemini`).
See docs/architecture.md for adding one."""
