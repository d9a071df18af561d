"""How the npm `ignore` package (7.0.5, which Claude Code bundles) reads one gitignore
pattern, as an RE2 regex: the translation behind `globs.gitignore`.

`ignore` turns a pattern into a JavaScript regex with a chain of string replacements, then
tests a path with `new RegExp(source, "i")`. `js_source` runs the same chain (each step
below is the package's own, in its order, with JavaScript's `\\s`, `.` and `$` spelled out),
so every quirk comes along: `[!a]` and `[^a]` are not negated classes, an unclosed `[`
matches nothing, `**` inside a segment is `*`, a trailing `/**` needs something below the
directory. `to_re2` then rewrites that JavaScript regex for RE2 (linear in the path): the
only look-ahead the chain writes is `(?=$|\\/$)` at the very end, which RE2 may consume
instead; a class or escape is spelled as code points. A source JavaScript would refuse
(`[z-a]`) gives None: the client's pattern matches nothing.

Known difference: JavaScript compares UTF-16 code units, so `?` matches half of a character
outside the Basic Multilingual Plane; RE2 matches whole characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

# JavaScript's `\s` (ECMAScript WhiteSpace and LineTerminator), and what `.` never matches.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_S = f"[{_JS_SPACE}]"
_NOT_LINE_END = "[^\n\r\u2028\u2029]"

_BLANK = re.compile(rf"{_S}+\Z")
_INVALID_TRAILING_BACKSLASH = re.compile(r"(?:[^\\]|^)\\\Z")
_RANGE = re.compile(r"([0-z])-([0-z])")


def _sanitize_range(text: str) -> str:
    return _RANGE.sub(lambda m: m.group() if m.group(1) <= m.group(2) else "", text)


def _even(slashes: str) -> str:
    return slashes[: len(slashes) - len(slashes) % 2]


def _trailing_space(m: re.Match[str]) -> str:
    return m.group(1) + (" " if m.group(2).startswith("\\") else "")


def _globstar(m: re.Match[str]) -> str:
    return r"(?:\/[^\/]+)*" if m.start() + 6 < len(m.string) else r"\/.+"


def _bracket(m: re.Match[str]) -> str:
    lead, body, end, close = m.group(1), m.group(2), m.group(3), m.group(4)
    if lead == "\\":
        return f"\\[{body}{_even(end)}{close}"
    if close == "]" and len(end) % 2 == 0:
        return f"[{_sanitize_range(body)}{end}]"
    return "[]"


def _ending(m: re.Match[str]) -> str:
    return m.group() + "$" if m.group().endswith("/") else m.group() + r"(?=$|\/$)"


_Step = tuple["re.Pattern[str]", Callable[[re.Match[str]], str], int]

# ignore 7.0.5's REPLACERS, in order; the count is 1 where JavaScript's regex has no `g`.
_STEPS: tuple[_Step, ...] = (
    (re.compile("^\ufeff"), lambda m: "", 1),
    (re.compile(rf"((?:\\\\)*?)(\\?{_S}+)\Z"), _trailing_space, 1),
    (re.compile(rf"(\\+?){_S}"), lambda m: _even(m.group(1)) + " ", 0),
    (re.compile(r"[\\$.|*+(){^]"), lambda m: "\\" + m.group(), 0),
    (re.compile(r"\?"), lambda m: "[^/]", 0),
    (re.compile(r"^/"), lambda m: "^", 1),
    (re.compile(r"/"), lambda m: r"\/", 0),
    (re.compile(r"^\^*\\\*\\\*\\/"), lambda m: r"^(?:.*\/)?", 1),
    # (the starting step, which needs the pattern: in `js_source`)
    (re.compile(r"\\/\\\*\\\*(?=\\/|\Z)"), _globstar, 0),
    (
        re.compile(rf"(^|[^\\]+)(\\\*)+(?={_NOT_LINE_END}+)"),
        lambda m: m.group(1) + r"[^\/]*",
        0,
    ),
    (re.compile(r"\\\\\\(?=[$.|*+(){^])"), lambda m: "\\", 0),
    (re.compile(r"\\\\"), lambda m: "\\", 0),
    (re.compile(r"(\\)?\[([^\]/]*?)(\\*)(\Z|\])"), _bracket, 0),
    (re.compile(r"[^*]\Z"), _ending, 1),
)
_STARTING_AT = 8
_INNER_SLASH = re.compile(r"/(?!\Z)")
_TRAILING_WILDCARD = re.compile(r"(^|\\/)?\\\*\Z")


class Rule(NamedTuple):
    """One pattern as `ignore` keeps it: negated or not, and its JavaScript regex."""

    negative: bool
    source: str


def rule(pattern: str) -> Rule | None:
    """The pattern as `ignore.add()` keeps it, or None when it drops it (blank, a comment,
    a trailing lone backslash)."""
    if (
        not pattern
        or _BLANK.match(pattern)
        or _INVALID_TRAILING_BACKSLASH.search(pattern)
        or pattern.startswith("#")
    ):
        return None
    negative = pattern.startswith("!")
    body = pattern[1:] if negative else pattern
    if body.startswith(("\\!", "\\#")):
        body = body[1:]
    return Rule(negative, js_source(body))


def js_source(body: str) -> str:
    """The JavaScript regex `ignore` tests paths with (mode `regex`, the one `ignores()` uses)."""
    text = body
    for index, (regex, replace, count) in enumerate(_STEPS):
        if index == _STARTING_AT and text and not text.startswith("^"):
            text = ("^" if _INNER_SLASH.search(body) else r"(?:^|\/)") + text
        text = regex.sub(replace, text, count=count)

    def wildcard(m: re.Match[str]) -> str:
        return (f"{m.group(1)}[^/]+" if m.group(1) else "[^/]*") + r"(?=$|\/$)"

    return _TRAILING_WILDCARD.sub(wildcard, text, count=1)


# --- JavaScript regex (as the chain writes it) to RE2 -------------------------------------

_NEVER = r"[^\x00-\x{10ffff}]"
_ANY = r"[\x00-\x{10ffff}]"
_CLASS_ESCAPES = {
    "d": [(0x30, 0x39)],
    "w": [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)],
    "s": [(9, 13), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
          (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
          (0xFEFF, 0xFEFF)],
}  # fmt: skip
_CONTROL = {"n": 10, "r": 13, "t": 9, "v": 11, "f": 12}


class _Refused(Exception):
    """JavaScript would refuse the regex (`new RegExp` throws)."""


def _complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, low = [], 0
    for a, b in sorted(ranges):
        if a > low:
            out.append((low, a - 1))
        low = max(low, b + 1)
    if low <= 0x10FFFF:
        out.append((low, 0x10FFFF))
    return out


def _escape_set(letter: str) -> list[tuple[int, int]] | None:
    """The code points of `\\d`, `\\D`, `\\w`, ... or None for another escape."""
    ranges = _CLASS_ESCAPES.get(letter.lower())
    if ranges is None:
        return None
    return _complement(ranges) if letter.isupper() else ranges


def _escape_char(source: str, i: int, in_class: bool) -> tuple[int, int]:
    """The code point of the escape at `source[i]` (after its backslash) and the index after it
    (Annex B's legacy forms: octal, identity escapes)."""
    ch = source[i]
    if ch in _CONTROL:
        return _CONTROL[ch], i + 1
    if ch == "b" and in_class:
        return 8, i + 1
    if ch == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", source[i + 1 : i + 3]):
        return int(source[i + 1 : i + 3], 16), i + 3
    if ch == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", source[i + 1 : i + 5]):
        return int(source[i + 1 : i + 5], 16), i + 5
    if ch == "c" and source[i + 1 : i + 2].isascii() and source[i + 1 : i + 2].isalpha():
        return ord(source[i + 1]) % 32, i + 2
    if ch == "c":
        return ord("\\"), i  # a backslash, then `c` read on its own
    if "0" <= ch <= "7":
        digits = re.match(r"[0-7]{1,3}", source[i:])
        assert digits is not None
        text = digits.group()
        if int(text, 8) > 0o377:
            text = text[:2]
        return int(text, 8), i + len(text)
    return ord(ch), i + 1


def _class(source: str, start: int) -> tuple[str, int]:
    """The JavaScript class at `source[start]` (`[`) as an RE2 class, and the index after."""
    i = start + 1
    negate = source.startswith("^", i)
    i += negate
    ranges: list[tuple[int, int]] = []
    pending: int | None = None  # the last single member, which a `-` may extend
    dash = False
    while True:
        if i >= len(source):
            raise _Refused
        ch = source[i]
        if ch == "]":
            break
        members: list[tuple[int, int]] | None = None
        if ch == "\\":
            members = _escape_set(source[i + 1]) if i + 1 < len(source) else None
            if members is None:
                code, i = _escape_char(source, i + 1, True)
            else:
                i += 2
        else:
            code, i = ord(ch), i + 1
        if members is not None:
            if dash:  # `a-\d`: no range, the members one by one (Annex B)
                ranges.append((ord("-"), ord("-")))
            ranges += members
            pending, dash = None, False
            continue
        if dash and pending is not None:
            if code < pending:
                raise _Refused  # "Range out of order in character class"
            ranges.append((pending, code))
            pending, dash = None, False
            continue
        if code == ord("-") and pending is not None and not source.startswith("]", i):
            dash = True
            continue
        ranges.append((code, code))
        pending = code
    if negate:
        ranges = _complement(ranges)
    if not ranges:
        return _NEVER, i + 1
    return "[" + "".join(_span(a, b) for a, b in ranges) + "]", i + 1


def _span(a: int, b: int) -> str:
    return f"\\x{{{a:x}}}" if a == b else f"\\x{{{a:x}}}-\\x{{{b:x}}}"


def to_re2(source: str) -> str | None:
    """The JavaScript regex `source` (flag `i`) for RE2, matched anywhere in the path; None
    when JavaScript refuses it."""
    out: list[str] = []
    depth = 0
    i = 0
    try:
        while i < len(source):
            ch = source[i]
            if ch == "[":
                cls, i = _class(source, i)
                out.append(cls)
                continue
            if ch == "\\":
                if i + 1 >= len(source):
                    raise _Refused  # "\ at end of pattern"
                letter = source[i + 1]
                members = _escape_set(letter)
                if members is not None:
                    out.append("[" + "".join(_span(a, b) for a, b in members) + "]")
                    i += 2
                elif letter in "bB":
                    out.append("\\" + letter)
                    i += 2
                else:
                    code, i = _escape_char(source, i + 1, False)
                    out.append(_span(code, code))
                continue
            if source.startswith("(?=", i):
                if not source.endswith(")") or source.find(")", i) != len(source) - 1:
                    raise _Refused  # the chain writes a look-ahead only at the very end
                out.append("(?:")
                depth += 1
                i += 3
                continue
            if source.startswith("(?:", i):
                out.append("(?:")
                depth += 1
                i += 3
                continue
            if ch == "(":
                out.append("(?:")
                depth += 1
            elif ch == ")":
                if not depth:
                    raise _Refused
                depth -= 1
                out.append(")")
            elif ch == ".":
                out.append("[^\\n\\r\\x{2028}\\x{2029}]")
            elif ch == "$":
                out.append("\\z")
            elif ch in "^|":
                out.append(ch)
            elif ch in "*+?":
                if not out or out[-1] in ("(?:", "|", "^"):
                    raise _Refused  # "Nothing to repeat"
                out.append(ch)
            else:
                out.append(_span(ord(ch), ord(ch)))
            i += 1
    except (_Refused, IndexError):
        return None
    if depth:
        return None
    return "(?i)" + "".join(out) if out else "(?i)"
