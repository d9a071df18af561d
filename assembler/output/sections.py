"""The native layout shared by the budgeter and the renderers: order, boundary, escaping,
and what each source's section costs (the one token count of a source, `source_tokens`).

Sections are ordered most-stable-first (by layer, keeping load order within a layer) unless
the policy lists tags explicitly; the dynamic boundary sits after the last section of a
static layer. Content cannot forge that structure: in a section's content, every opening or
closing tag of a section the policy can emit (`<project_instructions ...>`, `</auto_memory>`,
any case, spaces allowed) has its `<` written as `&lt;`, and the boundary marker has its
first character written as a character reference (`&#95;_SYSTEM_PROMPT_...`), so a parser
of the output, or a split at the marker, sees only the sections ctxasm made. The markdown
format heads each section with a line `## 3. `path` (layer)`: there, a line of content shaped
like one (`MARKDOWN_HEADING`) has its first `#` backslash-escaped (`\\## 3. ...`, which
markdown shows as the text it was), so each line that heads a section is ctxasm's. The
assembly says so (CTX503, CTX504). The formats of a client (`Client.formats`) reproduce the
client's text byte for byte and escape nothing; lint reports the same occurrences there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from ..display import shown
from ..model import RULES_INDEX_TAG, SKILLS_TAG, Layer, Policy, Source, TokenCounter


class Section(NamedTuple):
    """One rendered block: a source in its tag, or the boundary marker."""

    tag: str
    source: Source | None
    content: str
    attribute: str = ""

    @property
    def is_boundary(self) -> bool:
        return self.source is None


class Escaped(NamedTuple):
    """A section's content with its forged structure neutralised, and what there was."""

    text: str
    closing: tuple[str, ...] = ()  # the tag of each closing tag found (lower case)
    opening: tuple[str, ...] = ()  # the tag of each opening tag found (lower case)
    boundaries: int = 0  # boundary markers found
    headings: int = 0  # lines shaped like a markdown section heading (escaped in markdown)

    @property
    def forged(self) -> bool:
        return bool(self.closing or self.opening or self.boundaries or self.headings)


# A line shaped like the markdown format's section heading, `## 3. `path` (layer)`: a level-2
# ATX heading whose text is a number and a dot, then a code span, or anything that ends in a
# layer in parentheses (numbered headings of a file's own, `## 1. Setup`, are neither). Before
# the `##` (group `indent`) may stand any blanks and container marks (`>`, `-`, `1.`): a
# heading in a quote or a list item is a heading to a markdown reader too, and four spaces
# make one inside a list item. Lines end where any reader ends them: CommonMark's `\n` and
# `\r`, and the other separators of Python's `str.splitlines()` (a reader that splits lines so
# would find a heading after them); `\d` is any digit, as a reader's `\d` takes it. Only the
# start of a line is tried, and the prefix is one pass over blanks and marks: linear in the
# text.
_LINE_BREAKS = "\\r\\n\\x0b\\x0c\\x1c\\x1d\\x1e\\x85\\u2028\\u2029"
MARKDOWN_HEADING = re.compile(
    rf"(?<![^{_LINE_BREAKS}])(?P<indent>(?:[ \t>]|[-+*](?=[ \t])|[0-9]{{1,9}}[.)](?=[ \t]))*)"
    rf"(?=##[ \t]+\d+\.(?:[ \t]*`|[^{_LINE_BREAKS}]*\((?:"
    + "|".join(layer.value for layer in Layer)
    + rf")\)[ \t#]*(?![^{_LINE_BREAKS}])))"
)
_NUMBERED = re.compile(r"##[ \t]+\d")  # what every such line holds


def section_tags(policy: Policy, own: str = "") -> tuple[str, ...]:
    """Every tag a section of `policy` can have (and `own`, the tag of the section at hand)."""
    tags = {policy.tag_for(layer) for layer in Layer} | {f.tag for f in policy.workspace}
    tags |= {*policy.order, SKILLS_TAG, RULES_INDEX_TAG, own}
    return tuple(sorted(t for t in tags if t))


def structure_pattern(tags: Sequence[str], boundary: str) -> re.Pattern[str]:
    """What forges structure: the `<` of an opening or closing tag of one of `tags` (groups
    `slash` and `tag`), or the boundary marker (group `boundary`)."""
    names = "|".join(re.escape(t) for t in sorted(tags, key=len, reverse=True))
    tag = rf"(?i:<(?=\s*(?P<slash>/?)\s*(?P<tag>{names})(?:[\s/>]|\Z)))"
    return re.compile(rf"{tag}|(?P<boundary>{re.escape(boundary)})" if boundary else tag)


def escape_content(content: str, policy: Policy, own: str = "") -> Escaped:
    """`content` with every tag of a section (`section_tags`) and the boundary marker
    neutralised, and what was found (markdown section headings too, which only the markdown
    format escapes: `escape_headings`)."""
    boundary = policy.boundary
    headings = _count_headings(content)
    if "<" not in content and not (boundary and boundary in content):
        return Escaped(content, headings=headings)
    closing: list[str] = []
    opening: list[str] = []
    boundaries = 0

    def neutralise(match: re.Match[str]) -> str:
        nonlocal boundaries
        if match.group("boundary") is not None:
            boundaries += 1
            return neutral_boundary(boundary)
        (closing if match.group("slash") else opening).append(match.group("tag").lower())
        return "&lt;"

    text = structure_pattern(section_tags(policy, own), boundary).sub(neutralise, content)
    return Escaped(text, tuple(closing), tuple(opening), boundaries, headings)


