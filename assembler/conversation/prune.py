"""Pruning old tool results: the first article's `prune` (section 2), on both shapes.

Its rules: only tool results are touched (conversation messages never); the newest
`keep_recent` results stay whole (the model may still be using them); an older result longer
than `max_chars` keeps its first `keep_chars` characters and then
`\\n...(truncated, original: N chars)`. A `<persisted-output>` block (level 1) is never cut:
its path is how the model gets the whole output back, and a long store directory would put
the path past the characters kept. The article's `ls -la` result of 755 characters comes out
at 200 + 36 = 236 (its printed trace says 237, a character its code does not produce).

The unit is one tool result: an OpenAI `role: "tool"` message, or one `tool_result` block of
an Anthropic user message (one message can carry several). A result that is not a plain
string (a list of blocks) is measured and cut as its text (`messages.block_text`).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

from .messages import Unknown, scan, with_results
from .persist import is_persisted

MARK = "\n...(truncated, original: {chars} chars)"
# A result that already ends with the mark is not cut again (its "original" would change).
_CUT = re.compile(r"\n\.\.\.\(truncated, original: \d+ chars\)\Z")


class PruneCut(NamedTuple):
    """One result cut: where, its call id, its length before and after."""

    at: int
    tool_use_id: str
    before: int
    after: int

    def __str__(self) -> str:
        return f"Tool result truncated: {self.before} → {self.after} chars"


class PruneResult(NamedTuple):
    messages: list[Any]  # a new list; the input is never mutated
    cuts: tuple[PruneCut, ...]
    unknown: tuple[Unknown, ...]


def pruned_text(text: str, *, max_chars: int = 300, keep_chars: int = 200) -> str | None:
    """The cut text, or None when `text` is within `max_chars` (or is a persisted block)."""
    if len(text) <= max_chars or _CUT.search(text) or is_persisted(text):
        return None
    return text[:keep_chars] + MARK.format(chars=len(text))


def prune_tool_results(
    messages: Sequence[Any],
    *,
    keep_recent: int = 2,
    max_chars: int = 300,
    keep_chars: int = 200,
    recent_keep: int | None = None,
) -> PruneResult:
    """Cut every tool result but the newest `keep_recent` that is longer than `max_chars`.

    `recent_keep` is the name 0.1.0 documented for `keep_recent`: still taken, with a
    `DeprecationWarning` (every other level says `keep_recent`)."""
    if recent_keep is not None:
        warnings.warn(
            "prune_tool_results(recent_keep=) is deprecated: pass keep_recent=",
            DeprecationWarning,
            stacklevel=2,
        )
        keep_recent = recent_keep
    if keep_recent < 0 or keep_chars < 0 or max_chars < keep_chars:
        raise ValueError("need keep_recent >= 0 and 0 <= keep_chars <= max_chars")
    found = scan(messages)
    older = found.results[: max(0, len(found.results) - keep_recent)]
    replaced: dict[tuple[int, int | None], Any] = {}
    cuts = []
    for result in older:
        new = pruned_text(result.text, max_chars=max_chars, keep_chars=keep_chars)
        if new is not None:
            replaced[result.at, result.block] = new
            cuts.append(PruneCut(result.at, result.id, len(result.text), len(new)))
    return PruneResult(with_results(messages, replaced), tuple(cuts), found.unknown)
