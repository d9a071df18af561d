"""The git facts lint asks for: paths relative to the repository, and git's own listing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.lint.git import GitRepo
from tests.helpers.trees import build, git_init, tracked_index

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


# --- special files where git reads (issue 22, item 8) ---------------------------------------


def _committed(tmp_path: Path) -> Path:
    """A repository with two committed instruction files and an untracked directory."""
    repo_dir = git_init(tmp_path / "repo")
    build(repo_dir, {"CLAUDE.md": "Use tabs.\n", "sub/CLAUDE.md": "Sub.\n", "new/a.txt": "x\n"})
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    subprocess.run(["git", "-C", str(repo_dir), "add", "CLAUDE.md", "sub"], check=True, env=env)
    return repo_dir


def _plant(repo_dir: Path, place: str) -> str:
    """A FIFO where git reads; returns its path relative to the repository."""
    config = repo_dir / ".git" / "config"
    named = {
        "include": "[include]\n\tpath = ../evil\n",
        "includeIf": '[includeIf "gitdir:/"]\n\tpath = "../evil" ; a comment\n',
        "excludesFile": "[core]\n\texcludesFile = evil\n",
    }
    if place in named:
        with open(config, "a", encoding="utf-8") as f:
            f.write(named[place])
        rel = "evil"
    else:
        rel = place
    path = repo_dir / rel
    if os.path.lexists(path):
        os.unlink(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return rel


# Each place git opens before it answers: fixed places, refused before git runs, and
# `.gitignore`s only git's walk meets (new/, sub/), noticed while git waits on them.
GIT_PLACES = (
    ".gitignore",
    ".gitattributes",
    "sub/.gitignore",
    "new/.gitignore",
    ".git/info/exclude",
    ".git/index",
    ".git/HEAD",
    "include",
    "includeIf",
    "excludesFile",
)


@pytest.mark.parametrize("place", GIT_PLACES)
def test_a_fifo_where_git_reads_is_reported_not_waited_on(tmp_path: Path, place: str) -> None:
    repo_dir = _committed(tmp_path)
    rel = _plant(repo_dir, place)
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "assembler", "lint",
         "--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")],
        cwd=repo_dir, capture_output=True, text=True, timeout=50,
        env={**os.environ, "HOME": str(tmp_path)}, check=False,
    )  # fmt: skip
    took = time.monotonic() - started
    assert took < 45, f"lint waited {took:.1f} s on a FIFO at {place}"  # a FIFO waits forever
    assert result.returncode == 1, result.stdout + result.stderr
    unlisted = [line for line in result.stdout.splitlines() if " CTX009 " in line]
    assert len(unlisted) == 1, result.stdout
    fixed = place not in ("sub/.gitignore", "new/.gitignore")
    assert unlisted[0].startswith(f"{rel}:1:1: error CTX009 " if fixed else ".:1:1: error CTX009 ")
    assert "could not list the repository" in unlisted[0]
    # The files are still checked (found by a walk).
    assert "2 files checked" in result.stderr or "CLAUDE.md" in result.stdout, result.stderr


def test_a_repository_whose_git_failed_asks_git_nothing_more(tmp_path: Path) -> None:
    repo_dir = _committed(tmp_path)
    _plant(repo_dir, "new/.gitignore")
    repo = GitRepo(repo_dir)
    repo.walk([":(glob)**/CLAUDE.local.md"])
    started = time.monotonic()
    assert repo.walked() == ([], [])
    assert repo.failure is not None and "FIFO" in repo.failure.why
    assert not repo.is_ignored(repo_dir / "CLAUDE.local.md")  # no git run: no wait
    assert time.monotonic() - started < 45  # a guard against a wait on the FIFO, not a timing
    repo.close()


# --- a huge index (issue 22, item 9) -------------------------------------------------------


def test_a_listing_is_read_as_git_writes_it_and_stops_at_its_cap(tmp_path: Path) -> None:
    tracked_index(tmp_path / "repo", 5_000)
    repo = GitRepo(tmp_path / "repo", max_listed=1_000)
    repo.prefetch()
    tracked = repo.tracked()
    assert len(tracked) == 1_000 and "p0000000/CLAUDE.md" in tracked
    assert not repo.complete and repo.failure is None
    repo.close()
    whole = GitRepo(tmp_path / "repo")
    assert len(whole.tracked()) == 5_000 and whole.complete  # without a prefetch, the same


# --- one way to run git (issue 23, item 4) -------------------------------------------------


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads /proc")
def test_every_git_run_reads_nothing_of_the_callers_input(tmp_path: Path) -> None:
    """Each git lint starts (the prefetched listing, the walks, `check-ignore`) runs the one
    way: its input is /dev/null or a pipe lint writes, never the standard input of whoever
    ran lint (a terminal git could wait on, or a pre-commit hook's pipe)."""
    repo_dir = _committed(tmp_path)
    build(repo_dir, {"CLAUDE.local.md": "mine\n"})  # asks `git check-ignore`
    log = tmp_path / "git.log"
    shim = build(tmp_path / "bin", {"git": ""}) / "git"
    real_git = shutil.which("git")
    assert real_git is not None
    shim.write_text(
        f'#!/bin/sh\necho "$(readlink /proc/$$/fd/0) $*" >> {log}\nexec {real_git} "$@"\n',
        encoding="utf-8",
    )
    shim.chmod(0o755)
    caller_input = build(tmp_path, {"caller-input.txt": "x\n"}) / "caller-input.txt"
    with caller_input.open("rb") as stdin:
        result = subprocess.run(
            [sys.executable, "-m", "assembler", "lint",
             "--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")],
            cwd=repo_dir, stdin=stdin, capture_output=True, text=True, timeout=60,
            env={**os.environ, "HOME": str(tmp_path), "PATH": f"{shim.parent}:{os.environ['PATH']}"},
            check=False,
        )  # fmt: skip
    assert "CTX" in result.stdout, result.stderr
    runs = log.read_text(encoding="utf-8").splitlines()
    assert any("ls-files -z --cached" in run for run in runs), runs  # the prefetch
    assert any("check-ignore" in run for run in runs), runs
    for run in runs:
        assert run.startswith(("/dev/null ", "pipe:")), runs


def test_a_repositorys_core_worktree_does_not_move_what_git_lists(tmp_path: Path) -> None:
    """A repository that ships its own `.git` (a tarball, not a clone) sets `core.worktree`
    to a directory outside it: git would list that directory's files, and lint would name
    them. Lint's git lists the repository it was asked about."""
    repo_dir = git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "Mine.\n", "elsewhere/secret/CLAUDE.md": "Not yours.\n"})
    subprocess.run(
        ["git", "-C", str(repo_dir), "config", "core.worktree", str(tmp_path / "elsewhere")],
        check=True,
    )
    repo = GitRepo(repo_dir)
    repo.walk([":(glob)**/CLAUDE.local.md"])
    untracked, ignored = repo.walked()
    assert (untracked, ignored) == (["CLAUDE.md"], [])
    repo.close()
