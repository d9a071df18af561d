"""`marked`'s inline lexer (version 17, `gfm: false`), ported for the import scan.

Claude Code looks for `@imports` in the `text` tokens of `marked`'s token tree, so where a
text token starts decides whether `@` starts one: `**b**@x.md` imports `x.md` (the text
token after the `strong` starts with `@`), `a@x.md` does not. The rules are `marked`'s
sources (`Lexer.rules.inline.normal`, through `jsre.compile_js`) and the procedures follow
`Lexer.inlineTokens` and the `Tokenizer`'s `emStrong`, `link` and `reflink`. Only what the
scan reads is kept: each token's kind, its text, and its children.

Limits (`marked`'s emphasis matching is quadratic in the number of delimiters, and some of
its HTML patterns in the number of `<`; no real paragraph comes near them): emphasis and
links nested deeper than `MAX_DEPTH` stay text; a text over `MAX_CHARS`, or past
`Budget.chars` in one document, is not lexed (it stays one text token); and once one
document's emphasis matching has taken `Budget.steps` steps, its delimiters stay text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import NamedTuple

from .jsre import compile_js, js_trim

MAX_DEPTH = 32
MAX_CHARS = 8 * 1024


class Budget:
    """What inline lexing may still spend on one document (see the module doc)."""

    __slots__ = ("chars", "steps")

    def __init__(self, chars: int = 256 * 1024, steps: int = 200_000) -> None:
        self.chars = chars
        self.steps = steps


# `\p{P}\p{S}` in the rules matches ASCII punctuation and `%`: the emphasis rules run on a
# view of the text in which every other punctuation or symbol character is `%` (a class of
# all of Unicode's would take Python's `re` a tenth of a second to compile, at each start).
_PUNCTUATION = r"!-/:-@\[-`{-~"
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _rule(source: str, *, search: bool = False) -> re.Pattern[str]:
    return compile_js(source, search=search, punctuation=_PUNCTUATION)


def _class_view(text: str) -> str:
    """`text` with each non-ASCII punctuation or symbol character replaced by `%`."""
    if text.isascii():
        return text
    return _NON_ASCII.sub(_punctuation_as_percent, text)


def _punctuation_as_percent(match: re.Match[str]) -> str:
    ch = match.group()
    return "%" if unicodedata.category(ch)[0] in "PS" else ch


_ESCAPE = _rule(r"""^\\([!"#$%&'()*+,\-./:;<=>?@\[\]\\^_`{|}~])""")
_TAG = _rule(
    r"^<!--(?:-?>|[\s\S]*?-->)|^<\/[a-zA-Z][\w:-]*\s*>|^<[a-zA-Z][\w-]*(?:\s+[a-zA-Z:_][\w.:-]*"
    r"""(?:\s*=\s*"[^"]*"|\s*=\s*'[^']*'|\s*=\s*[^\s"'=<>`]+)?)*?\s*\/?>|^<\?[\s\S]*?\?>"""
    r"|^<![a-zA-Z]+\s[\s\S]*?>|^<!\[CDATA\[[\s\S]*?\]\]>"
)
_LABEL = r"((?:\[(?:\\[\s\S]|[^\[\]\\])*\]|\\[\s\S]|`+(?!`)[^`]*?`+(?!`)|``+(?=\])|[^\[\]\\`])*?)"
_LINK = _rule(
    rf"^!?\[{_LABEL}\]\(\s*(<(?:\\.|[^\n<>\\])+>|[^ \t\n\x00-\x1f]*)"
    r"""(?:(?:[ \t]+(?:\n[ \t]*)?|\n[ \t]*)("(?:\\"?|[^"\\])*"|'(?:\\'?|[^'\\])*'"""
    r"|\((?:\\\)?|[^)\\])*\)))?\s*\)"
)
_REF = r"((?!\s*\])(?:\\[\s\S]|[^\[\]\\])+)"
_NOLINK = _rule(rf"^!?\[{_REF}\](?:\[\])?")
_REFLINK = _rule(rf"^!?\[{_LABEL}\]\[{_REF}\]")
_REFLINK_SEARCH = _rule(rf"!?\[{_LABEL}\]\[{_REF}\]|!?\[{_REF}\](?:\[\])?(?!\()", search=True)
_CODE = _rule(r"^(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)")
_BR = _rule(r"^( {2,}|\\)\n(?!\s*$)")
_AUTOLINK = _rule(
    r"^<([a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s\x00-\x1f<>]*|[a-zA-Z0-9.!#$%&'*+/=?_`{|}~-]+(@)"
    r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}"
    r"[a-zA-Z0-9])?)+(?![-_]))>"
)
_TEXT = _rule(r"^(`+|[^`])(?:(?= {2,}\n)|[\s\S]*?(?:(?=[\\<!\[`*_]|\b_|$)|[^ ](?= {2,}\n)))")
_EM_LEFT = _rule(r"^(?:\*+(?:((?!\*)[\p{P}\p{S}])|([^\s*]))?)|^_+(?:((?!_)[\p{P}\p{S}])|([^\s_]))?")
_EM_RIGHT_AST = _rule(
    r"^[^_*]*?__[^_*]*?\*[^_*]*?(?=__)|[^*]+(?=[^*])|(?!\*)[\p{P}\p{S}](\*+)(?=[\s]|$)"
    r"|[^\s\p{P}\p{S}](\*+)(?!\*)(?=[\s\p{P}\p{S}]|$)|(?!\*)[\s\p{P}\p{S}](\*+)(?=[^\s\p{P}\p{S}])"
    r"|[\s](\*+)(?!\*)(?=[\p{P}\p{S}])|(?!\*)[\p{P}\p{S}](\*+)(?!\*)(?=[\p{P}\p{S}])"
    r"|[^\s\p{P}\p{S}](\*+)(?=[^\s\p{P}\p{S}])",
    search=True,
)
_EM_RIGHT_UND = _rule(
    r"^[^_*]*?\*\*[^_*]*?_[^_*]*?(?=\*\*)|[^_]+(?=[^_])|(?!_)[\p{P}\p{S}](_+)(?=[\s]|$)"
    r"|[^\s\p{P}\p{S}](_+)(?!_)(?=[\s\p{P}\p{S}]|$)|(?!_)[\s\p{P}\p{S}](_+)(?=[^\s\p{P}\p{S}])"
    r"|[\s](_+)(?!_)(?=[\p{P}\p{S}])|(?!_)[\p{P}\p{S}](_+)(?!_)(?=[\p{P}\p{S}])",
    search=True,
)
_PUNCT_OR_SPACE = _rule(r"^((?![*_])[\s\p{P}\p{S}])")
_ANY_PUNCTUATION = _rule(r"\\([\p{P}\p{S}])", search=True)
_BLOCK_SKIP = _rule(
    r"\[(?:[^\[\]`]|(?<a>`+)[^`]+\k<a>(?!`))*?\]\((?:\\[\s\S]|[^\\\(\)]|\((?:\\[\s\S]|[^\\\(\)])*\))*\)"
    r"|(?<!`)()(?<b>`+)[^`]+\k<b>(?!`)|<(?! )[^<>]*?>",
    search=True,
)
_SPACES = _rule(r"\s+", search=True)
_LINK_BRACKETS = re.compile(r"\\([\[\]])")


