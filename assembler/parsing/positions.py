"""Where things are in a text: the line and column of an offset, and the line of a frontmatter
key, from one index of line starts.

Lint reports many findings in one file (a key each, an import each); finding each one's line by
scanning, or by parsing the frontmatter again, made a file of 2,000 keys cost 20 s (issue 22).
Every position reported about a file's text comes from here.
"""

from __future__ import annotations

import bisect
import re

from .frontmatter import Frontmatter

_NEWLINE = re.compile("\n")


class Lines:
    """Line and column of offsets in one text, from one index of line starts (bisect), built
    on the first question: a file with many findings costs O(n log n), not a scan of the text
    per finding."""

    __slots__ = ("_keys", "_starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None
        self._keys: dict[str, int] | None = None

    def at(self, offset: int) -> tuple[int, int]:
        """(line, column), both from 1, of the character at `offset`."""
        if self._starts is None:
            self._starts = [0, *(m.end() for m in _NEWLINE.finditer(self.text))]
        line = bisect.bisect_right(self._starts, offset)
        return line, offset - self._starts[line - 1] + 1

    def of_key(self, key: str, frontmatter: Frontmatter) -> int:
        """The line of the first frontmatter line `key:` (`frontmatter`: this text's block);
        1 when no line starts so."""
        if self._keys is None:
            self._keys = {}
            block = self.text.split("\n", frontmatter.line_count)[: frontmatter.line_count]
            for number, line in enumerate(block, 1):
                name, colon, _ = line.partition(":")
                if colon:
                    self._keys.setdefault(name.rstrip(), number)
        return self._keys.get(key, 1)
