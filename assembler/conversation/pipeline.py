"""One object for agent authors: the levels in order before each model call, every action an
event an agent can print.

    conv = Conversation(assembly, store_dir="run", context_window=200_000, summarize=ask)
    while True:
        ready = conv.prepare(messages)        # persist, prune / clear, collapse, compact
        for event in ready.events:
            print(event)                      # "[Prune] Tool result truncated: 755 → 236 chars"
        messages = ready.messages             # keep this list
        reply = call_model(ready.request)     # send this one (it differs with cache edits)
        conv.record(reply.usage.input_tokens) # the provider's count, for the next turn's lines

The second article's snip level is left out: it is not publicly specified (the article
itself only guesses at it: "a light judgement picks low-value message ids"), and a
reconstruction that drops whole messages by guesswork would be the one level that can lose
what the user said. Pruning and micro-compaction cover the same ground with known rules.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..compaction import CompactionProfile
from ..display import shown
from ..errors import ConversationError
from ..model import TokenCounter
from ..tokens import estimate_tokens
from .collapse import STALE, Stage, StageJob, apply_collapse, intact, stage_collapse
from .compact import (
    Attachment,
    AttachmentKind,
    CompactionResult,
    Summarize,
    Trigger,
    compact,
    compaction_thresholds,
)
from .messages import Checked, as_sequence, scan
from .micro import (
    CLEARED,
    COMPACTABLE_TOOLS,
    CacheEditState,
    cache_edit_tool_results,
    clear_old_tool_results,
)
from .persist import SHELL_TOOLS, persist_results
from .profile import ClientShape
from .prompts import Prompt
from .prune import prune_tool_results
from .store import Below

if TYPE_CHECKING:
    from ..assembly import Assembly

READ_TOOLS = frozenset({"Read", "read_file"})


class Level(Enum):
    SHAPE = "Shape"  # a message of unknown shape, left as it is
    PERSIST = "Persist"
    PRUNE = "Prune"
    MICRO = "Micro"
    COLLAPSE = "Collapse"
    COMPACT = "Compress"  # the first article's word for it


@dataclass(frozen=True, slots=True)
class Event:
    level: Level
    text: str

    def __str__(self) -> str:
        return f"[{self.level.value}] {self.text}"


class Micro(Enum):
    OFF = "off"
    TIME = "time"  # clear in place once the cache has expired
    CACHE = "cache"  # Anthropic cache_reference / cache_edits in the request


@dataclass(frozen=True, slots=True)
class Levels:
    """Which levels run. Pruning is off by default: it rewrites an old message every turn,
    which breaks the prompt cache; the first article's demo turns it on."""

    persist: bool = True
    prune: bool = False
    micro: Micro = Micro.TIME
    collapse: bool = True
    compact: bool = True


class Prepared(NamedTuple):
    messages: list[Any]  # the conversation from now on: keep it
    request: list[Any]  # what to send (the same list unless cache edits are on)
    events: tuple[Event, ...]
    compaction: CompactionResult | None = None


