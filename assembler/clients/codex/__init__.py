"""Codex CLI: what it puts in its AGENTS.md message (`client`), from `CODEX_HOME/config.toml`
(`config`), and its own diagnostic codes (`codes`)."""

from .client import CLIENT, NAME, Codex

__all__ = ["CLIENT", "NAME", "Codex"]
