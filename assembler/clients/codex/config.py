"""Codex CLI's settings that decide what it loads: `CODEX_HOME/config.toml`, read bounded.

Keys (openai/codex `config_toml.rs`): `project_doc_max_bytes` (a non-negative integer,
default 32,768), `project_doc_fallback_filenames` (a list of names tried after
`AGENTS.override.md` and `AGENTS.md`; empty names and repeats are skipped) and
`project_root_markers` (a list of names; default `[".git"]`; `[]`: cwd alone). A file that
cannot be read or parsed, or a value of the wrong type, is reported (CTX903) and the default
is used, so a run never fails on a user's Codex configuration.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from ...discovery.context import Context
from ...discovery.disk import Disk
from ...discovery.reader import ReadStatus
from ...display import shown
from ...parsing.parse import toml_document
from ..walk import DEFAULT_MARKERS, MAX_MARKERS, usable_marker

PRIMARY = "AGENTS.md"
OVERRIDE = "AGENTS.override.md"
DEFAULT_MAX_BYTES = 32 * 1024
CONFIG_BYTES = 1024 * 1024  # a config.toml is a page; Codex's own grow to a few KiB
MAX_NAMES = 64  # fallback names tried in each directory


class CodexConfig(NamedTuple):
    home: Path  # CODEX_HOME
    max_bytes: int = DEFAULT_MAX_BYTES
    fallbacks: tuple[str, ...] = ()
    markers: tuple[str, ...] = DEFAULT_MARKERS

    @property
    def names(self) -> tuple[str, ...]:
        """The names tried in each directory, in Codex's order."""
        return tuple(dict.fromkeys((OVERRIDE, PRIMARY, *self.fallbacks)))


def codex_home(ctx: Context) -> Path:
    """`CODEX_HOME`, else `~/.codex`."""
    return ctx.environ_path("CODEX_HOME") or ctx.home / ".codex"


def read_config(ctx: Context, disk: Disk) -> tuple[CodexConfig, list[tuple[str, str]]]:
    """The settings, and `(path, problem)` for each thing that could not be used."""
    home = codex_home(ctx)
    path = str(home / "config.toml")
    document, problem = _document(path, disk)
    config = CodexConfig(home)
    if document is None:
        return config, [(path, problem)] if problem else []
    problems: list[tuple[str, str]] = []

    def bad(key: str, value: object, wanted: str) -> None:
        problems.append(
            (path, f"{key} must be {wanted}, not {shown(repr(value), 80)}; Codex refuses the file, ctxasm uses the default")
        )  # fmt: skip

    size = document.get("project_doc_max_bytes")
    if size is not None:
        if type(size) is int and size >= 0:
            config = config._replace(max_bytes=size)
        else:
            bad("project_doc_max_bytes", size, "a non-negative integer")
    names = _names(document, "project_doc_fallback_filenames", bad)
    if names is not None:
        config = config._replace(fallbacks=tuple(n for n in names if n)[:MAX_NAMES])
    markers = _names(document, "project_root_markers", bad)
    if markers is not None:
        refused = [m for m in markers[:MAX_MARKERS] if not usable_marker(m)]
        if refused:
            problems.append(
                (path, f"project_root_markers {shown(repr(refused[0]), 80)} is not a name in a directory; ctxasm ignores it")
            )  # fmt: skip
        config = config._replace(markers=tuple(markers[:MAX_MARKERS]))
    return config, problems


# The keys of `config.toml` that change what the client loads (`read_config`): all a copy of
# it keeps where `ctxasm verify` runs the program. Everything else (MCP servers, `notify`,
# model providers, profiles, the shell environment, project trust) may name a program or a
# host, and is left out.
LOADING_KEYS = ("project_doc_max_bytes", "project_doc_fallback_filenames", "project_root_markers")


def loading_config(data: bytes) -> tuple[bytes, tuple[str, ...]] | None:
    """`config.toml` reduced to `LOADING_KEYS`, written as TOML, and the top-level keys left
    out; None when it does not parse (then neither Codex nor ctxasm takes a key from it)."""
    try:
        document = toml_document(data)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError, ValueError):
        return None
    lines = [f"{key} = {_toml(document[key])}\n" for key in LOADING_KEYS if key in document]
    return "".join(lines).encode(), tuple(k for k in document if k not in LOADING_KEYS)


def _toml(value: object) -> str:
    """One value as TOML writes it (what `tomllib` returned: any of its types)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        # JSON's string escapes are TOML's, but for DEL, which TOML escapes too.
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return str(value) if hasattr(value, "isoformat") else json.dumps(str(value))


def _names(document: dict[str, Any], key: str, bad: Any) -> list[str] | None:
    value = document.get(key)
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    bad(key, value, "a list of strings")
    return None


def _document(path: str, disk: Disk) -> tuple[dict[str, Any] | None, str]:
    """The parsed file, or None and why not ("" when there is no file)."""
    result = disk.read(path, CONFIG_BYTES)
    if result.status in (ReadStatus.MISSING, ReadStatus.BROKEN_LINK):
        return None, ""
    if result.status is ReadStatus.TOO_LARGE:
        return (
            None,
            f"is {result.size:,} bytes, over the {CONFIG_BYTES:,}-byte limit; it is ignored",
        )
    if not result.ok:
        return None, f"cannot be read ({result.detail or result.status.value}); it is ignored"
    try:
        return toml_document(result.data), ""
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        return (
            None,
            f"invalid TOML ({shown(str(err), 120)}); Codex refuses it, ctxasm uses the defaults",
        )
    except (RecursionError, ValueError) as err:
        return (
            None,
            f"invalid TOML ({shown(str(err), 120) or 'nested too deeply'}); ctxasm uses the defaults",
        )
