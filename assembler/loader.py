"""Loading one instruction file and its imports, as Claude Code's `processMemoryFile` does.

One `Loader` serves one discovery run (start-up or one touched path): it owns the set of
processed paths, so a file already loaded (as a file, a rule or an import) is not loaded
again, and it records a diagnostic for every file it does not load and why.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from . import content as fm
from .imports import has_text_extension, resolve_imports
from .locations import Settings, display_path, is_within
from .model import Diagnostic, Layer, Reason, Severity, Source, Why
from .parse import Parsed, Switches, parse
from .policy import Policy
from .reader import ReadResult, ReadStatus, read_text
from .tokens import TokenCounter, estimate_tokens, text_stats

if TYPE_CHECKING:
    from .observer import Observer


class Context(NamedTuple):
    """Everything about the machine a run depends on, fixed at the start of the run."""

    cwd: Path
    home: Path
    managed_dir: Path
    environ: Mapping[str, str]
    config_dir: Path
    git_root: Path | None
    canonical_root: Path | None
    project_root: Path
    settings: Settings
    include_external: bool
    # `explain` and the incremental `Assembler` listen to the run through it; None otherwise.
    observer: Observer | None = None

    def display(self, path: str) -> str:
        return display_path(path, self.project_root, self.home)

    def observe(self, path: str) -> None:
        """Say that the result depends on `path` (for stages that read without a `Loader`)."""
        if self.observer is not None:
            self.observer.saw(path)


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
) -> Source:
    """A source whose text is already processed (a read file, a settings string, an index)."""
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
    )


class Resolved(NamedTuple):
    """Claude Code's `safeResolvePath`: the real path, and whether it differs (a symlink)."""

    path: str
    is_link: bool
    exists: bool
    st: os.stat_result | None = None  # the lstat of a regular file that is not a link


_MISSING = Resolved("", False, False)
_READ_STATUSES = (ReadStatus.OK, ReadStatus.BINARY)  # the file was opened and read through


_SKIPS = {
    ReadStatus.TOO_LARGE: ("skip-too-large", Severity.ERROR),
    ReadStatus.BINARY: ("skip-binary", Severity.ERROR),
    ReadStatus.UNREADABLE: ("skip-unreadable", Severity.ERROR),
    ReadStatus.SPECIAL: ("skip-special", Severity.ERROR),
    ReadStatus.LOOP: ("skip-symlink-loop", Severity.ERROR),
    ReadStatus.DIRECTORY: ("skip-directory", Severity.WARNING),
    ReadStatus.BROKEN_LINK: ("skip-broken-symlink", Severity.WARNING),
}


