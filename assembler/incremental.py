"""The `Assembler`: `assemble()` with memory, for agents and `ctxasm watch`.

SPEC section 10: an agent re-assembles every turn, and a re-assembly when nothing changed on
disk must cost little more than the `stat` calls that prove nothing changed. So an
`Assembler` keeps, per request, the `Assembly` and the signature (mtime, size, inode, device,
ctime) of every path the result depends on: each candidate looked at (found or not), each
rules directory listed, each file read, the settings, approval, policy and git marker files,
each taken when the run first looked at it. The next request `stat`s those paths; when every
signature is unchanged it returns the same `Assembly` object. Otherwise discovery runs again
with a per-source cache keyed by path + stat, so only the files that changed are read.

Everything is kept on the object, never in a module: a watch must not see stale data.

A signature only proves "unchanged" once the file's times are older than the filesystem's
timestamp granularity (git's "racily clean" entries): a file written twice within one clock
tick can keep its size and times. A signature younger than that is never trusted, so the next
request reads the file again.
"""

from __future__ import annotations

import datetime as dt
import os
import time
import tomllib
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from . import locations
from .assembly import Assembly, assemble
from .discover import build_context
from .errors import AssemblerError
from .observer import QuietObserver
from .policy import PROJECT_CONFIG, Policy, find_project_config, is_policy_path
from .tokens import TokenCounter, estimate_tokens

if TYPE_CHECKING:
    from .loader import Context, Loader
    from .model import Layer, Reason, Severity
    from .parse import Parsed

PathLike = str | os.PathLike[str]
# (st_mtime_ns, st_size, st_ino, st_dev, st_ctime_ns), or the errno of a failed `stat`.
Signature = tuple[int, int, int, int, int] | int

# Times within this much of the run's start are too fresh to prove a file unchanged: one clock
# tick of the kernel's coarse clock (<= 10 ms) with a margin, or 2 s where the filesystem keeps
# whole seconds only (FAT, HFS+, ext3): there a timestamp has no fraction.
FRESH_NS = 50_000_000
FRESH_WHOLE_SECONDS_NS = 2_000_000_000
KEEP_RESULTS = 8


def signature(path: str) -> Signature:
    """The `stat` (following links) that changes whenever the file's content could have."""
    try:
        st = os.stat(path)
    except OSError as err:
        return err.errno or -1
    except ValueError:  # a NUL in the path: nothing can be there
        return -1
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns)


def settled(sig: Signature, since_ns: int) -> bool:
    """Whether any later change to the file is sure to change `sig` (see the module doc)."""
    if isinstance(sig, int):
        return True
    newest = max(sig[0], sig[4])  # ctime on POSIX; mtime where ctime is the creation time
    whole = sig[0] % 1_000_000_000 == 0 and sig[4] % 1_000_000_000 == 0
    return newest <= since_ns - (FRESH_WHOLE_SECONDS_NS if whole else FRESH_NS)


def unchanged(paths: Sequence[str], signatures: Sequence[Signature]) -> bool:
    """One `stat` per path, stopping at the first difference. The hot path of re-assembly."""
    stat = os.stat
    for path, expected in zip(paths, signatures, strict=True):
        try:
            st = stat(path)
        except OSError as err:
            if expected != err.errno:
                return False
            continue
        except ValueError:
            if expected != -1:
                return False
            continue
        if expected != (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns):
            return False
    return True


class Dependencies(NamedTuple):
    """What a result depends on: paths (files, directories, missing candidates) and the
    directories whose entries were read (a new entry there matters)."""

    paths: tuple[str, ...] = ()
    listed: tuple[str, ...] = ()


class _Entry(NamedTuple):
    signature: Signature
    value: Parsed | None
    notes: tuple[tuple[str, Severity, str], ...]


