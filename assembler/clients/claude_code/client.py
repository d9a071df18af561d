"""The `claude-code` client: what Claude Code loads at session start and on touch, in its order.

Order (SPEC section 4, checked against 2.1.197 and 2.1.332; what differs between them is
`versions.FACTS`): managed file, managed settings'
`claudeMd`, managed rules; user file and rules; then every directory from the filesystem root
(excluded) down to cwd, not bounded by the git root, each giving `CLAUDE.md`,
`.claude/CLAUDE.md`, unconditional `.claude/rules/**/*.md`, `CLAUDE.local.md`; auto memory
last; then the skills index. Reading a file below cwd attaches nested files and matching
conditional rules (`lazy`). The `claude-code` format is the client's first user
message, byte for byte.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from ... import codes
from ...compaction import AfterCompact, Compaction, CompactionProfile, Fate
from ...discovery.context import Context, Discovery, LoadNote, Run, ancestors
from ...discovery.disk import Disk
from ...discovery.loader import Loaded, Loader, LoaderState, Reading, cwd_decision, text_source
from ...discovery.locations import is_within
from ...discovery.prefixes import Prefixes
from ...discovery.rules import RuleSet, load_rules
from ...display import PATTERN_CHARS, as_client_reads, shown
from ...model import Assembled, Layer, Reason, Skill, Source, Why
from ...parsing.markdown import strip_block_comments
from ...tokens import estimate_tokens
from ...versions import ClientVersion
from ..base import (
    Advice,
    Agents,
    Client,
    FileKind,
    FileNote,
    FileRole,
    FormatContext,
    Tracked,
    role_key,
)
from ..headless import Headless
from .codes import CODES
from .headless import ClaudeCodeHeadless
from .settings import (
    CONFIG_DIR_VARIABLE,
    MANAGED_SETTINGS_DISPLAY,
    ClaudeSetup,
    auto_memory,
    exclude_matcher,
    read_setup,
    read_setup_shared,
    reading,
)
from .versions import TABLE, Facts, facts, facts_at

NAME = "claude-code"

# Claude Code's per-type descriptions in its first user message (SPEC section 4, 2.1.x).
DESCRIPTIONS = {
    Layer.MANAGED: "organization-managed policy instructions",
    Layer.USER: "user's private global instructions for all projects",
    Layer.PROJECT: "project instructions, checked into the codebase",
    Layer.LOCAL: "user's private project instructions, not checked in",
    Layer.MEMORY: "user's auto-memory, persists across conversations",
}
_NOT_CLAUDE_MD = frozenset({Why.SKILLS, Why.ENVIRONMENT})  # ours: the client sends them elsewhere
_IN_CWD = Reason(Why.CWD, "in cwd")
_ANCESTOR = Reason(Why.ANCESTOR, "ancestor of cwd")
# The date Claude Code puts in its first user message, when set (else today's).
DATE_VARIABLE = "CLAUDE_CODE_OVERRIDE_DATE"
_FILE_NAMES = {"CLAUDE.md": FileKind.INSTRUCTIONS, "CLAUDE.local.md": FileKind.LOCAL}


class ClaudeCode(Client[ClaudeSetup]):
    name = NAME
    title = "Claude Code"
    # Read by name, ignored by git or not (`CLAUDE.local.md` is ignored by design), like the
    # rules; `.claude/CLAUDE.local.md`, never read, is checked all the same (CTX401).
    read_when_ignored = ("**/CLAUDE.md", "**/CLAUDE.local.md", "**/.claude/rules/**/*.md")
    scratch_dirs = (".claude/worktrees",)  # `claude --worktree` checks the project out here
    skill_homes = (".claude",)
    home_variables = (CONFIG_DIR_VARIABLE,)
    advice = Advice(
        split="move detail into .claude/rules or imported files",
        large="Claude Code warns this hurts performance; split it",
        too_large="Claude Code skips it silently; split it",
        external_import=(
            "Claude Code drops it unless external imports are approved (it asks at start; "
            "approving may leak files); move or copy it"
        ),
        deeper_start=(
            "approve external imports, or import it from those directories' CLAUDE.md too"
        ),
    )
    versions = TABLE
    version_command = ("claude", "--version")
    # Its own switches that keep it off the network (SPEC 4b: running it headless).
    version_environ = MappingProxyType(
        {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    )
    # cwd's `autoMemoryDirectory` (local settings; the checked-in file's is ignored) and
    # `claudeMdExcludes`, read from the directory the client starts in.
    start_settings = (".claude/settings.json", ".claude/settings.local.json")
    instruction_files = (
        r"(?:^|/)(?:CLAUDE\.md|CLAUDE\.local\.md|MEMORY\.md|\.claude/CLAUDE\.md|\.claude/rules/.+"
        r"|\.claude/agents/.+\.md)$"
    )
    own_codes = CODES
    lint_codes = frozenset(entry.code for entry in (*codes.LINT_CODES, *CODES) if entry.lint)

    @property
    def formats(self) -> Mapping[str, FormatContext]:
        return {NAME: first_user_message}

    def reattaches_start_files(self, version: ClientVersion) -> bool:
        return not facts_at(version.modelled).lazy_skips_start_imports

    def reading(self, run: Run) -> Reading:
        return reading(run)

    def discover(self, run: Run) -> Discovery[ClaudeSetup]:
        prefixes = _shared(run)
        known = facts(run)
        setup = _setup(run, prefixes, known)
        excludes = exclude_matcher(setup.settings.excludes, run.disk)
        loader = Loader(run, exclude=excludes.excluded, reading=self.reading(run))
        origin = dict(zip(setup.settings.excludes, setup.settings.exclude_files, strict=True))
        for pattern, why in excludes.refused:
            loader.note(
                codes.GLOB_TOO_COMPLEX,
                origin.get(pattern, "claudeMdExcludes"),
                f"pattern {shown(pattern, PATTERN_CHARS)!r} is refused ({why}) and excludes nothing: simplify it",
            )
        for path, problem in setup.settings.problems:
            loader.note(codes.SETTINGS_INVALID, path, problem)
        out = _start_and_ancestors(run, setup, loader, prefixes)
        memory = _auto_memory(run.context, setup, loader, known)
        if memory is not None:
            out.append(memory)
        if known.agents_md:
            from .agents import agents_md  # the plugin of the releases that have it

            out, nested = agents_md(run, setup, loader, out)
            setup = setup._replace(nested_agents_md=nested)
        sources = tuple(item.source for item in out)
        diagnostics = tuple(loader.diagnostics)
        deferred = tuple(item.source for item in loader.deferred)
        notes = tuple(loader.notes)  # what lint reports for the start: see `Loader.notes`
        if not run.policy.skills:
            return Discovery(sources, diagnostics, deferred, state=setup, notes=notes)
        from .skills import discover_skills  # the index is optional (policy)

        skills, index, skill_notes = discover_skills(run, setup)
        return Discovery(
            (*sources, *((index,) if index else ())),
            (*diagnostics, *skill_notes),
            deferred,
            skills,
            setup,
            notes,
        )

    def agents(self, run: Run, started: Sequence[Source] = ()) -> Agents:
        from .subagents import agents  # read only when a subagent is asked about

        return agents(run, started)

    def date(self, environ: Mapping[str, str]) -> str | None:
        return environ.get(DATE_VARIABLE) or None

    def managed_dir(self, platform: str) -> Path | None:
        if platform == "darwin":
            return Path("/Library/Application Support/ClaudeCode")
        if platform.startswith("win"):
            return Path("C:/Program Files/ClaudeCode")
        return Path("/etc/claude-code")

    def user_dir(self, home: Path) -> Path | None:
        return home / ".claude"

    def follows_imports_outside_cwd(self, run: Run) -> bool:
        return _setup(run, _shared(run), facts(run)).include_external

    def touch(
        self, run: Run, state: ClaudeSetup, target: Path, already: Collection[str]
    ) -> Discovery[ClaudeSetup]:
        from . import lazy  # only a touch needs it

        return lazy.touch(run, state, target, already)

    def skill_text(self, skill: Skill, max_bytes: int) -> str:
        from .skills import skill_text

        return skill_text(skill, max_bytes)

    def after_compact(
        self,
        sources: Sequence[Source],
        reads: Sequence[tuple[str, str]],
        skills: Sequence[tuple[Skill, str]],
        compaction: Compaction,
        version: ClientVersion,
        disk: Disk,
        max_bytes: int,
    ) -> AfterCompact:
        from .compaction import after_compact  # only a compaction needs it

        return after_compact(
            self.name, sources, reads, skills, compaction, version.modelled, disk, max_bytes
        )

    def compaction_profile(
        self, version: ClientVersion, environ: Mapping[str, str], context_window: int | None
    ) -> CompactionProfile:
        from .compaction import profile

        return profile(self.name, version.modelled, environ, context_window)

    def check_key(self, path: Path) -> Hashable:
        return role_key(self.classify(path), path)  # its checks: the kind, the name, a rule's globs

    def check_file(
        self, path: Path, text: str | None, tracked: Tracked | None
    ) -> Sequence[FileNote]:
        from . import checks  # only lint checks files

        role = self.classify(path)
        return checks.check_file(role, path, text, tracked) if role is not None else ()

    def classify(self, path: Path) -> FileRole | None:
        parts = path.parts
        if ".claude" in parts[:-1]:
            at = len(parts) - 1 - parts[::-1].index(".claude")
            inside = parts[at + 1 :]
            project = path.parents[len(inside)]  # the directory holding `.claude`
            if inside[:1] == ("rules",) and len(inside) > 1:  # only .md files load
                found = FileKind.RULE if path.name.endswith(".md") else FileKind.NEVER_LOADED
                return FileRole(found, project)
            if inside == ("CLAUDE.local.md",):
                return FileRole(FileKind.NEVER_LOADED, project)
            if inside == ("CLAUDE.md",):
                return FileRole(FileKind.INSTRUCTIONS, project)
            if inside[:1] == ("agents",) and len(inside) > 1 and inside[-1].endswith(".md"):
                return FileRole(FileKind.AGENT, project)
        if path.name == "MEMORY.md":
            return FileRole(FileKind.MEMORY, path.parent)
        kind = _FILE_NAMES.get(path.name)
        return FileRole(kind, path.parent) if kind is not None else None

    @property
    def headless(self) -> Headless:
        return HEADLESS


CLIENT = ClaudeCode()


# --- discovery, in the client's order -----------------------------------------------------


def _shared(run: Run) -> Prefixes[_Prefix] | None:
    """The run's shared prefixes when they are this client's under this run's policy."""
    prefixes = run.prefixes
    owner = (run.policy, run.context.environ, run.counter, run.version.modelled)
    if prefixes is not None and not prefixes.serves(owner):
        return None  # another run's: not shared
    return prefixes


