"""Claude Code's settings: the layers that change what loads, approvals, and where memory is.

`ClaudeSetup` is what the `claude-code` client reads once per run before it walks the tree:
the config directory (`CLAUDE_CONFIG_DIR` or `~/.claude`), the merged settings layers (user,
project, local, managed: the keys that change loading), and whether external imports are
approved for the project (`~/.claude.json`). Every file goes through the run's `Disk`, so the
`Assembler` and `ctxasm watch` follow edits to settings like edits to instruction files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ...discovery.context import Context, Run
from ...discovery.disk import Disk
from ...discovery.jsonfile import read_json
from ...discovery.loader import Reading, Words
from ...discovery.locations import env_falsy, env_truthy
from ...display import as_client_reads
from ...model import Layer
from ...parsing import globs
from .versions import Facts, dialect, facts

# Settings files are small; `~/.claude.json` keeps per-project history and can grow large.
SETTINGS_BYTES = 4 * 1024 * 1024
GLOBAL_CONFIG_BYTES = 64 * 1024 * 1024
MANAGED_SETTINGS_DISPLAY = "<managed-settings>"
# Where Claude Code's configuration is instead of `~/.claude` (and `~/.claude.json`).
CONFIG_DIR_VARIABLE = "CLAUDE_CONFIG_DIR"
# Its words in what the loader says: the setting that excludes files, where approvals live.
WORDS = Words(
    "claudeMdExcludes",
    "unless external imports are approved (answer yes when Claude Code asks at start; it "
    "records hasClaudeMdExternalIncludesApproved for the project in ~/.claude.json)",
)
_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")
MAX_SLUG = 200
# claudeMdExcludes never removes managed or auto-memory files (SPEC section 4).
_EXCLUDABLE = frozenset({Layer.USER, Layer.PROJECT, Layer.LOCAL, Layer.SUBDIRECTORY})


class Settings(NamedTuple):
    """The parts of Claude Code's settings layers that change what is loaded."""

    excludes: tuple[str, ...] = ()
    exclude_files: tuple[str, ...] = ()  # the settings file each pattern of `excludes` is from
    auto_memory_enabled: bool | None = None
    auto_memory_directory: str | None = None
    managed_claude_md: str | None = None
    problems: tuple[tuple[str, str], ...] = ()
    # The repository's settings file whose `autoMemoryDirectory` is used (None: the user's or
    # the managed settings chose it, or none did).
    memory_moved_by: str | None = None
    # The agents-md plugin's mode (`instruction_files`), from the user's settings.
    instruction_files: str = "claude-md-or-agents-md"


class ClaudeSetup(NamedTuple):
    """What the client reads before it walks the tree: kept with the assembly for touches."""

    config_dir: Path
    settings: Settings
    include_external: bool  # external imports approved for this project
    # Whether the agents-md plugin loads AGENTS.md files on reads below cwd (decided by
    # what loaded at start; `client.discover` sets it).
    nested_agents_md: bool = False


def config_dir(ctx: Context) -> Path:
    """`CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    return ctx.environ_path(CONFIG_DIR_VARIABLE) or ctx.home / ".claude"


def global_config_file(ctx: Context) -> Path:
    """`~/.claude.json` (in `CLAUDE_CONFIG_DIR` when set), where project approvals live."""
    return (ctx.environ_path(CONFIG_DIR_VARIABLE) or ctx.home) / ".claude.json"


def read_setup(ctx: Context, disk: Disk, facts: Facts) -> ClaudeSetup:
    """Read the settings layers and the external-import approval for this run."""
    config = config_dir(ctx)
    root_local = None
    if facts.root_local_settings and ctx.git_root is not None and ctx.git_root != ctx.cwd:
        root_local = project_settings_files(ctx.git_root)[1]
    settings = load_settings(ctx.managed_dir, config, ctx.cwd, disk, root_local)
    project = ctx.canonical_root or ctx.cwd
    global_config = global_config_file(ctx)
    approved, problem = external_imports_approved(global_config, project, disk)
    if problem:
        settings = settings._replace(problems=(*settings.problems, (str(global_config), problem)))
    return ClaudeSetup(config, settings, approved)


def read_setup_shared(
    ctx: Context, disk: Disk, memo: dict[Hashable, Any], facts: Facts
) -> ClaudeSetup:
    """`read_setup` for one of the many starts of a run (lint), kept in `memo` for starts
    without settings files of their own: the other layers are the same files for all of
    them, read once, and only the project's approval depends on where the start is. The
    skipped reads are not told to the disk's observer (runs that record nothing)."""
    if any(disk.lexists(str(path)) for path in project_settings_files(ctx.cwd)):
        return read_setup(ctx, disk, facts)
    # The git root's local settings are the same file for every start below it.
    key: tuple[object, ...] = (
        "claude-setup",
        ctx.home,
        ctx.managed_dir,
        ctx.canonical_root or ctx.cwd,
        facts,
    )
    if facts.root_local_settings:
        key += (ctx.git_root, ctx.git_root == ctx.cwd)
    found = memo.get(key)
    if not isinstance(found, ClaudeSetup):
        found = memo[key] = read_setup(ctx, disk, facts)
    return found


