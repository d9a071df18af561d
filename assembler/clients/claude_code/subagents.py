"""The agent types Claude Code's `Agent` tool starts, and what each receives (SPEC 4c,
recorded through 2.1.197 and 2.1.332: tests/data/clients/*/subagent-*.json).

Built in: `general-purpose` and `claude` (every tool, the instruction files byte for byte as
the main agent has them, the skills list); `Explore` and `Plan` (no instruction files at all,
only the date; the skills list; every tool but the editing ones); `statusline-setup` (Read
and Edit: the instruction files, no skills list); `fork` (2.1.332: the main agent's whole
conversation). Custom agents are the `*.md` files of `.claude/agents` (each directory from
cwd up to the git root, as the skills are found, the nearest first) and of the user's
`~/.claude/agents`: frontmatter `name` and `description` (both needed, or the client skips
the file), `tools` and `disallowedTools` (a comma-separated string or a list; without
`tools`, every tool), `model`, `omitClaudeMd` (2.1.332: no instruction files); the body is the
agent's prompt. A project agent wins over a user agent of the same name. A custom agent gets
the instruction files; the skills list only when its tools include `Skill` and its
disallowed tools do not.

Every directory is listed and every file read through the run's `Disk`, bounded: at most
`MAX_AGENT_FILES` definitions per directory, each read up to the policy's skip size.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from ... import codes
from ...discovery.context import Context, Run
from ...discovery.disk import Disk
from ...discovery.loader import place_of, reached_out
from ...discovery.reader import ReadStatus
from ...model import AgentType, Diagnostic, Layer, Source, Why
from ...parsing import frontmatter as fm
from ..base import Agents
from .codes import (
    AGENT_DUPLICATE,
    AGENT_FRONTMATTER,
    AGENT_NO_DESCRIPTION,
    AGENT_UNKNOWN_TOOL,
    SUBAGENTS_UNINFORMED,
)
from .settings import ClaudeSetup, read_setup
from .versions import Facts, facts, facts_at

AGENTS_DIR = "agents"
MAX_AGENT_FILES = 200  # definitions read under one agents directory (the rest: noted, skipped)
MAX_AGENT_ENTRIES = 20_000  # directory entries looked at under one agents directory
MAX_AGENT_DEPTH = 16  # directories nested below it
MAX_AGENT_BYTES = 16 * 1024 * 1024  # definitions read in one run, all directories together
SKILL_TOOL = "Skill"
BUILT_IN = "built-in"
# The tools the main agent has (2.1.197 and 2.1.332, recorded), and the older names a
# definition may still use; `mcp__server__tool` names and `Tool(pattern)` forms are accepted.
KNOWN_TOOLS = frozenset(
    {
        "Agent", "Bash", "BashOutput", "CronCreate", "CronDelete", "CronList", "Edit",
        "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Glob", "Grep", "KillShell",
        "ListAgents", "LS", "Monitor", "MultiEdit", "NotebookEdit", "NotebookRead", "Read",
        "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill", "SlashCommand", "Task",
        "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop", "TaskUpdate",
        "TodoWrite", "ToolSearch", "WebFetch", "WebSearch", "Workflow", "Write",
    }
)  # fmt: skip
_READ_ONLY_OUT = ("Agent", "Artifact", "ExitPlanMode", "Edit", "Write", "NotebookEdit")
_ARTIFACT_OUT = ("ArtifactComments", "ArtifactData", "ArtifactCheck")
_PROJECT_LAYERS = frozenset({Layer.PROJECT, Layer.LOCAL})
# Frontmatter keys the client reads in an agent definition (2.1.332's parser; lint: any
# other is unknown).
KEYS = frozenset(
    {
        "name", "description", "tools", "disallowedTools", "model", "color", "background",
        "omitClaudeMd", "memory", "isolation", "effort", "permissionMode", "maxTurns",
        "autoCompactWindow", "cacheTtl", "skills", "initialPrompt", "observer",
        "observerMessage", "observeSubagents", "observeToolResults", "mcpServers", "hooks",
    }
)  # fmt: skip


def built_in(known: Facts) -> tuple[AgentType, ...]:
    """The built-in agent types at a release, in the client's listing order."""
    read_only_out = (*_READ_ONLY_OUT[:2], *(_ARTIFACT_OUT if known.artifact_tools else ()))
    read_only_out += _READ_ONLY_OUT[2:]
    every = AgentType("claude", "Catch-all for any task that doesn't fit a more specific agent",
                      BUILT_IN, instructions=True, skills=True, tools=())  # fmt: skip
    explore_model = "" if known.explore_inherits_model else "haiku"
    types = [
        every,
        AgentType("Explore", "Fast read-only search agent for locating code", BUILT_IN,
                  instructions=False, skills=True, tools=(), excluded=read_only_out,
                  model=explore_model),
        every._replace(name="general-purpose", description="General-purpose agent for "
                       "researching complex questions and executing multi-step tasks"),
        AgentType("Plan", "Software architect agent for designing implementation plans",
                  BUILT_IN, instructions=False, skills=True, tools=(), excluded=read_only_out),
        AgentType("statusline-setup", "Configures the user's Claude Code status line setting",
                  BUILT_IN, instructions=True, skills=False, tools=("Read", "Edit")),
    ]  # fmt: skip
    if known.fork_agent:
        types.append(
            AgentType("fork", "The main agent's whole conversation, continued in the background",
                      BUILT_IN, instructions=True, skills=True, tools=(), shares_parent=True)
        )  # fmt: skip
    return tuple(types)


