"""Generate the differential corpus for comment stripping and import scanning.

Documents come from a small grammar of the constructs that decide what Claude Code strips and
imports (HTML comments at every position and indentation, code, lists, quotes, headings, HTML
blocks, `@imports` in every inline context, line endings, frontmatter variants). The expected
output of each comes from the real `marked` lexer, run by `marked_reference.cjs`, so this
needs node and `marked@17.0.6`, the version `assembler/parsing/marked/` follows (see
docs/markdown.md); the test that reads the data does not:

    mkdir -p /tmp/marked && npm install --prefix /tmp/marked marked@17.0.6
    MARKED=/tmp/marked/node_modules/marked python -m tests.tools.markdown_corpus

writes `tests/data/markdown-corpus.jsonl`: one `{"doc", "text", "imports"}` object a line,
`text` omitted when it equals the document.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "data" / "markdown-corpus.jsonl"
SEED = 15
COUNT = 3500

# Documents that pin down known classes and every construct of SPEC section 4 by hand.
HAND_WRITTEN = (
    "para\n  <!-- indented after a paragraph line -->\nafter\n",
    "para\n   <!-- three spaces -->\n",
    "para\n <!-- one space -->\n\n<!-- own block -->\n",
    "a\r\nb -->\r\nc\r\n",
    "a\r\n<!-- c -->\r\nb\r\n",
    "x\r-->\ry\r",
    "<!-- block @a.md -->\nText @b.md and inline <!-- @c.md --> stays\n",
    "<!-- unclosed @d.md\nstill @e.md\n",
    "<!-- c --> residue @f.md\n",
    "```\n@g.md\n```\n`@h.md` and ``@i.md``\n    @j.md indented\n",
    "foo@bar.md mail@x.com @k.md#frag @./l.md @../m.md @~/n.md @/o.md @/ @\n",
    "@p\\ q.md and @r\\ s\\ t.md\n",
    "---\npaths: src/**\n---\n<!-- c -->\nbody @u.md\n",
    "---\n---\nbody\n",
    "---\npaths: {a,b}*\n  bad: [\n---\n@v.md\n",
    "text\n---\nnot: frontmatter\n---\n@w.md\n",
    "- item\n  <!-- in a list -->\n\n> quote\n> <!-- in a quote -->\n",
    "<div>\n<!-- in html -->\n</div>\n",
    "Heading\n=======\n<!-- after setext -->\n",
    "**@x.md** *@y.md* _@z.md_ [@a1.md](u) ![@a2.md](i) <b>@a3.md</b> \\\\@a4.md\n",
    "para\n<!--\nx\n-->\n===\n",
    "para\n<!-- c -->  \n===\n",
    "para\n<!-- a > b -->\n---\n",
    "text\n<!-- multi\n===\n<!-- c -->\n",
    "- `npm i @acme/shared` and @docs/my_notes.md\n",
)

WORDS = ("see", "the", "rules", "a", "Note:", "x", "1.", "foo", "and", "then", "ok", "#tag")
IMPORTS = (
    "@a.md",
    "@./b.md",
    "@../c.md",
    "@~/d.md",
    "@/e.md",
    "@f",
    "@docs/g.md",
    "@h.md#frag",
    "@#only",
    "@",
    "@/",
    "@@i.md",
    "@j\\ k.md",
    "@%l",
    "@(m)",
    "@.n",
    "@-o",
    "@_p",
    "@q.md,",
    "@r.md.",
    "@s.md)",
    "@t.txt:",
    "@~",
    "@./",
    "@é.md",
)


def _import(r: random.Random) -> str:
    name = r.choice(IMPORTS)
    return name


def _inline(r: random.Random) -> str:
    """One inline element: words, imports in every context, code spans, HTML, comments."""
    imp = _import(r)
    forms = (
        lambda: r.choice(WORDS),
        lambda: imp,
        lambda: imp,
        lambda: f"**{imp}**",
        lambda: f"*{imp}*",
        lambda: f"_{imp}_",
        lambda: f"__{imp}__",
        lambda: f"x**{imp}**y",
        lambda: f"**b**{imp}",
        lambda: f"_a_{imp}",
        lambda: f"[{imp}](url)",
        lambda: f"[t]({imp})",
        lambda: f"![{imp}](i.png)",
        lambda: f"[{imp}]",
        lambda: f"[ref] {imp}",
        lambda: f"[x][ref]{imp}",
        lambda: f"[{imp}][ref]",
        lambda: f"***{imp}***",
        lambda: f"*a **{imp}** b*",
        lambda: f"**a*{imp}",
        lambda: f"[a `]` b]({imp})",
        lambda: f"[a](<u v>){imp}",
        lambda: f'[a](u "t"){imp}',
        lambda: f"<a href='x'>{imp}</a>",
        lambda: f"<?pi {imp} ?>",
        lambda: "  \n",
        lambda: f"`{imp}`",
        lambda: f"``{imp}``",
        lambda: f"`x {imp}`",
        lambda: "`",
        lambda: f"<b>{imp}</b>",
        lambda: f"<span>{imp}",
        lambda: f"<!-- {imp} -->",
        lambda: f"<!--c-->{imp}",
        lambda: f"{imp}<!--c-->",
        lambda: f"\\{imp}",
        lambda: f"\\\\{imp}",
        lambda: f"\\*{imp}",
        lambda: f"&amp;{imp}",
        lambda: f"mail{imp}",
        lambda: f"({imp})",
        lambda: f'"{imp}"',
        lambda: f"<http://x.y>{imp}",
        lambda: f"<me{imp}.com>",
        lambda: f"'{imp}'",
        lambda: f"{imp}!",
        lambda: f"~~{imp}~~",
        lambda: f"x_{imp}_y",
        lambda: "*",
        lambda: "_",
        lambda: "<",
        lambda: "-->",
        lambda: "<!--",
        lambda: "[",
        lambda: "]",
    )
    return r.choice(forms)()


def _text_line(r: random.Random) -> str:
    return " ".join(_inline(r) for _ in range(r.randint(1, 4)))


def _comment(r: random.Random) -> str:
    """An HTML comment: one line, several, multi-line, unclosed, odd openers, residue."""
    forms = (
        lambda: "<!-- c -->",
        lambda: f"<!-- {_import(r)} -->",
        lambda: "<!---->",
        lambda: "<!-->",
        lambda: "<!--->",
        lambda: "<!-- a --><!-- b -->",
        lambda: "<!-- a --> <!-- b -->",
        lambda: f"<!-- a --> {_text_line(r)}",
        lambda: "<!-- a -- b -->",
        lambda: "<!--\nmulti\nline\n-->",
        lambda: f"<!--\n{_text_line(r)}\n\nafter blank -->",
        lambda: f"<!-- open\n{_text_line(r)}",
        lambda: "<!-- never closed",
        lambda: f"<!-- x -->\n{_text_line(r)}",
        lambda: "<!-- a\n--> tail",
        lambda: f"<!-- a -->{_import(r)}",
    )
    return r.choice(forms)()


def _indent(r: random.Random) -> str:
    return r.choice(("", "", "", " ", "  ", "   ", "    ", "\t", "  \t"))


def _block(r: random.Random) -> str:
    """One block of the grammar (it may contain several lines)."""
    kinds = (
        lambda: _text_line(r),
        lambda: _text_line(r) + "\n" + _text_line(r),
        lambda: _indent(r) + _comment(r),
        lambda: _indent(r) + _comment(r),
        lambda: _text_line(r) + "\n" + _indent(r) + _comment(r),
        lambda: _indent(r) + _comment(r) + "\n" + _text_line(r),
        lambda: f"{r.choice(('#', '##', '######', '#######'))} {_text_line(r)}",
        lambda: _text_line(r) + "\n" + r.choice(("===", "---", "  ---", "=")),
        lambda: r.choice(("---", "***", "___", " - - -", "* * *")),
        lambda: _list(r),
        lambda: _list(r),
        lambda: _quote(r),
        lambda: _fence(r),
        lambda: _fence(r),
        lambda: "    " + _text_line(r) + "\n    " + _comment(r),
        lambda: "\t" + _text_line(r),
        lambda: _html(r),
        lambda: _html(r),
        lambda: "[ref]: /url\n" + _text_line(r),
        lambda: _text_line(r) + "  \n" + _text_line(r),
        lambda: "> " + _list(r).replace("\n", "\n> "),
        lambda: "- " + _quote(r).replace("\n", "\n  "),
        lambda: "> > " + _comment(r) + "\n> lazy\n" + _text_line(r),
        lambda: "1. " + _fence(r).replace("\n", "\n   "),
        lambda: _text_line(r) + "\n" + r.choice(("1. ", "2. ", "- ", "+ ", "1) ")) + _text_line(r),
        lambda: _text_line(r) + "\n" + _comment(r) + "\n" + r.choice(("===", "---", " -")),
        lambda: f"- {_text_line(r)}\n- `x {_import(r)}` {_import(r)}\n" + r.choice(("", "\n- z")),
    )
    return r.choice(kinds)()


def _list(r: random.Random) -> str:
    marker = r.choice(("-", "*", "+", "1.", "2)", "10."))
    lines = []
    for _ in range(r.randint(1, 3)):
        gap = r.choice((" ", " ", "  ", "     ", "\t"))
        lines.append(f"{_indent(r)[:2]}{marker}{gap}{_text_line(r)}")
        extra = r.choice(
            (
                "",
                "",
                "  " + _text_line(r),
                "  " + _comment(r),
                _comment(r),
                "lazy " + _text_line(r),
                "\n  " + _text_line(r),
                "  - nested " + _text_line(r),
                "  ```\n  " + _text_line(r) + "\n  ```",
                "\n      " + _text_line(r),
            )
        )
        if extra:
            lines.append(extra)
        if r.random() < 0.3:
            lines.append("")
    return "\n".join(lines)


def _quote(r: random.Random) -> str:
    lines = []
    for _ in range(r.randint(1, 3)):
        body = r.choice((_text_line, _comment, lambda g: "- " + _text_line(g)))(r)
        lines.append(r.choice(("> ", ">", "   > ", "> > ")) + body.replace("\n", "\n> "))
        if r.random() < 0.3:
            lines.append(r.choice(("lazy " + _text_line(r), "", _comment(r))))
    return "\n".join(lines)


def _fence(r: random.Random) -> str:
    marker = r.choice(("```", "~~~", "````", "``` `x`", "```js", "~~~ info"))
    close = r.choice((marker[:3], marker.split(" ")[0], "", "````", "  " + marker[:3]))
    body = "\n".join(r.choice((_text_line, _comment))(r) for _ in range(r.randint(1, 2)))
    return f"{_indent(r)[:3]}{marker}\n{body}\n{close}".rstrip("\n")


def _html(r: random.Random) -> str:
    return r.choice(
        (
            f"<div>\n{_text_line(r)}\n</div>",
            f"<div>\n{_comment(r)}\n\n{_text_line(r)}",
            f"<span>{_text_line(r)}</span>",
            f"<span>\n{_comment(r)}\n",
            f"<custom-tag>\n{_text_line(r)}",
            f"<?php {_text_line(r)} ?>",
            f"<!DOCTYPE html>\n{_text_line(r)}",
            f"<![CDATA[ {_text_line(r)} ]]>",
            f"<script>\n{_text_line(r)}\n</script>",
            f"<pre>\n{_comment(r)}\n</pre>",
            f"</div>\n{_comment(r)}",
            f"<p>{_text_line(r)}\n\n{_comment(r)}",
        )
    )


def _frontmatter(r: random.Random) -> str:
    return r.choice(
        (
            "",
            "",
            "",
            "",
            "---\npaths: src/**\n---\n",
            "---\n---\n",
            "---\npaths:\n  - a/*.ts\n  - b/**\n---\n",
            "---\npaths: {a,b}/*.{ts,tsx}\n---\n",
            "---\ndescription: [unclosed\n---\n",
            "--- \nkey: value\n---   \n",
            "---\nno end\n",
            "\n---\nnot: at start\n---\n",
            "---\npaths: '**'\n---",
        )
    )


def _line_endings(r: random.Random, doc: str) -> str:
    choice = r.random()
    if choice < 0.65:
        return doc
    if choice < 0.85:
        return doc.replace("\n", "\r\n")
    if choice < 0.93:
        return doc.replace("\n", "\r")
    return "".join(line + r.choice(("\n", "\r\n", "\r")) for line in doc.split("\n"))[:-1]


def document(r: random.Random) -> str:
    blocks = [_block(r) for _ in range(r.randint(1, 6))]
    parts = [_frontmatter(r)]
    for block in blocks:
        parts.append(block)
        parts.append(r.choice(("\n", "\n", "\n\n", "\n\n\n", "\n  \n")))
    doc = "".join(parts)
    if r.random() < 0.15:
        doc = doc.rstrip("\n")
    return _line_endings(r, doc)


def documents(seed: int = SEED, count: int = COUNT) -> list[str]:
    r = random.Random(seed)
    docs = list(HAND_WRITTEN)
    seen = set(docs)
    while len(docs) < count:
        doc = document(r)
        if doc not in seen:
            seen.add(doc)
            docs.append(doc)
    return docs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--count", type=int, default=COUNT)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    docs = documents(args.seed, args.count)
    stdin = "".join(json.dumps({"doc": d}) + "\n" for d in docs)
    result = subprocess.run(
        ["node", str(HERE / "marked_reference.cjs")],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        env=os.environ,
    )
    expected = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(expected) == len(docs), "the reference answered a different number of documents"
    with args.out.open("w", encoding="utf-8", newline="\n") as out:
        for doc, exp in zip(docs, expected, strict=True):
            row: dict[str, object] = {"doc": doc}
            if exp["text"] != doc:
                row["text"] = exp["text"]
            row["imports"] = exp["imports"]
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(docs)} documents -> {args.out}")


if __name__ == "__main__":
    main()
