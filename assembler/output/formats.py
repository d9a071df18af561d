"""The one list of output formats, shared by the renderer, the CLI and policy validation.

Generic formats come first (`xml`, the native layout; `markdown`, a preview; `json`, the
whole assembly), then each client's own formats in registry order (`claude-code`: byte for
byte what Claude Code sends), then the provider request shapes (`anthropic`, `openai`).
"""

from __future__ import annotations

from pathlib import Path

from ..clients import registry
from ..clients.base import FormatContext

TEXT = ("xml", "markdown", "json")
REQUESTS = ("anthropic", "openai")


def names() -> tuple[str, ...]:
    """Every format, in the order the CLI lists them."""
    native = tuple(name for client in registry.clients() for name in client.formats)
    return (*TEXT, *native, *REQUESTS)


def client_format(name: str) -> FormatContext | None:
    """The template variables of a client's own format, or None for a generic one."""
    for client in registry.clients():
        build = client.formats.get(name)
        if build is not None:
            return build
    return None


def template_dir(name: str) -> Path | None:
    """Where the template of a client's format is, when the client ships its own templates
    (None: the shipped `templates/`, as for every built-in client)."""
    for client in registry.clients():
        if name in client.formats:
            return client.templates
    return None
