"""The few git facts lint needs, asked of git itself (once per repository and run)."""

from __future__ import annotations

import os
import select
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess


GIT_TIMEOUT = 60.0


# A repository's own `.git/config` may name a command as `core.fsmonitor`, which git runs
# when it reads the index: never (docs/security.md).
SAFE = ("-c", "core.fsmonitor=false")
_IGNORED_ARGS = ("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--")


class GitRepo:
    """One repository's tracked files and ignore rules; answers are cached for the run."""

    __slots__ = ("_ignored", "_pending", "_to_ask", "_tracked", "root")

    def __init__(self, root: Path) -> None:
        self.root = root
        self._tracked: frozenset[str] | None = None
        self._ignored: dict[str, bool] = {}  # root-relative path: git-ignored
        self._to_ask: list[str] = []  # paths `is_ignored` may be asked about, asked in one go
        self._pending: tuple[int, int] | None = None  # (pid, read end) of a prefetch

    def prefetch(self) -> None:
        """Start `git ls-files` now so that it runs while lint reads and parses files.

        `os.posix_spawnp` rather than `subprocess`: importing `subprocess` costs more than
        the whole spawn, and `ctxasm lint` on one file must start in little more time than
        `import click, yaml, pathspec`.
        """
        if (
            self._tracked is not None
            or self._pending is not None
            or not hasattr(os, "posix_spawnp")
        ):
            return
        read_end, write_end = os.pipe()
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            pid = os.posix_spawnp(
                "git",
                ["git", *SAFE, "-C", str(self.root), "ls-files", "-z", "--cached"],
                os.environ,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, write_end, 1),
                    (os.POSIX_SPAWN_DUP2, devnull, 2),
                    (os.POSIX_SPAWN_CLOSE, read_end),
                ],
            )
        except OSError:  # no git: the slow path will say so (no git facts)
            os.close(read_end)
            return
        finally:
            os.close(write_end)
            os.close(devnull)
        self._pending = (pid, read_end)

    def _collect(self) -> list[str] | None:
        """The prefetched listing (None when it failed); reaps the child."""
        if self._pending is None:
            return None
        pid, fd = self._pending
        self._pending = None
        chunks = []
        deadline = time.monotonic() + GIT_TIMEOUT
        with os.fdopen(fd, "rb", buffering=0) as pipe:
            while True:
                ready, _, _ = select.select([pipe], [], [], max(0.0, deadline - time.monotonic()))
                chunk = pipe.read(1 << 16) if ready else None
                if not chunk:
                    break
                chunks.append(chunk)
        if not ready:  # git is stuck: give up on git facts rather than hang a commit
            import signal

            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            return None
        return [n for n in b"".join(chunks).decode("utf-8", "surrogateescape").split("\0") if n]

    def close(self) -> None:
        """Reap a prefetch nobody asked for (no zombie processes)."""
        self._collect()

    def _git(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[bytes] | None:
        import subprocess  # only when a check needs git: `ctxasm lint` starts without it

        try:
            return subprocess.run(
                ["git", *SAFE, "-C", str(self.root), *args],
                input=stdin.encode("utf-8", "surrogateescape"),
                capture_output=True,
                check=False,
                timeout=GIT_TIMEOUT,
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

    def listed_and_ignored(self, pathspecs: Sequence[str]) -> tuple[list[str], list[str]]:
        """`listed(untracked=True)` and the ignored files matching `pathspecs` (git's `:(glob)`
        magic, as `ls-files` lists them; [] when git fails), the two git processes running
        side by side (each walks the working tree: on a large one, most of the wait)."""
        import subprocess

        try:
            side = subprocess.Popen(
                ["git", *SAFE, "-C", str(self.root), *_IGNORED_ARGS, *pathspecs],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            return self.listed(untracked=True), []
        try:
            listed = self.listed(untracked=True)
            out, _ = side.communicate(timeout=GIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            side.kill()
            side.communicate()
            return listed, []
        finally:
            if side.poll() is None:  # an error above: never leave the child behind
                side.kill()
                side.wait()
        if side.returncode != 0:
            return listed, []
        return listed, [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]

    def tracked(self) -> frozenset[str]:
        """Every tracked path, relative to the root, `/`-separated."""
        if self._tracked is None and self._pending is not None:
            prefetched = self._collect()
            if prefetched is not None:
                self._tracked = frozenset(prefetched)
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

    def will_ask(self, paths: Iterable[Path]) -> None:
        """Paths `is_ignored` may be asked about later: the first question asks git about
        all of them in one `git check-ignore` (one process per file cost 8 ms each)."""
        self._to_ask += (rel for rel in map(self.relative, paths) if rel is not None)

    def is_ignored(self, path: Path) -> bool:
        rel = self.relative(path)
        if rel is None:
            return False
        if rel not in self._ignored:
            asked = list(dict.fromkeys([rel, *self._to_ask]))
            self._to_ask = []
            for name in asked:
                self._ignored[name] = False
            for name in self._check_ignore(asked):
                self._ignored[name] = True
        return self._ignored[rel]

    def _check_ignore(self, names: list[str]) -> list[str]:
        """Which of `names` git ignores (`git check-ignore --stdin`); [] when git fails."""
        result = self._git("check-ignore", "-z", "--stdin", stdin="".join(n + "\0" for n in names))
        if result is None or result.returncode not in (0, 1):
            return []
        return [n for n in result.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
