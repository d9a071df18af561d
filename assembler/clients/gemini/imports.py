"""Gemini CLI's `@import` processor for GEMINI.md, tree format, reproduced.

From google-gemini/gemini-cli `packages/core/src/utils/memoryImportProcessor.ts`:
  * an import is `@` at the start of the text or after a space, tab or line break, then
    everything up to the next one of those; its first character is `.`, `/` or an ASCII
    letter. An import inside a code span or block (`` `...` ``, matched like the client's
    regular expression `` /(`+)([\\s\\S]*?)\\1/g ``) stays as written;
  * a path that is a URL, or that resolves (lexically) outside the project root (the
    nearest ancestor of the importing file holding `.git`, else the file's own directory)
    becomes `<!-- Import failed: PATH - Path traversal attempt -->` (CTX911);
  * a file already on the chain of imports that led here becomes
    `<!-- File already processed: PATH -->` (CTX914); the starting file is not on the chain,
    so a cycle back to it is noticed one level later, as in the client;
  * a file that cannot be read becomes `<!-- Import failed: PATH - <node error> -->` (CTX913);
  * otherwise the file's text, its own imports processed, goes between
    `<!-- Imported from: PATH -->\\n` and `\\n<!-- End of import from: PATH -->`;
  * files at depth 5 are inlined with their imports left as written (CTX912 for each).
Each read goes through the run's `Disk`, at most `skip_bytes` each, and one run inlines at
most `RUN_TEXT_CHARS` characters and follows at most `RUN_MAX_IMPORTS` imports (a diamond of
imports repeats text, as in the client, so both bounds matter). A run reads each file once,
and not at all once its size says it cannot fit in the characters left: 10,000 imports of one
4 MiB file cost one read, not 40 GB.
"""

from __future__ import annotations

import bisect
import os
import re
import stat
from typing import NamedTuple

from ... import codes
from ...discovery.context import LoadNote
from ...discovery.loader import RUN_MAX_IMPORTS, RUN_TEXT_CHARS, Loader
from ...discovery.locations import within
from ...discovery.reader import ReadStatus
from ...parsing.positions import Lines
from .codes import (
    GEMINI_IMPORT_CYCLE,
    GEMINI_IMPORT_FAILED,
    GEMINI_IMPORT_OUTSIDE,
    GEMINI_IMPORT_TOO_DEEP,
)

MAX_DEPTH = 5
_SPACE = " \t\n\r"
_URL = re.compile(r"^(file|https?)://")
_BACKTICKS = re.compile(r"`+")


class Found(NamedTuple):
    start: int
    end: int
    path: str


def find_imports(content: str) -> list[Found]:
    """The client's `findImports`, character for character."""
    out: list[Found] = []
    i, n = 0, len(content)
    while i < n:
        i = content.find("@", i)
        if i < 0:
            break
        if i > 0 and content[i - 1] not in _SPACE:
            i += 1
            continue
        j = i + 1
        while j < n and content[j] not in _SPACE:
            j += 1
        path = content[i + 1 : j]
        if path and (path[0] in "./" or ("a" <= path[0].lower() <= "z" and path[0].isascii())):
            out.append(Found(i, j, path))
        i = j + 1
    return out


