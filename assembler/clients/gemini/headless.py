"""Gemini CLI run headless (`gemini -p`) against a local stand-in for the Gemini API, and where
its requests carry the context files (SPEC section 4b, "Running a real client headless,
offline"; observed on 0.61).

The global file ends the system instruction, the project's files are in the first user
content (SPEC section 5); a `read_file` call appends the files it discovers to the tool's
output (just-in-time context).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..headless import (
    Body,
    Headless,
    Launch,
    Part,
    Reply,
    between,
    entries,
    json_reply,
    stream_reply,
)
from .settings import GEMINI_DIR

MODEL = "gemini-2.5-pro"
SETTINGS = f"{GEMINI_DIR}/settings.json"
# What the temporary home's settings add to the user's: the API key sign-in, and no
# statistics, telemetry or update checks (nothing leaves the machine).
_OURS: dict[str, dict[str, Any]] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
}
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

    def launch(self, base_url: str, home: Callable[[str], bytes | None]) -> Launch:
        return Launch(
            ("-p", "hello", "-m", MODEL),
            {
                "GEMINI_API_KEY": "ctxasm-verify-not-a-key",
                "GOOGLE_GEMINI_BASE_URL": base_url,
                "GEMINI_CLI_TRUST_WORKSPACE": "true",
            },
            {SETTINGS: json.dumps(_merged(home(SETTINGS)), indent=2).encode()},
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


def _merged(data: bytes | None) -> dict[str, Any]:
    """The user's settings with ours laid over them (a file that is no JSON object: ours)."""
    try:
        settings = json.loads(data) if data is not None else {}
    except ValueError:
        settings = {}
    settings = settings if isinstance(settings, dict) else {}
    for key, values in _OURS.items():
        section = settings.get(key)
        settings[key] = _deep({} if not isinstance(section, dict) else section, values)
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
