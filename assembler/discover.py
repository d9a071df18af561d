"""The `claude-code` discoverer: what Claude Code loads at session start, in its order.

Order (SPEC section 4, checked against the 2.1.x client): managed file, managed settings'
`claudeMd`, managed rules; user file and rules; then every directory from the filesystem root
(excluded) down to cwd, not bounded by the git root, each giving `CLAUDE.md`,
`.claude/CLAUDE.md`, unconditional `.claude/rules/**/*.md`, `CLAUDE.local.md`; auto memory last.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .errors import DiscoveryError
from .loader import Context, Loaded, Loader, text_source
from .locations import (
    Settings,
    canonical_git_root,
    config_dir,
    env_falsy,
    env_truthy,
    external_imports_approved,
    find_git_root,
    is_within,
    load_settings,
    slug,
    validate_memory_dir,
)
from .model import Diagnostic, Layer, Reason, Severity, Source, Why
from .policy import Policy
from .rules import RuleSet, load_rules
from .tokens import TokenCounter

if TYPE_CHECKING:
    from .skills import Skill

MANAGED_SETTINGS_DISPLAY = "<managed-settings>"


class Discovery(NamedTuple):
    """What discovery found: sources in load order, diagnostics, the conditional rules, and
    the skills listed in the skills index (the index itself is one of the sources)."""

    sources: tuple[Source, ...]
    diagnostics: tuple[Diagnostic, ...]
    conditional: tuple[Source, ...] = ()
    skills: tuple[Skill, ...] = ()


def build_context(cwd: Path, home: Path, managed_dir: Path, environ: Mapping[str, str]) -> Context:
    """Fix the machine facts for one run. `cwd` is resolved like the client's `process.cwd()`."""
    try:
        real = Path(os.path.realpath(cwd, strict=True))
    except OSError as err:
        raise DiscoveryError(
            f"{cwd}: no such directory ({err.strerror}); pass an existing PATH"
        ) from None
    if not real.is_dir():
        raise DiscoveryError(f"{cwd}: not a directory; pass the directory the agent starts in")
    git_root = find_git_root(real)
    canonical = canonical_git_root(git_root) if git_root else None
    home = Path(os.path.abspath(home))
    return Context(
        cwd=real,
        home=home,
        managed_dir=Path(os.path.abspath(managed_dir)),
        environ=environ,
        config_dir=config_dir(home, environ),
        git_root=git_root,
        canonical_root=canonical,
        project_root=git_root or real,
        settings=Settings(),
        include_external=False,
    )


def with_client_settings(ctx: Context) -> Context:
    """Read Claude Code's settings layers and the external-import approval into the context."""
    settings = load_settings(ctx.managed_dir, ctx.config_dir, ctx.cwd)
    approved = external_imports_approved(ctx.home, ctx.environ, ctx.canonical_root or ctx.cwd)
    return ctx._replace(settings=settings, include_external=approved)


def _ancestors(cwd: Path) -> list[str]:
    """Every directory from just below the filesystem root down to cwd."""
    dirs = []
    directory = str(cwd)
    while (parent := os.path.dirname(directory)) != directory:
        dirs.append(directory)
        directory = parent
    return dirs[::-1]


