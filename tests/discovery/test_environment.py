"""The environment section: last, after the boundary, with git's branch and a cut status."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

from assembler import Assembly, Layer, assemble
from assembler.discovery.environment import (
    MAX_STATUS_CHARS,
    TRUNCATION_NOTE,
    EnvironmentInfo,
    cut_status,
    environment_text,
)
from tests.helpers.trees import build, git_init

ENV = {"PATH": os.environ.get("PATH", os.defpath), "HOME": "/nonexistent"}


def _assemble(cwd: Path, tmp: Path) -> Assembly:
    return assemble(
        cwd, home=tmp / "home", managed_dir=tmp / "managed", environ=ENV, environment=True
    )


def test_the_environment_comes_last_after_the_boundary(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "feature/x"], check=True)
    build(
        tmp_path,
        {"managed/CLAUDE.md": "Managed.", "repo/CLAUDE.md": "Project.", "repo/new.txt": ""},
    )
    a = assemble(
        repo, home=tmp_path / "home", managed_dir=tmp_path / "managed", environ=ENV,
        environment=True, now=dt.datetime(2026, 3, 4, 9, 0),
    )  # fmt: skip
    assert a.sources[-1].layer is Layer.ENVIRONMENT
    static, _, dynamic = a.text.partition("__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__")
    assert str(repo) not in static
    assert dynamic.endswith(
        '<environment source="&lt;environment>">\n'
        f"Working directory: {repo}\n"
        "Is directory a git repo: Yes\n"
        f"Platform: {sys.platform}\n"
        "Today's date: 2026-03-04\n\n"
        "Current branch: feature/x\n\n"
        "Status:\n?? CLAUDE.md\n?? new.txt\n"
        "</environment>"
    )
    # Claude Code sends its own currentDate: the claude-code format is unchanged.
    assert "Working directory" not in a.render("claude-code")


def test_a_policy_cannot_move_the_environment_before_the_boundary(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/p.toml": 'extends = "claude-code"\n[render]\nstatic_layers = ["managed", "environment"]\n',
            "managed/CLAUDE.md": "Managed.",
        },
    )
    a = assemble(
        tmp_path / "repo", policy=tmp_path / "repo" / "p.toml", home=tmp_path / "home",
        managed_dir=tmp_path / "managed", environ=ENV, environment=True,
    )  # fmt: skip
    static, _, dynamic = a.text.partition("__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__")
    assert "<environment" not in static and "<environment" in dynamic


def test_outside_git_and_without_git(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    a = _assemble(tmp_path / "plain", tmp_path)
    text = a.sources[-1].content
    assert "Is directory a git repo: No" in text and "Current branch" not in text
    repo = git_init(tmp_path / "repo")
    no_git = assemble(
        repo, home=tmp_path / "home", managed_dir=tmp_path / "managed",
        environ={"PATH": str(tmp_path / "empty-bin")}, environment=True,
    )  # fmt: skip
    assert no_git.sources[-1].content.endswith(
        "Current branch: (unknown)\n\nStatus:\n(unknown: git failed)"
    )


def test_a_long_status_is_cut_at_2000_characters_with_the_clients_note(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    for i in range(120):
        (repo / f"untracked-file-with-a-long-name-{i:04d}.txt").write_text("x")
    a = _assemble(repo, tmp_path)
    status = a.sources[-1].content.split("Status:\n", 1)[1]
    assert status.endswith(TRUNCATION_NOTE)
    assert len(status) == MAX_STATUS_CHARS + len(TRUNCATION_NOTE)
    assert status.startswith("?? untracked-file-with-a-long-name-0000.txt\n")


def test_cut_status_and_clean_status() -> None:
    assert cut_status("x" * 2000) == "x" * 2000
    assert cut_status("é" * 2001) == "é" * 2000 + TRUNCATION_NOTE
    info = EnvironmentInfo("/w", "linux", "2026-01-01", True, "main", "")
    assert environment_text(info).endswith("Current branch: main\n\nStatus:\n(clean)")


def test_the_budget_drops_the_environment_first(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "Project rules."})
    a = assemble(
        tmp_path / "repo", home=tmp_path / "home", managed_dir=tmp_path / "managed",
        environ=ENV, environment=True, max_tokens=40,
    )  # fmt: skip
    assert [(s.layer.value, s.dropped) for s in a.sources] == [
        ("project", False),
        ("environment", True),
    ]
