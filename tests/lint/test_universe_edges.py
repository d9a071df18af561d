"""Whole-repository lint finds what linting each file on its own finds, in the corners an
adversarial review found: repository files that the user's, managed or memory layers load, a
start's own file linked out of the repository, a repository reached through a link, and an
ignored file beside a linked rules directory."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from assembler.lint import lint
from tests.helpers.trees import Link, build, git_init, machine

P = "Paragraph alpha: always run the whole test suite before you push a change here."
Q = "Paragraph beta: always run the whole test suite before you push a change here."


def _user_file_imports_a_repository_file(tmp: Path, repo: Path) -> None:
    build(repo, {"CLAUDE.md": P + "\n", "docs/shared.md": P + "\n"})
    build(tmp, {"home/.claude/CLAUDE.md": f"@{repo}/docs/shared.md\n"})


def _user_file_is_a_link_into_the_repository(tmp: Path, repo: Path) -> None:
    build(repo, {"CLAUDE.md": P + "\n", "claude/CLAUDE.md": P + "\n"})
    build(tmp, {"home/.claude/CLAUDE.md": Link(str(repo / "claude/CLAUDE.md"))})


def _managed_settings_text(tmp: Path, repo: Path) -> None:
    build(repo, {"CLAUDE.md": P + "\n"})
    build(tmp, {"managed/managed-settings.json": json.dumps({"claudeMd": P})})


def _memory_moved_into_the_repository(tmp: Path, repo: Path) -> None:
    settings = json.dumps({"autoMemoryDirectory": str(repo / "notes")})
    build(
        repo,
        {
            "CLAUDE.md": P + "\n",
            "notes/MEMORY.md": P + "\n",
            ".claude/settings.local.json": settings,
        },
    )


def _own_file_linked_out_of_the_repository(tmp: Path, repo: Path) -> None:
    build(tmp, {"shared.md": P + "\n"})
    build(
        repo,
        {
            ".claude/settings.local.json": "{}",  # the root's start is a kind of its own
            "a/CLAUDE.md": Link(str(tmp / "shared.md")),
            "b/CLAUDE.md": P + "\n",
        },
    )


def _ignored_file_beside_a_linked_rules_directory(tmp: Path, repo: Path) -> None:
    build(tmp, {"shared/style.md": "shared rule\n"})
    build(
        repo,
        {
            ".gitignore": "CLAUDE.local.md\n",
            "CLAUDE.local.md": "my private notes\n",
            ".claude/rules": Link("../../shared"),
        },
    )


CASES: dict[str, Callable[[Path, Path], None]] = {
    "user-import": _user_file_imports_a_repository_file,
    "user-link": _user_file_is_a_link_into_the_repository,
    "managed-settings": _managed_settings_text,
    "memory-in-repository": _memory_moved_into_the_repository,
    "own-file-linked-out": _own_file_linked_out_of_the_repository,
    "linked-rules-beside-ignored": _ignored_file_beside_a_linked_rules_directory,
}


@pytest.mark.parametrize("case", CASES)
def test_whole_repository_lint_finds_what_each_file_finds(tmp_path: Path, case: str) -> None:
    repo = git_init(tmp_path / "repo")
    CASES[case](tmp_path, repo)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, capture_output=True)
    whole = lint([], base=repo, **machine(tmp_path))
    each = sorted(
        f for name in whole.files for f in lint([name], base=repo, **machine(tmp_path)).findings
    )
    # What the repository's start says of content from outside that no file holds (memory
    # moved by its settings: CTX804) is the start's, reported by whole-repository lint.
    start = lint([], base=repo, cwd=repo, **machine(tmp_path)).findings
    assert sorted(whole.findings) == sorted({*each, *start})
    assert any(f.code in ("CTX502", "CTX402") for f in each) == (
        case not in ("own-file-linked-out", "linked-rules-beside-ignored")
    )


def test_a_repository_reached_through_a_link_finds_what_each_file_finds(tmp_path: Path) -> None:
    """A start whose settings move auto memory must not be taken for the root's kind."""
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": Q + "\n",
            "repo/a/CLAUDE.md": P + "\n",
            "repo/a/.claude/settings.local.json": json.dumps({"autoMemoryDirectory": "~/moved"}),
            "home/moved/MEMORY.md": P + "\n",
        },
    )
    os.symlink("repo", tmp_path / "link")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, capture_output=True)
    whole = lint([], base=tmp_path / "link", **machine(tmp_path))
    assert [(f.path, f.code) for f in whole.findings if f.code == "CTX502"] == [
        ("a/CLAUDE.md", "CTX502")
    ]