def _setup(run: Run, prefixes: Prefixes[_Prefix] | None, known: Facts) -> ClaudeSetup:
    """The settings and approval of the run's start (kept per run with shared prefixes)."""
    if prefixes is not None:
        return read_setup_shared(run.context, run.disk, prefixes.memo, known)
    return read_setup(run.context, run.disk, known)


def _managed(run: Run, setup: ClaudeSetup, loader: Loader) -> list[Loaded]:
    """The managed file, managed settings' `claudeMd`, managed rules."""
    ctx, approved = run.context, setup.include_external
    managed = str(ctx.managed_dir / "CLAUDE.md")
    reason = Reason(Why.MANAGED_FILE, "managed policy file")
    out = loader.load(managed, Layer.MANAGED, reason, approved)
    if setup.settings.managed_claude_md is not None:
        out += _managed_settings_source(run, setup.settings.managed_claude_md, loader)
    rules = RuleSet(
        str(ctx.managed_dir / ".claude" / "rules"), Layer.MANAGED, str(ctx.cwd), approved
    )
    return out + load_rules(loader, rules, conditional=False)


def _user(setup: ClaudeSetup, loader: Loader) -> list[Loaded]:
    """`CLAUDE_CONFIG_DIR` or ~/.claude: user files may import from anywhere."""
    user_file = str(setup.config_dir / "CLAUDE.md")
    out = loader.load(user_file, Layer.USER, Reason(Why.USER_FILE, "user instructions"), True)
    rules = RuleSet(str(setup.config_dir / "rules"), Layer.USER, str(loader.ctx.cwd), True)
    return out + load_rules(loader, rules, conditional=False)