def agent_dirs(ctx: Context, setup: ClaudeSetup) -> Iterator[tuple[Path, Layer]]:
    """Where custom agents are defined, the one that wins first: each `.claude/agents` from
    cwd up to the git root (outside git: up to, not including, home), then the user's."""
    home = os.path.normcase(os.path.abspath(ctx.home))
    directory = ctx.cwd
    while os.path.normcase(str(directory)) != home:
        yield directory / ".claude" / AGENTS_DIR, Layer.PROJECT
        if directory == ctx.git_root or directory.parent == directory:
            break
        directory = directory.parent
    yield setup.config_dir / AGENTS_DIR, Layer.USER


class Definition(NamedTuple):
    """One custom agent's file as read: its agent (None when the client skips it) and what
    is wrong with it."""

    path: str
    layer: Layer
    agent: AgentType | None
    problems: tuple[tuple[codes.Code, str], ...]


def definition_files(directory: Path, disk: Disk) -> tuple[list[str], str]:
    """The `*.md` files under one agents directory (subdirectories too, as the client finds
    them), depth first by name, each directory entered once: at most `MAX_AGENT_FILES` files,
    `MAX_AGENT_ENTRIES` entries looked at, `MAX_AGENT_DEPTH` levels; and which bound cut the
    walk short ("" when none did). No recursion: the depth is the repository's choice."""
    found: list[str] = []
    visited: set[str] = set()
    stack = [(str(directory), 0)]
    looked = 0
    while stack:
        where, depth = stack.pop()
        real = disk.realpath(where)
        if real in visited or not disk.is_dir(where):
            continue
        visited.add(real)
        try:
            entries = sorted(disk.scandir(where), key=lambda e: e.name)
        except OSError:
            continue  # unreadable: no agents there, as for the client
        looked += len(entries)
        if looked > MAX_AGENT_ENTRIES:
            return found, f"over {MAX_AGENT_ENTRIES:,} entries"
        below = []
        for entry in entries:
            path = os.path.join(where, entry.name)
            if _is_dir(entry):
                below.append(path)
            elif entry.name.endswith(".md"):
                if len(found) == MAX_AGENT_FILES:
                    return found, f"over {MAX_AGENT_FILES:,} definitions"
                found.append(path)
        if below and depth == MAX_AGENT_DEPTH:
            return found, f"nested over {MAX_AGENT_DEPTH} directories deep"
        stack += [(path, depth + 1) for path in reversed(below)]
    return found, ""


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # through a link too: a loop is entered once (`visited`)
    except OSError:
        return False


def read_definition(
    path: str, layer: Layer, disk: Disk, limit: int, known: Facts
) -> Definition | None:
    """A custom agent's definition (None: not a regular, readable file, skipped)."""
    result = disk.read(path, limit)
    if result.status in (ReadStatus.MISSING, ReadStatus.DIRECTORY):
        return None
    if not result.ok:
        why = f"{result.status.value}: the client cannot read it either; fix the file"
        return Definition(path, layer, None, ((AGENT_FRONTMATTER, why),))
    return parse_definition(path, layer, result.text, known)


