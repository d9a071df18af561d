"""The `copilot` client: what GitHub Copilot's coding agent reads (docs/clients/copilot.md).

From GitHub's documentation (github/docs: `content/copilot/how-tos/configure-custom-
instructions/add-repository-instructions.md`, `data/reusables/copilot/custom-instructions-
path.md`, `data/reusables/copilot/custom-instructions-agents.md`, read 2026-11-30):
  * repository-wide instructions, `.github/copilot-instructions.md` at the repository root,
    "apply to all requests made in the context of a repository";
  * path-specific instructions, `.github/instructions/**/NAME.instructions.md`, whose
    frontmatter `applyTo` holds globs ("You can specify multiple patterns by separating them
    with commas"); they apply "to requests made in the context of files that match". To
    apply to all files: `applyTo: "**"`, `"*"` or `"**/*"`. `excludeAgent: "code-review"` or
    `"coding-agent"` keeps the file from that agent; without it both use the file. The CLI
    also reads `.github/instructions` in the current working directory;
  * `AGENTS.md` files "stored anywhere within the repository. When Copilot is working, the
    nearest AGENTS.md file in the directory tree will take precedence".
This client is the coding agent started in cwd: the repository-wide file, the path-specific
files that apply to all files, and the AGENTS.md nearest cwd. Touching a file attaches the
path-specific files whose `applyTo` matches it and the AGENTS.md nearest it. Globs are
relative to the directory that holds `.github`.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .. import codes
from ..codes import ERROR, INFO, WARNING, Code, Skip
from ..discovery.context import Discovery, Run
from ..discovery.loader import Loaded, Loader, Reading
from ..discovery.touches import attached
from ..model import Layer, Reason, Source, Why
from ..parsing import frontmatter as fm
from ..parsing.positions import Lines
from . import rulefiles as rf
from .base import Advice, Client, FileKind, FileNote, FileRole, Tracked, role_key

NAME = "copilot"
REPOSITORY_WIDE = os.path.join(".github", "copilot-instructions.md")
INSTRUCTIONS = os.path.join(".github", "instructions")
SUFFIX = ".instructions.md"
AGENTS = "AGENTS.md"
AGENT = "coding-agent"  # the agent this client is
AGENTS_KNOWN = ("code-review", "coding-agent")
ALL_FILES = frozenset({"**", "*", "**/*"})
# `applyTo` and `excludeAgent` (docs.github.com); `name` and `description` are read by VS Code
# (code.visualstudio.com/docs/copilot/customization/custom-instructions).
KEYS = ("applyTo", "excludeAgent", "name", "description")
# "Copilot code review only reads the first 4,000 characters of any custom instruction file"
# (docs.github.com/en/copilot/concepts/code-review, 2025; later removed from the page, see
# github/docs#42761: kept as a warning, docs/clients/copilot.md).
REVIEW_CHARS = 4000

# Its own diagnostic codes (`Client.own_codes`), listed by `ctxasm codes` with the shared ones.
# fmt: off
COPILOT_APPLY_TO = Code("CTX931", "copilot-apply-to", "path-specific instructions: attached once a file matching applyTo is touched", None, INFO, Skip.NOT_MATCHED)
COPILOT_NO_APPLY_TO = Code("CTX932", "copilot-no-apply-to", "an .instructions.md without applyTo: never applied automatically", WARNING, INFO, Skip.MANUAL)
COPILOT_EXCLUDED = Code("CTX933", "copilot-excluded-agent", "excludeAgent: coding-agent: the coding agent does not read the file", None, INFO, Skip.EXCLUDED_AGENT)
COPILOT_AGENTS_FARTHER = Code("CTX934", "copilot-agents-md-not-nearest", "an AGENTS.md farther than another: the nearest one takes precedence", None, INFO, Skip.FARTHER)
COPILOT_KEY = Code("CTX935", "copilot-unknown-key", "an .instructions.md frontmatter key Copilot does not read (applyTo, excludeAgent)", WARNING)
COPILOT_APPLY_TO_INVALID = Code("CTX936", "copilot-invalid-apply-to", "applyTo that is not a string of comma-separated globs, or a glob that matches nothing", ERROR, WARNING, Skip.MANUAL)
COPILOT_EXCLUDE_INVALID = Code("CTX937", "copilot-invalid-exclude-agent", "excludeAgent other than \"code-review\" or \"coding-agent\": no agent is excluded", ERROR, WARNING)
COPILOT_REVIEW_CUT = Code("CTX938", "copilot-review-4000", "over 4,000 characters: Copilot code review reads only the first 4,000", WARNING)
# fmt: on

OWN_CODES = (
    COPILOT_APPLY_TO,
    COPILOT_NO_APPLY_TO,
    COPILOT_EXCLUDED,
    COPILOT_AGENTS_FARTHER,
    COPILOT_KEY,
    COPILOT_APPLY_TO_INVALID,
    COPILOT_EXCLUDE_INVALID,
    COPILOT_REVIEW_CUT,
)


class Instructions(NamedTuple):
    """What a path-specific file's frontmatter says to one agent."""

    apply_to: rf.GlobList | None  # None: no applyTo
    excluded: tuple[str, ...]  # the agents `excludeAgent` names (valid values only)
    exclude_invalid: bool