def code_regions(content: str) -> list[tuple[int, int]]:
    """The matches of `` /(`+)([\\s\\S]*?)\\1/g `` in linear time. From a run of `n` backticks
    the regular expression backtracks to the widest `w <= n` that occurs again after the
    first `w` (inside the run itself when `2w <= n`, or in a later run at least `w` long),
    and closes at its next occurrence; no width: no match from anywhere in that run."""
    runs = [(m.start(), m.end() - m.start()) for m in _BACKTICKS.finditer(content)]
    starts = [start for start, _ in runs]
    longest_after = [0] * (len(runs) + 1)  # the longest run from index i on
    for i in range(len(runs) - 1, -1, -1):
        longest_after[i] = max(runs[i][1], longest_after[i + 1])
    regions: list[tuple[int, int]] = []
    pos = 0
    while (start := content.find("`", pos)) >= 0:
        end = start
        while end < len(content) and content[end] == "`":
            end += 1
        width = end - start
        later = longest_after[bisect.bisect_left(starts, end)]
        close_width = max(width // 2, min(width, later))
        if close_width == 0:
            pos = end
            continue
        close = content.find("`" * close_width, start + close_width)
        regions.append((start, close + close_width))
        pos = close + close_width
    return regions


class Importer:
    """One run's import processing: budgets shared by every file of the run."""

    def __init__(self, loader: Loader, notes: list[LoadNote]) -> None:
        self.loader = loader
        self.notes = notes
        self._imports_left = RUN_MAX_IMPORTS
        self._text_left = RUN_TEXT_CHARS
        self._limit = loader.policy.limits.skip_bytes
        # Each file this run read, by (device, inode, size, mtime): `_first_read`'s answer.
        self._files: dict[tuple[int, int, int, int], str | ReadStatus | None] = {}

    def process(self, content: str, path: str, root: str) -> str:
        """`content` of the file at `path` with its imports inlined (depth 0 of the chain)."""
        return self._process(content, os.path.dirname(path), root, frozenset(), 0, path)

    def _process(
        self, content: str, base: str, root: str, chain: frozenset[str], depth: int, origin: str
    ) -> str:
        found = find_imports(content)
        if not found:
            return content
        at = Lines(content)
        if depth >= MAX_DEPTH:
            for item in found:
                if self._spend(origin):
                    self._note(GEMINI_IMPORT_TOO_DEEP, origin, at, item,
                               f"@{item.path} is past Gemini CLI's {MAX_DEPTH} import levels: left in the text unread")  # fmt: skip
            return content
        regions = code_regions(content)
        region_starts = [start for start, _ in regions]
        out: list[str] = []
        last = 0
        for item in found:
            out.append(content[last : item.start])
            last = item.end
            inside = bisect.bisect_right(region_starts, item.start) - 1
            if (inside >= 0 and item.start < regions[inside][1]) or not self._spend(origin):
                out.append(f"@{item.path}")
                continue
            out.append(self._one(at, item, base, root, chain, depth, origin))
        out.append(content[last:])
        return "".join(out)

    def _spend(self, origin: str) -> bool:
        """Whether one more import may be followed in this run (said once when none may)."""
        self._imports_left -= 1
        if self._imports_left == -1:
            self.loader.note(
                codes.LOAD_LIMIT, origin,
                f"this run has followed {RUN_MAX_IMPORTS:,} imports: the rest are left as written; import fewer files",
            )  # fmt: skip
        return self._imports_left >= 0

    def _one(
        self,
        at: Lines,
        item: Found,
        base: str,
        root: str,
        chain: frozenset[str],
        depth: int,
        origin: str,
    ) -> str:
        target = os.path.normpath(os.path.join(base, item.path))
        if _URL.match(item.path) or not within(target, root):
            self._note(GEMINI_IMPORT_OUTSIDE, origin, at, item,
                       f"@{item.path} leaves the project ({self.loader.display(root)}); Gemini CLI refuses it")  # fmt: skip
            return f"<!-- Import failed: {item.path} - Path traversal attempt -->"
        if target in chain:
            self._note(GEMINI_IMPORT_CYCLE, origin, at, item,
                       f"@{item.path} comes back to a file this chain of imports inlined already")  # fmt: skip
            return f"<!-- File already processed: {item.path} -->"
        text, error = self._read(target)
        if text is None:
            self._note(
                GEMINI_IMPORT_FAILED,
                origin,
                at,
                item,
                f"@{item.path} cannot be read ({error})",
            )
            return f"<!-- Import failed: {item.path} - {error} -->"
        self.loader.note_if_outside(target, "import")
        inner = self._process(
            text, os.path.dirname(target), root, chain | {target}, depth + 1, target
        )
        return f"<!-- Imported from: {item.path} -->\n{inner}\n<!-- End of import from: {item.path} -->"

    def _read(self, path: str) -> tuple[str | None, str]:
        """The file's text, or None and the error Node's `fs` would give. A file is read once
        per run (known by its `stat`: a link to it, or a diamond of imports, is the same file),
        and one that cannot fit in what is left of the run's characters is not read again."""
        disk = self.loader.disk
        try:
            st = disk.stat(path)
        except (OSError, ValueError):  # the reader says why (missing, a broken link, a loop)
            return None, self._error(disk.read(path, self._limit).status, path)
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if key not in self._files:
            self._files[key] = self._first_read(path, st)
        found = self._files[key]
        if isinstance(found, ReadStatus):
            return None, self._error(found, path)
        if found is None or len(found) > self._text_left:
            return None, f"ctxasm inlines at most {RUN_TEXT_CHARS:,} characters in one run"
        self._text_left -= len(found)
        return found, ""

    def _first_read(self, path: str, st: os.stat_result) -> str | ReadStatus | None:
        """The text of the file at `path` (`st`: its `stat`), why the reader refused it, or
        None when it cannot fit in what is left of the budget. The budget only shrinks in a
        run, so such a text is never kept, and a file whose size alone says so (a character
        is at most 4 bytes of UTF-8) is not read at all."""
        regular = stat.S_ISREG(st.st_mode) and st.st_size <= self._limit
        if regular and st.st_size // 4 > self._text_left:
            return None
        result = self.loader.disk.read(path, self._limit, st)
        if result.status not in (ReadStatus.OK, ReadStatus.BINARY):
            return result.status
        text = result.text if result.ok else result.data.decode("utf-8", "replace")
        return None if len(text) > self._text_left else text

    def _error(self, status: ReadStatus, path: str) -> str:
        """The error Node's `fs` would give for a file the reader refused."""
        if status in (ReadStatus.MISSING, ReadStatus.BROKEN_LINK):
            return f"ENOENT: no such file or directory, access '{path}'"
        if status is ReadStatus.DIRECTORY:
            return "EISDIR: illegal operation on a directory, read"
        if status is ReadStatus.LOOP:
            return f"ELOOP: too many symbolic links encountered, access '{path}'"
        if status is ReadStatus.TOO_LARGE:
            return f"over the {self._limit:,} bytes ctxasm reads"
        if status is ReadStatus.SPECIAL:
            return "not a regular file: ctxasm never opens it (Gemini CLI would wait on it)"
        return f"EACCES: permission denied, open '{path}'"

    def _note(self, code: codes.Code, origin: str, at: Lines, item: Found, message: str) -> None:
        """A load diagnostic on the importing file, and a positioned note for lint (reported
        for a linted file when the import is written in it)."""
        self.loader.note(code, origin, message)
        line, col = at.at(item.start)
        self.notes.append(LoadNote(origin, line, col, code.code, message))
