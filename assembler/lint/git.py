"""The few git facts lint needs, asked of git itself (once per repository and run).

git is trusted, the repository is not, and git opens files the repository places: a FIFO
where git reads (`.git/HEAD`, `.git/index`, `.git/config` and what it includes,
`.git/info/exclude`, `core.excludesFile`, a `.gitignore`) makes git wait forever for a writer.
Those at fixed places are refused before git runs (`_blocking`); one only git's walk meets (a
`.gitignore` deep in the tree) is noticed while git waits on it (`_stuck`), else at
`GIT_TIMEOUT`. Either way the repository's `failure` says so and git is asked nothing more:
lint reports that it could not list the repository and checks what a walk finds.

Listings are read as git writes them, at most `MAX_LISTED` names each (`complete` is False
past it): an index of millions of paths costs what the cap does, not what the index holds.
"""

from __future__ import annotations

import os
import re
import select
import signal
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..discovery.disk import Disk
from ..discovery.programs import on_path
from ..discovery.reader import ReadStatus

if TYPE_CHECKING:
    import subprocess


GIT_TIMEOUT = 60.0  # seconds lint waits on one repository's git runs, all together
MAX_LISTED = 1_000_000  # names kept of one listing (tracked, untracked or ignored files)
_TICK = 0.1  # how often a wait looks whether git is stuck on a FIFO
_CONFIG_BYTES = 1 << 20  # a `.git/config` or a file it includes, as git reads it
_MAX_CONFIGS = 64  # config files followed through includes (git stops at 10 levels)

# A repository's own `.git/config` may name a command as `core.fsmonitor`, which git runs
# when it reads the index: never (docs/security.md).
SAFE = ("-c", "core.fsmonitor=false")
_TRACKED_ARGS = ("ls-files", "-z", "--cached")
_IGNORED_ARGS = ("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--")
_UNTRACKED_ARGS = ("ls-files", "-z", "--others", "--exclude-standard")


class Unlisted(NamedTuple):
    """Why git could not list a repository: `path` (absolute) is the file to blame, or the
    repository's root; `why` ends with what to do."""

    path: str
    why: str


