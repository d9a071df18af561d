"""The one list of output formats, shared by the renderer, the CLI and policy validation.

Generic formats come first (`xml`, the native layout; `markdown`, a preview; `json`, the
whole assembly), then each client's own formats in registry order (byte for byte what the
agent sends), then the provider request shapes (`anthropic`, `openai`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..clients import registry
from ..clients.base import Client, FormatContext

TEXT = ("xml", "markdown", "json")
REQUESTS = ("anthropic", "openai")


def names() -> tuple[str, ...]:
    """Every format, in the order the CLI lists them."""
    native = tuple(name for client in registry.clients() for name in client.formats)
    return (*TEXT, *native, *REQUESTS)


def _owner(name: str) -> Client[Any] | None:
    """The client whose own format `name` is (None: a generic format)."""
    return next((c for c in registry.clients() if name in c.formats), None)


def client_format(name: str) -> FormatContext | None:
    """The template variables of a client's own format, or None for a generic one."""
    owner = _owner(name)
    return owner.formats[name] if owner is not None else None


def template_dir(name: str) -> Path | None:
    """Where the template of a client's format is, when the client ships its own templates
    (None: the shipped `templates/`, as for every built-in client)."""
    owner = _owner(name)
    return owner.templates if owner is not None else None