def instructions_of(data: Mapping[str, Any], base_dir: str) -> Instructions:
    value = data.get("applyTo")
    apply_to = None if value is None else rf.glob_list(value, base_dir, lists=False)
    exclude = data.get("excludeAgent")
    valid = exclude is None or exclude in AGENTS_KNOWN
    excluded = (exclude,) if isinstance(exclude, str) and exclude in AGENTS_KNOWN else ()
    return Instructions(apply_to, excluded, not valid)


class CopilotState(NamedTuple):
    waiting: tuple[rf.Waiting, ...]


class Copilot(Client[CopilotState]):
    # No format of its own: no documented request text (the native xml serves).
    name = NAME
    title = "Copilot"
    advice = Advice(split="move detail into .github/instructions files with applyTo")
    own_codes = OWN_CODES
    instruction_files = (
        r"(?:^|/)(?:AGENTS\.md|\.github/copilot-instructions\.md|"
        r"\.github/instructions/.+\.instructions\.md)$"
    )
    lint_codes = frozenset(
        {
            *("CTX001", "CTX002", "CTX003", "CTX004", "CTX005", "CTX006", "CTX007", "CTX008"),
            *("CTX101", "CTX102", "CTX103", "CTX105", "CTX301", "CTX307", "CTX308", "CTX309"),
            "CTX404",
            *("CTX501", "CTX502", "CTX503", "CTX504", "CTX601", "CTX801", "CTX802"),
            *("CTX932", "CTX935", "CTX936", "CTX937", "CTX938"),
        }
    )

    def reading(self, run: Run) -> Reading:
        return rf.READING

    def discover(self, run: Run) -> Discovery[CopilotState]:
        loader = Loader(run, reading=rf.READING)
        ctx = run.context
        root, cwd = str(ctx.project_root), str(ctx.cwd)
        why = Why.CWD if root == cwd else Why.ANCESTOR
        wide = Reason(why, "repository-wide instructions")
        out = loader.load(os.path.join(root, REPOSITORY_WIDE), Layer.PROJECT, wide, False)
        waiting: list[rf.Waiting] = []
        pending: list[Source] = []
        for base in dict.fromkeys((root, cwd)):
            out += _path_specific(loader, base, waiting, pending)
        out += _nearest_agents(loader, rf.scope_dirs(root, cwd), cwd)
        sources = tuple(item.source for item in out)
        state = CopilotState(tuple(waiting))
        return Discovery(sources, tuple(loader.diagnostics), tuple(pending), state=state)

    def touch(
        self, run: Run, state: CopilotState, target: Path, already: Collection[str]
    ) -> Discovery[CopilotState]:
        loader = Loader(run, reading=rf.READING)
        at = rf.touch_target(loader, run, target)
        if at is None:
            return Discovery((), tuple(loader.diagnostics))
        shown = loader.display(at)
        found = rf.attach_matching(loader, state.waiting, at, shown)
        root = str(run.context.project_root)
        for directory in reversed(rf.scope_dirs(root, os.path.dirname(at))):
            path = os.path.join(directory, AGENTS)
            if loader.disk.lexists(path):
                if path not in already:
                    text = f"the AGENTS.md nearest {shown}"
                    reason = Reason(Why.NESTED, text, touched=shown)
                    found += rf.load_lazily(loader, path, reason)
                break
        return Discovery(attached(found, already, run), tuple(loader.diagnostics))

    def classify(self, path: Path) -> FileRole | None:
        parts = path.parts
        if path.name == "copilot-instructions.md" and parts[-2:-1] == (".github",):
            return FileRole(FileKind.INSTRUCTIONS, path.parent.parent)
        if path.name.endswith(SUFFIX) and ".github" in parts[:-2]:
            at = len(parts) - 1 - parts[::-1].index(".github")
            if parts[at + 1 : at + 2] == ("instructions",):
                return FileRole(FileKind.RULE, Path(*parts[:at]), rf.FRONTMATTER_CHARS)
        if path.name == AGENTS:
            return FileRole(FileKind.INSTRUCTIONS, path.parent)
        return None

    def check_key(self, path: Path) -> Hashable:
        return role_key(self.classify(path), path)  # its checks: the kind, the name, a rule's globs

    def check_file(
        self, path: Path, text: str | None, tracked: Tracked | None
    ) -> Sequence[FileNote]:
        role = self.classify(path)
        if role is None or text is None or path.name == AGENTS:
            return []  # code review does not read AGENTS.md (docs: repository-custom-instructions-support)
        out: list[FileNote] = []
        reviewed = True
        body = text.removeprefix("\ufeff")
        lines = Lines(body)
        if role.kind is FileKind.RULE:
            head, _ = fm.split_frontmatter(body, rf.FRONTMATTER_CHARS)
            if head.present and not head.error and not head.too_complex:
                out += _instruction_notes(lines, head, str(role.load_dir))
                reviewed = "code-review" not in instructions_of(head.data, "/").excluded
            elif not head.present:
                out.append(FileNote(1, 1, COPILOT_NO_APPLY_TO, _NO_APPLY_TO))
        if reviewed and len(body) > REVIEW_CHARS:
            line, col = lines.at(REVIEW_CHARS)
            out.append(
                FileNote(
                    line, col, COPILOT_REVIEW_CUT,
                    f"{len(body):,} characters: Copilot code review reads only the first "
                    f"{REVIEW_CHARS:,}, up to here; put what review needs first"
                    + (', or add excludeAgent: "code-review"' if role.kind is FileKind.RULE else ""),
                )
            )  # fmt: skip
        return out


