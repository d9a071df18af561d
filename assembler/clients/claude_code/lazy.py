"""Lazy loading: what the client attaches when the agent reads a file below cwd.

For each directory from cwd+1 down to the touched file's directory: `CLAUDE.md`,
`.claude/CLAUDE.md`, `CLAUDE.local.md`, then unconditional `.claude/rules` (local *before*
rules here); then every conditional rule whose `paths` match the touched file, in directory
order (managed, user, root down to the touched file's directory). A file attached for an
earlier touch is not attached again; a file loaded at start is (an import of a start file
reached by a read comes back, with its imports), as the client skips only what earlier reads
attached. Nested files do not get external imports approved.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from pathlib import Path

from ... import codes, display
from ...discovery.context import Context, Discovery, Run, ancestors
from ...discovery.loader import Loaded, Loader
from ...discovery.rules import RuleSet, load_rules, matching_patterns
from ...discovery.touches import attached
from ...model import Layer, Reason, Why
from .settings import WORDS, ClaudeSetup, exclude_matcher


def _nested_dirs(ctx: Context, target: Path) -> list[Path]:
    """Directories strictly below cwd down to the target's directory, outer first."""
    dirs = []
    directory = target.parent
    while directory != ctx.cwd and directory.is_relative_to(ctx.cwd):
        dirs.append(directory)
        directory = directory.parent
    return dirs[::-1]


def _rule_sets(ctx: Context, setup: ClaudeSetup, nested: list[Path]) -> Iterator[RuleSet]:
    yield RuleSet(str(ctx.managed_dir / ".claude" / "rules"), Layer.MANAGED, str(ctx.cwd), False)
    yield RuleSet(str(setup.config_dir / "rules"), Layer.USER, str(ctx.cwd), True)
    for directory in (*ancestors(ctx.cwd), *map(str, nested)):
        rules = os.path.join(directory, ".claude", "rules")
        yield RuleSet(rules, Layer.PROJECT, directory, False)


def touch(
    run: Run, setup: ClaudeSetup, target: Path, already: Collection[str]
) -> Discovery[ClaudeSetup]:
    """The sources newly attached when the agent reads `target`, in the client's order;
    `already`: the paths earlier reads attached (not those loaded at start)."""
    ctx = run.context
    exclude = exclude_matcher(setup.settings.excludes, run.disk).excluded
    loader = Loader(run, exclude=exclude, words=WORDS)
    if not target.is_relative_to(ctx.cwd):
        loader.note(
            codes.TOUCH_OUTSIDE,
            str(target),
            "outside the working directory; the client attaches nothing",
        )
        return Discovery((), tuple(loader.diagnostics))
    shown = ctx.display(str(target))
    nested = _nested_dirs(ctx, target)
    found = _nested_files(loader, nested, shown)
    # Conditional rules are read afresh (the unconditional pass above marks them processed).
    rule_loader = Loader(run, exclude=exclude, diagnostics=loader.diagnostics, words=WORDS)
    for rules in _rule_sets(ctx, setup, nested):
        found += _matching_rules(rule_loader, rules, target, shown)
    return Discovery(attached(found, already, run), tuple(loader.diagnostics))


def _nested_files(loader: Loader, nested: list[Path], shown: str) -> list[Loaded]:
    """`CLAUDE.md`, `.claude/CLAUDE.md`, `CLAUDE.local.md` and unconditional rules of each
    directory on the way to the touched path, outer first, each followed by its imports."""
    found: list[Loaded] = []
    for directory in nested:
        reason = Reason(
            Why.NESTED,
            f"in {loader.display(str(directory))}, on the way to {shown}",
            touched=shown,
        )
        for name, layer in _NESTED_FILES:
            found += loader.load(str(directory / name), layer, reason, False, lazy=True)
        rules = RuleSet(str(directory / ".claude" / "rules"), Layer.PROJECT, str(directory), False)
        found += load_rules(
            loader, rules, conditional=False, lazy=True, context=f", on the way to {shown}"
        )
    return found


_NESTED_FILES = (
    ("CLAUDE.md", Layer.PROJECT),
    (os.path.join(".claude", "CLAUDE.md"), Layer.PROJECT),
    ("CLAUDE.local.md", Layer.LOCAL),
)


def _matching_rules(loader: Loader, rules: RuleSet, target: Path, shown: str) -> list[Loaded]:
    """The conditional rules of one rules directory whose `paths:` match `target`."""
    found: list[Loaded] = []
    for item in load_rules(loader, rules, conditional=True, lazy=True):
        assert item.globs is not None
        pattern = matching_patterns(item.globs, str(target), rules.base_dir)
        if pattern is None:
            continue
        said = display.shown(pattern, display.PATTERN_CHARS)
        reason = Reason(
            Why.RULE_MATCHED, f"paths: {said!r} matched {shown}", pattern=pattern, touched=shown
        )
        found.append(item._replace(source=item.source._replace(reason=reason)))
    return found
