"""Full compaction: the thresholds, the steps in order, the failing writer, the summariser."""

from __future__ import annotations

import copy
import json
import os
import resource
import signal
from pathlib import Path
from typing import Any

import pytest

from assembler.conversation import (
    Attachment,
    AttachmentKind,
    Trigger,
    compact,
    compaction_thresholds,
    fit_attachments,
    prompt,
    should_compact,
)
from assembler.errors import ConversationError
from assembler.tokens import estimate_tokens
from tests.helpers.conversations import (
    SHAPES,
    Call,
    Out,
    Say,
    Step,
    User,
    build,
    pairs_intact,
    session,
)
from tests.helpers.unprivileged import _as_nobody, traversable  # noqa: F401

REPLY = "<analysis>\nthe draft, to be dropped\n</analysis>\n<summary>\n1. Primary Request: 小明 …\n</summary>"


class Summariser:
    """A fake model: records what it is asked, replies with `reply` (or raises it)."""

    def __init__(self, reply: Any = REPLY) -> None:
        self.reply = reply
        self.asked: list[list[dict[str, str]]] = []

    def __call__(self, request: list[dict[str, str]]) -> str:
        self.asked.append(request)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply  # type: ignore[no-any-return]


def test_the_thresholds_for_a_200000_token_window() -> None:
    lines = compaction_thresholds(200_000)
    assert (lines.effective, lines.auto_compact, lines.warning) == (180_000, 167_000, 147_000)
    assert not should_compact(166_999, context_window=200_000)
    assert should_compact(167_000, context_window=200_000)
    assert should_compact(6060, threshold=6000) and not should_compact(None, threshold=6000)
    with pytest.raises(ValueError):
        should_compact(1)


@pytest.mark.parametrize(
    ("window", "lines"),
    [
        (8_000, (7_200, 6_680, 5_880)),
        (32_000, (28_800, 26_720, 23_520)),
        (128_000, (115_200, 106_880, 94_080)),
        (200_000, (180_000, 167_000, 147_000)),
        (1_000_000, (980_000, 967_000, 947_000)),
    ],
)
def test_the_thresholds_scale_with_a_small_window(window: int, lines: tuple[int, ...]) -> None:
    """Below 200,000 tokens each margin is its share of a 200,000 window (10%, 6.5%, 10%):
    a 32,000-token window no longer compacts at -1,000 tokens, i.e. on every turn."""
    found = compaction_thresholds(window)
    assert (found.effective, found.auto_compact, found.warning) == lines
    assert 0 < found.warning < found.auto_compact < found.effective < window
    assert not should_compact(found.warning, context_window=window)
    assert should_compact(found.auto_compact, context_window=window)


