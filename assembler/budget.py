"""The budgeter: per-file character limits, the memory index cut, a total token budget.

Every cut becomes a `Cut` on its source and a diagnostic: which source, how much, why.
Over the total budget, the least stable sources go first (environment, memory, subdirectory,
local, project, user; the last-loaded first within a layer); a source is trimmed at a line
boundary when trimming is enough, dropped otherwise. Managed and base text is never cut.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from . import codes
from .discovery.loader import RUN_TEXT_CHARS
from .model import Cut, Diagnostic, Layer, Policy, Source, Stats, TokenCounter
from .output.sections import boundary_tokens, source_tokens
from .parsing.marked.jsre import JS_SPACE, js_trim, js_trim_end
from .tokens import text_stats

# JavaScript's `/\s\S*$/`: the last white space before the last word.
_LAST_WORD = re.compile(f"[{JS_SPACE}][^{JS_SPACE}]*$")
PROTECTED = frozenset({Layer.MANAGED, Layer.BASE})
BUDGET_MARKER = "\n...(truncated to fit the token budget)"


def _cut(kind: str, reason: str, before: Stats, after: Stats) -> Cut:
    return Cut(
        kind,
        reason,
        max(0, before.lines - after.lines),
        max(0, before.chars - after.chars),
        max(0, before.tokens - after.tokens),
    )


# --- per file -----------------------------------------------------------------------------


def limit_chars(raw: str, limit: int, marker: str) -> str | None:
    """The seed's `readWithLimit`: `raw[:limit].strip() + marker` when longer, else None."""
    if limit <= 0 or len(raw) <= limit:
        return None
    return raw[:limit].strip() + marker


def _utf16_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def _index_at_utf16(text: str, units: int) -> int:
    """The largest code-point index whose prefix is at most `units` UTF-16 code units."""
    if text.isascii() or max(text) < "\U00010000":
        return min(units, len(text))
    count = 0
    for i, ch in enumerate(text):
        count += 2 if ch >= "\U00010000" else 1
        if count > units:
            return i
    return len(text)