def parse_definition(path: str, layer: Layer, text: str, known: Facts) -> Definition:
    """What the client at a release makes of a definition's text: `name` and `description`
    needed (a name may not start with `-`), `tools` and `disallowedTools` (the skills list
    goes with the Skill tool), `model`, and from 2.1.332 `omitClaudeMd`."""
    front, body = fm.split_frontmatter(text)
    problems: list[tuple[codes.Code, str]] = []
    if front.too_complex:
        why = f"frontmatter {front.too_complex}: ctxasm leaves the agent out; simplify it"
        return Definition(path, layer, None, ((AGENT_FRONTMATTER, why),))
    if front.error:
        why = f"frontmatter invalid YAML ({front.error}): the client skips the agent"
        return Definition(path, layer, None, ((AGENT_FRONTMATTER, why),))
    data = dict(front.data)
    name, description = _text(data.get("name")), _text(data.get("description"))
    if not name or name.startswith("-"):
        why = "no name:" if not name else f"name {name!r} starts with '-':"
        problems.append((AGENT_FRONTMATTER, f"{why} the client skips the agent; name it"))
    if not description:
        problems.append((AGENT_NO_DESCRIPTION, "no description: the client skips the agent (and the "
                         "main agent picks agents by it); add one"))  # fmt: skip
    tools = _tools("tools", data.get("tools"), problems)
    disallowed = _tools("disallowedTools", data.get("disallowedTools"), problems) or ()
    model = data.get("model")
    if model is not None and not isinstance(model, str):
        problems.append((AGENT_FRONTMATTER, "model: is not a string; the client ignores it"))
    for key in sorted(k for k in data if k not in KEYS):
        problems.append((AGENT_FRONTMATTER, f"frontmatter key {key!r} is not read by the client"))
    if not name or name.startswith("-") or not description:
        return Definition(path, layer, None, tuple(problems))
    omits = data.get("omitClaudeMd") in (True, "true") and known.omit_claude_md
    skills = (tools is None or SKILL_TOOL in tools) and SKILL_TOOL not in disallowed
    agent = AgentType(
        name, description, path, instructions=not omits, skills=skills,
        tools=tools or (), excluded=disallowed, prompt=body.strip(),
        model=model.strip() if isinstance(model, str) and model.strip() != "inherit" else "",
    )  # fmt: skip
    return Definition(path, layer, agent, tuple(problems))


def definition_problems(path: Path, text: str) -> tuple[tuple[codes.Code, str], ...]:
    """What lint says of one definition file (at the newest release: the checks do not
    depend on it)."""
    return parse_definition(str(path), Layer.PROJECT, text, facts_at("")).problems


def _text(value: object) -> str:
    """A frontmatter string, trimmed ("" for anything else)."""
    return value.strip() if isinstance(value, str) else ""


def _tools(
    key: str, value: object, problems: list[tuple[codes.Code, str]]
) -> tuple[str, ...] | None:
    """The tools a definition lists under `key` (None: not given, or every tool), unknown
    names noted."""
    if value is None:
        return None
    if isinstance(value, str):
        names = [n.strip() for n in value.split(",")]
    elif isinstance(value, list) and all(isinstance(n, str) for n in value):
        names = [n.strip() for n in value]
    else:
        problems.append((AGENT_FRONTMATTER, f"{key}: is neither a comma-separated string nor "
                         "a list of names; the client ignores it"))  # fmt: skip
        return None
    names = [n for n in names if n]
    if names == ["*"]:
        return None
    for name in dict.fromkeys(names):  # each name once, however often it is listed
        bare = name.split("(", 1)[0]
        if bare not in KNOWN_TOOLS and not bare.startswith("mcp__"):
            problems.append((AGENT_UNKNOWN_TOOL, f"{key}: {name!r} is no tool of the client: "
                             "check the spelling"))  # fmt: skip
    return tuple(names)


