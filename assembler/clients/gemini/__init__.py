"""Gemini CLI: its context files (`client`), the `context.fileName` of its settings
(`settings`), its own `@import` processor (`imports`) and its own diagnostic codes (`codes`)."""

from .client import CLIENT, NAME, Gemini

__all__ = ["CLIENT", "NAME", "Gemini"]
