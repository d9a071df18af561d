"""Properties on generated conversations of both shapes: pruning, clearing, cache edits,
collapse and compaction never reorder messages, never change a role, and never part a tool
call from its result."""

from __future__ import annotations

import tempfile
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.conversation import (
    apply_collapse,
    cache_edit_tool_results,
    clear_old_tool_results,
    collapse_span,
    compact,
    prune_tool_results,
    scan,
    stage_collapse,
)
from assembler.conversation.collapse import Stage, span_digest
from assembler.errors import ConversationError
from tests.helpers.conversations import SHAPES, Call, Out, Say, User, build, pairs_intact

TEXT = st.one_of(st.text(max_size=40), st.text(min_size=290, max_size=700))
TOOLS = st.sampled_from(["Read", "bash", "get_weather", "Grep", "read_file"])


@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    steps: list[Any] = []
    for turn in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["user", "say", "tools"]))
        if kind == "user":
            steps.append(User(draw(TEXT)))
        elif kind == "say":
            steps.append(Say(draw(TEXT)))
        else:
            ids = [f"t{turn}_{i}" for i in range(draw(st.integers(1, 3)))]
            steps += [Call(i, draw(TOOLS), {"path": i}) for i in ids]
            steps += [Out(i, draw(TEXT), draw(st.booleans())) for i in ids]
    return build(draw(st.sampled_from(SHAPES)), steps)


def roles(messages: list[Any]) -> list[str]:
    return [m["role"] for m in messages]


def same_but_results(before: list[Any], after: list[Any]) -> None:
    """Same length, order, roles and calls; only tool results' contents may differ."""
    assert roles(after) == roles(before)
    for old, new in zip(before, after, strict=True):
        if old is new:
            continue
        assert old.keys() == new.keys()
        if new["role"] == "tool":
            assert {k: v for k, v in old.items() if k != "content"} == {
                k: v for k, v in new.items() if k != "content"
            }
        else:
            for a, b in zip(old["content"], new["content"], strict=True):
                assert a["type"] == b["type"] == "tool_result" or a == b
                assert a.get("tool_use_id") == b.get("tool_use_id")
    assert [r.id for r in scan(after).results] == [r.id for r in scan(before).results]
    assert pairs_intact(after)


@settings(max_examples=80, deadline=None)
@given(conversations(), st.integers(0, 4), st.integers(0, 300))
def test_pruning_keeps_order_roles_and_pairs(messages: list[Any], keep: int, chars: int) -> None:
    pruned = prune_tool_results(messages, recent_keep=keep, keep_chars=chars)
    same_but_results(messages, pruned.messages)


@settings(max_examples=80, deadline=None)
@given(conversations(), st.integers(0, 4))
def test_clearing_keeps_order_roles_and_pairs(messages: list[Any], keep: int) -> None:
    done = clear_old_tool_results(messages, last_request_at=0, now=7200, keep_recent=keep)
    same_but_results(messages, done.messages)


@settings(max_examples=80, deadline=None)
@given(conversations(), st.integers(0, 4), st.integers(0, 3))
def test_cache_edits_keep_order_roles_and_pairs(
    messages: list[Any], trigger: int, keep: int
) -> None:
    done = cache_edit_tool_results(messages, trigger=trigger, keep_recent=keep)
    assert roles(done.request) == roles(messages)
    assert pairs_intact(done.request)
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=None)
    deleted = set(done.deleted)
    found = scan(messages)
    assert not any(r.id in deleted for r in found.results if r.at == last_user)
    compactable = [
        r.id for r in found.results if found.tool_name(r) in {"Read", "bash", "Grep", "read_file"}
    ]
    assert not deleted & set(compactable[max(0, len(compactable) - keep) :] if keep else ())


@settings(max_examples=80, deadline=None)
@given(conversations(), st.integers(0, 3), st.integers(0, 3))
def test_collapse_keeps_order_roles_and_pairs(messages: list[Any], first: int, recent: int) -> None:
    span = collapse_span(messages, keep_first=first, keep_recent=recent)
    if span is None:
        return
    start, end = span
    stage = Stage(start, end, "S", span_digest(messages, start, end), 0.0)
    out = apply_collapse(messages, stage).messages
    assert out[:start] == messages[:start] and out[start + 1 :] == messages[end:]
    assert pairs_intact(out)


@settings(max_examples=60, deadline=None)
@given(conversations(), st.integers(0, 6))
def test_compaction_keeps_order_roles_and_pairs(messages: list[Any], keep: int) -> None:
    with tempfile.TemporaryDirectory() as sessions:
        try:
            done = compact(
                messages,
                summarize=lambda r: "<summary>s</summary>",
                sessions_dir=sessions,
                keep_recent=keep,
            )
        except ConversationError as err:
            assert "nothing to compact" in str(err)
            return
    kept = list(done.kept)
    assert messages[len(messages) - len(kept) :] == kept
    assert all(a is b for a, b in zip(kept, messages[len(messages) - len(kept) :], strict=True))
    assert len(kept) >= min(keep, len(messages))
    assert pairs_intact(done.messages)
    assert roles(done.messages) == ["user", *roles(kept)]


JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ODD = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "function", 7])},
    optional={
        "content": JUNK
        | st.lists(
            st.fixed_dictionaries(
                {"type": st.sampled_from(["text", "tool_use", "tool_result", "image"])},
                optional={
                    "text": JUNK,
                    "id": JUNK,
                    "name": JUNK,
                    "tool_use_id": JUNK,
                    "content": JUNK,
                },
            ),
            max_size=3,
        ),
        "tool_calls": JUNK,
        "tool_call_id": JUNK,
    },
)


@settings(max_examples=150, deadline=None)
@given(st.lists(ODD | JUNK, max_size=6), conversations())
def test_any_junk_is_left_alone_and_never_crashes_the_pipeline(
    junk: list[Any], good: list[Any]
) -> None:
    from assembler.conversation import Conversation, Levels, Micro

    messages = [*good[:3], *junk, *good[3:]]
    found = scan(messages)
    for micro in (Micro.TIME, Micro.CACHE):
        with tempfile.TemporaryDirectory() as store:
            conv = Conversation(
                store_dir=store,
                summarize=lambda r: "<summary>s</summary>",
                threshold=1,
                levels=Levels(prune=True, micro=micro),
            )
            conv.record(10)
            ready = conv.prepare(messages)
    assert all(
        ready.messages[u.at] is messages[u.at] for u in found.unknown if ready.compaction is None
    )
    assert [e.text for e in ready.events if e.level.value == "Shape"] == [
        str(u) for u in found.unknown
    ]
    try:  # collapse, which the pipeline above went past (it compacted at once)
        stage = stage_collapse(messages, summarize=lambda r: "<summary>s</summary>", keep_first=1)
        assert apply_collapse(messages, stage).applied
    except ConversationError as err:
        assert "nothing to collapse" in str(err)
