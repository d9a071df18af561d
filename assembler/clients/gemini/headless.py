"""Gemini CLI run headless (`gemini -p`) against a local stand-in for the Gemini API, and where
its requests carry the context files (SPEC section 4b, "Running a real client headless,
offline"; observed on 0.61).

The global file ends the system instruction, the project's files are in the first user
content (SPEC section 5); a `read_file` call appends the files it discovers to the tool's
output (just-in-time context).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...discovery.jsonfile import json_object
from ..headless import (
    Body,
    Headless,
    Launch,
    Mirrored,
    Part,
    Relocation,
    Reply,
    between,
    entries,
    json_reply,
    stream_reply,
)
from .settings import GEMINI_DIR, loading_settings, strip_json_comments

MODEL = "gemini-2.5-pro"
SETTINGS = f"{GEMINI_DIR}/settings.json"
# What the program's user settings add to the user's: the API key sign-in, and no
# statistics, telemetry or update checks (nothing leaves the machine).
_OURS: dict[str, dict[str, Any]] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False, "logPrompts": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
}
# The program's own switches, a second wall behind the mirror: only an MCP server of a name
# none has may start, no extension loads, and telemetry goes nowhere by the variables that
# win over every settings file: its exporter at a closed port of the loopback, its file
# /dev/null, OpenTelemetry's SDK off. (Observed on 0.61, tests/verify/test_hostile.py: with
# `GEMINI_TELEMETRY_ENABLED=false` it still exported traces, logs and metrics to a
# workspace's `otlpEndpoint`, so that variable is not used.) Its hooks and tool
# discovery command have no such switch: the mirror alone keeps them out. (Restricted mode,
# which ignores a workspace's settings, also stops loading its GEMINI.md files: it cannot be
# used to check them.) The mirror is ctxasm's own folder, so the program is told to trust it.
_WALL_ARGV = ("--allowed-mcp-server-names", "ctxasm-verify-none", "--extensions", "none")
_WALL_ENVIRON = {
    "GEMINI_CLI_TRUST_WORKSPACE": "true",
    "GEMINI_TELEMETRY_LOG_PROMPTS": "false",
    "GEMINI_TELEMETRY_TARGET": "local",
    "GEMINI_TELEMETRY_OTLP_ENDPOINT": "http://127.0.0.1:9",  # a port where nothing listens
    "GEMINI_TELEMETRY_OUTFILE": "/dev/null",
    "OTEL_SDK_DISABLED": "true",
}
# Files of a folder that configure the program (`.env` sets its variables; extensions bring
# MCP servers, hooks and commands): never in the mirror.
_NEVER = (".env",)
_EXTENSIONS = "extensions"
_GLOBAL = ("# Contextual Instructions (GEMINI.md)\n", "</loaded_context>")
_PROJECT = ("<loaded_context>\n<project_context>\n", "</project_context>\n</loaded_context>")
_ENTRY = re.compile(r"(?:^|\n)--- Context from: (?P<path>[^\n]+?) ---\n")


class GeminiHeadless(Headless):
    binary = "gemini"
    format = "gemini"
    kept = ("systemInstruction", "contents")

    def __init__(self, discovered: tuple[str, str]) -> None:
        """`discovered`: the lines around the files a read discovers (just-in-time context)."""
        self._discovered = discovered

    def launch(
        self, base_url: str, home: Callable[[str], bytes | None], cwd: Callable[[str], bytes | None]
    ) -> Launch:
        return Launch(
            ("-p", "hello", "-m", MODEL, *_WALL_ARGV),
            {
                "GEMINI_API_KEY": "ctxasm-verify-not-a-key",
                "GOOGLE_GEMINI_BASE_URL": base_url,
                **_WALL_ENVIRON,
            },
            {SETTINGS: json.dumps(_merged(home(SETTINGS)), indent=2).encode()},
        )

    def mirrored(self, names: Sequence[str], data: bytes, where: Relocation) -> Mirrored:
        for name in names:
            parts = name.split(os.sep)
            if parts[-1] in _NEVER:
                return Mirrored(None, ("its variables",))
            if GEMINI_DIR in parts[:-1] and _EXTENSIONS in parts[parts.index(GEMINI_DIR) :]:
                return Mirrored(None, ("an extension",))
        if not any(n.endswith(os.sep + SETTINGS) for n in names):
            return Mirrored(data)
        settings = _object(data)
        if settings is None:  # ctxasm takes no key from it: nor may the program
            return Mirrored(b"{}", ("all of it: it is no JSON object",))
        kept = loading_settings(settings)
        return Mirrored(
            json.dumps(kept, indent=2).encode(), tuple(k for k in settings if k not in kept)
        )

    def is_turn(self, path: str, body: Body) -> bool:
        return ":streamGenerateContent" in path.split("?")[0] and bool(body.get("tools"))

    def answer(self, path: str, body: Body, read: str | None) -> Reply:
        route = path.split("?")[0]
        if route.endswith(":countTokens"):
            return json_reply({"totalTokens": 1})
        if not route.endswith(("generateContent", "GenerateContent")):
            return json_reply({"error": {"code": 404, "message": "not here"}}, 404)
        part: dict[str, Any] = {"text": "ok"}
        if read is not None and self.is_turn(path, body):
            part = {"functionCall": {"name": "read_file", "args": {"file_path": read}}}
        reply = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 1,
                "candidatesTokenCount": 1,
                "totalTokenCount": 2,
            },
        }
        return stream_reply([(None, reply)]) if ":stream" in route else json_reply(reply)

    def start_text(self, body: Body) -> str:
        system = body.get("systemInstruction")
        first = _contents(body)[:1]
        return "\n\n".join(
            _part_texts(system.get("parts") if isinstance(system, dict) else None)
            + _part_texts(first[0].get("parts") if first else None)
        )

    def read_text(self, body: Body) -> str:
        last = _contents(body)[-1:]
        out = []
        for part in last[0].get("parts", []) if last else []:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                result = response.get("response")
                output = result.get("output") if isinstance(result, dict) else None
                out.append(output if isinstance(output, str) else json.dumps(result))
        return "\n\n".join(out)

    def start_parts(self, text: str) -> tuple[Part, ...]:
        parts: list[Part] = []
        for opening, closing, frame in (
            (*_GLOBAL, "(the heading of the global context)"),
            (*_PROJECT, "(the opening of the project context)"),
        ):
            for start, end in between(text, opening, closing)[:1]:
                parts += _split(text[start:end], frame)
        return tuple(parts)

    def read_parts(self, text: str) -> tuple[Part, ...]:
        parts: list[Part] = []
        for start, end in between(text, *self._discovered):
            parts += _split(text[start:end], "(the opening of the discovered context)")
        return tuple(parts)


def _split(region: str, frame: str) -> tuple[Part, ...]:
    starts = [(m.start(), m.group("path")) for m in _ENTRY.finditer(region)]
    return entries(region, starts, frame)


def _object(data: bytes | None) -> dict[str, Any] | None:
    """A settings file's JSON object, read as the program reads it (None: not there, or not
    one)."""
    return json_object(data, strip_json_comments)[0] if data is not None else None


def _merged(data: bytes | None) -> dict[str, Any]:
    """The user's settings with ours laid over them (a file that is no JSON object: ours)."""
    settings = _object(data) or {}
    for key, values in _OURS.items():
        section = settings.get(key)
        settings[key] = _deep(section if isinstance(section, dict) else {}, values)
    return settings


def _deep(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        inner = out.get(key)
        out[key] = (
            _deep(inner, value) if isinstance(value, Mapping) and isinstance(inner, dict) else value
        )
    return out


def _contents(body: Body) -> list[dict[str, Any]]:
    contents = body.get("contents")
    return [c for c in contents if isinstance(c, dict)] if isinstance(contents, list) else []


def _part_texts(parts: object) -> list[str]:
    if not isinstance(parts, list):
        return []
    return [str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
