"""JavaScript regular expressions and string trimming, as `marked` sees them, in Python `re`.

`blocks` and `inline` port `marked`'s rules from their JavaScript sources. The sources
mean something else in Python in four places, which `compile_js` rewrites:

- `\\s` is JavaScript's white space (`JS_SPACE`: no `\\x1c`-`\\x1f` or `\\x85`, but `\\ufeff`);
- `.` stops at `\\r`, `\\u2028` and `\\u2029` too;
- `$` (without the `m` flag) is the end of the input, never before a final line break;
- `^` anchors where the match starts: rules are matched with `pattern.match(text, pos)`,
  so a leading `^` is dropped (`search=True` keeps it, for rules scanned with `exec`).

`\\w`, `\\d` and `\\b` are ASCII in JavaScript: every rule compiles with `re.ASCII`, so `i`
folds only ASCII letters, as JavaScript without the `u` flag does. `\\p{P}\\p{S}` (Unicode
punctuation and symbols) becomes the class body the caller gives (see `inline`).
"""

from __future__ import annotations

import re

# JavaScript's `\s` and what `trim()` removes: white space and line terminators.
JS_SPACE = (
    "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
JS_SPACE_CHARS = (
    "\t\n\x0b\x0c\r \xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
DOT = "[^\\n\\r\\u2028\\u2029]"
_LINE_START = "(?:(?<=[\\n\\r\\u2028\\u2029])|\\A)"


def js_trim(text: str) -> str:
    return text.strip(JS_SPACE_CHARS)


def js_trim_start(text: str) -> str:
    return text.lstrip(JS_SPACE_CHARS)


def js_trim_end(text: str) -> str:
    return text.rstrip(JS_SPACE_CHARS)


def compile_js(
    source: str,
    *,
    ignore_case: bool = False,
    multiline: bool = False,
    search: bool = False,
    punctuation: str = "",
) -> re.Pattern[str]:
    """A `marked` rule's JavaScript `source` as a Python pattern (see the module doc).

    `punctuation` is the class body that replaces `\\p{P}\\p{S}` (rules with the `u` flag).
    """
    out: list[str] = []
    in_class = False
    i = 0
    n = len(source)
    while i < n:
        ch = source[i]
        if source.startswith("[\\s\\S]", i):  # any character: cheap to compile as it is
            out.append("[\\s\\S]")
            i += 6
            continue
        if ch == "\\" and i + 1 < n:
            nxt = source[i + 1]
            if nxt == "s":
                out.append(JS_SPACE if in_class else f"[{JS_SPACE}]")
            elif nxt == "p" and source.startswith("\\p{P}\\p{S}", i):
                out.append(punctuation if in_class else f"[{punctuation}]")
                i += len("\\p{P}\\p{S}")
                continue
            elif nxt == "k" and source.startswith("\\k<", i):
                close = source.index(">", i)
                out.append(f"(?P={source[i + 3 : close]})")
                i = close + 1
                continue
            else:
                out.append(source[i : i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
            if source.startswith("[^]", i):  # never in `marked`; guard the class parse
                raise ValueError("empty negated class")
        elif ch == ".":
            out.append(DOT)
        elif ch == "$":
            out.append("(?=[\\n\\r\\u2028\\u2029]|\\Z)" if multiline else "\\Z")
        elif ch == "^":
            out.append(_LINE_START if multiline else ("^" if search else ""))
        elif ch == "(" and source.startswith("(?<", i) and source[i + 3 : i + 4].isalpha():
            out.append("(?P<")
            i += 3
            continue
        else:
            out.append(ch)
        i += 1
    flags = re.ASCII | (re.IGNORECASE if ignore_case else 0)
    return re.compile("".join(out), flags)
