"""`marked`'s block lexer (version 17, `gfm: false`), ported rule for rule.

Claude Code lexes instruction files with `marked` to strip block-level HTML comments and to
find `@imports` outside code. What it keeps depends on `marked`'s token boundaries, which no
CommonMark parser reproduces, so this module is a port: the regular expressions are
`marked`'s own sources (`Lexer.rules.block.normal`), converted by `jsre.compile_js`, and the
procedures (`blockquote`, `list`, the lexer loop that merges paragraphs) follow `marked`'s
`Tokenizer` and `Lexer` line by line. Inline tokens come from `inline` when an import scan
needs them. `tests/data/markdown-corpus.jsonl` checks the port against `marked` itself
(docs/markdown.md).

Limits keep hostile files bounded (docs/security.md): quotes and lists nested deeper than
`MAX_DEPTH` are not lexed further (their text stays one token); a quote broken by lazy
lines more than `MAX_QUOTE_STRETCHES` times is lexed in one piece from there; tokens grow
in pieces (`Token.extend`), so lexing stays linear where `marked` relies on cheap string
concatenation; and setext headings are looked for only where an underline can end one.

`markdown` imports this module only when its fast paths cannot decide a text.
"""

from __future__ import annotations

import re

from .jsre import DOT, JS_SPACE, compile_js, js_trim, js_trim_end, js_trim_start

MAX_DEPTH = 16
MAX_QUOTE_STRETCHES = 256

_TAGS = (
    "address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|"
    "details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|"
    "h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|meta|nav|noframes|"
    "ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|"
    "tr|track|ul"
)
# What ends a paragraph (and a quote's lazy line): `marked`'s `paragraph` lookahead.
_INTERRUPT = (
    r"(?! {0,3}((?:-[\t ]*){3,}|(?:_[ \t]*){3,}|(?:\*[ \t]*){3,})(?:\n+|$)"
    r"| {0,3}#{1,6}(?:\s|$)| {0,3}>| {0,3}(?:`{3,}(?=[^`\n]*\n)|~{3,})[^\n]*\n"
    r"| {0,3}(?:[*+-]|1[.)])[ \t]"
    rf"|<\/?(?:{_TAGS})(?: +|\n|\/?>)|<(?:script|pre|style|textarea|!--)| +\n)"
)
_NEWLINE = compile_js(r"^(?:[ \t]*(?:\n|$))+")
_CODE = compile_js(r"^((?: {4}| {0,3}\t)[^\n]+(?:\n(?:[ \t]*(?:\n|$))*)?)+")
_FENCES = compile_js(
    r"^ {0,3}(`{3,}(?=[^`\n]*(?:\n|$))|~{3,})([^\n]*)(?:\n|$)(?:|([\s\S]*?)(?:\n|$))"
    r"(?: {0,3}\1[~`]* *(?=\n|$)|$)"
)
_HEADING = compile_js(r"^ {0,3}(#{1,6})(?=\s|$)(.*)(?:\n+|$)")
_HR = compile_js(r"^ {0,3}((?:-[\t ]*){3,}|(?:_[ \t]*){3,}|(?:\*[ \t]*){3,})(?:\n+|$)")
_BLOCKQUOTE = compile_js(rf"^( {{0,3}}> ?(([^\n]+(?:\n{_INTERRUPT}[^\n]+)*)|[^\n]*)(?:\n|$))+")
_LIST = compile_js(r"^( {0,3}(?:[*+-]|\d{1,9}[.)]))([ \t][^\n]+?)?(?:\n|$)")
_HTML = compile_js(
    r"^ {0,3}(?:<(script|pre|style|textarea)[\s>][\s\S]*?(?:<\/\1>[^\n]*\n+|$)"
    r"|<!--(?:-?>|[\s\S]*?(?:-->|$))[^\n]*(\n+|$)|<\?[\s\S]*?(?:\?>\n*|$)"
    r"|<![A-Z][\s\S]*?(?:>\n*|$)|<!\[CDATA\[[\s\S]*?(?:\]\]>\n*|$)"
    rf"|<\/?({_TAGS})(?: +|\n|\/?>)[\s\S]*?(?:(?:\n[ \t]*)+\n|$)"
    r"|<(?!script|pre|style|textarea)([a-z][\w-]*)(?: +[a-zA-Z:_][\w.:-]*"
    r"""(?: *= *"[^"\n]*"| *= *'[^'\n]*'| *= *[^\s"'=<>`]+)?)*? *\/?>(?=[ \t]*(?:\n|$))"""
    r"[\s\S]*?(?:(?:\n[ \t]*)+\n|$)"
    r"|<\/(?!script|pre|style|textarea)[a-z][\w-]*\s*>(?=[ \t]*(?:\n|$))[\s\S]*?"
    r"(?:(?:\n[ \t]*)+\n|$))",
    ignore_case=True,
)
_DEF = compile_js(
    r"^ {0,3}\[((?!\s*\])(?:\\[\s\S]|[^\[\]\\])+)\]: *(?:\n[ \t]*)?([^<\s][^\s]*|<.*?>)"
    r"""(?:(?: +(?:\n[ \t]*)?| *\n[ \t]*)((?:"(?:\\"?|[^"\\])*"|'[^'\n]*(?:\n[^'\n]+)*\n?'"""
    r"|\([^()]*\))))? *(?:\n+|$)"
)
_LHEADING_NOT = (
    r"(?! {0,3}(?:[*+-]|\d{1,9}[.)]) |(?: {4}| {0,3}\t)| {0,3}(?:`{3,}|~{3,})| {0,3}>"
    r"| {0,3}#{1,6}| {0,3}<[^\n>]+>\n)"
)
_LHEADING = compile_js(
    rf"^{_LHEADING_NOT}((?:.|\n(?!\s*?\n|{_LHEADING_NOT[3:]})+?)\n {{0,3}}(=+|-+) *(?:\n+|$)"
)
# Where a setext heading's text can stop (`_LHEADING`'s lazy loop fails there), and its
# underline: the heading can match at a position only if an underline comes first. Looking
# both up once per stretch keeps lexing linear where `marked` would rescan.
_SETEXT_STOP = compile_js(rf"[\r\u2028\u2029]|\n(?=\s*?\n|{_LHEADING_NOT[3:]}", search=True)
_UNDERLINE = compile_js(r"\n {0,3}(?:=+|-+) *(?:\n|$)", search=True)
_PARAGRAPH = compile_js(rf"^([^\n]+(?:\n{_INTERRUPT}[^\n]+)*)")
_TEXT = compile_js(r"^[^\n]+")

