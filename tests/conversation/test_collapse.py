"""Context collapse: staged ahead of time, applied in one step only to an intact span."""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from assembler.conversation import StageJob, apply_collapse, collapse_span, prompt, stage_collapse
from assembler.errors import ConversationError
from tests.helpers.conversations import SHAPES, Call, Out, Say, Step, User, build, pairs_intact

# The second article's example: [U1, A1, U2, A2, U3, A3, U4, A4, U5].
ARTICLE = [m for i in range(1, 5) for m in (User(f"U{i}"), Say(f"A{i}"))] + [User("U5")]
SUMMARY = "<summary>之前已经完成了对 query.ts、microcompact、sessionStorage 的分析</summary>"


def _summarize(request: list[dict[str, str]]) -> str:
    return SUMMARY


@pytest.mark.parametrize("shape", SHAPES)
def test_the_articles_span_collapses_into_one_summary(shape: str, tmp_path: Path) -> None:
    messages = build(shape, ARTICLE)
    stage = stage_collapse(
        messages, summarize=_summarize, keep_first=2, keep_recent=1, clock=lambda: 1712345678.901
    )
    assert (stage.start, stage.end, stage.staged_at) == (2, 8, 1712345678.901)
    done = apply_collapse(messages, stage, sessions_dir=tmp_path)
    assert done.applied and done.reason == "6 messages collapsed into one summary"
    assert [m["content"] for m in done.messages] == [
        "U1",
        "A1",
        "[Summary of earlier messages]\n之前已经完成了对 query.ts、microcompact、sessionStorage 的分析",
        "U5",
    ]
    assert json.loads((tmp_path / "raw.jsonl").read_text(encoding="utf-8")) == messages


@pytest.mark.parametrize("shape", SHAPES)
def test_a_stale_stage_is_discarded_never_applied(shape: str) -> None:
    messages = build(shape, ARTICLE)
    stage = stage_collapse(messages, summarize=_summarize, keep_first=2, keep_recent=1)
    changed = copy.deepcopy(messages)
    changed[4] = {"role": "user", "content": "U3, edited"}
    for later in (changed, messages[:5], messages[1:]):
        done = apply_collapse(later, stage)
        assert not done.applied and done.messages == later
        assert done.reason == "stale: its span changed since it was staged"
    # Appending after the span keeps it intact.
    longer = [*messages, {"role": "assistant", "content": "A5"}]
    assert apply_collapse(longer, stage).applied


@pytest.mark.parametrize("shape", SHAPES)
def test_the_span_never_parts_a_call_from_its_result(shape: str) -> None:
    steps: list[Step] = [User("q"), Say("a"), Call("x", "Read", {}), Out("x", "1"), Say("b")]
    steps += [Call("y", "bash", {}), Out("y", "2"), Say("c"), User("next")]
    messages = build(shape, steps)
    for first in range(len(messages)):
        for recent in range(len(messages)):
            span = collapse_span(messages, keep_first=first, keep_recent=recent)
            if span is None:
                continue
            start, end = span
            out = [*messages[:start], {"role": "user", "content": "S"}, *messages[end:]]
            assert pairs_intact(out), (first, recent, span)


def test_staging_in_the_background_then_applying(tmp_path: Path) -> None:
    release = threading.Event()
    asked: list[Any] = []

    def slow(request: list[dict[str, str]]) -> str:
        asked.append(request)
        release.wait(30)
        return SUMMARY

    messages = build("anthropic", ARTICLE)
    job = StageJob(messages, summarize=slow, keep_first=2, keep_recent=1)
    assert not job.done()  # it waits for `release`: it cannot have finished
    with pytest.raises(ConversationError, match="still being staged"):
        job.stage()
    release.set()
    assert job.wait(30)
    done = apply_collapse(messages, job.stage())
    assert done.applied and len(done.messages) == 4


def test_a_failing_summariser_stages_nothing() -> None:
    def broken(request: list[dict[str, str]]) -> str:
        raise TimeoutError("no answer")

    messages = build("openai", ARTICLE)
    with pytest.raises(ConversationError, match="the summariser failed: TimeoutError: no answer"):
        stage_collapse(messages, summarize=broken)
    job = StageJob(messages, summarize=broken)
    job.wait(30)
    with pytest.raises(ConversationError, match="TimeoutError"):
        job.stage()
    with pytest.raises(ConversationError, match="nothing to collapse"):
        stage_collapse(messages[:5], summarize=_summarize)


def test_the_first_articles_prompt_can_stage_too() -> None:
    stage = stage_collapse(
        build("openai", ARTICLE), summarize=lambda r: "摘要", used=prompt("compress"), keep_recent=1
    )
    assert stage.summary == "摘要"
