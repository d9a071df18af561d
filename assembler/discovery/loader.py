"""Loading one instruction file and its imports, as the client's `processMemoryFile` does.

One `Loader` serves one discovery run (start-up or one touched path): it owns the set of
processed paths, so a file already loaded (as a file, a rule or an import) is not loaded
again, and it records a diagnostic for every file it does not load and why. `ctxasm lint`
walks a file's imports with a `Loader` too, so both apply the same import rules.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
from collections.abc import Callable, Sequence
from typing import NamedTuple

from .. import codes
from ..codes import Code
from ..display import PATTERN_CHARS, shown
from ..model import Diagnostic, Layer, Reason, Source, Stats, TokenCounter, Why
from ..parsing import frontmatter as fm
from ..parsing.imports import has_text_extension, iter_imports
from ..parsing.parse import Dialect, Parsed, Switches, parse
from ..tokens import estimate_tokens, text_stats
from .context import LoadNote, Run
from .locations import RealDirs, is_within, within
from .reader import ReadResult, ReadStatus

# `excluded(path, layer)`: whether the client's settings keep a file out; None: nothing is.
Exclude = Callable[[str, Layer], bool]


class Words(NamedTuple):
    """A client's own words in what its loader says (the facts are the loader's): the setting
    that excluded a file, and where external imports are approved."""

    excluded_by: str = "the client's settings"  # CTX405: "excluded by <excluded_by>"
    # CTX204: "the client drops it <approval>"
    approval: str = "unless external imports are approved"


NEUTRAL = Words()
PLAIN = Dialect()  # how most clients process text


def unreadable_message(result: ReadResult, what: str) -> str:
    """Why `what` (a file, an import, ...) could not be read, and what to do: render's words
    and lint's alike (a size over the limit is each one's own: the limit differs)."""
    status = result.status
    if status is ReadStatus.BINARY:
        return f"{what} is binary ({result.detail}); not loaded: replace it with text"
    if status is ReadStatus.DIRECTORY:
        return f"{what} is a directory; not loaded: import a file inside it instead"
    if status is ReadStatus.BROKEN_LINK:
        return f"{what} is a broken symlink ({result.detail}); fix or remove the link"
    if status is ReadStatus.LOOP:
        return f"{what} is a symlink loop; not loaded: fix the link"
    if status is ReadStatus.SPECIAL:
        return f"{what} is {result.detail}; not read: make it a regular file"
    return f"{what} cannot be read ({result.detail}); not loaded: fix its permissions"


class Reading(NamedTuple):
    """How a client's loader reads text and follows imports at the release a run models
    (`Client.reading`): the same for its discovery, its lazy loading and lint."""

    words: Words = NEUTRAL  # the client's, in its notes
    dialect: Dialect = PLAIN  # how it processes text
    # An import whose directory's real path is outside cwd is external too (not only one
    # named outside it).
    real_path_imports: bool = False


AS_WRITTEN = Reading()  # most clients: neutral words, plain text, imports by the path named


class Loaded(NamedTuple):
    """A source as loaded, with the globs that make it conditional (None: unconditional)."""

    source: Source
    globs: fm.Globs | None


def text_source(
    layer: Layer,
    path: str,
    display: str,
    reason: Reason,
    content: str,
    tag: str,
    counter: TokenCounter,
    *,
    raw: str | None = None,
    is_index: bool = False,
    stats: Stats | None = None,
    cut_detail: bool = False,
) -> Source:
    """A source whose text is already processed (a read file, a settings string, an index);
    `stats`: of `content` with `counter`, when known."""
    if stats is None:
        stats = text_stats(content, counter)
    return Source(
        layer=layer,
        path=path,
        display=display,
        reason=reason,
        content=content,
        raw=content if raw is None else raw,
        stats=stats,
        original=stats,
        tag=tag,
        is_index=is_index,
        cut_detail=cut_detail,
    )


class Resolved(NamedTuple):
    """The client's `safeResolvePath`: the real path, and whether it differs (a symlink)."""

    path: str
    is_link: bool
    exists: bool
    st: os.stat_result | None = None  # the lstat of a regular file that is not a link


class FileRead(NamedTuple):
    """What reading one file gave: its parse (None: not loadable) and what to say about it.
    A value, so that an observer may keep it for the next run of the same file."""

    parsed: Parsed | None
    notes: tuple[tuple[Code, str], ...] = ()