class Conversation:
    """The conversation runtime. `store_dir` receives `tool-results/` and `sessions/`."""

    def __init__(
        self,
        assembly: Assembly | None = None,
        *,
        store_dir: str | os.PathLike[str],
        context_window: int = 200_000,
        summarize: Summarize | None = None,
        threshold: int | None = None,
        collapse_at: int | None = None,
        levels: Levels = Levels(),
        keep_recent: int = 4,
        prune_keep: int = 2,
        clear_keep: int = 2,
        prompt: Prompt | None = None,
        summary_role: str = "user",
        summary_prefix: str = "[Conversation summary]\n",
        reattach_instructions: bool = True,
        background: bool = False,
        compactable: Collection[str] = COMPACTABLE_TOOLS,
        shell_tools: Collection[str] = SHELL_TOOLS,
        read_tools: Collection[str] = READ_TOOLS,
        counter: TokenCounter = estimate_tokens,
        clock: Callable[[], float] = time.time,
        profile: CompactionProfile | None = None,
    ) -> None:
        auto, warning = _lines(context_window, profile)
        # None: no compaction at a threshold (a profile without a window), only on request.
        self.threshold: int | None = threshold if threshold is not None else auto
        # Staging starts at the warning line (80% of the threshold when one is given).
        default_stage = warning if threshold is None else threshold * 4 // 5
        self.collapse_at = collapse_at if collapse_at is not None else default_stage
        self.profile = profile
        self._context_due = False  # the instruction context is re-read at the next user turn
        self.store_dir = Path(store_dir)
        self.sessions_dir = self.store_dir / "sessions"
        # Yours: links above store_dir are followed; none at it or below it (store.py).
        self._sessions = Below(self.store_dir, ("sessions",))
        self.assembly, self.summarize, self.levels = assembly, summarize, levels
        self.keep_recent, self.prune_keep, self.clear_keep = keep_recent, prune_keep, clear_keep
        self.prompt, self.summary_role, self.summary_prefix = prompt, summary_role, summary_prefix
        self.reattach_instructions, self.background = reattach_instructions, background
        self.compactable, self.shell_tools = frozenset(compactable), frozenset(shell_tools)
        self.read_tools = frozenset(read_tools)
        self.counter, self.clock = counter, clock
        self.last_prompt_tokens: int | None = None
        self.last_request_at: float | None = None
        self.cache_state = CacheEditState()
        self._stage: Stage | None = None
        self._job: StageJob | None = None
        self._order = 0
        self._files: dict[str, tuple[int, str, str]] = {}  # path: (order, text, call id)
        self._skills: dict[str, tuple[int, str]] = {}
        self._seen: set[str] = set()
        self._reported: set[tuple[int, str]] = set()

    # What the agent tells the runtime.
    def record(self, prompt_tokens: int | None) -> None:
        """After each model call: the prompt tokens the provider reported, and the time."""
        if prompt_tokens is not None:
            counted = isinstance(prompt_tokens, int) and not isinstance(prompt_tokens, bool)
            if not counted or prompt_tokens < 0:
                what = "negative" if counted else f"a {type(prompt_tokens).__name__}"
                raise ConversationError(
                    f"prompt_tokens is {what}: give the provider's count (an int >= 0) or None"
                )
        self.last_prompt_tokens = prompt_tokens
        self.last_request_at = self.clock()

    def invoked_skill(self, name: str, content: str) -> None:
        """A skill the model invoked: re-attached after each compaction."""
        if not (isinstance(name, str) and isinstance(content, str)):
            raise ConversationError("invoked_skill takes the skill's name and content as strings")
        self._order += 1
        self._skills[name] = (self._order, content)

    # The levels.
    def prepare(self, messages: Sequence[Any]) -> Prepared:
        """Run the levels on `messages` (never mutated) before a model call.

        The levels share what they learn of each message (`messages.Checked`): a message a
        level leaves as it is, the next reads from memory, so the whole pipeline reads each
        message about once, not once a level."""
        events: list[Event] = []
        memo: dict[int, Any] = {}
        current: list[Any] = Checked(as_sequence(messages), memo)  # refuses a non-list
        self._note(current, events)
        if self._context_due and _user_turn(current):
            current = Checked(self._context_now(current, events), memo)
        if self.levels.persist:
            saved = persist_results(current, store_dir=self.store_dir, shell_tools=self.shell_tools)
            current = Checked(saved.messages, memo)
            events += [Event(Level.PERSIST, str(a)) for a in saved.actions]
        if self.levels.prune:
            pruned = prune_tool_results(current, keep_recent=self.prune_keep)
            current = Checked(pruned.messages, memo)
            events += [Event(Level.PRUNE, str(c)) for c in pruned.cuts]
        if self.levels.micro is Micro.TIME:
            cleared = clear_old_tool_results(
                current,
                last_request_at=self.last_request_at,
                now=self.clock(),
                keep_recent=self.clear_keep,
                compactable=self.compactable,
            )
            current = Checked(cleared.messages, memo)
            events += [Event(Level.MICRO, str(c)) for c in cleared.cleared]
        collapsed = False
        if self.levels.collapse and self.summarize is not None:
            collapsed_list, collapsed = self._collapse(current, events)
            current = Checked(collapsed_list, memo)
        compaction = None
        if self.levels.compact and not collapsed and self._reached(self.threshold):
            compaction = self._compact(current, Trigger.AUTO, events)
            if compaction is not None:
                current = Checked(compaction.messages, memo)
        current = list(current)  # the caller's: a plain list, without the memo
        request = current
        if self.levels.micro is Micro.CACHE:
            edited = cache_edit_tool_results(
                current, self.cache_state, compactable=self.compactable
            )
            self.cache_state, request = edited.state, edited.request
            if edited.reset:
                events.append(Event(Level.MICRO, "Earlier cache edits dropped: the list changed"))
            events += [
                Event(Level.MICRO, f"Cache edit: delete {shown(i, 80)}") for i in edited.deleted
            ]
        return Prepared(current, request, tuple(events), compaction)

    def compact_now(self, messages: Sequence[Any], instructions: str = "") -> Prepared:
        """A manual compaction (Claude Code's `/compact`), whatever the token count;
        `instructions` (`/compact ARGS`) go into the profile's summary instruction."""
        if instructions and self.profile is None:
            raise ConversationError("additional instructions need a client's profile (profile=)")
        return self._now(messages, Trigger.MANUAL, instructions)

    def prompt_too_long(self, messages: Sequence[Any]) -> Prepared:
        """The provider refused the last request as too long: compact now (the reactive path,
        the only one under a profile without a context window), then send again."""
        return self._now(messages, Trigger.AUTO, "")

    def _now(self, messages: Sequence[Any], trigger: Trigger, instructions: str) -> Prepared:
        events: list[Event] = []
        self._note(messages, events)
        result = self._compact(list(messages), trigger, events, instructions)
        kept = result.messages if result is not None else list(messages)
        return Prepared(kept, kept, tuple(events), result)

    def _reached(self, line: int | None) -> bool:
        if line is None:
            return False
        return self.last_prompt_tokens is not None and self.last_prompt_tokens >= line

    def _note(self, messages: Sequence[Any], events: list[Event]) -> None:
        """Report unknown messages (once each) and remember the files the model read, whole,
        before any level cuts them."""
        found = scan(messages)
        for unknown in found.unknown:
            if (unknown.at, unknown.reason) not in self._reported:
                self._reported.add((unknown.at, unknown.reason))
                events.append(Event(Level.SHAPE, str(unknown)))
        for result in found.results:
            call = found.calls.get(result.id)
            if call is None or call.name not in self.read_tools or result.id in self._seen:
                continue
            self._seen.add(result.id)
            path = call.input.get("path", call.input.get("file_path"))
            if isinstance(path, str) and not result.is_error and result.text != CLEARED:
                self._order += 1
                self._files[path] = (self._order, result.text, result.id)

    def _collapse(self, current: list[Any], events: list[Event]) -> tuple[list[Any], bool]:
        if self._job is not None and self._job.done():
            job, self._job = self._job, None
            try:
                self._stage = job.stage()
                events.append(Event(Level.COLLAPSE, self._staged(self._stage)))
            except ConversationError as err:
                events.append(Event(Level.COLLAPSE, f"Staging failed: {err}"))
        if self._stage is not None and not intact(current, self._stage):
            self._stage = None  # the list changed under it: a new one may be staged
            events.append(Event(Level.COLLAPSE, f"Staged summary discarded: {STALE}"))
        if self._stage is not None and self._reached(self.threshold):
            stage, self._stage = self._stage, None
            try:
                done = apply_collapse(
                    current, stage, sessions_dir=self._sessions, summary_role=self.summary_role
                )
            except ConversationError as err:
                events.append(Event(Level.COLLAPSE, f"Not applied: {err}"))
                return current, False
            if not done.applied:
                events.append(Event(Level.COLLAPSE, f"Staged summary discarded: {done.reason}"))
                return current, False
            events.append(Event(Level.COLLAPSE, f"Applied: {done.reason}"))
            self.last_prompt_tokens = None
            return done.messages, True
        staging = self._reached(self.collapse_at) and not self._reached(self.threshold)
        if self._stage is None and self._job is None and staging:  # compaction comes otherwise
            options: dict[str, Any] = {"summarize": self.summarize, "keep_recent": self.keep_recent}
            if self.prompt is not None:
                options["used"] = self.prompt
            if self.background:
                self._job = StageJob(current, **options)
                events.append(Event(Level.COLLAPSE, "Staging a summary in the background"))
                return current, False
            try:
                self._stage = stage_collapse(current, **options)
                events.append(Event(Level.COLLAPSE, self._staged(self._stage)))
            except ConversationError as err:
                events.append(Event(Level.COLLAPSE, f"Not staged: {err}"))
        return current, False

    # A client's profile.
    def _too_few(self) -> str:
        profile = self.profile
        assert profile is not None
        return (
            f"fewer than {profile.min_messages} messages "
            f"({profile.client} {profile.version} does not compact so short a conversation)"
        )

    def _reread(self) -> str:
        """The instruction context read again from disk (the assembly kept for next time);
        "" when there is none to re-attach."""
        if self.assembly is None or not self.reattach_instructions:
            return ""
        self.assembly = self.assembly.reread()
        parts = (self.assembly.static_text, self.assembly.dynamic_text)
        return "\n\n".join(p for p in parts if p)

    def _reread_event(self) -> Event:
        count = sum(1 for s in self.assembly.sources if not s.dropped) if self.assembly else 0
        return Event(Level.COMPACT, f"Instruction context re-read from disk: {count} sources")

    def _context_now(self, current: list[Any], events: list[Event]) -> list[Any]:
        """The user's turn after an automatic compaction whose profile re-reads the
        instructions then: the context goes first in that message."""
        self._context_due = False
        text = self._reread()
        if not text:
            return current
        events.append(self._reread_event())
        last = current[-1]
        content = last["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        context = {"type": "text", "text": f"<system-reminder>\n{text}\n</system-reminder>"}
        return [*current[:-1], {**last, "content": [context, *blocks]}]

    def _profile_events(self, result: CompactionResult) -> list[Event]:
        """What was re-attached and what was dropped, by name."""
        kept_ids = {r.id for r in scan(result.kept).results}
        dropped = set(result.dropped_attachments)
        restored = [
            path
            for path, (_, _, call) in self._files.items()
            if path not in dropped and call not in kept_ids
        ]
        out = [Event(Level.COMPACT, f"Restored as reads: {_names(restored)}")]
        if dropped:
            out.append(Event(Level.COMPACT, f"Not restored: {_names(result.dropped_attachments)}"))
        if self._skills:
            out.append(Event(Level.COMPACT, f"Skills re-injected: {_names(self._skills)}"))
        return out

    @staticmethod
    def _staged(stage: Stage) -> str:
        return f"Staged a summary of messages {stage.start}-{stage.end - 1}"

    def _attachments(self) -> list[Attachment]:
        out = []
        if self.assembly is not None and self.reattach_instructions and self.profile is None:
            parts = (self.assembly.static_text, self.assembly.dynamic_text)
            text = "\n\n".join(p for p in parts if p)
            if text:
                out.append(Attachment(AttachmentKind.INSTRUCTIONS, "instructions", text))
        files = AttachmentKind.FILE
        out += [Attachment(files, p, text, n, i) for p, (n, text, i) in self._files.items()]
        skills = AttachmentKind.SKILL
        out += [Attachment(skills, name, text, n) for name, (n, text) in self._skills.items()]
        return out

    def _compact(
        self, current: list[Any], trigger: Trigger, events: list[Event], additional: str = ""
    ) -> CompactionResult | None:
        if self.summarize is None:
            events.append(Event(Level.COMPACT, "Not compacted: no summariser was given"))
            return None
        keep, shape = self.keep_recent, None
        if self.profile is not None:
            if len(current) < self.profile.min_messages:
                events.append(Event(Level.COMPACT, f"Not compacted: {self._too_few()}"))
                return None
            keep = self.keep_recent if trigger is Trigger.AUTO else self.profile.keep_on_manual
            now = trigger is Trigger.MANUAL or self.profile.reread_auto_now
            context = self._reread() if now else ""
            shape = ClientShape(self.profile, trigger, context, additional)
        try:
            result = compact(
                current,
                summarize=self.summarize,
                sessions_dir=self._sessions,
                keep_recent=keep,
                used=self.prompt,
                trigger=trigger,
                pre_tokens=self.last_prompt_tokens,
                attachments=self._attachments(),
                counter=self.counter,
                summary_role=self.summary_role,
                summary_prefix=self.summary_prefix,
                shape=shape,
            )
        except ConversationError as err:
            events.append(Event(Level.COMPACT, f"Not compacted: {err}"))
            return None
        events.append(
            Event(Level.COMPACT, f"Persisting {len(current)} messages to {result.raw_path}")
        )
        events.append(
            Event(Level.COMPACT, f"{result.pre_tokens} → (compressed, awaiting next LLM call)")
        )
        if result.dropped_attachments:
            names = ", ".join(shown(n, 120) for n in result.dropped_attachments)
            events.append(Event(Level.COMPACT, f"Attachments over the budget dropped: {names}"))
        if shape is not None:
            if shape.instructions:
                events.append(self._reread_event())
            events += self._profile_events(result)
            wanted = self.assembly is not None and self.reattach_instructions
            self._context_due = wanted and not shape.instructions
            if self._context_due:
                events.append(
                    Event(Level.COMPACT, "Instruction context: re-read at the next user turn")
                )
        self.last_prompt_tokens = None
        self._stage = None  # its span is gone
        return result


def _lines(context_window: int, profile: CompactionProfile | None) -> tuple[int | None, int | None]:
    """The auto-compact and warning lines: the profile's (None without a window), else the
    provider-neutral ones for `context_window`."""
    if profile is not None:
        return profile.auto_compact, profile.warning
    lines = compaction_thresholds(context_window)
    return lines.auto_compact, lines.warning


def _user_turn(messages: Sequence[Any]) -> bool:
    """Whether the last message is one the user wrote (text, not only tool results)."""
    last = messages[-1] if messages else None
    if not isinstance(last, dict) or last.get("role") != "user":
        return False
    content = last.get("content")
    if isinstance(content, str):
        return True
    blocks = content if isinstance(content, list) else []
    return any(isinstance(b, dict) and b.get("type") == "text" for b in blocks)


def _names(names: Collection[str]) -> str:
    return ", ".join(shown(n, 120) for n in names) or "none"
