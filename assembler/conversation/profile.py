"""A client's compaction, as its `compaction.CompactionProfile` describes it (Claude Code's:
`Client.compaction_profile`); `Conversation(profile=...)` uses it.

* The request: the whole conversation resent, the profile's summary instruction appended as a
  text block to the last user message (a new user message when the last is not one), any
  additional instructions (`/compact ARGS`) before its closing reminder. The caller's
  summariser sends it with the conversation's own system prompt and tools.
* The continuation: one user message, the profile's first words, the summary (its
  `<analysis>` dropped), where the transcript is saved, and (when the profile says so) the
  tools used before it and that the later messages are kept verbatim; the instruction
  context, re-read from disk, before or after it as the profile orders it.
* Restored: the files read, newest first, at most `restore_limit`, each as a read call and its
  result; the skills invoked, in one reminder with their bodies.

The words here are ctxasm's own; the structure, order and limits are the profile's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..compaction import CompactionProfile, Trigger
from .compact import Attachment, AttachmentKind
from .messages import scan


def _reminder(text: str) -> dict[str, str]:
    return {"type": "text", "text": f"<system-reminder>\n{text}\n</system-reminder>"}


def with_instruction(messages: Sequence[Any], instruction: str) -> list[Any]:
    """`messages` with `instruction` appended as a text block to the last user message."""
    block = {"type": "text", "text": instruction}
    out = list(messages)
    last = out[-1] if out else None
    if isinstance(last, Mapping) and last.get("role") == "user":
        content = last.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}] if content else []
        elif isinstance(content, list):
            blocks = list(content)
        else:
            blocks = []
        out[-1] = {**last, "content": [*blocks, block]}
        return out
    return [*out, {"role": "user", "content": [block]}]


def _tools_used(messages: Sequence[Any]) -> list[str]:
    found = scan(messages)
    return sorted({call.name for call in found.calls.values()})


class ClientShape(NamedTuple):
    """`compact.Shape` for one compaction under `profile` (see the module's docstring)."""

    profile: CompactionProfile
    trigger: Trigger
    instructions: str  # the instruction context, re-read ("" when none, or not now)
    additional: str = ""

    def ask(self, messages: Sequence[Any]) -> list[Any]:
        return with_instruction(messages, self.profile.instruction(self.additional))

    def limit(
        self, fitted: tuple[Attachment, ...], dropped: tuple[str, ...]
    ) -> tuple[tuple[Attachment, ...], tuple[str, ...]]:
        """The newest `restore_limit` files; skills all (the instruction context is in the
        summary's messages)."""
        files = [a for a in fitted if a.kind is AttachmentKind.FILE]
        keep = files[len(files) - self.profile.restore_limit :] if files else []
        over = tuple(a.name for a in files if a not in keep)
        kept = tuple(a for a in fitted if a.kind is AttachmentKind.SKILL or a in keep)
        return kept, (*dropped, *over)

    def wrap(
        self,
        summary: str,
        raw_path: Path,
        summarised: Sequence[Any],
        kept: Sequence[Any],
        fitted: Sequence[Attachment],
    ) -> tuple[Any, ...]:
        """Every message after the head: the summary's, the kept messages right after it (as
        recorded), the restored reads and skills, and the start context, in the profile's
        order for this trigger; the context and the summary share a message when the context
        comes right before it."""
        parts = [self.profile.continuation, summary.strip()]
        parts.append(
            f"The whole conversation before this summary is saved in {raw_path}; read it "
            "when a detail is missing here."
        )
        tools = _tools_used(summarised)
        if self.profile.lists_tools and tools:
            parts.append(f"Tools used before this summary: {', '.join(tools)}.")
        if self.profile.says_kept_verbatim and kept:
            parts.append("The messages after this one are the latest ones, kept as they were.")
        summary_block = {"type": "text", "text": "\n\n".join(parts)}
        manual = self.trigger is Trigger.MANUAL
        layout = self.profile.layout_manual if manual else self.profile.layout_auto
        out: list[Any] = []
        for at, part in enumerate(layout):
            if part == "reads":
                out += self._attach(fitted)
            elif part == "summary" and not (at and layout[at - 1] == "start"):
                out += [{"role": "user", "content": [summary_block]}, *kept]
            elif part == "start":
                context = [_reminder(self.instructions)] if self.instructions else []
                if layout[at + 1 : at + 2] == ("summary",):
                    out += [{"role": "user", "content": [*context, summary_block]}, *kept]
                elif context:
                    out.append({"role": "user", "content": context})
        return tuple(out)

    def _attach(self, fitted: Sequence[Attachment]) -> list[Any]:
        out: list[Any] = []
        for a in reversed([a for a in fitted if a.kind is AttachmentKind.FILE]):  # newest first
            call = json.dumps({"file_path": a.name}, ensure_ascii=False)
            out.append(
                {
                    "role": "user",
                    "content": [
                        _reminder(f"A Read tool call made before the summary: {call}"),
                        _reminder(f"Its result:\n{a.content}"),
                    ],
                }
            )
        skills = [a for a in fitted if a.kind is AttachmentKind.SKILL]
        if skills:
            bodies = "\n\n".join(f"### {a.name}\n\n{a.content}" for a in skills)
            text = f"Skills invoked earlier in this session, with their instructions:\n\n{bodies}"
            out.append({"role": "user", "content": [_reminder(text)]})
        return out