_NO_APPLY_TO = (
    "no applyTo: Copilot never applies these instructions by itself; add "
    'applyTo: "**" (all files) or the globs they are for'
)


def _instruction_notes(lines: Lines, head: fm.Frontmatter, base_dir: str) -> list[FileNote]:
    data = head.data
    out: list[FileNote] = []

    def add(key: str, code: codes.Code, message: str) -> None:
        out.append(FileNote(lines.of_key(key, head), 1, code, message))

    for key in data:
        if key not in KEYS:
            hint = (
                " (Copilot reads applyTo, not paths or globs)" if key in ("paths", "globs") else ""
            )
            add(
                key,
                COPILOT_KEY,
                f"frontmatter key '{key}' is not read by Copilot{hint}: remove it",
            )
    found = instructions_of(data, base_dir)
    if found.apply_to is None:
        out.append(FileNote(1, 1, COPILOT_NO_APPLY_TO, _NO_APPLY_TO))
    elif found.apply_to.malformed:
        add(
            "applyTo",
            COPILOT_APPLY_TO_INVALID,
            f"applyTo is {data['applyTo']!r}, not a string of comma-separated globs: it applies to nothing",
        )
    else:
        for pattern, why in found.apply_to.refused:
            add(
                "applyTo",
                COPILOT_APPLY_TO_INVALID,
                f"glob {rf.patterns_shown([pattern])} is refused ({why}) and matches nothing: simplify it",
            )
    if found.exclude_invalid:
        add(
            "excludeAgent",
            COPILOT_EXCLUDE_INVALID,
            f'excludeAgent is {data["excludeAgent"]!r}: only "code-review" or "coding-agent" exclude an agent',
        )
    return out


