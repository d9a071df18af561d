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
index is the same on every machine. Directories, entries and SKILL.md files are read through
the run's `Disk`, so a new skill is followed by `ctxasm watch` like a new instruction file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ... import codes
from ...discovery.context import Context, Run
from ...discovery.disk import Disk
from ...discovery.index import Index, entry
from ...discovery.loader import TRUSTED_LAYERS, place_of, reached_out, text_source
from ...discovery.reader import ReadStatus, read_text
from ...display import as_client_reads
from ...errors import SkillError
from ...model import SKILLS_TAG, Diagnostic, Layer, Reason, Skill, Source, TokenCounter, Why
from ...parsing import frontmatter as fm
from .settings import ClaudeSetup

SKILL_FILE = "SKILL.md"
INDEX_PATH = "<skills>"
INDEX_TAG = SKILLS_TAG
# The client's fallback description: the first non-empty body line, heading marker removed,
# cut to 100 characters with an ellipsis (`extractDescriptionFromMarkdown`, v2.1.88 [CC-SRC]).
DESCRIPTION_CHARS = 100
_NON_SPACE = re.compile(r"\S")
_TRUTHY = frozenset({"true", "yes", "1", "on"})


def skill_dirs(ctx: Context, setup: ClaudeSetup) -> Iterator[tuple[Path, Layer]]:
    """The directories holding skills, in the client's order: user, then cwd upwards."""
    yield setup.config_dir / "skills", Layer.USER
    home = os.path.normcase(os.path.abspath(ctx.home))
    directory = ctx.cwd
    while os.path.normcase(str(directory)) != home:
        yield directory / ".claude" / "skills", Layer.PROJECT
        if directory == ctx.git_root or directory.parent == directory:
            return
        directory = directory.parent


def _entries(directory: Path, disk: Disk) -> list[str]:
    # One stat first, as the client (`statSync`, then `readdir`): a missing directory, the
    # usual case, is never listed.
    if not disk.is_dir(str(directory)):
        return []
    try:
        entries = disk.scandir(str(directory))
        return sorted(e.name for e in entries if e.is_dir() or e.is_symlink())
    except OSError:  # missing, not a directory, unreadable: no skills here (as the client)
        return []


def _description(data: dict[str, object], body: str) -> str:
    """The description as written (the index makes it one line and cuts it)."""
    value = data.get("description")
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    first = _NON_SPACE.search(body)  # the first non-blank line, without splitting the body
    if first is None:
        return ""
    end = body.find("\n", first.start())
    text = body[first.start() : end if end >= 0 else len(body)].rstrip()
    unmarked = text.lstrip("#")
    if unmarked != text and unmarked[:1].isspace():  # `^#+\s+`: a heading marker
        text = unmarked.lstrip()
    if len(text) > DESCRIPTION_CHARS:
        text = text[: DESCRIPTION_CHARS - 3] + "..."
    return text


def _hidden(data: dict[str, object]) -> bool:
    value = data.get("disable-model-invocation")
    return value is True or (isinstance(value, str) and value.strip().lower() in _TRUTHY)