def _start_and_ancestors(
    run: Run, setup: ClaudeSetup, loader: Loader, prefixes: Prefixes[_Prefix] | None
) -> list[Loaded]:
    """The managed and user layers, then every directory from the root down to cwd; with
    shared `prefixes`, resumed from the deepest directory above whose state holds for this
    cwd (`discovery.prefixes`), and each level kept for the next discovery."""
    ctx = run.context
    cwd = str(ctx.cwd)
    levels = ["", *ancestors(ctx.cwd)]
    skip = _nested_worktree_skip(ctx)
    key, at, level = 0, -1, None
    if prefixes is not None:
        key = prefixes.key(
            (ctx.home, ctx.managed_dir, ctx.git_root, ctx.canonical_root, ctx.project_root, setup)
        )
        inside = prefixes.inside(cwd)
        at, level = prefixes.resume(
            key,
            levels,
            lambda target, external: cwd_decision(target, cwd, external, inside(target)),
        )
    if level is None:
        out = [*_managed(run, setup, loader), *_user(setup, loader)]
        at = 0
        if prefixes is not None and prefixes.keeps(key, None, ""):
            state = _Prefix(loader.snapshot(), tuple(out))
            level = prefixes.store(key, None, state, loader.decisions, "", 0, state.size)
    else:
        loader.restore(level.state.loader)
        out = list(level.state.out)
        if level.directory == cwd:  # kept as an ancestor's: here it is cwd's own
            out[level.first_item :] = _with_reason(out[level.first_item :], _ANCESTOR, _IN_CWD)
    for directory in levels[at + 1 :]:
        decided, first = len(loader.decisions), len(out)
        out += _directory_files(ctx, setup, loader, directory, skip)
        if prefixes is None or level is None or not prefixes.keeps(key, level, directory):
            level = None  # nothing below a level not kept is kept: no state to take
            continue
        kept = (*out[:first], *_with_reason(out[first:], _IN_CWD, _ANCESTOR))
        state = _Prefix(loader.snapshot(), kept)
        level = prefixes.store(
            key, level, state, loader.decisions[decided:], directory, first, state.size
        )
    return out


