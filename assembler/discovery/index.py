"""Indexes the agent sees one line per entry: each entry's name and description, bounded.

A skills index and a list of agent-requested rules give every entry at once, by a
name and a description that come from the repository's frontmatter: a `description:` may be
megabytes, and a run keeps every entry until the index is built (100 skills of 3 MB exhausted
memory, issue 22). So each entry is made one line (runs of whitespace one space, as the index
shows it) and cut as it is found, reading no further into the text than the limit, and one
index holds at most `INDEX_CHARS` of them; what is cut is said (CTX706).

The limits never cut what an index shows in a normal repository: the Agent Skills format
(agentskills.io, `docs/specification.mdx`) allows a name of 64 characters and a description
of 1,024, and an index lists over 900 such skills before the total stops it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

NAME_CHARS = 256  # one entry's name
DESCRIPTION_CHARS = 4096  # one entry's description
INDEX_CHARS = 1024 * 1024  # all the names and descriptions of one index
_WORD = re.compile(r"\S+")  # `\s` is `str.isspace`: the words `str.split()` gives


def one_line(text: str, limit: int) -> tuple[str, bool]:
    """`" ".join(text.split())` cut to `limit` characters (the last three `...`), and whether
    it was cut. Linear in what is kept: the words past the limit are never looked at."""
    words: list[str] = []
    size = -1
    for match in _WORD.finditer(text):
        start = match.start()
        words.append(text[start : min(match.end(), start + limit + 1)])
        size += 1 + len(words[-1])
        if size > limit:
            return " ".join(words)[: limit - 3] + "...", True
    return " ".join(words), False


class Entry(NamedTuple):
    """One line of an index: the name and description as listed, and what was cut of them
    (a sentence for CTX706; "" when nothing was)."""

    name: str
    description: str
    cut: str


def entry(name: str, description: str) -> Entry:
    """The entry of `name` and `description` as an index lists them: each one line, cut."""
    name, name_cut = one_line(name, NAME_CHARS)
    description, description_cut = one_line(description, DESCRIPTION_CHARS)
    cut = [
        f"{what} is over {limit:,} characters: listed cut to {limit:,}"
        for what, limit, was_cut in (
            ("name", NAME_CHARS, name_cut),
            ("description", DESCRIPTION_CHARS, description_cut),
        )
        if was_cut
    ]
    return Entry(name, description, "; ".join(cut))


class Index:
    """The room left in one index as a run lists its entries: none once `INDEX_CHARS` of
    names and descriptions are listed (the rest counted in `left_out`, the first one's path
    in `first_out`)."""

    __slots__ = ("_left", "first_out", "left_out")

    def __init__(self) -> None:
        self._left = INDEX_CHARS
        self.left_out = 0
        self.first_out = ""

    def admit(self, path: str, item: Entry) -> bool:
        """Whether `item`, of the file at `path`, is listed (it fits in what is left)."""
        size = len(item.name) + len(item.description)
        if size > self._left:
            self.left_out += 1
            self.first_out = self.first_out or path
            return False
        self._left -= size
        return True

    def full(self, what: str) -> str:
        """What to say on `first_out` when entries were left out (`what`: the entries, plural)."""
        return (
            f"this and {self.left_out - 1:,} more: {self.left_out:,} {what} are not listed; "
            f"an index lists at most {INDEX_CHARS:,} characters of names and descriptions"
        )
