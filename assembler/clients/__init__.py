"""The agents ctxasm models, one module each behind one seam (`base.Client`), found through
one registry (`registry`): Claude Code (`claude_code`) and the seed article's bootstrap
workspace (`bootstrap`). See docs/architecture.md for adding one."""