class _Prefix(NamedTuple):
    """A level of `Prefixes`: the loader's state and what was loaded, in order."""

    loader: LoaderState
    out: tuple[Loaded, ...]

    @property
    def size(self) -> int:
        held = self.loader
        return len(self.out) + len(held.processed) + len(held.diagnostics) + len(held.deferred)


def _with_reason(items: Sequence[Loaded], old: Reason, new: Reason) -> list[Loaded]:
    """`items` with the reason `old` (a directory's own files) replaced by `new`."""
    return [
        item._replace(source=item.source._replace(reason=new))
        if item.source.reason == old
        else item
        for item in items
    ]


def _directory_files(
    ctx: Context,
    setup: ClaudeSetup,
    loader: Loader,
    directory: str,
    skip_checked_in: Callable[[str], bool],
) -> list[Loaded]:
    """One directory's CLAUDE.md, .claude/CLAUDE.md, unconditional rules and CLAUDE.local.md
    (the checked-in ones skipped in a main repository above a nested worktree)."""
    out: list[Loaded] = []
    approved = setup.include_external
    reason = _IN_CWD if directory == str(ctx.cwd) else _ANCESTOR
    join = os.path.join
    if not skip_checked_in(directory):
        out += loader.load(join(directory, "CLAUDE.md"), Layer.PROJECT, reason, approved)
        dot_claude = join(directory, ".claude")
        out += loader.load(join(dot_claude, "CLAUDE.md"), Layer.PROJECT, reason, approved)
        rules = RuleSet(join(dot_claude, "rules"), Layer.PROJECT, directory, approved)
        out += load_rules(loader, rules, conditional=False)
    out += loader.load(join(directory, "CLAUDE.local.md"), Layer.LOCAL, reason, approved)
    return out


def _managed_settings_source(run: Run, text: str, loader: Loader) -> list[Loaded]:
    if run.policy.content.strip_html_comments:
        how = loader.dialect
        text = strip_block_comments(
            text,
            lf_only_when_stripped=how.lf_only_when_stripped,
            keep_definitions=how.keep_definitions,
        )
    if not text.strip():
        return []
    reason = Reason(Why.MANAGED_SETTINGS, "claudeMd in managed-settings.json")
    source = text_source(
        Layer.MANAGED, MANAGED_SETTINGS_DISPLAY, MANAGED_SETTINGS_DISPLAY, reason,
        text.strip(), run.policy.tag_for(Layer.MANAGED), run.counter, raw=text,
    )  # fmt: skip
    return [Loaded(source, None)]


def _nested_worktree_skip(ctx: Context) -> Callable[[str], bool]:
    """A worktree inside its main repo: checked-in files of the main repo above it are skipped."""
    root, canonical = ctx.git_root, ctx.canonical_root
    if (
        root is None
        or canonical is None
        or root == canonical
        or not is_within(str(root), str(canonical))
    ):
        return _never
    return lambda d: is_within(d, str(canonical)) and not is_within(d, str(root))


def _never(directory: str) -> bool:
    return False