class _Text(NamedTuple):
    """One text being lexed: the text, its punctuation view, its masked view, and context."""

    src: str
    view: str
    masked: str
    links: Mapping[str, object]
    budget: Budget
    depth: int


class Inline(NamedTuple):
    """An inline token: `marked`'s type, its `text`, and the tokens inside it."""

    kind: str
    text: str
    tokens: tuple[Inline, ...] = ()


def inline_tokens(
    src: str, links: Mapping[str, object], budget: Budget, depth: int = 0
) -> list[Inline]:
    """`Lexer.inlineTokens`: the inline tokens of a paragraph's (or heading's) text."""
    if depth == 0:
        if len(src) > min(MAX_CHARS, budget.chars):
            return [Inline("text", src)] if src else []
        budget.chars -= len(src)
    if depth > MAX_DEPTH:
        return [Inline("text", src)] if src else []
    view = _class_view(src)
    text = _Text(src, view, _masked(src, view, links), links, budget, depth)
    tokens: list[Inline] = []
    pos = 0
    keep_prev = False
    prev_char = ""
    n = len(src)
    while pos < n:
        if not keep_prev:
            prev_char = ""
        keep_prev = False
        token, end = _token(text, pos, prev_char)
        if token is None:  # inline text: merged into the text before it
            match = _TEXT.match(src, pos)
            raw = match.group() if match else src[pos]  # `marked` throws; nothing reaches it
            end = pos + len(raw)
            if raw[-1] != "_":
                prev_char = raw[-1]
            keep_prev = True
            token = Inline("text", raw)
        if token.kind == "text" and tokens and tokens[-1].kind == "text":
            tokens[-1] = Inline("text", tokens[-1].text + token.text)
        else:
            tokens.append(token)
        pos = end
    return tokens


def _masked(src: str, view: str, links: Mapping[str, object]) -> str:
    """The text `emStrong` searches: reference links, escapes, links and code spans masked."""
    masked = view
    if links:
        pos = 0
        while (match := _REFLINK_SEARCH.search(src, pos)) is not None:
            label = match.group()[match.group().rfind("[") + 1 : -1]
            if label in links:
                masked = (
                    masked[: match.start()] + "[" + "a" * (len(match.group()) - 2) + "]"
                    + masked[match.end() :]
                )  # fmt: skip
            pos = match.end() if match.end() > match.start() else match.end() + 1
    masked = _ANY_PUNCTUATION.sub("++", masked)
    pos = 0
    while (match := _BLOCK_SKIP.search(masked, pos)) is not None:
        length = len(match.group())
        masked = masked[: match.start()] + "[" + "a" * (length - 2) + "]" + masked[match.end() :]
        pos = match.end()
    return masked


