"""The one registry of clients: the CLI, policies, formats, lint, `explain`, `watch` and the
`Assembler` ask it for a client; none of them compares client names.

Built-in clients are registered here; tests (and plugins) add their own with `register()` and
remove them with `unregister()`. This table and the parse memo are the only module-level state
of the package.
"""

from __future__ import annotations

from typing import Any

from .. import codes
from ..codes import Code
from ..errors import PolicyError
from . import bootstrap, claude_code, codex, copilot, cursor, gemini
from .base import Client

_BUILT_IN: tuple[Client[Any], ...] = (
    claude_code.CLIENT,
    bootstrap.CLIENT,
    codex.CLIENT,
    gemini.CLIENT,
    cursor.CLIENT,
    copilot.CLIENT,
)
_CLIENTS: dict[str, Client[Any]] = {client.name: client for client in _BUILT_IN}
# Every diagnostic code by its `CTXnnn`: the shared ones and the registered clients' own.
_CODES: dict[str, Code] = {
    entry.code: entry
    for entry in (*codes.CATALOGUE, *(c for client in _BUILT_IN for c in client.own_codes))
}


def get(name: str) -> Client[Any]:
    """The client called `name` (a policy loaded from TOML was checked against `names()`; a
    `Policy` built in code may name anything)."""
    client = _CLIENTS.get(name)
    if client is None:
        known = ", ".join(_CLIENTS)
        raise PolicyError(f"{name}: no such client; a policy's client is one of {known}")
    return client


def names() -> tuple[str, ...]:
    return tuple(_CLIENTS)


def clients() -> tuple[Client[Any], ...]:
    return tuple(_CLIENTS.values())


def home_variables() -> tuple[str, ...]:
    """The environment variables that move a registered agent's home directory."""
    return tuple(dict.fromkeys(n for client in _CLIENTS.values() for n in client.home_variables))


def catalogue() -> tuple[Code, ...]:
    """Every diagnostic code, in code order: the shared ones (`assembler.codes`) and each
    registered client's own (`Client.own_codes`)."""
    return tuple(sorted(_CODES.values(), key=lambda entry: entry.code))


def lint_codes() -> tuple[Code, ...]:
    """The codes lint reports, in code order."""
    return tuple(entry for entry in catalogue() if entry.lint is not None)


def lookup(code: str) -> Code:
    """The catalogue entry of `code` (`KeyError` when there is none)."""
    return _CODES[code]


def register(client: Client[Any]) -> None:
    """Add a client; its name and the codes of its own must be new."""
    if client.name in _CLIENTS:
        raise ValueError(f"a client called {client.name!r} is registered already")
    taken = [entry.code for entry in client.own_codes if entry.code in _CODES]
    if taken:
        raise ValueError(f"{client.name}: code {taken[0]} is another's; number its codes anew")
    _CLIENTS[client.name] = client
    _CODES.update((entry.code, entry) for entry in client.own_codes)


def unregister(name: str) -> None:
    """Remove a client added with `register()` (built-in ones stay)."""
    if any(client.name == name for client in _BUILT_IN):
        raise ValueError(f"{name!r} is built in and cannot be removed")
    client = _CLIENTS.pop(name, None)
    for entry in client.own_codes if client is not None else ():
        _CODES.pop(entry.code, None)