def format_file_size(size: int) -> str:
    """The client's `formatFileSize` (`24.4KB`, `1.5MB`, `512 bytes`)."""
    from decimal import ROUND_HALF_UP, Decimal  # rarely needed: not imported at start-up

    value = Decimal(size) / 1024
    if value < 1:
        return f"{size} bytes"
    for unit in ("KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            text = str(value.quantize(Decimal("0.1"), ROUND_HALF_UP))
            return (text[:-2] if text.endswith(".0") else text) + unit
        value /= 1024
    raise AssertionError("unreachable")


def truncate_index(
    content: str, max_lines: int, max_chars: int, name: str, detail: bool = False
) -> tuple[str, str] | None:
    """The client's `truncateEntrypointContent` for the index file called `name`: (new
    content, reason), or None when it fits.

    Lines are split on `\n` only, so a CRLF index keeps its `\r`s. With `detail` the warning
    also says which lines were cut (`_cut_detail`). Lengths are JavaScript
    string lengths (UTF-16 units), as in the client; the cut is at the last `\n` at or before
    unit `max_chars`, or at that unit when there is none, where half of a character outside
    the Basic Multilingual Plane becomes U+FFFD (what the model receives for it).
    """
    trimmed = content.strip()
    lines = trimmed.split("\n")
    size = _utf16_len(trimmed)
    over_lines = len(lines) > max_lines
    over_chars = size > max_chars
    if not over_lines and not over_chars:
        return None
    truncated = "\n".join(lines[:max_lines]) if over_lines else trimmed
    whole_kept = len(truncated)  # code points of `trimmed` kept, when nothing is split
    if _utf16_len(truncated) > max_chars:
        limit = _index_at_utf16(truncated, max_chars)
        cut_at = truncated.rfind("\n", 0, limit + 1)
        if cut_at > 0:
            truncated = truncated[:cut_at]
            whole_kept = cut_at
        else:  # the client cuts at unit `max_chars`, maybe inside a character: half of one
            split = _utf16_len(truncated[:limit]) < max_chars  # is U+FFFD to the model
            truncated = truncated[:limit] + ("\ufffd" if split else "")
            whole_kept = -1 if split else limit  # what follows is no line break
    if over_chars and not over_lines:
        why = f"{format_file_size(size)} (limit: {format_file_size(max_chars)}) \u2014 index entries are too long"
    elif over_lines and not over_chars:
        why = f"{len(lines)} lines (limit: {max_lines})"
    else:
        why = f"{len(lines)} lines and {format_file_size(size)}"
    said = f": {_cut_detail(trimmed, whole_kept, truncated, len(lines))}" if detail else ""
    warning = (
        f"\n\n> WARNING: {name} is {why}. Only part of it was loaded{said}. "
        "Keep index entries to one line under ~200 chars; move detail into topic files."
    )
    return truncated + warning, why


def _cut_detail(whole: str, kept: int, truncated: str, line_count: int) -> str:
    """Where the cut is, as the memory index's client says it from its 2.1.332 release (its
    truncation function, read from the release): the lines cut and the first of them, or
    the characters of line 1 kept
    (UTF-16 units, as the client counts). `kept`: how many characters of `whole` were kept
    (-1: half of one, so no line break follows)."""
    if kept < 0 or whole[kept : kept + 1] != "\n":
        return (
            f"everything after the first {_utf16_len(truncated)} characters of line 1 was cut off"
        )
    kept_lines = whole.count("\n", 0, kept) + 1
    end = whole.find("\n", kept + 1)
    first_cut = js_trim(whole[kept + 1 : end if end >= 0 else None])
    quoted = f' ("{_shortened(first_cut, 80)}")' if first_cut else ""
    return (
        f"{line_count - kept_lines} of {line_count} lines were cut off, "
        f"starting at line {kept_lines + 1}{quoted}"
    )


def _shortened(text: str, width: int) -> str:
    """The client's `truncateToWidth`-like cut of a quoted line (`PW`): at most `width` UTF-16
    units with an ellipsis, at the last white space when that keeps over half of it."""
    if _utf16_len(text) <= width:
        return text
    head = _utf16_prefix(text, width - 1)
    space = _LAST_WORD.search(head)
    words = js_trim_end(head[: space.start()]) if space is not None else ""
    return f"{words if _utf16_len(words) > width / 2 else js_trim_end(head)}\u2026"


def _utf16_prefix(text: str, units: int) -> str:
    """The first `units` UTF-16 units of `text`, without a half character at the end."""
    return text[: _index_at_utf16(text, units)]


class _TextLeft:
    """The characters the run's text may still grow by (`RUN_TEXT_CHARS` less what it holds):
    what a cut adds (the truncation marker on every cut file, an index's warning) counts in
    the run's text as what was loaded does."""

    __slots__ = ("chars",)

    def __init__(self, sources: Sequence[Source]) -> None:
        self.chars = RUN_TEXT_CHARS - sum(len(s.content) for s in sources if not s.dropped)

    def replace(self, before: str, after: str) -> None:
        self.chars -= len(after) - len(before)


def _per_file(
    source: Source, policy: Policy, counter: TokenCounter, left: _TextLeft
) -> tuple[Source, list[Diagnostic]]:
    notes: list[Diagnostic] = []
    limits = policy.limits
    marker = limits.truncation_marker
    limited = limit_chars(source.raw, limits.file_chars, marker)
    if limited is not None and len(limited) - len(source.content) > left.chars:
        limited = limited.removesuffix(marker)  # the text is cut all the same, without it
        notes.append(
            codes.LOAD_LIMIT.at(
                source.display,
                f"cut without the truncation marker: with it this run's text would pass "
                f"{RUN_TEXT_CHARS:,} characters (every cut file gets one); shorten "
                "limits.truncation_marker or raise limits.file_chars",
            )
        )
    if limited is not None:
        left.replace(source.content, limited)
        after = text_stats(limited, counter)
        cut = _cut(
            "file-chars",
            f"over the {limits.file_chars:,}-character per-file limit",
            source.stats,
            after,
        )
        source = source._replace(content=limited, stats=after, cuts=(*source.cuts, cut))
        notes.append(
            codes.FILE_CHARS.at(
                source.display,
                f"{source.original.chars:,} chars, over the {limits.file_chars:,}-char limit; "
                f"cut to {after.chars:,}: shorten it or move detail elsewhere",
            )
        )
    if source.is_index:
        name = os.path.basename(source.path)
        result = truncate_index(
            source.content, limits.index_lines, limits.index_chars, name, source.cut_detail
        )
        if result is not None:
            text, why = result
            left.replace(source.content, text)  # the client's own warning: always added
            after = text_stats(text, counter)
            cut = _cut("index", f"index limit: {why}", source.stats, after)
            source = source._replace(content=text, stats=after, cuts=(*source.cuts, cut))
            notes.append(
                codes.INDEX_CUT.at(
                    source.display,
                    f"{name} is {why}; only the first {after.lines - 2} lines were loaded: "
                    "keep index entries to one line and move detail into topic files",
                )
            )
    return source, notes


# --- total --------------------------------------------------------------------------------


def _fit(source: Source, allowed: int, policy: Policy, counter: TokenCounter) -> str | None:
    """The longest line-boundary prefix (+ marker) whose section costs at most `allowed`."""

    def fits(text: str) -> bool:
        return source_tokens(source._replace(content=text, lazy=False), policy, counter) <= allowed

    lines = source.content.split("\n")
    lo, hi = 0, len(lines) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits("\n".join(lines[:mid]) + BUDGET_MARKER):
            lo = mid
        else:
            hi = mid - 1
    if lo > 0:
        return "\n".join(lines[:lo]) + BUDGET_MARKER
    first = lines[0]
    lo, hi = 0, len(first)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(first[:mid] + BUDGET_MARKER):
            lo = mid
        else:
            hi = mid - 1
    return first[:lo] + BUDGET_MARKER if lo > 0 else None


def apply_budget(
    sources: Sequence[Source], policy: Policy, max_tokens: int, counter: TokenCounter
) -> tuple[tuple[Source, ...], tuple[Diagnostic, ...]]:
    """Per-file limits, then the total budget (0 = none). Returns the new sources and notes."""
    notes: list[Diagnostic] = []
    out: list[Source] = []
    left = _TextLeft(sources)
    for source in sources:
        limited, found = _per_file(source, policy, counter, left)
        out.append(limited)
        notes += found
    if max_tokens > 0:
        notes += _fit_total(out, policy, max_tokens, counter)
    return tuple(out), tuple(notes)


def _fit_total(
    out: list[Source], policy: Policy, max_tokens: int, counter: TokenCounter
) -> list[Diagnostic]:
    """Cut `out` in place until it fits `max_tokens`: the least stable, last loaded first.

    Each section's cost is counted once and the total kept up to date as sources are cut
    (linear in the number of sources, plus the binary search of each trim)."""
    notes: list[Diagnostic] = []
    costs = [0 if s.dropped else source_tokens(s, policy, counter) for s in out]
    live = sum(1 for s in out if not s.dropped)
    marker = boundary_tokens(policy, counter)  # while any source is live
    content = sum(costs)
    total = content + (marker if live else 0)
    victims = sorted(
        (i for i, s in enumerate(out) if s.layer not in PROTECTED and not s.dropped),
        key=lambda i: (-out[i].layer.rank, -i),
    )
    for i in victims:
        over = total - max_tokens
        if over <= 0:
            break
        source, cost = out[i], costs[i]
        trimmed = _fit(source, cost - over, policy, counter) if cost > over else None
        if trimmed is not None:
            out[i], note = _trimmed(source, trimmed, max_tokens, counter)
            costs[i] = source_tokens(out[i], policy, counter)
        else:
            out[i], note = _dropped(source, max_tokens)
            costs[i] = 0
            live -= 1
        notes.append(note)
        content += costs[i] - cost
        total = content + (marker if live else 0)
    if victims and not live:
        notes.append(
            codes.OVER_BUDGET.at(
                "<assembly>",
                f"the {max_tokens:,}-token budget holds none of the {len(victims):,} sources: every "
                "one was dropped and the context is empty: raise --max-tokens",
            )
        )
    elif total > max_tokens:
        notes.append(
            codes.OVER_BUDGET.at(
                "<assembly>",
                f"{total:,} tokens remain over the {max_tokens:,}-token budget after cutting everything "
                "but managed and base text: raise --max-tokens or shorten the managed files",
            )
        )
    return notes


def _trimmed(
    source: Source, text: str, max_tokens: int, counter: TokenCounter
) -> tuple[Source, Diagnostic]:
    after = text_stats(text, counter)
    cut = _cut("budget-trim", f"trimmed to fit --max-tokens {max_tokens:,}", source.stats, after)
    note = codes.BUDGET_TRIMMED.at(
        source.display,
        f"trimmed by {cut.tokens:,} tokens ({cut.lines:,} lines) to fit the {max_tokens:,}-token budget",
    )
    return source._replace(content=text, lazy=False, stats=after, cuts=(*source.cuts, cut)), note


def _dropped(source: Source, max_tokens: int) -> tuple[Source, Diagnostic]:
    empty = Stats(0, 0, 0, 0)
    cut = _cut("budget-drop", f"dropped to fit --max-tokens {max_tokens:,}", source.stats, empty)
    note = codes.BUDGET_DROPPED.at(
        source.display,
        f"dropped ({source.stats.tokens:,} tokens) to fit the {max_tokens:,}-token budget",
    )
    return source._replace(dropped=True, cuts=(*source.cuts, cut)), note
