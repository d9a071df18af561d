"""The display form of text that came from outside: file names, import tokens, globs.

Whatever a repository names its files, a diagnostic stays one line that a terminal shows as
it is, and every JSON document (the json format, the provider requests, lint's JSON and SARIF,
explain's JSON) stays valid UTF-8. `shown` is the one place that decides how: newlines, other
control characters (ANSI escapes start with one), Unicode line separators and bidirectional
controls are written as backslash escapes, and a byte of a file name that is not UTF-8 (which
Python gives as a lone surrogate, `os.fsdecode`'s `surrogateescape`) as `\\xNN`. `dumps` is
`json.dumps` with the same escapes for the lone surrogates, the one thing JSON cannot carry.
"""

from __future__ import annotations

import functools
import re
from typing import Any

PATTERN_CHARS = 200  # a glob or token longer than this is shown as head…tail

# C0 and C1 controls, DEL, line/paragraph separators, bidi controls, lone surrogates: none of
# them is printable (`str.isprintable`), so printable text needs no look at all.
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
_SURROGATE = "[\ud800-\udfff]"


@functools.cache
def _pattern(source: str) -> re.Pattern[str]:
    """Compiled on first use (compiling these classes costs a millisecond at start-up)."""
    return re.compile(source)


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as `surrogateescape` keeps it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown(text: str, limit: int = 0) -> str:
    """`text` as one printable line; over `limit` characters (0: no limit), its head and
    tail around an ellipsis."""
    if limit and len(text) > limit:
        half = (limit - 1) // 2
        text = f"{text[:half]}…{text[len(text) - half :]}"
    if text.isprintable():
        return text
    return _pattern(_UNSAFE).sub(lambda m: _escape(m.group()), text)


def counted(count: int, noun: str, plural: str = "") -> str:
    """`1 source`, `2 sources`, `1,204 tokens`: a count and its noun, plural unless one
    (`plural`: the plural when it is not the noun and an s)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def as_client_reads(text: str) -> str:
    """`text` with each lone surrogate (a byte of a name that is not UTF-8, as Python keeps
    it) as U+FFFD: what a client reading names as UTF-8 (Node) has, and what UTF-8 can carry."""
    if text.isascii():
        return text
    return _pattern(_SURROGATE).sub("\ufffd", text)


def dumps(value: Any, **options: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, **options)`, with every lone surrogate (a file
    name byte that is not UTF-8) in its display form, so the text encodes as UTF-8."""
    import json  # not at import: `ctxasm lint` in text mode never needs it

    text = json.dumps(value, ensure_ascii=False, **options)
    if text.isascii() or not _pattern(_SURROGATE).search(text):
        return text
    # Inside a JSON string: the display form's backslash is itself escaped.
    return _pattern(_SURROGATE).sub(lambda m: _escape(m.group()).replace("\\", "\\\\"), text)


def format_file_size(size: int) -> str:
    """The agent's `formatFileSize` (`24.4KB`, `1.5MB`, `512 bytes`; 1,280 bytes is `1.3KB`:
    half up, as JavaScript's `toFixed` rounds an exact quotient): the one port, which the
    memory-index warning and the conversation runtime's persisted-output block both print."""
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
