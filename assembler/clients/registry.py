"""The one registry of clients: the CLI, policies, formats, lint, `explain`, `watch` and the
`Assembler` ask it for a client; none of them compares client names.

Built-in clients are registered here; tests (and plugins) add their own with `register()` and
remove them with `unregister()`. This table and the parse memo are the only module-level state
of the package.
"""

from __future__ import annotations

from ..errors import PolicyError
from . import bootstrap, claude_code, codex, copilot, cursor, gemini
from .base import Client

_CLIENTS: dict[str, Client] = {
    client.name: client
    for client in (
        claude_code.CLIENT,
        bootstrap.CLIENT,
        codex.CLIENT,
        gemini.CLIENT,
        cursor.CLIENT,
        copilot.CLIENT,
    )
}


def get(name: str) -> Client:
    """The client called `name` (a policy loaded from TOML was checked against `names()`; a
    `Policy` built in code may name anything)."""
    client = _CLIENTS.get(name)
    if client is None:
        known = ", ".join(_CLIENTS)
        raise PolicyError(f"{name}: no such client; a policy's client is one of {known}")
    return client


def names() -> tuple[str, ...]:
    return tuple(_CLIENTS)


def clients() -> tuple[Client, ...]:
    return tuple(_CLIENTS.values())


def register(client: Client) -> None:
    """Add a client; its name must be new."""
    if client.name in _CLIENTS:
        raise ValueError(f"a client called {client.name!r} is registered already")
    _CLIENTS[client.name] = client


def unregister(name: str) -> None:
    """Remove a client added with `register()` (built-in ones stay)."""
    if name in (
        claude_code.NAME,
        bootstrap.NAME,
        codex.NAME,
        gemini.NAME,
        cursor.NAME,
        copilot.NAME,
    ):
        raise ValueError(f"{name!r} is built in and cannot be removed")
    _CLIENTS.pop(name, None)
