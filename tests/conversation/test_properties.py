"""Properties on generated conversations of both shapes: pruning, clearing, cache edits,
collapse and compaction never reorder messages, never change a role, and never part a tool
call from its result."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from assembler.conversation import (
    Conversation,
    Levels,
    Micro,
    StageJob,
    apply_collapse,
    cache_edit_tool_results,
    clear_old_tool_results,
    collapse_span,
    compact,
    persist_results,
    prompt,
    prune_tool_results,
    scan,
    stage_collapse,
    summary_request,
)
from assembler.conversation.collapse import Stage, span_digest
from assembler.errors import ConversationError
from tests.helpers.conversations import SHAPES, Call, Out, Say, User, build, pairs_intact
from tests.helpers.hostile import NEST_PLACES, Messages, cycled, message_lists, nested

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
    pruned = prune_tool_results(messages, keep_recent=keep, keep_chars=chars)
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


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(ODD | JUNK, max_size=6), conversations())
def test_any_junk_is_left_alone_and_never_crashes_the_pipeline(
    junk: list[Any], good: list[Any]
) -> None:
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


def _summarize(request: list[dict[str, str]]) -> str:
    return "<summary>s</summary>"


def _pipeline(micro: Micro, store: str, now: bool = False) -> Callable[[list[Any]], object]:
    def run(messages: list[Any]) -> object:
        conv = Conversation(
            store_dir=store, summarize=_summarize, threshold=1, levels=Levels(micro=micro)
        )
        conv.record(10)
        return conv.compact_now(messages) if now else conv.prepare(messages)

    return run


def _staged(messages: list[Any]) -> object:
    job = StageJob(messages, summarize=_summarize, keep_first=0, keep_recent=0)
    job.wait(30)
    return job.stage()


def entry_points(store: str) -> dict[str, Callable[[list[Any]], object]]:
    """Every public function of the runtime that takes a message list."""
    stage = Stage(0, 2, "s", "not the digest", 0.0)
    return {
        "scan": scan,
        "prune": prune_tool_results,
        "clear": lambda m: clear_old_tool_results(m, last_request_at=0, now=7200),
        "cache edits": lambda m: cache_edit_tool_results(m, trigger=1, keep_recent=0),
        "persist": lambda m: persist_results(m, store_dir=store),
        "collapse span": lambda m: collapse_span(m, keep_first=0, keep_recent=0),
        "stage": lambda m: stage_collapse(m, summarize=_summarize, keep_first=0, keep_recent=0),
        "stage job": _staged,
        "apply": lambda m: apply_collapse(m, stage, sessions_dir=store),
        "compact": lambda m: compact(m, summarize=_summarize, sessions_dir=store, keep_recent=0),
        "summary request": lambda m: summary_request(prompt(), m),
        "prepare": _pipeline(Micro.TIME, store),
        "prepare, cache edits": _pipeline(Micro.CACHE, store),
        "compact now": _pipeline(Micro.OFF, store, now=True),
    }


# No shrinking: a failing example already prints as one attack (`Messages.what`). Slow: a
# value shared into millions costs each entry point its walk up to the bound (~0.4 s).
@pytest.mark.slow
@settings(max_examples=40, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(message_lists(), conversations(), st.integers(0, 6))
def test_every_entry_point_refuses_a_hostile_list_with_one_line(
    hostile: Messages, good: list[Any], at: int
) -> None:
    """Deep nesting at every place a message can nest, cycles, shared values that are huge
    as JSON, odd types and huge numbers: each entry point returns, or raises
    ConversationError (one line); never RecursionError, TypeError or ValueError. A list no
    entry point can save or summarise (`hostile.bad`) is refused by all of them."""
    messages = [*good[:at], *hostile.messages, *good[at:]]
    with tempfile.TemporaryDirectory() as store:
        for name, entry in entry_points(store).items():
            try:
                entry(messages)
            except ConversationError as err:
                assert "\n" not in str(err), name
                continue
            assert not hostile.bad, f"{name} accepted {hostile!r}"


@pytest.mark.parametrize("messages", [{"role": "user"}, "hello", None, 7, iter([])])
def test_every_entry_point_refuses_what_is_not_a_list(messages: Any, tmp_path: Path) -> None:
    for name, entry in entry_points(str(tmp_path)).items():
        with pytest.raises(ConversationError, match="not a list of messages"):
            entry(messages)
            pytest.fail(name)


@pytest.mark.parametrize("place", [label for label, _ in NEST_PLACES])
@pytest.mark.parametrize("shape", ["995 deep", "a cycle"])
def test_every_entry_point_refuses_deep_nesting_at_every_place(
    place: str, shape: str, tmp_path: Path
) -> None:
    """The issue's 995-level list (json.loads takes it; json.dumps, deeper in the stack,
    did not) and a list that holds itself, at each place a message can nest."""
    hostile = nested(995) if shape == "995 deep" else None
    good = build("anthropic", [User("go"), Call("t", "Read", {"path": "p"}), Out("t", "r")])
    for name, entry in entry_points(str(tmp_path)).items():
        inner = cycled(place) if hostile is None else dict(NEST_PLACES)[place](hostile)
        with pytest.raises(ConversationError, match="nested more than 100 levels deep"):
            entry([*good, *inner, {"role": "user", "content": "more"}])
            pytest.fail(name)
