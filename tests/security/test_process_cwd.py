"""The process's own directory changes nothing (issue 22, item 16): the same tree, the same
arguments (absolute, or relative to where each run is started), the same findings.

The client resolves a relative path in its environment (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`,
`CLAUDE_CODE_REMOTE_MEMORY_DIR`) against its own process directory, which is the directory the
agent starts in: ctxasm resolves it against the run's cwd, never its own process directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.trees import ROOT, Link, build, git_init

pytestmark = pytest.mark.slow  # dozens of CLI processes


def _tree(tmp: Path) -> Path:
    """A project whose import through a symlinked directory leads into the home directory,
    with an ancestor linked there, a user file and memory in a config directory named
    relative to the project (CLAUDE_CONFIG_DIR=cfg), and Codex's home named likewise."""
    repo = git_init(tmp / "up" / "repo")
    build(
        tmp,
        {
            "home/secret.md": "home secret",
            "home/.ssh/id_rsa.md": "PRIVATE KEY",
            "up/CLAUDE.md": Link("../home/.ssh/id_rsa.md"),
            "up/repo/CLAUDE.md": "Project. @linked/secret.md @docs/guide.md",
            "up/repo/AGENTS.md": "Agents.",
            "up/repo/docs/guide.md": "the guide",
            "up/repo/linked": Link("../../home"),
            "up/repo/cfg/CLAUDE.md": "user file of the relative config directory",
            "up/repo/cfg/settings.json": json.dumps({"autoMemoryDirectory": "~/mem"}),
            "home/mem/MEMORY.md": "- memory",
            "up/repo/codex/AGENTS.md": "Codex global, relative CODEX_HOME.",
        },
    )
    return repo


_COMMANDS = (
    ("render",),
    ("render", "--format", "json"),
    ("render", "--policy", "codex"),
    ("explain", "--json", "--all"),
    ("cache", "--json"),
)


def _run(tmp: Path, at: Path, command: tuple[str, ...], project: str) -> tuple[int, str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp / "home"),
        "CLAUDE_CONFIG_DIR": "cfg",
        "CODEX_HOME": "codex",
        "PYTHONPATH": str(ROOT),
        "COLUMNS": "200",
    }
    managed = ("--managed-dir", os.path.relpath(tmp / "managed", at))
    done = subprocess.run(
        [sys.executable, "-m", "assembler", command[0], project, *command[1:], *managed],
        cwd=at,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


def test_every_command_finds_the_same_from_any_process_directory(tmp_path: Path) -> None:
    repo = _tree(tmp_path)
    (tmp_path / "managed").mkdir()
    places = (repo, repo / "docs", tmp_path / "up", tmp_path, tmp_path / "home", Path("/"))
    for command in _COMMANDS:
        inside = _run(tmp_path, repo, command, ".")
        assert inside[0] in (0, 1), inside[2]
        if "codex" not in command:  # the import into the home directory, and the ancestor
            assert "[CTX802]" in inside[2] or '"CTX802"' in inside[1], command
        for at in places:
            for project in (str(repo), os.path.relpath(repo, at)):
                assert _run(tmp_path, at, command, project) == inside, (command, at, project)


def test_lint_finds_the_same_from_any_process_directory(tmp_path: Path) -> None:
    """`lint --cwd`, and lint of files, shown relative to where lint runs: the same findings
    about the same files."""
    repo = _tree(tmp_path)
    (tmp_path / "managed").mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home")}
    found = set()
    args = ("lint", "--format", "json", "--cwd", str(repo), str(repo / "CLAUDE.md"))
    for at in (repo, tmp_path, Path("/")):
        done = subprocess.run(
            [sys.executable, "-m", "assembler", *args, "--managed-dir", str(tmp_path / "managed")],
            cwd=at,
            env={**env, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1, done.stderr
        findings = json.loads(done.stdout)
        # A start is named in a message as its path is shown: relative to where lint runs.
        start = f" {os.path.relpath(repo, at)}/"
        found.add(
            tuple(
                (
                    os.path.normpath(os.path.join(at, f["path"])),
                    f["code"],
                    f["message"].replace(start, " <the repository>/"),
                )
                for f in findings
            )
        )
    [one] = found
    assert {code for _, code, _ in one} >= {"CTX802"}
