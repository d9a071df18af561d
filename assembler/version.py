"""`ctxasm --version`: the version, and the commit this copy of ctxasm was built from.

ctxasm is installed from a clone of its repository, which has no release tags, so the version
alone does not say which code runs. A checkout (an editable install, `python -m assembler` in
a clone) asks git for its commit; a wheel carries the commit it was built from in
`_data/commit`, written at build time by `hatch_build.py`, which loads this file by its path:
so it imports nothing but the standard library. Without git, or a record, the version alone.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
RECORD = ("_data", "commit")  # the wheel's record, under the package
_HASH = re.compile(r"[0-9a-f]{7,64}")
# `git rev-parse` answers in milliseconds; a git that hangs must not hang `--version`.
GIT_TIMEOUT = 10


def commit_of(root: Path) -> str | None:
    """The commit checked out in the git work tree whose top is `root`, 12 hex digits; None
    when `root` is not the top of one (a wheel in a virtual environment inside some other
    repository must not name that repository's commit) or git cannot tell."""
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git on PATH, or it hung
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and _HASH.fullmatch(commit) else None


def recorded(package: Path = PACKAGE) -> str | None:
    """The commit a wheel of `package` was built from, if its build recorded one."""
    try:
        commit = package.joinpath(*RECORD).read_text(encoding="ascii").strip()
    except (OSError, UnicodeError):
        return None
    return commit if _HASH.fullmatch(commit) else None


def version_line() -> str:
    """`ctxasm, version 0.1.0 (commit 0123456789ab)`; the version alone when no commit is
    known, and `unknown` for a checkout that was never installed."""
    from importlib.metadata import PackageNotFoundError, version  # ~18 ms: only here

    try:
        number = version("ctxasm")
    except PackageNotFoundError:
        number = "unknown (not installed)"
    commit = commit_of(PACKAGE.parent) or recorded()
    return f"ctxasm, version {number}" + (f" (commit {commit})" if commit else "")