class _Listing:
    """The skills found so far in one run, and why other SKILL.md files are not listed."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.found: list[Skill] = []
        self.notes: list[Diagnostic] = []
        self.seen_files: set[str] = set()
        self.seen_names: dict[str, str] = {}
        self.roots: list[str] = []
        self.index = Index()

    def note(self, code: codes.Code, path: str, message: str) -> None:
        self.notes.append(code.at(self.ctx.display(path), message))

    def consider(
        self, directory: Path, layer: Layer, directory_name: str, disk: Disk, limit: int
    ) -> None:
        """One `<directory>/<directory_name>/SKILL.md`: listed, or noted why not."""
        path = str(directory / directory_name / SKILL_FILE)
        result = disk.read(path, limit)
        if result.status in (ReadStatus.MISSING, ReadStatus.DIRECTORY):
            return
        if not result.ok:
            self.note(
                codes.SKILL_UNREADABLE,
                path,
                f"skill not listed: {result.status.value} ({result.detail or result.size}); fix the file",
            )
            return
        real = os.path.realpath(path)
        if real in self.seen_files:
            return
        self.seen_files.add(real)
        reached = None if layer in TRUSTED_LAYERS else self._reached_out(path, real)
        if reached is not None:
            home = reached is codes.OUTSIDE_HOME
            self.note(
                reached,
                path,
                f"skill is read from {'your home directory' if home else 'outside the project'}: "
                f"{self.ctx.display(real)}; the client lists it too: make sure it belongs here",
            )
        frontmatter, body = fm.split_frontmatter(result.text)
        if frontmatter.too_complex:
            self.note(
                codes.FRONTMATTER_TOO_COMPLEX,
                path,
                f"YAML frontmatter {frontmatter.too_complex}; ctxasm drops it (name, description, paths:): simplify it",
            )
        elif frontmatter.error:
            self.note(
                codes.FRONTMATTER_INVALID,
                path,
                f"invalid YAML frontmatter ({frontmatter.error}); the client drops it (name, "
                "description, paths:): fix the YAML",
            )
        self._list(directory, layer, directory_name, path, frontmatter, body)

    def _reached_out(self, path: str, real: str) -> codes.Code | None:
        """`loader.reached_out` for a skill of the project or of a directory above it (without
        git, skills are looked for up to the filesystem root)."""
        found, root = os.path.normpath(path), str(self.ctx.project_root)
        return reached_out(found, real, place_of(found, root), str(self.ctx.home))

    def _list(
        self,
        directory: Path,
        layer: Layer,
        directory_name: str,
        path: str,
        frontmatter: fm.Frontmatter,
        body: str,
    ) -> None:
        """The skill at `path` in the index when the client offers it and the index has room,
        its name and description one line each and cut (`discovery.index`)."""
        data = dict(frontmatter.data)
        raw = data.get("name")
        listed = entry(raw if isinstance(raw, str) else "", _description(data, body))
        # Without a name of its own, the directory's, as the client (Node) reads it: a byte
        # that is not UTF-8 is U+FFFD, so the index stays text.
        listed = listed._replace(name=listed.name or as_client_reads(directory_name))
        name = listed.name
        if not self._offered(path, name, frontmatter, data) or not self.index.admit(path, listed):
            return  # said why (a full index: once, at the end)
        if listed.cut:
            self.note(codes.INDEX_ENTRY_CUT, path, f"skill {name!r}: {listed.cut}; shorten it")
        display = self.seen_names[name] = self.ctx.display(path)
        root = self.ctx.display(str(directory))
        if root not in self.roots:
            self.roots.append(root)
        self.found.append(Skill(name, listed.description, path, display, layer, directory_name))

    def _offered(
        self, path: str, name: str, frontmatter: fm.Frontmatter, data: dict[str, Any]
    ) -> bool:
        """Whether the client offers this skill to the model at start (else noted why not)."""
        if fm.conditional_globs(frontmatter) is not None:
            self.note(
                codes.SKILL_CONDITIONAL,
                path,
                f"skill {name!r} has paths:; the client offers it only once a matching file is touched",
            )
            return False
        if _hidden(data):
            self.note(
                codes.SKILL_HIDDEN,
                path,
                f"skill {name!r} has disable-model-invocation; never offered to the model",
            )
            return False
        if name in self.seen_names:
            self.note(
                codes.SKILL_DUPLICATE,
                path,
                f"skill {name!r} is already listed from {self.seen_names[name]}; this one is not",
            )
            return False
        return True


def discover_skills(
    run: Run, setup: ClaudeSetup
) -> tuple[tuple[Skill, ...], Source | None, tuple[Diagnostic, ...]]:
    """Every skill the client offers the model at start, the index section listing them (None
    without skills), and why other SKILL.md files are not listed."""
    listing = _Listing(run.context)
    limit = run.policy.limits.skip_bytes
    for directory, layer in skill_dirs(run.context, setup):
        for name in _entries(directory, run.disk):
            listing.consider(directory, layer, name, run.disk, limit)
    if listing.index.left_out:
        listing.note(codes.INDEX_ENTRY_CUT, listing.index.first_out, listing.index.full("skills"))
    index = _index_source(listing.found, listing.roots, run.counter)
    return tuple(listing.found), index, tuple(listing.notes)


def index_text(skills: tuple[Skill, ...] | list[Skill]) -> str:
    """`- name: description`, one line per skill (the client's listing shape)."""
    return "\n".join(
        f"- {s.name}: {s.description}" if s.description else f"- {s.name}" for s in skills
    )


def _index_source(skills: list[Skill], roots: list[str], counter: TokenCounter) -> Source | None:
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
