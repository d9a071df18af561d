"""The budgeter: per-file character limits, the memory index cut (its client's own function,
`clients/claude_code/memory_index.py`, which the seed's workspace shares), a total token budget.

Every cut becomes a `Cut` on its source and a diagnostic: which source, how much, why.
Over the total budget, the least stable sources go first (environment, memory, subdirectory,
local, project, user; the last-loaded first within a layer); a source is trimmed at a line
boundary when trimming is enough, dropped otherwise. Managed and base text is never cut.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from . import codes
from .clients.claude_code.memory_index import truncate_index
from .discovery.loader import RUN_TEXT_CHARS
from .model import Cut, Diagnostic, Layer, Policy, Source, Stats, TokenCounter
from .output.sections import boundary_tokens, source_tokens
from .tokens import text_stats

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
            out[i], note = _dropped(source, max_tokens, cost)
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


def _dropped(source: Source, max_tokens: int, cost: int) -> tuple[Source, Diagnostic]:
    """`source` dropped, and the note: `cost` is its section's tokens (what explain's row
    and the budget count), not its text's alone."""
    empty = Stats(0, 0, 0, 0)
    cut = _cut("budget-drop", f"dropped to fit --max-tokens {max_tokens:,}", source.stats, empty)
    note = codes.BUDGET_DROPPED.at(
        source.display,
        f"dropped ({cost:,} tokens) to fit the {max_tokens:,}-token budget",
    )
    return source._replace(dropped=True, cuts=(*source.cuts, cut)), note
