"""Whole-repository lint discovers a directory's whole context only where a duplicate can be.

CTX502 reports a paragraph of a file that another file loading with it repeats. That needs
what the client loads at start in the file's directory: one discovery per directory, most of
the time of a whole-repository run. Yet almost every paragraph is in one file only.

`Universe` indexes every paragraph that any start in the repository can load: the linted
files (whole-repository lint lists every instruction file an agent reads, git-ignored ones
too), what their imports reach, and what loads from outside the repository (user, managed,
memory, approved imports: found by discovering one directory of each kind of start). A file
whose paragraphs no other file that can load with it holds has no duplicate, and its
directory is not discovered. The index only ever errs towards discovering: a directory is
skipped only when no file that could load there holds one of the file's paragraphs.

Two starts are of one kind when the files the client reads at start besides instruction
files (its settings) are the same files: `kind_of` compares, for every directory from the
repository down to the start, the non-instruction files the client read in the repository's
own directory (a client's settings files). Where the index cannot
be sure (no git, a walk stopped at its limits, an import leaving the repository that the
repository's own start does not load, the run's load limits reached), `complete` is False and
every directory is discovered, as without it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from .. import codes
from ..clients import registry
from ..discovery.context import Discovery, Run
from ..discovery.disk import Disk, Observer
from ..discovery.loader import Loader
from ..discovery.locations import within
from ..model import Layer, Policy
from ..tokens import estimate_tokens
from ..versions import NO_VERSION, ClientVersion
from .files import Machine

# The layers every start of one kind loads alike (same settings, same files).
_EVERY_START = frozenset({Layer.MANAGED, Layer.USER, Layer.MEMORY})

# Files the import walk of the index reads at most (each file's imports once).
MAX_INDEXED_IMPORTS = 10_000

Paragraphs = Callable[[str, str], Sequence[str]]  # (path, content) -> normalised paragraphs


class Universe:
    """The paragraphs every start in one repository can load, and which file holds each."""

    def __init__(
        self,
        root: Path,
        root_discovery: Discovery[Any] | None,
        seen_at_root: Iterable[str],
        machine: Machine,
        policy: Policy,
        reads: Observer,
        paragraphs: Paragraphs,
        is_instruction_file: Callable[[Path], bool],
        real: Callable[[str], str] = os.path.realpath,
        version: ClientVersion = NO_VERSION,
    ) -> None:
        self.root = root
        self._root_str = str(root)
        self._real = real  # `os.path.realpath`, remembered by the caller
        self.complete = root_discovery is not None
        self._machine = machine
        self._paragraphs = paragraphs
        self._owners: dict[str, set[str]] = {}  # paragraph -> real paths of files holding it
        self.version = 0  # moves whenever a paragraph gains an owner
        self._load_dirs: dict[str, set[str]] = {}  # linted file (real path) -> its load dirs
        self._linted: set[str] = set()  # real paths of the linted files indexed
        self._anywhere: set[str] = set()  # imported files: they may load from any directory
        self._kinds: dict[tuple[object, ...], frozenset[str]] = {}  # kind -> outside sources
        # kind -> (what every start of it loads from the managed, user and memory layers, and
        # the first of those saying each paragraph)
        self._every: dict[tuple[object, ...], tuple[frozenset[str], dict[str, str]]] = {}
        self._known: set[str] = set()  # files of those layers, in the repository or not
        self._signatures: dict[str, tuple[object, ...]] = {}
        self._kind_of: dict[Path, tuple[object, ...]] = {}
        self._checked: set[str] = set()  # source paths `check` found known
        self._aboves: dict[str, tuple[tuple[str, tuple[object, ...]], ...]] = {}
        ctx = machine.context(root)
        self._git_root = ctx.git_root if ctx is not None else None
        # Starts see real paths: a root reached through a link (`/tmp` on macOS) would compare
        # them with names they never have; then every directory is discovered.
        if ctx is None or self._git_root is None or real(self._root_str) != self._root_str:
            self.complete = False
            return
        run = Run(ctx, policy._replace(skills=False), estimate_tokens, Disk(reads), version=version)
        # Read as the client reads at the release modelled (and as lint's import walk reads:
        # each file is read once a run).
        self._loader = Loader(run, reading=registry.get(policy.client).reading(run))
        # What the repository's own start read in its directory that is not an instruction file
        # (settings): every start is compared on these names, in each directory down to it.
        self._setting_names = sorted(
            {
                os.path.relpath(path, root)
                for path in map(os.path.normpath, seen_at_root)
                if within(path, self._root_str)
                and path != self._root_str
                and not is_instruction_file(Path(path))
                and not is_instruction_file(Path(path, "x.md"))  # a rules directory
            }
        )
        assert root_discovery is not None
        self._root_outside = self.record_kind(root, root_discovery)

    # --- building -------------------------------------------------------------------------

    def add_linted(self, path: Path, load_dir: Path | None) -> None:
        """A linted file (what it loads, read as discovery reads it, and its import closure)."""
        if not self.complete:
            return
        real = self._real(str(path))
        if load_dir is not None:
            self._load_dirs.setdefault(real, set()).add(str(load_dir))
        if real in self._linted:
            return  # another name of a file indexed already: nothing new to read
        self._linted.add(real)
        parsed = self._loader.read(str(path), "file")
        if parsed is None:
            return
        self._index(real, parsed.stripped)
        if parsed.imports:
            self._walk_imports(self._loader.imports_of(parsed, os.path.dirname(real)))

    def _walk_imports(self, first: Sequence[tuple[str, str]]) -> None:
        """Every file the imports reach, whatever the start (a superset of what any loads)."""
        stack = [target for _, target in first]
        while stack and self.complete:
            target = os.path.normpath(stack.pop())
            real = self._real(target)
            if real in self._anywhere:
                continue
            if not within(real, self._root_str) and real not in self._root_outside:
                self.complete = False  # an import out of the repository: settings decide it
                return
            if len(self._anywhere) >= MAX_INDEXED_IMPORTS:
                self.complete = False
                return
            self._anywhere.add(real)
            if not os.path.isfile(real):
                continue
            parsed = self._loader.read(target, "import")
            if parsed is None:
                continue
            self._index(real, parsed.stripped)
            stack += [t for _, t in self._loader.imports_of(parsed, os.path.dirname(real))]

    def finish(self) -> None:
        """Once every linted file is in: past the run's load limits, nothing is known."""
        if self.complete and any(d.code == codes.LOAD_LIMIT.code for d in self._loader.diagnostics):
            self.complete = False

    def checked(self, cwd: Path, discovery: Discovery[Any]) -> None:
        """Check the index against what a start in `cwd` loads, a discovery lint made anyway
        (`record_kind`, `check`), while it is complete."""
        if self.complete:
            self.record_kind(cwd, discovery)
            self.check(discovery)

    def record_kind(self, cwd: Path, discovery: Discovery[Any]) -> frozenset[str]:
        """What a start of `cwd`'s kind loads from outside the repository, indexed (the
        first start of each kind tells), and what it loads from the layers every start of the
        kind loads alike (managed, user, memory: wherever the files are), with the source
        that says each of their paragraphs first."""
        if not self.complete:
            return frozenset()
        kind = self.kind_of(cwd)
        found = self._kinds.get(kind)
        if found is None:
            outside = set()
            every = set()
            first: dict[str, str] = {}  # paragraph -> the first such source saying it
            for source in discovery.sources:
                real = self._real(source.path) if os.path.isabs(source.path) else source.path
                alike = source.layer in _EVERY_START
                if alike or not within(real, self._root_str):
                    outside.add(real)
                    self._index(real, source.content)
                if alike:
                    every.add(real)
                    for paragraph in self._paragraphs(source.path, source.content):
                        first.setdefault(paragraph, source.display)
            found = self._kinds[kind] = frozenset(outside)
            self._every[kind] = frozenset(every), first
            self._known |= every
        return found

    def _index(self, real: str, content: str) -> None:
        for paragraph in self._paragraphs(real, content):
            owners = self._owners.setdefault(paragraph, set())
            if real not in owners:
                owners.add(real)
                self.version += 1

    def contested(self, me: str, paragraphs: Iterable[str]) -> tuple[str, ...]:
        """Those of `paragraphs` (of the file at real path `me`) that another file holds:
        the only ones `indexed_duplicates` needs to be asked about (until `version` moves)."""
        owners = self._owners
        return tuple(p for p in paragraphs if any(o != me for o in owners.get(p, ())))

    # --- asking ---------------------------------------------------------------------------

    def kind_of(self, cwd: Path) -> tuple[object, ...]:
        """The settings files of `cwd`, and of each directory above it down from the
        repository: two starts with the same ones load the same files from outside it."""
        found = self._kind_of.get(cwd)
        if found is None:
            ctx = self._machine.context(cwd)
            git_root = ctx.git_root if ctx is not None else None
            here = str(cwd)
            found = (git_root, self._signature(here), self._above(os.path.dirname(here)))
            self._kind_of[cwd] = found
        return found

    def _above(self, directory: str) -> tuple[tuple[str, tuple[object, ...]], ...]:
        """The settings of `directory` and every one above it in the repository, remembered
        for each directory (walked up without recursion)."""
        walked: list[str] = []
        while directory not in self._aboves and within(directory, self._root_str):
            walked.append(directory)
            parent = os.path.dirname(directory)
            if directory == self._root_str or parent == directory:
                break
            directory = parent
        found = self._aboves.get(directory, ()) if walked[-1:] != [directory] else ()
        for each in reversed(walked):
            signature = self._signature(each)
            found = (*found, (each, signature)) if signature else found
            self._aboves[each] = found
        return found

    def _signature(self, directory: str) -> tuple[object, ...]:
        signature = self._signatures.get(directory)
        if signature is None:
            parts: list[object] = []
            for name in self._setting_names:
                try:
                    st = os.stat(os.path.join(directory, name))
                    parts.append((name, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
                except OSError:
                    pass
            signature = self._signatures[directory] = tuple(parts)
        return signature

    def indexed_duplicates(
        self, cwd: Path, me: str, paragraphs: Iterable[str]
    ) -> dict[str, str] | None:
        """Which of `paragraphs` of a file (real path `me`) that loads in `cwd` another file
        loading with it repeats, each with the file that says it first, when the index can
        tell: {} when no file that can load there holds one, those of the managed, user and
        memory layers when only they do (every start of `cwd`'s kind loads them alike, in one
        order, wherever the files are); None when `cwd` must be discovered to know."""
        if not self.complete:
            return None
        kind = self.kind_of(cwd)
        outside = self._kinds.get(kind)
        if outside is None:
            return None  # the first start of its kind: discovered, and recorded
        every, first = self._every[kind]
        here = str(cwd)
        found: dict[str, str] = {}
        for paragraph in paragraphs:
            for owner in self._owners.get(paragraph, ()):
                if owner == me:
                    continue
                if owner in self._anywhere:
                    return None
                if owner in every:
                    found[paragraph] = first[paragraph]
                elif owner in outside or any(
                    within(here, d) for d in self._load_dirs.get(owner, ())
                ):
                    return None  # loaded from outside by this start's own files, or maybe
        return found

    def check(self, discovery: Discovery[Any]) -> None:
        """A discovery's files in the repository must be ones the index knows; if one is not,
        stop trusting the index (defence in depth: the guards above should make it so)."""
        if not self.complete:
            return
        for source in discovery.sources:
            if source.path in self._checked or not os.path.isabs(source.path):
                continue
            real = self._real(source.path)
            if within(real, self._root_str) and not (
                real in self._load_dirs or real in self._anywhere or real in self._known
            ):
                self.complete = False
                return
            self._checked.add(source.path)