class Loader:
    """Mutable state of one discovery run (never passed between stages)."""

    __slots__ = (
        "_cwd",
        "_displays",
        "_exclude",
        "_home",
        "_real_dirs",
        "_resolved",
        "_switches",
        "_tags",
        "counter",
        "ctx",
        "deferred",
        "diagnostics",
        "observer",
        "policy",
        "processed",
    )

    def __init__(
        self,
        ctx: Context,
        policy: Policy,
        counter: TokenCounter,
        diagnostics: list[Diagnostic] | None = None,
    ) -> None:
        self.ctx = ctx
        self.policy = policy
        self.counter = counter
        self.processed: set[str] = set()
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        self.deferred: list[Loaded] = []
        self._exclude: Callable[[str], bool] | None = None
        # cwd is a real path (`build_context`), so cwd and its ancestors are their own.
        self._real_dirs: dict[str, str] = {}
        directory = str(ctx.cwd)
        while directory not in self._real_dirs:
            self._real_dirs[directory] = directory
            directory = os.path.dirname(directory)
        self._resolved: dict[str, Resolved] = {}
        self._displays: dict[str, str] = {}
        self._tags = {layer: policy.tag_for(layer) for layer in Layer}
        content = policy.content
        self._switches = Switches(
            content.strip_frontmatter, content.strip_html_comments, policy.imports
        )
        self._home, self._cwd = str(ctx.home), str(ctx.cwd)
        self.observer = ctx.observer

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
        if self.observer is not None:
            self.observer.saw(path)
        found = self._resolved.get(path)
        if found is None:
            found = self._resolved[path] = self._resolve(path)
        return found

    def _resolve(self, path: str) -> Resolved:
        try:
            st = os.lstat(path)
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
            real = os.path.join(self._real_dir(parent), name)
        except (OSError, ValueError):
            return Resolved(path, False, True)
        return Resolved(real, real != path, True, st if stat.S_ISREG(mode) else None)

    def _real_dir(self, directory: str) -> str:
        """`realpath` of a directory, one `lstat` per directory not seen before in this run."""
        cached = self._real_dirs.get(directory)
        if cached is not None:
            return cached
        parent, name = os.path.split(directory)
        if not name:
            real = directory
        elif stat.S_ISLNK(os.lstat(directory).st_mode):
            real = os.path.realpath(directory, strict=True)
        else:
            real = os.path.join(self._real_dir(parent), name)
        self._real_dirs[directory] = real
        return real

    # --- diagnostics ----------------------------------------------------------------------

    def note(self, code: str, severity: Severity, path: str, message: str) -> None:
        diagnostic = Diagnostic(code, severity, self.display(path), message)
        self.diagnostics.append(diagnostic)
        if self.observer is not None:
            self.observer.noted(path, diagnostic)

    def trace(self, path: str, layer: Layer, reason: Reason) -> None:
        """Tell the observer that `path` is about to be considered as a source."""
        if self.observer is not None:
            self.observer.candidate(path, layer, reason)

    def _read_failure(self, path: str, result: ReadResult, what: str) -> None:
        if result.status is ReadStatus.MISSING:
            return
        code, severity = _SKIPS[result.status]
        if result.status is ReadStatus.TOO_LARGE:
            limit = self.policy.limits.skip_bytes
            message = (
                f"{what} is {result.size:,} bytes, over the {limit:,}-byte limit; "
                "the client skips it: split it or move detail into imported files"
            )
        elif result.status is ReadStatus.BINARY:
            message = f"{what} is binary ({result.detail}); not loaded: replace it with text"
        elif result.status is ReadStatus.DIRECTORY:
            message = f"{what} is a directory; not loaded: import a file inside it instead"
        elif result.status is ReadStatus.BROKEN_LINK:
            message = f"{what} is a broken symlink ({result.detail}); fix or remove the link"
        elif result.status is ReadStatus.LOOP:
            message = f"{what} is a symlink loop; not loaded: fix the link"
        elif result.status is ReadStatus.SPECIAL:
            message = f"{what} is {result.detail}; not read: make it a regular file"
        else:
            message = f"{what} cannot be read ({result.detail}); not loaded: fix its permissions"
        self.note(code, severity, path, message)

    # --- exclusion ------------------------------------------------------------------------

    def excluded(self, path: str, layer: Layer) -> bool:
        """`claudeMdExcludes`: picomatch-style globs on absolute paths; never managed/memory."""
        patterns = self.ctx.settings.excludes
        if not patterns or layer not in (
            Layer.USER,
            Layer.PROJECT,
            Layer.LOCAL,
            Layer.SUBDIRECTORY,
        ):
            return False
        if self._exclude is None:
            self._exclude = _exclude_matcher(patterns)
        return self._exclude(path.replace("\\", "/"))

    # --- one file -------------------------------------------------------------------------

    def read(self, path: str, what: str, st: os.stat_result | None = None) -> Parsed | None:
        """The file's frontmatter, body, text without block comments and imports; None: noted."""
        if self.observer is not None:
            return self.observer.read(self, path, what, st)
        return self.read_file(path, what, st)

    def read_file(self, path: str, what: str, st: os.stat_result | None = None) -> Parsed | None:
        """`read` without the observer: always reads the file."""
        result = read_text(path, self.policy.limits.skip_bytes, st)
        if self.observer is not None and result.status in _READ_STATUSES:
            self.observer.content(path, result.data)
        if not result.ok:
            self._read_failure(path, result, what)
            return None
        if result.replaced >= 0:
            self.note(
                "invalid-utf8",
                Severity.WARNING,
                path,
                f"invalid UTF-8 at byte {result.replaced}; loaded with replacement characters: re-save it as UTF-8",
            )
        parsed = parse(result.text, self._switches)
        if parsed.frontmatter.error:
            self.note(
                "frontmatter-invalid",
                Severity.WARNING,
                path,
                f"invalid YAML frontmatter ({parsed.frontmatter.error}); the client drops it (and any paths:): fix the YAML",
            )
        return parsed

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
    ) -> list[Loaded]:
        """The file and (depth-first, right after it) what it imports; [] when skipped."""
        self.trace(path, layer, reason)
        norm = os.path.normpath(path)
        if norm in self.processed:
            if depth:
                kind = "import-cycle" if norm in chain else "import-duplicate"
                word = "a cycle back to" if norm in chain else "already loaded:"
                self.note(kind, Severity.INFO, path, f"import skipped, {word} {self.display(path)}")
            return []
        if depth > self.policy.import_depth:
            self.note(
                "import-too-deep",
                Severity.WARNING,
                path,
                f"import at depth {depth} (via {self.display(chain[-1])}) is beyond the "
                f"{self.policy.import_depth}-hop limit; the client drops it: import it from a shallower file",
            )
            return []
        if self.excluded(path, layer):
            if os.path.lexists(path):
                self.note("skip-excluded", Severity.INFO, path, "excluded by claudeMdExcludes")
            return []
        resolved, is_link, exists, st = self.resolve(path)
        self.processed.add(norm)
        if is_link:
            self.processed.add(os.path.normpath(resolved))
        what = "import" if depth else "file"
        if not exists:
            if depth:
                self.note(
                    "import-missing",
                    Severity.INFO,
                    path,
                    f"imported by {self.display(chain[-1])} but missing",
                )
            return []
        if not has_text_extension(path):
            self.note(
                "import-not-text" if depth else "skip-not-text",
                Severity.WARNING,
                path,
                f"{what} does not have a text extension; the client skips it: rename it (e.g. .md)",
            )
            return []
        processed = self.read(path, what, st)
        if processed is None:
            return []
        text, globs = processed.text, processed.globs
        if globs is not None and globs.over_budget:
            self.note(
                "paths-brace-budget",
                Severity.WARNING,
                path,
                f"brace expansion of {globs.over_budget[0]!r} exceeds {fm.BRACE_PATTERN_BUDGET} patterns; "
                "the client uses it unexpanded and it matches nothing: list fewer alternatives",
            )
        if self.policy.content.skip_empty and not processed.stripped:
            self.note(
                "skip-empty",
                Severity.INFO,
                path,
                f"{what} is empty after removing frontmatter and comments",
            )
            return []
        imports = resolve_imports(processed.imports, os.path.dirname(resolved), self._home)
        if lazy:
            kept, stats = text, text_stats(text, self.counter)
        elif self.counter is estimate_tokens:
            kept, stats = processed.stripped, processed.stats
        else:
            kept = processed.stripped
            stats = text_stats(kept, self.counter)
        shown = self.display(path)
        source = Source(
            layer=layer,
            path=path,
            display=shown,
            reason=reason,
            content=kept,
            raw=text,
            is_index=False,
            stats=stats,
            original=stats,
            tag=self._tags[layer],
            paths=globs.patterns if globs else (),
            lazy=lazy,
        )
        if self.observer is not None:
            self.observer.loaded(source)
        out = [Loaded(source, globs)]
        for token, target in imports:
            child = Reason(
                Why.IMPORT,
                f"imported by {shown} (@{token}) at depth {depth + 1}",
                parent=shown,
                depth=depth + 1,
            )
            if not include_external and not is_within(target, self._cwd):
                self.trace(target, layer, child)
                self.note(
                    "import-external",
                    Severity.WARNING,
                    target,
                    f"@{token} in {shown} points outside the working directory; "
                    "the client drops it unless external imports are approved in ~/.claude.json",
                )
                continue
            out.extend(
                self.load(
                    target,
                    layer,
                    child,
                    include_external,
                    depth=depth + 1,
                    chain=(*chain, norm),
                    lazy=lazy,
                )
            )
        return out


def _exclude_matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """picomatch `{dot: true}` semantics (globstar, braces) over absolute, `/`-separated paths."""
    from wcmatch import glob

    flags = glob.GLOBSTAR | glob.BRACE | glob.DOTGLOB | glob.EXTGLOB | glob.FORCEUNIX
    expanded = [p.replace("\\", "/") for p in patterns if p]
    # Claude Code adds the realpath variant of each absolute pattern's static prefix.
    for pattern in list(expanded):
        if pattern.startswith("/"):
            cut = min((pattern.find(c) for c in "*?{[" if c in pattern), default=len(pattern))
            static = pattern[:cut]
            directory = os.path.dirname(static)
            real = os.path.realpath(directory)
            if real != directory:
                expanded.append(real + pattern[len(directory) :])

    def matches(path: str) -> bool:
        return bool(expanded) and glob.globmatch(path, expanded, flags=flags)

    return matches