def cwd_decision(
    target: str, cwd: str, include_external: bool, inside: bool | None = None
) -> bool | None:
    """What loading an `@import` of `target` decides by where cwd is: when external imports
    are not approved, whether it is inside cwd (else it is dropped); when they are, nothing
    (False). None when it is inside cwd only when case is ignored: then the client's note
    depends on the filesystem too. `inside`: `is_within(target, cwd)`, if known. Two cwds
    with the same decision for an import load it the same way (`discovery.prefixes`)."""
    if inside is None:
        inside = is_within(target, cwd)
    if inside and not within(os.path.normpath(target), cwd):
        return None
    return False if include_external else inside


def _self_and_parents(directory: str) -> list[str]:
    found = [directory]
    while (parent := os.path.dirname(directory)) != directory:
        found.append(parent)
        directory = parent
    return found


class LoaderState(NamedTuple):
    """A `Loader`'s state between two files (`Loader.snapshot`)."""

    processed: frozenset[str]
    diagnostics: tuple[Diagnostic, ...]
    deferred: tuple[Loaded, ...]
    text_left: int
    imports_left: int
    notes: tuple[LoadNote, ...]


_MISSING = Resolved("", False, False)

# Which catalogue code a file that cannot be loaded gets (lint uses the same table).
READ_FAILURES = {
    ReadStatus.TOO_LARGE: codes.TOO_LARGE,
    ReadStatus.BINARY: codes.BINARY,
    ReadStatus.UNREADABLE: codes.UNREADABLE,
    ReadStatus.SPECIAL: codes.SPECIAL,
    ReadStatus.LOOP: codes.SYMLINK_LOOP,
    ReadStatus.DIRECTORY: codes.DIRECTORY,
    ReadStatus.BROKEN_LINK: codes.BROKEN_SYMLINK,
}


# All the instruction text one run loads, in characters (each file is at most `skip_bytes`
# on its own): four million tokens, far past any model's window, and bounded memory.
RUN_TEXT_CHARS = 16 * 1024 * 1024
# The `@imports` one run follows, found or not: a file of 200,000 `@x` tokens costs seconds.
RUN_MAX_IMPORTS = 10_000


# Layers the user and the machine own (docs/security.md): what they load is never reported,
# wherever it is; every other layer's files are the repository's, or an ancestor's.
TRUSTED_LAYERS = frozenset({Layer.MANAGED, Layer.USER, Layer.MEMORY})


def place_of(found: str, root: str) -> str:
    """Where a file found at `found` (normalized, absolute) stands: the project root for a file
    in the project; for a file of a directory above it (an ancestor's instruction file, its rules
    directory), that directory, the deepest one holding both."""
    return root if within(found, root) else os.path.commonpath((found, root))


def reached_out(written: str, real: str, place: str, home: str) -> Code | None:
    """The one rule for content from outside: `written` (where it was found, as named) stands
    in `place` (`place_of`) and `real` (where it is) is not there, or is in the home directory
    while `written` is not (a tree that holds the home directory does not make the user's
    files its own). CTX802 when `real` is in the home directory, else CTX801; None when
    nothing reached out."""
    real, written = os.path.normpath(real), os.path.normpath(written)
    if not within(written, place):
        return None
    in_home = within(real, home)
    if within(real, place) and (not in_home or within(written, home)):
        return None
    return codes.OUTSIDE_HOME if in_home else codes.OUTSIDE_PROJECT


