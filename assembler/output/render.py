"""Renderers: every output format goes through a Jinja2 template in `templates/`.

A format's template variables come from this module (the generic formats), from `provider`
(the request shapes), or from the client the format belongs to (`formats.client_format`).
Renderers read an assembly through the `Assembled` shape only. Jinja2 is imported here
only, on the path that renders, so `ctxasm lint` never pays for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import resources
from ..display import counted, dumps, shown
from ..errors import RenderError
from ..model import AgentType, Assembled, Severity, Source
from ..request import checked_date
from ..tokens import estimated
from . import formats
from .sections import (
    SEPARATOR,
    Section,
    boundary_tokens,
    context_tokens,
    escape_content,
    escape_headings,
    section_text,
    sections,
    source_tokens,
)

if TYPE_CHECKING:
    from .tiers import RequestOptions


def _environment(fmt: str) -> Any:
    import jinja2

    searched = [str(d) for d in (formats.template_dir(fmt), resources.data_dir("templates")) if d]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(searched),
        # Compiled templates are kept in jinja2's per-user cache directory (a private
        # directory under the system temp dir, checked by jinja2), keyed by the template's
        # name and source checksum: a cold `ctxasm render` skips compiling Jinja source.
        bytecode_cache=_bytecode_cache(jinja2),
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["json"] = lambda value: dumps(value, indent=2)
    env.filters["shown"] = shown
    return env


def _bytecode_cache(jinja2: Any) -> Any:
    try:
        return jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):  # no usable temp directory: compile every time
        return None


def render(
    assembly: Assembled,
    fmt: str,
    *,
    date: str | None = None,
    options: RequestOptions | None = None,
) -> str:
    if date is not None:
        date = checked_date(date)
    known = formats.names()
    if fmt not in known:
        raise RenderError(f"{fmt}: unknown format; choose one of {', '.join(known)}")
    mixed = formats.for_another_client(fmt, assembly.policy.client)
    if mixed is not None:
        raise RenderError(mixed)
    import jinja2

    try:
        template = _environment(fmt).get_template(f"{fmt}.j2")
    except jinja2.TemplateNotFound:
        raise RenderError(
            f"{fmt}.j2: template missing from {resources.data_dir('templates')}; reinstall ctxasm"
        ) from None
    text = str(template.render(**_context(assembly, fmt, date or assembly.date, options)))
    if formats.client_format(fmt) is not None:
        return text  # a client's own format: byte for byte what the client sends
    # A text file ends with exactly one newline, whatever the last source ends with; nothing
    # loaded renders nothing.
    stripped = text.rstrip("\n")
    return stripped + "\n" if stripped else ""


def _context(
    assembly: Assembled, fmt: str, date: str, options: RequestOptions | None = None
) -> Mapping[str, Any]:
    if fmt in formats.REQUESTS:
        from . import provider

        build = provider.anthropic_request if fmt == "anthropic" else provider.openai_request
        return {"request": build(assembly, options)}
    native = sections(assembly.sources, assembly.policy)
    if fmt == "xml":
        return {"sections": native}
    if fmt == "markdown":
        return {
            "entries": _numbered(native, assembly),
            "policy": assembly.policy.name,
            "summary": _summary(assembly),
            "diagnostics": [
                d.line() for d in assembly.diagnostics if d.severity is not Severity.INFO
            ],
        }
    client_format = formats.client_format(fmt)
    if client_format is not None:
        return client_format(assembly, date)
    return {"data": to_json(assembly, native)}


def _numbered(native: Sequence[Section], assembly: Assembled) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    number = 0
    for section in native:
        if section.is_boundary:  # its tokens, so that the sections add up to the header's total
            marker = boundary_tokens(assembly.policy, assembly.counter)
            entries.append({"boundary": True, "content": section.content, "tokens": marker})
            continue
        number += 1
        entries.append(
            {
                "boundary": False,
                "number": number,
                "source": section.source,
                "tokens": _tokens(section.source, assembly),
                "content": escape_headings(section.content),
            }
        )
    return entries


def _tokens(source: Source | None, assembly: Assembled) -> int:
    """A source's one token count (`budget.source_tokens`)."""
    return source_tokens(source, assembly.policy, assembly.counter) if source else 0


def _summary(assembly: Assembled) -> str:
    live = sum(1 for s in assembly.sources if not s.dropped)
    total = context_tokens(assembly.sources, assembly.policy, assembly.counter).total
    dropped = len(assembly.sources) - live
    extra = f" · {dropped} dropped by the budget" if dropped else ""
    estimate = " (estimated)" if estimated(assembly.counter) else ""
    return f"{counted(live, 'source')} · {counted(total, 'token')}{estimate}{extra}"


def to_json(assembly: Assembled, native: Sequence[Section]) -> dict[str, Any]:
    """The whole assembly as plain data: machine-independent before the boundary."""
    text = SEPARATOR.join(section_text(s) for s in native)  # the xml format
    boundary = assembly.policy.boundary
    tokens = context_tokens(assembly.sources, assembly.policy, assembly.counter)
    agent = assembly.agent
    data: dict[str, Any] = {
        **({"subagent": agent_json(agent)} if agent is not None else {}),
        "version": 1,
        "policy": assembly.policy.name,
        "client_version": assembly.client_version or None,  # the client's release modelled
        "boundary": boundary,
        "sections": [
            {"boundary": True}
            if s.is_boundary
            else {
                "tag": s.tag,
                "source": s.source.display if s.source else None,
                "layer": s.source.layer.value if s.source else None,
                "content": s.content,
            }
            for s in native
        ],
        "sources": [_source_json(s, assembly) for s in assembly.sources],
        "diagnostics": [d._asdict() | {"severity": d.severity.value} for d in assembly.diagnostics],
        "stats": {
            "sources": sum(1 for s in assembly.sources if not s.dropped),
            "tokens": tokens.total,  # every source's `tokens` and the boundary's
            "static_tokens": tokens.static,
            "estimated": estimated(assembly.counter),
            "chars": len(text),
            "bytes": len(text.encode("utf-8", "surrogatepass")),  # a file name not UTF-8
        },
        "touched": list(assembly.touched),
    }
    if assembly.compacted is not None:
        data["after_compact"] = assembly.compacted.as_json()
    return data


def agent_json(agent: AgentType) -> dict[str, Any]:
    """What a subagent receives besides the sources: its type, tools, prompt and model."""
    return {
        "name": agent.name,
        "description": agent.description,
        "origin": agent.origin,
        "instructions": agent.instructions,
        "skills": agent.skills,
        "tools": list(agent.tools) or "all",
        "tools_excluded": list(agent.excluded),
        "prompt": agent.prompt,
        "model": agent.model or "inherit",
        "shares_parent": agent.shares_parent,
    }


def _source_json(s: Source, assembly: Assembled) -> dict[str, Any]:
    policy = assembly.policy
    return {
        "layer": s.layer.value,
        "path": s.display,
        "tag": s.tag,
        "reason": {
            "why": s.reason.why.name.lower(),
            "text": s.reason.text,
            "parent": s.reason.parent,
            "depth": s.reason.depth,
            "pattern": s.reason.pattern,
            "touched": s.reason.touched,
        },
        "tokens": _tokens(s, assembly),  # what it adds to the context; `stats`: its content's
        "stats": s.stats._asdict(),
        "original": s.original._asdict(),
        "cuts": [c._asdict() for c in s.cuts],
        "paths": list(s.paths),
        "lazy": s.lazy,
        "dropped": s.dropped,
        "escaped_closing_tags": len(escape_content(s.content, policy, s.tag).closing),
    }