def project_settings_files(cwd: Path) -> tuple[Path, Path]:
    """The settings layers a start reads in its own directory: project, then local."""
    dot_claude = cwd / ".claude"
    return dot_claude / "settings.json", dot_claude / "settings.local.json"


def load_settings(
    managed_dir: Path, config: Path, cwd: Path, disk: Disk, root_local: Path | None = None
) -> Settings:
    """Merge managed, user, project and local settings (the keys that matter here);
    `root_local`: the git root's local settings, read too from a deeper cwd (2.1.332)."""
    project, local = project_settings_files(cwd)
    layers: list[tuple[str, Path]] = [
        ("user", config / "settings.json"),
        ("project", project),
        *((("local", root_local),) if root_local is not None else ()),
        ("local", local),
        ("policy", managed_dir / "managed-settings.json"),
    ]
    excludes: list[str] = []
    exclude_files: list[str] = []
    enabled: bool | None = None
    directories: dict[str, tuple[str, str]] = {}  # layer -> (autoMemoryDirectory, its file)
    claude_md: str | None = None
    problems: list[tuple[str, str]] = []
    instruction_files = AGENTS_FALLBACK
    for name, path in layers:
        data, problem = read_json(path, disk, SETTINGS_BYTES)
        if problem:
            problems.append((str(path), problem))
        if data is None:
            continue
        for key, wanted in _wrong_types(data):
            problems.append(
                (str(path), f"{key!r} is not {wanted}; the client ignores it: fix the value")
            )
        patterns = data.get("claudeMdExcludes")
        # A list holding anything but strings is ignored whole (SPEC 4b, 2.1.197).
        if isinstance(patterns, list) and all(isinstance(p, str) for p in patterns):
            excludes += patterns
            exclude_files += [str(path)] * len(patterns)
        if name == "user":
            instruction_files = agents_md_mode(data)
        if isinstance(data.get("autoMemoryEnabled"), bool):
            enabled = data["autoMemoryEnabled"]
        # Never from the project's checked-in settings (the client ignores it there).
        if isinstance(data.get("autoMemoryDirectory"), str) and name != "project":
            directories[name] = (data["autoMemoryDirectory"], str(path))
        if name == "policy" and isinstance(data.get("claudeMd"), str):
            claude_md = _managed_claude_md(data["claudeMd"], path, problems)
    chosen = next((n for n in ("policy", "local", "user") if n in directories), None)
    directory, origin = directories[chosen] if chosen is not None else (None, None)
    return Settings(
        tuple(excludes), tuple(exclude_files), enabled, directory, claude_md, tuple(problems),
        origin if chosen == "local" else None, instruction_files,
    )  # fmt: skip


# The agents-md plugin's modes (`pluginConfigs["agents-md@builtin"].options.instructionFiles`,
# SPEC 4b.1), and what its older key `projectInstructions` says in those words (2.1.332's
# plugin: any other value of the old key reads as `claude-md`).
CLAUDE_MD_ONLY = "claude-md"
AGENTS_FALLBACK = "claude-md-or-agents-md"
AGENTS_BESIDE = "claude-md-and-agents-md"
MANAGED_ONLY = "managed-only"
_MODES = (CLAUDE_MD_ONLY, AGENTS_FALLBACK, AGENTS_BESIDE, MANAGED_ONLY)
_LEGACY_MODES = {
    "none": MANAGED_ONLY,
    "claude": CLAUDE_MD_ONLY,
    "agents-fallback": AGENTS_FALLBACK,
    "both": AGENTS_BESIDE,
}
PLUGIN_KEY = "agents-md@builtin"


