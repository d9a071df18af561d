"""Per-file processing: frontmatter, `paths:` globs, HTML comments.

Every rule here reproduces Claude Code (2.1.x, `utils/frontmatterParser.ts` and
`utils/claudemd.ts`): the frontmatter delimiter regex, the retry that quotes glob-like values
when the YAML is invalid, `paths` splitting and brace expansion, and the removal of a trailing
`/**`. YAML itself is parsed by PyYAML's safe loader (libyaml when present), bounded: an
alias stands for the whole node it names, so a few hundred bytes of nested anchors would
otherwise make a billion-node value for whoever walks it (paths splitting, lint). A document
of over `MAX_YAML_NODES` nodes, counting each alias as the nodes it stands for, or nested over
`MAX_YAML_DEPTH` levels, is dropped and reported (CTX308), as invalid YAML is (CTX301).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from . import globs as glob_limits

# Claude Code's FRONTMATTER_REGEX: `^---\s*\n([\s\S]*?)---\s*\n?` (not anchored per line: the
# first `---` after the opener closes the block).
_FRONTMATTER = re.compile(r"---\s*\n(.*?)---\s*\n?", re.DOTALL)
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


class Frontmatter(NamedTuple):
    """The parsed frontmatter block of a file (`present` is False when there is none)."""

    present: bool
    data: Mapping[str, Any]
    error: str = ""  # why the YAML is invalid (CTX301)
    line_count: int = 0
    too_complex: str = ""  # which limit dropped it (CTX308)


NO_FRONTMATTER = Frontmatter(False, {})


def split_frontmatter(text: str) -> tuple[Frontmatter, str]:
    """(frontmatter, body). Invalid YAML still strips the block, as the client does."""
    if not text.startswith("---"):
        return NO_FRONTMATTER, text
    match = _FRONTMATTER.match(text)
    if match is None:
        return NO_FRONTMATTER, text
    fm_text = match.group(1)
    block = match.group(0)
    lines = block.count("\n")
    try:
        data, error = _load_yaml(fm_text)
    except _TooComplex as refused:
        return Frontmatter(True, {}, "", lines, str(refused)), text[match.end() :]
    return Frontmatter(True, data, error, lines), text[match.end() :]


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
    """`yaml.safe_load` (libyaml when present) of a document within the limits."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    _check_size(yaml.parse(fm_text, Loader=loader))
    return yaml.load(fm_text, Loader=loader)  # a safe loader


def _check_size(events: Iterator[Any]) -> None:
    """Raise `_TooComplex` when the document of `events` expands to over `MAX_YAML_NODES`
    nodes (each alias counted as the nodes of what it names), nests over `MAX_YAML_DEPTH`
    levels, or holds an alias to a node that contains it (a value without end).

    One pass over the parser's events, before any node is built, stopping at the limit: the
    expanded size of each anchor is summed as its collection closes."""
    import yaml

    anchored: dict[str, int] = {}  # anchor -> the nodes its value expands to
    open_anchors: set[str] = set()
    stack: list[list[Any]] = [[0, None]]  # [nodes so far, anchor] of each open collection
    for event in events:
        if isinstance(event, yaml.CollectionStartEvent):
            if len(stack) > MAX_YAML_DEPTH:
                raise _TooComplex(f"is nested over {MAX_YAML_DEPTH} levels")
            stack.append([1, event.anchor])
            if event.anchor is not None:
                open_anchors.add(event.anchor)
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            nodes, anchor = stack.pop()
            if anchor is not None:
                anchored[anchor] = nodes
                open_anchors.discard(anchor)
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor in open_anchors:
                raise _TooComplex("has an alias to a node that contains it")
            nodes = anchored.get(event.anchor or "", 1)  # undefined: the loader reports it
        elif isinstance(event, yaml.ScalarEvent):
            nodes = 1
            if event.anchor is not None:
                anchored[event.anchor] = 1
        else:
            continue
        stack[-1][0] += nodes
        if stack[-1][0] > MAX_YAML_NODES:
            raise _TooComplex(
                f"is over {MAX_YAML_NODES:,} nodes, each alias counted as the nodes it stands for"
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
