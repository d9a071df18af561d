"""`report.build`: what the page shows, taken from `explain --policy all`, `lint` and `cache`
on real trees, and bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assembler.errors import CacheError
from assembler.live.explain import Status
from assembler.live.side_by_side import side_by_side
from assembler.model import Layer
from assembler.output.cache import snapshot_text
from assembler.report.build import (
    BAR_STEPS,
    MAX_FILE_BYTES,
    MAX_FILE_ROWS,
    MAX_TEXT_BYTES,
    build,
    snapshots,
)
from tests.helpers.trees import build as build_tree
from tests.helpers.trees import demo_tree, git_init, machine


def test_the_demo_page_holds_what_the_commands_compute(tmp_path: Path) -> None:
    tree = demo_tree(tmp_path)
    report = build(tree.cwd, **tree.options())
    side = side_by_side(tree.cwd, **tree.options())
    # Side by side: explain --policy all's rows, each with the text of its file.
    assert [row.path for row, _ in report.rows] == [row.path for row in side.files]
    assert [card.path for _, card in report.rows if card] == [row.path for row in side.files]
    claude = report.agents[0]
    assert claude.title == "Claude Code" and claude.run.loaded == 12
    assert [a.run.loaded for a in report.agents[1:]] == [0, 0, 0, 0]
    # Why not: the import not approved and the rule waiting for its paths, and nothing else
    # (the rules loaded at start are not listed again for the touch).
    assert [(r.path, r.skip.value if r.skip else None, r.code) for r in claude.why_not] == [
        ("docs/architecture.md", "external import not approved", "CTX204"),
        (".claude/rules/frontend.md", "conditional rule not matched", ""),
    ]
    # Lazy loading: the touched handler attaches its directory's file and a rule.
    (attached,) = claude.lazy
    assert attached.touched == "services/api/src/handlers/users.ts"
    assert [r.path for r in attached.rows] == [
        "services/api/src/handlers/CLAUDE.md",
        "services/api/.claude/rules/handlers.md",
    ]
    assert all(a.lazy == (a.lazy[0]._replace(rows=()),) for a in report.agents[1:])
    # Lint: the finding at CLAUDE.local.md, whose text is on the page.
    (group,) = report.lint_files
    assert (group.path, [f.code for f in group.findings]) == ("CLAUDE.local.md", ["CTX402"])
    assert group.card is not None and group.card.lines == (
        "My sandbox API key is in `~/.config/acme/dev.env`; never print it.",
    )
    # Cache: each agent's tiers, one per layer it loads.
    assert [t.name for t in claude.cache.plan.tiers] == [
        "managed", "user", "project", "local", "subdirectory", "memory",
    ]  # fmt: skip
    assert not claude.compared and report.against is None


def test_the_bar_is_explains_budget_in_section_order(tmp_path: Path) -> None:
    """A stretch per file in the native order (by layer), its size what the budgeter counts;
    the boundary after the static layers, each cache tier's end and its breakpoint."""
    tree = demo_tree(tmp_path)
    report = build(tree.cwd, **tree.options())
    claude = report.agents[0]
    bar, explanation = claude.bar, claude.explanation
    layers = [s.layer for s in bar.segments]
    assert layers == sorted(layers, key=lambda layer: layer.rank)
    per_layer = {lt.layer: lt.tokens for lt in explanation.layers}
    for layer, tokens in per_layer.items():
        assert sum(s.tokens for s in bar.segments if s.layer is layer) == tokens
    assert bar.total == explanation.total == sum(per_layer.values()) + explanation.boundary_tokens
    (boundary,) = [m for m in bar.markers if m.kind == "boundary"]
    assert boundary.at == per_layer[Layer.MANAGED]  # managed is the static layer
    tiers = [m for m in bar.markers if m.kind == "tier"]
    assert [m.label for m in tiers] == [t.name for t in claude.cache.plan.tiers]
    assert tiers[-1].at == bar.total
    assert not any(m.breakpoint for m in tiers)  # under the 1,024-token minimum
    assert report.scale == bar.total  # the widest bar


