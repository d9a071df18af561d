"""The one registry of clients: the CLI, policies, formats, lint, `explain`, `watch` and the
`Assembler` ask it for a client; none of them compares client names.

Built-in clients are registered here; tests (and plugins) add their own with `register()` and
remove them with `unregister()`. This table and the parse memo are the only module-level state
of the package.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
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
# The client a project without a configuration of its own is assembled for.
_DEFAULT = claude_code.CLIENT


def _codes_of(clients: Iterable[Client[Any]]) -> dict[str, Code]:
    """Every diagnostic code by its `CTXnnn`: the shared ones and `clients`' own."""
    return {e.code: e for e in (*codes.CATALOGUE, *(e for c in clients for e in c.own_codes))}


_CODES = _codes_of(_BUILT_IN)


def get(name: str) -> Client[Any]:
    """The client called `name` (a policy loaded from TOML was checked against `names()`; a
    `Policy` built in code may name anything)."""
    client = _CLIENTS.get(name)
    if client is None:
        known = ", ".join(_CLIENTS)
        raise PolicyError(f"{name}: no such client; a policy's client is one of {known}")
    return client


def default_policy() -> str:
    """The policy a project without a configuration of its own runs with: the default
    client's (`Client.default_policy`)."""
    return str(_DEFAULT.default_policy)


def names() -> tuple[str, ...]:
    return tuple(_CLIENTS)


def clients() -> tuple[Client[Any], ...]:
    return tuple(_CLIENTS.values())


def default_managed_dir(platform: str = sys.platform) -> Path:
    """The machine's managed policy directory (`Request.managed_dir` when none is given): the
    first registered client's that reads one (`Client.managed_dir`); without one, the null
    device, which holds nothing to read."""
    found = (client.managed_dir(platform) for client in _CLIENTS.values())
    return next((d for d in found if d is not None), Path(os.devnull))


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
    taken = [e.code for e in client.own_codes if _CODES.get(e.code, e) != e]
    if taken:
        raise ValueError(f"{client.name}: code {taken[0]} is another's; number its codes anew")
    _CLIENTS[client.name] = client
    _CODES.update((entry.code, entry) for entry in client.own_codes)


def unregister(name: str) -> None:
    """Remove a client added with `register()` (built-in ones stay)."""
    if any(client.name == name for client in _BUILT_IN):
        raise ValueError(f"{name!r} is built in and cannot be removed")
    if _CLIENTS.pop(name, None) is not None:
        _CODES.clear()
        _CODES.update(_codes_of(_CLIENTS.values()))
