"""Just enough of a CommonMark block lexer to do what Claude Code does with `marked`.

Claude Code lexes every instruction file with `marked` (`gfm: false`) for two things: removing
block-level HTML comments (only top-level `html` tokens that open with `<!--` and are closed),
and finding `@imports` outside code (fenced or indented blocks, code spans) and outside
non-comment HTML. A full Markdown parser would cost more import time than the whole of
`ctxasm lint` may take, and none reproduces `marked`'s token boundaries anyway, so this module
recognises the block structure those two uses depend on: blank lines, fenced and indented
code, the seven CommonMark HTML block kinds, block quotes, lists (recursively), and paragraphs.

`markdown` imports it only when its fast paths cannot decide a text: most instruction files
never need it, and its patterns are not compiled at start-up.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_FENCE = re.compile(r"(`{3,}|~{3,})(.*)$")
_LIST_MARKER = re.compile(r"([-+*]|\d{1,9}[.)])([ \t]+|$)")
_THEMATIC = re.compile(r"(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
_QUOTE_PREFIX = re.compile(r"^ {0,3}> ?")
_BLOCK_TAGS = frozenset(
    "address article aside base basefont blockquote body caption center col colgroup dd "
    "details dialog dir div dl dt fieldset figcaption figure footer form frame frameset h1 h2 "
    "h3 h4 h5 h6 head header hr html iframe legend li link main menu menuitem nav noframes ol "
    "optgroup option p param search section summary table tbody td tfoot th thead title tr "
    "track ul".split()
)
_HTML_1 = re.compile(r"<(script|pre|style|textarea)(?:\s|>|$)", re.IGNORECASE)
_HTML_6 = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)(?:\s|/?>|$)")
_HTML_7 = re.compile(
    r"(?:<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*\s*/?>"
    r"|</[A-Za-z][A-Za-z0-9-]*\s*>)\s*$"
)


class Block(NamedTuple):
    """A top-level block: its kind, its exact source text, and (lists, quotes) inner texts."""

    kind: str  # "blank" | "code" | "html" | "text" | "list" | "quote"
    raw: str
    inner: tuple[str, ...] = ()

    @property
    def is_closed_comment(self) -> bool:
        trimmed = self.raw.lstrip()
        return self.kind == "html" and trimmed.startswith("<!--") and "-->" in trimmed


def _indent(line: str) -> int:
    stripped = line.lstrip(" ")
    if not stripped.startswith("\t"):
        return len(line) - len(stripped)
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _blank(line: str) -> bool:
    return not line or line.isspace()


def _dedent(line: str, columns: int) -> str:
    """Remove up to `columns` columns of leading whitespace (tabs expand to 4)."""
    width = 0
    i = 0
    while i < len(line) and width < columns and line[i] in " \t":
        width += 1 if line[i] == " " else 4 - width % 4
        i += 1
    return line[i:]


def _html_start(body: str, in_paragraph: bool) -> int:
    """The CommonMark HTML block kind (1-7) that `body` opens, or 0."""
    if not body.startswith("<"):
        return 0
    if _HTML_1.match(body):
        return 1
    if body.startswith("<!--"):
        return 2
    if body.startswith("<?"):
        return 3
    if re.match(r"<![A-Za-z]", body):
        return 4
    if body.startswith("<![CDATA["):
        return 5
    tag = _HTML_6.match(body)
    if tag and tag.group(1).lower() in _BLOCK_TAGS:
        return 6
    if not in_paragraph and _HTML_7.match(body.rstrip("\n")):
        return 7
    return 0


_HTML_END = {
    1: re.compile(r"</(?:script|pre|style|textarea)>", re.IGNORECASE),
    2: re.compile(r"-->"),
    3: re.compile(r"\?>"),
    4: re.compile(r">"),
    5: re.compile(r"\]\]>"),
}


_BLOCK_START_CHARS = frozenset("`~#>-*_+<0123456789")


def _interrupts_paragraph(line: str) -> bool:
    body = line.lstrip(" \t")
    if body[:1] not in _BLOCK_START_CHARS or _indent(line) > 3:
        return False
    if _FENCE.match(body) or _HEADING.match(body) or body.startswith(">"):
        return True
    if _THEMATIC.match(body.rstrip("\r\n")):
        return True
    if _html_start(body, in_paragraph=True):
        return True
    marker = _LIST_MARKER.match(body)
    if marker and body[marker.end() :].strip():
        return not marker.group(1)[0].isdigit() or marker.group(1)[:-1] == "1"
    return False


def lex(text: str) -> list[Block]:
    """Top-level blocks; `"".join(b.raw for b in lex(t)) == t` always holds."""
    lines = text.splitlines(keepends=True)
    blocks: list[Block] = []
    i, n = 0, len(lines)
    while i < n:
        start = i
        line = lines[i]
        if _blank(line):
            while i < n and _blank(lines[i]):
                i += 1
            blocks.append(Block("blank", "".join(lines[start:i])))
            continue
        indent = _indent(line)
        if indent >= 4:
            i = _end_of_indented_code(lines, i)
            blocks.append(Block("code", "".join(lines[start:i])))
            continue
        body = line.lstrip(" \t")
        kind, i, inner = _block_at(lines, i, body)
        blocks.append(Block(kind, "".join(lines[start:i]), inner))
    return blocks


def _end_of_indented_code(lines: list[str], i: int) -> int:
    end = i + 1
    j = end
    while j < len(lines):
        if _blank(lines[j]):
            j += 1
            continue
        if _indent(lines[j]) >= 4:
            end = j = j + 1
            continue
        break
    return end


def _block_at(lines: list[str], i: int, body: str) -> tuple[str, int, tuple[str, ...]]:
    n = len(lines)
    fence = _FENCE.match(body.rstrip("\r\n"))
    if fence and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
        marker = fence.group(1)
        closing = re.compile(rf" {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$")
        j = i + 1
        while j < n and not closing.match(lines[j].rstrip("\r\n")):
            j += 1
        return "code", min(j + 1, n), ()
    html = _html_start(body, in_paragraph=False)
    if html:
        return "html", _end_of_html(lines, i, html), ()
    if body.startswith(">"):
        j = i + 1
        while j < n and not _blank(lines[j]):
            if not _QUOTE_PREFIX.match(lines[j]) and _interrupts_paragraph(lines[j]):
                break
            j += 1
        inner = "".join(_QUOTE_PREFIX.sub("", ln, count=1) for ln in lines[i:j])
        return "quote", j, (inner,)
    if _HEADING.match(body) or _THEMATIC.match(body.rstrip("\r\n")):
        return "text", i + 1, ()
    if _LIST_MARKER.match(body):
        return _list_at(lines, i)
    j = i + 1
    while j < n and not _blank(lines[j]) and not _interrupts_paragraph(lines[j]):
        j += 1
    return "text", j, ()


def _end_of_html(lines: list[str], i: int, kind: int) -> int:
    n = len(lines)
    if kind in _HTML_END:
        end = _HTML_END[kind]
        j = i
        first = lines[i].lstrip(" \t")
        # The end condition may be met on the opening line itself (after the opener).
        offset = 4 if kind == 2 else 2
        if not end.search(first, offset):
            j = i + 1
            while j < n and not end.search(lines[j]):
                j += 1
        j = min(j + 1, n)
        # `marked` swallows the blank lines after a comment/processing block into its token.
        while j < n and _blank(lines[j]):
            j += 1
        return j
    j = i + 1
    while j < n and not _blank(lines[j]):
        j += 1
    return j


def _list_item(line: str, width: int) -> tuple[int, str] | None:
    """(content offset, first-line content) if `line` opens a list item at this level."""
    first = line.lstrip(" \t")[:1]
    if not (first in "-+*" or first.isdigit()) or not first:
        return None
    ind = _indent(line)
    if ind > 3 and ind >= width:
        return None
    body = line.lstrip(" \t")
    m = _LIST_MARKER.match(body)
    if m is None or _THEMATIC.match(body.rstrip("\r\n")):
        return None
    gap = m.group(2).expandtabs(4)
    rest = body[m.end() :]
    if not rest.strip():
        return ind + len(m.group(1)) + 1, "\n"
    if len(gap) > 4:  # an indented code block starts the item
        return ind + len(m.group(1)) + 1, gap[1:] + rest
    return ind + len(m.group(1)) + len(gap), rest


def _list_at(lines: list[str], i: int) -> tuple[str, int, tuple[str, ...]]:
    n = len(lines)
    items: list[list[str]] = []
    width = 0
    j = i
    while j < n:
        line = lines[j]
        if _blank(line):
            k = j
            while k < n and _blank(lines[k]):
                k += 1
            if k < n and (_indent(lines[k]) >= width or _list_item(lines[k], width)):
                items[-1].extend(lines[j:k])
                j = k
                continue
            break
        item = _list_item(line, width) if (not items or _indent(line) < width) else None
        if item is not None:
            width, first = item
            items.append([first])
            j += 1
            continue
        lazy = not _blank(lines[j - 1]) and not _interrupts_paragraph(line)
        if _indent(line) >= width or lazy:
            items[-1].append(_dedent(line, width))
            j += 1
            continue
        break
    return "list", j, tuple("".join(item) for item in items)
