"""The temporary home: copies of what a prediction reads of the user's home, and nothing
else; the account file reduced to the approvals; links kept; the source never written."""

from __future__ import annotations

import json
import os
from pathlib import Path

from assembler.clients import registry
from assembler.verify import check
from tests.helpers.trees import Link, build, git_init


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.lstat().st_mtime_ns, p.lstat().st_size) for p in root.rglob("*")}


def test_only_what_ctxasm_reads_is_copied(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "Repo.\n"})
    home = build(tmp_path / "home", {
        ".claude/CLAUDE.md": "Mine.\n",
        ".claude/rules/a.md": "Rule.\n",
        ".claude/settings.json": "{}",
        ".claude/projects/x/history.jsonl": "a transcript\n",
        ".claude/.credentials.json": '{"token": "secret"}',
        ".claude/linked.md": Link("CLAUDE.md"),
        "notes.txt": "not read\n",
        ".claude.json": json.dumps({
            "oauthAccount": {"emailAddress": "a@b.c"},
            "projects": {str(repo): {"hasClaudeMdExternalIncludesApproved": True, "history": ["x"]},
                         "/elsewhere": {"lastCost": 1}},
        }),
    })  # fmt: skip
    before = _snapshot(home)
    target = tmp_path / "temp-home"
    target.mkdir()
    headless = registry.get("claude-code").headless
    assert headless is not None
    written = check._copy_home(
        repo, "claude-code", [], home, tmp_path / "managed", target, headless
    )
    assert sorted(written) == [
        ".claude.json",
        ".claude/CLAUDE.md",
        ".claude/rules/a.md",
        ".claude/settings.json",
    ]
    assert json.loads((target / ".claude.json").read_text()) == {
        "projects": {str(repo): {"hasClaudeMdExternalIncludesApproved": True}}
    }
    assert not (target / ".claude/.credentials.json").exists()
    assert not (target / "notes.txt").exists()
    assert _snapshot(home) == before
    assert oct(os.stat(target / ".claude/CLAUDE.md").st_mode & 0o777) == "0o600"


def test_a_linked_file_stays_a_link_into_the_copy(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    home = build(tmp_path / "home", {
        "dotfiles/CLAUDE.md": "Mine.\n",
        ".claude/CLAUDE.md": Link(str(tmp_path / "home/dotfiles/CLAUDE.md")),
    })  # fmt: skip
    target = tmp_path / "temp-home"
    target.mkdir()
    headless = registry.get("claude-code").headless
    assert headless is not None
    check._copy_home(repo, "claude-code", [], home, tmp_path / "managed", target, headless)
    assert os.readlink(target / ".claude/CLAUDE.md") == str(target / "dotfiles/CLAUDE.md")
    assert (target / ".claude/CLAUDE.md").read_text() == "Mine.\n"


def test_the_project_inside_the_home_is_not_copied(tmp_path: Path) -> None:
    home = build(tmp_path / "home", {".claude/CLAUDE.md": "Mine.\n"})
    repo = git_init(home / "src" / "repo")
    build(repo, {"CLAUDE.md": "Repo.\n", "sub/CLAUDE.md": "Sub.\n"})
    target = tmp_path / "temp-home"
    target.mkdir()
    headless = registry.get("claude-code").headless
    assert headless is not None
    written = check._copy_home(
        repo / "sub", "claude-code", [], home, tmp_path / "managed", target, headless
    )
    assert sorted(written) == [".claude/CLAUDE.md"]
