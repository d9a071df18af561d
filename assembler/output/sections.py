"""The native layout shared by the budgeter and the renderers: order, boundary, escaping.

Sections are ordered most-stable-first (by layer, keeping load order within a layer) unless
the policy lists tags explicitly; the dynamic boundary sits after the last section of a
static layer. A section's content cannot close its own tag: `</tag>` inside it becomes
`&lt;/tag>` (and the assembly says so).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from ..model import Layer, Policy, Source


class Section(NamedTuple):
    """One rendered block: a source in its tag, or the boundary marker."""

    tag: str
    source: Source | None
    content: str
    attribute: str = ""

    @property
    def is_boundary(self) -> bool:
        return self.source is None


def closing_tag(tag: str) -> re.Pattern[str]:
    return re.compile(rf"</(\s*{re.escape(tag)}\s*)>", re.IGNORECASE)


def escape_content(content: str, tag: str) -> tuple[str, int]:
    """`content` with every closing `</tag>` neutralised, and how many there were."""
    if "</" not in content:
        return content, 0
    return closing_tag(tag).subn(r"&lt;/\1>", content)


def quote_attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def ordered(sources: Sequence[Source], policy: Policy) -> list[Source]:
    live = [s for s in sources if not s.dropped]
    if policy.order:
        rank = {tag: i for i, tag in enumerate(policy.order)}
        return sorted(live, key=lambda s: rank.get(s.tag, len(rank)))
    return sorted(live, key=lambda s: s.layer.rank)


def sections(sources: Sequence[Source], policy: Policy) -> list[Section]:
    """The native (xml/markdown) sequence of sections, with the boundary where it belongs."""
    out: list[Section] = []
    items = ordered(sources, policy)
    # The environment (cwd, git status, date) is per machine and moment: never before the
    # boundary, whatever a policy lists.
    static = set(policy.static_layers) - {Layer.ENVIRONMENT}
    last_static = max((i for i, s in enumerate(items) if s.layer in static), default=-1)
    for i, source in enumerate(items):
        if i == last_static + 1 and policy.boundary:
            out.append(Section("", None, policy.boundary))
        out.append(source_section(source, policy))
    if items and last_static == len(items) - 1 and policy.boundary:
        out.append(Section("", None, policy.boundary))
    return out


def source_section(source: Source, policy: Policy) -> Section:
    content, _ = escape_content(
        source.content.strip() if source.lazy else source.content, source.tag
    )
    attribute = f' source="{quote_attribute(source.display)}"' if policy.source_attribute else ""
    return Section(source.tag, source, content, attribute)


def section_text(section: Section) -> str:
    """The exact text of one section in the xml format (the template produces the same)."""
    if section.is_boundary:
        return section.content
    return f"<{section.tag}{section.attribute}>\n{section.content}\n</{section.tag}>"


SEPARATOR = "\n\n"
