"""What Claude Code does with `marked`, for instruction files: strip comments, find imports.

Claude Code lexes every instruction file with `marked` (`gfm: false`) for two things: removing
block-level HTML comments (only top-level `html` tokens that open with `<!--` and are closed),
and finding `@imports` outside code (fenced or indented blocks, code spans) and outside
non-comment HTML. Most files have no structure that could change either answer (plain text,
column-0 fences, comments on lines of their own): regex fast paths handle them. Any other text
goes to the block lexer in `blocks` (imported then); property tests check the fast paths
against it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_COMMENT_SPAN = re.compile(r"<!--[\s\S]*?-->")
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
    return lexed_strip(text) if stripped is None else stripped


def lexed_strip(text: str) -> str:
    """`strip_block_comments` by the block lexer alone: the reference the fast paths meet."""
    from .blocks import lex

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
    yield from lexed_import_texts(text) if pieces is None else pieces


def _fast_import_texts(plain: str) -> list[str] | None:
    """The pieces of a text without comments, found without the lexer, or None."""
    segments = [plain] if _plain(plain) else outside_fences(plain)
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


def outside_fences(text: str) -> list[str] | None:
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


def lexed_import_texts(text: str) -> Iterator[str]:
    """`import_texts` by the block lexer alone: the reference the fast paths meet."""
    from .blocks import lex

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