def test_the_thresholds_stay_positive_and_ordered_for_every_window() -> None:
    previous = compaction_thresholds(4_000)
    for window in (*range(4_000, 220_000, 997), 200_000, 2_000_000):
        lines = compaction_thresholds(window)
        assert 0 < lines.warning < lines.auto_compact < lines.effective < window
        if window > previous.window:  # a larger window never moves a line down
            assert lines.auto_compact >= previous.auto_compact
            previous = lines
    for bad in (0, -5, 9, 1.5, True):
        with pytest.raises(ConversationError, match="context_window"):
            compaction_thresholds(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("shape", SHAPES)
def test_compaction_saves_summarises_replaces_and_snapshots(shape: str, tmp_path: Path) -> None:
    messages = build(shape, session())
    before = copy.deepcopy(messages)
    ask = Summariser()
    done = compact(messages, summarize=ask, sessions_dir=tmp_path / "sessions", pre_tokens=6060)
    # 1. The full list, one JSON line, before anything was dropped.
    raw = (tmp_path / "sessions" / "raw.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in raw] == [before]
    # 2./3. The last four kept, untouched; the rest replaced by the summary, analysis stripped.
    assert done.kept == tuple(messages[-4:])
    assert done.summary == "1. Primary Request: 小明 …"
    assert done.summary_messages == (
        {"role": "user", "content": "[Conversation summary]\n1. Primary Request: 小明 …"},
    )
    assert done.messages == [*done.summary_messages, *messages[-4:]]
    # 4. The snapshot is the new list.
    snapshot = json.loads((tmp_path / "sessions" / "ctx.json").read_text(encoding="utf-8"))
    assert snapshot == done.messages
    assert done.boundary.trigger is Trigger.AUTO and done.boundary.pre_tokens == 6060
    assert done.boundary.last_index == len(messages) - 5
    assert done.pre_tokens == 6060 and 0 < done.post_tokens < estimate_tokens(json.dumps(messages))
    assert messages == before
    # The summariser got the conversation as text, then the nine-part prompt after it.
    [(conversation, instruction)] = ask.asked
    assert conversation["role"] == "user" and conversation["content"].startswith("[user] 你好")
    assert instruction == {"role": "user", "content": prompt("nine-part").text}


@pytest.mark.parametrize("shape", SHAPES)
def test_the_boundary_moves_back_so_a_call_keeps_its_result(shape: str, tmp_path: Path) -> None:
    steps: list[Step] = [
        User("q"),
        Say("a"),
        User("read both"),
        Call("x", "Read", {}),
        Call("y", "Read", {}),
    ]
    steps += [Out("x", "1"), Out("y", "2"), Say("done"), User("thanks")]
    messages = build(shape, steps)
    # Keeping 3 would start inside the calls' results: the boundary moves to the calls.
    done = compact(messages, summarize=Summariser(), sessions_dir=tmp_path, keep_recent=3)
    assert pairs_intact(done.messages)
    assert done.kept[0] == messages[3] and done.kept[-1] == {"role": "user", "content": "thanks"}


def test_system_messages_at_the_head_stay_in_place(tmp_path: Path) -> None:
    messages = [{"role": "system", "content": "rules"}, *build("openai", session())]
    done = compact(messages, summarize=Summariser(), sessions_dir=tmp_path)
    assert done.messages[0] == {"role": "system", "content": "rules"}
    assert done.messages[1]["content"].startswith("[Conversation summary]")


def test_the_first_articles_prompt_takes_a_plain_reply(tmp_path: Path) -> None:
    ask = Summariser("用户小明，前端工程师。")
    done = compact(
        build("openai", session()),
        summarize=ask,
        sessions_dir=tmp_path,
        used=prompt("compress"),
        summary_role="assistant",
        summary_prefix="[对话摘要]\n",
    )
    assert done.summary_messages == (
        {"role": "assistant", "content": "[对话摘要]\n用户小明，前端工程师。"},
    )
    system, _ = ask.asked[0]
    assert system == {"role": "system", "content": prompt("compress").text}
    assert (
        system["content"].startswith("你是一个对话压缩器。")
        and "不超过 500 字" in system["content"]
    )


def test_the_nine_part_prompt_warns_text_only_at_its_head_and_its_tail() -> None:
    text = prompt("nine-part").text
    warning = "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools."
    assert text.startswith(
        warning + "\n\n- Do NOT use Read, Bash, Grep, Glob, Edit, Write, or ANY other tool."
    )
    assert text.count(warning) == 2
    assert text.endswith(
        "- Your entire response must be plain text: an <analysis> block followed by a <summary> block."
    )
    sections = [
        "Primary Request and Intent",
        "Key Technical Concepts",
        "Files and Code Sections",
        "Errors and fixes",
        "Problem Solving",
        "All user messages",
        "Pending Tasks",
        "Current Work",
        "Optional Next Step",
    ]
    positions = [text.index(f"{i}. {s}:") for i, s in enumerate(sections, 1)]
    assert positions == sorted(positions) and "verbatim" in text


@pytest.mark.parametrize(
    "reply",
    [RuntimeError("model overloaded"), "no tags at all", "<summary>   </summary>", None],
)
def test_a_failing_summariser_leaves_the_list_unchanged(reply: Any, tmp_path: Path) -> None:
    messages = build("anthropic", session())
    before = copy.deepcopy(messages)
    with pytest.raises(ConversationError) as caught:
        compact(messages, summarize=Summariser(reply), sessions_dir=tmp_path)
    assert "\n" not in str(caught.value)
    assert messages == before
    assert not (tmp_path / "ctx.json").exists()
    # What was to be dropped had been saved first.
    assert json.loads((tmp_path / "raw.jsonl").read_text()) == before


def test_sessions_dir_being_a_file_aborts_before_the_summariser(tmp_path: Path) -> None:
    (tmp_path / "sessions").write_text("a file")
    ask = Summariser()
    messages = build("openai", session())
    with pytest.raises(ConversationError, match=r"raw\.jsonl: cannot save the conversation"):
        compact(messages, summarize=ask, sessions_dir=tmp_path / "sessions")
    assert ask.asked == [] and (tmp_path / "sessions").read_text() == "a file"


def _compact_in_read_only(sessions: str) -> str:
    try:
        compact(build("openai", session()), summarize=Summariser(), sessions_dir=sessions)
    except ConversationError as err:
        return str(err)
    return "compacted"


@pytest.mark.usefixtures("traversable")
def test_a_read_only_sessions_dir_aborts_the_compaction(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / "raw.jsonl").write_text('["earlier"]\n')
    os.chmod(tmp_path, 0o755)
    os.chmod(sessions / "raw.jsonl", 0o444)
    os.chmod(sessions, 0o555)
    try:
        if os.geteuid() == 0:  # root writes anywhere: run it as `nobody`
            said = _as_nobody(lambda: _compact_in_read_only(str(sessions)))
        else:
            said = _compact_in_read_only(str(sessions))
    finally:
        os.chmod(sessions, 0o755)
    assert "cannot save the conversation (Permission denied); nothing was dropped" in said
    assert (sessions / "raw.jsonl").read_text() == '["earlier"]\n'
    assert sorted(p.name for p in sessions.iterdir()) == ["raw.jsonl"]


def test_a_list_that_is_not_json_is_not_compacted(tmp_path: Path) -> None:
    messages: list[Any] = [*build("openai", session()), {"role": "user", "content": "x"}]
    messages[0] = {"role": "user", "content": "hi", "extra": object()}
    with pytest.raises(ConversationError, match="cannot be saved as JSON"):
        compact(messages, summarize=Summariser(), sessions_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_nothing_to_compact_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(ConversationError, match="nothing to compact"):
        compact(build("openai", session())[:3], summarize=Summariser(), sessions_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_each_compaction_appends_a_line(tmp_path: Path) -> None:
    first = compact(build("openai", session()), summarize=Summariser(), sessions_dir=tmp_path)
    longer = [
        *first.messages,
        {"role": "assistant", "content": "more"},
        *build("openai", session()),
    ]
    compact(longer, summarize=Summariser(), sessions_dir=tmp_path, trigger=Trigger.MANUAL)
    lines = (tmp_path / "raw.jsonl").read_text(encoding="utf-8").splitlines()
    assert [len(json.loads(line)) for line in lines] == [15, 21]


def test_attachments_are_capped_each_and_per_kind_oldest_dropped_first() -> None:
    big = "w " * 30_000  # 15,000 tokens by the estimate
    files = [Attachment(AttachmentKind.FILE, f"f{i}.py", big, i) for i in range(7)]
    skills = [Attachment(AttachmentKind.SKILL, "review", "check it", 1)]
    rules = Attachment(AttachmentKind.INSTRUCTIONS, "instructions", big)
    kept, dropped = fit_attachments([*files, *skills, rules])
    assert [a.name for a in kept] == [
        "instructions",
        "f2.py",
        "f3.py",
        "f4.py",
        "f5.py",
        "f6.py",
        "review",
    ]
    assert dropped == ("f0.py", "f1.py")
    assert kept[0].content == big  # the instruction context is never cut
    for attachment in kept[1:6]:
        assert estimate_tokens(attachment.content) <= 5_000
        assert attachment.content.endswith("\n...(truncated)")
    assert sum(estimate_tokens(a.content) for a in kept[1:6]) <= 25_000


def test_attachments_ride_after_the_summary(tmp_path: Path) -> None:
    attachments = [
        Attachment(AttachmentKind.INSTRUCTIONS, "instructions", "<soul>小橙</soul>"),
        Attachment(AttachmentKind.FILE, "compress.js", "export function compress() {}", 1),
        Attachment(AttachmentKind.SKILL, "review", "Review the diff.", 2),
    ]
    done = compact(
        build("anthropic", session()),
        summarize=Summariser(),
        sessions_dir=tmp_path,
        attachments=attachments,
    )
    assert [m["content"] for m in done.attachments] == [
        "<system-reminder>\n<soul>小橙</soul>\n</system-reminder>",
        "<system-reminder>\nContents of compress.js:\n\nexport function compress() {}\n</system-reminder>",
        "<system-reminder>\nSkill review:\n\nReview the diff.\n</system-reminder>",
    ]
    assert done.messages[1:4] == list(done.attachments)


def _in_child_with_file_size_limit(limit: int, fn: Any) -> str:
    """`fn()` in a forked child that may not grow a file past `limit` bytes (a full disk, as
    a write sees it: a short write, then EFBIG); its one-line result."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read_end)
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            said = fn()
        except BaseException as err:
            said = f"raised {type(err).__name__}: {err}"
        os.write(write_end, said.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        said = pipe.read().decode()
    os.waitpid(pid, 0)
    return said


def test_a_full_disk_mid_line_leaves_raw_jsonl_as_it_was(tmp_path: Path) -> None:
    raw = tmp_path / "raw.jsonl"
    raw.write_text('["an earlier compaction"]\n')
    messages = build("anthropic", session())

    def attempt() -> str:
        try:
            compact(messages, summarize=Summariser(), sessions_dir=tmp_path)
        except ConversationError as err:
            return str(err)
        return "compacted"

    said = _in_child_with_file_size_limit(raw.stat().st_size + 100, attempt)
    assert said == f"{raw}: cannot save the conversation (File too large); nothing was dropped"
    assert raw.read_text() == '["an earlier compaction"]\n'  # the partial line was taken back
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw.jsonl"]


def test_the_summariser_reads_text_not_image_data_and_unknown_messages_too(tmp_path: Path) -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "A" * 100_000},
    }
    messages = build(
        "anthropic", [User("look"), Call("s", "Read", {"path": "shot.png"}), Out("s", "")]
    )
    messages[2]["content"][0]["content"] = [image, {"type": "text", "text": "a screenshot"}]
    odd = {"role": "function", "name": "legacy", "content": "an old-style function result"}
    messages += [{"role": "user", "content": [image, {"type": "text", "text": "and this"}]}, odd]
    messages += [{"role": "assistant", "content": "seen"}] * 4
    ask = Summariser()
    compact(messages, summarize=ask, sessions_dir=tmp_path)
    text = ask.asked[0][0]["content"]
    assert "A" * 100 not in text and text.count('"source": "[omitted]"') == 2
    assert "a screenshot" in text and "[function] an old-style function result" in text
    # raw.jsonl keeps everything, the image data included.
    assert json.loads((tmp_path / "raw.jsonl").read_text()) == messages
