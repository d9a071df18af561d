"""How `ctxasm explain --after-compact` shows what a compaction keeps: a before/after table,
one row per source (`compaction.AfterCompact`), plain text, 80 columns."""

from __future__ import annotations

import textwrap

from ..clients import registry
from ..compaction import AfterCompact, Survivor, Trigger
from ..display import counted, shown
from .explain_view import folded

WIDTH = 80
_TRIGGER = {Trigger.MANUAL: "a manual", Trigger.AUTO: "an automatic"}
_BEFORE = {
    "instructions": "at start",
    "attached": "on a read",
    "read": "read",
    "skill": "invoked",
    "skills list": "at start",
    "agent types": "at start",
}


def text(after: AfterCompact) -> str:
    """The table, its heading and its notes, as one string ending in a newline."""
    title = registry.get(after.client).title
    how = "another process continues" if after.compaction.continued else "same process"
    lines = [
        f"After {_TRIGGER[after.compaction.trigger]} compaction ({title} {after.version}, {how}):",
        f"Instruction files are read again {after.reread}.",
        f"At most {counted(after.restore_limit, 'file')} come back as a read and its result.",
        "",
    ]
    rows = [(_name(s), _BEFORE.get(s.kind, s.kind), s.fate.value) for s in after.survivors]
    fates = max([len("after"), *(len(r[2]) for r in rows)])
    befores = max([len("before"), *(len(r[1]) for r in rows)])
    room = WIDTH - fates - befores - 4
    lines.append(f"{'source':<{room}}  {'before':<{befores}}  after")
    for name, before, fate in rows:
        lines.append(f"{folded(name, room):<{room}}  {before:<{befores}}  {fate}".rstrip())
    lines.append("")
    said = [f"{fate}: {why}" for fate, why in _reasons(after.survivors)]
    said += [f"note: {note}" for note in after.notes]
    lines += [textwrap.fill(line, WIDTH, subsequent_indent="  ") for line in said]
    return "\n".join(lines) + "\n"


def _name(s: Survivor) -> str:
    if s.kind == "skill":
        return f"skill {shown(s.name, 60)}"
    return shown(s.name)


def _reasons(survivors: tuple[Survivor, ...]) -> list[tuple[str, str]]:
    """Each fate's reason once, in the order they first appear."""
    seen: dict[tuple[str, str], None] = {}
    for s in survivors:
        seen.setdefault((s.fate.value, s.why), None)
    return list(seen)
