"""Compiling globs, linear in time: the one place a glob becomes a matcher.

Two dialects are matched: gitignore globs (`paths:` of rules and skills, lint's dead-glob
check; the npm `ignore` package's semantics, which Claude Code uses: `ignore/` ports them)
and `claudeMdExcludes` (picomatch `{dot: true}` over absolute paths, as wcmatch's
`GLOBSTAR | BRACE | DOTGLOB | EXTGLOB` reads them). The workspace globs of Cursor (`globs:`)
and Copilot (`applyTo:`), relative to a directory with `*` inside one segment (`src/*.py`
is not recursive, `*.py` only at the top), are the second
dialect anchored at their directory (`workspace`). All compile to RE2 (google-re2), whose
matching is linear in the path: a backtracking engine
takes exponential time on globs such as `*a*a*...*a*z` or `+(a|aa)z`, so a repository could
hang `render --touch` and lint with one line.

Compiling still costs time in the pattern's size, so a pattern is refused before it is
translated when it is longer than `MAX_GLOB_CHARS`, and one list of patterns (one rule's
`paths:`, all `claudeMdExcludes`) compiles at most `GLOB_CHARS_BUDGET` characters; what is
refused matches nothing and is reported (CTX307). RE2 and bracex are imported only
when a glob is compiled, so `ctxasm lint` on a tree without globs never loads them.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from ..display import as_client_reads

MAX_GLOB_CHARS = 1024
GLOB_CHARS_BUDGET = 64 * 1024
# claudeMdExcludes: brace expansion shares one budget over all patterns (as wcmatch's limit did).
EXCLUDE_PATTERN_BUDGET = 1000

Matcher = Callable[[str], bool]


class Admitted(NamedTuple):
    """Patterns kept for compiling, and those refused (pattern, why) before translation."""

    kept: tuple[str, ...]
    refused: tuple[tuple[str, str], ...] = ()


def admit(patterns: Iterable[str], budget: int = GLOB_CHARS_BUDGET) -> Admitted:
    """Split `patterns` into those that may be compiled and those too complex to."""
    kept: list[str] = []
    refused: list[tuple[str, str]] = []
    for pattern in patterns:
        if len(pattern) > MAX_GLOB_CHARS:
            refused.append((pattern, f"longer than {MAX_GLOB_CHARS:,} characters"))
        elif len(pattern) > budget:
            refused.append(
                (pattern, f"past the {GLOB_CHARS_BUDGET // 1024} KiB of globs one list may hold")
            )
        else:
            budget -= len(pattern)
            kept.append(pattern)
    return Admitted(tuple(kept), tuple(refused))


def _re2_options() -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False  # a refused pattern is our diagnostic, not a line on stderr
    return options


def _compile(regex: str, *, search: bool = False) -> Matcher | None:
    """`regex` compiled by RE2, matched from the start (`search`: anywhere, as `ignore`
    applies its regexes), or None when RE2 refuses it.

    RE2 takes UTF-8: a lone surrogate (a name's byte that is not UTF-8, as Python reads it)
    is matched as U+FFFD, which is what the client (Node) reads for it."""
    import re2

    try:
        compiled = re2.compile(as_client_reads(regex), _re2_options())
    except re2.error:
        return None
    find = compiled.search if search else compiled.match
    return lambda path: find(as_client_reads(path)) is not None


# --- gitignore (the npm `ignore` package's semantics) ---------------------------------------


class Compiled(NamedTuple):
    """A compiled glob: `match` is None when it matches nothing, and `problem` says why."""

    match: Matcher | None
    problem: str = ""  # "": fine; else "invalid" or "too complex"


INVALID = "invalid"
TOO_COMPLEX = "too complex"


class _Rule(NamedTuple):
    """One pattern of a list as `ignore` tests it: `core` is its regex without the end
    condition; `slash`: it ends in `/` (so must end right after one); `tail`: its match
    may end right after a `/` inside the path (`**/`, `a/**`), which one search of the
    whole path cannot see."""

    negative: bool
    core: str
    slash: bool
    tail: bool


_LOOKAHEAD = r"(?=$|\/$)"
# What may end a JavaScript regex right after a `/`: an optional or repeated group (`**/`),
# `.*`/`.+` (`a/**`), `*` just after a `/` or an anchor group, a class escape such as `\W`.
_AFTER_SLASH = re.compile(r"(?:\)[*+?]|\.[*+]|[)/]\[\^/\]\*|\\[dDsSwW][^\]]*\])\Z")


@functools.lru_cache(maxsize=4096)
def _rule(pattern: str) -> _Rule | str:
    """`pattern` as a rule, or why it matches nothing (INVALID, TOO_COMPLEX)."""
    if len(pattern) > MAX_GLOB_CHARS:
        return TOO_COMPLEX
    from .ignore import rules

    kept = rules.rule(pattern)
    regex = rules.to_re2(kept.source) if kept is not None else None
    if kept is None or regex is None:  # blank, a comment, or a regex JavaScript refuses
        return INVALID
    if regex.endswith(r"\x{2f}\z"):  # a directory pattern: `core` ends with its `/`
        return _Rule(kept.negative, regex.removesuffix(r"\z"), True, False)
    source = kept.source.removesuffix(_LOOKAHEAD)
    tail = source == kept.source or _AFTER_SLASH.search(source) is not None
    return _Rule(kept.negative, regex.removesuffix(r"(?:\z|\x{2f}\z)"), False, tail)


def _at_end(rule: _Rule) -> str:
    """The regex of `rule` on one of the strings `ignore` tests (`a/`, `a/b/`, `a/b/c`)."""
    return rule.core + (r"\z" if rule.slash else r"(?:\z|/\z)")


def _anywhere(rule: _Rule) -> str:
    """The regex of `rule` matching a path when it matches the path or one of its parent
    directories, for a rule without `tail`: a match ending at the end, before a `/` or (a
    directory pattern) after one."""
    return rule.core if rule.slash else f"{rule.core}(?:\\z|/)"


def _prefixes(path: str) -> Iterator[str]:
    """What `ignore` tests for `path`, in its order: `a/`, `a/b/`, then `a/b/c`."""
    cut = path.find("/")
    while cut >= 0:
        yield path[: cut + 1]
        cut = path.find("/", cut + 1)
    yield path


def _matcher(rules: Sequence[_Rule]) -> Matcher | None:
    """`ignore().add(patterns).ignores(path)` for the rules of `patterns`, or None when they
    can match nothing. Without `!`, one search of the path for the rules without `tail`,
    and the rest parent by parent; with `!`, `ignore`'s own order for every rule."""
    if all(r.negative for r in rules):
        return None
    if not any(r.negative for r in rules):
        one = [_anywhere(r) for r in rules if not r.tail]
        fast = _compile("|".join(f"(?:{x})" for x in one), search=True) if one else None
        slow = [_at_end(r) for r in rules if r.tail]
        each = _compile("|".join(f"(?:{x})" for x in slow), search=True) if slow else None
        if (one and fast is None) or (slow and each is None):
            return None
        return lambda path: bool(
            (fast is not None and fast(path))
            or (each is not None and any(map(each, _prefixes(path))))
        )
    steps = [(r.negative, _compile(_at_end(r), search=True)) for r in rules]

    def ignored(path: str) -> bool:
        # The patterns read top to bottom, the last match deciding, on each parent
        # directory then the path; an ignored parent ignores what is below it. Lists with
        # `!` are rare: this costs the path's depth in searches per pattern.
        for prefix in _prefixes(path):
            state = False
            for negative, match in steps:
                if match is not None and state == negative and match(prefix):
                    state = not negative
            if state:
                return True
        return False

    return ignored


@functools.lru_cache(maxsize=4096)
def gitignore(pattern: str) -> Compiled:
    """One `paths:` pattern as the npm `ignore` package (7.0.5, Claude Code's) matches a
    relative path on its own: case-insensitively, the path or any of its parent
    directories. Compiled by RE2; memoized by the pattern (pure; bounded). A lone negation
    matches nothing."""
    rule = _rule(pattern)
    if isinstance(rule, str):
        return Compiled(None, rule)
    if rule.negative:
        return Compiled(None)
    match = _matcher([rule])
    return Compiled(match, "" if match is not None else TOO_COMPLEX)


@functools.lru_cache(maxsize=1024)
def _list(patterns: tuple[str, ...]) -> Matcher | None:
    return _matcher([r for r in map(_rule, patterns) if not isinstance(r, str)])


def first_match(patterns: Sequence[str], path: str) -> str | None:
    """The pattern that makes `ignore().add(patterns)` ignore the relative, `/`-separated
    `path` (the first that matches it on its own), or None when the list does not."""
    matcher = _list(tuple(patterns))
    if matcher is None or not matcher(path):
        return None
    for pattern in patterns:
        match = gitignore(pattern).match
        if match is not None and match(path):
            return pattern
    return next(p for p in patterns if not p.startswith("!"))  # pragma: no cover


# --- claudeMdExcludes (picomatch / wcmatch semantics) -------------------------------------


class Excludes(NamedTuple):
    """`claudeMdExcludes` compiled: `match` (None: no usable pattern) and, for each refused
    pattern, its index in the list and why."""

    match: Matcher | None
    refused: tuple[tuple[int, str], ...] = ()


def excludes(patterns: Sequence[str]) -> Excludes:
    """Compile `claudeMdExcludes` patterns into one linear matcher of normalised absolute
    paths: a path is excluded when any pattern matches it, each tested on its own as
    picomatch does, so `!x` matches every path `x` does not. Brace expansion shares one
    budget of `EXCLUDE_PATTERN_BUDGET` patterns, and the expanded patterns
    `GLOB_CHARS_BUDGET` characters."""
    import bracex

    refused: list[tuple[int, str]] = []
    regexes: list[str] = []
    negated: list[str] = []  # one regex per `!` pattern (its expansion joined)
    budget, chars = EXCLUDE_PATTERN_BUDGET, GLOB_CHARS_BUDGET
    for index, pattern in enumerate(patterns):
        if len(pattern) > MAX_GLOB_CHARS:
            refused.append((index, f"longer than {MAX_GLOB_CHARS:,} characters"))
            continue
        negate, body = _negation(pattern)
        try:
            alternatives = bracex.expand(body, keep_escapes=True, limit=max(budget, 1))
        except bracex.ExpansionLimitException:
            alternatives = []
        if not 0 < len(alternatives) <= budget:
            refused.append(
                (index, f"brace expansion past the {EXCLUDE_PATTERN_BUDGET:,} patterns all share")
            )
            continue
        admitted = admit(alternatives, chars)
        if admitted.refused:
            refused.append((index, admitted.refused[0][1]))
            continue
        translated = [exclude_regex(a) for a in alternatives]
        if None in translated:
            refused.append((index, "uses !(...), which ctxasm cannot match in linear time"))
            continue
        budget -= len(alternatives)
        chars -= sum(map(len, alternatives))
        kept = [r for r in translated if r is not None]
        if negate:
            negated.append(_union(kept))
        else:
            regexes += kept
    if not regexes and not negated:
        return Excludes(None, tuple(refused))
    match = _compile(_union(regexes)) if regexes else None
    others = [_compile(r) for r in negated]
    if (regexes and match is None) or None in others:  # within the limits RE2 compiles them
        return Excludes(None, (*refused, *((i, "refused by RE2") for i in range(len(patterns)))))
    unless = [m for m in others if m is not None]

    def excluded(path: str) -> bool:
        normal = posixpath.normpath(path)
        return (match is not None and match(normal)) or not all(m(normal) for m in unless)

    return Excludes(excluded, tuple(refused))


def _union(regexes: Sequence[str]) -> str:
    return "(?s:" + "|".join(f"(?:{r})" for r in regexes) + r")\z"


def _negation(pattern: str) -> tuple[bool, str]:
    """(whether picomatch negates `pattern`, the glob that is left): leading `!`s, not one
    opening a `!(...)` extglob, an odd number of them negating."""
    count = 0
    while pattern.startswith("!", count) and not pattern.startswith("(", count + 1):
        count += 1
    return count % 2 == 1, pattern[count:]


# --- workspace globs (Cursor `globs:`, Copilot `applyTo:`) --------------------------------


def workspace(patterns: Sequence[str], base_dir: str) -> Excludes:
    """Globs relative to `base_dir`, as VS Code-family tools read them: `*` and `?` inside one
    segment, `**` any number of segments, braces, dotfiles matched. Each pattern is compiled
    as an absolute `claudeMdExcludes` pattern rooted at `/`, so one translation serves every
    dialect, and the matcher takes an absolute path, matched as its path below `base_dir`
    (nothing outside it matches). A leading `./` or `/` is the directory itself. `refused`
    indexes `patterns`."""
    anchored, index = [], []
    for i, pattern in enumerate(patterns):
        relative = pattern.removeprefix("./").lstrip("/")
        if relative:  # an empty glob matches nothing
            anchored.append("/" + relative)
            index.append(i)
    compiled = excludes(anchored)
    refused = tuple((index[i], why) for i, why in compiled.refused)
    match = compiled.match
    if match is None:
        return Excludes(None, refused)
    base = posixpath.normpath(base_dir)
    inside = base.rstrip("/") + "/"

    def below(path: str) -> bool:
        path = posixpath.normpath(path)
        return path.startswith(inside) and match("/" + path[len(inside) :])

    return Excludes(below, refused)


class _Unsupported(Exception):
    """A construct RE2 cannot express (the `!(...)` complement) or an odd class."""


def exclude_regex(pattern: str) -> str | None:
    """An RE2 regex (without anchors) for one brace-free `claudeMdExcludes` pattern matched
    against a normalised absolute path (no `.`, `..` or empty segments, no trailing `/`),
    or None when it uses what RE2 cannot express.

    wcmatch's translation guards `*` and `**` against `.` and `..` segments and empty
    segments with look-arounds RE2 lacks; a normalised path has neither, so plain classes
    give the same answers (`tests/parsing/test_globs.py` compares the two)."""
    absolute = pattern.startswith("/")
    segments: list[str] = []
    for segment in pattern.split("/"):
        if segment and not (segment == "**" and segments and segments[-1] == "**"):
            segments.append(segment)
    if pattern.endswith("/") or (not absolute and _guarded(segments[0] if segments else "")):
        # A directory pattern never matches a file; a relative pattern's leading `*` never
        # matches the empty segment before the root (wcmatch guards it with `(?=[^/])`).
        return _NEVER
    out: list[str] = ["/" if absolute else ""]
    last = len(segments) - 1
    try:
        for index, segment in enumerate(segments):
            if segment != "**":
                out.append(_sequence(segment, 0, False)[0] + ("/" if index != last else ""))
            elif index == last:  # `a/**` matches all below `a` (not `a`), `/**` everything
                out.append(".*")
            else:
                if index or absolute:
                    out.append("(?:[^/]+/)*")
                else:  # a leading `**/`: the segments before the root's, or none
                    out.append("(?:.*/)" if _guarded(segments[1]) else "(?:.*/)?")
    except _Unsupported:
        return None
    return "".join(out)


def _guarded(segment: str) -> bool:
    """Whether wcmatch requires `segment` to be non-empty (it starts with a plain `*`)."""
    return segment != "**" and segment.startswith("*") and not segment.startswith("*(")


_NEVER = r"[^\x00-\x{10ffff}]"  # a class of no character: matches no path
_EXTGLOB = {"@": "", "*": "*", "+": "+", "?": "?"}


def _sequence(text: str, i: int, nested: bool) -> tuple[str, int]:
    """Translate `text[i:]` up to the end of the segment (or, `nested`, up to the `|` or `)`
    that ends an extglob alternative)."""
    out: list[str] = []
    while i < len(text):
        ch = text[i]
        if nested and ch in "|)":
            break
        if ch in "@*+?!" and text.startswith("(", i + 1):
            if ch == "!":
                raise _Unsupported  # complement: not an operator RE2 has
            alternatives: list[str] = []
            i += 2
            while True:
                part, i = _sequence(text, i, True)
                if i >= len(text):
                    raise _Unsupported  # unclosed: wcmatch reads it literally
                alternatives.append(part)
                i += 1
                if text[i - 1] == ")":
                    break
            out.append(f"(?:{'|'.join(alternatives)}){_EXTGLOB[ch]}")
            continue
        if ch == "[":
            cls, i = _class(text, i)
            out.append(cls)
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        else:
            if ch == "\\" and i + 1 < len(text):
                i += 1
            out.append(_literal(text[i]))
        i += 1
    return "".join(out), i


def _literal(ch: str) -> str:
    return f"\\x{{{ord(ch):x}}}"


_POSIX = (
    "alnum",
    "alpha",
    "blank",
    "cntrl",
    "digit",
    "lower",
    "space",
    "upper",
    "word",
    "xdigit",
)  # fmt: skip; ascii, graph, print and punct hold `/`: not offered


def _class(text: str, start: int) -> tuple[str, int]:
    """`[...]` at `text[start]`: (an RE2 class that never matches `/`, the index after it);
    an unclosed `[` is a literal."""
    i = start + 1
    negate = i < len(text) and text[i] in "!^"
    i += negate
    items: list[str] = []
    while i < len(text) and (text[i] != "]" or not items):
        ch = text[i]
        if ch == "/":
            raise _Unsupported
        if text.startswith("[:", i):
            close = text.find(":]", i + 2)
            name = text[i + 2 : close] if close > 0 else ""
            if name not in _POSIX:
                raise _Unsupported
            items.append(f"[:{name}:]")
            i = close + 2
            continue
        if ch == "\\" and i + 1 < len(text):
            i += 1
            ch = text[i]
        if i + 2 < len(text) and text[i + 1] == "-" and text[i + 2] != "]":
            high = text[i + 2]
            if ord(high) < ord(ch) or high == "\\":
                raise _Unsupported
            items.append(_range(ch, high))
            i += 3
            continue
        items.append(_literal(ch))
        i += 1
    if i >= len(text):
        return r"\[", start + 1
    body = "".join(items)
    return (f"[^/{body}]" if negate else f"[{body}]"), i + 1


def _range(low: str, high: str) -> str:
    """A class range without `/` (a glob class never matches a separator)."""
    lo, hi, slash = ord(low), ord(high), ord("/")
    parts = []
    if lo < slash:
        parts.append((lo, min(hi, slash - 1)))
    if hi > slash:
        parts.append((max(lo, slash + 1), hi))
    return "".join(f"\\x{{{a:x}}}-\\x{{{b:x}}}" for a, b in parts)
