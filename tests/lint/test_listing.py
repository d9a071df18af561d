"""Which files lint checks, as one value (`lint.listing.Listing`): the files, where listing
stopped at a limit, and which of them git ignores."""

from __future__ import annotations

import subprocess
from pathlib import Path

from assembler.lint.git import GitRepo
from assembler.lint.listing import Listing, instruction_files, merged, walk
from tests.helpers.trees import build, git_init


def test_a_repository_lists_tracked_untracked_and_ignored_files_agents_read(
    tmp_path: Path,
) -> None:
    repo = git_init(tmp_path / "repo")
    build(
        repo,
        {
            ".gitignore": "CLAUDE.local.md\nbuild/\n",
            "CLAUDE.md": "Tracked.",
            "pkg/AGENTS.md": "Untracked.",
            "CLAUDE.local.md": "Ignored, read all the same.",
            "build/CLAUDE.md": "A built tree's: not the project's.",
            "notes.md": "Nobody's.",
        },
    )
    subprocess.run(["git", "-C", str(repo), "add", "CLAUDE.md", ".gitignore"], check=True)
    git = GitRepo(repo)
    try:
        found = instruction_files(repo, git)
    finally:
        git.close()
    assert found == Listing(
        (repo / "CLAUDE.local.md", repo / "CLAUDE.md", repo / "pkg" / "AGENTS.md"),
        stopped=(),
        ignored=(repo / "CLAUDE.local.md",),
    )


def test_a_walk_past_its_limit_says_where_it_stopped(tmp_path: Path) -> None:
    build(tmp_path, {f"d{i}/CLAUDE.md": "Rules." for i in range(3)})
    assert walk(tmp_path, tmp_path, max_files=2) == Listing(
        (tmp_path / "d0" / "CLAUDE.md", tmp_path / "d1" / "CLAUDE.md"), stopped=(tmp_path,)
    )
    assert walk(tmp_path, tmp_path).stopped == ()


def test_listings_merge_into_one_value(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    parts = [Listing((a,), stopped=(tmp_path,)), Listing((b,), (tmp_path,), ignored=(b,))]
    assert merged(parts, (b, a)) == Listing((b, a), stopped=(tmp_path,), ignored=(b,))
    assert parts[0].joined(parts[1]) == Listing((a, b), (tmp_path,), (b,))
    assert Listing().stop(a).stop(a) == Listing(stopped=(a,))
