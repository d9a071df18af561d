"""The skills index (progressive disclosure): each skill's name and description, not its text.

Seed 2, section 3: the system prompt carries only each skill's name and a line of metadata;
the instructions themselves enter the context when the model decides it needs them. Here the
index is one `<skills>` section and `Assembly.skill(name)` returns a skill's full text.

Where Claude Code finds skills (SPEC section 4; `getSkillDirCommands` and
`getProjectDirsUpToHome` in the v2.1.88 source [CC-SRC]):
  * user: `<config dir>/skills/*/SKILL.md` (`~/.claude/skills`, or `CLAUDE_CONFIG_DIR`);
  * project: `.claude/skills/*/SKILL.md` in every directory from cwd up to the git root (outside
    git: up to, not including, home), most specific first;
  * an entry may be a directory or a symlink to one; a SKILL.md reached twice (symlinks,
    overlapping directories) counts once, by real path, the first one seen winning;
  * `.agents/skills` and `.gemini/skills` are never read.
A skill with `paths:` frontmatter is conditional (offered once a matching file is touched) and
one with `disable-model-invocation: true` is never offered to the model: neither is listed.
Entries are listed by name within each directory (the client uses raw directory order), so the
index is the same on every machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from . import content as fm
from .errors import SkillError
from .loader import Context, text_source
from .model import Diagnostic, Layer, Reason, Severity, Source, Why
from .policy import Policy
from .reader import ReadStatus, read_text
from .tokens import TokenCounter

SKILL_FILE = "SKILL.md"
INDEX_PATH = "<skills>"
INDEX_TAG = "skills"
# The client's fallback description: the first non-empty body line, heading marker removed,
# cut to 100 characters with an ellipsis (`extractDescriptionFromMarkdown`, v2.1.88 [CC-SRC]).
DESCRIPTION_CHARS = 100
_TRUTHY = frozenset({"true", "yes", "1", "on"})


class Skill(NamedTuple):
    """One listed skill: what the index shows, and where its full text is."""

    name: str
    description: str
    path: str  # the SKILL.md as reached (through a symlinked directory: the link's path)
    display: str
    layer: Layer
    directory: str  # the skill's directory name (the client's command name)


def skill_dirs(ctx: Context) -> Iterator[tuple[Path, Layer]]:
    """The directories holding skills, in the client's order: user, then cwd upwards."""
    yield ctx.config_dir / "skills", Layer.USER
    home = os.path.normcase(os.path.abspath(ctx.home))
    directory = ctx.cwd
    while os.path.normcase(str(directory)) != home:
        yield directory / ".claude" / "skills", Layer.PROJECT
        if directory == ctx.git_root or directory.parent == directory:
            return
        directory = directory.parent


def _entries(directory: Path) -> list[str]:
    # One stat first, as the client (`statSync`, then `readdir`): a missing directory, the
    # usual case, is never listed.
    if not os.path.isdir(directory):
        return []
    try:
        with os.scandir(directory) as it:
            return sorted(e.name for e in it if e.is_dir() or e.is_symlink())
    except OSError:  # missing, not a directory, unreadable: no skills here (as the client)
        return []


def _description(data: dict[str, object], body: str) -> str:
    value = data.get("description")
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        text = str(value)
    elif isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = next((line.strip() for line in body.split("\n") if line.strip()), "")
        unmarked = text.lstrip("#")
        if unmarked != text and unmarked[:1].isspace():  # `^#+\s+`: a heading marker
            text = unmarked.lstrip()
        if len(text) > DESCRIPTION_CHARS:
            text = text[: DESCRIPTION_CHARS - 3] + "..."
    return " ".join(text.split())  # one line per skill, whatever the YAML held


def _hidden(data: dict[str, object]) -> bool:
    value = data.get("disable-model-invocation")
    return value is True or (isinstance(value, str) and value.strip().lower() in _TRUTHY)


