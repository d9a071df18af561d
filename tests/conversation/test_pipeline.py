"""`Conversation`: the levels in order, each switchable, every action an event."""

from __future__ import annotations

import copy
import dataclasses
import json
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from assembler.conversation import CLEARED, Conversation, Levels, Micro, Trigger, prompt
from assembler.errors import ConversationError
from benchmarks.conversation import levels, long_conversation
from tests.helpers.conversations import SHAPES, Call, Out, Step, User, build, results, session
from tests.helpers.hostile_cli import MEMORY, TIMEOUT
from tests.helpers.trees import run as assemble_in

OFF = Levels(persist=False, prune=False, micro=Micro.OFF, collapse=False, compact=False)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def summarize(request: list[dict[str, str]]) -> str:
    return "<analysis>draft</analysis><summary>小明读了 compress.js 和 index.js</summary>"


@pytest.mark.parametrize("shape", SHAPES)
def test_the_first_articles_last_turn_prunes_then_compresses(shape: str, tmp_path: Path) -> None:
    conv = Conversation(
        store_dir=tmp_path,
        summarize=summarize,
        threshold=6000,
        levels=Levels(prune=True, micro=Micro.OFF, collapse=False),
    )
    messages = build(shape, session())
    before = copy.deepcopy(messages)
    conv.record(6060)
    ready = conv.prepare(messages)
    raw = tmp_path / "sessions" / "raw.jsonl"
    assert [str(e) for e in ready.events] == [
        "[Prune] Tool result truncated: 755 → 236 chars",
        f"[Compress] Persisting {len(messages)} messages to {raw}",
        "[Compress] 6060 → (compressed, awaiting next LLM call)",
    ]
    assert messages == before
    # raw.jsonl holds the pruned list it compacted; the summary and the last four remain.
    saved = json.loads(raw.read_text(encoding="utf-8"))
    assert results(saved)["call_ls"].endswith("\n...(truncated, original: 755 chars)")
    assert ready.messages == ready.request == ready.compaction.messages  # type: ignore[union-attr]
    assert (
        ready.messages[0]["content"] == "[Conversation summary]\n小明读了 compress.js 和 index.js"
    )
    assert ready.messages[-1] == {"role": "user", "content": "总结一下我们今天聊了什么"}
    # A file the model read comes back whole after the summary (it was read in full before
    # the prune cut it); index.js is still in the kept messages, so it is not attached again.
    attached = [m["content"] for m in ready.compaction.attachments]  # type: ignore[union-attr]
    assert attached == [
        f"<system-reminder>\nContents of compress.js:\n\n{'c' * 4097}\n</system-reminder>",
    ]
    assert conv.last_prompt_tokens is None  # unknown until the next call reports it
    assert conv.prepare(ready.messages).events == ()


@pytest.mark.parametrize("shape", SHAPES)
def test_every_level_can_be_switched_off(shape: str, tmp_path: Path) -> None:
    clock = Clock()
    conv = Conversation(
        store_dir=tmp_path, summarize=summarize, threshold=10, levels=OFF, clock=clock
    )
    steps = [*session(), Call("big", "Read", {"path": "x"}), Out("big", "b" * 60_000)]
    messages = build(shape, steps)
    conv.record(100_000)
    clock.now += 10 * 3600
    ready = conv.prepare(messages)
    assert ready.events == () and ready.messages == messages and ready.request == messages
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("shape", SHAPES)
def test_a_large_result_is_persisted_before_the_call(shape: str, tmp_path: Path) -> None:
    conv = Conversation(store_dir=tmp_path, summarize=summarize)
    messages = build(
        shape,
        [User("read"), Call("toolu_9", "Read", {"path": "log"}), Out("toolu_9", "L" * 60_000)],
    )
    ready = conv.prepare(messages)
    saved = tmp_path.resolve() / "tool-results" / "toolu_9.txt"
    assert [str(e) for e in ready.events] == [
        f"[Persist] Tool result saved to {saved}: 60000 → {len(results(ready.messages)['toolu_9'])} chars"
    ]
    assert saved.read_text() == "L" * 60_000


