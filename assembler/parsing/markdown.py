"""What Claude Code does with `marked`, for instruction files: strip comments, find imports.

Claude Code lexes an instruction file with `marked` (`gfm: false`; docs/markdown.md):
- **comments**: only text containing `<!--` is lexed. Of the top-level tokens, an `html`
  token whose raw text (leading white space aside) starts with `<!--` and contains `-->`
  loses every `<!--…-->`, and what is left stays only if it is not blank; every other
  token's raw text stays. Lexing turns CRLF and CR into LF; text not lexed keeps them.
- **imports**: the `@` pattern is looked for in every `text` token of the token tree (a
  tight list item's text once whole, then token by token), and in what a comment token
  leaves; code blocks, code spans and other HTML are skipped.

`marked/` ports `marked`'s lexer. Most files need no lexing: a text whose only
structure is comments on lines of their own, paragraphs, headings and lists, with inline
markup that cannot move where an `@` token starts or ends, gives the same answers without
lexing. The fast paths below recognise exactly that and defer to the lexer for anything
else; property tests and the corpus (docs/markdown.md) hold them to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .marked.jsre import JS_SPACE, js_trim, js_trim_start

_COMMENT_SPAN = re.compile(r"<!--[\s\S]*?-->")
# A comment from the start of a line to the end of a line, with the line breaks after it:
# the whole of one `html` token, its residue blank, so it goes. (`<!-->` and `<!--->` are
# whole comments to `marked`, but not to the client's span pattern.)
_COMMENT_OPEN = "<!--"
_AFTER_COMMENT = re.compile(r"[ \t]*(?:\n+|\Z)")
# What starts a comment block or a fenced code block at column 0 (`<!-->` and `<!--->`
# excepted), and `marked`'s fence (its `fences` rule, anchored at column 0).
_OPENER = re.compile(r"^(?:<!--(?!-?>)|```|~~~)", re.MULTILINE)
_FENCE = re.compile(
    r"(`{3,}(?=[^`\n]*(?:\n|\Z))|~{3,})([^\n]*)(?:\n|\Z)(?:|([\s\S]*?)(?:\n|\Z))"
    r"(?: {0,3}\1[~`]* *(?=\n|\Z)|\Z)"
)
# Block structure the fast paths leave to the lexer: HTML, quotes, escapes, links and
# definitions, tabs, indented code, fences not at column 0, line breaks other than LF
# (looked for as substrings, faster than a pattern).
_BLOCKS = ("<", ">", "\\", "[", "\t", "\r", "\x0b", "\x0c", "```", "~~~", "    ")
# A setext underline, and a comment line no setext heading's text runs through (`marked`'s
# ` {0,3}<[^\n>]+>\n`): past any other comment, an underline may make it part of a heading.
_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$", re.MULTILINE)
_CLEAN_COMMENT = re.compile(r"<!--[^\n>]*-->\n")
_INLINE = re.compile(r"[`*_]")
# A code span on one line with no backtick inside (what `marked` and its emphasis masking
# both see as one span), and one that holds an `@` after white space.
_SPAN = re.compile(r"(?<!`)(`+)[^`\n]+\1(?!`)")
_SPAN_SPACED_AT = re.compile(rf"(?<!`)(`+)[^`\n]*[{JS_SPACE}]@[^`\n]*\1(?!`)")
_SPACED_AT = re.compile(rf"[{JS_SPACE}]@")
# An `@` that inline markup could make start a token, or a token it could cut short (it
# starts with the `@` and looks behind it, so that `re` skips from `@` to `@`).
_MOVED_AT = re.compile(
    rf"@(?:(?<=[`*_\x00]@)|(?<![^{JS_SPACE}]@)[^{JS_SPACE}]*?"
    r"(?:[`*\x00]|(?<![A-Za-z0-9_])_|_(?![A-Za-z0-9_])))"
)


def strip_block_comments(
    text: str, *, lf_only_when_stripped: bool = False, keep_definitions: bool = True
) -> str:
    """Claude Code's `stripHtmlComments`: remove closed, top-level HTML comment tokens.

    Where its releases differ: `lf_only_when_stripped`, the text comes back as it was (line
    endings included) unless a comment block goes, where lexing made it LF whenever it ran;
    `keep_definitions`, top-level link reference definitions stay, where an older `marked`
    gave them no token and so dropped them."""
    if "<!--" not in text:
        return text
    outline = _outline(text)  # no line break but LF, no definition: the same either way
    if outline is not None:
        return outline[0]
    return lexed_strip(
        text, lf_only_when_stripped=lf_only_when_stripped, keep_definitions=keep_definitions
    )


def lexed_strip(
    text: str, *, lf_only_when_stripped: bool = False, keep_definitions: bool = True
) -> str:
    """`strip_block_comments` by the lexer alone: the reference the fast path meets."""
    from .marked.blocks import lex

    out: list[str] = []
    stripped = False
    for token in lex(text):
        if token.is_closed_comment:
            stripped = True
            residue = _COMMENT_SPAN.sub("", token.raw)
            if js_trim(residue):
                out.append(residue)
            continue
        if token.kind == "def" and not keep_definitions:
            continue
        out.append(token.raw)
    if lf_only_when_stripped and not stripped:
        return text
    return "".join(out)


def _outline(text: str) -> tuple[str, list[str]] | None:
    """(`text` without its comment blocks, the prose around them and around fenced code), if
    its comments fill their lines and its fences sit at column 0 in a text of simple blocks.

    Such a comment is one top-level `html` token (at column 0 it interrupts a paragraph or
    a list item) with a blank residue: lexing drops exactly it. Such a fence is one `code`
    token, whatever it holds. Lexing would change nothing else but line endings, which
    `_BLOCKS` rules out with every other structure that could hold these lines. Anything
    else is left to the lexer: None. (One scan: an unclosed comment ends it.)
    """
    if "\r" in text:  # lexing makes every line ending LF
        return None
    kept: list[str] = []
    prose: list[str] = []
    pos = 0
    clean = True
    while (opener := _OPENER.search(text, pos)) is not None:
        before = text[pos : opener.start()]
        kept.append(before)
        prose.append(before)
        if opener.group() == _COMMENT_OPEN:
            close = text.find("-->", opener.end())
            after = None if close == -1 else _AFTER_COMMENT.match(text, close + 3)
            if after is None:
                return None
            if clean:
                line = _CLEAN_COMMENT.match(text, opener.start())
                clean = line is not None and line.end() == close + 4
            pos = after.end()
        else:
            fence = _FENCE.match(text, opener.start())
            if fence is None or "\n" not in text[opener.start() : fence.end() + 1]:
                return None  # not a fence, or an opening line at the end: a paragraph's
            kept.append(fence.group())
            pos = fence.end()
    kept.append(text[pos:])
    prose.append(text[pos:])
    joined = "".join(prose)
    if "<!--" in joined or _has_blocks(joined):
        return None
    if not clean and _UNDERLINE.search(text):  # the underline may be in the comment itself
        return None
    return "".join(kept), prose


def import_texts(text: str) -> Iterator[str]:
    """The texts in which Claude Code looks for `@imports`, in its order."""
    if "<!--" in text or "```" in text or "~~~" in text:
        outline = _outline(text)
        prose = None if outline is None else outline[1]
    else:
        prose = [text]
    if prose is not None and all(_scans_whole(piece) for piece in prose):
        yield from prose
    else:
        yield from lexed_import_texts(text)


def _scans_whole(text: str) -> bool:
    """Whether scanning `text` whole finds what the client's token walk finds.

    True for paragraphs, headings and lists (no `_BLOCKS`) whose inline markup (code spans,
    emphasis) cannot move where an `@` token starts or ends: every code span opens and
    closes on one line and holds no `@` after white space (a tight list item's text is
    scanned with its code spans), no other `@` follows a backtick, `*` or `_`, and none runs
    into one (an `_` between letters or digits is text to `marked`).
    """
    if _has_blocks(text):
        return False
    if not _INLINE.search(text):
        return True
    if "`" in text:
        spanless = _SPAN.sub("\x00", text)
        if "`" in spanless:
            return False
        if spanless.count("@") != text.count("@") and _span_holds_spaced_at(text):
            return False
        text = spanless
    return _MOVED_AT.search(text) is None


def _span_holds_spaced_at(text: str) -> bool:
    """`_SPAN_SPACED_AT.search(text)`, searched only around each white space before an `@`:
    a match holds one, and no line break but that one (the pattern's spans stop at line
    ends), so it lies within the line of the `@` and, for a line break before it, the line
    above. Searching the whole text instead backtracks from every backtick to its line end."""
    seen: set[tuple[int, int]] = set()
    for spaced in _SPACED_AT.finditer(text):
        start = text.rfind("\n", 0, spaced.start()) + 1
        end = text.find("\n", spaced.end())
        bounds = (start, len(text) if end == -1 else end)
        if bounds in seen:
            continue
        seen.add(bounds)
        region = text[bounds[0] : bounds[1]]
        if "`" in region and _SPAN_SPACED_AT.search(region):
            return True
    return False


def _has_blocks(text: str) -> bool:
    return any(mark in text for mark in _BLOCKS)


def lexed_import_texts(text: str) -> Iterator[str]:
    """`import_texts` by the lexer alone: the reference the fast paths meet.

    Claude Code's `extractIncludePathsFromTokens`, walked with a stack rather than
    recursion: code and code spans are skipped, an `html` token counts only for what a
    comment leaves, a `text` token's text is scanned, then its children, then a list's items.
    """
    from .marked.blocks import Lexed, Token
    from .marked.inline import Budget, Inline, inline_tokens

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
