"""The block lexer behind comment stripping and import scanning (Claude Code uses `marked`)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.parsing.imports import IMPORT_PATTERN, import_tokens
from assembler.parsing.markdown import (
    import_texts,
    lexed_import_texts,
    lexed_strip,
    strip_block_comments,
)
from assembler.parsing.marked.blocks import lex

DOC = """# Title
Para with `code` and <!-- inline --> comment.
<!-- interrupts the paragraph -->
After.

```js
<!-- in a fence -->
```

    <!-- indented code -->

- list item
  <!-- inside a list stays -->

> quote
> <!-- inside a quote stays -->

<div>
<!-- inside an html block stays -->
</div>

<!-- a --> residue kept
<!--
multi
line
-->

<!-- never closed
"""


def test_lexing_is_lossless() -> None:
    assert "".join(block.raw for block in lex(DOC)) == DOC


def test_block_kinds() -> None:
    assert [b.kind for b in lex(DOC) if b.kind != "space"] == [
        "heading", "paragraph", "html", "paragraph", "code", "code", "list", "blockquote",
        "html", "html", "html", "html",
    ]  # fmt: skip


def test_only_closed_top_level_comment_blocks_are_removed() -> None:
    assert strip_block_comments(DOC) == (
        "# Title\nPara with `code` and <!-- inline --> comment.\nAfter.\n\n"
        "```js\n<!-- in a fence -->\n```\n\n    <!-- indented code -->\n\n"
        "- list item\n  <!-- inside a list stays -->\n\n"
        "> quote\n> <!-- inside a quote stays -->\n\n"
        "<div>\n<!-- inside an html block stays -->\n</div>\n\n"
        " residue kept\n<!-- never closed\n"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no comments\r\nkept\r\n", "no comments\r\nkept\r\n"),
        ("a\r\n<!-- c -->\r\nb\r\n", "a\nb\n"),
        ("~~~\n<!-- x -->\n~~~\n", "~~~\n<!-- x -->\n~~~\n"),
        ("````\n```\n<!-- x -->\n````\n", "````\n```\n<!-- x -->\n````\n"),
        ("   <!-- three spaces -->\nx", "x"),
        # Indented 1-3 spaces right after a paragraph line, a comment continues the paragraph.
        ("para\n  <!-- c -->\nafter\n", "para\n  <!-- c -->\nafter\n"),
        ("para\n\n  <!-- c -->\nafter\n", "para\n\nafter\n"),
        # Text without `<!--` is not lexed: its line endings stay.
        ("a\r\nb -->\r\n", "a\r\nb -->\r\n"),
        # Blank lines after a comment go with it; lines of spaces do not.
        ("<!-- c -->\n\n  \nx", "  \nx"),
        ("<!--->\ntext\n<!-- c -->\n", "<!--->\ntext\n"),
        # A setext heading's text runs through a comment line without `>`: the heading
        # holds the comment, even one closed below the underline.
        ("text\n<!-- multi\n===\n<!-- c -->\n", "text\n<!-- multi\n===\n"),
    ],
)
def test_comment_stripping_edge_cases(text: str, expected: str) -> None:
    assert strip_block_comments(text) == expected


# Lines that exercise every fast path of `import_texts` and the reasons to leave one.
_LINES = (
    "",
    "text @a.md here",
    "- item @b.md",
    "1. step @c.md",
    "  continued @d.md",
    "# Heading @e.md",
    "a `@f.md` span and @g.md",
    "`unclosed @h.md",
    "```",
    "```sh",
    "````",
    "~~~",
    "  ```",
    "```js `x` @i.md",
    "    indented @j.md",
    "> quote @k.md",
    "<!-- comment @l.md -->",
    "<div> @m.md",
    "\t- tab @n.md",
    "* star @o.md",
    "---",
    "@p.md",
    "ends with cr @q.md\r",
    "<!-- c --> residue @r.md",
    "<!--",
    "-->",
    "10. ten @s.md",
    "2) paren @t.md",
    "  - nested @u.md",
    "```py @v.md",
    "~~~ info @w.md",
    "`````",
    "   ```",
    "text ``` inline @x.md",
    "<!-->",
    "<!-- a --> tail @y.md",
    "line @z.md -->",
    "  <!-- indented -->",
    "`a",
    "b` @k.md",
    "**b**@aa.md",
    "\\#@ab.md",
    "`x`@ac.md",
    "[r]: /u",
    "[r]@ad.md [x](y)@ae.md",
    "<!--->",
    "<!-- c -->   ",
    "  \t",
    "- `x @af.md`",
    "para",
    "  <!-- after para -->",
    "~/home @~/ag.md",
    "===",
    "a_b @s_t.md `c`",
    "`x @ah.md` y",
)


@given(st.lists(st.sampled_from(_LINES), max_size=14))
@settings(max_examples=400, deadline=None)
def test_import_scanning_fast_paths_agree_with_the_lexer(lines: list[str]) -> None:
    """Every shortcut (plain text, text around column-0 fences) finds what lexing finds."""
    text = "\n".join(lines) + "\n"

    def tokens(pieces: Iterable[str]) -> list[str]:  # in the client's order, once each (a Set)
        return list(dict.fromkeys(m.group(1) for p in pieces for m in IMPORT_PATTERN.finditer(p)))

    assert tokens(import_texts(text)) == tokens(lexed_import_texts(text))


def test_imports_are_found_where_marked_puts_text_tokens() -> None:
    text = "See @a.md\n```sh\nnpm i @b/c\n```\nthen @d.md\n~~~\n@e.md\n"
    assert import_tokens(text) == ("a.md", "d.md")
    # A text token starts after any other inline token, and a tight list item's text is
    # scanned whole before its tokens (the client's walk).
    assert import_tokens("**b**@f.md \\#@g.md `x`@h.md\n") == ("f.md", "g.md", "h.md")
    assert import_tokens("- `x @i.md`\n") == ("i.md`",)
    assert import_tokens("- `x @i.md`\n\n- y\n") == ()  # loose: paragraphs, not text


# Mostly plain lines, with comments: where the comment fast paths apply.
_PLAIN_LINES = (
    "",
    "text @a.md",
    "- item @b.md",
    "1. one @c.md",
    "2. two `x` @d.md",
    "  cont @e.md",
    "# H @f.md",
    "---",
    "`a",
    "b` @g.md",
    "<!-- c @h.md -->",
    "<!-- multi",
    "mid @i.md",
    "end -->",
    "<!-- r --> tail @j.md",
    "<!-->",
    "  ",
    "```",
    "@k.md",
    "text ``` in @m.md",
    "   ",
    "<!-- c -->  ",
    "  <!-- indented @n.md -->",
    "<!--->",
    "*emph* @o.md",
    "===",
    "<!-- a > b -->",
    "x `a` @p.md",
    "`a @q.md`",
    "**@r.md**",
    "a_b @s_t.md",
    "_u_ @v.md",
    "@w.md_",
    "* item `c` @x.md",
    "`open",
    "close` @y.md",
)


@given(st.lists(st.sampled_from(_PLAIN_LINES), max_size=12), st.sampled_from(("\n", "", "\n\n")))
@settings(max_examples=400, deadline=None)
def test_comment_fast_paths_agree_with_the_lexer(lines: list[str], end: str) -> None:
    """Stripping and import scanning without the lexer give what lexing gives."""
    text = "\n".join(lines) + end
    assert strip_block_comments(text) == lexed_strip(text)

    def tokens(pieces: Iterable[str]) -> list[str]:  # in the client's order, once each (a Set)
        return list(dict.fromkeys(m.group(1) for p in pieces for m in IMPORT_PATTERN.finditer(p)))

    assert tokens(import_texts(text)) == tokens(lexed_import_texts(text))


@pytest.mark.parametrize(
    "text",
    [
        "> " * 5000 + "x @a.md <!-- c -->\n<!-- d -->\n",
        "- " * 5000 + "x @a.md <!-- c -->\n<!-- d -->\n",
        pytest.param(  # 9 MB of indentation: seconds of CPU
            "".join("  " * i + "- x @a.md\n" for i in range(3000)) + "<!-- d -->\n",
            marks=pytest.mark.slow,
        ),
        ("> - a @a.md\n>   - b\n" * 500) + "<!-- d -->\n",
        "@a.md " + "*" * 3000 + "a" + "*" * 3000 + "\n<!-- d -->\n",
        "@a.md " + "[a](" * 3000 + "\n<!-- d -->\n",
    ],
    ids=["quotes", "lists", "indented lists", "quoted lists", "emphasis", "links"],
)
def test_nesting_is_bounded(text: str) -> None:
    """Deeper than the limits, text stays text: no recursion error, the answers still come."""
    assert strip_block_comments(text) == text.removesuffix("<!-- d -->\n")
    assert "a.md" in import_tokens(text)


def test_comments_and_delimiters_by_the_thousand_are_lexed_in_one_pass() -> None:
    text = "<!--\n" * 20_000 + "@a.md"
    assert strip_block_comments(text) == text
    assert import_tokens(text) == ()
    many = "@a.md " + "*a " * 20_000 + "\n<!-- c -->\n"
    assert strip_block_comments(many) == many.removesuffix("<!-- c -->\n")
    assert import_tokens(many) == ("a.md",)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="`` @a\n\r\t\u2028\u00a0x", max_size=40))
def test_the_spaced_at_check_searches_only_around_each_at_what_the_whole_text_search_finds(
    text: str,
) -> None:
    from assembler.parsing import markdown

    whole = markdown._SPAN_SPACED_AT.search(text) is not None
    assert markdown._span_holds_spaced_at(text) == whole