def agents_md_mode(data: Mapping[str, object]) -> str:
    """The plugin's mode in the user's settings: `instructionFiles` (an unknown value is the
    default); the older `projectInstructions` counts only while `instructionFiles` says the
    default."""
    configs = data.get("pluginConfigs")
    plugin = configs.get(PLUGIN_KEY) if isinstance(configs, dict) else None
    options = plugin.get("options") if isinstance(plugin, dict) else None
    if not isinstance(options, dict):
        return AGENTS_FALLBACK
    given = options.get("instructionFiles")
    mode = given if isinstance(given, str) and given in _MODES else AGENTS_FALLBACK
    if "projectInstructions" not in options or mode != AGENTS_FALLBACK:
        return mode
    legacy = options["projectInstructions"]
    return _LEGACY_MODES.get(legacy, CLAUDE_MD_ONLY) if isinstance(legacy, str) else CLAUDE_MD_ONLY


# The keys of a settings file that change what the client loads (`load_settings`,
# `agents_md_mode`; `enabledPlugins` turns the agents-md plugin off): all a copy of the file
# keeps where `ctxasm verify` runs the program. Everything else (hooks, helpers, MCP, `env`,
# plugins, the status line) may name a program or a host, and is left out.
LOADING_KEYS = ("claudeMdExcludes", "autoMemoryEnabled", "autoMemoryDirectory")


def loading_settings(data: Mapping[str, object]) -> dict[str, object]:
    """The part of a settings file that changes what loads: `LOADING_KEYS`, and the
    agents-md plugin's own entries of the plugin keys (no other plugin's)."""
    kept = {key: data[key] for key in LOADING_KEYS if key in data}
    configs = data.get("pluginConfigs")
    plugin = configs.get(PLUGIN_KEY) if isinstance(configs, dict) else None
    options = plugin.get("options") if isinstance(plugin, dict) else None
    if isinstance(options, dict):
        mode = {k: options[k] for k in ("instructionFiles", "projectInstructions") if k in options}
        kept["pluginConfigs"] = {PLUGIN_KEY: {"options": mode}}
    enabled = data.get("enabledPlugins")
    if isinstance(enabled, dict) and isinstance(enabled.get(PLUGIN_KEY), bool):
        kept["enabledPlugins"] = {PLUGIN_KEY: enabled[PLUGIN_KEY]}
    return kept


# The keys read here, and the type the client needs (the client ignores any other value).
_KEY_TYPES: tuple[tuple[str, str, Callable[[object], bool]], ...] = (
    (
        "claudeMdExcludes",
        "a list of strings",
        lambda v: isinstance(v, list) and all(isinstance(p, str) for p in v),
    ),
    ("autoMemoryEnabled", "true or false", lambda v: isinstance(v, bool)),
    ("autoMemoryDirectory", "a string", lambda v: isinstance(v, str)),
    ("claudeMd", "a string", lambda v: isinstance(v, str)),
)


def _wrong_types(data: Mapping[str, object]) -> list[tuple[str, str]]:
    return [(key, wanted) for key, wanted, ok in _KEY_TYPES if key in data and not ok(data[key])]


def _managed_claude_md(raw: str, path: Path, problems: list[tuple[str, str]]) -> str:
    """JSON may carry lone surrogates (`"\\ud800"`); make them U+FFFD like a UTF-8 read."""
    text = as_client_reads(raw)
    if text != raw:
        problems.append(
            (
                MANAGED_SETTINGS_DISPLAY,
                f"claudeMd holds invalid Unicode (lone surrogates), replaced by U+FFFD: fix {path}",
            )
        )
    return text


def external_imports_approved(
    global_config: Path, project_key: Path, disk: Disk
) -> tuple[bool, str]:
    """`projects["<git root>"].hasClaudeMdExternalIncludesApproved` in `~/.claude.json`, and
    what is wrong with the file ("" when nothing is, or when it is not there)."""
    data, problem = read_json(global_config, disk, GLOBAL_CONFIG_BYTES)
    if data is None:
        return False, problem and f"{problem} (external imports count as not approved)"
    projects = data.get("projects", {})
    if not isinstance(projects, dict):
        return False, "'projects' is not an object; external imports count as not approved"
    entry = projects.get(str(project_key).replace("\\", "/"))
    return isinstance(entry, dict) and entry.get("hasClaudeMdExternalIncludesApproved") is True, ""


class ExcludeMatcher(NamedTuple):
    """`claudeMdExcludes` compiled: `excluded` (None without usable patterns) and, for each
    pattern refused as too complex, (the pattern, why)."""

    excluded: Callable[[str, Layer], bool] | None
    refused: tuple[tuple[str, str], ...] = ()