_CODE_INDENT = compile_js(r"^(?: {1,4}| {0,3}\t)", multiline=True)
_QUOTE_START = compile_js(r"^ {0,3}>")
_QUOTE_SETEXT = compile_js(r"\n {0,3}((?:=+|-+) *)(?=\n|$)")
_QUOTE_MARKER = compile_js(r"^ {0,3}>[ \t]?", multiline=True)
_NON_SPACE = re.compile(r"[^ ]")
# First characters (after up to three spaces) of the blocks `Lexed._started` looks for.
_STARTS = frozenset("`~#><-_*+0123456789")
_BLANK_LINE = compile_js(r"^[ \t]*$")
_DOUBLE_BLANK = compile_js(r"\n[ \t]*\n[ \t]*$")
_ANY_LINE = compile_js(r"\n.*\n")
_SPACES = re.compile(f"[{JS_SPACE}]+")


class Token:
    """A token as `marked` builds it (mutable while lexing, like `marked`'s objects).

    `kind` is `marked`'s `type`; `text` is what `marked` puts in `text` (for paragraphs,
    headings and text, the source of their inline tokens); `tokens` holds the block tokens
    of a quote or list item, `items` a list's items. `raw` and `text` grow by `extend`, in
    pieces joined when read: `marked` grows them line by line, which is quadratic on
    Python strings.
    """

    __slots__ = ("_ends_in_newline", "_raw", "_text", "items", "kind", "tokens")

    def __init__(self, kind: str, raw: str, text: str = "") -> None:
        self.kind = kind
        self._raw = [raw]
        self._text = [text]
        self._ends_in_newline = raw.endswith("\n")
        self.tokens: list[Token] = []
        self.items: list[Token] = []

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.raw!r})"

    @property
    def raw(self) -> str:
        if len(self._raw) > 1:
            self._raw = ["".join(self._raw)]
        return self._raw[0]

    @raw.setter
    def raw(self, value: str) -> None:
        self._raw = [value]
        self._ends_in_newline = value.endswith("\n")

    @property
    def text(self) -> str:
        if len(self._text) > 1:
            self._text = ["".join(self._text)]
        return self._text[0]

    @text.setter
    def text(self, value: str) -> None:
        self._text = [value]

    def extend(self, raw: str, text: str) -> None:
        """`marked`'s merge of a line into this token: the raw text after a line break
        (unless the raw text ends in one), the text after one."""
        if not self._ends_in_newline:
            self._raw.append("\n")
            self._ends_in_newline = True
        self.append_raw(raw)
        self._text.append("\n" + text)

    def append_raw(self, raw: str) -> None:
        if raw:
            self._raw.append(raw)
            self._ends_in_newline = raw.endswith("\n")

    @property
    def is_closed_comment(self) -> bool:
        """An `html` token that Claude Code treats as a comment (`<!--` first, `-->` in it)."""
        trimmed = js_trim_start(self.raw)
        return self.kind == "html" and trimmed.startswith("<!--") and "-->" in trimmed


