"""For `ctxasm report`'s page: a tree that plants markup in files and names, and a structural
check of the HTML (the demo and corpus trees are `tests.helpers.trees`')."""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

from tests.helpers.trees import Tree, build, git_init

# What the planted files say; a page that ran any of it would show a changed title or a dialog.
PLANTED = (
    "<script>document.title='pwned';window.pwned=1</script>\n"
    "</textarea></pre></style><script>alert(1)</script>\n"
    '<img src=x onerror="window.pwned=2">\n'
    "<!-- a comment --> ]]> &amp; \u202eevil\u202c\n"
)
PLANTED_NAME = "<script>window.pwned=3<\u202e\x1b[31m\n<img src=x onerror=alert(4)>.md"


def hostile(tmp: Path) -> Tree:
    """A repository whose CLAUDE.md, a rule and the rule's name hold markup, bidi controls and
    escape sequences; every agent's file holds them too."""
    repo = git_init(tmp / "repo")
    build(
        repo,
        {
            "CLAUDE.md": f"# Hostile\n\n{PLANTED}\nline 6 has a TODO\n",
            "AGENTS.md": f"# For every agent\n\n{PLANTED}",
            "GEMINI.md": PLANTED,
            f".claude/rules/{PLANTED_NAME}": PLANTED,
        },
    )
    (tmp / "home").mkdir()
    return Tree(repo, tmp / "home", tmp / "managed")


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class Structure(HTMLParser):
    """A page parsed as a browser's tokenizer splits it: its elements, ids and links, and
    every element left open or closed out of order."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter[str] = Counter()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.handlers: list[str] = []  # on* attributes
        self.sources: list[str] = []  # src= attributes
        self.problems: list[str] = []
        self.doctype = ""
        self.text: list[str] = []
        self._open: list[str] = []
        self.feed(html)
        self.close()
        self.problems += [f"<{tag}> never closed" for tag in self._open]

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        for name, value in attrs:
            if name == "id":
                self.ids.append(value or "")
            elif name == "href":
                self.links.append(value or "")
            elif name == "src":
                self.sources.append(value or "")
            elif name.startswith("on"):
                self.handlers.append(name)
        if tag not in VOID:
            self._open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self._open.pop()

    def handle_endtag(self, tag: str) -> None:
        if not self._open or self._open[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self._open[-1] if self._open else ''}>")
            if tag in self._open:
                del self._open[len(self._open) - 1 - self._open[::-1].index(tag) :]
            return
        self._open.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def check(self) -> None:
        """A valid page: a doctype, every element closed in order, unique ids, every link to
        an id of the page, no script, no handler, nothing loaded from anywhere."""
        assert self.doctype.lower() == "doctype html"
        assert self.problems == []
        duplicates = [i for i, n in Counter(self.ids).items() if n > 1]
        assert duplicates == []
        assert [link for link in self.links if link[1:] not in self.ids] == []
        assert self.tags["script"] == 0 and self.tags["img"] == 0 and self.tags["iframe"] == 0
        assert self.handlers == [] and self.sources == []