class Loader:
    """Mutable state of one discovery run (never passed between stages)."""

    __slots__ = (
        "_cwd",
        "_displays",
        "_exclude",
        "_home",
        "_imports_left",
        "_max_imports",
        "_real_dirs",
        "_real_path_imports",
        "_resolved",
        "_root",
        "_switches",
        "_tags",
        "_text_left",
        "_words",
        "counter",
        "ctx",
        "decisions",
        "deferred",
        "diagnostics",
        "dialect",
        "disk",
        "notes",
        "observer",
        "policy",
        "processed",
    )

    def __init__(
        self,
        run: Run,
        *,
        exclude: Exclude | None = None,
        diagnostics: list[Diagnostic] | None = None,
        max_imports: int = RUN_MAX_IMPORTS,
        reading: Reading = AS_WRITTEN,
    ) -> None:
        """`max_imports`: how many `@imports` this run follows, found or not (lint gives
        each linted file its own, smaller budget); `reading`: the client's words, text
        processing and import rules at the release the run models."""
        self.ctx = ctx = run.context
        self.policy = policy = run.policy
        self.counter = run.counter
        self.disk = run.disk
        self.observer = run.disk.observer
        self.processed: set[str] = set()
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        self.deferred: list[Loaded] = []
        # What lint reports for the run's start about files it does not lint (content reached
        # from a directory above the project), at a position (`Discovery.notes`).
        self.notes: list[LoadNote] = []
        # (target, include_external, `cwd_decision`) of each import, in order: what this run
        # decided by where cwd is (`discovery.prefixes`).
        self.decisions: list[tuple[str, bool, bool | None]] = []
        self._exclude = exclude
        self._words = reading.words
        self.dialect = reading.dialect
        self._real_path_imports = reading.real_path_imports
        # cwd is a real path (`build_context`), so cwd and its ancestors are their own.
        self._real_dirs = RealDirs(_self_and_parents(str(ctx.cwd)))
        self._resolved: dict[str, Resolved] = {}
        self._displays: dict[str, str] = {}
        tags = dict(policy.tags)  # `Policy.tag_for`, for every layer at once
        self._tags = {layer: tags.get(layer, layer.value) for layer in Layer}
        content = policy.content
        self._switches = Switches(
            content.strip_frontmatter, content.strip_html_comments, policy.imports, reading.dialect
        )
        self._home, self._cwd = str(ctx.home), str(ctx.cwd)
        self._root = str(ctx.project_root)
        self._text_left = RUN_TEXT_CHARS
        self._imports_left = self._max_imports = max_imports

    def display(self, path: str) -> str:
        """`Context.display`, remembered: a path is shown the same way all run long."""
        shown = self._displays.get(path)
        if shown is None:
            shown = self._displays[path] = self.ctx.display(path)
        return shown

    def resolve(self, path: str) -> Resolved:
        """The real path of `path` with one `lstat` (directories' real paths are cached).

        FIFOs, sockets and devices are returned unresolved; any error gives the path itself.
        A run is one snapshot: a path resolved before (a rule found while listing its
        directory, then loaded) is not `lstat`ed again.
        """
        found = self._resolved.get(path)
        if found is None:
            found = self._resolved[path] = self._resolve(path)
        return found

    def _resolve(self, path: str) -> Resolved:
        try:
            st = self.disk.lstat(path)
        except OSError as err:
            # Not there; but a directory we may not search hides a file: let reading say so.
            exists = err.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG)
            return Resolved(path, False, exists)
        except ValueError:
            return _MISSING._replace(path=path)
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            try:
                real = os.path.realpath(path, strict=True)
            except (OSError, ValueError):
                return Resolved(path, False, True)
            return Resolved(real, real != path, True)
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            return Resolved(path, False, True, st)
        parent, name = os.path.split(path)
        try:
            real = os.path.join(self._real_dirs.of(parent), name)
        except (OSError, ValueError):
            return Resolved(path, False, True)
        return Resolved(real, real != path, True, st if stat.S_ISREG(mode) else None)

    # --- diagnostics ----------------------------------------------------------------------

    @property
    def imports_left(self) -> int:
        """How many more `@imports` this run follows (0 or less: none)."""
        return self._imports_left

    def note(self, code: Code, path: str, message: str) -> None:
        diagnostic = code.at(self.display(path), message)
        self.diagnostics.append(diagnostic)
        if self.observer is not None:
            self.observer.noted(path, diagnostic)

    def trace(self, path: str, layer: Layer, reason: Reason) -> None:
        """Tell the observer that `path` is about to be considered as a source."""
        if self.observer is not None:
            self.observer.candidate(path, layer, reason)

    def snapshot(self) -> LoaderState:
        """What this run has loaded and decided so far, to resume another run from
        (`discovery.prefixes`); the caches are not part of it."""
        return LoaderState(
            frozenset(self.processed),
            tuple(self.diagnostics),
            tuple(self.deferred),
            self._text_left,
            self._imports_left,
            tuple(self.notes),
        )

    def restore(self, state: LoaderState) -> None:
        """Continue from `state`, as if this run had loaded and decided what it holds."""
        self.processed = set(state.processed)
        self.diagnostics[:] = state.diagnostics
        self.deferred = list(state.deferred)
        self.notes[:] = state.notes
        self._text_left = state.text_left
        self._imports_left = state.imports_left

    # --- one file -------------------------------------------------------------------------

    def read(self, path: str, what: str, st: os.stat_result | None = None) -> Parsed | None:
        """The file's frontmatter, body, text without block comments and imports; None: noted."""
        key = (what, self.policy.limits.skip_bytes, self._switches)
        got = self.disk.cached(path, key, st, lambda st: self._read(path, what, st))
        for code, message in got.notes:
            self.note(code, path, message)
        parsed = got.parsed
        if parsed is not None:
            if len(parsed.text) > self._text_left:
                self.note(
                    codes.LOAD_LIMIT,
                    path,
                    f"{what} not loaded: this run has loaded {RUN_TEXT_CHARS:,} characters of "
                    "instructions already; look for imports or links that pull in large trees",
                )
                return None
            self._text_left -= len(parsed.text)
        return parsed

    def _read(self, path: str, what: str, st: os.stat_result | None) -> FileRead:
        result = self.disk.read(path, self.policy.limits.skip_bytes, st)
        if not result.ok:
            if result.status is ReadStatus.MISSING:
                return FileRead(None)
            code = READ_FAILURES[result.status]
            if code is codes.DIRECTORY and what == "import":
                code = codes.IMPORT_DIRECTORY
            return FileRead(None, ((code, self._skip_message(result, what)),))
        notes: list[tuple[Code, str]] = []
        if result.replaced >= 0:
            notes.append(
                (
                    codes.INVALID_UTF8,
                    f"invalid UTF-8 at byte {result.replaced}; loaded with replacement characters: re-save it as UTF-8",
                )
            )
        parsed = parse(result.text, self._switches)
        if parsed.frontmatter.error:
            notes.append(
                (
                    codes.FRONTMATTER_INVALID,
                    f"invalid YAML frontmatter ({parsed.frontmatter.error}); the client drops it (and any paths:): fix the YAML",
                )
            )
        if parsed.frontmatter.too_complex:
            notes.append(
                (
                    codes.FRONTMATTER_TOO_COMPLEX,
                    f"YAML frontmatter {parsed.frontmatter.too_complex}; ctxasm drops it (and any paths:): simplify it",
                )
            )
        if parsed.frontmatter.cut:
            notes.append(
                (codes.FRONTMATTER_CUT, f"YAML frontmatter {parsed.frontmatter.cut}: shorten them")
            )
        return FileRead(parsed, tuple(notes))

    def _skip_message(self, result: ReadResult, what: str) -> str:
        status = result.status
        if status is ReadStatus.TOO_LARGE:
            limit = self.policy.limits.skip_bytes
            return (
                f"{what} is {result.size:,} bytes, over the {limit:,}-byte limit; "
                "the client skips it: split it or move detail into imported files"
            )
        return unreadable_message(result, what)

    def load(
        self,
        path: str,
        layer: Layer,
        reason: Reason,
        include_external: bool,
        *,
        depth: int = 0,
        chain: tuple[str, ...] = (),
        lazy: bool = False,
        found_in: str | None = None,
    ) -> list[Loaded]:
        """The file and (depth-first, right after it) what it imports; [] when skipped.

        `found_in`: where the file was found as named (a rules directory for a rule, whose
        path is already its real one; else `path` itself); for an import, where its chain
        started (None: in a trusted layer). A file whose real path is not where it was found
        (the project, or the directory above it whose file it is) is loaded, as the client
        does, and reported (`reached_out`).
        """
        self.trace(path, layer, reason)
        norm = os.path.normpath(path)
        if not self._admit(path, norm, layer, depth, chain):
            return []
        resolved, is_link, exists, st = self.resolve(path)
        self.processed.add(norm)
        if not exists and not depth:
            return []  # a candidate that is not there (an import's absence is noted below)
        if is_link:
            self.processed.add(os.path.normpath(resolved))
        if not depth:
            found_in = None if layer in TRUSTED_LAYERS else os.path.normpath(found_in or path)
        parsed = self._readable(path, exists, depth, chain, st)
        if parsed is None:
            return []
        if found_in is not None:
            self._note_if_reached_out(path, resolved, "import" if depth else "file", found_in)
        source = self._source(path, layer, reason, parsed, lazy)
        out = [Loaded(source, parsed.globs)]
        imports = self.imports_of(parsed, os.path.dirname(resolved))
        out += self.load_imports(
            source.display,
            imports,
            layer,
            include_external,
            depth + 1,
            (*chain, norm),
            lazy,
            found_in=found_in,
        )
        return out

    def note_if_outside(self, path: str, what: str, *, above: bool = False) -> None:
        """Report `path` (a workspace file, a context file, an import) if it is in the project
        and its real path is not; with `above`, a file the client's walk found in a directory
        above the project too (project docs found from a root marker above it)."""
        found = os.path.normpath(path)
        place = place_of(found, self._root) if above else self._root
        self._note_if_reached_out(path, self.resolve(path).path, what, found, place)

    def _note_if_reached_out(
        self, path: str, real: str, what: str, found_in: str, place: str | None = None
    ) -> None:
        """Content found in the project or above it that reaches elsewhere: loaded, and said
        so (a rule, kept under its real path, with the rules directory it was found in).
        From above the project, also as a note for lint, which lints no file there."""
        if place is None:
            place = place_of(found_in, self._root)
        code = reached_out(found_in, real, place, self._home)
        if code is None:
            return
        where = "your home directory" if code is codes.OUTSIDE_HOME else "outside the project"
        through = f" through {self.display(found_in)}" if path == real != found_in else ""
        message = (
            f"{what} is loaded from {where}{through}: {self.display(real)}; the client loads "
            "it too: make sure it belongs in the prompt, or remove the link"
        )
        self.note(code, path, message)
        if place != self._root:
            self.notes.append(LoadNote(path, 1, 1, code.code, message))

    def imports_of(self, parsed: Parsed, base_dir: str) -> Sequence[tuple[str, str]]:
        """`(token, target)` of each distinct import of a file in `base_dir` (a hook: lint,
        which walks many files' imports in one run, resolves each file's once). No more than
        a run follows are resolved."""
        found = iter_imports(parsed.imports, base_dir, self._home)
        return list(itertools.islice(found, self._max_imports + 1))

    def _admit(
        self, path: str, norm: str, layer: Layer, depth: int, chain: tuple[str, ...]
    ) -> bool:
        """Whether `path` is still to be loaded: not yet processed, not too deep, not excluded."""
        if norm in self.processed:
            if depth:
                cycle = norm in chain
                code = codes.IMPORT_CYCLE if cycle else codes.IMPORT_DUPLICATE
                word = "a cycle back to" if cycle else "already loaded:"
                self.note(code, path, f"import skipped, {word} {self.display(path)}")
            return False
        if depth > self.policy.import_depth:
            self.note(
                codes.IMPORT_TOO_DEEP,
                path,
                f"import at depth {depth} (via {self.display(chain[-1])}) is beyond the "
                f"{self.policy.import_depth}-hop limit; the client drops it: import it from a shallower file",
            )
            return False
        if self._exclude is not None and self._exclude(path, layer):
            if os.path.lexists(path):
                self.note(codes.EXCLUDED, path, f"excluded by {self._words.excluded_by}")
            return False
        return True

    def _readable(
        self,
        path: str,
        exists: bool,
        depth: int,
        chain: tuple[str, ...],
        st: os.stat_result | None,
    ) -> Parsed | None:
        """The parsed file, or None once the reason it is not loaded is noted."""
        what = "import" if depth else "file"
        if not exists:
            if depth:
                self._note_missing(path, self.display(chain[-1]))
            return None
        # The client checks every file it processes, but the files it starts from are all
        # `.md`: only imports can fail it, and other clients' files (`.mdc`, a dotfile) are
        # text by their name.
        if depth and not has_text_extension(path):
            self.note(
                codes.IMPORT_NOT_TEXT,
                path,
                f"{what} does not have a text extension; the client skips it: rename it (e.g. .md)",
            )
            return None
        parsed = self.read(path, what, st)
        if parsed is None:
            return None
        globs = parsed.globs
        if globs is not None and globs.over_budget:
            more = f" (and {globs.over_count - 1:,} more)" if globs.over_count > 1 else ""
            self.note(
                codes.BRACE_BUDGET,
                path,
                f"brace expansion of {shown(globs.over_budget[0], PATTERN_CHARS)!r}{more} exceeds the {fm.BRACE_PATTERN_BUDGET} patterns one rule's paths: share; "
                "the client uses it unexpanded and it matches nothing: list fewer alternatives",
            )
        for pattern, why in globs.too_complex if globs is not None else ():
            self.note(
                codes.GLOB_TOO_COMPLEX,
                path,
                f"glob {shown(pattern, PATTERN_CHARS)!r} is refused ({why}) and matches nothing: simplify it",
            )
        if self.policy.content.skip_empty and not parsed.stripped:
            self.note(codes.EMPTY, path, f"{what} is empty after removing frontmatter and comments")
            return None
        return parsed

    def _source(
        self, path: str, layer: Layer, reason: Reason, parsed: Parsed, lazy: bool
    ) -> Source:
        if lazy:  # delivered as the client attaches it: not trimmed
            kept, stats = parsed.text, text_stats(parsed.text, self.counter)
        elif self.counter is estimate_tokens:
            kept, stats = parsed.stripped, parsed.stats
        else:
            kept = parsed.stripped
            stats = text_stats(kept, self.counter)
        source = Source(
            layer=layer,
            path=path,
            display=self.display(path),
            reason=reason,
            content=kept,
            raw=parsed.text,
            is_index=False,
            stats=stats,
            original=stats,
            tag=self._tags[layer],
            paths=parsed.globs.patterns if parsed.globs else (),
            lazy=lazy,
        )
        if self.observer is not None:
            self.observer.loaded(source)
        return source

    def load_imports(
        self,
        importer: str,
        imports: Sequence[tuple[str, str]],
        layer: Layer,
        include_external: bool,
        depth: int,
        chain: tuple[str, ...],
        lazy: bool = False,
        *,
        found_in: str | None = None,
    ) -> list[Loaded]:
        """Each `(token, target)` imported by `importer` (as displayed), at `depth`, in order.
        A target outside cwd is dropped unless `include_external`. `found_in`: where the
        importing chain started, when that is in the project (see `load`)."""
        out: list[Loaded] = []
        for token, target in imports:
            self._imports_left -= 1
            if self._imports_left < 0:
                if self._imports_left == -1:
                    self.note(
                        codes.LOAD_LIMIT,
                        target,
                        f"@{token} in {importer} and the imports after it are not followed: this "
                        f"run has followed {self._max_imports:,} imports already; import fewer files",
                    )
                return out
            child = Reason(
                Why.IMPORT,
                f"imported by {importer} (@{token}) at depth {depth}",
                parent=importer,
                depth=depth,
            )
            where = self._real_dir_path(target) if self._real_path_imports else target
            inside = is_within(where, self._cwd)
            decided = cwd_decision(where, self._cwd, include_external, inside)
            self.decisions.append((where, include_external, decided))
            if not include_external and not inside:
                self.trace(target, layer, child)
                if not self.resolve(target).exists:  # approving it would load nothing
                    self._note_missing(target, importer)
                    continue
                linked = (
                    ""
                    if where == target
                    else f" through a symlinked directory ({self.display(where)})"
                )
                self.note(
                    codes.IMPORT_EXTERNAL,
                    target,
                    f"@{token} in {importer} points outside the working directory{linked}; "
                    f"the client drops it {self._words.approval}",
                )
                continue
            if inside and not self._inside_cwd(target):
                self.note(
                    codes.CASE_FOLDED,
                    target,
                    f"@{token} in {importer} is inside the working directory only when case is "
                    "ignored; the client compares that way and loads it, but on this filesystem "
                    "it is outside: fix the case of the path",
                )
            out += self.load(
                target,
                layer,
                child,
                include_external,
                depth=depth,
                chain=chain,
                lazy=lazy,
                found_in=found_in,
            )
        return out

    def _note_missing(self, target: str, importer: str) -> None:
        """An import of nothing: missing (`CTX201`) wherever the agent starts, outside its
        working directory too, where approving external imports would load nothing."""
        self.note(codes.IMPORT_MISSING, target, f"imported by {importer} but missing")

    def _real_dir_path(self, target: str) -> str:
        """`target` with its directory's real path: where an import through a symlinked
        directory really is."""
        parent, name = os.path.split(target)
        try:
            return os.path.join(self._real_dirs.of(parent), name)
        except (OSError, ValueError):
            return target

    def _inside_cwd(self, target: str) -> bool:
        """Whether `target` is below cwd as this filesystem sees it: by name, or by a
        case-variant of cwd that is the same directory (a case-insensitive filesystem)."""
        norm = os.path.normpath(target)
        if within(norm, self._cwd):
            return True
        depth = self._cwd.rstrip(os.sep).count(os.sep)
        variant = os.sep.join(norm.split(os.sep)[: depth + 1]) or os.sep
        try:
            return os.path.samestat(self.disk.stat(variant), self.disk.stat(self._cwd))
        except (OSError, ValueError):
            return False
