"""Rules directories: reading them, and matching `paths:` globs.

A rules directory is read as the client's `processMdRules` reads it (docs/ says whose):
recursively in raw directory order, following symlinked directories (a directory already
visited is not entered again, so loops end), taking only names with the client's suffix
(case-sensitive), and keeping a rule under its real path. Conditional rules (`paths:`) match
with gitignore semantics, relative to the directory a `RuleSet` names (`base_dir`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from .. import codes
from ..model import Layer, Reason, RulesOrder, Why
from ..parsing import globs as compiled_globs
from ..parsing.frontmatter import Globs
from .loader import Loaded, Loader
from .reader import ReadResult, ReadStatus, probe


class RuleSet(NamedTuple):
    """Which rules directory, whose rules, and how their globs are anchored."""

    directory: str
    layer: Layer
    base_dir: str
    include_external: bool


# A rules directory is walked with these bounds (the client has none: a link to `/` in a
# rules directory reads the whole machine). What is past them is reported, not loaded.
RULES_MAX_FILES = 1000  # `*.md` files yielded from one rules directory
RULES_MAX_ENTRIES = 20_000  # directory entries looked at while walking it
RULES_MAX_DEPTH = 64  # directories nested below it


def rule_files(loader: Loader, directory: str, layer: Layer, suffix: str = ".md") -> Iterator[str]:
    """Every path under `directory` whose name ends in `suffix` (case-sensitive, the
    client's: `.md`, `.mdc`, `.instructions.md`), in the policy's order,
    each loop entered once.

    Depth first, a subdirectory at the position where it appears, without recursion (the
    depth of a tree is the repository's choice) and within the `RULES_MAX_*` bounds.
    """
    visited: set[str] = set()
    top = _list(loader, directory, visited)
    if top is None:
        return
    stack: list[tuple[str, Iterator[os.DirEntry[str]]]] = [(directory, iter(top))]
    looked = found = 0
    while stack:
        parent, entries = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        looked += 1
        if looked > RULES_MAX_ENTRIES:
            _note_limit(loader, directory, f"over {RULES_MAX_ENTRIES:,} entries")
            return
        entry_path = os.path.join(parent, entry.name)
        real, is_link, _, _ = loader.resolve(entry_path)
        try:
            is_dir = os.path.isdir(real) if is_link else entry.is_dir(follow_symlinks=False)
            is_file = os.path.isfile(real) if is_link else entry.is_file(follow_symlinks=False)
        except (OSError, ValueError):
            continue
        if is_dir:
            if len(stack) > RULES_MAX_DEPTH:
                _note_limit(loader, entry_path, f"nested over {RULES_MAX_DEPTH} directories deep")
                continue
            listing = _list(loader, real, visited)
            if listing is not None:
                stack.append((real, iter(listing)))
        elif is_file and entry.name.endswith(suffix):
            found += 1
            if found > RULES_MAX_FILES:
                _note_limit(loader, directory, f"over {RULES_MAX_FILES:,} rule files")
                return
            yield real
        elif entry.name.endswith(suffix):
            _note_unusable_rule(loader, entry_path, layer)


def _note_limit(loader: Loader, path: str, what: str) -> None:
    loader.note(
        codes.RULES_LIMIT,
        path,
        f"rules directory {what}; the rest is not loaded (the client would read on): "
        "check for a symlink to a large directory",
    )


def _list(loader: Loader, directory: str, visited: set[str]) -> list[os.DirEntry[str]] | None:
    """The entries of a rules directory not entered before, in the policy's order."""
    if directory in visited:
        loader.note(
            codes.RULES_LOOP,
            directory,
            "rules directory reached again through a symlink; not re-entered",
        )
        return None
    resolved, is_link, exists, _ = loader.resolve(directory)
    if not exists:
        return None
    visited.add(directory)
    if is_link:
        visited.add(resolved)
    try:
        entries = loader.disk.scandir(resolved)
    except NotADirectoryError:
        return None
    except PermissionError:
        loader.note(
            codes.RULES_UNREADABLE,
            directory,
            "rules directory cannot be listed; fix its permissions",
        )
        return None
    except OSError as err:
        loader.note(
            codes.RULES_UNREADABLE,
            directory,
            f"rules directory cannot be listed ({err.strerror})",
        )
        return None
    if loader.policy.rules_order is RulesOrder.NAME:
        entries.sort(key=lambda e: e.name)
    return entries


def _note_unusable_rule(loader: Loader, path: str, layer: Layer) -> None:
    """A `*.md` entry that is neither a directory nor a regular file: say why it is skipped."""
    loader.trace(path, layer, Reason(_RULE_WHY.get(layer, Why.RULE), "rules directory entry"))
    probed = probe(path)
    if isinstance(probed, ReadResult):
        if probed.status is ReadStatus.LOOP:
            loader.note(
                codes.SYMLINK_LOOP, path, "rule is a symlink loop; not loaded: fix the link"
            )
        elif probed.status is ReadStatus.BROKEN_LINK:
            loader.note(
                codes.BROKEN_SYMLINK,
                path,
                f"rule is a broken symlink ({probed.detail}); fix or remove the link",
            )
        return
    loader.note(
        codes.SPECIAL,
        path,
        "rule is not a regular file (FIFO, socket or device); not read: make it a regular file",
    )


def load_rules(
    loader: Loader, rules: RuleSet, *, conditional: bool, lazy: bool = False, context: str = ""
) -> list[Loaded]:
    """Unconditional rules (and what they import), or the conditional ones, in order."""
    out: list[Loaded] = []
    why = Why.NESTED if context else _RULE_WHY.get(rules.layer, Why.RULE)
    reason = None
    for path in rule_files(loader, rules.directory, rules.layer):
        if reason is None:
            reason = Reason(why, f"rule in {loader.display(rules.directory)}{context}")
        loaded = loader.load(
            path, rules.layer, reason, rules.include_external, lazy=lazy, found_in=rules.directory
        )
        for item in loaded:
            if (item.globs is not None) == conditional:
                out.append(item)
                if not conditional and item is not loaded[0] and loaded[0].globs is not None:
                    loader.note(
                        codes.IMPORT_OF_CONDITIONAL,
                        item.source.path,
                        f"imported by the conditional rule {loaded[0].source.display}, so the client "
                        "loads it at start, not when the rule's paths match: inline it in the rule",
                    )
            elif not conditional:
                loader.deferred.append(item)
    return out


_RULE_WHY = {Layer.USER: Why.USER_RULE, Layer.MANAGED: Why.MANAGED_RULE}


def _relative(target: str, base_dir: str) -> str | None:
    rel = os.path.relpath(target, base_dir) if os.path.isabs(target) else target
    if not rel or rel.startswith("..") or os.path.isabs(rel):
        return None
    return rel.replace(os.sep, "/")


def matching_patterns(globs: Globs, target: str, base_dir: str) -> str | None:
    """The first pattern of `globs` matching `target` (gitignore semantics), or None."""
    rel = _relative(target, base_dir)
    if rel is None:
        return None
    return compiled_globs.first_match(globs.patterns, rel)


def invalid_patterns(globs: Globs) -> Sequence[str]:
    """The patterns of `globs` that are invalid gitignore globs (they match nothing)."""
    return [
        p for p in globs.patterns if compiled_globs.gitignore(p).problem == compiled_globs.INVALID
    ]