def exclude_matcher(patterns: tuple[str, ...], disk: Disk) -> ExcludeMatcher:
    """`claudeMdExcludes`: picomatch `{dot: true}` semantics (globstar, braces, extglobs) over
    absolute, `/`-separated paths, never for managed or memory files; matched in linear time
    (`parsing.globs`)."""
    expanded = [p.replace("\\", "/") for p in patterns if p]
    if not expanded:
        return ExcludeMatcher(None)
    written = len(expanded)
    # Claude Code adds the realpath variant of each absolute pattern's static prefix.
    for pattern in list(expanded):
        if pattern.startswith("/") and len(pattern) <= globs.MAX_GLOB_CHARS:
            cut = min((pattern.find(c) for c in "*?{[" if c in pattern), default=len(pattern))
            directory = os.path.dirname(pattern[:cut])
            real = disk.realpath(directory)  # a link there retargeted later is seen
            if real != directory:
                expanded.append(real + pattern[len(directory) :])
    compiled = globs.excludes(expanded)
    refused = tuple((expanded[i], why) for i, why in compiled.refused if i < written)
    match = compiled.match
    if match is None:
        return ExcludeMatcher(None, refused)

    def excluded(path: str, layer: Layer) -> bool:
        return layer in _EXCLUDABLE and match(path.replace("\\", "/"))

    return ExcludeMatcher(excluded, refused)


# --- auto memory --------------------------------------------------------------------------


class AutoMemory(NamedTuple):
    """Where the client reads MEMORY.md, and the repository's settings file that moved it
    there (None: the default place, or one the user, the machine or the environment chose)."""

    path: Path
    moved_by: str | None = None


def auto_memory(ctx: Context, setup: ClaudeSetup) -> AutoMemory | None:
    """Where the client reads MEMORY.md, or None when auto memory is off."""
    env = ctx.environ
    if env_truthy(env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY"):
        return None
    if not env_falsy(env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY"):
        if env_truthy(env, "CLAUDE_CODE_SIMPLE"):
            return None
        if env_truthy(env, "CLAUDE_CODE_REMOTE") and not env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR"):
            return None
        if setup.settings.auto_memory_enabled is False:
            return None
    override = validate_memory_dir(env.get("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"), ctx.home, False)
    if override is not None:
        return AutoMemory(override / "MEMORY.md")
    settings = setup.settings
    moved = validate_memory_dir(settings.auto_memory_directory, ctx.home, True)
    if moved is not None:
        return AutoMemory(moved / "MEMORY.md", settings.memory_moved_by)
    base = ctx.environ_path("CLAUDE_CODE_REMOTE_MEMORY_DIR") or setup.config_dir
    name = env.get("CLAUDE_CODE_PROJECT_DIR_NAME") or slug(ctx.canonical_root or ctx.cwd)
    return AutoMemory(base / "projects" / name / "memory" / "MEMORY.md")


def slug(path: str | Path) -> str:
    """Claude Code's `sanitizePath`: every non-alphanumeric character becomes `-`.

    Names over 200 characters are cut and suffixed with a hash that differs between the
    client's runtimes (Bun.hash vs djb2); we use djb2 (the Node/SDK variant) and say so.
    """
    text = str(path)
    name = sanitized(text)
    if len(name) <= MAX_SLUG:
        return name
    return f"{name[:MAX_SLUG]}-{_base36(abs(_djb2(text)))}"


def sanitized(path: str | Path) -> str:
    """`path` with every non-alphanumeric character made `-` (a slug before its cut)."""
    return _NON_ALNUM.sub("-", str(path))


def _djb2(text: str) -> int:
    """djb2 over UTF-16 code units with 32-bit signed overflow, as JavaScript computes it."""
    data = text.encode("utf-16-le")
    value = 0
    for i in range(0, len(data), 2):
        value = ((value << 5) - value + (data[i] | data[i + 1] << 8)) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if number == 0:
            return out


def validate_memory_dir(raw: str | None, home: Path, expand_tilde: bool) -> Path | None:
    """Claude Code's `validateMemoryPath`: absolute, not a root, no NUL; `~/` when allowed."""
    if not raw:
        return None
    candidate = raw
    if expand_tilde and (raw.startswith(("~/", "~\\"))):
        rest = raw[2:]
        if os.path.normpath(rest or ".") in (".", ".."):
            return None
        candidate = str(home / rest)
    normalized = os.path.normpath(candidate).rstrip("/\\")
    if (
        not os.path.isabs(normalized)
        or len(normalized) < 3
        or re.fullmatch(r"[A-Za-z]:", normalized)
        or normalized.startswith(("\\\\", "//"))
        or "\0" in normalized
    ):
        return None
    return Path(normalized)


def reading(run: Run) -> Reading:
    """How Claude Code reads text and follows imports at the release `run` models: its
    discovery, its lazy loading and lint's walk of a file's imports alike."""
    known = facts(run)
    return Reading(WORDS, dialect(known), known.linked_imports_external)
