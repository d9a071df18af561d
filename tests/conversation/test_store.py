"""The store: no write leaves the directory the caller gave, whatever links, FIFOs or hard
links were planted at it or below it; links above it are the caller's machine, followed."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from assembler.conversation import Conversation, Levels, Micro, compact, persist_results
from assembler.errors import ConversationError
from tests.helpers.conversations import Call, Out, User, build, results, session
from tests.helpers.hostile import plant, store_plants

BIG = "B" * 60_000  # persisted (over 50,000 characters)


def _outside(tmp_path: Path) -> Path:
    """A directory beside the store, with a file a planted link points at."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("precious\n")
    return outside


def _untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["victim"]
    assert (outside / "victim").read_text() == "precious\n"


def _big(tool_id: str = "toolu_big") -> list[Any]:
    return build("anthropic", [User("go"), Call(tool_id, "Read", {"path": "p"}), Out(tool_id, BIG)])


def _compacting(store: Path) -> Conversation:
    conv = Conversation(
        store_dir=store,
        summarize=lambda r: "<summary>s</summary>",
        threshold=10,
        keep_recent=1,
        levels=Levels(micro=Micro.OFF, collapse=False),
    )
    conv.record(100)
    return conv


@pytest.mark.parametrize(
    ("planted", "target"),
    [
        ("tool-results", "dir"),
        ("tool-results/toolu_big.txt", "file"),
        ("sessions", "dir"),
        ("sessions/raw.jsonl", "file"),
        ("sessions/ctx.json", "file"),
    ],
)
def test_a_link_planted_in_the_store_is_never_written_through(
    planted: str, target: str, tmp_path: Path
) -> None:
    outside = _outside(tmp_path)
    store = tmp_path / "store"
    (store / planted).parent.mkdir(parents=True, exist_ok=True)
    (store / planted).symlink_to(outside if target == "dir" else outside / "victim")
    ready = _compacting(store).prepare(_big())
    _untouched(outside)
    events = [str(e) for e in ready.events]
    if planted.startswith("tool-results"):
        assert any("kept whole" in e or "saved to" in e for e in events), events
    if planted in ("tool-results", "sessions", "sessions/raw.jsonl"):
        # Refused, one line naming the place and what to do; the list was not changed.
        assert any(planted in e and "link" in e for e in events), events
    if planted == "sessions/ctx.json":  # ours to replace: the link goes, its target stays
        assert ready.compaction is not None
        assert (store / planted).is_file() and not (store / planted).is_symlink()


