"""The `cursor` client: what Cursor's agent loads from a workspace (docs/clients/cursor.md).

Cursor's documentation (cursor.com/docs/context/rules, as clipped 2025-2026; no primary
source is stored, see `../shared/docs/anchors.md` 6.1) describes:
  * Project Rules, `.cursor/rules/**/*.mdc`, "version-controlled and scoped to your codebase";
    "Subdirectories can include their own .cursor/rules directory scoped to that folder";
  * frontmatter `description`, `globs`, `alwaysApply` giving four kinds: Always ("always
    included in model context"), Auto Attached ("included when files matching a glob pattern
    are referenced"), Agent Requested ("available to AI, which decides whether to include it.
    Must provide a description") and Manual ("only included when explicitly mentioned using
    @ruleName");
  * `AGENTS.md` at the root and in subdirectories; a nested one "is treated like a rule that
    always applies with an implicit glob pattern" of its folder (Cursor staff,
    forum.cursor.com/t/160773); the legacy `.cursorrules`, "still supported, but deprecated".
The workspace is the project root (git root, else cwd); cwd below it stands for "the agent
works on files here", so the scoped files of every directory from the root down to cwd apply.
Touching a file attaches the scoped files on the way to it and the Auto Attached rules whose
globs match it. Globs are relative to the directory that holds `.cursor`. Where Cursor's
behaviour is not documented (order, plain `.md` files, string `alwaysApply`), the page above
states the assumption made here.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Collection, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .. import codes
from ..codes import ERROR, INFO, WARNING, Code, Skip
from ..discovery.context import Discovery, Run
from ..discovery.index import Entry, Index, entry
from ..discovery.loader import Loaded, Loader, Reading
from ..discovery.touches import attached
from ..model import Layer, Reason, Source, TokenCounter, Why
from ..parsing import frontmatter as fm
from ..parsing.positions import Lines
from . import rulefiles as rf
from .base import Advice, Client, FileKind, FileNote, FileRole, Tracked, role_key

NAME = "cursor"
RULES = os.path.join(".cursor", "rules")
SUFFIX = ".mdc"
AGENTS = "AGENTS.md"
LEGACY = ".cursorrules"
KEYS = ("description", "globs", "alwaysApply")
INDEX = "agent-requested rules"

# Its own diagnostic codes (`Client.own_codes`), listed by `ctxasm codes` with the shared ones.
# fmt: off
CURSOR_AUTO = Code("CTX921", "cursor-rule-auto-attached", "a Cursor rule with globs: attached once a matching file is touched", None, INFO, Skip.NOT_MATCHED)
CURSOR_REQUESTED = Code("CTX922", "cursor-rule-agent-requested", "a Cursor rule with only a description: listed by it, read when the agent asks", None, INFO, Skip.REQUESTED)
CURSOR_MANUAL = Code("CTX923", "cursor-rule-manual", "a Cursor rule with no alwaysApply, globs or description: loaded only when @-mentioned", None, INFO, Skip.MANUAL)
CURSOR_MD_RULE = Code("CTX924", "cursor-rule-not-mdc", "a file in .cursor/rules that is not .mdc: Cursor ignores it", WARNING, INFO)
CURSOR_KEY = Code("CTX925", "cursor-unknown-key", "a .mdc frontmatter key Cursor does not read (description, globs, alwaysApply)", WARNING)
CURSOR_ALWAYS_APPLY = Code("CTX926", "cursor-invalid-always-apply", "alwaysApply that is not true or false: Cursor takes it as false", ERROR, WARNING)
CURSOR_GLOBS = Code("CTX927", "cursor-invalid-globs", "globs that are not a comma string or a list of strings, or a glob that matches nothing", ERROR, WARNING)
CURSOR_DESCRIPTION = Code("CTX928", "cursor-invalid-description", "a description that is not a string: the agent cannot request the rule by it", WARNING)
# fmt: on

OWN_CODES = (
    CURSOR_AUTO,
    CURSOR_REQUESTED,
    CURSOR_MANUAL,
    CURSOR_MD_RULE,
    CURSOR_KEY,
    CURSOR_ALWAYS_APPLY,
    CURSOR_GLOBS,
    CURSOR_DESCRIPTION,
)


class Kind(enum.Enum):
    """The four rule types of Cursor's rule editor."""

    ALWAYS = "always"
    AUTO = "auto attached"
    REQUESTED = "agent requested"
    MANUAL = "manual"


