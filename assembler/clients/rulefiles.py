"""What the Cursor and Copilot clients share: rule files found by suffix in a rules directory,
frontmatter glob lists (`globs:`, `applyTo:`), workspace globs matched against a touched file,
and the directories a workspace scopes.

Both agents read a directory of Markdown files whose frontmatter decides when each applies
(docs/clients/cursor.md, docs/clients/copilot.md). The walk is Claude Code's rules walk
(`discovery.rules.rule_files`: bounded, links followed once, the policy's order) with
another suffix; globs compile through `parsing.globs.workspace`, the one glob compiler.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from .. import codes
from ..discovery.context import Run
from ..discovery.index import Entry
from ..discovery.loader import Loaded, Loader, Reading, text_source
from ..discovery.locations import within
from ..discovery.rules import rule_files
from ..display import PATTERN_CHARS, shown
from ..model import RULES_INDEX_TAG, Layer, Reason, Source, TokenCounter, Why
from ..parsing import frontmatter as fm
from ..parsing import globs as compiled
from ..parsing.parse import Dialect, Parsed


class Found(NamedTuple):
    """One rule file as read: its real path, where it was found, and its parse."""

    path: str
    found_in: str  # the rules directory, as the repository names it
    parsed: Parsed


class Waiting(NamedTuple):
    """A rule that applies once a touched file matches one of its globs."""

    path: str
    found_in: str
    base_dir: str  # what its globs are relative to
    patterns: tuple[str, ...]
    key: str  # the frontmatter key that holds them (`globs`, `applyTo`)
    match: compiled.Matcher | None = None  # all of `patterns` at once (absolute paths)


class GlobList(NamedTuple):
    """A frontmatter glob list as the agent splits it: the globs, whether the value had a
    form the agent does not read, and the globs the compiler refuses (with why)."""

    patterns: tuple[str, ...]
    malformed: bool = False
    refused: tuple[tuple[str, str], ...] = ()
    match: compiled.Matcher | None = None  # all of `patterns` at once (absolute paths)


# The globs one rule may list (Claude Code's budget for one rule's `paths:`, 1,000 patterns);
# a 4 MiB file of commas would otherwise make a million globs and as many diagnostics.
MAX_GLOBS = 1000
# Cursor and Copilot document no limit on a file or its frontmatter: ctxasm parses at most this
# much YAML of one (a longer block has its lines cut first, CTX309, or is dropped, CTX308).
FRONTMATTER_CHARS = 64 * 1024
READING = Reading(dialect=Dialect(frontmatter_chars=FRONTMATTER_CHARS))  # their text processing


def glob_list(value: object, base_dir: str, *, lists: bool) -> GlobList:
    """A `globs:` / `applyTo:` value: a comma-separated string (commas inside braces kept),
    or with `lists` a YAML list of such strings. Anything else is malformed and gives no
    globs; blank parts are left out. Each glob is compiled once here, so a glob the
    compiler refuses (too long, past the budget) is known before any match."""
    listed = lists and isinstance(value, list) and all(isinstance(v, str) for v in value)
    if not (isinstance(value, str) or listed):
        return GlobList((), value is not None)
    raw = fm.split_patterns(value)
    over = len(raw) - MAX_GLOBS
    raw = raw[:MAX_GLOBS]
    found = compiled.workspace(raw, base_dir)
    bad = {i for i, _ in found.refused}
    kept = tuple(p for i, p in enumerate(raw) if i not in bad)
    refused = [(raw[i], why) for i, why in found.refused]
    if over > 0:
        refused.append((f"{over:,} more", f"past the {MAX_GLOBS:,} globs one rule may list"))
    return GlobList(kept, False, tuple(refused), found.match)


def matching(rule: Waiting, target: str) -> str | None:
    """The first glob of `rule` that matches the absolute `target`, or None (one match of
    all its globs at once first: most rules match most files not)."""
    if rule.match is None or not rule.match(target):
        return None
    for pattern in rule.patterns:
        match = compiled.workspace([pattern], rule.base_dir).match
        if match is not None and match(target):
            return pattern
    return None


def patterns_shown(patterns: Sequence[str]) -> str:
    return ", ".join(repr(shown(p, PATTERN_CHARS)) for p in patterns)


def scope_dirs(root: str, cwd: str) -> list[str]:
    """The directories from the workspace root down to cwd, root first (cwd alone when it is
    not below the root)."""
    if not within(cwd, root):
        return [cwd]
    out = [cwd]
    while out[-1] != root:
        out.append(os.path.dirname(out[-1]))
    return out[::-1]


def dirs_below(root: str, directory: str, skip: Sequence[str]) -> list[str]:
    """The directories from `root` down to `directory` that are not in `skip`, outer first."""
    return [d for d in scope_dirs(root, directory) if d not in skip]


def rule_files_in(loader: Loader, directory: str, suffix: str, what: str) -> Iterator[Found]:
    """Each readable file ending in `suffix` under the rules `directory`, parsed (what cannot
    be read is noted by the loader, as `what`)."""
    for path in rule_files(loader, directory, Layer.PROJECT, suffix):
        parsed = loader.read(path, what)
        if parsed is not None:
            yield Found(path, directory, parsed)


def pending(loader: Loader, found: Found) -> Source:
    """A rule that is not loaded at start, as a source (`Discovery.conditional`: `--out`
    must not overwrite it, as it must not overwrite Claude Code's conditional rules)."""
    reason = Reason(Why.RULE, "not loaded at start")
    return text_source(
        Layer.PROJECT, found.path, loader.display(found.path), reason, found.parsed.stripped,
        loader.policy.tag_for(Layer.PROJECT), loader.counter,
    )  # fmt: skip


def touch_target(loader: Loader, run: Run, target: Path) -> str | None:
    """The touched path when the workspace holds it (the agent works on any file of its
    workspace); else None, and noted."""
    root = str(run.context.project_root)
    if within(str(target), root):
        return str(target)
    loader.note(
        codes.TOUCH_OUTSIDE, str(target), "outside the workspace; the agent attaches nothing"
    )
    return None


def attach_matching(
    loader: Loader, rules: Sequence[Waiting], target: str, shown_target: str
) -> list[Loaded]:
    """Each rule of `rules` whose globs match `target`, attached, with the glob that did."""
    out: list[Loaded] = []
    for rule in rules:
        pattern = matching(rule, target)
        if pattern is None:
            continue
        text = f"{rule.key}: {patterns_shown([pattern])} matched {shown_target}"
        reason = Reason(Why.RULE_MATCHED, text, pattern=pattern, touched=shown_target)
        out += load_lazily(loader, rule.path, reason, rule.found_in)
    return out


def load_lazily(
    loader: Loader, path: str, reason: Reason, found_in: str | None = None
) -> list[Loaded]:
    return loader.load(path, Layer.SUBDIRECTORY, reason, False, lazy=True, found_in=found_in)


def index_source(
    entries: Sequence[Entry], roots: Sequence[str], counter: TokenCounter, what: str
) -> Source | None:
    """One section listing the name and description of each rule the agent reads on request
    (like Claude Code's skills index: names and descriptions, not the text)."""
    if not entries:
        return None
    text = "\n".join(f"- {e.name}: {e.description}" for e in entries)
    count = f"{len(entries)} rule{'s' if len(entries) != 1 else ''}"
    reason = Reason(Why.RULES_INDEX, f"{what}: {count}, name and description only")
    path = f"<{what}>"
    return text_source(
        Layer.PROJECT, path, ", ".join(roots), reason, text, RULES_INDEX_TAG, counter
    )
