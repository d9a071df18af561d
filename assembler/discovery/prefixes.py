"""Discoveries of many directories of one tree, sharing the walk down to them.

A client's start-up discovery may be a fold: the managed and user layers, then each directory
from the filesystem root down to cwd, each adding its files (and what they import) to what
the directories above it loaded. A lint of a whole repository discovers hundreds of
directories, and each discovery repeated its parents' work (a directory eight levels down
loaded the same root files as every other).

`Prefixes` keeps, for one run of many discoveries, the loader's state after each level (the
start, then each directory), and a discovery resumes from the deepest level it can. A level
is reused only when everything decided on the way to it is decided the same way for the new
cwd. One thing in that fold depends on cwd: whether an `@import` is inside it (dropped
outside it unless external imports are approved; noted when it is inside only when case is
ignored). The loader records what it decided for each import (`Loader.decisions`,
`loader.cwd_decision`); a level is valid for a cwd when each decision recorded up to it comes
out the same for that cwd. An import inside cwd only when case is ignored is never reused
(what the client says then depends on the filesystem).

What else a level depends on is its key: the machine (home, managed directory, git and
project roots), the settings the client read and the policy. One `Prefixes`
serves one lint run: the policy, the environment and the token counter of its first
discovery are taken as the run's, and a discovery with others does not use it. Reusing a
level skips the observer's events for what it loaded: only runs whose observer records
nothing use it (lint's shared reads).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

from .locations import containment_key, is_within, keys_within

S = TypeVar("S")

# Levels one `Prefixes` keeps at most (a directory and the kind of start that walked it), and
# what they hold in all (each level holds everything loaded down to it: a chain thousands of
# directories deep, each with a file, would hold the square of its depth). Past either, a
# run stops keeping levels and discovers the rest from the root, as without it.
MAX_LEVELS = 50_000
MAX_HELD = 2_000_000
# Variants of one directory built on one level (cwds that decide its imports differently):
# each resume tries them in turn, so a root importing from each of hundreds of packages would
# make every discovery try hundreds. Past these, the others are not kept.
MAX_VARIANTS = 4

# (target, include_external, what was decided) of one import (`loader.cwd_decision`); a
# decision of None is never reused.
Decision = tuple[str, bool, bool | None]
Decide = Callable[[str, bool], bool | None]  # (target, include_external) -> decision here


class Level(NamedTuple, Generic[S]):
    """What a discovery had after one level: its state (opaque here), the decisions made at
    this level alone, and where this level's own items start in the state's output."""

    state: S
    decisions: tuple[Decision, ...]
    directory: str  # "" for the start (the managed and user layers)
    first_item: int
    ident: int  # its number in its `Prefixes`: a level is resumed only from its own parent


class Prefixes(Generic[S]):
    """Levels of discoveries, each under its parent level; see the module docstring.

    A level's state was built from its parent's, so a level is looked up under the level it
    was built on, never under another run's level of the same directory. Cwds that decide a
    directory's imports differently store variants of that level side by side; at most one
    of them holds for a given cwd (they differ in the answer to some decision)."""

    def __init__(self) -> None:
        self._children: dict[tuple[int, int, str], list[Level[S]]] = {}
        self._keys: dict[Hashable, int] = {}
        self._kept: set[int] = set()  # idents of the levels kept (a child of one not kept is not)
        self._held = 0
        self._next = 0
        self._owner: tuple[object, ...] | None = None
        # What a client computes once for the run's many starts (its settings), by its keys.
        self.memo: dict[Hashable, Any] = {}
        self._target_keys: dict[str, str] = {}  # see `inside`

    @property
    def held(self) -> int:
        """How many things the kept levels hold (bounded by `MAX_HELD`)."""
        return self._held

    def serves(self, owner: tuple[object, ...]) -> bool:
        """Whether this memo may serve a discovery run with `owner` (the policy, environment
        and counter objects): the first one to ask owns it."""
        if self._owner is None:
            self._owner = owner
        return len(owner) == len(self._owner) and all(
            a is b for a, b in zip(self._owner, owner, strict=True)
        )

    def key(self, key: Hashable) -> int:
        """A small number standing for `key` (hashed once per discovery, not once per level)."""
        return self._keys.setdefault(key, len(self._keys))

    def inside(self, cwd: str) -> Callable[[str], bool]:
        """`is_within(target, cwd)` for the targets of kept decisions, each target's key
        computed once per run (a resume checks the same imports for every cwd)."""
        directory = containment_key(cwd)
        keys = self._target_keys

        def test(target: str) -> bool:
            key = keys.get(target)
            if key is None:
                key = containment_key(target)
                if len(keys) < MAX_LEVELS:
                    keys[target] = key
            return keys_within(key, directory)

        return test

    def resume(self, key: int, chain: Sequence[str], decide: Decide) -> tuple[int, Level[S] | None]:
        """The deepest stored level along `chain` (the start "", then each directory down to
        cwd) whose decisions, and its ancestors', are what this cwd decides (`decide`); its
        index in `chain`, or -1 and None."""
        found: Level[S] | None = None
        at = -1
        for i, directory in enumerate(chain):
            parent = found.ident if found is not None else -1
            variants = self._children.get((key, parent, directory), ())
            level = next((v for v in variants if _holds(v.decisions, decide)), None)
            if level is None:
                break
            found, at = level, i
        return at, found

    def keeps(self, key: int, parent: Level[S] | None, directory: str, size: int = 0) -> bool:
        """Whether a level after `directory` built on `parent` (None: the start) holding
        `size` things would be kept: a caller asks before it takes the state of one."""
        parent_ident = -1 if parent is None else parent.ident
        return (
            (parent is None or parent_ident in self._kept)
            and len(self._children.get((key, parent_ident, directory), ())) < MAX_VARIANTS
            and len(self._kept) < MAX_LEVELS
            and self._held + size <= MAX_HELD
        )

    def store(
        self,
        key: int,
        parent: Level[S] | None,
        state: S,
        decisions: Sequence[Decision],
        directory: str,
        first_item: int,
        size: int,
    ) -> Level[S]:
        """The level after `directory`, built on `parent` (None: the start), kept while there
        is room; `size`: how many things its state holds. A decision about a target outside
        `directory` is the same for every cwd at or below it (outside one, outside all): only
        the others are kept to check."""
        # `/private` itself is the one directory whose cwds below it may fold out of it
        # (`/private/tmp/x` is compared as `/tmp/x`): there every decision is checked.
        checked = directory and os.path.normpath(directory).lower() != "/private"
        kept = tuple(d for d in decisions if not checked or is_within(d[0], directory))
        level = Level(state, kept, directory, first_item, self._next)
        self._next += 1
        if self.keeps(key, parent, directory, size):
            self._held += size
            self._kept.add(level.ident)
            where = (key, -1 if parent is None else parent.ident, directory)
            self._children.setdefault(where, []).append(level)
        return level


def _holds(decisions: Sequence[Decision], decide: Decide) -> bool:
    return all(
        was is not None and decide(target, external) == was for target, external, was in decisions
    )
