"""Per-file processing: frontmatter, `paths:` globs, HTML comments.

Every rule here reproduces Claude Code (2.1.x, `utils/frontmatterParser.ts` and
`utils/claudemd.ts`): the frontmatter delimiter regex, the retry that quotes glob-like values
when the YAML is invalid, `paths` splitting and brace expansion, and the removal of a trailing
`/**`. YAML is parsed by PyYAML (libyaml when present) and its values built as the client's
`Bun.YAML.parse` gives them, by functions that cannot fail (`yaml_values`). It is bounded: an
alias stands for the whole node it names, so a few hundred bytes of nested anchors would
otherwise make a billion-node value for whoever walks it (paths splitting, lint), and one
200 KB string aliased 19,000 times would make 3.8 GB of text for whoever splits or joins it.
A document of over `MAX_YAML_NODES` nodes or `MAX_YAML_CHARS` characters of values, each alias
counted as what it stands for, or nested over `MAX_YAML_DEPTH` levels, is dropped and
reported (CTX308), as invalid YAML is (CTX301).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from . import globs as glob_limits

# Claude Code's FRONTMATTER_REGEX is `^---\s*\n([\s\S]*?)---\s*\n?` (not anchored per line: the
# first `---` after the opener closes the block). It is matched in three steps, the same match
# without the lazy group's retry at every character (22 ms for a 3 MB block): the opener, a
# `str.find` of the first `---` after it, and the whitespace after that.
_OPENER = re.compile(r"---\s*\n")
_SPACE = re.compile(r"\s*")
_SIMPLE_KEY_VALUE = re.compile(r"([a-zA-Z_-]+):\s+(.+)$")
_YAML_SPECIAL = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
_BRACE_OR_COMMA = re.compile(r"[{},]")
_BRACES = re.compile(r"([^{]*)\{([^}]+)\}(.*)$", re.DOTALL)

# Claude Code 2.1.217: one rule's `paths` share a budget of 1,000 expanded patterns and 4 MiB;
# a pattern over the budget is used unexpanded (and so matches nothing).
BRACE_PATTERN_BUDGET = 1000
BRACE_BYTES_BUDGET = 4 * 1024 * 1024
_MAX_BRACE_GROUPS = 200

MAX_YAML_NODES = 20_000
MAX_YAML_DEPTH = 64
# The characters of the values (keys included) a document yields, each alias counted as the
# text it stands for: what the largest file the client reads (4 MiB) can hold without aliases.
# A document longer than this is allowed its own length.
MAX_YAML_CHARS = 4 * 1024 * 1024


class Frontmatter(NamedTuple):
    """The parsed frontmatter block of a file (`present` is False when there is none)."""

    present: bool
    data: Mapping[str, Any]
    error: str = ""  # why the YAML is invalid (CTX301)
    line_count: int = 0
    too_complex: str = ""  # which limit dropped it (CTX308)
    cut: str = ""  # what of it was not parsed, for a client without limits (CTX309)


NO_FRONTMATTER = Frontmatter(False, {})


def split_frontmatter(text: str, max_chars: int = 0) -> tuple[Frontmatter, str]:
    """(frontmatter, body). Invalid YAML still strips the block, as the client does.

    `max_chars` (0: none) bounds the YAML parsed, for a client that documents no limit of its
    own: a longer block has each line cut to `max_chars // 8` characters first (`_cut_lines`:
    a huge description keeps its start, which is all an index shows) and is parsed if that
    fits (`Frontmatter.cut` says so, CTX309), else stripped and not parsed (CTX308)."""
    if not text.startswith("---"):
        return NO_FRONTMATTER, text
    opener = _OPENER.match(text)
    if opener is None:
        return NO_FRONTMATTER, text
    close = text.find("---", opener.end())
    if close < 0:
        return NO_FRONTMATTER, text
    end = _SPACE.match(text, close + 3).end()  # type: ignore[union-attr]  # `\s*` matches
    fm_text = text[opener.end() : close]
    lines = text.count("\n", 0, end)
    body = text[end:]
    cut = ""
    if max_chars and len(fm_text) > max_chars:
        line_chars = max_chars // 8
        fm_text, long_lines = _cut_lines(fm_text, line_chars)
        if len(fm_text) > max_chars:
            refused = (
                f"is {close - opener.end():,} characters, over the {max_chars:,} ctxasm parses "
                "for a client that documents no limit"
            )
            return Frontmatter(True, {}, "", lines, refused), body
        cut = (
            f"is {close - opener.end():,} characters, {long_lines:,} line(s) over "
            f"{line_chars:,}: ctxasm parsed the first {line_chars:,} characters of each (the "
            "client documents no limit)"
        )
    try:
        data, error = _load_yaml(fm_text)
    except _TooComplex as refused_yaml:
        return Frontmatter(True, {}, "", lines, str(refused_yaml)), body
    return Frontmatter(True, data, error, lines, cut=cut), body


_KEY_QUOTED = re.compile(r"""\s*[^\s:#'"][^:]*:\s+(["'])""")
_ESCAPE = re.compile(r"\\.")


def _cut_lines(fm_text: str, line_chars: int) -> tuple[str, int]:
    """`fm_text` with each line over `line_chars` cut to that many characters, and how many
    were; a `key: "value` or `key: 'value` cut inside its quotes has them closed again (an
    escape or a doubled quote split by the cut dropped), so the value stays a string."""
    out: list[str] = []
    cut = 0
    for line in fm_text.split("\n"):
        if len(line) <= line_chars:
            out.append(line)
            continue
        cut += 1
        head = line[:line_chars]
        quoted = _KEY_QUOTED.match(head)
        if quoted is not None:
            mark = quoted.group(1)
            inside = head[quoted.end() :]
            if mark == '"':
                inside = inside.rstrip("\\")
            else:
                inside = inside[: len(inside) - (len(inside) - len(inside.rstrip("'"))) % 2]
            closed = "'" in inside.replace("''", "") if mark == "'" else '"' in _unescaped(inside)
            if not closed:
                head = head[: quoted.end()] + inside + mark
        out.append(head)
    return "\n".join(out), cut


def _unescaped(text: str) -> str:
    """`text` without its backslash escapes (what is left shows an unescaped quote)."""
    return _ESCAPE.sub("", text)


class _TooComplex(Exception):
    """The YAML is over one of the limits (the message names it)."""


def _load_yaml(fm_text: str) -> tuple[Mapping[str, Any], str]:
    import yaml

    try:
        parsed = _bounded_load(fm_text)
    except yaml.YAMLError as first:
        try:
            parsed = _bounded_load(quote_problematic_values(fm_text))
        except yaml.YAMLError:
            return {}, _first_line(str(first))
    if isinstance(parsed, dict):
        return {str(k): v for k, v in parsed.items()}, ""
    if parsed is None:
        return {}, ""
    return {}, f"frontmatter is a {type(parsed).__name__}, not a mapping"


def _bounded_load(fm_text: str) -> Any:
    """The value of a document within the limits, as the client's parser gives it."""
    import yaml

    from . import yaml_values

    _check_size(yaml.parse(fm_text, Loader=yaml_values.Loader), len(fm_text))
    node = yaml_values.compose(fm_text)
    return None if node is None else yaml_values.value_of(node)


def _check_size(events: Iterator[Any], length: int) -> None:
    """Raise `_TooComplex` when the document of `events` expands to over `MAX_YAML_NODES`
    nodes or over `MAX_YAML_CHARS` characters of values (or `length`, the document's own,
    if more), each alias counted as what it names; nests over `MAX_YAML_DEPTH` levels; or
    holds an alias to a node that contains it (a value without end).

    One pass over the parser's events, before any node is built, stopping at the limit: the
    expanded size of each anchor is summed as its collection closes."""
    import yaml

    max_chars = max(MAX_YAML_CHARS, length)
    anchored: dict[str, tuple[int, int]] = {}  # anchor -> (nodes, characters) it expands to
    open_anchors: set[str] = set()
    stack: list[list[Any]] = [[0, 0, None]]  # [nodes, characters, anchor] of each collection
    chars = 0  # of the whole document: every value ends up in it once per path to it
    for event in events:
        if isinstance(event, yaml.CollectionStartEvent):
            if len(stack) > MAX_YAML_DEPTH:
                raise _TooComplex(f"is nested over {MAX_YAML_DEPTH} levels")
            stack.append([1, 0, event.anchor])
            if event.anchor is not None:
                open_anchors.add(event.anchor)
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            nodes, size, anchor = stack.pop()
            if anchor is not None:
                anchored[anchor] = (nodes, size)
                open_anchors.discard(anchor)
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor in open_anchors:
                raise _TooComplex("has an alias to a node that contains it")
            nodes, size = anchored.get(event.anchor or "", (1, 0))  # undefined: reported later
            chars += size
        elif isinstance(event, yaml.ScalarEvent):
            nodes, size = 1, len(event.value)
            chars += size
            if event.anchor is not None:
                anchored[event.anchor] = (nodes, size)
        else:
            continue
        stack[-1][0] += nodes
        stack[-1][1] += size
        if stack[-1][0] > MAX_YAML_NODES:
            raise _TooComplex(
                f"is over {MAX_YAML_NODES:,} nodes, each alias counted as the nodes it stands for"
            )
        if chars > max_chars:
            raise _TooComplex(
                f"expands to over {max_chars:,} characters of values, each alias counted as "
                "the text it stands for"
            )


def _first_line(message: str) -> str:
    return " ".join(message.split())


def quote_problematic_values(fm_text: str) -> str:
    """Claude Code's retry: double-quote plain `key: value` lines whose value has YAML syntax."""
    out: list[str] = []
    for line in fm_text.split("\n"):
        match = _SIMPLE_KEY_VALUE.match(line)
        if match:
            key, value = match.groups()
            quoted = (value.startswith('"') and value.endswith('"')) or (
                value.startswith("'") and value.endswith("'")
            )
            if not quoted and _YAML_SPECIAL.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                out.append(f'{key}: "{escaped}"')
                continue
        out.append(line)
    return "\n".join(out)


# --- paths --------------------------------------------------------------------------------


class Globs(NamedTuple):
    """The `paths:` of a rule after splitting and expansion, and what went wrong."""

    patterns: tuple[str, ...]
    over_budget: tuple[str, ...] = ()  # patterns as written past the budget (the first few)
    too_complex: tuple[tuple[str, str], ...] = ()  # (pattern, why): refused, match nothing
    over_count: int = 0  # how many patterns as written were past the budget in all
    written: tuple[str, ...] = ()  # each of `patterns` as the rule spells it (`src/**`, not `src`)


_LISTED_OVER = 20  # over-budget patterns named (the count says how many there were)


def _split_top_level_commas(text: str) -> list[str]:
    """`text` split at the commas outside braces, parts stripped, empty ones left out."""
    parts: list[str] = []
    depth = start = 0
    for match in _BRACE_OR_COMMA.finditer(text):
        ch = match.group()
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            parts.append(text[start : match.start()].strip())
            start = match.end()
    parts.append(text[start:].strip())
    return [part for part in parts if part]


def _raw_patterns(value: object) -> Iterator[str]:
    if isinstance(value, list):
        for item in value:
            yield from _raw_patterns(item)
    elif isinstance(value, str):
        yield from _split_top_level_commas(value)


def split_patterns(value: object) -> list[str]:
    """A glob-list value split as `paths:` is: each string at its commas outside braces,
    parts stripped, empty ones left out; a list's strings in order (other items dropped)."""
    return list(_raw_patterns(value))


def _expand(pattern: str) -> Iterator[str]:
    """Claude Code's `expandBraces`: the first `{...}` group, recursively; no nesting."""
    match = _BRACES.match(pattern)
    if match is None:
        yield pattern
        return
    prefix, alternatives, suffix = match.groups()
    for alternative in alternatives.split(","):
        yield from _expand(prefix + alternative.strip() + suffix)


def expand_paths(value: object) -> Globs:
    """Split a `paths:` value (string, comma list or YAML list) into gitignore patterns.

    All of a rule's patterns share one budget, however the list grows (a YAML list, commas,
    braces): `BRACE_PATTERN_BUDGET` patterns and `BRACE_BYTES_BUDGET` bytes. A pattern whose
    expansion does not fit is used unexpanded, and once the list is full the rest are left
    out; a pattern over `globs.MAX_GLOB_CHARS` is refused before it is expanded."""
    patterns: list[str] = []
    over: list[str] = []
    over_count = 0
    refused: list[tuple[str, str]] = []
    byte_budget = BRACE_BYTES_BUDGET
    for raw in _raw_patterns(value):
        budget = BRACE_PATTERN_BUDGET - len(patterns)
        if len(raw) > glob_limits.MAX_GLOB_CHARS:
            refused.append((raw, f"longer than {glob_limits.MAX_GLOB_CHARS:,} characters"))
            continue
        expanded: list[str] = []
        if budget > 0 and raw.count("{") <= _MAX_BRACE_GROUPS:  # more would recurse too deep
            size = 0
            for pattern in _expand(raw):
                expanded.append(pattern)
                size += len(pattern.encode())
                if len(expanded) > budget or size > byte_budget:
                    expanded = []
                    break
            byte_budget -= size if expanded else 0
        if not expanded:
            over_count += 1
            if len(over) < _LISTED_OVER:
                over.append(raw)
            if budget <= 0:
                continue  # the list is full: left out
            expanded = [raw]
        patterns.extend(expanded)
    cleaned = [p[:-3] if p.endswith("/**") else p for p in patterns]
    admitted = glob_limits.admit(p for p in cleaned if p)
    spelled = dict(zip(reversed(cleaned), reversed(patterns), strict=True))  # the first wins
    written = tuple(spelled[p] for p in admitted.kept)
    return Globs(admitted.kept, tuple(over), (*refused, *admitted.refused), over_count, written)


def conditional_globs(frontmatter: Frontmatter) -> Globs | None:
    """The rule's globs, or None when the rule is unconditional (no `paths`, or only `**`)."""
    value = frontmatter.data.get("paths")
    if not value:
        return None
    globs = expand_paths(value)
    if globs.too_complex and not globs.patterns:
        return globs  # conditional on globs that match nothing
    if not globs.patterns or all(p == "**" for p in globs.patterns):
        return None
    return globs
