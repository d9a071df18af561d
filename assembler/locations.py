"""Where things live: defaults for home/managed/environ, git roots, the auto-memory slug, settings.

The three defaults (`default_home`, `default_managed_dir`, `default_environ`) are the only
places the library looks at the real machine; tests replace them so that touching the real
home or `/etc/claude-code` fails loudly.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_SLUG = 200
_TRUTHY = frozenset({"1", "true", "yes", "on"})
_FALSY = frozenset({"0", "false", "no", "off"})


def default_home() -> Path:
    return Path.home()


def default_environ() -> Mapping[str, str]:
    return os.environ


def default_managed_dir(platform: str = sys.platform) -> Path:
    """Claude Code's managed policy directory for the platform."""
    if platform == "darwin":
        return Path("/Library/Application Support/ClaudeCode")
    if platform.startswith("win"):
        return Path("C:/Program Files/ClaudeCode")
    return Path("/etc/claude-code")


def env_truthy(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() in _TRUTHY


def env_falsy(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() in _FALSY


def config_dir(home: Path, environ: Mapping[str, str]) -> Path:
    """`CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    override = environ.get("CLAUDE_CONFIG_DIR")
    return Path(override) if override else home / ".claude"


def global_config_file(home: Path, environ: Mapping[str, str]) -> Path:
    """`~/.claude.json` (in `CLAUDE_CONFIG_DIR` when set), where project approvals live."""
    override = environ.get("CLAUDE_CONFIG_DIR")
    return Path(override or home) / ".claude.json"


def find_git_root(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `.git` (a directory or a file)."""
    directory = start
    while True:
        if os.path.lexists(directory / ".git"):
            return directory
        if directory.parent == directory:
            return None
        directory = directory.parent


def canonical_git_root(git_root: Path) -> Path:
    """For a linked worktree, the main repository's root; otherwise `git_root` itself."""
    dot_git = git_root / ".git"
    try:
        content = dot_git.read_text(encoding="utf-8").strip()
    except OSError:
        return git_root
    if not content.startswith("gitdir:"):
        return git_root
    try:
        worktree_git_dir = (git_root / content[len("gitdir:") :].strip()).resolve()
        common = (worktree_git_dir / (worktree_git_dir / "commondir").read_text().strip()).resolve()
        if worktree_git_dir.parent != common / "worktrees":
            return git_root
        backlink = Path((worktree_git_dir / "gitdir").read_text().strip()).resolve()
        if backlink != dot_git.resolve():
            return git_root
    except OSError:
        return git_root
    return common if common.name != ".git" else common.parent


def slug(path: Path) -> str:
    """Claude Code's `sanitizePath`: every non-alphanumeric character becomes `-`.

    Names over 200 characters are cut and suffixed with a hash that differs between the
    client's runtimes (Bun.hash vs djb2); we use djb2 (the Node/SDK variant) and say so.
    """
    text = str(path)
    sanitized = _NON_ALNUM.sub("-", text)
    if len(sanitized) <= _MAX_SLUG:
        return sanitized
    return f"{sanitized[:_MAX_SLUG]}-{_base36(abs(_djb2(text)))}"


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


# --- settings -----------------------------------------------------------------------------


class Settings(NamedTuple):
    """The parts of Claude Code's settings layers that change what is loaded."""

    excludes: tuple[str, ...] = ()
    auto_memory_enabled: bool | None = None
    auto_memory_directory: str | None = None
    managed_claude_md: str | None = None
    problems: tuple[tuple[str, str], ...] = ()


def _read_json(path: Path) -> tuple[dict[str, Any] | None, str]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return None, ""
    except OSError as err:
        return None, f"cannot read ({err.strerror}); fix its permissions"
    except UnicodeDecodeError as err:
        return None, f"not UTF-8 ({err.reason} at byte {err.start}); re-save it as UTF-8"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        return None, f"invalid JSON ({err}); fix the syntax"
    if not isinstance(data, dict):
        return None, "not a JSON object; it is ignored"
    return data, ""


def load_settings(managed_dir: Path, config: Path, cwd: Path) -> Settings:
    """Merge managed, user, project and local settings (the keys that matter here)."""
    layers: list[tuple[str, Path]] = [
        ("user", config / "settings.json"),
        ("project", cwd / ".claude" / "settings.json"),
        ("local", cwd / ".claude" / "settings.local.json"),
        ("policy", managed_dir / "managed-settings.json"),
    ]
    excludes: list[str] = []
    enabled: bool | None = None
    directories: dict[str, str] = {}
    claude_md: str | None = None
    problems: list[tuple[str, str]] = []
    for name, path in layers:
        data, problem = _read_json(path)
        if problem:
            problems.append((str(path), problem))
        if data is None:
            continue
        patterns = data.get("claudeMdExcludes")
        if isinstance(patterns, list):
            excludes.extend(p for p in patterns if isinstance(p, str))
        if isinstance(data.get("autoMemoryEnabled"), bool):
            enabled = data["autoMemoryEnabled"]
        if isinstance(data.get("autoMemoryDirectory"), str) and name != "project":
            directories[name] = data["autoMemoryDirectory"]
        if name == "policy" and isinstance(data.get("claudeMd"), str):
            # JSON may carry lone surrogates (`"\ud800"`); make them U+FFFD like a UTF-8 read.
            raw = data["claudeMd"]
            claude_md = _LONE_SURROGATE.sub("\ufffd", raw)
            if claude_md != raw:
                problems.append(
                    (
                        "<managed-settings>",
                        "claudeMd holds invalid Unicode (lone surrogates), replaced by U+FFFD: "
                        f"fix {path}",
                    )
                )
    directory = next(
        (directories[n] for n in ("policy", "local", "user") if n in directories), None
    )
    return Settings(tuple(excludes), enabled, directory, claude_md, tuple(problems))


def external_imports_approved(home: Path, environ: Mapping[str, str], project_key: Path) -> bool:
    """`projects["<git root>"].hasClaudeMdExternalIncludesApproved` in `~/.claude.json`."""
    data, _ = _read_json(global_config_file(home, environ))
    if data is None:
        return False
    projects = data.get("projects")
    if not isinstance(projects, dict):
        return False
    entry = projects.get(str(project_key).replace("\\", "/"))
    return isinstance(entry, dict) and entry.get("hasClaudeMdExternalIncludesApproved") is True


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


def is_within(path: str, directory: str) -> bool:
    """Claude Code's `pathInWorkingPath` (case-insensitive, `..` never inside)."""
    a = _mac_private(os.path.normpath(path)).lower()
    b = _mac_private(os.path.normpath(directory)).lower()
    if (
        os.path.isabs(a)
        and os.path.isabs(b)
        and (a == b or a.startswith(b.rstrip(os.sep) + os.sep))
    ):
        return True  # the common case, without `relpath` (a normalized path has no `..`)
    rel = os.path.relpath(a, b) if os.path.isabs(a) == os.path.isabs(b) else a
    if rel == ".":
        return True
    if re.search(r"(?:^|[\\/])\.\.(?:[\\/]|$)", rel):
        return False
    return not os.path.isabs(rel)


def _mac_private(path: str) -> str:
    if not path.startswith("/private/"):
        return path
    path = re.sub(r"^/private/var/", "/var/", path)
    return re.sub(r"^/private/tmp(/|$)", r"/tmp\1", path)


def _under(path: str, base: str) -> bool:
    return path == base or path.startswith(base if base.endswith(os.sep) else base + os.sep)


def display_path(path: str, project_root: str | Path, home: str | Path) -> str:
    """How a path is shown before the boundary: the same on every machine that has the repo.

    Relative to the project root, or `~/...` under the home directory (whichever base is
    deeper); else `../...` when it sits in a directory above the project root; else absolute.
    Plain string work: it runs for every candidate of every run.
    """
    if not os.path.isabs(path):  # a pseudo path such as `<managed-settings>`
        return path
    root, home_dir = os.fspath(project_root), os.fspath(home)
    in_project, in_home = _under(path, root), _under(path, home_dir)
    if in_home and (not in_project or _under(home_dir, root)):
        rel = path[len(home_dir) :].lstrip(os.sep)
        return "~/" + rel.replace(os.sep, "/") if rel else "~"
    if in_project:
        return path[len(root) :].lstrip(os.sep).replace(os.sep, "/") or "."
    parent, name = os.path.split(path)
    if _under(root, parent):
        ups = root[len(parent) :].strip(os.sep).count(os.sep) + 1
        return "../" * ups + name
    return path.replace(os.sep, "/")