class Lexed:
    """One document's block tokens and its link definitions (`marked`'s `tokens.links`)."""

    def __init__(self, text: str) -> None:
        self.links: dict[str, bool] = {}
        self.top = True
        self.tokens = self.block_tokens(re.sub(r"\r\n|\r", "\n", text), [], False, 0)

    def block_tokens(self, src: str, tokens: list[Token], clipped: bool, depth: int) -> list[Token]:
        """`Lexer.blockTokens`: `src` cut into block tokens appended to `tokens`."""
        pos, end = 0, len(src)
        underline = stop = -1
        if depth > MAX_DEPTH:
            if src:
                tokens.append(Token("text", src, src))
            self.top = True
            return tokens
        while pos < end:
            # The first character after up to three spaces: no rule can match without its own.
            lead_at = pos
            while lead_at < pos + 3 and lead_at < end and src[lead_at] == " ":
                lead_at += 1
            lead = src[lead_at] if lead_at < end else "\n"
            if lead in " \t\n" and (match := _NEWLINE.match(src, pos)):
                raw = match.group()
                if raw:
                    pos = match.end()
                    if len(raw) == 1 and tokens:
                        tokens[-1].append_raw("\n")
                    else:
                        tokens.append(Token("space", raw))
                    continue
            if lead in " \t" and (match := _CODE.match(src, pos)):
                pos = match.end()
                raw = match.group()
                last = tokens[-1] if tokens else None
                if last is not None and last.kind in ("paragraph", "text"):
                    last.extend(raw, _CODE_INDENT.sub("", raw).rstrip("\n"))
                else:
                    tokens.append(Token("code", raw))
                continue
            token = self._started(src, pos, lead, depth) if lead in _STARTS else None
            if token is not None:
                pos += len(token.raw)
                tokens.append(token)
                continue
            if lead == "[" and (match := _DEF.match(src, pos)):
                pos = match.end()
                raw = match.group()
                last = tokens[-1] if tokens else None
                if last is not None and last.kind in ("paragraph", "text"):
                    last.extend(raw, raw)
                else:
                    tag = _SPACES.sub(" ", match.group(1).lower())
                    if tag not in self.links:
                        self.links[tag] = True
                        tokens.append(Token("def", raw))
                continue
            if underline < pos:
                found = _UNDERLINE.search(src, pos)
                underline = end + 1 if found is None else found.start()
            if stop < pos:
                found = _SETEXT_STOP.search(src, pos)
                stop = end + 1 if found is None else found.start()
            if underline <= stop and (match := _LHEADING.match(src, pos)):
                pos = match.end()
                tokens.append(Token("heading", match.group(), js_trim(match.group(1))))
                continue
            if self.top and (match := _PARAGRAPH.match(src, pos)):
                raw = match.group()
                text = raw[:-1] if raw.endswith("\n") else raw
                last = tokens[-1] if tokens else None
                if clipped and last is not None and last.kind == "paragraph":
                    last.extend(raw, text)
                else:
                    tokens.append(Token("paragraph", raw, text))
                clipped = False
                pos = match.end()
                continue
            match = _TEXT.match(src, pos)
            raw = match.group() if match else src[pos]  # `marked` throws; nothing reaches it
            pos += len(raw)
            last = tokens[-1] if tokens else None
            if last is not None and last.kind == "text":
                last.extend(raw, raw)
            else:
                tokens.append(Token("text", raw, raw))
        self.top = True
        return tokens

    def _started(self, src: str, pos: int, lead: str, depth: int) -> Token | None:
        """A fence, heading, rule, quote, list or HTML block at `pos`, by its first character."""
        token = None
        if lead in "`~":
            token = _simple("code", _FENCES, src, pos)
        elif lead == "#":
            token = self._heading(src, pos)
        elif lead == ">":
            token = self._blockquote(src, pos, depth)
        elif lead == "<":
            token = _simple("html", _HTML, src, pos)
        if token is None and lead in "-_*":
            token = _hr(src, pos)
        if token is None and (lead in "*+-" or lead.isdigit()):
            token = self._list(src, pos, depth)
        return token

    def _heading(self, src: str, pos: int) -> Token | None:
        match = _HEADING.match(src, pos)
        if match is None:
            return None
        text = js_trim(match.group(2))
        if text.endswith("#"):
            cut = text.rstrip("#")
            if not cut or cut.endswith(" "):
                text = js_trim(cut)
        return Token("heading", match.group(), text)

    def _blockquote(self, src: str, pos: int, depth: int) -> Token | None:
        match = _BLOCKQUOTE.match(src, pos)
        return None if match is None else self.blockquote(match.group(), depth)

    def blockquote(self, matched: str, depth: int) -> Token:
        """`Tokenizer.blockquote` on the text its rule matched (lines taken by index, the
        text in pieces; after `MAX_QUOTE_STRETCHES` the rest is one stretch)."""
        lines = matched.rstrip("\n").split("\n")
        start = 0
        raws: list[str] = []
        texts: list[str] = []
        tokens: list[Token] = []
        stretches = 0
        while start < len(lines):
            stretches += 1
            inside = False
            i = start
            if stretches >= MAX_QUOTE_STRETCHES:
                i = len(lines)
            while i < len(lines):
                if _QUOTE_START.match(lines[i]):
                    inside = True
                elif inside:
                    break
                i += 1
            current_raw = "\n".join(lines[start:i])
            start = i
            current_text = _QUOTE_MARKER.sub("", _QUOTE_SETEXT.sub(r"\n    \1", current_raw))
            raws.append(current_raw)
            texts.append(current_text)
            top = self.top
            self.top = True
            self.block_tokens(current_text, tokens, True, depth + 1)
            self.top = top
            if start >= len(lines):
                break
            last = tokens[-1] if tokens else None
            if last is None:
                continue
            if last.kind == "code":
                break
            rest = "\n".join(lines[start:])
            raw, text = "\n".join(raws), "\n".join(texts)
            if last.kind == "blockquote":
                again = self._blockquote(last.raw + "\n" + rest, 0, depth + 1)
                if again is None:  # `marked` would fail here; cannot happen
                    break
                tokens[-1] = again
                raws = [raw[: len(raw) - len(last.raw)] + again.raw]
                texts = [text[: len(text) - len(last.text)] + again.text]
                break
            if last.kind == "list":
                joined = last.raw + "\n" + rest
                relisted = self.list_at(joined, 0, depth + 1)
                if relisted is None:  # `marked` would fail here; cannot happen
                    break
                tokens[-1] = relisted
                raws = [raw[: len(raw) - len(last.raw)] + relisted.raw]
                texts = [text[: len(text) - len(last.raw)] + relisted.raw]
                lines = joined[len(relisted.raw) :].split("\n")
                start = 0
        raw, text = "\n".join(raws), "\n".join(texts)
        token = Token("blockquote", raw, text)
        token.tokens = tokens
        return token

    def _list(self, src: str, pos: int, depth: int) -> Token | None:
        return self.list_at(src, pos, depth)

    def list_at(self, src: str, pos: int, depth: int) -> Token | None:
        """`Tokenizer.list`: the list at `pos` in `src`, its items lexed."""
        cap = _LIST.match(src, pos)
        if cap is None:
            return None
        bullet = js_trim(cap.group(1))
        ordered = len(bullet) > 1
        item_re = _ITEM[bullet[-1] if ordered else bullet]
        token = Token("list", "")
        loose = ends_with_blank = False
        while pos < len(src):
            item = item_re.match(src, pos)
            if item is None or _HR.match(src, pos):
                break
            raw = item.group()
            pos = item.end()
            line = _expand_tabs(item.group(2).split("\n", 1)[0], len(item.group(1)))
            next_line = _line_at(src, pos)
            blank = not js_trim(line)
            contents = ""
            if blank:
                indent = len(item.group(1)) + 1
            else:
                indent = _NON_SPACE.search(line).start()  # type: ignore[union-attr]
                indent = 1 if indent > 4 else indent
                contents = line[indent:]
                indent += len(item.group(1))
            if blank and _BLANK_LINE.match(next_line):
                raw += next_line + "\n"
                pos += len(next_line) + 1
            else:
                added, contents, pos = _item_lines(src, pos, indent, line, blank, contents)
                raw += added
            if not loose:
                if ends_with_blank:
                    loose = True
                elif _DOUBLE_BLANK.search(raw):
                    ends_with_blank = True
            entry = Token("list_item", raw, contents)
            token.items.append(entry)
            token.append_raw(raw)
        if not token.items:
            return None
        last = token.items[-1]
        last.raw = js_trim_end(last.raw)
        last.text = js_trim_end(last.text)
        token.raw = js_trim_end(token.raw)
        for entry in token.items:
            self.top = False
            entry.tokens = self.block_tokens(entry.text, [], False, depth + 1)
            if not loose:
                loose = any(
                    t.kind == "space" and _ANY_LINE.search(t.raw) is not None for t in entry.tokens
                )
        if loose:
            for entry in token.items:
                for t in entry.tokens:
                    if t.kind == "text":
                        t.kind = "paragraph"
        return token