def discover_claude_code(ctx: Context, policy: Policy, counter: TokenCounter) -> Discovery:
    loader = Loader(ctx, policy, counter)
    for path, problem in ctx.settings.problems:
        loader.note("settings-invalid", Severity.WARNING, path, problem)
    out: list[Loaded] = []
    approved = ctx.include_external

    # 1. Managed: file, managed-settings claudeMd, rules.
    managed = str(ctx.managed_dir / "CLAUDE.md")
    out += loader.load(
        managed, Layer.MANAGED, Reason(Why.MANAGED_FILE, "managed policy file"), approved
    )
    if ctx.settings.managed_claude_md is not None:
        out += _managed_settings_source(ctx, policy, counter)
    managed_rules = RuleSet(
        str(ctx.managed_dir / ".claude" / "rules"), Layer.MANAGED, str(ctx.cwd), approved
    )
    out += load_rules(loader, managed_rules, conditional=False)

    # 2. User: `CLAUDE_CONFIG_DIR` or ~/.claude; user files may import from anywhere.
    user_file = str(ctx.config_dir / "CLAUDE.md")
    out += loader.load(user_file, Layer.USER, Reason(Why.USER_FILE, "user instructions"), True)
    user_rules = RuleSet(str(ctx.config_dir / "rules"), Layer.USER, str(ctx.cwd), True)
    out += load_rules(loader, user_rules, conditional=False)

    # 3. Every directory from the root down to cwd.
    skip_checked_in = _nested_worktree_skip(ctx)
    cwd = str(ctx.cwd)
    join = os.path.join
    for directory in _ancestors(ctx.cwd):
        reason = _IN_CWD if directory == cwd else _ANCESTOR
        if not skip_checked_in(directory):
            out += loader.load(join(directory, "CLAUDE.md"), Layer.PROJECT, reason, approved)
            dot_claude = join(directory, ".claude")
            out += loader.load(join(dot_claude, "CLAUDE.md"), Layer.PROJECT, reason, approved)
            rules = RuleSet(join(dot_claude, "rules"), Layer.PROJECT, directory, approved)
            out += load_rules(loader, rules, conditional=False)
        out += loader.load(join(directory, "CLAUDE.local.md"), Layer.LOCAL, reason, approved)

    # 4. Auto memory.
    memory = _auto_memory(ctx, loader)
    if memory is not None:
        out.append(memory)

    return Discovery(
        tuple(item.source for item in out),
        tuple(loader.diagnostics),
        tuple(item.source for item in loader.deferred),
    )


_IN_CWD = Reason(Why.CWD, "in cwd")
_ANCESTOR = Reason(Why.ANCESTOR, "ancestor of cwd")


def _managed_settings_source(ctx: Context, policy: Policy, counter: TokenCounter) -> list[Loaded]:
    from .markdown import strip_block_comments

    text = ctx.settings.managed_claude_md or ""
    if policy.content.strip_html_comments:
        text = strip_block_comments(text)
    if not text.strip():
        return []
    reason = Reason(Why.MANAGED_SETTINGS, "claudeMd in managed-settings.json")
    source = text_source(
        Layer.MANAGED, MANAGED_SETTINGS_DISPLAY, MANAGED_SETTINGS_DISPLAY, reason,
        text.strip(), policy.tag_for(Layer.MANAGED), counter, raw=text,
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


def auto_memory_path(ctx: Context) -> Path | None:
    """Where the client reads MEMORY.md, or None when auto memory is off."""
    env = ctx.environ
    if env_truthy(env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY"):
        return None
    if not env_falsy(env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY"):
        if env_truthy(env, "CLAUDE_CODE_SIMPLE"):
            return None
        if env_truthy(env, "CLAUDE_CODE_REMOTE") and not env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR"):
            return None
        if ctx.settings.auto_memory_enabled is False:
            return None
    override = validate_memory_dir(env.get("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE"), ctx.home, False)
    override = override or validate_memory_dir(ctx.settings.auto_memory_directory, ctx.home, True)
    if override is not None:
        return override / "MEMORY.md"
    base = (
        Path(env["CLAUDE_CODE_REMOTE_MEMORY_DIR"])
        if env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR")
        else ctx.config_dir
    )
    name = env.get("CLAUDE_CODE_PROJECT_DIR_NAME") or slug(ctx.canonical_root or ctx.cwd)
    return base / "projects" / name / "memory" / "MEMORY.md"


def _auto_memory(ctx: Context, loader: Loader) -> Loaded | None:
    """MEMORY.md: read like any file but never excluded, never importing, cut by the budgeter."""
    path = auto_memory_path(ctx)
    reason = Reason(Why.AUTO_MEMORY, "auto memory index of the project")
    if path is not None:
        loader.trace(str(path), Layer.MEMORY, reason)
    if path is None or os.path.normpath(path) in loader.processed:
        return None
    if not os.path.lexists(path):
        return None
    processed = loader.read(str(path), "auto memory")
    if processed is None:
        return None
    text = processed.text
    content = text.strip()
    if not content:
        return None
    source = text_source(
        Layer.MEMORY, str(path), ctx.display(str(path)), reason, content,
        loader.policy.tag_for(Layer.MEMORY), loader.counter, raw=text, is_index=True,
    )  # fmt: skip
    return Loaded(source, None)
