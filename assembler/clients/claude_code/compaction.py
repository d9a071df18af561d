"""What Claude Code keeps at a compaction (SPEC 4c, recorded at 2.1.197 and 2.1.332).

`after_compact`: what the model has in the first request after a compaction, source by
source. `profile`: how its runtime compacts (the lines, the request, the continuation), for
`conversation.Conversation`. What differs between releases is in `versions.FACTS`.

The words of the summary instruction and of the continuation are ctxasm's own, written to
the client's structure (a plain-text-only head, the task, an `<analysis>` checklist, nine
sections, an example, a note that more instructions may follow, then, after any additional
instructions, a closing reminder); the client's own prompt text is not copied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...compaction import (
    AfterCompact,
    Compaction,
    CompactionProfile,
    Fate,
    Survivor,
    Trigger,
    numbered,
)
from ...discovery.disk import Disk
from ...display import as_client_reads
from ...model import Layer, Skill, Source, Why
from .versions import Facts, facts_at

RESTORE_LIMIT = 5  # files restored as reads after a compaction
READ_MAX_LINES = 2_000  # what one read returns by default: the restored file's lines
MIN_MESSAGES = 3  # 2.1.197 refused two messages and compacted four (recorded)
# The lines (SPEC 4c): the effective window keeps the summary's output reserve; the
# automatic compaction starts a buffer below it, the warning another below that.
SUMMARY_RESERVE = 20_000
AUTO_BUFFER = 13_000
WARNING_BUFFER = 20_000
WINDOW_VARIABLE = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"
PERCENT_VARIABLE = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"
SMALLEST_WINDOW = SUMMARY_RESERVE + AUTO_BUFFER + 1  # below it the line is not above zero

_NOT_INSTRUCTIONS = frozenset({Why.SKILLS, Why.ENVIRONMENT})


# --- the first request after a compaction -------------------------------------------------


def after_compact(
    client: str,
    sources: Sequence[Source],
    reads: Sequence[tuple[str, str]],
    skills: Sequence[tuple[Skill, str]],
    compaction: Compaction,
    version: str,
    disk: Disk,
    max_bytes: int,
) -> AfterCompact:
    """The fate of each source of `sources` (an assembly's, start and reads) at `compaction`
    (`client`: the client's name, for the value).

    `reads`: the files the model read itself, in order, as (absolute path, display);
    `skills`: the skills invoked before the compaction with their bodies."""
    known = facts_at(version)
    survivors = [*_start(sources, compaction, known)]
    survivors += _restored(sources, reads, compaction, disk, max_bytes)
    survivors += _skills(skills, compaction)
    survivors += _lists(compaction, known)
    notes = (
        "everything a subagent attached is lost: only its final text reached the main agent",
        "the summary is written by the model at the compaction: it is not shown here",
    )
    return AfterCompact(
        compaction,
        client,
        version,
        tuple(survivors),
        RESTORE_LIMIT,
        _when(compaction, known),
        _layout(compaction, known),
        notes,
    )


def _layout(compaction: Compaction, known: Facts) -> tuple[str, ...]:
    """The order of the start blocks, the summary and the restored reads (recorded)."""
    if compaction.trigger is Trigger.MANUAL and known.summary_first_manual:
        return ("summary", "reads", "start")
    if compaction.trigger is Trigger.AUTO and known.summary_last_auto:
        return ("reads", "start", "summary")
    return ("start", "summary", "reads")


def _when(compaction: Compaction, known: Facts) -> str:
    if compaction.continued:
        return "when the continued session starts"
    if compaction.trigger is Trigger.MANUAL:
        return "right after the compaction"
    return "in the same turn" if known.reread_auto_same_turn else "at the next user turn"


def _start(sources: Sequence[Source], compaction: Compaction, known: Facts) -> list[Survivor]:
    """The files loaded at start are read again from disk (an edit since shows)."""
    fate = Fate.REREAD
    later = compaction.trigger is Trigger.AUTO and not known.reread_auto_same_turn
    if later and not compaction.continued:
        fate = Fate.LATER
    out = []
    for s in sources:
        if s.lazy or s.dropped:
            continue
        if s.reason.why in _NOT_INSTRUCTIONS:
            continue  # ctxasm's environment section; the skills list is the client's: `_lists`
        why = f"read again from disk {_when(compaction, known)}"
        out.append(Survivor("instructions", s.display, as_client_reads(s.path), fate, why))
    return out


def _lists(compaction: Compaction, known: Facts) -> list[Survivor]:
    """The skills list (the client lists its own skills too, so there is always one) and the
    agent-type list. A continued session sends the skills list at its start."""
    resent = known.resends_skills_list or compaction.continued
    why = "the skills list is sent again" if resent else "the skills list is not sent again"
    agents = "the agent-type list is attached again"
    return [
        Survivor("skills list", "skills list", "", Fate.REREAD if resent else Fate.LOST, why),
        Survivor("agent types", "agent types", "", Fate.RESTORED, agents),
    ]


def _restored(
    sources: Sequence[Source],
    reads: Sequence[tuple[str, str]],
    compaction: Compaction,
    disk: Disk,
    max_bytes: int,
) -> list[Survivor]:
    """Files attached on reads and files the model read: up to `RESTORE_LIMIT` come back as a
    read call and its result, in the order recorded (the attached files newest first, then
    the files read, newest first); which of more candidates the client leaves out is not
    stable between runs, so each is a candidate. A continued session restores only the
    files the model read itself; a file the model could not read is no candidate."""
    attached = [
        s for s in sources if s.lazy and not s.dropped and s.reason.why not in _NOT_INSTRUCTIONS
    ]
    lost: list[Survivor] = []
    candidates: list[tuple[str, str, str, str]] = []  # kind, display, path, content
    for s in reversed(attached):
        path = as_client_reads(s.path)
        if compaction.continued:
            why = "a continued session restores only the files the model read itself"
            lost.append(Survivor("attached", s.display, path, Fate.LOST, why))
        else:
            text = _read_text(disk, s.path, max_bytes)
            candidates.append(("attached", s.display, path, text or ""))
    for path, display in reversed(reads):
        text = _read_text(disk, path, max_bytes)
        if text is not None:
            candidates.append(("read", display, as_client_reads(path), text))
    many = len(candidates) > RESTORE_LIMIT
    fate = Fate.CANDIDATE if many else Fate.RESTORED
    why = (
        f"{len(candidates)} candidates for {RESTORE_LIMIT} places: the client's pick is not stable"
        if many
        else "sent again as a read call and its result"
    )
    out = [
        Survivor(kind, display, path, fate, why, numbered(text, max_lines=READ_MAX_LINES))
        for kind, display, path, text in candidates
    ]
    return out + lost


def _read_text(disk: Disk, path: str, max_bytes: int) -> str | None:
    """A file's text as a read gets it now, frontmatter and all (bounded; None when
    unreadable)."""
    try:
        found = disk.read(path, max_bytes)
    except OSError:
        return None
    return found.text if found.ok else None


# Where a skill comes from, as the re-injected block names it (`Path: <source>:<name>`).
_SKILL_SOURCES = {Layer.USER: "userSettings", Layer.PROJECT: "projectSettings"}


def _skills(skills: Sequence[tuple[Skill, str]], compaction: Compaction) -> list[Survivor]:
    """Skills invoked before the compaction: re-injected (content: the `Path:` line and the
    body as the client expands it, as recorded), except in a continued session."""
    if compaction.continued:
        why = "a continued session does not re-inject invoked skills"
        return [Survivor("skill", s.name, s.path, Fate.LOST, why) for s, _ in skills]
    why = "re-injected with its body (skills invoked earlier in this session)"
    out = []
    for s, body in skills:
        source = _SKILL_SOURCES.get(s.layer, "projectSettings")
        text = f"Path: {source}:{s.name}\n\n{body}"
        out.append(Survivor("skill", s.name, s.path, Fate.RESTORED, why, text))
    return out


# --- the runtime's profile ------------------------------------------------------------------

_HEAD = """\
Answer in plain text only. No tools are available for this reply: a tool call will be \
refused and the turn wasted.

Your task: write a detailed account of the conversation so far, complete enough that the \
work can go on from it alone, without the messages it replaces. Keep the technical detail: \
file names, code, commands, errors, decisions and what the user asked for.

First think it through inside <analysis> tags:
1. Walk through the conversation in order. For each part, note what the user asked and \
meant, what you did about it, the decisions taken, the files and code involved (names, \
snippets, signatures, edits), the errors met and how they were fixed, and every correction \
the user made.
2. Check that the account is accurate and that nothing above is missing.

Then write the account inside <summary> tags, in nine sections:
1. Primary Request and Intent: everything the user asked for, in detail.
2. Key Technical Concepts: the technologies, frameworks and ideas discussed.
3. Files and Code Sections: each file looked at, changed or created, why it matters, and the \
code that matters most.
4. Errors and fixes: each error met, how it was fixed, and what the user said about it.
5. Problem Solving: problems solved, and any troubleshooting still going on.
6. All user messages: every message the user wrote that is not a tool result.{user_turns}
7. Pending Tasks: what you were asked to do and have not done yet.
8. Current Work: what was being done just before this request, in detail, with file names \
and code.
9. Optional Next Step: the next step, only if it follows directly from the latest request; \
quote the latest messages word for word to show where the work stopped.

The shape of the answer:
<example>
<analysis>
[your walk through the conversation]
</analysis>

<summary>
1. Primary Request and Intent:
   [details]

2. Key Technical Concepts:
   - [concept]

3. Files and Code Sections:
   - [file name]
      - [why it matters, what changed]
      - [code]

4. Errors and fixes:
   - [error]: [fix]

5. Problem Solving:
   [description]

6. All user messages:
   - [message]

7. Pending Tasks:
   - [task]

8. Current Work:
   [description]

9. Optional Next Step:
   [step]
</summary>
</example>

More instructions for this summary may follow; apply them as well."""
_USER_TURNS = (
    " Count only turns with the user role as user messages; this request to summarise is "
    "not one of them."
)
_TAIL = "Reminder: reply with text only, an <analysis> then a <summary>, and call no tools."
_CONTINUATION = (
    "This conversation goes on from an earlier one that outgrew the context window. The "
    "earlier part is summarised below."
)


def profile(
    client: str, version: str, environ: Mapping[str, str], context_window: int | None
) -> CompactionProfile:
    """How the release compacts: `context_window` is the model's configured window (None:
    none configured, so no compaction at a threshold, only when the prompt is refused as too
    long); `CLAUDE_CODE_AUTO_COMPACT_WINDOW` sets the window, `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`
    moves the automatic line to that percentage of the effective window (never above it)."""
    known = facts_at(version)
    notes: list[str] = []
    window = context_window
    asked = _number(environ, WINDOW_VARIABLE, SMALLEST_WINDOW, None, notes)
    if asked is not None:
        window = asked
    effective = auto = warning = None
    if window is not None:
        effective = window - SUMMARY_RESERVE
        auto = effective - AUTO_BUFFER
        percent = _number(environ, PERCENT_VARIABLE, 1, 100, notes)
        if percent is not None:
            auto = min(auto, effective * percent // 100)
        warning = max(0, auto - WARNING_BUFFER)
    head = _HEAD.format(user_turns=_USER_TURNS if known.summary_user_turns_only else "")
    return CompactionProfile(
        client,
        version,
        window,
        effective,
        auto,
        warning,
        head,
        _TAIL,
        _CONTINUATION,
        restore_limit=RESTORE_LIMIT,
        min_messages=0 if known.compacts_few_messages else MIN_MESSAGES,
        keep_on_manual=1,
        reread_auto_now=known.reread_auto_same_turn,
        layout_manual=_layout(Compaction(Trigger.MANUAL), known),
        layout_auto=_layout(Compaction(Trigger.AUTO), known),
        lists_tools=known.continuation_lists_tools,
        says_kept_verbatim=known.continuation_lists_tools,
        resends_skills_list=known.resends_skills_list,
        notes=tuple(notes),
    )


def _number(
    environ: Mapping[str, str], name: str, low: int, high: int | None, notes: list[str]
) -> int | None:
    """The whole number `name` sets within [low, high], else None (a bad value is noted)."""
    text = environ.get(name, "").strip()
    if not text:
        return None
    if text.isascii() and text.isdigit() and len(text) <= 12:
        value = int(text)
        if value >= low and (high is None or value <= high):
            return value
    bound = f"{low:,} to {high:,}" if high is not None else f"at least {low:,}"
    notes.append(f"{name}={text[:40]!r} is ignored: give a whole number, {bound}")
    return None