def _auto_memory(ctx: Context, setup: ClaudeSetup, loader: Loader, known: Facts) -> Loaded | None:
    """MEMORY.md: read like any file but never excluded, never importing, cut by the budgeter
    (CRLF made LF first, from 2.1.332, whose cut warning says where it cut); reported when
    the repository's settings moved it (it still loads as the user's own)."""
    found = auto_memory(ctx, setup)
    path = found.path if found is not None else None
    reason = Reason(Why.AUTO_MEMORY, "auto memory index of the project")
    if path is not None:
        loader.trace(str(path), Layer.MEMORY, reason)
    if path is None or os.path.normpath(path) in loader.processed:
        return None
    if not loader.disk.lexists(str(path)):
        return None
    processed = loader.read(str(path), "auto memory")
    if processed is None:
        return None
    text, content = processed.text, processed.stripped
    counted = processed.stats if loader.counter is estimate_tokens else None  # of `stripped`
    if known.memory_lf_before_cut and "\r\n" in text:
        text, content, counted = text.replace("\r\n", "\n"), content.replace("\r\n", "\n"), None
    if not content:
        return None
    source = text_source(
        Layer.MEMORY, str(path), ctx.display(str(path)), reason, content,
        loader.policy.tag_for(Layer.MEMORY), loader.counter, raw=text, is_index=True,
        stats=counted, cut_detail=known.memory_cut_detail,
    )  # fmt: skip
    if found is not None and found.moved_by is not None:
        _note_moved_memory(str(path), found.moved_by, loader)
    return Loaded(source, None)


def _note_moved_memory(path: str, moved_by: str, loader: Loader) -> None:
    """Auto memory the repository's settings moved: what the client loads as the user's own
    memory is wherever the repository chose (another project's memory, its own file)."""
    message = (
        f"auto memory is read here because {loader.display(moved_by)} sets autoMemoryDirectory; "
        "the client loads it as your own memory: remove the setting unless you wrote it"
    )
    loader.note(codes.MEMORY_MOVED, path, message)
    loader.notes.append(LoadNote(path, 1, 1, codes.MEMORY_MOVED.code, message))


# --- the `claude-code` format -------------------------------------------------------------


def first_user_message(assembly: Assembled, date: str) -> Mapping[str, Any]:
    """The variables of `templates/claude-code.j2`: the `# claudeMd` entries (from 2.1.332
    their own block, the date another), then one `<system-reminder>` per lazily attached
    file, or per read for what a plugin's hook attached (one block for all of them)."""
    live = [s for s in assembly.sources if not s.dropped]
    entries = [
        {
            "path": as_client_reads(s.path),
            "description": DESCRIPTIONS.get(s.layer, DESCRIPTIONS[Layer.USER]),
            "content": s.content.strip(),
        }
        for s in live
        if not s.lazy and s.content.strip() and s.reason.why not in _NOT_CLAUDE_MD
    ]
    reminders: list[dict[str, Any]] = []
    for s in live:
        if not s.lazy:
            continue
        item = {"path": as_client_reads(s.path), "content": s.content}
        hook = s.reason.why is Why.HOOK
        last = reminders[-1] if reminders else None
        if hook and last is not None and last["hook"] and last["touched"] == s.reason.touched:
            last["items"].append(item)
        else:
            reminders.append({"hook": hook, "touched": s.reason.touched, "items": [item]})
    blocks = facts_at(assembly.client_version).claude_md_block
    after = _after(assembly.compacted) if assembly.compacted is not None else None
    return {
        "entries": entries,
        "reminders": reminders,
        "date": date,
        "blocks": blocks,
        "after": after,
    }


def _js(value: object) -> str:
    """`value` as JavaScript's `JSON.stringify` writes it (no spaces, characters as they are):
    the read call's input, as recorded."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# Where the model's summary stands in the rendering: ctxasm cannot know what it will write.
SUMMARY_PLACE = "[the continuation message: the summary the model writes at the compaction]"


def _after(compacted: AfterCompact) -> dict[str, Any]:
    """The variables of the first request after a compaction: the start blocks when they
    are in it, where the summary stands, the files restored as a read call and its result
    (all candidates, after a line saying so, when there are more than the client restores),
    the skills re-injected."""
    files = [s for s in compacted.survivors if s.fate in (Fate.RESTORED, Fate.CANDIDATE)]
    files = [s for s in files if s.kind in ("attached", "read")]
    many = [s for s in files if s.fate is Fate.CANDIDATE]
    candidates = (
        f"[{len(many)} candidates below; the client restores {compacted.restore_limit} of them, "
        "its pick is not stable]"
        if many
        else ""
    )
    return {
        "layout": compacted.layout,
        "start": any(
            s.fate is Fate.REREAD for s in compacted.survivors if s.kind == "instructions"
        ),
        "summary": SUMMARY_PLACE,
        "candidates": candidates,
        "files": [{"call": _js({"file_path": s.path}), "result": s.content} for s in files],
        "skills": [
            {"name": s.name, "body": s.content}
            for s in compacted.survivors
            if s.kind == "skill" and s.fate is Fate.RESTORED
        ],
        "live_request": facts_at(compacted.version).skills_reminder_live_request,
    }


# How `ctxasm verify` runs it (`headless`), in its words above.
HEADLESS = ClaudeCodeHeadless(DESCRIPTIONS.values())
