"""The shipped hook, run by the real `pre-commit` against a temporary repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assembler.lint.files import instruction_files_pattern
from tests.helpers.trees import ROOT, git_init

pytestmark = [
    pytest.mark.slow,  # the real pre-commit installs the hook into its own environment
    pytest.mark.skipif(
        not (ROOT / ".git").exists(), reason="try-repo needs this checkout to be a git repository"
    ),
]


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    # The hook's own environment is cached across the two runs; HOME keeps the real
    # ~/.claude out of the hook's context checks.
    env.update(PRE_COMMIT_HOME=str(tmp / "pre-commit-home"), HOME=str(tmp / "home"))
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    return env


def _try_repo(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "try-repo",
            str(ROOT),
            "ctxasm-lint",
            "--all-files",
            "--color",
            "never",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_hook_fails_on_a_long_claude_md_and_passes_when_clean(tmp_path: Path) -> None:
    env = _env(tmp_path)
    repo = git_init(tmp_path / "target")
    secret = "key: sk-ant-api03-Zx8fQ2mK9vL4pR7tW1yB3nC6dE5gH0jA\n"
    (repo / "CLAUDE.md").write_text(secret + "".join(f"- rule {i}\n" for i in range(250)))
    (repo / "notes.md").write_text("".join(f"- not an instruction file {i}\n" for i in range(300)))
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    failing = _try_repo(repo, env)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "CLAUDE.md:1:6: error CTX501 " in failing.stdout  # an error fails the hook
    assert "CLAUDE.md:201:1: warning CTX101 251 lines, over the 200-line limit" in failing.stdout
    assert "notes.md" not in failing.stdout

    (repo / "CLAUDE.md").write_text("".join(f"- rule {i}\n" for i in range(250)))
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    warned = _try_repo(repo, env)  # a warning alone is shown, and passes (--strict fails it)
    assert warned.returncode == 0, warned.stdout + warned.stderr
    assert "warning CTX101 250 lines" in warned.stdout

    (repo / "CLAUDE.md").write_text("".join(f"- rule {i}\n" for i in range(20)))
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    passing = _try_repo(repo, env)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "ctxasm lint" in passing.stdout and "Passed" in passing.stdout


def test_the_hook_definition_covers_exactly_the_instruction_files() -> None:
    import re

    import yaml

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (local,) = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"]
    assert (hook["id"], hook["entry"], hook["language"]) == ("ctxasm-lint", "ctxasm lint", "python")
    assert hook["files"] == local["files"] == instruction_files_pattern()  # the registry's
    pattern = re.compile(hook["files"])
    matched = [
        "CLAUDE.md",
        "a/b/CLAUDE.local.md",
        ".claude/CLAUDE.md",
        "x/.claude/rules/deep/style.md",
        "memory/MEMORY.md",
        "AGENTS.md",
        "AGENTS.override.md",
        "pkg/GEMINI.md",
        "pkg/.gemini/settings.json",
        ".claude/rules/x.txt",  # not read by the client: lint says so (CTX403)
        ".cursorrules",
        "web/.cursor/rules/react.mdc",
        ".cursor/rules/notes.md",
        ".github/copilot-instructions.md",
        ".github/instructions/py/style.instructions.md",
    ]
    ignored = [
        "README.md",
        "docs/claude.md",
        ".claude/settings.json",
        "MYCLAUDE.md",
        ".github/instructions/style.md",
        "docs/copilot-instructions.md",
    ]
    assert [p for p in matched if pattern.search(p)] == matched
    assert [p for p in ignored if pattern.search(p)] == []


@pytest.mark.skipif(
    not (ROOT / ".venv" / "bin" / "ctxasm").exists(), reason="the local hook runs .venv/bin/ctxasm"
)
def test_this_repository_passes_its_own_hook(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "run",
            "ctxasm-lint",
            "--all-files",
            "--color",
            "never",
        ],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ctxasm lint" in result.stdout