def _item_lines(
    src: str, pos: int, indent: int, line: str, blank: bool, contents: str
) -> tuple[str, str, int]:
    """The lines after a list item's first: (raw taken, item contents, position after)."""
    fence, heading, html, quote, next_bullet, hr = _ITEM_ENDS[min(3, indent - 1)]
    raw = ""
    while pos < len(src):
        next_line = _line_at(src, pos)
        untabbed = next_line.replace("\t", "    ")
        lead = next_line[:4].lstrip(" ")[:1]
        if (
            lead in _STARTS
            and lead
            and any(r.match(next_line) for r in (fence, heading, html, quote, next_bullet, hr))
        ):
            break
        first = _NON_SPACE.search(untabbed)
        if (first is not None and first.start() >= indent) or not js_trim(next_line):
            contents += "\n" + untabbed[indent:]
        else:
            if blank:
                break
            first = _NON_SPACE.search(line.replace("\t", "    "))
            if first is not None and first.start() >= 4:
                break
            if fence.match(line) or heading.match(line) or hr.match(line):
                break
            contents += "\n" + next_line
        blank = not js_trim(next_line)
        raw += next_line + "\n"
        pos += len(next_line) + 1
        line = untabbed[indent:]
    return raw, contents, pos


# A list item's first line, by bullet (`marked`'s `listItemRegex`).
_ITEM = {
    bullet: re.compile(rf"( {{0,3}}{marker})((?:[\t ][^\n]*)?(?:\n|\Z))", re.ASCII)
    for bullet, marker in (
        ("-", r"\-"),
        ("+", r"\+"),
        ("*", r"\*"),
        (".", r"\d{1,9}\."),
        (")", r"\d{1,9}\)"),
    )
}
# What ends a list item, by how far its lines may be indented (`marked`'s `fencesBeginRegex`,
# `headingBeginRegex`, `htmlBeginRegex`, `blockquoteBeginRegex`, `nextBulletRegex`, `hrRegex`).
_ITEM_ENDS = [
    (
        re.compile(rf" {{0,{n}}}(?:```|~~~)"),
        re.compile(rf" {{0,{n}}}#"),
        re.compile(rf" {{0,{n}}}<(?:[a-z]{DOT}*>|!--)", re.ASCII | re.IGNORECASE),
        re.compile(rf" {{0,{n}}}>"),
        re.compile(rf" {{0,{n}}}(?:[*+-]|\d{{1,9}}[.)])(?:[ \t]|\Z)", re.ASCII),
        re.compile(rf" {{0,{n}}}(?:(?:- *){{3,}}|(?:_ *){{3,}}|(?:\* *){{3,}})\Z"),
    )
    for n in range(4)
]


def _line_at(src: str, pos: int) -> str:
    end = src.find("\n", pos)
    return src[pos:] if end == -1 else src[pos:end]


def _expand_tabs(text: str, column: int) -> str:
    """`marked`'s tab expansion of a list item's first line, from `column`."""
    if "\t" not in text:
        return text
    out = []
    for ch in text:
        if ch == "\t":
            width = 4 - column % 4
            out.append(" " * width)
            column += width
        else:
            out.append(ch)
            column += 1
    return "".join(out)


def _hr(src: str, pos: int) -> Token | None:
    match = _HR.match(src, pos)
    return None if match is None else Token("hr", match.group().rstrip("\n"))


def _simple(kind: str, rule: re.Pattern[str], src: str, pos: int) -> Token | None:
    match = rule.match(src, pos)
    return None if match is None else Token(kind, match.group())


def lex(text: str) -> list[Token]:
    """The top-level block tokens of `text` (line endings made LF first, as `marked` does)."""
    return Lexed(text).tokens