def definitions(run: Run, setup: ClaudeSetup) -> tuple[list[Definition], list[Diagnostic]]:
    """Every custom agent definition, the winning one of each name first, and what the
    listing found (directories cut short)."""
    ctx = run.context
    found: list[Definition] = []
    notes: list[Diagnostic] = []
    left = MAX_AGENT_BYTES
    for directory, layer in agent_dirs(ctx, setup):
        files, cut = definition_files(directory, run.disk)
        if cut:
            notes.append(AGENT_FRONTMATTER.at(
                ctx.display(str(directory)),
                f"agents directory {cut}: the rest is not read (the client would read on); "
                "check for a symlink to a large directory",
            ))  # fmt: skip
        for path in files:
            size = _size(run.disk, path)
            if size > left:
                notes.append(AGENT_FRONTMATTER.at(ctx.display(path), (
                    f"past {MAX_AGENT_BYTES // 1024 // 1024} MiB of agent definitions in one "
                    "run: this one and the rest are not read"
                )))  # fmt: skip
                return found, notes
            left -= size
            read = read_definition(path, layer, run.disk, run.policy.limits.skip_bytes, facts(run))
            if read is None:
                continue
            found.append(read)
            reached = None if layer is Layer.USER else _reached_out(ctx, path, run.disk)
            if reached is not None:
                real = ctx.display(run.disk.realpath(path))
                notes.append(reached.at(ctx.display(path), (
                    f"agent definition is read from outside the project: {real}; the client "
                    "uses it too (its prompt and tools): make sure it belongs here"
                )))  # fmt: skip
    return found, notes


def _size(disk: Disk, path: str) -> int:
    """A regular file's size (what a read may take); 0 for anything the reader refuses."""
    try:
        st = disk.stat(path)
    except (OSError, ValueError):
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


def _reached_out(ctx: Context, path: str, disk: Disk) -> codes.Code | None:
    """`loader.reached_out` for a definition of the project or of a directory above it."""
    found, root = os.path.normpath(path), str(ctx.project_root)
    return reached_out(found, disk.realpath(path), place_of(found, root), str(ctx.home))


def agents(run: Run, started: Sequence[Source] = ()) -> Agents:
    """The agent types at the release `run` models: built in, then custom agents, one per
    name (a project's wins over the user's); with every problem of the definitions, and
    where the files the main agent `started` with speak of subagents some types never see."""
    setup = read_setup(run.context, run.disk, facts(run))
    types = list(built_in(facts(run)))
    found, notes = definitions(run, setup)
    diagnostics = list(notes)
    seen: dict[str, str] = {}
    for item in found:
        shown = run.context.display(item.path)
        diagnostics += [code.at(shown, message) for code, message in item.problems]
        if item.agent is None:
            continue
        if item.agent.name in seen:
            diagnostics.append(AGENT_DUPLICATE.at(
                shown, f"agent {item.agent.name!r} is defined in {seen[item.agent.name]} too, "
                "which wins: rename one",
            ))  # fmt: skip
            continue
        seen[item.agent.name] = shown
        # A custom agent of a built-in one's name replaces it.
        types = [t for t in types if t.name != item.agent.name]
        types.append(item.agent._replace(origin=shown))
    blind = [t.name for t in types if not t.instructions]
    diagnostics += uninformed(run.context, started, blind)
    note = f"{' and '.join(blind)} start without your CLAUDE.md files" if blind else ""
    return Agents(tuple(types), tuple(diagnostics), note)


# Words of an instruction file that speak to subagents: "subagent(s)", "sub-agent", or a type
# that starts without the instruction files named as an agent ("the Explore agent").
_SUBAGENT_WORDS = re.compile(r"\bsub-?agents?\b", re.IGNORECASE)


def uninformed(ctx: Context, started: Sequence[Source], blind: Sequence[str]) -> list[Diagnostic]:
    """CTX414 on each instruction file (of the project) that speaks of subagents, when some
    agent types (`blind`) start without the instruction files."""
    if not blind:
        return []
    named = re.compile(
        r"\b(?:" + "|".join(re.escape(n) for n in blind) + r")\s+(?:sub-?)?agents?\b"
    )
    out = []
    for source in started:
        if source.lazy or source.layer not in _PROJECT_LAYERS or source.reason.why is Why.SKILLS:
            continue
        if _SUBAGENT_WORDS.search(source.content) or named.search(source.content):
            out.append(SUBAGENTS_UNINFORMED.at(source.display, (
                f"speaks of subagents, but {' and '.join(blind)} start without the instruction "
                "files: put what they must know in the prompt the main agent writes for them"
            )))  # fmt: skip
    return out