@pytest.mark.parametrize("shape", SHAPES)
def test_pruning_never_cuts_a_persisted_block(shape: str, tmp_path: Path) -> None:
    """With a long store directory the path ends past the 200 characters pruning keeps: the
    block stays whole, path and all, while older plain results are still cut."""
    store = tmp_path / ("d" * 180)
    persist = Levels(persist=True, prune=False, micro=Micro.OFF, collapse=False, compact=False)
    conv = Conversation(store_dir=store, summarize=summarize, levels=persist)
    steps: list[Step] = [User("read"), Call("toolu_0", "Read", {}), Out("toolu_0", "L" * 60_000)]
    steps += [Call("old", "bash", {}), Out("old", "o" * 400)]
    steps += [Call(f"c{i}", "bash", {}) for i in range(3)]
    messages = build(shape, [*steps, *(Out(f"c{i}", "ok") for i in range(3))])
    persisted = conv.prepare(messages).messages
    block = results(persisted)["toolu_0"]
    saved = store.resolve() / "tool-results" / "toolu_0.txt"
    assert f"Full output saved to: {saved}\n" in block and block.index("\n", 20) > 200
    conv.levels = dataclasses.replace(persist, prune=True)
    ready = conv.prepare(persisted)
    assert results(ready.messages)["toolu_0"] == block
    assert results(ready.messages)["old"] == "o" * 200 + "\n...(truncated, original: 400 chars)"
    assert [str(e) for e in ready.events] == ["[Prune] Tool result truncated: 400 → 236 chars"]


@pytest.mark.parametrize("shape", SHAPES)
def test_time_based_clearing_waits_for_the_cache_to_expire(shape: str, tmp_path: Path) -> None:
    clock = Clock()
    conv = Conversation(
        store_dir=tmp_path,
        summarize=summarize,
        clock=clock,
        levels=Levels(collapse=False, compact=False),
    )
    messages = build(shape, session())
    conv.record(1_000)
    clock.now += 59 * 60
    assert conv.prepare(messages).events == ()
    clock.now += 60
    ready = conv.prepare(messages)
    assert [str(e) for e in ready.events] == [
        "[Micro] Old tool result cleared: call_ls (755 chars)"
    ]
    assert results(ready.messages)["call_ls"] == CLEARED