class Rule(NamedTuple):
    kind: Kind
    globs: rf.GlobList
    description: str


def rule_of(data: Mapping[str, Any], base_dir: str) -> Rule:
    """The kind of a rule from its frontmatter: `alwaysApply: true` (a YAML boolean: the
    string "true" is not, per stbenjam/skillsaw `cursor-rules-valid`), else globs, else a
    description, else manual."""
    globs = rf.glob_list(data.get("globs"), base_dir, lists=True)
    raw = data.get("description")
    description = raw.strip() if isinstance(raw, str) else ""
    if data.get("alwaysApply") is True:
        kind = Kind.ALWAYS
    elif globs.patterns:
        kind = Kind.AUTO
    elif description:
        kind = Kind.REQUESTED
    else:
        kind = Kind.MANUAL
    return Rule(kind, globs, description)


class CursorState(NamedTuple):
    """What a touch needs: the directories scoped at start and the rules waiting for a file."""

    scoped: tuple[str, ...]
    waiting: tuple[rf.Waiting, ...]


class _Walk:
    """The rules of one directory's `.cursor/rules`, sorted into what loads now, what waits
    for a touched file, and what the agent only lists or never loads (each noted)."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader
        self.waiting: list[rf.Waiting] = []
        self.requested: list[Entry] = []
        self.index = Index()
        self.roots: list[str] = []
        self.pending: list[Source] = []

    def rules(self, directory: str, *, lazy: bool, on_the_way: str = "") -> list[Loaded]:
        loader = self.loader
        rules_dir = os.path.join(directory, RULES)
        out: list[Loaded] = []
        for found in rf.rule_files_in(loader, rules_dir, SUFFIX, "rule"):
            rule = rule_of(found.parsed.frontmatter.data, directory)
            self._note_values(found, rule)
            shown_dir = loader.display(rules_dir)
            if rule.kind is Kind.ALWAYS:
                text = f"always-applied rule in {shown_dir}{on_the_way}"
                reason = Reason(Why.NESTED if lazy else Why.RULE, text)
                layer = Layer.SUBDIRECTORY if lazy else Layer.PROJECT
                out += loader.load(found.path, layer, reason, False, lazy=lazy, found_in=rules_dir)
                continue
            if rule.kind is Kind.AUTO:
                globs = rule.globs
                waiting = rf.Waiting(
                    found.path, rules_dir, directory, globs.patterns, "globs", globs.match
                )
                self.waiting.append(waiting)
                if lazy:  # matched against the touched file next: said only if attached
                    continue
            loader.trace(found.path, Layer.PROJECT, Reason(Why.RULE, f"rule in {shown_dir}"))
            self.pending.append(rf.pending(loader, found))
            name = Path(found.path).name.removesuffix(SUFFIX)
            if rule.kind is Kind.AUTO:
                loader.note(
                    CURSOR_AUTO,
                    found.path,
                    f"auto-attached rule: globs {rf.patterns_shown(rule.globs.patterns)} "
                    f"(relative to {loader.display(directory)}/); attached when the agent "
                    "reads a matching file",
                )
            elif rule.kind is Kind.REQUESTED:
                if not lazy:
                    self._list(found.path, name, rule.description, shown_dir)
                loader.note(
                    CURSOR_REQUESTED,
                    found.path,
                    f"agent-requested rule {name!r}: "
                    + ("listed by its description" if not lazy else "not listed (nested)")
                    + "; Cursor reads it only when the agent asks for it",
                )
            else:
                loader.note(
                    CURSOR_MANUAL,
                    found.path,
                    f"manual rule (no alwaysApply, globs or description): loaded only when "
                    f"you mention @{name}",
                )
        return out

    def _list(self, path: str, name: str, description: str, shown_dir: str) -> None:
        """An agent-requested rule in the index, when it has room: its description one line
        and cut (`discovery.index`), said when cut."""
        listed = entry(name, description)
        if not self.index.admit(path, listed):
            return  # said once, when the index is built
        if listed.cut:
            self.loader.note(
                codes.INDEX_ENTRY_CUT,
                path,
                f"agent-requested rule {name!r}: {listed.cut}; shorten it",
            )
        self.requested.append(listed)
        if shown_dir not in self.roots:
            self.roots.append(shown_dir)

    def index_source(self, counter: TokenCounter) -> Source | None:
        """The index of the agent-requested rules listed at start (None: none), and what
        did not fit in it said."""
        if self.index.left_out:
            self.loader.note(codes.INDEX_ENTRY_CUT, self.index.first_out, self.index.full(INDEX))
        return rf.index_source(self.requested, self.roots, counter, INDEX)

    def _note_values(self, found: rf.Found, rule: Rule) -> None:
        data = found.parsed.frontmatter.data
        loader = self.loader
        value = data.get("alwaysApply")
        if "alwaysApply" in data and not isinstance(value, bool) and value is not None:
            loader.note(
                CURSOR_ALWAYS_APPLY,
                found.path,
                f"alwaysApply is {value!r}, not true or false: Cursor takes it as false",
            )
        if rule.globs.malformed:
            loader.note(
                CURSOR_GLOBS,
                found.path,
                "globs is not a comma-separated string or a list of strings: it matches nothing",
            )
        for pattern, why in rule.globs.refused:
            loader.note(
                codes.GLOB_TOO_COMPLEX,
                found.path,
                f"glob {rf.patterns_shown([pattern])} is refused ({why}) and matches nothing: "
                "simplify it",
            )


class Cursor(Client[CursorState]):
    # No format of its own: no documented request text (the native xml serves).
    name = NAME
    title = "Cursor"
    advice = Advice(split="split it into smaller rules in .cursor/rules")
    own_codes = OWN_CODES
    instruction_files = r"(?:^|/)(?:AGENTS\.md|\.cursorrules|\.cursor/rules/.+)$"
    lint_codes = frozenset(
        {
            *("CTX001", "CTX002", "CTX003", "CTX004", "CTX005", "CTX006", "CTX007", "CTX008"),
            *("CTX101", "CTX102", "CTX103", "CTX105", "CTX301", "CTX307", "CTX308", "CTX309"),
            "CTX404",
            *("CTX501", "CTX502", "CTX503", "CTX504", "CTX601", "CTX706", "CTX801", "CTX802"),
            *("CTX924", "CTX925", "CTX926", "CTX927", "CTX928"),
        }
    )

    def reading(self, run: Run) -> Reading:
        return rf.READING

    def discover(self, run: Run) -> Discovery[CursorState]:
        loader = Loader(run, reading=rf.READING)
        ctx = run.context
        root, cwd = str(ctx.project_root), str(ctx.cwd)
        walk = _Walk(loader)
        out: list[Loaded] = []
        scoped = rf.scope_dirs(root, cwd)
        for directory in scoped:
            why = Why.CWD if directory == cwd else Why.ANCESTOR
            out += walk.rules(directory, lazy=False)
            if directory == root:
                agents = Reason(why, "AGENTS.md at the workspace root")
            else:
                agents = Reason(why, f"AGENTS.md scoped to {loader.display(directory)}")
            out += loader.load(os.path.join(directory, AGENTS), Layer.PROJECT, agents, False)
            if directory == root:
                legacy = Reason(why, "legacy .cursorrules at the workspace root")
                out += loader.load(os.path.join(root, LEGACY), Layer.PROJECT, legacy, False)
        index = walk.index_source(run.counter)
        sources = (*(item.source for item in out), *((index,) if index else ()))
        state = CursorState(tuple(scoped), tuple(walk.waiting))
        return Discovery(sources, tuple(loader.diagnostics), tuple(walk.pending), state=state)

    def touch(
        self, run: Run, state: CursorState, target: Path, already: Collection[str]
    ) -> Discovery[CursorState]:
        loader = Loader(run, reading=rf.READING)
        at = rf.touch_target(loader, run, target)
        if at is None:
            return Discovery((), tuple(loader.diagnostics))
        shown = loader.display(at)
        walk = _Walk(loader)
        found: list[Loaded] = []
        root = str(run.context.project_root)
        for directory in rf.dirs_below(root, os.path.dirname(at), state.scoped):
            found += walk.rules(directory, lazy=True, on_the_way=f", on the way to {shown}")
            reason = Reason(
                Why.NESTED,
                f"AGENTS.md scoped to {loader.display(directory)}, attached for {shown}",
                touched=shown,
            )
            found += rf.load_lazily(loader, os.path.join(directory, AGENTS), reason)
        found += rf.attach_matching(loader, (*state.waiting, *walk.waiting), at, shown)
        return Discovery(attached(found, already, run), tuple(loader.diagnostics))

    def classify(self, path: Path) -> FileRole | None:
        parts = path.parts
        if ".cursor" in parts[:-1]:
            at = len(parts) - 1 - parts[::-1].index(".cursor")
            inside = parts[at + 1 :]
            if inside[:1] == ("rules",) and len(inside) > 1:
                kind = FileKind.RULE if path.name.endswith(SUFFIX) else FileKind.NEVER_LOADED
                return FileRole(kind, Path(*parts[:at]), rf.FRONTMATTER_CHARS)
        if path.name in (AGENTS, LEGACY):
            return FileRole(FileKind.INSTRUCTIONS, path.parent)
        return None

    def check_key(self, path: Path) -> Hashable:
        return role_key(self.classify(path), path)  # its checks: the kind, the name, a rule's globs

    def check_file(
        self, path: Path, text: str | None, tracked: Tracked | None
    ) -> Sequence[FileNote]:
        role = self.classify(path)
        if role is None or text is None:
            return []
        if role.kind is FileKind.NEVER_LOADED:
            return [
                FileNote(
                    1, 1, CURSOR_MD_RULE,
                    f"{path.name} is in .cursor/rules but not a .mdc file: Cursor ignores it; "
                    "rename it to .mdc (with description, globs or alwaysApply)",
                )
            ]  # fmt: skip
        if role.kind is not FileKind.RULE:
            return []
        return _rule_notes(text, str(role.load_dir))


def _rule_notes(text: str, base_dir: str) -> list[FileNote]:
    text = text.removeprefix("\ufeff")
    head, _ = fm.split_frontmatter(text, rf.FRONTMATTER_CHARS)
    if not head.present or head.error or head.too_complex:
        return []  # CTX301 / CTX308 say so
    data = head.data
    lines = Lines(text)
    out: list[FileNote] = []

    def add(key: str, code: codes.Code, message: str) -> None:
        out.append(FileNote(lines.of_key(key, head), 1, code, message))

    for key in data:
        if key not in KEYS:
            hint = " (Cursor reads globs, not paths)" if key == "paths" else ""
            add(
                key,
                CURSOR_KEY,
                f"frontmatter key '{key}' is not read by Cursor{hint}: remove it",
            )
    value = data.get("alwaysApply")
    if "alwaysApply" in data and not isinstance(value, bool):
        add(
            "alwaysApply", CURSOR_ALWAYS_APPLY,
            f"alwaysApply is {value!r}, not true or false: Cursor takes it as false; write true or false unquoted",
        )  # fmt: skip
    rule = rule_of(data, base_dir)
    if rule.globs.malformed:
        add(
            "globs",
            CURSOR_GLOBS,
            "globs must be a comma-separated string or a list of strings: it matches nothing",
        )
    for pattern, why in rule.globs.refused:
        add(
            "globs",
            CURSOR_GLOBS,
            f"glob {rf.patterns_shown([pattern])} is refused ({why}) and matches nothing: simplify it",
        )
    raw = data.get("description")
    if raw is not None and not isinstance(raw, str):
        add(
            "description",
            CURSOR_DESCRIPTION,
            f"description is {raw!r}, not text: the agent cannot request the rule by it",
        )
    listed = entry("", rule.description) if rule.kind is Kind.REQUESTED else None
    if listed is not None and listed.cut:
        add(
            "description",
            codes.INDEX_ENTRY_CUT,
            f"{listed.cut} in the agent-requested rules; shorten it",
        )
    return out


CLIENT = Cursor()
