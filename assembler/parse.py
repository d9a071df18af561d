"""One file's text, parsed once: frontmatter, body, text without block comments, @import tokens.

Everything here is a pure function of the text (and the policy's switches), so results are
memoized by the text itself: a file read again with the same content (an agent assembling
every turn in one process, a watch, `explain` after `render`) is not parsed again. The file
is still read every time; the key is its content, never a path or a stat, so a hit cannot be
stale. The memo holds at most `MEMO_CHARS` characters (keys and values) and forgets the
least recently used texts first.

The LRU is a dozen lines over `OrderedDict` rather than `cachetools`: importing cachetools
costs about 5 ms (it imports `random`), a fifth of `ctxasm render`'s start-up budget.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import NamedTuple

from . import content as fm
from .imports import import_tokens
from .markdown import strip_block_comments
from .model import Stats
from .tokens import estimate_tokens, text_stats

MEMO_CHARS = 16 * 1024 * 1024


class Parsed(NamedTuple):
    frontmatter: fm.Frontmatter
    globs: fm.Globs | None  # the frontmatter's `paths:`; None: the file is unconditional
    body: str  # the text without its frontmatter block
    text: str  # the body without closed block comments (what the client loads)
    stripped: str  # `text.strip()`: what a file loaded at start contributes
    stats: Stats  # of `stripped`, counted with the default `estimate_tokens`
    imports: tuple[str, ...]  # @import tokens of the body, as written, in order


class Switches(NamedTuple):
    strip_frontmatter: bool
    strip_comments: bool
    find_imports: bool


# Everything Claude Code does to a file (what `ctxasm lint` checks against).
CLIENT = Switches(strip_frontmatter=True, strip_comments=True, find_imports=True)

_lock = threading.Lock()
_memo: OrderedDict[tuple[str, Switches], Parsed] = OrderedDict()
_held = 0


def parse(raw: str, switches: Switches) -> Parsed:
    """The parsed `raw` (memoized; see the module doc). Safe to call from several threads."""
    key = (raw, switches)
    with _lock:
        hit = _memo.get(key)
        if hit is not None:
            _memo.move_to_end(key)
            return hit
    parsed = _parse(raw, switches)
    with _lock:
        _remember(key, parsed)
    return parsed


def _parse(raw: str, switches: Switches) -> Parsed:
    if switches.strip_frontmatter:
        frontmatter, body = fm.split_frontmatter(raw)
    else:
        frontmatter, body = fm.NO_FRONTMATTER, raw
    text = strip_block_comments(body) if switches.strip_comments else body
    imports = import_tokens(body) if switches.find_imports else ()
    stripped = text.strip()
    stats = text_stats(stripped, estimate_tokens)
    globs = fm.conditional_globs(frontmatter)
    return Parsed(frontmatter, globs, body, text, stripped, stats, imports)


def _size(key: tuple[str, Switches], parsed: Parsed) -> int:
    size = len(key[0]) + len(parsed.frontmatter.text)
    if parsed.body is not key[0]:
        size += len(parsed.body)
    if parsed.text is not parsed.body:
        size += len(parsed.text)
    if parsed.stripped is not parsed.text:
        size += len(parsed.stripped)
    return size


def _remember(key: tuple[str, Switches], parsed: Parsed) -> None:
    global _held
    size = _size(key, parsed)
    if size > MEMO_CHARS or key in _memo:  # too big, or another thread parsed it too
        return
    _memo[key] = parsed
    _held += size
    while _held > MEMO_CHARS:
        old_key, old = _memo.popitem(last=False)
        _held -= _size(old_key, old)


def forget() -> None:
    """Empty the memo (tests, and benchmarks of a first parse)."""
    global _held
    with _lock:
        _memo.clear()
        _held = 0
