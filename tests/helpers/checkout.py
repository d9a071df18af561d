"""This checkout as a user gets it: a git repository of its files as they are now (committed
or not), at one commit, to clone, to name as a pre-commit `repo:` with that commit as `rev:`,
or to install from, as the README says.

A copy, not this checkout itself, so that the tests see the change under test before it is
committed, and never a tag or a branch of the developer's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.helpers.trees import ROOT


def git_env(home: Path) -> dict[str, str]:
    """The process environment for git and pre-commit in a test: no variable of an outer git
    run (a hook's `GIT_INDEX_FILE`), an identity, and `home` as the home directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(
        HOME=str(home),
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
        GIT_CONFIG_NOSYSTEM="1",
    )
    return env


def git(repo: Path, env: dict[str, str], *args: str) -> str:
    """`git -C repo ARGS`: its stdout, stripped; a failure raises."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout.strip()


def snapshot(dest: Path, env: dict[str, str]) -> str:
    """A git repository at `dest` holding this checkout's files (tracked, and untracked but not
    ignored) as they are on disk, committed; returns the commit's hash."""
    listed = git(ROOT, env, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for rel in dict.fromkeys(p for p in listed.split("\0") if p):
        source = ROOT / rel
        if not source.is_file() and not source.is_symlink():
            continue  # deleted in the working tree, not yet in the index
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    git(dest, env, "init", "-q")
    git(dest, env, "add", "-A")
    git(dest, env, "commit", "-q", "--no-verify", "-m", "snapshot of the checkout under test")
    return git(dest, env, "rev-parse", "HEAD")
