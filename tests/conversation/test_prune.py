"""Pruning old tool results: the first article's rules and numbers, on both shapes."""

from __future__ import annotations

import copy

import pytest

from assembler.conversation import prune_tool_results
from tests.helpers.conversations import SHAPES, Call, Out, Step, User, build, results, session


@pytest.mark.parametrize("shape", SHAPES)
def test_the_articles_ls_result_of_755_chars_comes_out_at_236(shape: str) -> None:
    messages = build(shape, session())
    before = copy.deepcopy(messages)
    pruned = prune_tool_results(messages)
    assert [str(c) for c in pruned.cuts] == ["Tool result truncated: 755 → 236 chars"]
    text = results(pruned.messages)
    assert text["call_ls"] == "l" * 200 + "\n...(truncated, original: 755 chars)"
    assert len(text["call_ls"]) == 236
    # The newest two stay whole; the input is never mutated; a new list comes back.
    assert (len(text["call_c"]), len(text["call_i"])) == (4097, 5372)
    assert messages == before and pruned.messages is not messages
    assert pruned.cuts[0].tool_use_id == "call_ls"


@pytest.mark.parametrize("shape", SHAPES)
def test_only_tool_results_are_touched_and_short_ones_stay(shape: str) -> None:
    long_user = "u" * 1000
    steps: list[Step] = [User(long_user), Call("a", "bash", {}), Out("a", "x" * 300)]
    steps += [Call("b", "bash", {}), Out("b", "y" * 301), User("next")]
    pruned = prune_tool_results(build(shape, steps), keep_recent=0)
    assert results(pruned.messages) == {
        "a": "x" * 300,  # at the limit: kept
        "b": "y" * 200 + "\n...(truncated, original: 301 chars)",
    }
    assert pruned.messages[0] == {"role": "user", "content": long_user}


@pytest.mark.parametrize("shape", SHAPES)
def test_pruning_twice_changes_nothing_more(shape: str) -> None:
    once = prune_tool_results(build(shape, session()), keep_recent=0, max_chars=210)
    twice = prune_tool_results(once.messages, keep_recent=0, max_chars=210)
    assert twice.messages == once.messages and twice.cuts == ()


def test_an_anthropic_result_made_of_blocks_is_cut_as_its_text() -> None:
    messages = build("anthropic", [Call("a", "Read", {}), Out("a", ""), User("q")])
    messages[1]["content"][0]["content"] = [
        {"type": "text", "text": "p" * 400},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
    ]
    pruned = prune_tool_results(messages, keep_recent=0)
    block = pruned.messages[1]["content"][0]
    assert block["content"] == "p" * 200 + "\n...(truncated, original: 408 chars)"
    assert block["tool_use_id"] == "a" and block["type"] == "tool_result"


def test_unknown_messages_are_left_as_they_are_and_reported() -> None:
    odd = {"role": "function", "name": "f", "content": "z" * 1000}
    messages = [odd, "not a message", *build("openai", session())]
    pruned = prune_tool_results(messages)
    assert pruned.messages[0] is odd and pruned.messages[1] == "not a message"
    assert [str(u) for u in pruned.unknown] == [
        "message 0 left as it is: role function",
        "message 1 left as it is: a str, not a mapping",
    ]
    assert len(pruned.cuts) == 1


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError):
        prune_tool_results([], keep_chars=400, max_chars=300)


# --- one name for one idea (issue 23, item 5) ----------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_the_newest_results_kept_are_keep_recent_as_in_every_level(shape: str) -> None:
    messages = build(shape, session())
    kept_one = prune_tool_results(messages, keep_recent=1, max_chars=210)
    assert [c.tool_use_id for c in kept_one.cuts] == ["call_ls", "call_c"]
    with pytest.warns(DeprecationWarning, match="keep_recent="):
        old_name = prune_tool_results(messages, recent_keep=1, max_chars=210)  # 0.1.0's name
    assert old_name == kept_one
