"""Level 4: context collapse, a span of older messages summarised ahead of time.

The second article's example: `[U1, A1, U2, A2, U3, A3, U4, A4, U5]`; a light background task
summarises `U2 … A4` into a staged draft without touching the context; when the context
reaches its line, the draft replaces its span in one step: `[U1, A1, S1, U5]`.

The messages of these APIs carry no uuid, so a stage names its span by position and by a
digest of the span's messages taken when it was staged. It is applied only if that span is
still intact (same positions, same bytes); a stale stage (the list was pruned, cleared or
compacted under it) is discarded, never applied. The span keeps the first `keep_first`
messages (the original request) and the last `keep_recent`, and never parts a tool call from
its result. `StageJob` runs `stage_collapse` in a background thread.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import ConversationError
from .messages import dumps, head_length, listed, safe_cuts, scan
from .prompts import Prompt, prompt, summary_request, summary_text
from .store import Below, append_raw

Summarize = Callable[[list[dict[str, str]]], str]
PREFIX = "[Summary of earlier messages]\n"
STALE = "stale: its span changed since it was staged"


class Stage(NamedTuple):
    """A staged summary of `messages[start:end]`."""

    start: int
    end: int
    summary: str
    digest: str
    staged_at: float


class CollapseResult(NamedTuple):
    messages: list[Any]
    applied: bool
    reason: str  # why it was not applied, or what was collapsed
    raw_path: Path | None = None


def span_digest(messages: Sequence[Any], start: int, end: int) -> str:
    data = dumps([len(messages[:start]), *messages[start:end]])
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


def collapse_span(
    messages: Sequence[Any], *, keep_first: int = 2, keep_recent: int = 4
) -> tuple[int, int] | None:
    """The span to collapse, or None when fewer than two messages could be."""
    if keep_first < 0 or keep_recent < 0:
        raise ValueError("keep_first and keep_recent must be >= 0")
    safe = safe_cuts(messages, scan(messages))
    start = head_length(messages) + keep_first
    end = len(messages) - keep_recent
    while start < end and not safe[start]:
        start += 1
    while end > start and not safe[end]:
        end -= 1
    return (start, end) if end - start >= 2 else None


def stage_collapse(
    messages: Sequence[Any],
    *,
    summarize: Summarize,
    keep_first: int = 2,
    keep_recent: int = 4,
    used: Prompt | None = None,
    clock: Callable[[], float] = time.time,
) -> Stage:
    """Summarise the span now; the list is not changed. Raises `ConversationError` when there
    is no span or the summariser fails."""
    span = collapse_span(messages, keep_first=keep_first, keep_recent=keep_recent)
    if span is None:
        raise ConversationError("nothing to collapse: the span would be under two messages")
    start, end = span
    digest = span_digest(messages, start, end)
    used = used or prompt()
    try:
        reply = summarize(summary_request(used, messages[start:end]))
    except Exception as err:  # the caller's summariser
        raise ConversationError(f"the summariser failed: {type(err).__name__}: {err}") from None
    return Stage(start, end, summary_text(reply, tagged=used.tagged), digest, clock())


def intact(messages: Sequence[Any], stage: Stage) -> bool:
    """Whether the stage's span is still in `messages`, at its place, unchanged."""
    if stage.end > len(listed(messages)):
        return False
    return span_digest(messages, stage.start, stage.end) == stage.digest


def apply_collapse(
    messages: Sequence[Any],
    stage: Stage,
    *,
    sessions_dir: str | os.PathLike[str] | Below | None = None,
    summary_role: str = "user",
    prefix: str = PREFIX,
) -> CollapseResult:
    """The list with the stage's span replaced by its summary, if the span is intact; with
    `sessions_dir`, the whole list is appended to `raw.jsonl` first (a failed write applies
    nothing)."""
    if not intact(messages, stage):
        return CollapseResult(list(messages), False, STALE)
    raw = append_raw(sessions_dir, messages) if sessions_dir is not None else None
    summary = {"role": summary_role, "content": prefix + stage.summary}
    out = [*messages[: stage.start], summary, *messages[stage.end :]]
    count = stage.end - stage.start
    return CollapseResult(out, True, f"{count} messages collapsed into one summary", raw)


class StageJob:
    """`stage_collapse` in a daemon thread: poll `done()`, then take `stage()`."""

    def __init__(self, messages: Sequence[Any], **options: Any) -> None:
        snapshot = list(listed(messages))  # a list that cannot be one: refused here
        self._stage: Stage | None = None
        self._error: ConversationError | None = None
        self._thread = threading.Thread(
            target=self._run, args=(snapshot, options), name="ctxasm-collapse", daemon=True
        )
        self._thread.start()

    def _run(self, messages: list[Any], options: dict[str, Any]) -> None:
        try:
            self._stage = stage_collapse(messages, **options)
        except ConversationError as err:
            self._error = err
        except Exception as err:  # never let the thread die silently
            self._error = ConversationError(f"staging failed: {type(err).__name__}: {err}")

    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return self.done()

    def stage(self) -> Stage:
        """The staged summary; raises the staging's `ConversationError`."""
        if not self.done():
            raise ConversationError("the collapse is still being staged")
        if self._error is not None:
            raise self._error
        assert self._stage is not None
        return self._stage
