"""The `gemini` client: what Gemini CLI loads from GEMINI.md files, and where it sends it.

Rules (SPEC section 5; google-gemini/gemini-cli `packages/core/src/utils/memoryDiscovery.ts`,
`memoryImportProcessor.ts`, `packages/core/src/prompts/snippets.ts`):
  * the context file names are `context.fileName` (a string or a list, order kept) of the
    project's `.gemini/settings.json` (in cwd), else of `~/.gemini/settings.json`, else
    `GEMINI.md` (`settings`);
  * global: `~/.gemini/<name>` for each name; it goes at the end of the system instruction;
  * project: from cwd up to the project root (the nearest ancestor holding `.git`; none:
    cwd alone), stopping at `~/.gemini`, every name of each directory; duplicates of one
    file (by device and inode) dropped, then sorted as JavaScript sorts strings (UTF-16
    code units: a sibling directory named `A...` sorts before the root's `GEMINI.md`);
    they go in the first user content;
  * each file's `@imports` are inlined (`imports`), the text trimmed, and each file
    is a block `--- Context from: <ABS> ---\\n<text>\\n--- End of Context from: <ABS> ---`,
    blocks joined by a blank line.
The `gemini` format is the system part from `# Contextual Instructions (GEMINI.md)` through
`</loaded_context>` (`renderUserMemory`), a blank line, then the user part
`<loaded_context>\\n<project_context>\\n...\\n</project_context>\\n</loaded_context>`.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ... import codes
from ...discovery.context import Discovery, LoadNote, Run
from ...discovery.loader import Loader, text_source
from ...model import Assembled, Layer, Reason, Source, Why
from ..base import PLAIN_FILE_CHECKS, Advice, Client, FileKind, FileRole, FormatContext
from ..headless import Headless
from ..walk import DEFAULT_MARKERS, marked_root, root_to_cwd
from .codes import (
    CODES,
    GEMINI_IMPORT_CYCLE,
    GEMINI_IMPORT_FAILED,
    GEMINI_IMPORT_OUTSIDE,
    GEMINI_SETTINGS_INVALID,
)
from .headless import GeminiHeadless
from .imports import Importer
from .settings import GEMINI_DIR, context_file_names
from .versions import TABLE

NAME = "gemini"
# What JavaScript's `String.prototype.trim` removes.
JS_SPACE = "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_GLOBAL = Reason(Why.USER_FILE, "Gemini global context (~/.gemini)")
_IN_CWD = Reason(Why.CWD, "context file in cwd")
_ON_THE_WAY = Reason(Why.ANCESTOR, "context file between the project root and cwd")


class GeminiState(NamedTuple):
    """What discovery keeps for later touches: the context file names, and the files loaded
    at start (the client's `loadedPaths`: just-in-time context never attaches them again)."""

    names: tuple[str, ...]
    loaded: tuple[str, ...]


class Gemini(Client[GeminiState]):
    name = NAME
    title = "Gemini CLI"
    read_when_ignored = ("**/GEMINI.md",)  # read by name, ignored or not
    advice = Advice(
        split="move detail into imported files or the GEMINI.md of the directory it is about"
    )
    notes_at_start = True  # imports, settings: positioned findings lint reports
    own_codes = CODES
    versions = TABLE
    version_command = ("gemini", "--version")
    instruction_files = r"(?:^|/)(?:GEMINI\.md|\.gemini/settings\.json)$"
    lint_codes = PLAIN_FILE_CHECKS | {
        GEMINI_SETTINGS_INVALID.code,
        GEMINI_IMPORT_OUTSIDE.code,
        GEMINI_IMPORT_FAILED.code,
        GEMINI_IMPORT_CYCLE.code,
    }

    @property
    def formats(self) -> Mapping[str, FormatContext]:
        return {NAME: gemini_context}

    def discover(self, run: Run) -> Discovery[GeminiState]:
        ctx = run.context
        loader = Loader(run)
        names, problems = context_file_names(ctx, run.disk)
        notes: list[LoadNote] = []
        for path, problem in problems:
            loader.note(GEMINI_SETTINGS_INVALID, path, problem)
            notes.append(LoadNote(path, 1, 1, GEMINI_SETTINGS_INVALID.code, problem))
        importer = Importer(loader, notes)
        global_dir = str(ctx.home / GEMINI_DIR)
        out: list[Source] = []
        for name in names:
            path = os.path.join(global_dir, name)
            out += _load(path, Layer.USER, _GLOBAL, loader, importer)
        for path in _project_paths(run, names, global_dir):
            reason = _IN_CWD if os.path.dirname(path) == str(ctx.cwd) else _ON_THE_WAY
            out += _load(path, Layer.PROJECT, reason, loader, importer)
        state = GeminiState(names, tuple(s.path for s in out))
        return Discovery(tuple(out), tuple(loader.diagnostics), state=state, notes=tuple(notes))

    def touch(
        self, run: Run, state: GeminiState, target: Path, already: Collection[str]
    ) -> Discovery[GeminiState]:
        """Just-in-time context (`loadJitSubdirectoryMemory`): when a tool reads `target`
        in the trusted root (cwd), the context files from its directory up to the project
        root that are not loaded yet, root first; the client appends them to the tool's
        output."""
        ctx = run.context
        loader = Loader(run)
        if not target.is_relative_to(ctx.cwd):
            loader.note(
                codes.TOUCH_OUTSIDE, str(target),
                "outside the working directory (Gemini CLI's trusted root); nothing is attached",
            )  # fmt: skip
            return Discovery((), tuple(loader.diagnostics))
        names = state.names
        start = target if run.disk.is_dir(str(target)) else target.parent
        already = (*state.loaded, *already)  # the client's loadedPaths: start-up files too
        loaded = set(already)
        identities = {i for i in (_identity(run, p) for p in already) if i is not None}
        shown = ctx.display(str(target))
        reason = Reason(Why.NESTED, f"context file on the way to {shown}", touched=shown)
        importer = Importer(loader, [])
        out: list[Source] = []
        for path in _upward_paths(run, start, names, str(ctx.home / GEMINI_DIR)):
            if path in loaded or _identity(run, path) in identities:
                continue
            out += (
                s._replace(lazy=True)
                for s in _load(path, Layer.SUBDIRECTORY, reason, loader, importer)
            )
        return Discovery(tuple(out), tuple(loader.diagnostics))

    def classify(self, path: Path) -> FileRole | None:
        if path.name == "settings.json" and path.parent.name == GEMINI_DIR:
            return FileRole(FileKind.SETTINGS, path.parent.parent)  # its context.fileName
        return FileRole(FileKind.INSTRUCTIONS, path.parent) if path.name == "GEMINI.md" else None

    @property
    def headless(self) -> Headless:
        return HEADLESS


CLIENT = Gemini()


def _project_paths(run: Run, names: tuple[str, ...], global_dir: str) -> list[str]:
    """`getEnvironmentMemoryPaths` for cwd: root to cwd, deduplicated, sorted as JS sorts."""
    paths = _upward_paths(run, run.context.cwd, names, global_dir)
    return sorted(paths, key=lambda p: p.encode("utf-16-be", "surrogatepass"))


def _upward_paths(run: Run, start: Path, names: tuple[str, ...], global_dir: str) -> list[str]:
    """`findUpwardGeminiFiles(start, ceiling)`: each name of each directory from the project
    root (the ceiling; none: cwd) down to `start`, that exists, one per file identity."""
    disk = run.disk
    root = marked_root(run.context.cwd, DEFAULT_MARKERS, disk) or str(run.context.cwd)
    found: list[str] = []
    for directory in root_to_cwd(start, root):
        if directory == global_dir:  # the client stops its upward walk there
            found.clear()
            continue
        found += (os.path.join(directory, name) for name in names)
    seen: set[tuple[int, int]] = set()
    unique: list[str] = []
    for path in found:
        identity = _identity(run, path)
        if identity is None:
            if disk.lexists(path):
                unique.append(path)  # let reading it say what is wrong
        elif identity not in seen:
            seen.add(identity)
            unique.append(path)
    return unique


def _identity(run: Run, path: str) -> tuple[int, int] | None:
    """(device, inode) of the file at `path` (links followed), as the client dedupes."""
    try:
        st = run.disk.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _load(
    path: str, layer: Layer, reason: Reason, loader: Loader, importer: Importer
) -> list[Source]:
    """One context file, its imports inlined and its text trimmed; [] when it gives none."""
    loader.trace(path, layer, reason)
    if not loader.disk.lexists(path):
        return []
    parsed = loader.read(path, "context file")
    if parsed is None:
        return []
    root = marked_root(Path(os.path.dirname(path)), DEFAULT_MARKERS, loader.disk)
    processed = importer.process(parsed.text, path, root or os.path.dirname(path))
    content = processed.strip(JS_SPACE)
    if not content:
        loader.note(codes.EMPTY, path, "context file is empty; Gemini CLI skips it")
        return []
    loader.note_if_outside(path, "context file")
    source = text_source(
        layer, path, loader.display(path), reason, content, loader.policy.tag_for(layer),
        loader.counter, raw=processed,
    )  # fmt: skip
    return [source]


# --- the `gemini` format ------------------------------------------------------------------


def _blocks(sources: list[Source]) -> str:
    return "\n\n".join(
        f"--- Context from: {s.path} ---\n{s.content}\n--- End of Context from: {s.path} ---"
        for s in sources
        if s.content.strip(JS_SPACE)
    )


JIT_PREFIX = "\n\n--- Newly Discovered Project Context ---\n"
JIT_SUFFIX = "\n--- End Project Context ---"


def gemini_context(assembly: Assembled, date: str) -> Mapping[str, Any]:
    """The variables of `templates/gemini.j2`: the global and the project context blocks,
    and for each touched path that attached files, what the client appends to the output of
    the tool that read it (`appendJitContext`)."""
    live = [s for s in assembly.sources if not s.dropped]
    by_touch: dict[str | None, list[Source]] = {}
    for s in live:
        if s.lazy:
            by_touch.setdefault(s.reason.touched, []).append(s)
    return {
        "global_context": _blocks([s for s in live if s.layer is Layer.USER]).strip(JS_SPACE),
        "project_context": _blocks([s for s in live if s.layer is Layer.PROJECT]).strip(JS_SPACE),
        "jit": [JIT_PREFIX + _blocks(group) + JIT_SUFFIX for group in by_touch.values()],
    }


# How `ctxasm verify` runs it (`headless`), in its words above.
HEADLESS = GeminiHeadless((JIT_PREFIX, JIT_SUFFIX))