class GitRepo:
    """One repository's tracked files and ignore rules; answers are cached for the run."""

    __slots__ = (
        "_checked",
        "_ignored",
        "_links",
        "_pending",
        "_to_ask",
        "_tracked",
        "_waited",
        "_walks",
        "complete",
        "failure",
        "max_listed",
        "root",
    )

    def __init__(self, root: Path, max_listed: int = MAX_LISTED) -> None:
        self.root = root
        self.max_listed = max_listed
        self._tracked: frozenset[str] | None = None
        self._ignored: dict[str, bool] = {}  # root-relative path: git-ignored
        self._to_ask: list[str] = []  # paths `is_ignored` may be asked about, asked in one go
        self._pending: subprocess.Popen[bytes] | None = None  # a prefetch's listing
        self._walks: list[subprocess.Popen[bytes] | None] | None = None  # see `walk`
        self._links: dict[str, bool] = {}  # directory: it or one above it is a link
        self._checked = False  # whether `_blocking` was asked
        self._waited = 0.0  # seconds lint has waited on git here (at most `GIT_TIMEOUT`)
        self.failure: Unlisted | None = None  # git could not list it: no git facts at all
        self.complete = True  # False: a listing stopped at `MAX_LISTED` names

    # --- running git ----------------------------------------------------------------------

    def _may_run(self) -> bool:
        """Whether git may run now: no special file where every git run reads, and git has
        not failed here before."""
        if not self._checked:
            self._checked = True
            blocking = _blocking(str(self.root), Disk())
            if blocking is not None:
                path, kind = blocking
                self.failure = Unlisted(
                    path,
                    f"{kind} where git reads: git would wait on it forever; lint could not "
                    "list the repository and checked the files a walk finds; remove it",
                )
        return self.failure is None

    def _stop_waiting(self, pid: int, waited: float) -> bool:
        """After `waited` more seconds with nothing from git: whether to give up on it (it is
        stuck on a FIFO, or out of time), killed and asked nothing more."""
        self._waited += waited
        stuck = _stuck(pid)
        if not stuck and self._waited < GIT_TIMEOUT:
            return False
        os.kill(pid, signal.SIGKILL)
        why = (
            "git waited on a FIFO where it reads (a .gitignore?) and was stopped"
            if stuck
            else f"git did not answer in {GIT_TIMEOUT:.0f} s and was stopped"
        )
        self.failure = Unlisted(
            str(self.root),
            f"{why}: lint could not list the repository and checked the files a walk finds; "
            "`find . -type p` lists FIFOs: remove them",
        )
        return True

    def _read_names(self, pid: int, fd: int) -> tuple[list[str], bool] | None:
        """The NUL-separated names git writes on `fd`, read as they come: (names, whether
        that is all). Past `max_listed` names git is killed, as when it is stuck on a FIFO
        or out of time (then None, and `failure` says why). The caller closes `fd` and
        reaps `pid`."""
        names: list[str] = []
        rest = b""
        while True:
            started = time.monotonic()
            ready, _, _ = select.select([fd], [], [], _TICK)
            if not ready:
                if self._stop_waiting(pid, time.monotonic() - started):
                    return None
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return names, True
            *whole, rest = (rest + chunk).split(b"\0")
            names += (n.decode("utf-8", "surrogateescape") for n in whole if n)
            if len(names) > self.max_listed:
                os.kill(pid, signal.SIGKILL)
                self.complete = False
                return names[: self.max_listed], False

    def prefetch(self) -> None:
        """Start `git ls-files` now so that it runs while lint reads and parses files."""
        if self._tracked is None and self._pending is None:
            self._pending = self._spawn(_TRACKED_ARGS)

    def _spawn(self, args: Sequence[str], stdin: bool = False) -> subprocess.Popen[bytes] | None:
        """git with `args`, its output on a pipe, its input `/dev/null` (or a pipe lint
        writes: `stdin`); None when git may not run or is missing. Every git run goes
        through here."""
        import subprocess  # only when git runs: lint outside a repository starts without it

        if not self._may_run():
            return None
        # Never a `git` of a relative PATH entry: lint runs in the repository (`.` on PATH
        # would run its own `./git`; docs/security.md, "Running programs").
        git = on_path("git", os.environ.get("PATH")).path
        if git is None:
            return None
        try:
            return subprocess.Popen(
                # `--work-tree`: a repository's own `core.worktree` (a `.git` shipped in a
                # tarball) would point git at another directory, whose files lint would name.
                [git, *SAFE, "-C", str(self.root), "--work-tree", str(self.root), *args],
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:  # no git: no git facts
            return None

    def _listing(self, child: subprocess.Popen[bytes] | None) -> list[str]:
        """What a listing `child` writes (see `_read_names`); [] when git failed."""
        if child is None or child.stdout is None:
            return []
        with child.stdout:
            read = self._read_names(child.pid, child.stdout.fileno())
        return _answer(read, child.wait()) or []

    def close(self) -> None:
        """Reap a prefetch or walks nobody asked for (no zombie processes)."""
        for child in (self._pending, *(self._walks or ())):
            _stop(child)
        self._pending = None
        self._walks = None

    # --- what lint asks -------------------------------------------------------------------

    def walk(self, pathspecs: Sequence[str]) -> None:
        """Start git's two walks of the working tree now, side by side (on a large tree, most
        of a listing's wait), so that the caller works on the tracked files meanwhile:
        untracked files that are not ignored, and the ignored files matching `pathspecs`
        (git's `:(glob)` magic). `walked()` collects them."""
        if self._walks is not None:
            return
        self._walks = [
            self._spawn(args) for args in (_UNTRACKED_ARGS, (*_IGNORED_ARGS, *pathspecs))
        ]

    def walked(self) -> tuple[list[str], list[str]]:
        """What `walk` started: (untracked not ignored, ignored matching its pathspecs), each
        [] when git failed."""
        walks, self._walks = self._walks or [None, None], None
        untracked = self._listing(walks[0])
        if self.failure is not None:  # no second wait
            _stop(walks[1])
            return untracked, []
        return untracked, self._listing(walks[1])

    def tracked(self) -> frozenset[str]:
        """Every tracked path (at most `MAX_LISTED`), relative to the root, `/`-separated."""
        if self._tracked is None:
            child, self._pending = self._pending or self._spawn(_TRACKED_ARGS), None
            self._tracked = frozenset(self._listing(child))
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
        import subprocess

        names = [n for n in names if not self._beyond_link(n)]
        child = self._spawn(("check-ignore", "-z", "--stdin"), stdin=True)
        if child is None:
            return []
        given: bytes | None = "".join(n + "\0" for n in names).encode("utf-8", "surrogateescape")
        while True:  # `communicate` again after a tick goes on where it was
            try:
                out, _ = child.communicate(given, timeout=_TICK)
                break
            except subprocess.TimeoutExpired:
                given = None
                if self._stop_waiting(child.pid, _TICK):
                    child.communicate()
                    return []
        if child.returncode not in (0, 1):
            return []
        return [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]


def _stop(child: subprocess.Popen[bytes] | None) -> None:
    """Kill `child` when it still runs, and reap it."""
    if child is None:
        return
    if child.poll() is None:
        child.kill()
        child.wait()
    if child.stdout is not None:
        child.stdout.close()


def _answer(read: tuple[list[str], bool] | None, code: int) -> list[str] | None:
    """A listing's names: all of them when git ended well, the first ones when it was
    stopped at the cap; None when git failed."""
    if read is None:
        return None
    names, whole = read
    return names if code == 0 or not whole else None


# --- special files where git reads ----------------------------------------------------------


def _stuck(pid: int) -> bool:
    """Whether git waits in `open` for a writer to a FIFO (Linux names the wait in `/proc`):
    no one writes to a FIFO a repository planted, so it would wait forever."""
    try:
        with open(f"/proc/{pid}/wchan", "rb") as wchan:
            return wchan.read() == b"wait_for_partner"
    except OSError:  # not Linux, or gone: `GIT_TIMEOUT` bounds the wait
        return False


def _special(path: str, disk: Disk) -> str | None:
    """ "a FIFO", "a socket" or "a device" when `path` (links followed) is one."""
    try:
        mode = disk.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return None


def _blocking(root: str, disk: Disk) -> tuple[str, str] | None:
    """(path, what it is) of a special file at a place git opens whatever it is asked (its
    directory's `HEAD`, `index` and configuration, each file the configuration includes, the
    exclude files) or the root's `.gitignore` and `.gitattributes`; None when there is none."""
    dot_git = os.path.join(root, ".git")
    kind = _special(dot_git, disk)
    if kind is not None:
        return dot_git, kind
    git_dir = _pointed(dot_git, root, disk) or dot_git
    common = _pointed(os.path.join(git_dir, "commondir"), git_dir, disk, prefix="") or git_dir
    configs = [os.path.join(common, "config"), os.path.join(git_dir, "config.worktree")]
    places = [
        os.path.join(git_dir, "HEAD"),
        os.path.join(git_dir, "index"),
        os.path.join(common, "info", "exclude"),
        os.path.join(common, "info", "attributes"),
        os.path.join(root, ".gitignore"),
        os.path.join(root, ".gitattributes"),
    ]
    for path in (*places, *_configs(configs, root, disk)):
        kind = _special(path, disk)
        if kind is not None:
            return path, kind
    return None


def _pointed(path: str, base: str, disk: Disk, prefix: str = "gitdir:") -> str | None:
    """The directory one of git's pointer files names (`.git` of a worktree: `gitdir: X`;
    `commondir`: `X`), relative to `base`; None when `path` is no such file."""
    result = disk.read(path, _CONFIG_BYTES)
    text = result.text.strip() if result.status is ReadStatus.OK else ""
    if not text.startswith(prefix) or not text[len(prefix) :].strip():
        return None
    return os.path.join(base, text[len(prefix) :].strip())


def _configs(first: Sequence[str], root: str, disk: Disk) -> Iterator[str]:
    """`first` and every file their `include.path`, `includeIf.*.path`, `core.excludesFile`
    and `core.attributesFile` name, through includes (at most `_MAX_CONFIGS` files). A
    special file is yielded, not read; `_blocking` refuses it."""
    seen: set[str] = set()
    todo = list(first)
    while todo and len(seen) < _MAX_CONFIGS:
        path = os.path.normpath(todo.pop(0))
        if path in seen:
            continue
        seen.add(path)
        yield path
        result = disk.read(path, _CONFIG_BYTES)
        if not result.ok:
            continue
        for section, key, value in _entries(result.text):
            if not value:
                continue
            if section in ("include", "includeif") and key == "path":
                todo.append(_pathname(value, os.path.dirname(path)))
            elif section == "core" and key in ("excludesfile", "attributesfile"):
                yield _pathname(value, root)


def _pathname(value: str, base: str) -> str:
    """A path as git takes it from its configuration (`~/` is the user's home)."""
    path = os.path.expanduser(value) if value.startswith("~") else value
    return os.path.normpath(os.path.join(base, path))


# `[section]`, `[section "subsection"]`; a key and its raw value (git-config(1)).
_SECTION = re.compile(r'\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\\n]|\\.)*")?\s*\]')
_KEY = re.compile(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$", re.DOTALL)


def _entries(text: str) -> Iterator[tuple[str, str, str]]:
    """(section, key, value) of a git configuration file, names lower-cased. Lenient: a line
    it cannot read is skipped (what it misses, git's walk meets and `_stuck` notices)."""
    section = ""
    for line in re.sub(r"\\\r?\n", "", text).splitlines():
        header = _SECTION.match(line)
        if header is not None:
            section = header.group(1).split(".")[0].lower()
            line = line[header.end() :]
        entry = _KEY.match(line)
        if entry is not None and entry.group(2) is not None:
            yield section, entry.group(1).lower(), _value(entry.group(2))


_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


def _value(raw: str) -> str:
    """A configuration value: quotes removed, escapes replaced, a comment (`#`, `;` outside
    quotes) cut, outer blanks stripped."""
    out: list[str] = []
    quoted = False
    kept = 0  # length of `out` up to the last character that is not a trailing blank
    chars = iter(raw)
    for char in chars:
        if char == '"':
            quoted = not quoted
            kept = len(out)
            continue
        if char == "\\":
            char = _ESCAPES.get(next(chars, ""), "")
        elif char in "#;" and not quoted:
            break
        elif char.isspace() and not quoted:
            if out:
                out.append(char)
            continue
        out.append(char)
        kept = len(out)
    return "".join(out[:kept])
