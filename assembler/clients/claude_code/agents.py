"""Claude Code's built-in agents-md plugin (SPEC 4b.1; in 2.1.332, not in 2.1.197).

Its mode is `pluginConfigs["agents-md@builtin"].options.instructionFiles` of the user's
settings (`settings.agents_md_mode`):
  * `claude-md`: nothing changes;
  * `managed-only`: the user, project and local files are dropped (managed files and auto
    memory stay);
  * `claude-md-or-agents-md` (the default): when no `CLAUDE.md`, `.claude/CLAUDE.md` or
    `CLAUDE.local.md` loads from the filesystem root down to cwd (the user's files and rules
    do not count), every `AGENTS.md` and `.claude/AGENTS.md` there loads as project
    instructions, processed like `CLAUDE.md`, each after its directory's own files; and a
    read below cwd attaches a nested `AGENTS.md` first, through the plugin's hook, unless
    that directory has a CLAUDE.md-family file of its own;
  * `claude-md-and-agents-md`: the same, whatever loads beside it.
A file already loaded, or with the trimmed text of a loaded project file, is not loaded again.
Where each directory's files go follows the plugin's insertion: before the first project file
of a deeper directory, else after the last project file, else before auto memory.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path

from ... import codes
from ...discovery.context import Run, ancestors
from ...discovery.loader import Loaded, Loader
from ...model import Layer, Reason, Source, Why
from .codes import AGENTS_MD_INSTEAD
from .settings import AGENTS_FALLBACK, CLAUDE_MD_ONLY, MANAGED_ONLY, ClaudeSetup

AGENTS_FILES = ("AGENTS.md", os.path.join(".claude", "AGENTS.md"))
# The files whose loading keeps AGENTS.md out (the plugin's own list).
CLAUDE_FILES = ("CLAUDE.md", os.path.join(".claude", "CLAUDE.md"), "CLAUDE.local.md")
_PROJECT_FILES = frozenset({Layer.PROJECT, Layer.LOCAL})
_DROPPED_BY_MANAGED_ONLY = frozenset({Layer.USER, Layer.PROJECT, Layer.LOCAL})
_START_FILES = frozenset({Why.CWD, Why.ANCESTOR})
_PLUGIN = "the agents-md plugin's instructionFiles"


def agents_md(
    run: Run, setup: ClaudeSetup, loader: Loader, out: list[Loaded]
) -> tuple[list[Loaded], bool]:
    """What loads at start with the plugin, and whether a read attaches nested AGENTS.md."""
    mode = setup.settings.instruction_files
    if mode == CLAUDE_MD_ONLY:
        return out, False
    if mode == MANAGED_ONLY:
        for item in out:
            if item.source.layer in _DROPPED_BY_MANAGED_ONLY:
                loader.note(codes.EXCLUDED, item.source.path, f"left out by {_PLUGIN} {mode}")
        return [i for i in out if i.source.layer not in _DROPPED_BY_MANAGED_ONLY], False
    claude = [i.source for i in out if _is_claude_file(i.source)]
    if mode == AGENTS_FALLBACK and claude:
        _say_left_out(run, loader, claude[0], mode, {i.source.path for i in out})
        return out, False
    texts = {i.source.content.strip() for i in out if i.source.layer in _PROJECT_FILES}
    cwd = str(run.context.cwd)
    groups: list[tuple[str, list[Loaded]]] = []
    for directory in ancestors(run.context.cwd):
        where = "in cwd" if directory == cwd else "ancestor of cwd"
        reason = Reason(
            Why.CWD if directory == cwd else Why.ANCESTOR,
            f"{where}: AGENTS.md, loaded by the agents-md plugin ({mode})",
        )
        group: list[Loaded] = []
        for name in AGENTS_FILES:
            path = os.path.join(directory, name)
            loaded = loader.load(path, Layer.PROJECT, reason, setup.include_external)
            group += _new_texts(loader, loaded, texts)
        if group:
            groups.append((directory, group))
    for directory, group in groups:
        at = _insertion(out, directory)
        out[at:at] = group
    return out, True


def _say_left_out(
    run: Run, loader: Loader, claude: Source, mode: str, loaded: Collection[str]
) -> None:
    """Note each AGENTS.md on the way to cwd that the plugin leaves out, naming the file that
    keeps it out (explain showed nothing, and the report "never looked for"); not one that
    loads under another name (`CLAUDE.md -> AGENTS.md`)."""
    real = {os.path.realpath(path) for path in loaded if os.path.isabs(path)}
    for directory in ancestors(run.context.cwd):
        for name in AGENTS_FILES:
            path = os.path.join(directory, name)
            if os.path.lexists(path) and os.path.realpath(path) not in real:
                loader.note(
                    AGENTS_MD_INSTEAD,
                    path,
                    f"not loaded, because {loader.display(claude.path)} loads (Claude Code's "
                    f"agents-md plugin, mode {mode}: AGENTS.md only where no CLAUDE.md loads)",
                )


def _new_texts(loader: Loader, loaded: Sequence[Loaded], texts: Collection[str]) -> list[Loaded]:
    """`loaded` without the files whose trimmed text a loaded project file has already."""
    kept = []
    for item in loaded:
        if item.source.content.strip() in texts:
            loader.note(
                codes.IMPORT_DUPLICATE,
                item.source.path,
                "the same text as a project file already loaded: the agents-md plugin does "
                "not load it again",
            )
            continue
        kept.append(item)
    return kept


def _is_claude_file(source: Source) -> bool:
    """A `CLAUDE.md`-family file of the walk from the root to cwd (no import, no rule)."""
    if source.reason.why not in _START_FILES or source.layer not in _PROJECT_FILES:
        return False
    return any(source.path.endswith(os.sep + name) for name in CLAUDE_FILES)


def _insertion(out: Sequence[Loaded], directory: str) -> int:
    """Where the plugin puts the files of `directory`: before the first project file whose
    own directory (its import chain's first file's) is below it, else after the last project
    file, else before auto memory, else last."""
    below = directory.rstrip(os.sep) + os.sep
    owner = ""
    last = -1
    for i, item in enumerate(out):
        source = item.source
        if source.reason.why is not Why.IMPORT:
            owner = _project_dir(source.path)
        if source.layer in _PROJECT_FILES:
            if owner.startswith(below):
                return i
            last = i
    if last >= 0:
        return last + 1
    memory = [i for i, item in enumerate(out) if item.source.layer is Layer.MEMORY]
    return memory[0] if memory else len(out)


def _project_dir(path: str) -> str:
    """The directory a file belongs to: the one holding its `.claude`, else its own."""
    cut = path.rfind(f"{os.sep}.claude{os.sep}")
    at = cut if cut != -1 else path.rfind(os.sep)
    return os.sep if at <= 0 else path[:at]


def nested_agents_md(
    loader: Loader, nested: Sequence[Path], target: Path, fallback: bool, shown: str
) -> list[Loaded]:
    """What the plugin's hook attaches for a read of `target`: the `AGENTS.md` files of the
    directories on the way (with their imports), outer first, but the one read; with the
    default mode, not in a directory with a CLAUDE.md-family file of its own."""
    found: list[Loaded] = []
    read = os.path.normpath(target)
    for directory in nested:
        if fallback and any(loader.disk.lexists(str(directory / n)) for n in CLAUDE_FILES):
            continue
        reason = Reason(
            Why.HOOK,
            f"AGENTS.md in {loader.display(str(directory))}, attached by the agents-md "
            f"plugin on the way to {shown}",
            touched=shown,
        )
        for name in AGENTS_FILES:
            path = str(directory / name)
            if os.path.normpath(path) == str(read):
                continue  # the file read itself is in the tool's result
            for item in loader.load(path, Layer.PROJECT, reason, False, lazy=True):
                hooked = item.source._replace(reason=item.source.reason._replace(why=Why.HOOK))
                found.append(item._replace(source=hooked))
    return found