def _token(text: _Text, pos: int, prev_char: str) -> tuple[Inline | None, int]:
    """The token at `pos` other than inline text, and where it ends; (None, pos) if none."""
    src = text.src
    if match := _ESCAPE.match(src, pos):
        return Inline("escape", match.group(1)), match.end()
    if match := _TAG.match(src, pos):
        return Inline("html", match.group()), match.end()
    if src[pos] in "[!":
        found = _link(text, pos)
        if found is not None:
            return found
    if src[pos] in "*_":
        found = _em_strong(text, pos, prev_char)
        if found is not None:
            return found
    if match := _CODE.match(src, pos):
        return Inline("codespan", match.group(2)), match.end()
    if match := _BR.match(src, pos):
        return Inline("br", ""), match.end()
    if match := _AUTOLINK.match(src, pos):
        address = match.group(1)
        return Inline("link", address, (Inline("text", address),)), match.end()
    return None, pos


def _link(text: _Text, pos: int) -> tuple[Inline, int] | None:
    """`Tokenizer.link`, then `Tokenizer.reflink` (which may give a one-character text)."""
    src, links = text.src, text.links
    match = _LINK.match(src, pos)
    if match is not None:
        raw = match.group()
        label, href = match.group(1), match.group(2)
        trimmed = js_trim(href)
        valid = True
        if trimmed.startswith("<"):
            if not trimmed.endswith(">"):
                valid = False
            else:
                inner = trimmed[:-1]
                if (len(inner) - len(inner.rstrip("\\"))) % 2 == 1:
                    valid = False
        else:
            close = _closing_paren(href)
            if close == -2:
                valid = False
            elif close > -1:
                start = 5 if raw.startswith("!") else 4
                raw = js_trim(raw[: start + len(label) + close])
        if valid:
            return _link_token(raw, label, text), pos + len(raw)
    match = _REFLINK.match(src, pos) or _NOLINK.match(src, pos)
    if match is None:
        return None
    ref = (match.group(2) if match.re is _REFLINK else None) or match.group(1)
    if _SPACES.sub(" ", ref).lower() not in links:
        return Inline("text", match.group()[0]), pos + 1
    return _link_token(match.group(), match.group(1), text), match.end()


def _link_token(raw: str, label: str, text: _Text) -> Inline:
    inner = _LINK_BRACKETS.sub(r"\1", label)
    kind = "image" if raw.startswith("!") else "link"
    return Inline(kind, inner, _inner(inner, text))


def _inner(inner: str, text: _Text) -> tuple[Inline, ...]:
    """The tokens inside a link or emphasis, one level deeper."""
    return tuple(inline_tokens(inner, text.links, text.budget, text.depth + 1))


def _closing_paren(text: str) -> int:
    """`marked`'s `findClosingBracket(text, "()")`."""
    if ")" not in text:
        return -1
    level = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "(":
            level += 1
        elif ch == ")":
            level -= 1
            if level < 0:
                return i
        i += 1
    return -2 if level > 0 else -1


def _em_strong(text: _Text, pos: int, prev_char: str) -> tuple[Inline, int] | None:
    """`Tokenizer.emStrong`: emphasis opened at `pos`, if a delimiter run closes it."""
    src, budget = text.src, text.budget
    left = _EM_LEFT.match(text.view, pos)
    if left is None or not any(left.group(g) for g in (1, 2, 3, 4)):
        return None
    if left.group(4) and prev_char.isalnum():  # `\p{L}\p{N}`
        return None
    next_char = left.group(1) or left.group(3) or ""
    if next_char and prev_char and not _PUNCT_OR_SPACE.match(_class_view(prev_char)):
        return None
    l_length = len(left.group()) - 1
    delim_total = l_length
    mid_delim_total = 0
    right_rule = _EM_RIGHT_AST if src[pos] == "*" else _EM_RIGHT_UND
    rest = text.masked[pos + l_length :]
    for match in right_rule.finditer(rest):
        budget.steps -= 1
        if budget.steps < 0:
            return None
        r_delim = next((g for g in match.groups() if g), None)
        if r_delim is None:
            continue
        r_length = len(r_delim)
        if match.group(3) or match.group(4):
            delim_total += r_length
            continue
        if (
            (_group(match, 5) or _group(match, 6))
            and l_length % 3
            and not (l_length + r_length) % 3
        ):
            mid_delim_total += r_length
            continue
        delim_total -= r_length
        if delim_total > 0:
            continue
        r_length = min(r_length, r_length + delim_total + mid_delim_total)
        raw = src[pos : pos + l_length + match.start() + 1 + r_length]
        inner, kind = (raw[1:-1], "em") if min(l_length, r_length) % 2 else (raw[2:-2], "strong")
        return Inline(kind, inner, _inner(inner, text)), pos + len(raw)
    return None


def _group(match: re.Match[str], index: int) -> str | None:
    return match.group(index) if index <= (match.re.groups or 0) else None
