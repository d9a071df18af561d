"""What Claude Code does with `marked`, for instruction files: strip comments, find imports.

Claude Code lexes an instruction file with `marked` (`gfm: false`; docs/markdown.md):
- **comments**: only text containing `<!--` is lexed. Of the top-level tokens, an `html`
  token whose raw text (leading white space aside) starts with `<!--` and contains `-->`
  loses every `<!--…-->`, and what is left stays only if it is not blank; every other
  token's raw text stays. Lexing turns CRLF and CR into LF; text not lexed keeps them.
- **imports**: the `@` pattern is looked for in every `text` token of the token tree (a
  tight list item's text once whole, then token by token), and in what a comment token
  leaves; code blocks, code spans and other HTML are skipped.

`blocks` and `inline` port `marked`'s lexer. Most files need neither: a text whose only
structure is comments on lines of their own, paragraphs, headings and lists without inline
markup gives the same answers without lexing, and the fast paths below recognise exactly
that, deferring to the lexer for anything else (property tests hold them to it).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .jsre import JS_SPACE, js_trim, js_trim_start

_COMMENT_SPAN = re.compile(r"<!--[\s\S]*?-->")
# A comment from the start of a line to the end of a line, with the line breaks after it:
# the whole of one `html` token, its residue blank, so it goes. (`<!-->` and `<!--->` are
# whole comments to `marked`, but not to the client's span pattern.)
_COMMENT_OPEN = re.compile(r"(?m:^)<!--(?!-?>)")
_AFTER_COMMENT = re.compile(r"[ \t]*(?:\n+|\Z)")
# Block structure the fast paths leave to the lexer: HTML, quotes, escapes, links and
# definitions, tabs, indented code, fences, line breaks other than LF.
_BLOCKS = re.compile(r"[<>\\\[\t\r\x0b\x0c]|```|~~~|    ")
# A setext underline, and a comment line no setext heading's text runs through (`marked`'s
# ` {0,3}<[^\n>]+>\n`): past any other comment, an underline may make it part of a heading.
_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$", re.MULTILINE)
_CLEAN_COMMENT = re.compile(r"<!--[^\n>]*-->\n")
_INLINE = re.compile(r"[`*_]")
_AT = re.compile(rf"@[^{JS_SPACE}]*")
_BACKTICKS = re.compile(r"`+")
_INTRAWORD = re.compile(r"(?<=[A-Za-z0-9])_+(?=[A-Za-z0-9])")


def strip_block_comments(text: str) -> str:
    """Claude Code's `stripHtmlComments`: remove closed, top-level HTML comment tokens."""
    if "<!--" not in text:
        return text
    stripped = _without_comment_blocks(text)
    return lexed_strip(text) if stripped is None else stripped


def lexed_strip(text: str) -> str:
    """`strip_block_comments` by the lexer alone: the reference the fast path meets."""
    from .blocks import lex

    out: list[str] = []
    for token in lex(text):
        if token.is_closed_comment:
            residue = _COMMENT_SPAN.sub("", token.raw)
            if js_trim(residue):
                out.append(residue)
            continue
        out.append(token.raw)
    return "".join(out)


def _without_comment_blocks(text: str) -> str | None:
    """`text` without its comments, if each fills its lines in a text of simple blocks.

    Such a comment is one top-level `html` token (at column 0 it interrupts a paragraph or
    a list item) with a blank residue; lexing would drop exactly it and change nothing else
    but line endings, which `_BLOCKS` rules out with every other structure that could hold
    a comment line. Anything else is left to the lexer: None. (One scan: an unclosed
    comment ends it.)
    """
    pieces: list[str] = []
    pos = 0
    clean = True
    while (opener := _COMMENT_OPEN.search(text, pos)) is not None:
        close = text.find("-->", opener.end())
        if close == -1:
            return None
        after = _AFTER_COMMENT.match(text, close + 3)
        if after is None:
            return None
        if clean:
            line = _CLEAN_COMMENT.match(text, opener.start())
            clean = line is not None and line.end() == close + 4
        pieces.append(text[pos : opener.start()])
        pos = after.end()
    pieces.append(text[pos:])
    without = "".join(pieces)
    if "<!--" in without or _BLOCKS.search(without):
        return None
    return without if clean or not _UNDERLINE.search(without) else None


def import_texts(text: str) -> Iterator[str]:
    """The texts in which Claude Code looks for `@imports`, in its order."""
    plain = _without_comment_blocks(text) if "<!--" in text else text
    if plain is not None and _scans_whole(plain):
        yield plain
    else:
        yield from lexed_import_texts(text)


def _scans_whole(text: str) -> bool:
    """Whether scanning `text` whole finds what the client's token walk finds.

    True for paragraphs, headings and lists (no `_BLOCKS`) whose inline markup (code spans,
    emphasis) cannot move where an `@` token starts or ends: every code span opens and
    closes on one line and holds no `@`, no `@` follows a backtick, `*` or `_`, and none
    runs into one (an `_` between letters or digits is text to `marked`).
    """
    if _BLOCKS.search(text):
        return False
    if not _INLINE.search(text):
        return True
    spans = _code_spans(text)
    if spans is None:
        return False
    for at in _AT.finditer(text):
        start = at.start()
        if start and text[start - 1] in "`*_":
            return False
        token = at.group()
        if "`" in token or "*" in token or "_" in _INTRAWORD.sub("", token):
            return False
        if any(open_ < start < close for open_, close in spans):
            return False
    return True


def _code_spans(text: str) -> list[tuple[int, int]] | None:
    """Where `text`'s code spans are, if each closes on the line it opens; else None."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while (opener := _BACKTICKS.search(text, pos)) is not None:
        line_end = text.find("\n", opener.end())
        line_end = len(text) if line_end == -1 else line_end
        closer = _BACKTICKS.search(text, opener.end(), line_end)
        while closer is not None and len(closer.group()) != len(opener.group()):
            closer = _BACKTICKS.search(text, closer.end(), line_end)
        if closer is None:
            return None
        spans.append((opener.start(), closer.end()))
        pos = closer.end()
    return spans


def lexed_import_texts(text: str) -> Iterator[str]:
    """`import_texts` by the lexer alone: the reference the fast paths meet.

    Claude Code's `extractIncludePathsFromTokens`, walked with a stack rather than
    recursion: code and code spans are skipped, an `html` token counts only for what a
    comment leaves, a `text` token's text is scanned, then its children, then a list's items.
    """
    from .blocks import Lexed, Token
    from .inline import Budget, Inline, inline_tokens

    lexed = Lexed(text)
    budget = Budget()
    stack: list[Token | Inline] = list(reversed(lexed.tokens))
    while stack:
        token = stack.pop()
        kind = token.kind
        if kind in ("code", "codespan"):
            continue
        if kind == "html":
            raw = token.raw if isinstance(token, Token) else token.text
            trimmed = js_trim_start(raw)
            if trimmed.startswith("<!--") and "-->" in trimmed:
                residue = _COMMENT_SPAN.sub("", raw)
                if js_trim(residue):
                    yield residue
            continue
        if kind == "text":
            yield token.text
        children: list[Token | Inline] = []
        if isinstance(token, Token):
            if kind in ("paragraph", "heading", "text"):
                if "@" in token.text:
                    children.extend(inline_tokens(token.text, lexed.links, budget))
            else:
                children.extend(token.tokens)
                children.extend(token.items)
        else:
            children.extend(token.tokens)
        stack.extend(reversed(children))
