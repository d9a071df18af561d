"""The agents-md plugin of Claude Code 2.1.332 (SPEC 4b.1): its four modes, the older key,
where its files go, and what a read attaches; 2.1.197 has none of it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers.trees import build, git_init, run

TREE = {
    "AGENTS.md": "above the repository",
    "repo/AGENTS.md": "root agents @notes.md",
    "repo/notes.md": "notes",
    "repo/.claude/AGENTS.md": "dot-claude agents",
    "repo/.claude/rules/r.md": "a rule",
    "repo/AGENTS.override.md": "never read",
    "repo/pkg/AGENTS.md": "pkg agents",
    "repo/pkg/src/x.ts": "",
    "repo/pkg/deep/AGENTS.md": "deep agents",
    "repo/pkg/deep/y.ts": "",
    "home/.claude/CLAUDE.md": "mine",
}


def _tree(tmp: Path, mode: object = None, extra: dict[str, str] | None = None) -> Path:
    """The tree in `tmp/w` (its parent holds an AGENTS.md above the repository), with the
    plugin's mode in the user's settings (None: not set)."""
    files = {f"w/{path}": text for path, text in {**TREE, **(extra or {})}.items()}
    if mode is not None:
        options = mode if isinstance(mode, dict) else {"instructionFiles": mode}
        settings = {"pluginConfigs": {"agents-md@builtin": {"options": options}}}
        files["w/home/.claude/settings.json"] = json.dumps(settings)
    build(tmp, files)
    git_init(tmp / "w" / "repo")
    return tmp / "w"


def _loaded(tmp: Path, cwd: str, version: str = "2.1.332") -> list[str]:
    a = run(tmp, cwd, client_version=version, home=tmp / "home")
    return [s.content for s in a.sources if not s.dropped]


def test_by_default_agents_md_loads_where_no_claude_md_does(tmp_path: Path) -> None:
    """From the filesystem root down to cwd, each directory's AGENTS.md then .claude/AGENTS.md
    (above the git root too), with imports, after that directory's own files (the rule),
    before deeper ones; AGENTS.override.md is not read; the user's CLAUDE.md does not count;
    an import outside cwd is dropped like a CLAUDE.md's."""
    base = _tree(tmp_path)
    assert _loaded(base, "repo") == [
        "mine",
        "above the repository",
        "a rule",
        "root agents @notes.md",
        "notes",
        "dot-claude agents",
    ]
    assert _loaded(base, "repo/pkg") == [
        "mine",
        "above the repository",
        "a rule",
        "root agents @notes.md",  # its @notes.md is outside repo/pkg: dropped (CTX204)
        "dot-claude agents",
        "pkg agents",
    ]
    assert _loaded(base, "repo/pkg", "2.1.197") == ["mine", "a rule"]


def test_a_claude_md_on_the_walk_keeps_agents_md_out(tmp_path: Path) -> None:
    for name in ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"):
        base = _tree(tmp_path / name.replace("/", "_"), extra={f"repo/{name}": "claude"})
        expected = ["mine", "a rule", "claude"] if name == "CLAUDE.local.md" else None
        assert _loaded(base, "repo/pkg") == (expected or ["mine", "claude", "a rule"]), name


def test_claude_md_and_agents_md_loads_both_but_not_the_same_text_twice(tmp_path: Path) -> None:
    extra = {"repo/CLAUDE.md": "claude", "repo/pkg/CLAUDE.md": "pkg agents"}
    base = _tree(tmp_path, "claude-md-and-agents-md", extra)
    assert _loaded(base, "repo/pkg") == [
        "mine",
        "above the repository",
        "claude",
        "a rule",
        "root agents @notes.md",
        "dot-claude agents",
        "pkg agents",  # pkg/CLAUDE.md's: pkg/AGENTS.md has the same text
    ]


def test_claude_md_and_managed_only(tmp_path: Path) -> None:
    base = _tree(tmp_path / "a", "claude-md")
    assert _loaded(base, "repo/pkg") == ["mine", "a rule"]
    managed = {"managed/CLAUDE.md": "policy"}
    base = _tree(tmp_path / "b", "managed-only", managed)
    a = run(base, "repo/pkg", home=base / "home", managed_dir=base / "managed")
    assert [s.content for s in a.sources] == ["policy"]
    assert sorted(d.code for d in a.diagnostics) == ["CTX405", "CTX405"]


