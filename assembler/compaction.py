"""What a compaction keeps, as neutral values: what a caller asks (`Compaction`), what the
model has in the first request after it (`AfterCompact`, one `Survivor` per source), and how
a client's runtime compacts (`CompactionProfile`, which `conversation.Conversation` follows).

A client fills them in from its own facts (`Client.after_compact`,
`Client.compaction_profile`); nothing here names a client. Standard library only.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, NamedTuple

from .errors import RequestError


class Trigger(Enum):
    """What started a compaction."""

    AUTO = "auto"  # the count reached the auto-compact line (or the provider refused the prompt)
    MANUAL = "manual"  # the user asked (`/compact`)


class Compaction(NamedTuple):
    """A compaction to model: how it was started, the skills invoked before it (by name), and
    whether the first request after it comes from another process (a continued session)."""

    trigger: Trigger = Trigger.MANUAL
    skills: tuple[str, ...] = ()
    continued: bool = False


def checked_compaction(value: object) -> Compaction | None:
    """The `after_compact` option: None, True ("manual"), "manual", "auto" or a `Compaction`."""
    if value is None or value is False:
        return None
    if value is True:
        return Compaction()
    if isinstance(value, str):
        try:
            return Compaction(Trigger(value))
        except ValueError:
            pass
    elif isinstance(value, Compaction):
        ok_skills = isinstance(value.skills, tuple) and all(
            isinstance(s, str) for s in value.skills
        )
        if isinstance(value.trigger, Trigger) and ok_skills and isinstance(value.continued, bool):
            return value
    raise RequestError(
        f"after_compact: {value!r}; pass 'manual', 'auto', True or a Compaction(trigger, "
        "skills, continued)"
    )


class Fate(Enum):
    """What became of a source at a compaction, as the first request after it shows."""

    KEPT = "kept"  # in the request as it was
    REREAD = "re-read"  # read again from disk
    RESTORED = "restored"  # sent again by the client (a file as a read, a skill's body)
    CANDIDATE = "restored or lost"  # one of more candidates than the limit: the client picks
    LATER = "re-read later"  # read again from disk, but only at the next user turn
    LOST = "lost"  # only what the summary says of it is left


class Survivor(NamedTuple):
    """One source and its fate: `kind` is instructions, attached, read, skill, skills list or agent types."""

    kind: str
    name: str  # as displayed
    path: str  # as the client names it (absolute), or "" for a list
    fate: Fate
    why: str  # one line
    content: str = ""  # what is sent again: a restored file's numbered lines, a skill's body


class AfterCompact(NamedTuple):
    """The first request after a compaction, at one release of a client."""

    compaction: Compaction
    client: str
    version: str
    survivors: tuple[Survivor, ...]
    restore_limit: int  # at most this many files come back as reads
    reread: str  # when the instruction files are read again, in words
    layout: tuple[str, ...]  # the order of "start" (blocks), "summary" and "reads" in it
    notes: tuple[str, ...] = ()  # what else is lost or kept, in words

    @property
    def summary_first(self) -> bool:
        """Whether the summary opens the request (the start blocks come later)."""
        return self.layout[:1] == ("summary",)

    def of(self, fate: Fate) -> tuple[Survivor, ...]:
        return tuple(s for s in self.survivors if s.fate is fate)

    def as_json(self) -> dict[str, Any]:
        """Plain data (`render --format json`, `explain --json`): every source and its fate."""
        return {
            "trigger": self.compaction.trigger.value,
            "continued": self.compaction.continued,
            "client": self.client,
            "version": self.version,
            "restore_limit": self.restore_limit,
            "reread": self.reread,
            "layout": list(self.layout),
            "sources": [
                {
                    "kind": s.kind,
                    "name": s.name,
                    "path": s.path or None,
                    "fate": s.fate.value,
                    "why": s.why,
                    "content": s.content or None,
                }
                for s in self.survivors
            ],
            "notes": list(self.notes),
        }


class CompactionProfile(NamedTuple):
    """How a client compacts a conversation, for the runtime (`docs/conversation.md`).

    The numbers, order and limits are the client's; the words (`instruction_head`,
    `instruction_tail`, `continuation`) are ctxasm's own, written to the client's structure.
    `window` None: no compaction at a threshold, only when the provider refuses a prompt as
    too long."""

    client: str
    version: str
    window: int | None
    effective: int | None  # window - the summary's output reserve
    auto_compact: int | None  # the line where an automatic compaction starts
    warning: int | None
    instruction_head: str  # the summary instruction, up to where additional instructions go
    instruction_tail: str  # the closing reminder after them
    continuation: str  # the first words of the message that carries the summary
    restore_limit: int = 5
    min_messages: int = 0  # fewer messages than this are not compacted (0: any)
    keep_on_manual: int = 1  # messages kept verbatim by a manual compaction (the last reply)
    reread_auto_now: bool = True  # after an automatic compaction, re-read in the same turn
    # The order of the summary, the restored reads (and skills) and the start context after a
    # manual and an automatic compaction ("summary", "reads", "start").
    layout_manual: tuple[str, ...] = ("start", "summary", "reads")
    layout_auto: tuple[str, ...] = ("start", "summary", "reads")
    lists_tools: bool = False  # the continuation names the tools used before it
    says_kept_verbatim: bool = False  # the continuation says the later messages are verbatim
    resends_skills_list: bool = False
    notes: tuple[str, ...] = ()  # settings that were ignored, and why

    def instruction(self, additional: str = "") -> str:
        """The summary instruction, with the user's additional instructions (`/compact ARGS`)
        inserted before the closing reminder."""
        extra = f"\n\nAdditional Instructions:\n{additional}" if additional.strip() else ""
        return f"{self.instruction_head}{extra}\n\n{self.instruction_tail}"


def numbered(text: str, *, max_lines: int) -> str:
    """`text` as a read tool returns it: each line after its number and a tab, the empty
    line after a final newline included (as recorded), at most `max_lines` lines."""
    lines = text.split("\n")
    return "\n".join(f"{n}\t{line}" for n, line in enumerate(lines[:max_lines], 1))
