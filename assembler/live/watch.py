"""`ctxasm watch`: re-render when a source, or a place where one could appear, changes.

What is watched comes from the `Assembler`'s record of the last run: the directory of every
path the result depends on (every candidate looked at, found or not, every import, every
settings and policy file; the nearest existing ancestor when the directory does not exist
yet) and every rules directory listed. Each is one non-recursive watch: a monorepo is never
watched as a tree. Watching directories rather than files survives editors' atomic saves
(write a temporary file, rename it over the original), deletes and re-creations; a directory
created where a source could appear is seen in its parent, and the next run watches it.

Events are filtered down to the paths the result depends on, then debounced (`debounce`
seconds of quiet, at most `MAX_WAIT` in all). The re-run costs only `stat` calls when nothing
relevant changed, so a stray event is cheap. A run that fails (an invalid policy file, the
working directory removed) is reported and the watch goes on.

`--out` may not be a file the run reads (a source, a missing candidate, settings): each
render would feed the next. At start that is an error; later (a repository that swaps its
rules directory for a link to `/` makes every rule file of the machine a rule, the output
included) the render is not written while it lasts, said once, and the watch goes on.
An output the run only looked at (an entry of a directory such a link walks) is written:
its contents change nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

from .. import display
from ..discovery.locations import RealDirs
from ..errors import AssemblerError, DiscoveryError, RenderError
from ..model import Diagnostic, Severity
from ..output.sections import context_tokens
from ..tokens import estimated

if TYPE_CHECKING:
    from watchdog.observers.api import ObservedWatch

    from ..assembly import Assembly
    from .assembler import Assembler, Dependencies

PathLike = str | os.PathLike[str]
MAX_WAIT = 2.0  # a stream of events never delays a render longer than this
# Directories watched at most: a repository decides how many its rules span (a rules entry
# linked to `/` spans thousands). On Linux each is one inotify watch of one instance read by
# one thread; elsewhere watchdog runs one thread per directory, each with a small stack (8 MiB
# stacks would exhaust a 1 GiB address space at about a hundred).
MAX_WATCHED = 1024
WATCH_STACK_BYTES = 256 * 1024
_STOP = ("", "")
_LOST = ("\0lost", "")  # the kernel dropped events (its queue overflowed): run again


class Update(NamedTuple):
    """One render of a watch, or why there is none."""

    assembly: Assembly | None  # None when the run failed
    text: str | None  # the output; None when the run failed
    line: str  # one line for stderr: what changed, the token delta
    diagnostics: tuple[Diagnostic, ...] = ()  # warnings and errors new since the last render
    tokens: int = 0  # the context's tokens (`output.sections.context_tokens`)


class Plan(NamedTuple):
    """What to watch for one set of dependencies, and which event paths matter."""

    directories: frozenset[str]
    paths: frozenset[str]  # dependencies and every directory above them
    listed: frozenset[str]  # any entry of these matters


def plan(dependencies: Dependencies) -> Plan:
    """Non-recursive watches covering every dependency (see the module doc)."""
    directories: set[str] = set()
    paths: set[str] = set()
    listed = set(dependencies.listed)
    reals = RealDirs()
    for path in dependencies.paths:
        real = reals.of_file(path)
        for candidate in {path, real}:  # a symlinked source changes where its target lives
            paths.add(candidate)
            parent = os.path.dirname(candidate)
            while parent not in paths:
                paths.add(parent)
                up = os.path.dirname(parent)
                if up == parent:
                    break
                parent = up
            directories.add(_nearest_directory(os.path.dirname(candidate)))
    for directory in dependencies.listed:
        listed.add(reals.of_file(directory))
        directories.add(_nearest_directory(directory))
    return Plan(frozenset(directories), frozenset(paths), frozenset(listed))


def _nearest_directory(path: str) -> str:
    while not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def relevant(plan: Plan, path: str) -> bool:
    return bool(path) and (path in plan.paths or os.path.dirname(path) in plan.listed)


def summary(before: Assembly | None, after: Assembly, old_tokens: int, tokens: int) -> str:
    """One line: which sources changed, were added or removed, and the token delta."""
    new = {s.path: s for s in after.sources if not s.dropped}
    old = {s.path: s for s in before.sources if not s.dropped} if before is not None else {}
    gone = [(p, s) for p, s in old.items() if p not in new]
    # A file still there that no longer loads (it turned binary, grew past a limit, an
    # exclude caught it) is not "removed": say why, from the run's own diagnostic.
    why = {d.path: d.message for d in reversed(after.diagnostics)}
    parts = []
    for label, shown in (
        (
            "changed",
            [s.display for p, s in new.items() if p in old and s.content != old[p].content],
        ),
        ("added", [s.display for p, s in new.items() if p not in old]),
        ("removed", [s.display for p, s in gone if not os.path.lexists(p)]),
        (
            "no longer loaded",
            [
                s.display + (f" ({why[s.display]})" if s.display in why else "")
                for p, s in gone
                if os.path.lexists(p)
            ],
        ),
    ):
        if shown:
            parts.append(f"{label} {', '.join(display.shown(name) for name in shown)}")
    parts.append(f"{display.counted(tokens, 'token')} ({tokens - old_tokens:+,})")
    return "ctxasm: " + "; ".join(parts)


class Watcher:
    """Watches what an `Assembler`'s result depends on and renders again when it changes.

    `start()` renders once and starts watching; `next_update(timeout)` waits for a relevant
    change and returns the new render (None on timeout or after `stop()`); `updates()` yields
    the first render and every later one until `stop()`. Use it as a context manager.
    A working directory missing or not a directory at start is a `DiscoveryError` from
    `start()`; later, a run that fails is reported and the watch goes on.
    """

    def __init__(
        self,
        assembler: Assembler,
        *,
        render: Callable[[Assembly], str],
        touched: Sequence[PathLike] = (),
        debounce: float = 0.1,
        out: PathLike | None = None,
        max_watched: int = MAX_WATCHED,
    ) -> None:
        self.assembler = assembler
        self.max_watched = max_watched
        self.render = render
        self.touched = tuple(touched)
        self.debounce = debounce
        self.out = os.path.abspath(out) if out is not None else None
        self.plan = Plan(frozenset(), frozenset(), frozenset())
        self._events: queue.Queue[tuple[str, str]] = queue.Queue()
        self._stopped = threading.Event()
        self._observer: _Watches | None = None
        self._watches: dict[str, tuple[object, tuple[int, int] | None]] = {}
        self.unwatched = 0  # directories wanted but over `MAX_WATCHED`, or refused a watch
        self._said_unwatched = False
        self._planned: Dependencies | None = None
        self._last: Assembly | None = None
        self._text: str | None = None
        self._error = ""  # the trouble said last, while it lasts
        self._tokens = 0

    # --- lifecycle ------------------------------------------------------------------------

    def __enter__(self) -> Watcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> Update:
        self._observer = _watches(self._events)
        update = self._refresh(first=True)
        assert update is not None
        return update

    def stop(self) -> None:
        """Make `next_update` and `updates` return (from any thread)."""
        self._stopped.set()
        self._events.put(_STOP)

    def close(self) -> None:
        self.stop()
        if self._observer is not None:
            self._observer.close()
            self._observer = None

    def updates(self) -> Iterator[Update]:
        yield self.start()
        while (update := self.next_update()) is not None:
            yield update

    # --- waiting --------------------------------------------------------------------------

    def next_update(self, timeout: float | None = None) -> Update | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._stopped.is_set():
            if not self._wait(deadline):
                return None
            self._settle()
            update = self._refresh(first=False)
            if update is not None:
                return update
        return None

    def _wait(self, deadline: float | None) -> bool:
        """Until a relevant event (True), or the deadline or `stop()` (False)."""
        while not self._stopped.is_set():
            timeout = None if deadline is None else deadline - time.monotonic()
            if timeout is not None and timeout <= 0:
                return False
            try:
                src, dest = self._events.get(timeout=timeout)
            except queue.Empty:
                return False
            if (src, dest) == _LOST or relevant(self.plan, src) or relevant(self.plan, dest):
                return True
        return False

    def _settle(self) -> None:
        """Debounce: wait until no relevant event came for `debounce` seconds."""
        start = quiet_since = time.monotonic()
        while not self._stopped.is_set():
            now = time.monotonic()
            left = min(quiet_since + self.debounce, start + MAX_WAIT) - now
            if left <= 0:
                return
            try:
                src, dest = self._events.get(timeout=left)
            except queue.Empty:
                return
            if (src, dest) == _LOST or relevant(self.plan, src) or relevant(self.plan, dest):
                quiet_since = time.monotonic()

    # --- rendering ------------------------------------------------------------------------

    @property
    def directories(self) -> tuple[str, ...]:
        """The directories watched now (each non-recursively)."""
        return tuple(sorted(self._watches))

    def _refresh(self, *, first: bool) -> Update | None:
        """Run again; follow new dependencies until a run sees no change it could have missed."""
        failed_before = self._text is None and not first
        assembly: Assembly | None = None
        text = error = ""
        for _ in range(5):
            try:
                assembly, error = self.assembler.assemble(self.touched), ""
                text = self.render(assembly)
            except AssemblerError as err:
                if first and isinstance(err, DiscoveryError | RenderError):
                    # No directory to watch (missing, or a file), or a format the policy
                    # cannot render (another agent's): nothing to wait for.
                    raise
                assembly, error = None, str(err)
            if not self._schedule(self.assembler.dependencies):
                break  # no new watch: nothing happened unseen
        fresh: tuple[Diagnostic, ...] = ()
        if assembly is not None and (how := self._reads_out(assembly)):
            if first:
                raise AssemblerError(f"{self.out}: --out is itself {how}; write it elsewhere")
            fresh, assembly = _fresh(self._last, assembly), None
            error = f"{self.out}: --out is now {how}, so this render is not written to it"
        if assembly is None:
            if failed_before and error == self._error:
                return None  # the same trouble goes on: it was said once
            self._text, self._error = None, error
            line = f"ctxasm: {display.shown(error)}; still watching{self._unwatched_said()}"
            return Update(None, None, line, fresh)
        self._error = ""
        if assembly is self._last and not failed_before:
            return None
        return self._updated(assembly, text, first)

    def _reads_out(self, assembly: Assembly) -> str:
        """What `--out` is to a run that reads it, in a few words; "" when it does not (or
        only looked at it: an entry of a rules directory that is no rule)."""
        if self.out is None:
            return ""
        names = {self.out, os.path.realpath(self.out)}
        if names.isdisjoint(self.assembler.dependencies.read):
            return ""
        for source in (*assembly.discovered, *assembly.conditional):
            if source.path in names:
                return f"read as a source of the context ({source.reason.text})"
        if not os.path.lexists(self.out):
            return "a file the agent would load once it is there"
        return "a file the run reads (settings, a policy)"

    def _unwatched_said(self) -> str:
        """The directories not watched, the first time there are any since there were none
        (a repository that links its rules to `/` mid-watch): "" otherwise."""
        if bool(self.unwatched) == self._said_unwatched:
            return ""
        self._said_unwatched = bool(self.unwatched)
        if not self.unwatched:
            return ""
        return (
            f"; {self.unwatched:,} more directories are not watched (over "
            f"{self.max_watched:,}, or the system gave no more watches): changes there are "
            "not seen"
        )

    def _updated(self, assembly: Assembly, text: str, first: bool) -> Update | None:
        before, self._last = self._last, assembly
        if text == self._text:
            return None
        # The context's tokens as `explain` counts them, whatever the format shows them in.
        tokens = context_tokens(assembly.sources, assembly.policy, assembly.counter).total
        live = sum(1 for s in assembly.sources if not s.dropped)
        if first:
            estimate = " (estimated)" if estimated(assembly.counter) else ""
            line = (
                f"ctxasm: watching {display.counted(live, 'source')}, "
                f"{display.counted(tokens, 'token')}{estimate}, "
                f"in {display.counted(len(self._watches), 'directory', 'directories')} (Ctrl-C stops)"
            )
        else:
            line = summary(before, assembly, self._tokens, tokens)
        line += self._unwatched_said()
        fresh = _fresh(before, assembly)
        self._text, self._tokens = text, tokens
        return Update(assembly, text, line, fresh, tokens)

    def _schedule(self, dependencies: Dependencies) -> bool:
        """Watch what `dependencies` need; True when a directory is newly watched."""
        assert self._observer is not None, "start() first"
        if dependencies != self._planned:
            self.plan, self._planned = plan(dependencies), dependencies
        wanted = self.plan.directories
        for directory in list(self._watches):
            watch, identity = self._watches[directory]
            if directory not in wanted or _identity(directory) != identity:
                # Not needed, or deleted (and maybe made again): its watch is dead.
                self._observer.remove(watch)
                del self._watches[directory]
        added = False
        missing = sorted(wanted - self._watches.keys())
        room = max(self.max_watched - len(self._watches), 0)
        self.unwatched = max(len(missing) - room, 0)
        for i, directory in enumerate(missing[:room]):
            identity = _identity(directory)
            try:
                watch = self._observer.add(directory)
            except FileNotFoundError:  # gone meanwhile: its parent says so
                continue
            except (OSError, RuntimeError, MemoryError):
                # No watch, thread or memory left (a system or process limit): say so once.
                self.unwatched += room - i
                break
            self._watches[directory] = (watch, identity)
            added = True
        return added


def _fresh(before: Assembly | None, after: Assembly) -> tuple[Diagnostic, ...]:
    """The warnings and errors of `after` not in `before`'s (the last render written)."""
    known = set(before.diagnostics) if before is not None else set()
    return tuple(
        d for d in after.diagnostics if d.severity.rank >= Severity.WARNING.rank and d not in known
    )