def _count_headings(content: str) -> int:
    return sum(1 for _ in markdown_headings(content))


def markdown_headings(content: str) -> Iterator[re.Match[str]]:
    """Each line of `content` shaped like a section heading of the markdown format
    (`MARKDOWN_HEADING`); the `##` is at the end of the match."""
    # A search for `## <digit>` first: it skips most files at a tenth of the full scan's cost.
    return MARKDOWN_HEADING.finditer(content) if _NUMBERED.search(content) else iter(())


def escape_headings(content: str) -> str:
    """`content` for the markdown format: each line shaped like its section heading
    (`MARKDOWN_HEADING`) with its first `#` backslash-escaped (`\\## 3. `path` (layer)`), which
    markdown shows as the text it was, in a paragraph."""
    if not _NUMBERED.search(content):
        return content
    return MARKDOWN_HEADING.sub(lambda m: m.group("indent") + "\\", content)


def neutral_boundary(boundary: str) -> str:
    """The marker with its first character as a character reference: it reads the same to a
    person and splits nothing."""
    first = boundary[0]
    return ("&lt;" if first == "<" else f"&#{ord(first)};") + boundary[1:]


def quote_attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def ordered(sources: Sequence[Source], policy: Policy) -> list[Source]:
    live = [s for s in sources if not s.dropped]
    if policy.order:
        rank = {tag: i for i, tag in enumerate(policy.order)}
        return sorted(live, key=lambda s: rank.get(s.tag, len(rank)))
    return sorted(live, key=lambda s: s.layer.rank)


def before_boundary(items: Sequence[Source], policy: Policy) -> int:
    """How many of `items` (in native order: `ordered`) come before the boundary: up to the
    last one of a static layer."""
    # The environment (cwd, git status, date) is per machine and moment: never before the
    # boundary, whatever a policy lists.
    static = set(policy.static_layers) - {Layer.ENVIRONMENT}
    return 1 + max((i for i, s in enumerate(items) if s.layer in static), default=-1)


def sections(sources: Sequence[Source], policy: Policy) -> list[Section]:
    """The native (xml/markdown) sequence of sections, with the boundary where it belongs."""
    out: list[Section] = []
    items = ordered(sources, policy)
    last_static = before_boundary(items, policy) - 1
    for i, source in enumerate(items):
        if i == last_static + 1 and policy.boundary:
            out.append(Section("", None, policy.boundary))
        out.append(source_section(source, policy))
    if items and last_static == len(items) - 1 and policy.boundary:
        out.append(Section("", None, policy.boundary))
    return out


def source_section(source: Source, policy: Policy) -> Section:
    content = escape_content(section_content(source), policy, source.tag).text
    shown_as = quote_attribute(shown(source.display))
    attribute = f' source="{shown_as}"' if policy.source_attribute else ""
    return Section(source.tag, source, content, attribute)


def section_content(source: Source) -> str:
    """A source's content as its section holds it, before escaping (a lazily attached file
    without the blank lines around it)."""
    return source.content.strip() if source.lazy else source.content


def section_text(section: Section) -> str:
    """The exact text of one section in the xml format (the template produces the same)."""
    if section.is_boundary:
        return section.content
    return f"<{section.tag}{section.attribute}>\n{section.content}\n</{section.tag}>"


SEPARATOR = "\n\n"


# --- token counts ---------------------------------------------------------------------


def source_tokens(source: Source, policy: Policy, counter: TokenCounter) -> int:
    """The one token count of a source: what its section adds to the native output (its tag,
    its escaped content, the separator after it). Every view shows this number for a source
    and sums these for a total (`context_tokens`): the budget, `explain`, the json and
    markdown formats, `watch`, `cache` and lint's `CTX601`."""
    return counter(section_text(source_section(source, policy)) + SEPARATOR)


def boundary_tokens(policy: Policy, counter: TokenCounter) -> int:
    """What the boundary marker adds to a context that holds any source."""
    return counter(policy.boundary + SEPARATOR) if policy.boundary else 0


class LayerTokens(NamedTuple):
    layer: Layer
    sources: int
    tokens: int  # the sum of its sources' counts (`source_tokens`)


class ContextTokens(NamedTuple):
    """The tokens of a context, every one a sum of its sources' counts (`source_tokens`)."""

    layers: tuple[LayerTokens, ...]  # in layer order, the layers with a source
    boundary: int  # the boundary marker: 0 when there is none, or no source
    static: int  # the sources before the boundary (the shared, cacheable prefix)
    total: int  # every source and the boundary: what --max-tokens counts


def context_tokens(
    sources: Sequence[Source], policy: Policy, counter: TokenCounter
) -> ContextTokens:
    """The tokens of the context `sources` make (those the budget dropped are not in it)."""
    items = ordered(sources, policy)
    counts = [source_tokens(s, policy, counter) for s in items]
    per_layer: dict[Layer, list[int]] = {}
    for source, count in zip(items, counts, strict=True):
        entry = per_layer.setdefault(source.layer, [0, 0])
        entry[0] += 1
        entry[1] += count
    layers = tuple(LayerTokens(layer, *per_layer[layer]) for layer in Layer if layer in per_layer)
    boundary = boundary_tokens(policy, counter) if items else 0
    static = sum(counts[: before_boundary(items, policy)])
    return ContextTokens(layers, boundary, static, sum(counts) + boundary)
