"""Token counting: a pluggable counter with a fast, documented default estimate.

The default estimate, per character class, is
  * ASCII: 4 characters per token (the ratio the client itself uses for its rough counts);
  * 2-byte UTF-8 (Latin accents, Greek, Cyrillic, Arabic, Hebrew): 2 characters per token;
  * 3-byte UTF-8 (CJK, kana, hangul): 1 character per token;
  * 4-byte UTF-8 (emoji, rare CJK): 1.5 tokens per character;
rounded up. It is computed from three lengths (characters, UTF-8 bytes, ASCII characters), so
it costs one encode of the text and no Python-level loop. It errs high for CJK text, which is
the safe direction for a budget. Any `Callable[[str], int]` can replace it (e.g. a real
tokenizer): pass `counter=` to `assemble()`.
"""

from __future__ import annotations

from .model import Stats, TokenCounter

__all__ = ["TokenCounter", "estimate_tokens", "estimated", "text_stats"]


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    if text.isascii():
        return -(-len(text) // 4)
    ascii_chars = len(text.encode("ascii", "ignore"))
    extra_bytes = len(text.encode("utf-8", "surrogatepass")) - len(text)
    # 4 ascii chars -> 1 token; every extra UTF-8 byte -> half a token (2-byte char: 0.5,
    # 3-byte char: 1, 4-byte char: 1.5). Work in quarters to round up exactly.
    quarters = ascii_chars + 2 * extra_bytes
    return -(-quarters // 4)


def estimated(counter: TokenCounter) -> bool:
    """Whether `counter` gives this module's estimate (every view says so next to its token
    numbers), not a real tokenizer's count."""
    return counter is estimate_tokens


def text_stats(text: str, counter: TokenCounter) -> Stats:
    """Lines, UTF-8 bytes, characters and tokens of `text`."""
    lines = text.count("\n") + 1 if text else 0
    return Stats(lines, len(text.encode("utf-8", "surrogatepass")), len(text), counter(text))