class ReadCache:
    """Processed files (frontmatter, body, text and the diagnostics reading gave), keyed by
    path + signature: an unchanged file is never read or parsed twice."""

    __slots__ = ("_entries", "_used", "_used_before")

    def __init__(self) -> None:
        self._entries: dict[tuple[object, ...], _Entry] = {}
        self._used: set[tuple[object, ...]] = set()
        self._used_before: set[tuple[object, ...]] = set()

    def __len__(self) -> int:
        return len(self._entries)

    def read(
        self, loader: Loader, path: str, what: str, st: os.stat_result | None, since_ns: int
    ) -> Parsed | None:
        if st is None:
            try:
                st = os.stat(path)
            except (OSError, ValueError):  # let the loader say why (broken link, loop, ...)
                return loader.read_file(path, what)
        sig = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns)
        limits, content = loader.policy.limits, loader.policy.content
        key = (
            path,
            what,
            limits.skip_bytes,
            content.strip_frontmatter,
            content.strip_html_comments,
            loader.policy.imports,
        )
        self._used.add(key)
        entry = self._entries.get(key)
        if entry is not None and entry.signature == sig:
            for code, severity, message in entry.notes:
                loader.note(code, severity, path, message)
            return entry.value
        before = len(loader.diagnostics)
        value = loader.read_file(path, what, st)
        if settled(sig, since_ns):
            notes = tuple((d.code, d.severity, d.message) for d in loader.diagnostics[before:])
            self._entries[key] = _Entry(sig, value, notes)
        else:
            self._entries.pop(key, None)
        return value

    def prune(self) -> None:
        """Forget files neither of the last two runs read (deleted, renamed, no longer in)."""
        keep = self._used | self._used_before
        for key in [k for k in self._entries if k not in keep]:
            del self._entries[key]
        self._used_before, self._used = self._used, set()


class Recorder(QuietObserver):
    """The observer of one run of an `Assembler`: each path's signature when first seen."""

    __slots__ = ("listed_dirs", "reads", "seen", "since")

    def __init__(self, reads: ReadCache | None, since_ns: int) -> None:
        self.reads = reads
        self.since = since_ns
        self.seen: dict[str, Signature] = {}
        self.listed_dirs: dict[str, None] = {}

    def candidate(self, path: str, layer: Layer, reason: Reason) -> None:
        self.saw(path)

    def saw(self, path: str) -> None:
        if path not in self.seen:
            self.seen[path] = signature(path)

    def listed(self, directory: str) -> None:
        self.saw(directory)
        self.listed_dirs[directory] = None

    def read(
        self, loader: Loader, path: str, what: str, st: os.stat_result | None
    ) -> Parsed | None:
        self.saw(path)
        if self.reads is None:
            return loader.read_file(path, what, st)
        return self.reads.read(loader, path, what, st, self.since)

    def dependencies(self) -> Dependencies:
        return Dependencies(tuple(self.seen), tuple(self.listed_dirs))


class ContentRecorder(Recorder):
    """A `Recorder` that reads every file (no cache) and keeps the bytes each read gave."""

    __slots__ = ("contents",)

    def __init__(self, since_ns: int) -> None:
        super().__init__(None, since_ns)
        self.contents: dict[str, bytes] = {}

    def content(self, path: str, data: bytes) -> None:
        self.contents.setdefault(path, data)


class _Result(NamedTuple):
    assembly: Assembly
    dependencies: Dependencies
    signatures: tuple[Signature, ...]
    settled: bool


class Assembler:
    """Assembles the context of one working directory again and again, cheaply.

    The arguments are those of `assemble()`; home, managed directory and environment are fixed
    when the object is made. `assemble(touched)` returns what `assemble()` would; when nothing
    it depends on changed since the same request, the very same `Assembly` object, for the
    price of one `stat` per dependency. Not thread-safe: one `Assembler` per thread.
    """

    def __init__(
        self,
        cwd: PathLike = ".",
        *,
        policy: str | os.PathLike[str] | Policy | None = None,
        home: PathLike | None = None,
        managed_dir: PathLike | None = None,
        environ: Mapping[str, str] | None = None,
        max_tokens: int | None = None,
        counter: TokenCounter | None = None,
        now: dt.datetime | None = None,
    ) -> None:
        self.cwd = Path(os.path.abspath(cwd))
        self.policy = policy
        self.home = Path(home) if home is not None else locations.default_home()
        managed = managed_dir if managed_dir is not None else locations.default_managed_dir()
        self.managed_dir = Path(os.path.abspath(managed))
        self.environ = dict(locations.default_environ() if environ is None else environ)
        self.max_tokens = max_tokens
        self.counter = counter or estimate_tokens
        self.now = now
        self.runs = 0  # requests that ran discovery
        self.reuses = 0  # requests answered by `stat` calls alone
        self.dependencies = Dependencies()  # of the last request, even a failed one
        self._reads = ReadCache()
        self._results: OrderedDict[tuple[str, ...], _Result] = OrderedDict()

    def assemble(self, touched: Sequence[PathLike] = ()) -> Assembly:
        """The context for this directory after the agent read `touched` (in order)."""
        key = tuple(os.path.abspath(p) for p in touched)
        found = self._results.get(key)
        if (
            found is not None
            and found.settled
            and unchanged(found.dependencies.paths, found.signatures)
        ):
            self.reuses += 1
            self._results.move_to_end(key)
            self.dependencies = found.dependencies
            return self._dated(key, found)
        return self._run(key)

    def _run(self, key: tuple[str, ...]) -> Assembly:
        self._results.pop(key, None)
        since = time.time_ns()
        recorder = Recorder(self._reads, since)
        self.runs += 1
        try:
            record_setup(recorder, self.cwd, self.home, self.managed_dir, self.environ, self.policy)
            assembly = assemble(
                self.cwd,
                policy=self.policy,
                home=self.home,
                managed_dir=self.managed_dir,
                environ=self.environ,
                touched=key,
                max_tokens=self.max_tokens,
                counter=self.counter,
                now=self.now,
                observer=recorder,
            )
        finally:
            self.dependencies = recorder.dependencies()
            self._reads.prune()
        assembly = assembly.detached()
        signatures = tuple(recorder.seen.values())
        self._results[key] = _Result(
            assembly,
            self.dependencies,
            signatures,
            all(settled(s, since) for s in signatures),
        )
        while len(self._results) > KEEP_RESULTS:
            self._results.popitem(last=False)
        return assembly

    def _dated(self, key: tuple[str, ...], found: _Result) -> Assembly:
        """The kept result, its date moved on if midnight passed (the new one is kept)."""
        dated = found.assembly.dated(self.now)
        if dated is not found.assembly:
            self._results[key] = found._replace(assembly=dated)
        return dated