def test_cache_mode_edits_the_request_and_keeps_the_list(tmp_path: Path) -> None:
    conv = Conversation(
        store_dir=tmp_path, levels=Levels(micro=Micro.CACHE, collapse=False, compact=False)
    )
    steps: list[Any] = [User("go")]
    for i in range(8):
        steps += [Call(f"toolu_{i}", "Read", {"path": f"f{i}"}), Out(f"toolu_{i}", f"file {i}")]
    messages = build("anthropic", [*steps, User("next")])
    ready = conv.prepare(messages)
    assert [str(e) for e in ready.events] == [
        f"[Micro] Cache edit: delete toolu_{i}" for i in range(5)
    ]
    assert ready.messages == messages and ready.request != messages
    assert ready.request[-1]["content"][0]["type"] == "cache_edits"
    later = [*messages, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    again = conv.prepare(later)
    assert again.events == () and again.request[-3]["content"][0]["type"] == "cache_edits"  # pinned


@pytest.mark.parametrize("shape", SHAPES)
def test_collapse_is_staged_at_the_warning_line_and_applied_at_the_threshold(
    shape: str, tmp_path: Path
) -> None:
    conv = Conversation(store_dir=tmp_path, summarize=summarize, threshold=6000, keep_recent=1)
    messages = build(shape, session())
    conv.record(4_800)  # 80% of 6,000
    staged = conv.prepare(messages)
    assert [str(e) for e in staged.events] == [
        f"[Collapse] Staged a summary of messages 2-{len(messages) - 2}"
    ]
    assert staged.messages == messages
    conv.record(6_060)
    ready = conv.prepare(messages)
    assert [str(e) for e in ready.events] == [
        f"[Collapse] Applied: {len(messages) - 3} messages collapsed into one summary"
    ]
    assert ready.compaction is None and len(ready.messages) == 4
    assert ready.messages[2]["content"].startswith("[Summary of earlier messages]\n小明")


def test_a_stale_stage_is_discarded_and_compaction_takes_over(tmp_path: Path) -> None:
    conv = Conversation(store_dir=tmp_path, summarize=summarize, threshold=6000, keep_recent=1)
    messages = build("openai", session())
    conv.record(5_000)
    conv.prepare(messages)
    changed = copy.deepcopy(messages)
    changed[3] = {**changed[3], "content": "changed"}
    conv.record(6_060)
    events = [str(e) for e in conv.prepare(changed).events]
    assert (
        events[0]
        == "[Collapse] Staged summary discarded: stale: its span changed since it was staged"
    )
    assert events[1].startswith("[Compress] Persisting 15 messages to ")


def test_background_staging_is_picked_up_on_a_later_turn(tmp_path: Path) -> None:
    conv = Conversation(
        store_dir=tmp_path, summarize=summarize, threshold=6000, keep_recent=1, background=True
    )
    messages = build("anthropic", session())
    conv.record(5_000)
    assert [str(e) for e in conv.prepare(messages).events] == [
        "[Collapse] Staging a summary in the background"
    ]
    assert conv._job is not None and conv._job.wait(30)
    conv.record(6_100)
    events = [str(e) for e in conv.prepare(messages).events]
    assert events[0].startswith("[Collapse] Staged a summary of messages 2-")
    assert events[1].startswith("[Collapse] Applied: ")


@pytest.mark.parametrize("reply", ["no summary tags", RuntimeError("boom")])
def test_a_failing_summariser_leaves_the_list_and_says_why(reply: Any, tmp_path: Path) -> None:
    def broken(request: list[dict[str, str]]) -> str:
        if isinstance(reply, Exception):
            raise reply
        return reply  # type: ignore[no-any-return]

    conv = Conversation(
        store_dir=tmp_path, summarize=broken, threshold=6000, levels=Levels(collapse=False)
    )
    messages = build("anthropic", session())
    conv.record(6_060)
    ready = conv.prepare(messages)
    [event] = ready.events
    assert str(event).startswith("[Compress] Not compacted: the summari")
    assert ready.messages == messages and ready.compaction is None


def test_unknown_messages_are_reported_once_and_left_alone(tmp_path: Path) -> None:
    conv = Conversation(
        store_dir=tmp_path, summarize=summarize, threshold=6000, levels=Levels(prune=True)
    )
    odd = {"role": "function", "content": "x" * 1000}
    messages = [*build("openai", session()[:5]), odd, {"role": "user", "content": "q"}]
    first = conv.prepare(messages)
    assert [str(e) for e in first.events] == ["[Shape] message 5 left as it is: role function"]
    assert first.messages[5] is odd
    assert conv.prepare(messages).events == ()


def test_manual_compaction_reattaches_instructions_and_skills(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    assembly = assemble_in(tmp_path, root / "fixtures" / "bootstrap", policy="bootstrap")
    conv = Conversation(
        assembly, store_dir=tmp_path / "store", summarize=summarize, prompt=prompt("nine-part")
    )
    conv.invoked_skill("review", "Review the diff.")
    ready = conv.compact_now(build("anthropic", session()))
    assert ready.compaction is not None and ready.compaction.boundary.trigger is Trigger.MANUAL
    attached = [m["content"] for m in ready.compaction.attachments]
    assert attached[0].startswith("<system-reminder>\n<soul>\n你是小橙")
    assert (
        attached[-1] == "<system-reminder>\nSkill review:\n\nReview the diff.\n</system-reminder>"
    )


def test_a_stage_gone_stale_before_the_threshold_is_staged_again(tmp_path: Path) -> None:
    conv = Conversation(store_dir=tmp_path, summarize=summarize, threshold=6000, keep_recent=1)
    messages = build("anthropic", session())
    conv.record(5_000)
    conv.prepare(messages)
    changed = copy.deepcopy(messages)
    changed[2] = {"role": "user", "content": "看看当前目录"}
    conv.record(5_500)
    assert [str(e) for e in conv.prepare(changed).events] == [
        "[Collapse] Staged summary discarded: stale: its span changed since it was staged",
        f"[Collapse] Staged a summary of messages 2-{len(changed) - 2}",
    ]
    conv.record(6_100)
    [applied] = conv.prepare(changed).events
    assert str(applied).startswith("[Collapse] Applied: ")


# Linear everywhere (issue 22): every level on a list far longer than a real conversation.
LONG = 100_000  # results; the 30,000 took cache edits 13 s when they were quadratic
_CHILD = """
import sys, tempfile
from benchmarks.conversation import levels, long_conversation
from assembler.conversation import Attachment, AttachmentKind, fit_attachments
level, shape, results = sys.argv[1], sys.argv[2], int(sys.argv[3])
if level == "fit attachments":
    files = [Attachment(AttachmentKind.FILE, f"f{i}", "x" * 400, i) for i in range(results)]
    fit_attachments(files)
else:
    with tempfile.TemporaryDirectory() as store:
        levels(store)[level](long_conversation(results, shape))
print("done")
"""


def _cpu_and_memory() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (int(TIMEOUT), int(TIMEOUT) + 1))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("level", "shape", "count"),
    [
        *((name, "one per message", LONG) for name in levels(".")),
        ("cache edits", "one message", LONG),
        ("prepare (cache)", "openai", LONG),
        ("fit attachments", "", 3 * LONG),
    ],
)
def test_every_level_finishes_a_long_list_under_the_hostile_cli_limits(
    level: str, shape: str, count: int
) -> None:
    """A quadratic pass cannot finish 100,000 results within the fuzz harness's limits (20 s
    of CPU, 1 GiB): cache edits needed 13 s for 30,000, so about 145 s here; linear, 1 s."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, level, shape, str(count)],
        capture_output=True,
        preexec_fn=_cpu_and_memory,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == b"done\n", done.stderr[-2000:]


def _opcodes(func: Callable[[], object]) -> int:
    """How many bytecode instructions `func` runs (deterministic, unlike a clock)."""
    count = 0

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        frame.f_trace_opcodes = True
        count += event == "opcode"
        return trace

    sys.settrace(trace)
    try:
        func()
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("level", list(levels(".")))
def test_every_level_runs_a_number_of_instructions_linear_in_the_results(
    level: str, tmp_path: Path
) -> None:
    """Four times the results, four times the bytecode: a Python loop over the results inside
    another one shows here as sixteen. (Work a builtin does per item, as a set union in a
    loop, is not bytecode: the long-list test above catches that.)"""
    run = levels(str(tmp_path))[level]
    small, large = long_conversation(50), long_conversation(200)
    ratio = _opcodes(lambda: run(large)) / _opcodes(lambda: run(small))
    assert ratio < 4.4


@pytest.mark.parametrize("tokens", ["6060", -1, 1.5, True, [6060]])
def test_a_token_count_that_is_not_one_is_refused(tokens: Any, tmp_path: Path) -> None:
    conv = Conversation(store_dir=tmp_path, summarize=summarize, threshold=10)
    with pytest.raises(ConversationError, match="give the provider's count"):
        conv.record(tokens)
    assert conv.prepare(build("openai", session())).compaction is None  # nothing was recorded
    with pytest.raises(ConversationError, match="as strings"):
        conv.invoked_skill("deploy", None)  # type: ignore[arg-type]


def test_ids_in_events_are_shown_on_one_line(tmp_path: Path) -> None:
    """A tool call id is the model's (or a proxy's) text: printed events escape it."""
    odd = "toolu_\x1b[2J\nforged"
    steps: list[Any] = [User("go")]
    for i in range(8):
        steps += [Call(f"{odd}{i}", "Read", {"path": f"f{i}"}), Out(f"{odd}{i}", f"file {i}")]
    messages = build("anthropic", [*steps, User("next")])
    clock = Clock()
    for micro in (Micro.CACHE, Micro.TIME):
        conv = Conversation(store_dir=tmp_path, levels=Levels(micro=micro), clock=clock)
        conv.record(1)
        clock.now += 7200
        events = [str(e) for e in conv.prepare(messages).events]
        assert events and all(e.isprintable() for e in events), events
