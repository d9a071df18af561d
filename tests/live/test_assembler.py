"""The incremental `Assembler`: the same result as `assemble()`, and only `stat` calls when
nothing changed; a change anywhere a source is or could appear is seen on the next call."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assembler import Assembler, assemble
from assembler.discovery.cache import FRESH_NS, FRESH_WHOLE_SECONDS_NS, settled
from tests.helpers.changes import CHANGES, apply_change
from tests.helpers.trees import build, git_init, machine

# --- what the library opens or lists, while `_CALLS` is not None --------------------------

_CALLS: list[tuple[str, str]] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _CALLS is None or event not in ("open", "os.scandir", "os.listdir") or not args:
        return
    path = args[0]
    if isinstance(path, (str, bytes, os.PathLike)):
        _CALLS.append((event, os.path.abspath(os.fsdecode(path))))


sys.addaudithook(_audit)


def calls(fn: Any) -> tuple[Any, list[tuple[str, str]]]:
    """`fn()`, and every file opened and directory listed meanwhile."""
    global _CALLS
    _CALLS = []
    try:
        result = fn()
        return result, _CALLS
    finally:
        _CALLS = None


def project(tmp_path: Path) -> Path:
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "managed/CLAUDE.md": "Managed.",
            "home/.claude/CLAUDE.md": "User.",
            "home/.claude/rules/git.md": "Git rule.",
            "repo/CLAUDE.md": "Root. @docs/guide.md",
            "repo/docs/guide.md": "Guide.",
            "repo/.claude/rules/style.md": "Style.",
            "repo/.claude/rules/ts.md": '---\npaths: "src/**"\n---\nTS.',
            "repo/src/app.ts": "",
            "repo/src/CLAUDE.md": "Sources.",
        },
    )
    return repo


def settle(asm: Assembler, touched: tuple[Path, ...] = ()) -> Any:
    """Call until a call is answered by `stat` alone: the files were just written, and a
    signature younger than the filesystem's clock granularity proves nothing."""
    deadline = time.monotonic() + 10
    before = asm.reuses
    while asm.reuses == before:
        assert time.monotonic() < deadline, "never settled"
        result = asm.assemble(touched)
    return result


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    yield project(tmp_path)


def texts(assembly: Any) -> list[tuple[str, str]]:
    return [(s.display, s.content) for s in assembly.sources]


def test_the_result_is_what_assemble_gives(tmp_path: Path, repo: Path) -> None:
    touched = (repo / "src" / "app.ts",)
    asm = Assembler(repo, **machine(tmp_path))
    for t in ((), touched):
        got = asm.assemble(t)
        fresh = assemble(repo, touched=t, **machine(tmp_path))
        assert got.render("xml") == fresh.render("xml")
        assert got.render("json") == fresh.render("json")
        assert got.diagnostics == fresh.diagnostics


def test_nothing_changed_costs_only_stat_calls(tmp_path: Path, repo: Path) -> None:
    asm = Assembler(repo, **machine(tmp_path))
    first = settle(asm)
    runs = asm.runs
    again, seen = calls(asm.assemble)
    assert again is first
    assert seen == []  # no file opened, no directory listed
    assert (asm.runs, asm.reuses) == (runs, 2)


def test_a_fresh_signature_is_not_trusted(tmp_path: Path, repo: Path) -> None:
    asm = Assembler(repo, **machine(tmp_path))
    (repo / "CLAUDE.md").write_text("Root, just written.")
    asm.assemble()
    asm.assemble()
    assert (asm.runs, asm.reuses) == (2, 0)  # the first run's signatures were too young


def test_settled_needs_times_older_than_the_clock_granularity() -> None:
    now = 10_000_000_000_000
    fine = (now - FRESH_NS - 1, 5, 1, 1, now - FRESH_NS - 1)
    assert settled(fine, now)
    assert not settled((fine[0], 5, 1, 1, now - FRESH_NS + 1), now)  # ctime too recent
    assert not settled((now, 5, 1, 1, fine[4]), now)  # mtime in the window (ctime = birth)
    whole = now - FRESH_NS * 2 - (now - FRESH_NS * 2) % 1_000_000_000  # whole seconds only
    assert not settled((whole, 5, 1, 1, whole), now)
    assert settled((whole, 5, 1, 1, whole), whole + FRESH_WHOLE_SECONDS_NS)
    assert settled(2, now)  # ENOENT: a missing file's "signature" is its absence


def test_only_the_changed_file_is_read_again(tmp_path: Path, repo: Path) -> None:
    asm = Assembler(repo, **machine(tmp_path))
    settle(asm)
    (repo / "docs" / "guide.md").write_text("Guide, second edition.")
    result, seen = calls(asm.assemble)
    assert ("docs/guide.md", "Guide, second edition.") in texts(result)
    opened = [p for event, p in seen if event == "open" and p.endswith(".md")]
    assert opened == [str(repo / "docs" / "guide.md")]


@pytest.mark.parametrize("change", CHANGES)
def test_every_kind_of_change_is_seen(tmp_path: Path, repo: Path, change: str) -> None:
    cwd = repo / "src"
    asm = Assembler(cwd, **machine(tmp_path))
    before = settle(asm)
    apply_change(change, tmp_path, repo, cwd, before, lambda: settle(asm))
    after = asm.assemble()
    fresh = assemble(cwd, **machine(tmp_path))
    assert after.render("json") == fresh.render("json")
    assert after.render("xml") != before.render("xml")