def record_setup(
    recorder: Recorder,
    cwd: Path,
    home: Path,
    managed_dir: Path,
    environ: Mapping[str, str],
    policy: str | os.PathLike[str] | Policy | None,
) -> list[str]:
    """Signatures of what `assemble()` reads before discovery, taken before it does; the
    paths that, when they are files, the run reads without the `Loader`."""
    recorder.saw(str(cwd))
    try:
        context = build_context(cwd, home, managed_dir, environ)
    except AssemblerError:
        return []  # no usable cwd: the run says so, and the cwd's signature will change
    files = list(_setup_paths(context, policy))
    for path in files:
        recorder.saw(path)
    for directory, entries in _skill_dirs(context):
        recorder.listed(directory)
        for entry in entries:
            recorder.saw(entry)
            files.append(entry)
    return files


def _setup_paths(context: Context, policy: str | os.PathLike[str] | Policy | None) -> Iterator[str]:
    """Git markers, policy files and settings files: what decides the run before discovery."""
    real = context.cwd
    for directory in (real, *real.parents):  # `find_git_root`: the nearest `.git` wins
        yield str(directory / ".git")
        if directory == context.git_root:
            break
    if policy is None:  # `find_project_config`: cwd up to the project root
        for directory in (real, *real.parents):
            yield str(directory / PROJECT_CONFIG)
            yield str(directory / "pyproject.toml")
            if directory == context.project_root:
                break
        try:
            found = find_project_config(real, context.project_root)
        except AssemblerError:
            found = None
        if found is not None:
            yield from _extends_chain(found[0], found[1])
    elif isinstance(policy, str | os.PathLike):
        text = os.fspath(policy)
        if is_policy_path(text):
            path = Path(text).resolve()
            yield str(path)
            yield from _extends_chain(path, _toml(path))
    yield str(context.config_dir / "settings.json")
    yield str(real / ".claude" / "settings.json")
    yield str(real / ".claude" / "settings.local.json")
    yield str(context.managed_dir / "managed-settings.json")
    yield str(locations.global_config_file(context.home, context.environ))


def _toml(path: Path) -> Mapping[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def _extends_chain(path: Path, doc: Mapping[str, Any]) -> Iterator[str]:
    """The policy files a document `extends` (built-in policies ship with ctxasm: not these)."""
    for _ in range(16):
        parent = doc.get("extends")
        if not isinstance(parent, str) or not parent.endswith(".toml"):
            return
        path = (path.parent / parent).resolve()
        yield str(path)
        doc = _toml(path)


def _skill_dirs(context: Context) -> Iterator[tuple[str, list[str]]]:
    """The skills directories and each entry's SKILL.md (the skills index reads them)."""
    from .skills import SKILL_FILE, skill_dirs

    for directory, _ in skill_dirs(context):
        try:
            with os.scandir(directory) as it:
                names = [e.name for e in it]
        except OSError:
            yield str(directory), []
            continue
        yield str(directory), [str(directory / name / SKILL_FILE) for name in names]
