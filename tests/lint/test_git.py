"""The git facts lint asks for: paths relative to the repository, and git's own listing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.lint.git import GitRepo
from tests.helpers.trees import build, git_init

_PARTS = st.lists(st.sampled_from(["a", "b", "ab", "..", ".", "a.md"]), max_size=4)


@settings(max_examples=300, deadline=None)
@given(_PARTS, _PARTS)
def test_relative_is_what_path_relative_to_says(root: list[str], path: list[str]) -> None:
    repo = GitRepo(Path(os.path.normpath("/" + "/".join(root))))
    target = "/" + "/".join(path)
    try:
        expected: str | None = Path(os.path.abspath(target)).relative_to(repo.root).as_posix()
    except ValueError:
        expected = None
    assert repo.relative(Path(target)) == expected


def test_the_walks_list_untracked_and_ignored_files(tmp_path: Path) -> None:
    repo_dir = git_init(tmp_path / "repo")
    build(
        repo_dir,
        {
            ".gitignore": "CLAUDE.local.md\n",
            "CLAUDE.md": "tracked\n",
            "new/CLAUDE.md": "untracked\n",
            "CLAUDE.local.md": "ignored\n",
        },
    )
    subprocess.run(["git", "-C", str(repo_dir), "add", "CLAUDE.md", ".gitignore"], check=True)
    repo = GitRepo(repo_dir)
    repo.walk([":(glob)**/CLAUDE.local.md"])
    assert repo.walked() == (["new/CLAUDE.md"], ["CLAUDE.local.md"])
    assert repo.tracked() == {".gitignore", "CLAUDE.md"}
    assert repo.walked() == ([], [])  # collected once; nothing started since
    repo.close()