def test_a_failed_run_is_not_cached_and_says_what_it_depended_on(
    tmp_path: Path, repo: Path
) -> None:
    asm = Assembler(repo, **machine(tmp_path))
    asm.assemble()
    (repo / ".ctxasm.toml").write_text("nonsense = 1\n")
    with pytest.raises(Exception, match="unknown key 'nonsense'"):
        asm.assemble()
    assert str(repo / ".ctxasm.toml") in asm.dependencies.paths
    (repo / ".ctxasm.toml").unlink()
    assert texts(asm.assemble()) == texts(assemble(repo, **machine(tmp_path)))


def test_touched_sets_are_kept_apart(tmp_path: Path, repo: Path) -> None:
    asm = Assembler(repo, **machine(tmp_path))
    plain = asm.assemble()
    touched = asm.assemble([repo / "src" / "app.ts"])
    assert [s.display for s in touched.attached(plain)] == ["src/CLAUDE.md", ".claude/rules/ts.md"]
    settle(asm)
    settle(asm, (repo / "src" / "app.ts",))
    assert asm.assemble() is asm.assemble()
    assert asm.assemble([repo / "src" / "app.ts"]).touched == ("src/app.ts",)


def test_dependencies_cover_candidates_found_or_not(tmp_path: Path, repo: Path) -> None:
    asm = Assembler(repo / "src", **machine(tmp_path))
    asm.assemble()
    deps = set(asm.dependencies.paths)
    for path in (
        repo / "CLAUDE.md",  # a source
        repo / "docs" / "guide.md",  # an import (external to cwd: its change is still seen)
        repo / "src" / "CLAUDE.local.md",  # missing: its creation must be seen
        repo / ".claude" / "rules",
        tmp_path / "home" / ".claude" / "settings.json",
        tmp_path / "home" / ".claude.json",
        repo / ".git",
        repo / "src" / ".git",
        repo / ".ctxasm.toml",
    ):
        assert str(path) in deps, path
    assert str(repo / ".claude" / "rules") in asm.dependencies.listed
    assert not any(p.startswith(str(repo / "docs") + os.sep + "x") for p in deps)


def test_new_files_that_cannot_matter_cost_no_run(tmp_path: Path, repo: Path) -> None:
    """A directory that was only looked at (cwd, `.git`) counts by its identity: a log file in
    cwd, or git writing inside `.git`, is no change; a new candidate in cwd still is."""
    cwd = repo / "src"
    asm = Assembler(cwd, **machine(tmp_path))
    first = settle(asm)
    runs = asm.runs
    (cwd / "build.log").write_text("log")
    (repo / ".git" / "index.lock").write_text("")
    (repo / ".git" / "index.lock").unlink()
    assert asm.assemble() is first and asm.runs == runs
    (cwd / "CLAUDE.local.md").write_text("Mine.")
    assert "Mine." in asm.assemble().text and asm.runs == runs + 1


def test_a_retargeted_policy_link_is_seen(tmp_path: Path, repo: Path) -> None:
    build(
        tmp_path,
        {
            "repo/cfg/one.toml": 'extends = "claude-code"\n[render]\nboundary = "ONE"\n',
            "repo/cfg/two.toml": 'extends = "claude-code"\n[render]\nboundary = "TWO"\n',
        },
    )
    (repo / "cfg" / "policy.toml").symlink_to("one.toml")
    asm = Assembler(repo, policy=repo / "cfg" / "policy.toml", **machine(tmp_path))
    assert "ONE" in settle(asm).text
    (repo / "cfg" / "policy.toml").unlink()
    (repo / "cfg" / "policy.toml").symlink_to("two.toml")
    assert "TWO" in asm.assemble().text


def test_a_retargeted_touched_link_is_seen(tmp_path: Path, repo: Path) -> None:
    build(
        tmp_path,
        {
            "repo/a/x.ts": "",
            "repo/a/CLAUDE.md": "In a.",
            "repo/b/x.ts": "",
            "repo/b/CLAUDE.md": "In b.",
        },
    )
    (repo / "cur").symlink_to("a")
    touched = (repo / "cur" / "x.ts",)
    asm = Assembler(repo, **machine(tmp_path))
    assert "In a." in settle(asm, touched).text
    (repo / "cur").unlink()
    (repo / "cur").symlink_to("b")
    again = asm.assemble(touched)
    assert "In b." in again.text and "In a." not in again.text


def test_a_subagents_context_follows_its_definition(tmp_path: Path) -> None:
    """`Assembler(subagent=...)`: an edit to the custom agent's file is heard like an edit to
    an instruction file (its `tools:` now leave out the Skill tool: no skills list)."""
    repo = git_init(tmp_path / "repo")
    agent = repo / ".claude" / "agents" / "rev.md"
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "Root.",
            "repo/.claude/skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nx",
            "repo/.claude/agents/rev.md": "---\nname: rev\ndescription: d\n---\nx",
        },
    )
    asm = Assembler(repo, subagent="rev", **machine(tmp_path))
    assert settle(asm).agent.skills
    agent.write_text("---\nname: rev\ndescription: d\ntools: Read\n---\nx")
    after = asm.assemble()
    assert after.agent is not None and not after.agent.skills
    assert after == assemble(repo, subagent="rev", **machine(tmp_path))
