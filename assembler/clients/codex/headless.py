"""Codex CLI run headless (`codex exec`) against a local stand-in for the OpenAI Responses
API, and where its request carries the instruction files (SPEC section 4b, "Running a real
client headless, offline"; observed on 0.171).

The provider is named on the command line (`-c`), so the user's `config.toml` is copied
untouched. The files are one user message, `# AGENTS.md instructions for <cwd>`; Codex loads
nothing when it reads a file, so there is no read to check.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence

from ..headless import (
    Body,
    Headless,
    Launch,
    Mirrored,
    Part,
    Relocation,
    Reply,
    json_reply,
    stream_reply,
    texts,
)
from .config import loading_config

MODEL = "gpt-5"
_PROVIDER = "ctxasm_verify"
_HEADER = "# AGENTS.md instructions"
_OPEN = "<INSTRUCTIONS>\n"
_CLOSE = "\n</INSTRUCTIONS>"


class CodexHeadless(Headless):
    binary = "codex"
    format = "codex"
    kept = ("input",)
    no_reads = "Codex loads nothing when it reads a file: there is no read to check"

    def __init__(self, separator: str) -> None:
        """`separator`: what Codex puts between the global and the project instructions."""
        self._separator = separator

    def launch(
        self, base_url: str, home: Callable[[str], bytes | None], cwd: Callable[[str], bytes | None]
    ) -> Launch:
        provider = (
            f'{{name="ctxasm verify", base_url={json.dumps(base_url + "/v1")}, '
            'wire_api="responses"}'
        )
        return Launch(
            (
                "exec", "--skip-git-repo-check",
                "-c", f'model_provider="{_PROVIDER}"',
                "-c", f"model_providers.{_PROVIDER}={provider}",
                "-c", f'model="{MODEL}"',
                "-c", "check_for_update_on_startup=false",
                "hello",
            ),
            {},
        )  # fmt: skip

    def mirrored(self, names: Sequence[str], data: bytes, where: Relocation) -> Mirrored:
        if any(os.path.basename(n) == ".env" for n in names):
            return Mirrored(None, ("its variables",))
        if not any(os.path.basename(n) == "config.toml" for n in names):
            return Mirrored(data)
        reduced = loading_config(data)
        if reduced is None:  # ctxasm takes no key from it: nor may the program
            return Mirrored(b"", ("all of it: it is no TOML",))
        return Mirrored(*reduced)

    def is_turn(self, path: str, body: Body) -> bool:
        return path.split("?")[0] == "/v1/responses"

    def answer(self, path: str, body: Body, read: str | None) -> Reply:
        if not self.is_turn(path, body):
            return json_reply({"error": {"message": "not here", "type": "not_found"}}, 404)
        message = {
            "type": "message", "role": "assistant", "id": "msg_ctxasm_verify",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}],
        }  # fmt: skip
        usage = {
            "input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
            "output_tokens_details": None, "total_tokens": 2,
        }  # fmt: skip
        return stream_reply(
            (name, {"type": name, **data})
            for name, data in (
                ("response.created", {"response": {"id": "resp_ctxasm_verify"}}),
                ("response.output_item.done", {"item": message}),
                ("response.completed", {"response": {"id": "resp_ctxasm_verify", "usage": usage}}),
            )
        )

    def start_text(self, body: Body) -> str:
        items = body.get("input")
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and item.get("role") == "user":
                for text in texts(item.get("content")):
                    if text.startswith(_HEADER):
                        return text
        return ""

    def read_text(self, body: Body) -> str:
        return ""

    def start_parts(self, text: str) -> tuple[Part, ...]:
        begin = text.find(_HEADER)
        opened = text.find(_OPEN, begin) if begin != -1 else -1
        if opened == -1:
            return ()
        closed = text.rfind(_CLOSE)
        inner_at = opened + len(_OPEN)
        inner = text[inner_at : closed if closed >= inner_at else len(text)]
        parts = [Part("(the heading: cwd and <INSTRUCTIONS>)", text[begin:inner_at], file=False)]
        user, sep, project = inner.partition(self._separator)
        if sep:
            parts += [Part("CODEX_HOME instructions", user), Part("(the separator)", sep, False)]
            parts.append(Part("project docs, root to cwd", project))
        else:
            parts.append(Part("instructions (CODEX_HOME or project docs)", inner))
        return tuple(parts)

    def read_parts(self, text: str) -> tuple[Part, ...]:
        return ()
