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
_UNTRACKED_ARGS = ("ls-files", "-z", "--others", "--exclude-standard")


class GitRepo:
    """One repository's tracked files and ignore rules; answers are cached for the run."""

    __slots__ = ("_ignored", "_links", "_pending", "_to_ask", "_tracked", "_walks", "root")

    def __init__(self, root: Path) -> None:
        self.root = root
        self._tracked: frozenset[str] | None = None
        self._ignored: dict[str, bool] = {}  # root-relative path: git-ignored
        self._to_ask: list[str] = []  # paths `is_ignored` may be asked about, asked in one go
        self._pending: tuple[int, int] | None = None  # (pid, read end) of a prefetch
        self._walks: list[subprocess.Popen[bytes] | None] | None = None  # see `walk`
        self._links: dict[str, bool] = {}  # directory: it or one above it is a link

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
        """Reap a prefetch or walks nobody asked for (no zombie processes)."""
        self._collect()
        for child in self._walks or ():
            if child is not None and child.poll() is None:
                child.kill()
                child.wait()
        self._walks = None

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

    def _listed(self) -> list[str]:
        """`git ls-files`: the tracked files; [] when git fails."""
        result = self._git("ls-files", "-z", "--cached")
        if result is None or result.returncode != 0:
            return []
        return [n for n in result.stdout.decode("utf-8", "surrogateescape").split("\0") if n]

    def walk(self, pathspecs: Sequence[str]) -> None:
        """Start git's two walks of the working tree now, side by side (on a large tree, most
        of a listing's wait), so that the caller works on the tracked files meanwhile:
        untracked files that are not ignored, and the ignored files matching `pathspecs`
        (git's `:(glob)` magic). `walked()` collects them."""
        import subprocess

        if self._walks is not None:
            return
        self._walks = []
        for args in (_UNTRACKED_ARGS, (*_IGNORED_ARGS, *pathspecs)):
            try:
                child = subprocess.Popen(
                    ["git", *SAFE, "-C", str(self.root), *args],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            except OSError:  # no git: no git facts
                child = None
            self._walks.append(child)

    def walked(self) -> tuple[list[str], list[str]]:
        """What `walk` started: (untracked not ignored, ignored matching its pathspecs), each
        [] when git failed or took over `GIT_TIMEOUT`."""
        import subprocess

        found: list[list[str]] = []
        for child in self._walks or [None, None]:
            out = b""
            if child is not None:
                try:
                    out, _ = child.communicate(timeout=GIT_TIMEOUT)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.communicate()
                if child.returncode != 0:
                    out = b""
            found.append([n for n in out.decode("utf-8", "surrogateescape").split("\0") if n])
        self._walks = None
        return found[0], found[1]

    def tracked(self) -> frozenset[str]:
        """Every tracked path, relative to the root, `/`-separated."""
        if self._tracked is None and self._pending is not None:
            prefetched = self._collect()
            if prefetched is not None:
                self._tracked = frozenset(prefetched)
        if self._tracked is None:
            self._tracked = frozenset(self._listed())
        return self._tracked

    def relative(self, path: Path | str) -> str | None:
        """`path` relative to the root, `/`-separated ("." for the root); None outside it.
        String work, as `Path.relative_to` does it (lexically), without its cost."""
        full = os.path.abspath(path)
        root = str(self.root)
        if full == root:
            return "."
        inside = root if root.endswith(os.sep) else root + os.sep
        if not full.startswith(inside):
            return None
        return full[len(inside) :].replace(os.sep, "/")

    def _beyond_link(self, rel: str) -> bool:
        """Whether a directory on the way to `rel` (from the root) is a symbolic link."""
        parent = rel.rpartition("/")[0]
        walked = []
        while parent and parent not in self._links:
            walked.append(parent)
            parent = parent.rpartition("/")[0]
        beyond = self._links.get(parent, False) if parent else False
        for directory in reversed(walked):
            beyond = beyond or os.path.islink(os.path.join(self.root, directory))
            self._links[directory] = beyond
        return beyond

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
        """Which of `names` git ignores (`git check-ignore --stdin`); [] when git fails. A
        path beyond a symlinked directory (a linked rules directory) is not asked about: git
        refuses the whole question for it ("beyond a symbolic link"), and ignores none."""
        names = [n for n in names if not self._beyond_link(n)]
        result = self._git("check-ignore", "-z", "--stdin", stdin="".join(n + "\0" for n in names))
        if result is None or result.returncode not in (0, 1):
            return []
        return [n for n in result.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
