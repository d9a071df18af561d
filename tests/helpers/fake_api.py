"""A small local stand-in for the Anthropic and OpenAI HTTP APIs, for the SDK integration tests.

It listens on 127.0.0.1 (a free port), records every request exactly as the SDK sent it
(path, headers, JSON body) and answers with scripted, well-formed responses, so the real
`anthropic` and `openai` clients run end to end without a network.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

Reply = Callable[[str, dict[str, Any]], dict[str, Any]]


class Recorded(NamedTuple):
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def anthropic_text(text: str, model: str = "claude-test") -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 2},
    }


def anthropic_tool_use(name: str, tool_input: dict[str, Any], call_id: str) -> dict[str, Any]:
    reply = anthropic_text("")
    reply["content"] = [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}]
    reply["stop_reason"] = "tool_use"
    return reply


def openai_chat(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


def openai_response(text: str) -> dict[str, Any]:
    return {
        "id": "resp_test",
        "object": "response",
        "created_at": 0,
        "model": "gpt-test",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": "msg_test",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def default_reply(path: str, body: dict[str, Any]) -> dict[str, Any]:
    if path.endswith("/messages"):
        return anthropic_text("ok")
    if path.endswith("/chat/completions"):
        return openai_chat("ok")
    return openai_response("ok")


class FakeAPI:
    def __init__(self, reply: Reply = default_reply) -> None:
        self.requests: list[Recorded] = []
        self.reply = reply
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                api.requests.append(Recorded(self.path, dict(self.headers), body))
                payload = json.dumps(api.reply(self.path, body)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return

        return Handler

    @contextmanager
    def running(self) -> Iterator[FakeAPI]:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
            thread.join(timeout=5)
