"""Claude Code's cut of its memory index (`MEMORY.md`): its `truncateEntrypointContent`, at
the limits its policy sets (`policies/claude-code.toml`: 200 lines, 25,000 characters), with
the detail its 2.1.332 release adds to the warning. The seed's workspace (`bootstrap`) cuts
its `memory/MEMORY.md` the same way. The budgeter and lint's CTX106 both call `truncate_index`."""

from __future__ import annotations

import re

from ...display import format_file_size
from ...parsing.marked.jsre import JS_SPACE, js_trim, js_trim_end

# JavaScript's `/\s\S*$/`: the last white space before the last word.
_LAST_WORD = re.compile(f"[{JS_SPACE}][^{JS_SPACE}]*$")


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
    over_lines = 0 < max_lines < len(lines)  # 0: no such limit
    over_chars = 0 < max_chars < size
    if not over_lines and not over_chars:
        return None
    truncated = "\n".join(lines[:max_lines]) if over_lines else trimmed
    whole_kept = len(truncated)  # code points of `trimmed` kept, when nothing is split
    if max_chars and _utf16_len(truncated) > max_chars:
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
