"""Finding an agent's program on PATH: never in a relative or empty entry (the directory
ctxasm runs in, often the repository), and saying which entries were passed over."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from assembler import assemble
from assembler.clients.installed import installed_version
from assembler.discovery.programs import Found, absolute_path, on_path
from assembler.errors import RequestError
from tests.helpers.cli import ctxasm
from tests.helpers.trees import RELATIVE_PATH, build, git_init, plant_programs

PASSED_OVER = (
    'relative PATH entries not looked in ("", ".", "node_modules/.bin": they name the '
    "directory ctxasm runs in, which may be the repository's)"
)


def _real(bin_dir: Path, body: str = "echo '2.1.197 (Claude Code)'") -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    program = bin_dir / "claude"
    program.write_text(f"#!/bin/sh\n{body}\n")
    program.chmod(0o755)
    return program


def test_relative_entries_are_passed_over_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, marker = tmp_path / "repo", tmp_path / "marker"
    plant_programs(repo, marker)
    monkeypatch.chdir(repo)
    assert on_path("claude", RELATIVE_PATH) == Found(None, ("", ".", "node_modules/.bin"))
    real = _real(tmp_path / "bin")
    found = on_path("claude", f"{RELATIVE_PATH}:{tmp_path / 'bin'}:.")
    assert found == Found(str(real), ("", ".", "node_modules/.bin"))  # only those before it
    [note] = found.notes("claude")
    assert note.line() == (f"PATH: warning: {PASSED_OVER} looking for claude; ran {real} [CTX606]")
    assert on_path("claude", f"{tmp_path / 'bin'}:.") == Found(str(real), ())
    assert on_path("claude", f"{tmp_path / 'bin'}:.").notes("claude") == ()
    assert absolute_path(f"{RELATIVE_PATH}:{tmp_path / 'bin'}:") == str(tmp_path / "bin")
    assert not marker.exists()


def test_installed_never_runs_the_repositorys_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--client-version installed` with a PATH of relative entries, in a repository that
    holds its own `claude` (and its own `node`, which a real `claude` runs by name)."""
    repo, marker = tmp_path / "repo", tmp_path / "marker"
    plant_programs(repo, marker, ("claude", "node"))
    monkeypatch.chdir(repo)
    with pytest.raises(RequestError) as refused:
        installed_version("Claude Code", ("claude", "--version"), {"PATH": RELATIVE_PATH}, {})
    assert str(refused.value) == (
        f"claude: Claude Code is not installed (not on PATH; {PASSED_OVER}); pass "
        "--client-version with a modelled version (or latest)"
    )
    # The user's claude, after the relative entries, starts `node` by name as the real one
    # does (`#!/usr/bin/env node`): the repository's `./node` is not found either.
    real = _real(tmp_path / "bin", "node 2>/dev/null\necho '2.1.197 (Claude Code)'")
    environ = {"PATH": f"{RELATIVE_PATH}:{tmp_path / 'bin'}"}
    found = installed_version("Claude Code", ("claude", "--version"), environ, {})
    assert found.release == "2.1.197"
    assert [n.message for n in found.notes] == [f"{PASSED_OVER} looking for claude; ran {real}"]
    assert not marker.exists()


def _git_dir() -> str:
    git = shutil.which("git")
    assert git is not None, "the tests need git"
    return os.path.dirname(git)


def test_lint_and_the_environment_section_never_run_the_repositorys_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lint's git and `render --env`'s run in the repository: with `.` on PATH they ran the
    repository's own `./git` (and `./node_modules/.bin/git`)."""
    repo, marker = git_init(tmp_path / "repo"), tmp_path / "marker"
    build(repo, {"CLAUDE.md": "Use tabs.\n"})
    plant_programs(repo, marker, ("git",))
    monkeypatch.chdir(repo)
    path = f"{RELATIVE_PATH}:{_git_dir()}"
    environ = {"PATH": path}
    section = assemble(repo, environment=True, home=tmp_path / "h", managed_dir=tmp_path / "m",
                       environ=environ)  # fmt: skip
    assert "Status:\n?? CLAUDE.md\n?? git\n" in section.text  # the user's git answered
    linted = ctxasm(["lint", "--home", str(tmp_path / "h"), "--managed-dir", str(tmp_path / "m")],
                    env=environ)  # fmt: skip
    assert linted.exit_code == 0, linted.output
    assert not marker.exists()
