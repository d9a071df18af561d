"""The block lexer behind comment stripping and import scanning (Claude Code uses `marked`)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.parsing.blocks import lex
from assembler.parsing.imports import IMPORT_PATTERN, import_tokens
from assembler.parsing.markdown import (
    import_texts,
    lexed_import_texts,
    lexed_strip,
    outside_fences,
    strip_block_comments,
)

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
    assert [b.kind for b in lex(DOC) if b.kind != "blank"] == [
        "text", "text", "html", "text", "code", "code", "list", "quote", "html", "html", "html", "html",
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
)


@given(st.lists(st.sampled_from(_LINES), max_size=14))
@settings(max_examples=400, deadline=None)
def test_import_scanning_fast_paths_agree_with_the_lexer(lines: list[str]) -> None:
    """Every shortcut (plain text, text around column-0 fences) finds what lexing finds."""
    text = "\n".join(lines) + "\n"

    def tokens(pieces: Iterable[str]) -> list[str]:
        return [m.group(1) for piece in pieces for m in IMPORT_PATTERN.finditer(piece)]

    assert tokens(import_texts(text)) == tokens(lexed_import_texts(text))


def test_text_around_fences_is_scanned_and_fences_are_not() -> None:
    text = "See @a.md\n```sh\nnpm i @b/c\n```\nthen @d.md\n~~~\n@e.md\n"
    assert outside_fences(text) == ["See @a.md\n", "\nthen @d.md\n"]
    assert import_tokens(text) == ("a.md", "d.md")
    # An indented fence may belong to a list item: the lexer decides.
    assert outside_fences("- item\n  ```\n  @x.md\n  ```\n") is None


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
)


@given(st.lists(st.sampled_from(_PLAIN_LINES), max_size=12), st.sampled_from(("\n", "", "\n\n")))
@settings(max_examples=400, deadline=None)
def test_comment_fast_paths_agree_with_the_lexer(lines: list[str], end: str) -> None:
    """Stripping and import scanning without the lexer give what lexing gives."""
    text = "\n".join(lines) + end
    assert strip_block_comments(text) == lexed_strip(text)

    def tokens(pieces: Iterable[str]) -> list[str]:
        return [m.group(1) for piece in pieces for m in IMPORT_PATTERN.finditer(piece)]

    assert tokens(import_texts(text)) == tokens(lexed_import_texts(text))
