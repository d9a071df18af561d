"""Just enough of a CommonMark block lexer to do what Claude Code does with `marked`.

Claude Code lexes every instruction file with `marked` (`gfm: false`) for two things: removing
block-level HTML comments (only top-level `html` tokens that open with `<!--` and are closed),
and finding `@imports` outside code (fenced or indented blocks, code spans) and outside
non-comment HTML. A full Markdown parser would cost more import time than the whole of
`ctxasm lint` may take, and none reproduces `marked`'s token boundaries anyway, so this module
recognises the block structure those two uses depend on: blank lines, fenced and indented
code, the seven CommonMark HTML block kinds, block quotes, lists (recursively), and paragraphs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

_FENCE = re.compile(r"(`{3,}|~{3,})(.*)$")
_LIST_MARKER = re.compile(r"([-+*]|\d{1,9}[.)])([ \t]+|$)")
_THEMATIC = re.compile(r"(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
_QUOTE_PREFIX = re.compile(r"^ {0,3}> ?")
_COMMENT_SPAN = re.compile(r"<!--[\s\S]*?-->")
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
_INLINE_HTML = re.compile(
    r"<!--[\s\S]*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|<[A-Za-z][A-Za-z0-9+.-]*:[^\s<>]*>"
)
_BACKTICKS = re.compile(r"`+")
# A comment from the start of a line to the end of a line (the lexer's HTML block kind 2),
# with its line break and the blank lines after it (which the lexer puts in the same block).
_COMMENT_BLOCK = re.compile(r"(?m:^)<!--(?>[\s\S]*?-->)(?:\n|\Z)(?:[^\S\n]*\n)*(?:[^\S\n]+\Z)?")
_FENCE_LINE = re.compile(r"^(`{3,}|~{3,})(.*)$", re.MULTILINE)
_INDENTED_FENCE = re.compile(r"^[ \t]+(?:`{3,}|~{3,})", re.MULTILINE)
# Where `str.splitlines` (the lexer) sees a line break and `^`/`$` (the scans) do not.
_ODD_BREAKS = frozenset("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_CHUNKS = re.compile(
    r"\n(?=[ \t]*(?:\n|$)| {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)| {0,3}#{1,6}(?:[ \t]|$))"
)
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\n]*\)")
# `*` runs, and `_` runs that open (after start/space) or close (before end/space/punct).
_EMPHASIS = re.compile(r"\*+|(?:(?<=\s)|^)_+(?=\S)|(?<=\S)_+(?=$|[\s.,;:!?)])", re.MULTILINE)


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


# --- uses ---------------------------------------------------------------------------------


def strip_block_comments(text: str) -> str:
    """Claude Code's `stripHtmlComments`: remove closed, top-level HTML comment blocks.

    Text left on a comment's lines after `-->` stays; inline comments, comments inside lists
    or quotes, and unclosed comments stay. Like `marked`, lexing normalises line endings.
    """
    if "<!--" not in text:
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # Comments filling their lines in an otherwise plain text are all top-level blocks (they
    # interrupt paragraphs and lists); the lexer drops each with the blank lines after it.
    stripped = _without_comment_blocks(text)
    return _lexed_strip(text) if stripped is None else stripped


def _lexed_strip(text: str) -> str:
    out: list[str] = []
    for block in lex(text):
        if block.is_closed_comment:
            residue = _COMMENT_SPAN.sub("", block.raw)
            if residue.strip():
                out.append(residue)
            continue
        out.append(block.raw)
    return "".join(out)


def _plain(text: str) -> bool:
    """No block structure that can hide an import: no fences, HTML, quotes, indented code."""
    return not (
        "```" in text
        or "~~~" in text
        or "<" in text
        or ">" in text
        or "\t" in text
        or "\n    " in text
        or text.startswith("    ")
    )


def import_texts(text: str) -> Iterator[str]:
    """The pieces of `text` in which Claude Code looks for `@imports`, in document order."""
    plain = _without_comment_blocks(text) if "<!--" in text else text
    pieces = None if plain is None else _fast_import_texts(plain)
    yield from _lexed_import_texts(text) if pieces is None else pieces


def _fast_import_texts(plain: str) -> list[str] | None:
    """The pieces of a text without comments, found without the lexer, or None."""
    segments = [plain] if _plain(plain) else _outside_fences(plain)
    return None if segments is None else _plain_import_texts(segments)


def _without_comment_blocks(text: str) -> str | None:
    """`text` without its comments, if each fills its lines in an otherwise plain text.

    Such a comment is a top-level HTML block (it interrupts a paragraph or a list), so once
    it is gone only paragraph boundaries can differ from the lexer's, and those matter only
    to code spans, which `_plain_import_texts` checks. A comment anywhere else (indented,
    with residue after `-->`, in a fence, next to other HTML) is left to the lexer: None.
    """
    if not _ODD_BREAKS.isdisjoint(text):
        return None
    without = _COMMENT_BLOCK.sub("", text)
    return without if "<!--" not in without and _plain(without) else None


def _plain_import_texts(segments: list[str]) -> list[str] | None:
    """The pieces of plain segments, split where the lexer may end a paragraph, or None.

    Paragraphs, headings and list items are separate inline contexts; in a document without
    code blocks, HTML or quotes that is all the lexer would find. Where exactly a paragraph
    ends (`2.` after a paragraph, a `---` line) only matters to a code span spread over
    lines or a backtick left unpaired: then the lexer decides.
    """
    pieces = []
    for segment in segments:
        for chunk in _CHUNKS.split(segment):
            if "`" in chunk:
                chunk, single_lines = _code_spans(chunk)
                if not single_lines:
                    return None
            if "@" in chunk:
                pieces.append(inline_text(chunk))
    return pieces


def _outside_fences(text: str) -> list[str] | None:
    """The text around its fenced code blocks, if that is all the structure it has, else None.

    Only for fences that open and close at column 0 in a text whose rest is `_plain`: such a
    fence cannot sit inside a list item or a quote (it is never a lazy continuation; it
    interrupts a paragraph), so a scan of its lines finds what the lexer finds. Anything else
    (an indented fence, a backtick "fence" with a backtick in its info string, line breaks
    other than LF) is left to the lexer.
    """
    if not _ODD_BREAKS.isdisjoint(text) or _INDENTED_FENCE.search(text):
        return None
    segments: list[str] = []
    pos = 0
    opened = ""
    for match in _FENCE_LINE.finditer(text):
        marker, rest = match.group(1), match.group(2)
        if not opened:
            if marker[0] == "`" and "`" in rest:
                return None  # not a fence, but it interrupts a paragraph: let the lexer judge
            segments.append(text[pos : match.start()])
            opened = marker
        elif marker[0] == opened[0] and len(marker) >= len(opened) and not rest.strip(" \t"):
            pos = match.end()
            opened = ""
    if not opened:
        segments.append(text[pos:])
    return segments if all(_plain(s) for s in segments) else None


def _lexed_import_texts(text: str) -> Iterator[str]:
    for block in lex(text):
        if "@" not in block.raw:
            continue
        if block.kind == "text":
            yield inline_text(block.raw)
        elif block.kind == "html":
            if block.is_closed_comment:
                residue = _COMMENT_SPAN.sub("", block.raw)
                if residue.strip():
                    yield residue
        elif block.kind in ("list", "quote"):
            for inner in block.inner:
                if "@" in inner:
                    yield from import_texts(inner)


def inline_text(text: str) -> str:
    """A paragraph's text with every inline token that is not text replaced by a line break.

    `marked` ends a text token at code spans, HTML, links, images and emphasis; a break here
    has the same effect on the import pattern (`@` must follow whitespace or start a token).
    Link and emphasis text stays (it is text inside those tokens); destinations do not.
    """
    if "`" in text:
        text = _code_spans(text)[0]
    if "<" in text:
        text = _INLINE_HTML.sub("\n", text)
    if "](" in text:
        text = _IMAGE.sub("\n", text)
        text = _LINK.sub(lambda m: f"\n{m.group(1)}\n", text)
    if "*" in text or "_" in text:
        text = _EMPHASIS.sub("\n", text)
    return text


def _code_spans(text: str) -> tuple[str, bool]:
    """(`text` with each code span replaced by a line break, whether every span is on one
    line and every backtick is in a span)."""
    single_lines = True
    pieces: list[str] = []
    pos = 0
    search_from = 0
    while True:
        opener = _BACKTICKS.search(text, search_from)
        if opener is None:
            break
        if opener.start() > 0 and text[opener.start() - 1] == "\\":
            search_from = opener.start() + 1
            single_lines = False
            continue
        length = len(opener.group())
        closer = _BACKTICKS.search(text, opener.end())
        while closer is not None and len(closer.group()) != length:
            closer = _BACKTICKS.search(text, closer.end())
        if closer is None:
            search_from = opener.end()
            single_lines = False
            continue
        if single_lines and "\n" in text[opener.end() : closer.start()]:
            single_lines = False
        pieces.append(text[pos : opener.start()])
        pieces.append("\n")
        pos = search_from = closer.end()
    pieces.append(text[pos:])
    return "".join(pieces), single_lines
