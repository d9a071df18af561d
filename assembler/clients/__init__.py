"""The agents ctxasm models, one module each behind one seam (`base.Client`), found through
one registry (`registry`): Claude Code (`claude_code`), the seed article's bootstrap
workspace (`bootstrap`), Codex CLI (`codex`), Gemini CLI (`gemini`), Cursor (`cursor`) and
GitHub Copilot (`copilot`); Codex and Gemini share their root-to-cwd walk (`walk`), Cursor
and Copilot their rule-file walking (`rulefiles`). See docs/architecture.md for adding one."""