def test_breakpoints_are_marked_where_the_plan_puts_them(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build_tree(tmp_path, {"managed/CLAUDE.md": "Managed policy line.\n" * 400})
    build_tree(repo, {"CLAUDE.md": "Project line.\n" * 400})
    bar = build(repo, **machine(tmp_path)).agents[0].bar
    points = [(m.label, m.at) for m in bar.markers if m.breakpoint]
    tiers = {m.label.split()[0]: m.at for m in bar.markers if m.kind == "tier"}
    assert points == [("managed 5m", tiers["managed"]), ("project 5m", tiers["project"])]


def test_a_file_too_small_to_see_is_drawn_with_its_neighbours(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    rules = {f".claude/rules/r{i:03}.md": f"Rule {i}." for i in range(600)}
    build_tree(repo, {"CLAUDE.md": "Big.\n" * 10_000, **rules})
    report = build(repo, **machine(tmp_path))
    bar = report.agents[0].bar
    assert len(bar.segments) <= BAR_STEPS + len(Layer)
    assert sum(s.files for s in bar.segments) == 601
    assert (
        sum(s.tokens for s in bar.segments)
        == bar.total - report.agents[0].explanation.boundary_tokens
    )
    merged = [s for s in bar.segments if s.files > 1]
    assert merged and all(s.card is None for s in merged)
    # The table lists the first files, the page holds a bounded amount of their text.
    assert len(report.rows) == MAX_FILE_ROWS and report.rows_left == 101
    held = sum(len("\n".join(c.lines).encode()) for c in report.cards)
    assert held <= MAX_TEXT_BYTES
    big = report.rows[0][1]
    assert big is not None and not big.whole and len("\n".join(big.lines)) <= MAX_FILE_BYTES


def test_lint_covers_the_directory_and_what_loads_from_above_it(tmp_path: Path) -> None:
    """Started in a subdirectory: the instruction files under it, and the ancestor's file an
    agent loads there (not the sibling directory's)."""
    repo = git_init(tmp_path / "repo")
    build_tree(
        repo,
        {
            "CLAUDE.md": "# Root\n\n" + "Root line.\n" * 300,
            "api/CLAUDE.md": "# Api\n\n@gone.md\n",
            "api/deep/CLAUDE.md": "# Deep\n\n@missing.md\n",
            "web/CLAUDE.md": "# Web\n\n@also-gone.md\n",
        },
    )
    report = build(repo / "api", **machine(tmp_path))
    paths = {group.path for group in report.lint_files}
    assert {"CLAUDE.md", "api/CLAUDE.md", "api/deep/CLAUDE.md"} <= paths
    assert "web/CLAUDE.md" not in paths
    for group in report.lint_files:
        assert group.card is not None
        assert all(f.line <= len(group.card.lines) for f in group.findings)


def test_snapshots_are_compared_agent_by_agent(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build_tree(repo, {"CLAUDE.md": "Stable.\n" * 600, "AGENTS.md": "Codex.\n" * 600})
    before = build(repo, **machine(tmp_path))
    cache = tmp_path / "cache"
    cache.mkdir()
    for agent in before.agents[:2]:  # claude-code and codex
        (cache / f"{agent.run.client}.json").write_text(snapshot_text(agent.cache.snapshot))
    (repo / "AGENTS.md").write_text("Codex, changed.\n" * 600)
    found = snapshots(cache)
    assert sorted(found) == ["claude-code", "codex"]
    after = build(repo, against=found, against_name=str(cache), **machine(tmp_path))
    by_name = {a.run.client: a for a in after.agents}
    assert after.against == str(cache)
    claude, codex = by_name["claude-code"].cache.divergence, by_name["codex"].cache.divergence
    assert claude is not None and claude.change == "none"
    assert codex is not None and (codex.change, codex.tier) == ("changed", "project")
    assert not by_name["gemini"].compared and by_name["gemini"].cache.divergence is None


def test_snapshots_need_a_directory_and_valid_files(tmp_path: Path) -> None:
    with pytest.raises(CacheError, match="no such directory of snapshots"):
        snapshots(tmp_path / "none")
    (tmp_path / "claude-code.json").write_text(json.dumps({"version": 9}))
    with pytest.raises(CacheError, match="not a version-1 ctxasm snapshot"):
        snapshots(tmp_path)


def test_a_pseudo_source_shows_the_text_the_agent_loads(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build_tree(
        repo,
        {
            "CLAUDE.md": "Root.",
            ".claude/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Ship it.\n---\nSteps.",
        },
    )
    report = build(repo, **machine(tmp_path))
    (skills,) = [card for _, card in report.rows if card and card.origin == "loaded"]
    assert skills.file.startswith("<") and any("deploy" in line for line in skills.lines)
    assert all(c.status in (Status.LOADED, None) for row, _ in report.rows for c in row.cells)
