"""Claude Code: what it loads at start and on a read (`client`), its settings layers, approvals
and auto memory (`settings`), its lazy loading (`lazy`), its skills index (`skills`), and its
own lint checks and codes (`checks`, `codes`)."""

from .client import CLIENT, NAME, ClaudeCode

__all__ = ["CLIENT", "NAME", "ClaudeCode"]