def _path_specific(
    loader: Loader, base: str, waiting: list[rf.Waiting], pending: list[Source]
) -> list[Loaded]:
    """The `.github/instructions` files of `base`: those for all files load now, those with
    other globs wait for a touched file, the rest are noted."""
    directory = os.path.join(base, INSTRUCTIONS)
    out: list[Loaded] = []
    for found in rf.rule_files_in(loader, directory, SUFFIX, "instructions file"):
        data = found.parsed.frontmatter.data
        info = instructions_of(data, base)
        where = loader.display(directory)
        if info.exclude_invalid:
            loader.note(
                COPILOT_EXCLUDE_INVALID,
                found.path,
                f"excludeAgent is {data['excludeAgent']!r}: no agent is excluded",
            )
        apply_to = info.apply_to
        for pattern, why in apply_to.refused if apply_to else ():
            loader.note(
                codes.GLOB_TOO_COMPLEX,
                found.path,
                f"glob {rf.patterns_shown([pattern])} is refused ({why}) and matches nothing",
            )
        patterns = apply_to.patterns if apply_to else ()
        if AGENT not in info.excluded and ALL_FILES.intersection(patterns):
            every = next(p for p in patterns if p in ALL_FILES)
            reason = Reason(
                Why.RULE, f"instructions in {where}, applyTo: {rf.patterns_shown([every])}"
            )
            out += loader.load(found.path, Layer.PROJECT, reason, False, found_in=directory)
            continue
        loader.trace(found.path, Layer.PROJECT, Reason(Why.RULE, f"instructions in {where}"))
        pending.append(rf.pending(loader, found))
        if AGENT in info.excluded:
            loader.note(
                COPILOT_EXCLUDED,
                found.path,
                'excludeAgent: "coding-agent": the coding agent does not read it',
            )
        elif apply_to is None or apply_to.malformed or not patterns:
            code = COPILOT_APPLY_TO_INVALID if apply_to else COPILOT_NO_APPLY_TO
            loader.note(code, found.path, "no usable applyTo: never applied by itself")
        else:
            waiting.append(
                rf.Waiting(found.path, directory, base, patterns, "applyTo", apply_to.match)
            )
            loader.note(
                COPILOT_APPLY_TO,
                found.path,
                f"applyTo {rf.patterns_shown(patterns)} (relative to {loader.display(base)}/); "
                "attached when the agent works on a matching file",
            )
    return out


def _nearest_agents(loader: Loader, scoped: list[str], cwd: str) -> list[Loaded]:
    """The AGENTS.md nearest cwd (cwd up to the root); the farther ones are noted."""
    out: list[Loaded] = []
    nearest = ""
    for directory in reversed(scoped):
        path = os.path.join(directory, AGENTS)
        why = Why.CWD if directory == cwd else Why.ANCESTOR
        if not nearest:
            if loader.disk.lexists(path):
                nearest = loader.display(path)
                reason = Reason(why, "the AGENTS.md nearest cwd")
                out += loader.load(path, Layer.PROJECT, reason, False)
            continue
        if loader.disk.lexists(path):
            loader.trace(path, Layer.PROJECT, Reason(why, "AGENTS.md farther from cwd"))
            loader.note(
                COPILOT_AGENTS_FARTHER,
                path,
                f"{nearest} is nearer to cwd and takes precedence; this one is not read",
            )
    return out


CLIENT = Copilot()
