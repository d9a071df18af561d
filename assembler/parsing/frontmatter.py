"""Per-file processing: frontmatter, `paths:` globs, HTML comments.

Every rule here reproduces Claude Code (2.1.x, `utils/frontmatterParser.ts` and
`utils/claudemd.ts`): the frontmatter delimiter regex, the retry that quotes glob-like values
when the YAML is invalid, `paths` splitting and brace expansion, and the removal of a trailing
`/**`. YAML itself is parsed by python-frontmatter's YAML handler.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

# Claude Code's FRONTMATTER_REGEX: `^---\s*\n([\s\S]*?)---\s*\n?` (not anchored per line: the
# first `---` after the opener closes the block).
_FRONTMATTER = re.compile(r"---\s*\n(.*?)---\s*\n?", re.DOTALL)
_SIMPLE_KEY_VALUE = re.compile(r"([a-zA-Z_-]+):\s+(.+)$")
_YAML_SPECIAL = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
_BRACES = re.compile(r"([^{]*)\{([^}]+)\}(.*)$", re.DOTALL)

# Claude Code 2.1.217: one rule's `paths` share a budget of 1,000 expanded patterns and 4 MiB;
# a pattern over the budget is used unexpanded (and so matches nothing).
BRACE_PATTERN_BUDGET = 1000
BRACE_BYTES_BUDGET = 4 * 1024 * 1024
_MAX_BRACE_GROUPS = 200


class Frontmatter(NamedTuple):
    """The parsed frontmatter block of a file (`present` is False when there is none)."""

    present: bool
    data: Mapping[str, Any]
    text: str = ""
    error: str = ""
    line_count: int = 0


NO_FRONTMATTER = Frontmatter(False, {})


def split_frontmatter(text: str) -> tuple[Frontmatter, str]:
    """(frontmatter, body). Invalid YAML still strips the block, as the client does."""
    if not text.startswith("---"):
        return NO_FRONTMATTER, text
    match = _FRONTMATTER.match(text)
    if match is None:
        return NO_FRONTMATTER, text
    fm_text = match.group(1)
    data, error = _load_yaml(fm_text)
    block = match.group(0)
    return Frontmatter(True, data, fm_text, error, block.count("\n")), text[match.end() :]


def _yaml_handler() -> Any:
    # python-frontmatter's YAML handler (safe loader, libyaml when present); imported only
    # when a file has frontmatter, so files without it never pay for YAML.
    from frontmatter.default_handlers import YAMLHandler

    return YAMLHandler()


def _load_yaml(fm_text: str) -> tuple[Mapping[str, Any], str]:
    import yaml

    handler = _yaml_handler()
    try:
        parsed = handler.load(fm_text)
    except yaml.YAMLError as first:
        try:
            parsed = handler.load(quote_problematic_values(fm_text))
        except yaml.YAMLError:
            return {}, _first_line(str(first))
    if isinstance(parsed, dict):
        return {str(k): v for k, v in parsed.items()}, ""
    if parsed is None:
        return {}, ""
    return {}, f"frontmatter is a {type(parsed).__name__}, not a mapping"


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
    over_budget: tuple[str, ...] = ()


def _split_top_level_commas(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            part = "".join(current).strip()
            if part:
                parts.append(part)
            current = []
            continue
        current.append(ch)
    part = "".join(current).strip()
    if part:
        parts.append(part)
    return parts


def _raw_patterns(value: object) -> Iterator[str]:
    if isinstance(value, list):
        for item in value:
            yield from _raw_patterns(item)
    elif isinstance(value, str):
        yield from _split_top_level_commas(value)


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
    """Split a `paths:` value (string, comma list or YAML list) into gitignore patterns."""
    patterns: list[str] = []
    over: list[str] = []
    budget, byte_budget = BRACE_PATTERN_BUDGET, BRACE_BYTES_BUDGET
    for raw in _raw_patterns(value):
        expanded: list[str] = []
        size = 0
        if raw.count("{") > _MAX_BRACE_GROUPS:  # pathological: would recurse too deep
            over.append(raw)
            patterns.append(raw)
            budget -= 1
            continue
        for pattern in _expand(raw):
            expanded.append(pattern)
            size += len(pattern.encode())
            if len(expanded) > budget or size > byte_budget:
                over.append(raw)
                expanded = [raw]
                break
        budget -= len(expanded)
        byte_budget -= size
        patterns.extend(expanded)
    cleaned = [p[:-3] if p.endswith("/**") else p for p in patterns]
    return Globs(tuple(p for p in cleaned if p), tuple(over))


def conditional_globs(frontmatter: Frontmatter) -> Globs | None:
    """The rule's globs, or None when the rule is unconditional (no `paths`, or only `**`)."""
    value = frontmatter.data.get("paths")
    if not value:
        return None
    globs = expand_paths(value)
    if not globs.patterns or all(p == "**" for p in globs.patterns):
        return None
    return globs
