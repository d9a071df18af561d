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


def names(client: str | None = None) -> tuple[str, ...]:
    """Every format, in the order the CLI lists them; with `client` (a registry name), those
    that render its policy's files (`for_another_client`)."""
    clients = registry.clients() if client is None else (registry.get(client),)
    native = tuple(name for c in clients for name in c.formats)
    return (*TEXT, *native, *REQUESTS)


def _owner(name: str) -> Client[Any] | None:
    """The client whose own format `name` is (None: a generic format)."""
    return next((c for c in registry.clients() if name in c.formats), None)


def for_another_client(name: str, client: str) -> str | None:
    """Why the format `name` cannot render what `client` (a registry name) loads, or None
    when it can. A client's own format wraps the files in that agent's words, byte for byte
    its request: around the files another agent loads, it is what neither agent sends. The
    generic formats and the request shapes render any client's files."""
    owner = _owner(name)
    if owner is None or owner.name == client:
        return None
    every = ", ".join((*TEXT, *REQUESTS))
    return (
        f"{name} is {owner.title}'s own format, but the policy's client is "
        f"{registry.get(client).title}: those bytes are what neither agent sends; use a "
        f"{owner.name} policy (--policy {owner.default_policy}) or a format for every policy "
        f"({every})"
    )


def client_format(name: str) -> FormatContext | None:
    """The template variables of a client's own format, or None for a generic one."""
    owner = _owner(name)
    return owner.formats[name] if owner is not None else None


def template_dir(name: str) -> Path | None:
    """Where the template of a client's format is, when the client ships its own templates
    (None: the shipped `templates/`, as for every built-in client)."""
    owner = _owner(name)
    return owner.templates if owner is not None else None
