"""The stand-in provider: an HTTP server on 127.0.0.1 (a free port) that answers an agent's
API requests as its client says (`Headless.answer`) and keeps each request it got.

Turns of the conversation (`Headless.is_turn`) are answered in order: while reads are left,
with a call of the agent's read tool on the next one; then with a short text that ends the
run. Bounded: a request body over `MAX_BODY` bytes, or more than `MAX_REQUESTS` requests, is
refused and counted, never kept.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, NamedTuple

from ..clients.headless import Body, Headless, Reply, json_reply

MAX_BODY = 64 * 1024 * 1024  # a request of a large context is a few megabytes
MAX_REQUESTS = 256  # one run makes a few; more is a client in a loop
_CHUNK_LINE = 1024


class Exchange(NamedTuple):
    """One request the stand-in kept: its path, its JSON body, whether it was a turn, the
    read its answer called for, and its headers (what verify's tests check for credentials)."""

    path: str
    body: Body
    turn: bool
    read: str | None
    headers: tuple[tuple[str, str], ...] = ()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, headless: Headless, reads: Sequence[str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.headless = headless
        self.reads = list(reads)
        self.lock = threading.Lock()
        self.exchanges: list[Exchange] = []
        self.refused = 0

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A request that broke off or could not be answered: counted, not printed."""
        with self.lock:
            self.refused += 1

    def answer(
        self, path: str, raw: bytes | None, headers: tuple[tuple[str, str], ...] = ()
    ) -> Reply:
        """Keep the request and answer it (a turn takes the next read, in order)."""
        body = _parsed(raw)
        with self.lock:
            if raw is None or len(self.exchanges) >= MAX_REQUESTS:
                self.refused += 1
                return json_reply({"error": {"message": "refused by ctxasm verify"}}, 413)
            turn = self.headless.is_turn(path, body)
            read = self.reads.pop(0) if turn and self.reads else None
            self.exchanges.append(Exchange(path, body, turn, read, headers))
        return self.headless.answer(path, body, read)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every answer has its length
    server: _Server

    def do_POST(self) -> None:
        headers = tuple((k, v) for k, v in self.headers.items())
        self._send(self.server.answer(self.path, self._body(), headers))

    def do_GET(self) -> None:
        self._send(json_reply({"error": {"message": "not served by ctxasm verify"}}, 404))

    def _body(self) -> bytes | None:
        """The request body, None when it is over `MAX_BODY` or malformed."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            return self._chunked()
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return None
        if not 0 <= length <= MAX_BODY:
            self.close_connection = True
            return None
        return self.rfile.read(length)

    def _chunked(self) -> bytes | None:
        out = bytearray()
        while True:
            line = self.rfile.readline(_CHUNK_LINE)
            try:
                size = int(line.split(b";")[0].strip() or b"x", 16)
            except ValueError:
                self.close_connection = True
                return None
            if size == 0:
                self.rfile.readline(_CHUNK_LINE)  # the blank line that ends the body
                return bytes(out)
            if len(out) + size > MAX_BODY:
                self.close_connection = True
                return None
            out += self.rfile.read(size)
            self.rfile.readline(_CHUNK_LINE)

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the requests are kept, not logged."""


def _parsed(raw: bytes | None) -> Body:
    try:
        body = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


class Provider:
    """The stand-in, serving in a thread while the `with` block runs."""

    def __init__(self, headless: Headless, reads: Sequence[str] = ()) -> None:
        self._server = _Server(headless, reads)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def exchanges(self) -> tuple[Exchange, ...]:
        with self._server.lock:
            return tuple(self._server.exchanges)

    @property
    def refused(self) -> int:
        return self._server.refused

    def __enter__(self) -> Provider:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
