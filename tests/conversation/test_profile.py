"""`Conversation(profile=...)`: Claude Code's compaction (SPEC 4c) at 2.1.197 and 2.1.332,
driven through the real `anthropic` SDK against the local fake server: the whole request
resent with the summary instruction appended to the last user message, the continuation,
the instruction files re-read from disk, restored reads, re-injected skills, the lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import pytest

from assembler import assemble
from assembler.assembly import Assembly
from assembler.clients.claude_code.versions import MODELLED
from assembler.conversation import Conversation, ConversationError, Levels
from assembler.conversation.profile import with_instruction
from tests.helpers.fake_api import FakeAPI, anthropic_text
from tests.helpers.trees import build, git_init

OLD, NEW = MODELLED
SYSTEM = "You are a coding agent."
TOOLS: list[Any] = [
    {"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}}
]
SUMMARY_REPLY = "<analysis>my private notes</analysis>\n<summary>The user read a.txt.</summary>"


def _reply(path: str, body: dict[str, Any]) -> dict[str, Any]:
    last = body["messages"][-1]["content"]
    texts = [b.get("text", "") for b in last if isinstance(b, dict)]
    if any("nine sections" in t for t in texts):
        return anthropic_text(SUMMARY_REPLY)
    return anthropic_text("ok")


def _setup(tmp: Path, version: str) -> tuple[Path, Assembly]:
    repo = git_init(tmp / "repo")
    build(repo, {"CLAUDE.md": "Rule v1.\n"})
    a = assemble(
        repo, home=tmp / "home", managed_dir=tmp / "managed", environ={}, client_version=version
    )
    return repo, a


def _history(n_reads: int = 1) -> list[Any]:
    """A user asks, the model reads `n_reads` files (one call each), then answers."""
    messages: list[Any] = [{"role": "user", "content": "Read the files"}]
    for i in range(n_reads):
        call = {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {}}
        call["input"] = {"file_path": f"/w/f{i}.txt"}
        messages.append({"role": "assistant", "content": [call]})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": f"1\tfile {i}"}
        messages.append({"role": "user", "content": [result]})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
    return messages


def _summarizer(client: anthropic.Anthropic, seen: list[Any]) -> Any:
    """The caller's summariser: the request as given, with the conversation's system and tools."""

    def summarize(request: list[Any]) -> str:
        seen.append(request)
        reply = client.messages.create(
            model="claude-test", max_tokens=20_000, system=SYSTEM, tools=TOOLS, messages=request
        )
        return "".join(b.text for b in reply.content if b.type == "text")

    return summarize


def _conversation(
    tmp: Path, a: Assembly, client: anthropic.Anthropic, seen: list[Any], window: int | None
) -> Conversation:
    return Conversation(
        a,
        store_dir=tmp / "store",
        summarize=_summarizer(client, seen),
        profile=a.compaction_profile(window),
        levels=Levels(collapse=False),
    )


def _text(message: Any) -> str:
    content = message["content"]
    return (
        content if isinstance(content, str) else "\n".join(str(b.get("text", b)) for b in content)
    )


def test_manual_at_2_1_332_resends_the_whole_request_and_puts_the_summary_first(
    tmp_path: Path,
) -> None:
    repo, a = _setup(tmp_path, NEW)
    seen: list[Any] = []
    with FakeAPI(_reply).running() as api:
        client = anthropic.Anthropic(base_url=api.url, api_key="test", max_retries=0)
        conv = _conversation(tmp_path, a, client, seen, 200_000)
        history = _history(1)
        conv.prepare(history)
        (repo / "CLAUDE.md").write_text("Rule v2.\n", encoding="utf-8")  # edited since start
        conv.invoked_skill("deploy", "Run make deploy.")
        done = conv.compact_now(history, "Focus on the files read.")
        client.messages.create(
            model="claude-test", max_tokens=100, system=SYSTEM, tools=TOOLS,
            messages=[*done.messages, {"role": "user", "content": "next"}],
        )  # fmt: skip
    summary_body, after_body = api.requests[0].body, api.requests[1].body
    # The compaction request: the whole conversation, system and tools, the instruction
    # appended to the last user message (a new one: the last message is the model's).
    assert summary_body["system"] == SYSTEM and summary_body["tools"] == TOOLS
    profile = a.compaction_profile(200_000)
    assert seen[0] == with_instruction(history, profile.instruction("Focus on the files read."))
    instruction = summary_body["messages"][-1]["content"][-1]["text"]
    assert "Additional Instructions:\nFocus on the files read.\n\n" in instruction
    assert instruction.endswith(profile.instruction_tail)
    assert "Count only turns with the user role" in instruction  # 2.1.332's section 6
    # The continuation: the summary alone first, <analysis> dropped; the context re-read.
    messages = after_body["messages"]
    first = _text(messages[0])
    assert first.startswith(profile.continuation) and "The user read a.txt." in first
    assert "my private notes" not in first and "Tools used before this summary: Read." in first
    # Then (2.1.332, manual, as recorded) the kept reply, the restored read and skills, and
    # the context.
    assert messages[1] == {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}
    assert '{"file_path": "/w/f0.txt"}' in _text(messages[2]) and "1\tfile 0" in _text(messages[2])
    assert "### deploy\n\nRun make deploy." in _text(messages[3])
    assert "Rule v2." in _text(messages[4]) and "Rule v1." not in _text(messages[4])
    assert messages[5] == {"role": "user", "content": "next"}
    events = [str(e) for e in done.events]
    assert "[Compress] Instruction context re-read from disk: 1 sources" in events
    assert events[-2:] == [
        "[Compress] Restored as reads: /w/f0.txt",
        "[Compress] Skills re-injected: deploy",
    ]


def test_auto_at_2_1_197_rereads_the_instructions_at_the_next_user_turn(tmp_path: Path) -> None:
    repo, a = _setup(tmp_path, OLD)
    seen: list[Any] = []
    with FakeAPI(_reply).running() as api:
        client = anthropic.Anthropic(base_url=api.url, api_key="test", max_retries=0)
        conv = _conversation(tmp_path, a, client, seen, 200_000)
        assert conv.threshold == 167_000
        conv.record(170_000)
        history = [*_history(1), {"role": "user", "content": "go on"}]
        first = conv.prepare(history)
        assert first.compaction is not None
        assert all("Rule v1." not in _text(m) for m in first.messages)  # not in this request
        assert "[Compress] Instruction context: re-read at the next user turn" in map(
            str, first.events
        )
        (repo / "CLAUDE.md").write_text("Rule v2.\n", encoding="utf-8")
        call = {"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {"file_path": "x"}}
        result = {"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}
        same_turn = [
            *first.messages,
            {"role": "assistant", "content": [call]},
            {"role": "user", "content": [result]},
        ]
        tool_turn = conv.prepare(same_turn)  # a tool result: still the same turn
        assert all("Rule v" not in _text(m) for m in tool_turn.messages)
        later = conv.prepare([*tool_turn.messages, {"role": "assistant", "content": "ok"},
                              {"role": "user", "content": "and now?"}])  # fmt: skip
        client.messages.create(
            model="claude-test", max_tokens=100, system=SYSTEM, messages=later.request
        )
    last = api.requests[-1].body["messages"][-1]["content"]
    assert last[0]["text"].startswith("<system-reminder>\n") and "Rule v2." in last[0]["text"]
    assert last[1] == {"type": "text", "text": "and now?"}
    assert "Count only turns with the user role" not in _text(seen[0][-1])  # 2.1.197


def test_auto_at_2_1_332_sends_the_reads_then_the_context_with_the_summary(
    tmp_path: Path,
) -> None:
    _, a = _setup(tmp_path, NEW)
    with FakeAPI(_reply).running() as api:
        client = anthropic.Anthropic(base_url=api.url, api_key="test", max_retries=0)
        conv = _conversation(tmp_path, a, client, [], 200_000)
        conv.record(170_000)
        done = conv.prepare([*_history(3), {"role": "user", "content": "go on"}])
    # f2's read is among the kept messages: only f1 and f0 come back, newest first.
    assert "/w/f1.txt" in _text(done.messages[0]) and "/w/f0.txt" in _text(done.messages[1])
    done = done._replace(messages=done.messages[1:])
    second = done.messages[1]["content"]
    assert "Rule v1." in second[0]["text"] and second[1]["text"].startswith(
        a.compaction_profile(200_000).continuation
    )


def test_no_window_means_no_threshold_only_the_reactive_path(tmp_path: Path) -> None:
    _, a = _setup(tmp_path, NEW)
    with FakeAPI(_reply).running() as api:
        client = anthropic.Anthropic(base_url=api.url, api_key="test", max_retries=0)
        conv = _conversation(tmp_path, a, client, [], None)
        conv.record(10**9)
        history = [*_history(1), {"role": "user", "content": "go on"}]
        assert conv.prepare(history).compaction is None
        done = conv.prompt_too_long(history)
    assert done.compaction is not None and len(api.requests) == 1


def test_only_the_newest_five_reads_are_restored(tmp_path: Path) -> None:
    _, a = _setup(tmp_path, NEW)
    with FakeAPI(_reply).running() as api:
        client = anthropic.Anthropic(base_url=api.url, api_key="test", max_retries=0)
        conv = _conversation(tmp_path, a, client, [], 200_000)
        done = conv.compact_now(_history(7))
    restored = [m for m in done.messages if "A Read tool call" in _text(m)]
    assert [r for r in restored if "f0.txt" in _text(r) or "f1.txt" in _text(r)] == []
    assert len(restored) == 5 and "f6.txt" in _text(restored[0])  # newest first
    assert "[Compress] Not restored: /w/f0.txt, /w/f1.txt" in map(str, done.events)


def test_2_1_197_does_not_compact_one_exchange_and_2_1_332_does(tmp_path: Path) -> None:
    exchange = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    for version, compacted in ((OLD, False), (NEW, True)):
        _, a = _setup(tmp_path / version, version)
        with FakeAPI(_reply).running() as api:
            client = anthropic.Anthropic(base_url=api.url, api_key="test", max_retries=0)
            conv = _conversation(tmp_path / version, a, client, [], 200_000)
            done = conv.compact_now(exchange)
        assert (done.compaction is not None) is compacted
        if not compacted:
            assert str(done.events[0]).startswith(
                "[Compress] Not compacted: fewer than 3 messages (claude-code 2.1.197"
            )


def test_additional_instructions_need_a_profile(tmp_path: Path) -> None:
    conv = Conversation(store_dir=tmp_path / "store", summarize=lambda r: "x")
    with pytest.raises(ConversationError, match="need a client's profile"):
        conv.compact_now(_history(1), "Focus")


def test_the_instruction_goes_to_the_last_user_message() -> None:
    tail = {"type": "text", "text": "I"}
    assert with_instruction([{"role": "user", "content": "q"}], "I") == [
        {"role": "user", "content": [{"type": "text", "text": "q"}, tail]}
    ]
    assert with_instruction([{"role": "assistant", "content": "a"}], "I")[-1] == {
        "role": "user",
        "content": [tail],
    }
