"""Micro-compaction: time-based clearing on both shapes, and the second article's two-round
cache_reference / cache_edits walk-through replayed exactly."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from assembler.conversation import (
    CLEARED,
    CacheEditState,
    cache_edit_tool_results,
    clear_old_tool_results,
)
from tests.helpers.conversations import SHAPES, Call, Out, Say, User, build, results

HOUR = 3600.0


def _steps() -> list[Any]:
    steps: list[Any] = [User("start")]
    for i, tool in enumerate(["Read", "get_weather", "bash", "Grep", "read_file", "Glob"]):
        steps += [Call(f"t{i}", tool, {}), Out(f"t{i}", f"result {i} " * 50), Say(f"seen {i}")]
    return [*steps, User("and now?")]


@pytest.mark.parametrize("shape", SHAPES)
def test_after_the_cache_ttl_old_compactable_results_are_cleared(shape: str) -> None:
    messages = build(shape, _steps())
    before = copy.deepcopy(messages)
    done = clear_old_tool_results(messages, last_request_at=0.0, now=HOUR)
    text = results(done.messages)
    # get_weather cannot be run again: never cleared; the newest two stay.
    assert [i for i, t in text.items() if t == CLEARED] == ["t0", "t2", "t3"]
    assert text["t1"] == "result 1 " * 50 and text["t4"] == "result 4 " * 50
    assert str(done.cleared[0]) == "Old tool result cleared: t0 (450 chars)"
    assert messages == before
    again = clear_old_tool_results(done.messages, last_request_at=0.0, now=2 * HOUR)
    assert again.cleared == () and again.messages == done.messages


@pytest.mark.parametrize("shape", SHAPES)
def test_within_the_ttl_or_before_any_request_nothing_is_cleared(shape: str) -> None:
    messages = build(shape, _steps())
    assert clear_old_tool_results(messages, last_request_at=0.0, now=HOUR - 1).cleared == ()
    assert clear_old_tool_results(messages, last_request_at=None, now=HOUR).cleared == ()
    short = clear_old_tool_results(messages, last_request_at=0.0, now=300, ttl=300)
    assert len(short.cleared) == 3


@pytest.mark.parametrize("shape", SHAPES)
def test_the_result_in_the_last_message_is_never_cleared(shape: str) -> None:
    messages = build(shape, [User("q"), Call("a", "Read", {}), Out("a", "file")])
    done = clear_old_tool_results(messages, last_request_at=0, now=HOUR, keep_recent=0)
    assert done.cleared == () and results(done.messages) == {"a": "file"}


def test_a_configured_set_decides_what_is_compactable() -> None:
    messages = build("openai", _steps())
    done = clear_old_tool_results(
        messages, last_request_at=0, now=HOUR, compactable={"get_weather"}, keep_recent=0
    )
    assert [c.tool_use_id for c in done.cleared] == ["t1"]


# The second article's walk-through (level 3, mode B), message for message.
def _round_one() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "question"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_A", "name": "Read", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_A", "content": "A"}],
        },
        {"role": "user", "content": "comment"},
    ]


def _round_two() -> list[dict[str, Any]]:
    def use(i: str) -> dict[str, Any]:
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {}}
        return {"role": "assistant", "content": [block]}

    def result(i: str) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": i}
        return {"role": "user", "content": [block]}

    return [
        *_round_one(),
        {"role": "user", "content": "question"},
        use("B"),
        result("B"),
        use("C"),
        result("C"),
    ]


def _edits(*ids: str) -> dict[str, Any]:
    return {"type": "cache_edits", "edits": [{"type": "delete", "cache_reference": i} for i in ids]}


EPHEMERAL = {"type": "ephemeral"}


def test_the_two_round_cache_edits_walk_through() -> None:
    stored = _round_one()
    before = copy.deepcopy(stored)
    first = cache_edit_tool_results(stored, trigger=1, keep_recent=0)
    assert first.deleted == ("toolu_A",) and not first.reset
    assert first.request == [
        {"role": "user", "content": "question"},
        stored[1],
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_A",
                    "content": "A",
                    "cache_reference": "toolu_A",
                }
            ],
        },
        {
            "role": "user",
            "content": [
                _edits("toolu_A"),
                {"type": "text", "text": "comment", "cache_control": EPHEMERAL},
            ],
        },
    ]
    assert stored == before  # the stored list is not changed

    second = cache_edit_tool_results(_round_two(), first.state, trigger=1, keep_recent=0)
    # C is in the last message: not deleted; only B is new.
    assert second.deleted == ("toolu_B",) and not second.reset
    request = second.request
    assert request[:3] == first.request[:3]  # the first round's prefix, byte for byte
    assert request[3] == {
        "role": "user",
        "content": [_edits("toolu_A"), {"type": "text", "text": "comment"}],  # pinned
    }
    assert request[4] == {"role": "user", "content": "question"}
    assert request[6]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_B",
            "content": "B",
            "cache_reference": "toolu_B",
        }
    ]
    assert request[8] == {
        "role": "user",
        "content": [
            _edits("toolu_B"),
            {
                "type": "tool_result",
                "tool_use_id": "toolu_C",
                "content": "C",
                "cache_control": EPHEMERAL,
            },
        ],
    }
    assert [p.ids for p in second.state.pinned] == [("toolu_A",), ("toolu_B",)]
    assert sum(str(m).count("cache_control") for m in request) == 1


def test_pins_are_dropped_when_the_list_changed_under_them() -> None:
    first = cache_edit_tool_results(_round_one(), trigger=1, keep_recent=0)
    changed = _round_two()
    changed[3] = {"role": "user", "content": "another comment"}
    again = cache_edit_tool_results(changed, first.state, trigger=1, keep_recent=0)
    assert again.reset and "toolu_A" in again.deleted


def test_below_the_trigger_nothing_is_deleted_and_one_breakpoint_moves_to_the_end() -> None:
    done = cache_edit_tool_results(_round_two(), CacheEditState(), trigger=4, keep_recent=0)
    assert done.deleted == () and done.state.pinned == ()
    assert done.request[-1]["content"][-1]["cache_control"] == EPHEMERAL
    assert "cache_reference" not in str(done.request)


def test_openai_results_are_left_out_of_cache_edits() -> None:
    messages = build("openai", _steps())
    done = cache_edit_tool_results(messages, trigger=1, keep_recent=0)
    assert done.deleted == () and "cache_edits" not in str(done.request)


def test_keep_recent_over_the_live_count_keeps_them_all() -> None:
    done = cache_edit_tool_results(_round_two(), trigger=1, keep_recent=5)
    assert done.deleted == () and "cache_edits" not in str(done.request)


def test_an_unknown_message_is_left_alone_by_cache_edits() -> None:
    odd = {"role": "user", "content": [None]}
    messages = [odd, *_round_two()]
    done = cache_edit_tool_results(messages, trigger=1, keep_recent=0)
    assert done.request[0] is odd and [u.at for u in done.unknown] == [0]
    assert done.deleted == ("toolu_A", "toolu_B")