@pytest.mark.parametrize(
    ("options", "loads_agents"),
    [
        ({"projectInstructions": "claude"}, False),  # the older key, honoured
        ({"projectInstructions": "both"}, True),
        ({"projectInstructions": "odd"}, False),  # any other value reads as claude-md
        ({"instructionFiles": "claude-md-and-agents-md", "projectInstructions": "claude"}, True),
        ({"instructionFiles": "nonsense"}, True),  # an unknown mode is the default
    ],
)
def test_the_older_key_counts_while_instruction_files_says_the_default(
    tmp_path: Path, options: dict[str, str], loads_agents: bool
) -> None:
    base = _tree(tmp_path, options)
    assert ("pkg agents" in _loaded(base, "repo/pkg")) is loads_agents


def test_a_read_attaches_a_nested_agents_md_first_through_the_hook(tmp_path: Path) -> None:
    extra = {"repo/pkg/deep/CLAUDE.md": "deep claude", "repo/pkg/deep/z/w.ts": ""}
    base = _tree(tmp_path, None, extra)
    start = run(base, "repo", home=base / "home", client_version="2.1.332")
    after = start.touch(base / "repo/pkg/deep/z/w.ts")
    # pkg/AGENTS.md by the hook; deep/ has a CLAUDE.md of its own: only that one.
    assert [(s.content, s.reason.why.name) for s in after.attached(start)] == [
        ("pkg agents", "HOOK"),
        ("deep claude", "NESTED"),
    ]
    out = after.render("claude-code", date="2026-01-31")
    real = os.path.realpath(base)
    assert (
        "\n\n<system-reminder>\ntool.call hook additional context: Contents of "
        f"{real}/repo/pkg/AGENTS.md:\n\npkg agents\n</system-reminder>\n\n<system-reminder>\n"
        f"Contents of {real}/repo/pkg/deep/CLAUDE.md:\n\ndeep claude\n</system-reminder>"
    ) in out


def test_a_start_with_claude_md_attaches_no_nested_agents_md(tmp_path: Path) -> None:
    base = _tree(tmp_path, None, {"repo/CLAUDE.md": "claude"})
    start = run(base, "repo", home=base / "home")
    after = start.touch(base / "repo/pkg/src/x.ts")
    assert after.attached(start) == ()
    old = run(base, "repo", home=base / "home", client_version="2.1.197")
    assert old.touch(base / "repo/pkg/src/x.ts").attached(old) == ()


def test_an_agents_md_left_out_says_which_file_keeps_it_out(tmp_path: Path) -> None:
    """With CLAUDE.md and AGENTS.md side by side, nothing said why AGENTS.md was not loaded
    (explain, even --all, omitted it; the report said "never looked for"). Each AGENTS.md on
    the way to cwd is now a skipped row naming the CLAUDE.md; not one that loads as CLAUDE.md
    through a link, and nothing at 2.1.197, which has no plugin."""
    from assembler.live import explain
    from assembler.live.explain import Status

    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "claude",
            "repo/AGENTS.md": "agents",
            "repo/.claude/AGENTS.md": "dot-claude agents",
            "repo/pkg/AGENTS.md": "below cwd: not on the way",
        },
    )
    git_init(tmp_path / "repo")
    a = run(tmp_path, "repo")
    said = [(d.code, d.path, d.message) for d in a.diagnostics if d.code == "CTX408"]
    because = (
        "not loaded, because CLAUDE.md loads (Claude Code's agents-md plugin, mode "
        "claude-md-or-agents-md: AGENTS.md only where no CLAUDE.md loads)"
    )
    assert said == [
        ("CTX408", "AGENTS.md", because),
        ("CTX408", ".claude/AGENTS.md", because),
    ]
    rows = explain(tmp_path / "repo", home=tmp_path / "home", managed_dir=tmp_path / "m",
                   environ={}).rows  # fmt: skip
    [row] = [r for r in rows if r.path == "AGENTS.md"]
    assert (row.status, row.code, row.detail) == (Status.SKIPPED, "CTX408", because)
    assert [d for d in run(tmp_path, "repo", client_version="2.1.197").diagnostics
            if d.code == "CTX408"] == []  # fmt: skip
    os.remove(tmp_path / "repo" / "CLAUDE.md")
    os.symlink("AGENTS.md", tmp_path / "repo" / "CLAUDE.md")
    linked = [d.path for d in run(tmp_path, "repo").diagnostics if d.code == "CTX408"]
    assert linked == [".claude/AGENTS.md"]  # AGENTS.md loads, as CLAUDE.md
