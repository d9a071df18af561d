"""Level 3: micro-compaction, clearing the results of tools that can simply be run again.

Only results of re-runnable tools are touched (Claude Code's `COMPACTABLE_TOOLS`: read, the
shells, grep, glob, web search, web fetch, edit, write; here under Claude Code's names and the
snake_case names agents commonly use, and configurable). Any other tool's result (an API
call that cannot be repeated) is never cleared. Two modes, from the second article:

* **time-based** (`clear_old_tool_results`): once the prompt cache has expired (default: 60
  minutes since the last request), there is no cached prefix left to protect, so old
  compactable results are replaced in place by `[Old tool result content cleared]`;
* **cache-preserving** (`cache_edit_tool_results`, Anthropic requests only): the stored list
  is left alone and the *request* carries the edits, exactly as the article's two-round
  walk-through shows: each result to delete gets `cache_reference: <its tool_use_id>`; the
  last user message gets a `{"type": "cache_edits", "edits": [{"type": "delete",
  "cache_reference": ...}]}` block first and the one `cache_control` breakpoint on its last
  block; edits made in earlier rounds stay pinned where they were sent (same message, same
  bytes) so the cached prefix still matches; the result in the last message is never deleted.

Both never clear a result in the last message: the model has not seen it yet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple

from ..display import shown
from .messages import Result, Shape, Unknown, dumps, scan, with_results

CLEARED = "[Old tool result content cleared]"
COMPACTABLE_TOOLS = frozenset(
    {
        *("Read", "Bash", "PowerShell", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write"),
        *("read_file", "bash", "shell", "grep", "glob", "web_search", "web_fetch"),
        *("edit_file", "write_file", "list_dir", "list_files"),
    }
)
CACHE_TTL_SECONDS = 60 * 60


class Cleared(NamedTuple):
    at: int
    tool_use_id: str
    before: int

    def __str__(self) -> str:
        return f"Old tool result cleared: {shown(self.tool_use_id, 80)} ({self.before} chars)"


class ClearResult(NamedTuple):
    messages: list[Any]
    cleared: tuple[Cleared, ...]
    unknown: tuple[Unknown, ...]


def _compactable(
    messages: Sequence[Any], compactable: Collection[str]
) -> tuple[list[Result], tuple[Unknown, ...]]:
    """The results of compactable tools not yet cleared, and the unknown messages."""
    found = scan(messages)
    results = [r for r in found.results if found.tool_name(r) in compactable and r.text != CLEARED]
    return results, found.unknown


def clear_old_tool_results(
    messages: Sequence[Any],
    *,
    last_request_at: float | None,
    now: float,
    ttl: float = CACHE_TTL_SECONDS,
    keep_recent: int = 2,
    compactable: Collection[str] = COMPACTABLE_TOOLS,
) -> ClearResult:
    """Time-based: when `now - last_request_at >= ttl` (seconds; no request yet: nothing),
    clear every compactable result but the newest `keep_recent` and any in the last message."""
    results, unknown = _compactable(messages, compactable)
    if last_request_at is None or now - last_request_at < ttl:
        return ClearResult(list(messages), (), unknown)
    older = results[: max(0, len(results) - keep_recent)]
    chosen = [r for r in older if r.at != len(messages) - 1]
    replaced: dict[tuple[int, int | None], Any] = {(r.at, r.block): CLEARED for r in chosen}
    cleared = tuple(Cleared(r.at, r.id, len(r.text)) for r in chosen)
    return ClearResult(with_results(messages, replaced), cleared, unknown)


class PinnedEdit(NamedTuple):
    """A `cache_edits` block sent in an earlier round: the message it is in, the ids it
    deletes, and a digest of that message as stored (a changed list drops every pin)."""

    at: int
    ids: tuple[str, ...]
    digest: str


class CacheEditState(NamedTuple):
    """What earlier rounds sent; pass the returned state to the next round."""

    pinned: tuple[PinnedEdit, ...] = ()

    @property
    def deleted(self) -> frozenset[str]:
        return frozenset(i for pin in self.pinned for i in pin.ids)


class CacheEditResult(NamedTuple):
    request: list[Any]  # the messages to send; the stored list is not changed
    state: CacheEditState
    deleted: tuple[str, ...]  # deleted in this round
    reset: bool  # the list changed under earlier pins: they were dropped
    unknown: tuple[Unknown, ...]


def digest(message: Any) -> str:
    text = dumps(message, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _edits_block(ids: Sequence[str]) -> dict[str, Any]:
    return {"type": "cache_edits", "edits": [{"type": "delete", "cache_reference": i} for i in ids]}


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [{k: v for k, v in b.items() if k != "cache_control"} for b in content or ()]


def cache_edit_tool_results(
    messages: Sequence[Any],
    state: CacheEditState | None = None,
    *,
    trigger: int = 6,
    keep_recent: int = 3,
    compactable: Collection[str] = COMPACTABLE_TOOLS,
) -> CacheEditResult:
    """One round of the cache-preserving mode: when at least `trigger` compactable results
    are still live, delete all but the newest `keep_recent` and any in the last user message,
    oldest first, through `cache_reference` / `cache_edits`. OpenAI results are left out."""
    state = state or CacheEditState()
    results, unknown = _compactable(messages, compactable)
    results = [r for r in results if r.shape is Shape.ANTHROPIC]
    strange = {u.at for u in unknown}
    users = [i for i, m in enumerate(messages) if i not in strange and m.get("role") == "user"]
    digests: dict[int, str] = {}  # several pins can sit in one message: digest it once
    for pin in state.pinned:
        if pin.at < len(messages) and pin.at not in digests:
            digests[pin.at] = digest(messages[pin.at])
    pins_hold = all(digests.get(p.at) == p.digest for p in state.pinned)
    reset = not pins_hold
    pinned = state.pinned if pins_hold else ()
    if not users:
        return CacheEditResult(list(messages), CacheEditState(pinned), (), reset, unknown)
    last_user = users[-1]
    deleted = {i for p in pinned for i in p.ids}
    live = [r for r in results if r.id not in deleted]
    new: list[Result] = []
    if len(live) >= trigger:
        protected = set(live[max(0, len(live) - keep_recent) :]) if keep_recent else set()
        new = [r for r in live if r.at != last_user and r not in protected]
    new_ids = tuple(dict.fromkeys(r.id for r in new))
    if new_ids:
        pinned = (*pinned, PinnedEdit(last_user, new_ids, digest(messages[last_user])))
    request = list(messages)
    referenced = deleted | set(new_ids)
    edits: dict[int, list[dict[str, Any]]] = {}  # by message, in the order they were sent
    for pin in pinned:
        edits.setdefault(pin.at, []).append(_edits_block(pin.ids))
    touched = {r.at for r in results if r.id in referenced} | set(edits) | {last_user}
    for index in sorted(touched):
        blocks = _blocks(messages[index])
        for block in blocks:
            if block.get("type") == "tool_result" and block.get("tool_use_id") in referenced:
                block["cache_reference"] = block["tool_use_id"]
        blocks[:0] = edits.get(index, ())
        request[index] = {**messages[index], "content": blocks}
    rebuilt = touched | strange  # once: each message below is looked at in constant time
    for index, message in enumerate(request):  # one breakpoint, on the last user message
        if index not in rebuilt:
            content = message.get("content")
            if isinstance(content, list) and any("cache_control" in b for b in content):
                request[index] = {**message, "content": _blocks(message)}
    if request[last_user]["content"]:
        request[last_user]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return CacheEditResult(request, CacheEditState(pinned), new_ids, reset, unknown)
