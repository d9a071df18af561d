"""Level 5: full compaction (the second article's Full Compact, the first article's `compress`).

`compact` does the first article's steps in its order: the full list appended to
`sessions_dir/raw.jsonl` (flushed, fsynced) before anything is dropped; all but the last
`keep_recent` messages summarised (the boundary moved earlier so that no tool call is parted
from its result, and leading system messages kept in place); those replaced by the summary;
`sessions_dir/ctx.json` written. It returns Claude Code's `CompactionResult` shape: a boundary
marker, the summary messages, the attachments, the kept messages, pre and post token counts.

If any step fails (the raw write, the summariser, a reply without its `<summary>`, the
snapshot), it raises `ConversationError` and the caller's list is as it was.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from ..compaction import Trigger as Trigger
from ..errors import ConversationError
from ..model import TokenCounter
from ..tokens import estimate_tokens
from .messages import dumps, head_length, safe_cuts, scan
from .prompts import Prompt, prompt, summary_request, summary_text
from .store import Below, append_raw, write_snapshot

# Claude Code's numbers (src/services/compact/autoCompact.ts, as the articles quote them).
MAX_OUTPUT_TOKENS_FOR_SUMMARY = 20_000  # p99.99 of a summary is 17,387 tokens
AUTOCOMPACT_BUFFER_TOKENS = 13_000
WARNING_BUFFER_TOKENS = 20_000
# The window those fixed amounts are sized for: below it each shrinks with the window, so a
# small window keeps the same shares (10%, 6.5%, 10%) instead of going negative.
FULL_WINDOW = 200_000
# Attachments after a compaction: Claude Code's caps for invoked skills, applied per kind.
ATTACHMENT_MAX_TOKENS = 5_000
ATTACHMENTS_KIND_MAX_TOKENS = 25_000
TRUNCATED = "\n...(truncated)"  # the first article's `readWithLimit` mark

Summarize = Callable[[list[Any]], str]


class Thresholds(NamedTuple):
    window: int
    effective: int  # window - 20,000 kept for the summary's output (10% below 200,000)
    auto_compact: int  # effective - 13,000 (6.5% of the window below 200,000)
    warning: int  # auto_compact - 20,000 (10% of the window below 200,000)


def _margin(fixed: int, window: int) -> int:
    """Claude Code's `fixed` amount, or its share of a window smaller than `FULL_WINDOW`."""
    return min(fixed, window * fixed // FULL_WINDOW)


def compaction_thresholds(context_window: int) -> Thresholds:
    """The three lines for a context window: 200,000 → 180,000 / 167,000 / 147,000.

    From 200,000 tokens up these are Claude Code's fixed margins; below, each margin is the
    same share of the window as at 200,000, so every line is a fixed percentage of the window
    (90%, 83.5%, 73.5%: 32,000 → 28,800 / 26,720 / 23,520), as Claude Code's own override
    (`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`) sets its line as a percentage. The lines stay positive
    and below the window for any window of 10 tokens or more."""
    if isinstance(context_window, bool) or not isinstance(context_window, int):
        raise ConversationError("context_window is a number of tokens: give an int")
    if context_window < 10:
        raise ConversationError(f"context_window is {context_window:,} tokens: give at least 10")
    effective = context_window - _margin(MAX_OUTPUT_TOKENS_FOR_SUMMARY, context_window)
    auto = effective - _margin(AUTOCOMPACT_BUFFER_TOKENS, context_window)
    warning = auto - _margin(WARNING_BUFFER_TOKENS, context_window)
    return Thresholds(context_window, effective, auto, warning)


def should_compact(
    last_prompt_tokens: int | None,
    *,
    context_window: int | None = None,
    threshold: int | None = None,
) -> bool:
    """Whether the prompt tokens the provider reported for the last request reach the
    auto-compact line (or `threshold`: the first article's demo uses 6,000). As the first
    article argues, the list only grows, so last time's count is a safe lower bound."""
    if threshold is None:
        if context_window is None:
            raise ValueError("give context_window or threshold")
        threshold = compaction_thresholds(context_window).auto_compact
    return last_prompt_tokens is not None and last_prompt_tokens >= threshold


class Boundary(NamedTuple):
    """Where the conversation was compacted: how, its size before, and the last message
    summarised (its index in the old list, and its `id` or `uuid` when it has one)."""

    trigger: Trigger
    pre_tokens: int
    last_index: int
    last_id: str | None


class AttachmentKind(Enum):
    INSTRUCTIONS = "instructions"  # the instruction context (an Assembly), never capped
    FILE = "file"  # a file read during the conversation
    SKILL = "skill"  # a skill invoked during the conversation


class Attachment(NamedTuple):
    kind: AttachmentKind
    name: str
    content: str
    order: float = 0.0  # when it was read or invoked: the oldest are dropped first
    source_id: str | None = None  # the tool call that read it: no attachment while it is kept

    def message(self) -> dict[str, str]:
        if self.kind is AttachmentKind.INSTRUCTIONS:
            text = self.content
        elif self.kind is AttachmentKind.FILE:
            text = f"Contents of {self.name}:\n\n{self.content}"
        else:
            text = f"Skill {self.name}:\n\n{self.content}"
        return {"role": "user", "content": f"<system-reminder>\n{text}\n</system-reminder>"}


class Shape(Protocol):
    """How a client's compaction differs from the articles' (`profile.ClientShape`): the
    request sent to the summariser, built from the whole list; which attachments are kept;
    and every message after the head, in the client's order (`CompactionResult.arranged`:
    the summary's, the kept ones, the restored; `attachments` is then empty, the restored
    messages being among `summary_messages`)."""

    def ask(self, messages: Sequence[Any]) -> list[Any]: ...

    def limit(
        self, fitted: tuple[Attachment, ...], dropped: tuple[str, ...]
    ) -> tuple[tuple[Attachment, ...], tuple[str, ...]]: ...

    def wrap(
        self,
        summary: str,
        raw_path: Path,
        summarised: Sequence[Any],
        kept: Sequence[Any],
        fitted: Sequence[Attachment],
    ) -> tuple[Any, ...]: ...


class CompactionResult(NamedTuple):
    boundary: Boundary
    summary_messages: tuple[Any, ...]
    attachments: tuple[Any, ...]
    kept: tuple[Any, ...]  # the last messages, untouched
    head: tuple[Any, ...]  # leading system/developer messages, untouched
    pre_tokens: int
    post_tokens: int
    summary: str
    raw_path: Path
    snapshot_path: Path
    dropped_attachments: tuple[str, ...] = ()
    arranged: tuple[Any, ...] | None = None  # a client's order of all but the head (`Shape`)

    @property
    def messages(self) -> list[Any]:
        """The new list to send."""
        if self.arranged is not None:
            return [*self.head, *self.arranged]
        return [*self.head, *self.summary_messages, *self.attachments, *self.kept]


def _capped(text: str, limit: int, counter: TokenCounter) -> str:
    """`text` within `limit` tokens: the longest prefix that fits with the mark after it."""
    if counter(text) <= limit:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix length that fits
        middle = (low + high + 1) // 2
        if counter(text[:middle] + TRUNCATED) <= limit:
            low = middle
        else:
            high = middle - 1
    return text[:low] + TRUNCATED


def fit_attachments(
    attachments: Sequence[Attachment],
    *,
    counter: TokenCounter = estimate_tokens,
    each: int = ATTACHMENT_MAX_TOKENS,
    per_kind: int = ATTACHMENTS_KIND_MAX_TOKENS,
) -> tuple[tuple[Attachment, ...], tuple[str, ...]]:
    """Files and skills cut to `each` tokens, then the oldest of a kind dropped until the
    kind fits in `per_kind`; the instruction context is kept whole (the Assembly's own budget
    bounds it). Returns the kept attachments, in order, and the names dropped."""
    kept: list[Attachment] = []
    dropped: list[str] = []
    for kind in AttachmentKind:
        members = sorted((a for a in attachments if a.kind is kind), key=lambda a: a.order)
        if kind is AttachmentKind.INSTRUCTIONS:
            kept += members
            continue
        # Dropping the oldest until the rest fits keeps the longest newest run that fits:
        # walked from the newest, only the attachments kept (and one more) are measured.
        newest: list[Attachment] = []
        total = 0
        for attachment in reversed(members):
            capped = attachment._replace(content=_capped(attachment.content, each, counter))
            total += counter(capped.content)
            if total > per_kind:
                break
            newest.append(capped)
        dropped += [a.name for a in members[: len(members) - len(newest)]]
        kept += reversed(newest)
    return tuple(kept), tuple(dropped)


def _cut(messages: Sequence[Any], keep_recent: int) -> tuple[int, int]:
    """(head, cut): summarise messages[head:cut], keep the rest."""
    if keep_recent < 0:
        raise ValueError("keep_recent must be >= 0")
    found = scan(messages)  # first: it refuses a list that cannot be one
    head = head_length(messages)
    safe = safe_cuts(messages, found)
    cut = max(head, len(messages) - keep_recent)
    while cut > head and not safe[cut]:
        cut -= 1
    return head, cut


def compact(
    messages: Sequence[Any],
    *,
    summarize: Summarize,
    sessions_dir: str | os.PathLike[str] | Below,
    keep_recent: int = 4,
    used: Prompt | None = None,
    trigger: Trigger = Trigger.AUTO,
    pre_tokens: int | None = None,
    attachments: Sequence[Attachment] = (),
    counter: TokenCounter = estimate_tokens,
    summary_role: str = "user",
    summary_prefix: str = "[Conversation summary]\n",
    shape: Shape | None = None,
) -> CompactionResult:
    """Summarise all but the last `keep_recent` messages with `summarize` (given the request
    of `prompts.summary_request`, it returns the reply's text) after saving the whole list.
    A client's `shape` (`Shape`) builds the request, the summary messages and the
    attachments its way instead."""
    if summary_role not in ("user", "assistant"):
        raise ValueError("summary_role is 'user' or 'assistant'")
    used = used or prompt()
    head, cut = _cut(messages, keep_recent)
    if cut <= head:
        raise ConversationError("nothing to compact: every message is kept")
    raw_path = append_raw(sessions_dir, messages)  # 1. before anything is dropped
    request = shape.ask(messages) if shape else summary_request(used, messages[head:cut])
    try:
        reply = summarize(request)  # 2.
    except Exception as err:  # the caller's summariser: any failure leaves the list as it was
        raise ConversationError(f"the summariser failed: {type(err).__name__}: {err}") from None
    summary = summary_text(reply, tagged=used.tagged or shape is not None)
    kept_ids = {r.id for r in scan(messages[cut:]).results}
    wanted = [a for a in attachments if a.source_id is None or a.source_id not in kept_ids]
    fitted, dropped = fit_attachments(wanted, counter=counter)
    arranged: tuple[Any, ...] | None = None
    if shape is not None:
        fitted, dropped = shape.limit(fitted, dropped)
        summarised, kept = messages[head:cut], messages[cut:]
        arranged = shape.wrap(summary, raw_path, summarised, kept, fitted)
        verbatim = {id(m) for m in kept}  # the kept messages are the very objects
        summary_messages = tuple(m for m in arranged if id(m) not in verbatim)
        attached: tuple[Any, ...] = ()
    else:
        summary_messages = ({"role": summary_role, "content": summary_prefix + summary},)
        attached = tuple(a.message() for a in fitted)
    last = messages[cut - 1]
    last_id = None
    if isinstance(last, Mapping):
        last_id = next((last[k] for k in ("id", "uuid") if isinstance(last.get(k), str)), None)
    result = CompactionResult(  # 3.
        boundary=Boundary(
            trigger,
            pre_tokens if pre_tokens is not None else counter(dumps(list(messages))),
            cut - 1,
            last_id,
        ),
        summary_messages=summary_messages,
        attachments=attached,
        kept=tuple(messages[cut:]),
        head=tuple(messages[:head]),
        pre_tokens=0,
        post_tokens=0,
        summary=summary,
        raw_path=raw_path,
        snapshot_path=Below.of(sessions_dir).path / "ctx.json",
        dropped_attachments=dropped,
        arranged=arranged,
    )
    result = result._replace(
        pre_tokens=result.boundary.pre_tokens, post_tokens=counter(dumps(result.messages))
    )
    write_snapshot(sessions_dir, result.messages)  # 4.
    return result
