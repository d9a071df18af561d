"""Gemini CLI's `context.fileName`: which file names it loads as context, from its settings.

`~/.gemini/settings.json` (user) and `<cwd>/.gemini/settings.json` (workspace; Gemini CLI's
workspace is the directory it starts in) are read bounded (`SETTINGS_BYTES`); the workspace
value wins over the user's. A value is a string or a list of strings, order kept; anything
else, or a file that is not a JSON object, is reported (CTX915) and ignored (the user's
value, else the default `GEMINI.md`, applies). A name is joined to directories, so an absolute name, one with `..`, or past 64
names or 255 characters is refused. Gemini CLI accepts comments in settings.json; ctxasm
reads plain JSON and reports a file with comments instead of guessing.
"""

from __future__ import annotations

from pathlib import Path

from ...discovery.context import Context
from ...discovery.disk import Disk
from ...discovery.jsonfile import read_json
from ...display import shown
from ..walk import usable_marker

GEMINI_DIR = ".gemini"
DEFAULT_NAME = "GEMINI.md"
SETTINGS_BYTES = 1024 * 1024
MAX_NAMES = 64


# The keys of a settings file that change what the client loads (`context_file_names`): all a
# copy of the file keeps where `ctxasm verify` runs the program. Everything else (hooks, MCP
# servers, tool discovery and call commands, telemetry, extensions, proxies) may name a
# program or a host, and is left out.
def loading_settings(data: dict[str, object]) -> dict[str, object]:
    """The part of a settings file that changes what loads: `context.fileName`."""
    context = data.get("context")
    if isinstance(context, dict) and "fileName" in context:
        return {"context": {"fileName": context["fileName"]}}
    return {}


def context_file_names(ctx: Context, disk: Disk) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
    """The names, and `(path, problem)` for each setting that could not be used."""
    problems: list[tuple[str, str]] = []
    chosen: tuple[str, ...] = (DEFAULT_NAME,)
    layers = [ctx.home / GEMINI_DIR / "settings.json", ctx.cwd / GEMINI_DIR / "settings.json"]
    if layers[0] == layers[1]:  # started in the home directory: one file
        layers.pop()
    for path in layers:
        names = _names_in(path, disk, problems)
        if names is not None:
            chosen = names
    return chosen, problems


def _names_in(path: Path, disk: Disk, problems: list[tuple[str, str]]) -> tuple[str, ...] | None:
    data, problem = read_json(path, disk, SETTINGS_BYTES, strip_json_comments)
    if data is None:
        if problem:
            problems.append((str(path), f"{problem} (Gemini CLI uses the default GEMINI.md)"))
        return None
    context = data.get("context")
    if context is None:
        return None
    value = context.get("fileName") if isinstance(context, dict) else None
    if value is None:
        if not isinstance(context, dict):
            problems.append((str(path), "context must be an object; its fileName is ignored"))
        return None
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        problems.append(
            (str(path), f"context.fileName must be a file name or a non-empty list of them, not {shown(repr(value), 80)}; it is ignored")
        )  # fmt: skip
        return None
    refused = [n for n in names if not usable_marker(n)]
    if refused or len(names) > MAX_NAMES:
        what = (
            f"{shown(repr(refused[0]), 80)} is not a file name in a directory"
            if refused
            else f"over {MAX_NAMES} names"
        )
        problems.append((str(path), f"context.fileName {what}; ctxasm ignores it"))
    kept = tuple(dict.fromkeys(n for n in names[:MAX_NAMES] if usable_marker(n)))
    return kept or None


def strip_json_comments(text: str) -> str:
    """`strip-json-comments`: each comment replaced by spaces (line breaks kept, so positions
    in error messages stay right), strings left alone. One pass, no backtracking."""
    out: list[str] = []
    i, n, start = 0, len(text), 0
    in_string = False
    while i < n:
        char = text[i]
        if in_string:
            if char == "\\":
                i += 2
                continue
            in_string = char != '"'
        elif char == '"':
            in_string = True
        elif text.startswith("//", i) or text.startswith("/*", i):
            end = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2)
            end = n if end < 0 else end + (2 if text[i + 1] == "*" else 0)
            out.append(text[start:i])
            out.append("".join(c if c in "\r\n" else " " for c in text[i:end]))
            i = start = end
            continue
        i += 1
    out.append(text[start:])
    return "".join(out)
