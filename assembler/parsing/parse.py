"""One file's text, parsed once: frontmatter, body, text without block comments, @import tokens.

Everything here is a pure function of the text (and the policy's switches), so results are
memoized by the text itself: a file read again with the same content (an agent assembling
every turn in one process, a watch, `explain` after `render`, lint checking a file it then
assembles) is not parsed again. The file is still read every time; the key is its content,
never a path or a stat, so a hit cannot be stale.

The memo (thread-safe, least recently used first out) holds texts of at most
`MEMO_TEXT_CHARS` characters, at most `MEMO_TOTAL_CHARS` characters in all and at most
`MEMO_ENTRIES` of them; a longer text is parsed every time. So however many files a process
sees, it holds at most some 50 MiB (16 Mi characters and the parts cut from them), and
typically a few hundred KiB; yet a repository of a few thousand small instruction files (lint
of a monorepo) fits whole. It is the one piece of module-level state besides the client
registry (STYLE.md: a content-keyed, bounded memo of pure parsing).
"""

from __future__ import annotations

import enum
import functools
import threading
import tomllib
from collections import OrderedDict
from typing import Any, NamedTuple

from ..model import Stats
from ..tokens import estimate_tokens, text_stats
from . import frontmatter as fm
from .imports import import_tokens
from .markdown import strip_block_comments

MEMO_TEXT_CHARS = 32 * 1024
MEMO_TOTAL_CHARS = 16 * 1024 * 1024
MEMO_ENTRIES = 8192


class Parsed(NamedTuple):
    frontmatter: fm.Frontmatter
    globs: fm.Globs | None  # the frontmatter's `paths:`; None: the file is unconditional
    body: str  # the text without its frontmatter block
    text: str  # the body without closed block comments (what the client loads)
    stripped: str  # `text.strip()`: what a file loaded at start contributes
    stats: Stats  # of `stripped`, counted with the default `estimate_tokens`
    imports: tuple[str, ...]  # @import tokens of the body, as written, in order


class Bom(enum.Enum):
    """What a client does with a byte-order mark at the start of a file."""

    FIRST = "removed first"  # before anything else (the default)
    KEPT = "kept in place"  # through frontmatter and comments, trimmed with the text at the end
    # Skipped to find the frontmatter (a file without one keeps it until the end).
    FRONTMATTER = "skipped for the frontmatter"


class Dialect(NamedTuple):
    """How a client processes a file's text where its releases differ (the defaults are what
    most clients do; Claude Code hands its own for the version a run models)."""

    bom: Bom = Bom.FIRST
    # Comment stripping: line endings made LF only when a comment block goes (else whenever
    # the text is lexed), and top-level link reference definitions kept (else dropped).
    lf_only_when_stripped: bool = False
    keep_definitions: bool = True
    # The frontmatter YAML parsed, in characters (0: all of it, as Claude Code parses whatever
    # a file it reads holds): a client that documents no limit gets ctxasm's own.
    frontmatter_chars: int = 0


class Switches(NamedTuple):
    """What a client does to a file's text before it loads it (its policy's `[content]` and
    `[imports]`; a client's own checks name its own), and its `Dialect`."""

    strip_frontmatter: bool
    strip_comments: bool
    find_imports: bool
    dialect: Dialect = Dialect()


def parse(raw: str, switches: Switches) -> Parsed:
    """The parsed `raw` (memoized; see the module doc). Safe to call from several threads."""
    if len(raw) > MEMO_TEXT_CHARS:
        return _parse(raw, switches)
    return _MEMO.get(raw, switches)


def _parse(raw: str, switches: Switches) -> Parsed:
    dialect = switches.dialect
    bom = dialect.bom
    if bom is Bom.FIRST:
        raw = raw.removeprefix(BOM)
    if not switches.strip_frontmatter:
        frontmatter, body = fm.NO_FRONTMATTER, raw
    elif bom is Bom.FRONTMATTER and raw.startswith(BOM):
        frontmatter, body = fm.split_frontmatter(raw[1:], dialect.frontmatter_chars)
        if not frontmatter.present:  # no block after the mark: the text keeps it
            body = raw
    else:
        frontmatter, body = fm.split_frontmatter(raw, dialect.frontmatter_chars)
    if switches.strip_comments:
        text = strip_block_comments(
            body,
            lf_only_when_stripped=dialect.lf_only_when_stripped,
            keep_definitions=dialect.keep_definitions,
        )
    else:
        text = body
    imports = import_tokens(body) if switches.find_imports else ()
    stripped = text.strip() if bom is Bom.FIRST else _trimmed(text)
    stats = text_stats(stripped, estimate_tokens)
    globs = fm.conditional_globs(frontmatter)
    return Parsed(frontmatter, globs, body, text, stripped, stats, imports)


BOM = "\ufeff"


def _trimmed(text: str) -> str:
    """`text.strip()`, a byte-order mark at either end trimmed too (JavaScript's `trim`,
    which a client that keeps the mark applies at the end)."""
    stripped = text.strip()
    while stripped[:1] == BOM or stripped[-1:] == BOM:
        stripped = stripped.strip(BOM).strip()
    return stripped


class MemoInfo(NamedTuple):
    hits: int
    misses: int
    currsize: int  # texts held
    chars: int  # their characters


class _Memo:
    """Parses keyed by the text itself (a hit is the parse of exactly these characters),
    least recently used out first, within `MEMO_TOTAL_CHARS` and `MEMO_ENTRIES`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: OrderedDict[tuple[str, Switches], Parsed] = OrderedDict()
        self.hits = self.misses = self.chars = 0

    def get(self, raw: str, switches: Switches) -> Parsed:
        key = (raw, switches)
        with self._lock:
            found = self._held.get(key)
            if found is not None:
                self._held.move_to_end(key)
                self.hits += 1
                return found
            self.misses += 1
        parsed = _parse(raw, switches)  # outside the lock: threads parse in parallel
        with self._lock:
            if key not in self._held:
                self._held[key] = parsed
                self.chars += len(raw)
                while self.chars > MEMO_TOTAL_CHARS or len(self._held) > MEMO_ENTRIES:
                    (old, _), _ = self._held.popitem(last=False)
                    self.chars -= len(old)
        return parsed

    def info(self) -> MemoInfo:
        with self._lock:
            return MemoInfo(self.hits, self.misses, len(self._held), self.chars)

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self.hits = self.misses = self.chars = 0


_MEMO = _Memo()


def memo_info() -> MemoInfo:
    """Hits, misses, and the number of texts the memo holds now and their characters."""
    return _MEMO.info()


def forget() -> None:
    """Empty the memos (tests, and benchmarks of a first parse)."""
    _MEMO.clear()
    toml_document.cache_clear()


@functools.lru_cache(maxsize=32)
def toml_document(data: bytes) -> dict[str, Any]:
    """A TOML file's bytes parsed (memoized by the bytes: an agent assembling every turn
    parses its policy once). Raises `tomllib.TOMLDecodeError` or `UnicodeDecodeError`."""
    return tomllib.loads(data.decode("utf-8"))
