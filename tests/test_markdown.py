"""The block lexer behind comment stripping and import scanning (Claude Code uses `marked`)."""

from __future__ import annotations

import pytest

from assembler.markdown import lex, strip_block_comments

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
