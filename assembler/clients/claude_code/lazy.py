"""Lazy loading: what the client attaches when the agent reads a file below cwd.

For each directory from cwd+1 down to the touched file's directory: `CLAUDE.md`,
`.claude/CLAUDE.md`, `CLAUDE.local.md`, then its rules, unconditional ones and those whose
`paths` match the touched file, in directory order (local *before* rules here); then every
conditional rule of the managed, user and root-to-cwd rules directories that matches. A
file attached for an earlier touch is not attached again; a file loaded at start is, up to
2.1.197 (an import of a start file reached by a read comes back, with its imports), as that
client skips only what earlier reads attached. Nested files do not get external imports
approved. From 2.1.332 (with the agents-md plugin) a nested `AGENTS.md` comes first.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from pathlib import Path

from ... import codes, display
from ...discovery.context import Context, Discovery, Run, ancestors
from ...discovery.loader import Loaded, Loader
from ...discovery.rules import RuleSet, load_rules, matching_patterns, rule_files
from ...discovery.touches import attached
from ...model import Layer, Reason, Why
from .settings import AGENTS_FALLBACK, ClaudeSetup, exclude_matcher, reading


def _nested_dirs(ctx: Context, target: Path) -> list[Path]:
    """Directories strictly below cwd down to the target's directory, outer first."""
    dirs = []
    directory = target.parent
    while directory != ctx.cwd and directory.is_relative_to(ctx.cwd):
        dirs.append(directory)
        directory = directory.parent
    return dirs[::-1]


def _rule_sets(ctx: Context, setup: ClaudeSetup) -> Iterator[RuleSet]:
    """The rules directories of the start whose conditional rules a read may match."""
    yield RuleSet(str(ctx.managed_dir / ".claude" / "rules"), Layer.MANAGED, str(ctx.cwd), False)
    yield RuleSet(str(setup.config_dir / "rules"), Layer.USER, str(ctx.cwd), True)
    for directory in ancestors(ctx.cwd):
        rules = os.path.join(directory, ".claude", "rules")
        yield RuleSet(rules, Layer.PROJECT, directory, False)


def touch(
    run: Run, setup: ClaudeSetup, target: Path, already: Collection[str]
) -> Discovery[ClaudeSetup]:
    """The sources newly attached when the agent reads `target`, in the client's order;
    `already`: the paths earlier reads attached (not those loaded at start)."""
    ctx = run.context
    exclude = exclude_matcher(setup.settings.excludes, run.disk).excluded
    loader = Loader(run, exclude=exclude, reading=(how := reading(run)))
    if not target.is_relative_to(ctx.cwd):
        loader.note(
            codes.TOUCH_OUTSIDE,
            str(target),
            "outside the working directory; the client attaches nothing",
        )
        return Discovery((), tuple(loader.diagnostics))
    shown = ctx.display(str(target))
    nested = _nested_dirs(ctx, target)
    found: list[Loaded] = []
    if setup.nested_agents_md:
        from .agents import nested_agents_md

        fallback = setup.settings.instruction_files == AGENTS_FALLBACK
        found += nested_agents_md(loader, nested, target, fallback, shown)
    found += _nested_files(loader, nested, target, shown)
    # The start's conditional rules are read afresh (discovery marked them processed).
    rule_loader = Loader(
        run,
        exclude=exclude,
        diagnostics=loader.diagnostics,
        reading=how,
    )
    for rules in _rule_sets(ctx, setup):
        found += _matching_rules(rule_loader, rules, target, shown)
    return Discovery(attached(found, already, run), tuple(loader.diagnostics))


def _nested_files(loader: Loader, nested: list[Path], target: Path, shown: str) -> list[Loaded]:
    """`CLAUDE.md`, `.claude/CLAUDE.md`, `CLAUDE.local.md` and the rules (unconditional, and
    conditional ones that match `target`, in directory order) of each directory on the way
    to the touched path, outer first, each followed by its imports: a directory's rules come
    at its position, before the rules of cwd and above (SPEC 4b, found on 2.1.197)."""
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
        found += _rules_in_place(loader, rules, target, shown)
    return found


def _rules_in_place(loader: Loader, rules: RuleSet, target: Path, shown: str) -> list[Loaded]:
    """One nested rules directory in directory order: each unconditional rule with its
    imports, each conditional one whose `paths:` match `target` (and, as the client does,
    the imports of every conditional one)."""
    found: list[Loaded] = []
    reason = Reason(
        Why.NESTED,
        f"rule in {loader.display(rules.directory)}, on the way to {shown}",
        touched=shown,
    )
    for path in rule_files(loader, rules.directory, rules.layer):
        loaded = loader.load(
            path, rules.layer, reason, rules.include_external, lazy=True, found_in=rules.directory
        )
        if not loaded or loaded[0].globs is None:
            found += loaded
            continue
        matched = _matched(loaded[0], rules, target, shown)
        # A conditional rule's imports come with it, matched or not (CTX209's quirk).
        found += [*((matched,) if matched is not None else ()), *loaded[1:]]
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
        matched = _matched(item, rules, target, shown)
        if matched is not None:
            found.append(matched)
    return found


def _matched(item: Loaded, rules: RuleSet, target: Path, shown: str) -> Loaded | None:
    """A conditional rule, with the pattern that matched `target` as its reason; None when
    none does."""
    assert item.globs is not None
    pattern = matching_patterns(item.globs, str(target), rules.base_dir)
    if pattern is None:
        return None
    said = display.shown(pattern, display.PATTERN_CHARS)
    reason = Reason(
        Why.RULE_MATCHED, f"paths: {said!r} matched {shown}", pattern=pattern, touched=shown
    )
    return item._replace(source=item.source._replace(reason=reason))
