"""The stand-in provider over real HTTP on 127.0.0.1: each client's wire format (the
streamed events a program parses), reads scripted in order, side requests answered and
kept apart, and a body over the limit refused, never kept."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from assembler.clients import registry
from assembler.verify import provider as provider_module
from assembler.verify.provider import Provider


def _post(
    base: str, path: str, body: bytes, headers: dict[str, str] | None = None
) -> tuple[int, str, bytes]:
    host, port = base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request(
        "POST", path, body=body, headers={"Content-Type": "application/json", **(headers or {})}
    )
    reply = connection.getresponse()
    result = reply.status, reply.getheader("Content-Type") or "", reply.read()
    connection.close()
    return result


def _events(data: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(line[6:]) for line in data.decode().splitlines() if line.startswith("data: ")
    ]


def test_a_turn_gets_the_read_then_a_text() -> None:
    headless = registry.get("claude-code").headless
    assert headless is not None
    turn = {
        "model": "m",
        "stream": True,
        "tools": [{"name": "Read"}],
        "messages": [{"role": "user", "content": "hi"}],
    }
    with Provider(headless, ["/p/a.ts", "/p/b.ts"]) as stand_in:
        answers = [
            _post(stand_in.base_url, "/v1/messages?beta=true", json.dumps(turn).encode())
            for _ in range(3)
        ]
        side = _post(
            stand_in.base_url,
            "/v1/messages?beta=true",
            json.dumps({"model": "m", "messages": []}).encode(),
        )
        kept = stand_in.exchanges()
    assert [a[:2] for a in answers] == [(200, "text/event-stream")] * 3
    calls = [
        json.loads(e["delta"]["partial_json"])
        for a in answers
        for e in _events(a[2])
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"
    ]
    assert calls == [{"file_path": "/p/a.ts"}, {"file_path": "/p/b.ts"}]
    assert [e["type"] for e in _events(answers[2][2])][-1] == "message_stop"
    assert side[0] == 200 and json.loads(side[2])["content"] == [{"type": "text", "text": "ok"}]
    assert [(e.turn, e.read) for e in kept] == [
        (True, "/p/a.ts"),
        (True, "/p/b.ts"),
        (True, None),
        (False, None),
    ]


@pytest.mark.parametrize(
    ("client", "path", "body", "parse"),
    [
        ("codex", "/v1/responses", {"input": [], "stream": True}, "response.completed"),
        (
            "gemini",
            "/v1beta/models/m:streamGenerateContent?alt=sse",
            {"tools": [{}], "contents": []},
            "candidates",
        ),
    ],
)
def test_each_wire_format_streams_a_whole_answer(
    client: str, path: str, body: dict[str, Any], parse: str
) -> None:
    headless = registry.get(client).headless
    assert headless is not None
    with Provider(headless) as stand_in:
        status, kind, data = _post(stand_in.base_url, path, json.dumps(body).encode())
        assert [e.turn for e in stand_in.exchanges()] == [True]
    assert (status, kind) == (200, "text/event-stream")
    assert parse in data.decode()
    assert all(isinstance(e, dict) for e in _events(data))


def test_a_chunked_body_is_read() -> None:
    headless = registry.get("codex").headless
    assert headless is not None
    payload = json.dumps({"input": [{"role": "user", "content": "x" * 5000}]}).encode()
    chunked = (
        b"".join(
            b"%x\r\n%s\r\n" % (len(payload[i : i + 1000]), payload[i : i + 1000])
            for i in range(0, len(payload), 1000)
        )
        + b"0\r\n\r\n"
    )
    with Provider(headless) as stand_in:
        status, _, _ = _post(
            stand_in.base_url, "/v1/responses", chunked, {"Transfer-Encoding": "chunked"}
        )
        kept = stand_in.exchanges()
    assert status == 200
    assert kept[0].body == json.loads(payload)


def test_a_body_over_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    headless = registry.get("codex").headless
    assert headless is not None
    monkeypatch.setattr(provider_module, "MAX_BODY", 100)
    with Provider(headless) as stand_in:
        status, _, _ = _post(stand_in.base_url, "/v1/responses", b"{" + b" " * 200 + b"}")
        assert (status, stand_in.exchanges(), stand_in.refused) == (413, (), 1)


def test_it_listens_on_the_loopback_only() -> None:
    headless = registry.get("codex").headless
    assert headless is not None
    with Provider(headless) as stand_in:
        assert stand_in.base_url.startswith("http://127.0.0.1:")
