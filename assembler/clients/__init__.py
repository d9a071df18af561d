"""The agents ctxasm models, one module each behind one seam (`base.Client`), found through
one registry (`registry`): Claude Code (`claude_code`), the seed article's bootstrap
workspace (`bootstrap`), Cursor (`cursor`) and GitHub Copilot (`copilot`), the last two
sharing their rule-file walking (`rulefiles`). See docs/architecture.md for adding one."""
