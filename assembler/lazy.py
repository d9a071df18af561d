"""Lazy loading: what the client attaches when the agent reads a file below cwd.

For each directory from cwd+1 down to the touched file's directory: `CLAUDE.md`,
`.claude/CLAUDE.md`, `CLAUDE.local.md`, then unconditional `.claude/rules` (local *before*
rules here); then every conditional rule whose `paths` match the touched file, in directory
order (managed, user, root down to the touched file's directory). A file already loaded at
start, or attached for an earlier touch, is not attached again. Nested files do not get
external imports approved.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from pathlib import Path

from .discover import _ancestors
from .loader import Context, Loaded, Loader
from .model import Diagnostic, Layer, Reason, Severity, Source, Why
from .policy import Policy
from .rules import RuleSet, load_rules, matching_patterns
from .tokens import TokenCounter


def _nested_dirs(ctx: Context, target: Path) -> list[Path]:
    """Directories strictly below cwd down to the target's directory, outer first."""
    dirs = []
    directory = target.parent
    while directory != ctx.cwd and directory.is_relative_to(ctx.cwd):
        dirs.append(directory)
        directory = directory.parent
    return dirs[::-1]


def _rule_sets(ctx: Context, nested: list[Path]) -> Iterator[RuleSet]:
    yield RuleSet(str(ctx.managed_dir / ".claude" / "rules"), Layer.MANAGED, str(ctx.cwd), False)
    yield RuleSet(str(ctx.config_dir / "rules"), Layer.USER, str(ctx.cwd), True)
    for directory in (*_ancestors(ctx.cwd), *map(str, nested)):
        rules = os.path.join(directory, ".claude", "rules")
        yield RuleSet(rules, Layer.PROJECT, directory, False)


def resolve_touched(path: str | os.PathLike[str]) -> Path:
    """A touched path made absolute (relative to the process's directory) and resolved."""
    return Path(os.path.realpath(os.path.abspath(path)))


def touch(
    ctx: Context,
    policy: Policy,
    counter: TokenCounter,
    target: Path,
    already: Collection[str],
) -> tuple[list[Source], list[Diagnostic]]:
    """The sources newly attached when the agent reads `target`, in the client's order."""
    loader = Loader(ctx, policy, counter)
    shown = ctx.display(str(target))
    if not target.is_relative_to(ctx.cwd):
        loader.note(
            "touch-outside-cwd",
            Severity.INFO,
            str(target),
            "outside the working directory; the client attaches nothing",
        )
        return [], loader.diagnostics
    nested = _nested_dirs(ctx, target)
    found: list[Loaded] = []
    for directory in nested:
        reason = Reason(
            Why.NESTED, f"in {ctx.display(str(directory))}, on the way to {shown}", touched=shown
        )
        for name, layer in (
            ("CLAUDE.md", Layer.PROJECT),
            (os.path.join(".claude", "CLAUDE.md"), Layer.PROJECT),
            ("CLAUDE.local.md", Layer.LOCAL),
        ):
            found += loader.load(str(directory / name), layer, reason, False, lazy=True)
        rules = RuleSet(str(directory / ".claude" / "rules"), Layer.PROJECT, str(directory), False)
        found += load_rules(
            loader, rules, conditional=False, lazy=True, context=f", on the way to {shown}"
        )
    # Conditional rules are read afresh (the unconditional pass above marks them processed).
    rule_loader = Loader(ctx, policy, counter, diagnostics=loader.diagnostics)
    for rules in _rule_sets(ctx, nested):
        for item in load_rules(rule_loader, rules, conditional=True, lazy=True):
            assert item.globs is not None
            pattern = matching_patterns(item.globs, str(target), rules.base_dir)
            if pattern is None:
                continue
            reason = Reason(
                Why.RULE_MATCHED,
                f"paths: {pattern!r} matched {shown}",
                pattern=pattern,
                touched=shown,
            )
            found.append(item._replace(source=item.source._replace(reason=reason)))
    attached: list[Source] = []
    seen = set(already)
    for item in found:
        if item.source.path in seen:
            continue
        seen.add(item.source.path)
        attached.append(
            item.source._replace(layer=Layer.SUBDIRECTORY, tag=policy.tag_for(Layer.SUBDIRECTORY))
        )
    return attached, loader.diagnostics
