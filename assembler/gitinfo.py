"""The few git facts lint needs, asked of git itself (once per repository and run)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess


class GitRepo:
    """One repository's tracked files and ignore rules; answers are cached for the run."""

    __slots__ = ("_pending", "_tracked", "root")

    def __init__(self, root: Path) -> None:
        self.root = root
        self._tracked: frozenset[str] | None = None
        self._pending: subprocess.Popen[bytes] | None = None

    def prefetch(self) -> None:
        """Start `git ls-files` now so that it runs while lint reads and parses files."""
        if self._tracked is not None or self._pending is not None:
            return
        import subprocess

        try:
            self._pending = subprocess.Popen(
                ["git", "-C", str(self.root), "ls-files", "-z", "--cached"],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            self._pending = None

    def close(self) -> None:
        """Reap a prefetch nobody asked for (no zombie processes)."""
        if self._pending is not None:
            self._pending.communicate()
            self._pending = None

    def _git(self, *args: str) -> subprocess.CompletedProcess[bytes] | None:
        import subprocess  # only when a check needs git: `ctxasm lint` starts without it

        try:
            return subprocess.run(
                ["git", "-C", str(self.root), *args],
                capture_output=True,
                check=False,
                timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired):  # git missing or stuck: no git facts
            return None

    def listed(self, untracked: bool) -> list[str]:
        """`git ls-files` (with untracked, not ignored files when asked); [] when git fails."""
        extra = ("--others", "--exclude-standard") if untracked else ()
        result = self._git("ls-files", "-z", "--cached", *extra)
        if result is None or result.returncode != 0:
            return []
        return [n for n in result.stdout.decode("utf-8", "surrogateescape").split("\0") if n]

    def tracked(self) -> frozenset[str]:
        """Every tracked path, relative to the root, `/`-separated."""
        if self._tracked is None and self._pending is not None:
            import subprocess

            pending, self._pending = self._pending, None
            try:
                out, _ = pending.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                pending.kill()
                pending.communicate()
                out = b""
            names = (
                out.decode("utf-8", "surrogateescape").split("\0")
                if pending.returncode == 0
                else []
            )
            self._tracked = frozenset(n for n in names if n)
        if self._tracked is None:
            self._tracked = frozenset(self.listed(untracked=False))
        return self._tracked

    def relative(self, path: Path) -> str | None:
        try:
            return Path(os.path.abspath(path)).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def is_tracked(self, path: Path) -> bool:
        rel = self.relative(path)
        return rel is not None and rel in self.tracked()

    def is_ignored(self, path: Path) -> bool:
        rel = self.relative(path)
        if rel is None:
            return False
        result = self._git("check-ignore", "-q", "--", rel)
        return result is not None and result.returncode == 0
