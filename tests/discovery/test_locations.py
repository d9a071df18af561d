"""Real paths and containment as the client computes them, at a fraction of the cost."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.discovery.disk import Disk
from assembler.discovery.locations import RealDirs, canonical_git_root, is_within
from tests.helpers.trees import Link, build


def test_real_dirs_realpath_is_os_realpath(tmp_path: Path) -> None:
    """One `lstat` per new directory and one for the file: the same answers as `realpath`,
    through linked directories and files, for missing paths and relative parts."""
    root = Path(os.path.realpath(tmp_path))
    build(
        root,
        {
            "a/b/file.md": "x",
            "a/link-to-b": Link("b"),
            "a/b/file-link.md": Link("file.md"),
            "a/b/loop.md": Link("loop.md"),
            "outside/c.md": "y",
            "a/out": Link("../outside"),
        },
    )
    reals = RealDirs()
    for rel in (
        "a/b/file.md", "a/link-to-b/file.md", "a/link-to-b/file-link.md", "a/b/loop.md",
        "a/out/c.md", "a/out/missing.md", "a/missing/x.md", "a/b/../b/file.md", "a/b/.",
        "a/link-to-b/..", "a", "a/./b/file.md", "a/b/./file-link.md",
    ):  # fmt: skip
        path = str(root / rel)
        assert reals.realpath(path) == os.path.realpath(path), rel
    assert reals.realpath("relative/x.md") == os.path.realpath("relative/x.md")
    doubled = "/" + str(root / "a/b/file.md")  # POSIX keeps a leading `//`; realpath does not
    assert reals.realpath(doubled) == os.path.realpath(doubled)


_SEGMENTS = st.sampled_from(["a", "A", "b", "..", ".", "ab", "a.b", "", "x\\..", "\\..\\a"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_SEGMENTS, max_size=5), st.lists(_SEGMENTS, max_size=5))
def test_is_within_of_absolute_paths_is_the_clients_relative_path_test(
    path: list[str], directory: list[str]
) -> None:
    """The shortcut for absolute paths gives what `pathInWorkingPath`'s `relative()` does."""
    a, b = "/" + "/".join(path), "/" + "/".join(directory)
    rel = os.path.relpath(os.path.normpath(a).lower(), os.path.normpath(b).lower())
    up = re.search(r"(?:^|[\\/])\.\.(?:[\\/]|$)", rel)  # the client's: `\` separates too
    expected = rel == "." or up is None
    assert is_within(a, b) == expected


def test_a_worktrees_relative_back_link_is_read_from_its_git_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git 2.48+ can write a linked worktree's pointers relative (`worktree.useRelativePaths`):
    `.git/worktrees/wt/gitdir` then names the worktree's `.git` relative to that directory.
    The main repository is found the same from any process directory (issue 22, item 16)."""
    main, wt = tmp_path / "main", tmp_path / "wt"
    meta = main / ".git" / "worktrees" / "wt"
    meta.mkdir(parents=True)
    (meta / "commondir").write_text("../..\n")
    (meta / "gitdir").write_text("../../../../wt/.git\n")
    wt.mkdir()
    (wt / ".git").write_text("gitdir: ../main/.git/worktrees/wt\n")
    for directory in (tmp_path, meta, Path("/")):
        monkeypatch.chdir(directory)
        assert canonical_git_root(wt, Disk()) == main