class _Watches(Protocol):
    """Non-recursive watches of directories, each event put as (src, dest) on a queue."""

    def add(self, directory: str) -> object:
        """Watch `directory`; raises OSError (gone, no watch left), RuntimeError (no thread)."""

    def remove(self, watch: object) -> None:
        """Stop watching (the directory may be gone already)."""

    def close(self) -> None:
        """Stop every watch and the threads behind them."""


def _watches(events: queue.Queue[tuple[str, str]]) -> _Watches:
    """One inotify instance and one thread for every directory on Linux (watchdog's
    `InotifyFD`), else watchdog's observer of the platform (a thread per directory)."""
    if not sys.platform.startswith("linux"):
        return _ThreadPerDirectory(events)
    from watchdog.observers.inotify_c import InotifyFD

    return _OneInotify(events, InotifyFD)


class _OneInotify:
    """Every directory one watch of one inotify instance, read by one thread: the memory of a
    watch does not grow with the number of directories (a thread each took a stack, and
    glibc a 64 MiB malloc arena per busy thread: over 1 GiB of address space at 1,024)."""

    def __init__(self, events: queue.Queue[tuple[str, str]], inotify: Any) -> None:
        from watchdog.observers.inotify_c import InotifyConstants as c

        self._events = events
        self._mask = (
            c.IN_CREATE | c.IN_MODIFY | c.IN_ATTRIB | c.IN_CLOSE_WRITE | c.IN_DELETE
            | c.IN_MOVED_FROM | c.IN_MOVED_TO | c.IN_DELETE_SELF | c.IN_DONT_FOLLOW
        )  # fmt: skip
        self._directories: dict[int, dict[int, str]] = {}  # wd -> callback id -> directory
        self._ids = itertools.count(1)
        try:
            self._fd = inotify()
            with _small_stacks():
                self._fd.start()
        except (OSError, RuntimeError, MemoryError) as err:
            raise AssemblerError(
                f"cannot watch: {err}; the system has no inotify instance or thread left "
                "(fs.inotify.max_user_instances): stop other watchers and run again"
            ) from err

    def add(self, directory: str) -> object:
        id_ = next(self._ids)
        wd = self._fd.add_callback(os.fsencode(directory), self._mask, self, id_)
        self._directories.setdefault(wd, {})[id_] = directory
        return (wd, id_)

    def remove(self, watch: object) -> None:
        wd, id_ = cast("tuple[int, int]", watch)
        self._directories.get(wd, {}).pop(id_, None)
        with contextlib.suppress(OSError):  # already gone with its directory
            self._fd.remove_callbacks([(wd, id_)])

    def close(self) -> None:
        self._fd.stop()
        self._fd.join(timeout=5)

    # watchdog's `WatchCallback`, called on the inotify thread.
    def on_event(self, event: Any) -> None:
        name = os.fsdecode(event.name)
        for directory in list(self._directories.get(event.wd, {}).values()):
            self._events.put((os.path.join(directory, name) if name else directory, ""))

    def on_watch_deleted(self, wd: int) -> None:
        self._directories.pop(wd, None)

    def on_queue_overflow(self) -> None:
        self._events.put(_LOST)