def discover_skills(
    ctx: Context, policy: Policy, counter: TokenCounter
) -> tuple[tuple[Skill, ...], Source | None, tuple[Diagnostic, ...]]:
    """Every skill the client offers the model at start, the index section listing them (None
    without skills), and why other SKILL.md files are not listed.

    (A plain tuple, not a NamedTuple: this module is imported by every `claude-code` run, and
    each NamedTuple class costs ~0.1 ms at import.)"""
    found: list[Skill] = []
    notes: list[Diagnostic] = []
    seen_files: set[str] = set()
    seen_names: dict[str, str] = {}
    roots: list[str] = []

    def note(code: str, severity: Severity, path: str, message: str) -> None:
        notes.append(Diagnostic(code, severity, ctx.display(path), message))

    for directory, layer in skill_dirs(ctx):
        for entry in _entries(directory):
            path = str(directory / entry / SKILL_FILE)
            result = read_text(path, policy.limits.skip_bytes)
            if result.status in (ReadStatus.MISSING, ReadStatus.DIRECTORY):
                continue
            if not result.ok:
                note(
                    "skill-unreadable",
                    Severity.WARNING,
                    path,
                    f"skill not listed: {result.status.value} ({result.detail or result.size}); fix the file",
                )
                continue
            real = os.path.realpath(path)
            if real in seen_files:
                continue
            seen_files.add(real)
            frontmatter, body = fm.split_frontmatter(result.text)
            data = dict(frontmatter.data)
            raw_name = data.get("name")
            name = " ".join(raw_name.split()) if isinstance(raw_name, str) else ""
            name = name or entry
            if fm.conditional_globs(frontmatter) is not None:
                note(
                    "skill-conditional",
                    Severity.INFO,
                    path,
                    f"skill {name!r} has paths:; the client offers it only once a matching file is touched",
                )
                continue
            if _hidden(data):
                note(
                    "skill-hidden",
                    Severity.INFO,
                    path,
                    f"skill {name!r} has disable-model-invocation; never offered to the model",
                )
                continue
            if name in seen_names:
                note(
                    "skill-duplicate",
                    Severity.INFO,
                    path,
                    f"skill {name!r} is already listed from {seen_names[name]}; this one is not",
                )
                continue
            seen_names[name] = ctx.display(path)
            if ctx.display(str(directory)) not in roots:
                roots.append(ctx.display(str(directory)))
            found.append(
                Skill(name, _description(data, body), path, ctx.display(path), layer, entry)
            )
    return tuple(found), _index_source(found, roots, policy, counter), tuple(notes)


def index_text(skills: tuple[Skill, ...] | list[Skill]) -> str:
    """`- name: description`, one line per skill (the client's listing shape)."""
    return "\n".join(
        f"- {s.name}: {s.description}" if s.description else f"- {s.name}" for s in skills
    )


def _index_source(
    skills: list[Skill], roots: list[str], policy: Policy, counter: TokenCounter
) -> Source | None:
    if not skills:
        return None
    count = f"{len(skills)} skill{'s' if len(skills) != 1 else ''}"
    reason = Reason(Why.SKILLS, f"skills index: {count}, name and description only")
    # One section in the project tier: project skills are checked in; user skills change
    # about as rarely, and putting them here keeps an edit to them from invalidating the
    # user tier's cache entry (tier order is stability order, SPEC section 7).
    return text_source(
        Layer.PROJECT, INDEX_PATH, ", ".join(roots), reason, index_text(skills), INDEX_TAG, counter
    )


def find_skill(skills: tuple[Skill, ...], name: str) -> Skill:
    for skill in skills:
        if name in (skill.name, skill.directory):
            return skill
    known = ", ".join(s.name for s in skills) or "none"
    raise SkillError(f"{name}: no such skill; listed skills: {known}")


def skill_text(skill: Skill, max_bytes: int) -> str:
    """The skill's full text as the client expands it: its base directory, then the body.

    Read on demand (the point of progressive disclosure), so it is the file as it is now.
    """
    result = read_text(skill.path, max_bytes)
    if not result.ok:
        raise SkillError(
            f"{skill.display}: cannot read the skill ({result.status.value}); check the file"
        )
    _, body = fm.split_frontmatter(result.text)
    # `getPromptForCommand` prefixes "Base directory for this skill: <dir>" (v2.1.88 [CC-SRC]).
    return f"Base directory for this skill: {os.path.dirname(skill.path)}\n\n{body}"
