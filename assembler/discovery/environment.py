"""The optional environment section: working directory, platform, git branch and status, date.

Machine- and moment-specific by nature, so it is the last tier, always after the boundary
(`Layer.ENVIRONMENT` is never static, whatever a policy says). Shaped after what the client
appends to its system prompt (`getSystemContext` / `getGitStatus` in `context.ts`, v2.1.88
[CC-SRC]; [CC-CTX]: "Git branch, status, and recent commits load as a separate block at the
very end of the system prompt"): `git --no-optional-locks status --short`, cut at
`MAX_STATUS_CHARS = 2000` with the client's note.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ..model import Layer, Policy, Reason, Source, TokenCounter, Why
from .context import Context
from .loader import text_source
from .programs import on_path

MAX_STATUS_CHARS = 2000
TRUNCATION_NOTE = (
    "\n... (truncated because it exceeds 2k characters. "
    'If you need more information, run "git status" using BashTool)'
)
ENVIRONMENT_PATH = "<environment>"
GIT_TIMEOUT_S = 10.0


class EnvironmentInfo(NamedTuple):
    cwd: str
    platform: str
    date: str
    is_git: bool
    branch: str | None = None
    status: str | None = None


def _git(cwd: str, environ: Mapping[str, str], *args: str) -> str | None:
    """Stdout of one git command (stripped), or None when git is missing or fails."""
    # Never a `git` of a relative PATH entry: it runs in the repository, whose own `./git`
    # `.` on PATH would name (docs/security.md, "Running programs").
    executable = on_path("git", environ.get("PATH")).path
    if executable is None:
        return None
    # The run's environment (not the process's), without optional locks: reading status must
    # never take `index.lock` from under the user's own git (the client passes the same flag).
    # A repository's own `.git/config` may name a command as `core.fsmonitor`, which `status`
    # would run: never (docs/security.md).
    env = {**environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(
            [executable, "--no-optional-locks", "-c", "core.fsmonitor=false", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace").strip()


def gather(ctx: Context, date: str, platform: str = sys.platform) -> EnvironmentInfo:
    """The facts of this machine and moment, asked of git in the run's environment."""
    cwd = str(ctx.cwd)
    if ctx.git_root is None:
        return EnvironmentInfo(cwd, platform, date, False)
    # `symbolic-ref` names the branch even before the first commit; a detached HEAD has none.
    branch = _git(cwd, ctx.environ, "symbolic-ref", "--short", "HEAD")
    if branch is None:
        short = _git(cwd, ctx.environ, "rev-parse", "--short", "HEAD")
        branch = f"(detached at {short})" if short else None
    status = _git(cwd, ctx.environ, "status", "--short")
    return EnvironmentInfo(cwd, platform, date, True, branch, status)


def cut_status(status: str) -> str:
    """The client's cut: the first 2,000 characters and a note, or the status as it is."""
    if len(status) <= MAX_STATUS_CHARS:
        return status
    return status[:MAX_STATUS_CHARS] + TRUNCATION_NOTE


def environment_text(info: EnvironmentInfo) -> str:
    lines = [
        f"Working directory: {info.cwd}",
        f"Is directory a git repo: {'Yes' if info.is_git else 'No'}",
        f"Platform: {info.platform}",
        f"Today's date: {info.date}",
    ]
    parts: Sequence[str] = ["\n".join(lines)]
    if info.is_git:
        branch = info.branch or "(unknown)"
        status = "(unknown: git failed)" if info.status is None else cut_status(info.status)
        parts = [*parts, f"Current branch: {branch}", f"Status:\n{status or '(clean)'}"]
    return "\n\n".join(parts)


def environment_source(
    ctx: Context,
    policy: Policy,
    counter: TokenCounter,
    date: str,
    platform: str = sys.platform,
) -> Source:
    text = environment_text(gather(ctx, date, platform))
    reason = Reason(Why.ENVIRONMENT, "environment: working directory, platform, git, date")
    return text_source(
        Layer.ENVIRONMENT, ENVIRONMENT_PATH, ENVIRONMENT_PATH, reason, text,
        policy.tag_for(Layer.ENVIRONMENT), counter,
    )  # fmt: skip