def test_a_link_above_the_callers_directory_is_followed(tmp_path: Path) -> None:
    """The path to the store is the caller's machine (`/tmp -> /private/tmp` on macOS)."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "linked").symlink_to(real)
    ready = _compacting(tmp_path / "linked" / "store").prepare(_big())
    assert ready.compaction is not None
    assert sorted(p.name for p in (real / "store/sessions").iterdir()) == ["ctx.json", "raw.jsonl"]
    assert (real / "store/tool-results/toolu_big.txt").read_text() == BIG


def _refusal(link: Path, reached: Path, given: str) -> str:
    return (
        f"{link} is a symlink to {reached}; a link at the store's directory may have been "
        f"planted and is not written through: pass {given}='{reached}' to write there"
    )


def test_a_link_at_the_sessions_dir_given_to_compact_is_refused(tmp_path: Path) -> None:
    """A repository's `.agent/sessions -> elsewhere`, given as `sessions_dir`: nothing is
    written through it; the error names the link and the directory to pass instead."""
    outside = _outside(tmp_path)
    sessions = tmp_path / "repo/.agent/sessions"
    sessions.parent.mkdir(parents=True)
    sessions.symlink_to(outside)
    messages = build("openai", session())
    with pytest.raises(ConversationError) as refused:
        compact(messages, summarize=lambda r: "<summary>s</summary>", sessions_dir=sessions)
    assert str(refused.value) == (
        f"{sessions}/raw.jsonl: cannot save the conversation "
        f"({_refusal(sessions, outside, 'sessions_dir')}); nothing was dropped"
    )
    _untouched(outside)
    done = compact(messages, summarize=lambda r: "<summary>s</summary>", sessions_dir=outside)
    assert done.raw_path == outside / "raw.jsonl"  # the path it names is taken


def test_a_link_at_the_store_dir_is_refused(tmp_path: Path) -> None:
    """`Conversation(store_dir=".agent")` where `.agent` is a link: no output is saved
    through it (the result is kept whole) and no compaction happens (nothing dropped)."""
    outside = _outside(tmp_path)
    store = tmp_path / "repo/.agent"
    store.parent.mkdir(parents=True)
    store.symlink_to(outside)
    ready = _compacting(store).prepare(_big())
    _untouched(outside)
    assert ready.compaction is None
    events = [str(e) for e in ready.events]
    refusal = _refusal(store, outside, "store_dir")
    assert any("kept whole" in e and refusal in e for e in events), events
    assert any(f"{store}/sessions/raw.jsonl" in e and refusal in e for e in events), events


@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_a_dangling_or_looping_link_at_the_sessions_dir_is_refused(
    kind: str, tmp_path: Path
) -> None:
    sessions = tmp_path / "sessions"
    target = tmp_path / "created-through-the-link"
    sessions.symlink_to(sessions if kind == "loop" else target)
    with pytest.raises(ConversationError) as refused:
        compact(
            build("openai", session()), summarize=lambda r: "<summary>s</summary>",
            sessions_dir=sessions,
        )  # fmt: skip
    said = str(refused.value)
    if kind == "loop":
        assert f"{sessions} is a symlink to {sessions}, a loop of links;" in said
        assert said.endswith("pass another sessions_dir); nothing was dropped")
    else:
        assert f"{sessions} is a symlink to {target}, which does not exist;" in said
        assert f"pass sessions_dir='{target}' to write there" in said
    assert not target.exists()


def test_a_fifo_at_raw_jsonl_is_refused_without_waiting(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    os.mkfifo(sessions / "raw.jsonl")
    with pytest.raises(ConversationError, match=r"raw\.jsonl: .*not a regular file"):
        compact(
            build("openai", session()), summarize=lambda r: "<summary>s</summary>",
            sessions_dir=sessions,
        )  # fmt: skip


def test_a_raw_jsonl_hard_linked_to_another_file_is_refused(tmp_path: Path) -> None:
    outside = _outside(tmp_path)
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    os.link(outside / "victim", sessions / "raw.jsonl")
    with pytest.raises(ConversationError, match=r"raw\.jsonl: .*other hard link"):
        compact(
            build("openai", session()), summarize=lambda r: "<summary>s</summary>",
            sessions_dir=sessions,
        )  # fmt: skip
    assert (outside / "victim").read_text() == "precious\n"


def test_a_rerun_never_overwrites_an_earlier_output(tmp_path: Path) -> None:
    """Local servers number their call ids from zero in every session: the second session's
    `call_0` must not replace the first one's saved output."""
    first = persist_results(_big("call_0"), store_dir=tmp_path)
    other = build(
        "anthropic",
        [User("go"), Call("call_0", "Read", {"path": "q"}), Out("call_0", "C" * 60_000)],
    )
    second = persist_results(other, store_dir=tmp_path)
    paths = [a.path for a in (*first.actions, *second.actions)]
    assert len(set(paths)) == 2 and all(p is not None for p in paths)
    assert [p.read_text()[0] for p in paths if p is not None] == ["B", "C"]
    again = persist_results(_big("call_0"), store_dir=tmp_path)  # the same output: reused
    assert again.actions[0].path == paths[0]
    assert len(list((tmp_path / "tool-results").iterdir())) == 2


def _session(text: str) -> list[Any]:
    steps: list[Any] = [
        User("go"),
        Call("toolu_big", "Read", {"path": "p"}),
        Out("toolu_big", text),
    ]
    return build("anthropic", [*steps, User("next"), User("and next")])


@settings(max_examples=40, deadline=None)
@given(store_plants)
def test_nothing_planted_in_the_store_makes_a_write_leave_it(
    planted: list[tuple[str, str]],
) -> None:
    """Two sessions with the same call id (a rerun) on a store with links, FIFOs, hard links
    or the wrong kind of file planted where the runtime writes: nothing outside changes, no
    call raises or waits, every event is one line, and an output is either saved whole in
    the store (a regular file, under `tool-results/`) or kept whole in the list."""
    with tempfile.TemporaryDirectory() as scratch:
        outside = _outside(Path(scratch))
        store = Path(scratch) / "store"
        for place, kind in planted:
            plant(store, outside, place, kind)
        for text in ("B" * 60_000, "C" * 60_000):
            ready = _compacting(store).prepare(_session(text))
            assert all(str(e).isprintable() for e in ready.events)
            kept = results(ready.compaction.kept if ready.compaction else ready.messages)
            out = kept.get("toolu_big", text)
            if out != text:  # replaced by the block: its file holds the output, in the store
                saved = Path(out.split("saved to: ", 1)[1].split("\n", 1)[0])
                assert saved.parent == store.resolve() / "tool-results" and not saved.is_symlink()
                assert saved.read_text() == text
        _untouched(outside)