class _ThreadPerDirectory:
    """watchdog's observer of the platform (FSEvents, kqueue, ReadDirectoryChangesW): one
    thread per watched directory, each started with a small stack."""

    def __init__(self, events: queue.Queue[tuple[str, str]]) -> None:
        from watchdog.observers import Observer

        self._observer = Observer()
        self._handler = _handler(events)
        self._observer.start()

    def add(self, directory: str) -> object:
        with _small_stacks():
            return self._observer.schedule(
                self._handler, directory, recursive=False, event_filter=_event_filter()
            )

    def remove(self, watch: object) -> None:
        with contextlib.suppress(KeyError, OSError):  # already dropped with its directory
            self._observer.unschedule(cast("ObservedWatch", watch))

    def close(self) -> None:
        self._observer.stop()
        self._observer.join(timeout=5)


@contextlib.contextmanager
def _small_stacks() -> Iterator[None]:
    """Threads started meanwhile (watchdog's) get `WATCH_STACK_BYTES`."""
    before = threading.stack_size(WATCH_STACK_BYTES)
    try:
        yield
    finally:
        threading.stack_size(before)


def _identity(directory: str) -> tuple[int, int] | None:
    try:
        st = os.stat(directory)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _event_filter() -> list[Any]:
    """Changes only: opening or reading a file (as every run does) is not an event here."""
    from watchdog import events as e

    return [
        e.FileCreatedEvent,
        e.FileModifiedEvent,
        e.FileAttribEvent,
        e.FileClosedEvent,
        e.FileDeletedEvent,
        e.FileMovedEvent,
        e.DirCreatedEvent,
        e.DirDeletedEvent,
        e.DirMovedEvent,
    ]


def _handler(events: queue.Queue[tuple[str, str]]) -> Any:
    """A watchdog handler putting (src, dest) of every event in `events`."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler

    class Handler(FileSystemEventHandler):
        def dispatch(self, event: FileSystemEvent) -> None:
            dest = getattr(event, "dest_path", "") or ""
            events.put((os.fsdecode(event.src_path), os.fsdecode(dest)))

    return Handler()


def printable(text: str) -> str:
    """A render on stdout ends with a newline, so that consecutive renders stay apart."""
    return text if text.endswith("\n") else text + "\n"
