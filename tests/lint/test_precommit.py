"""The shipped hook, run by the real `pre-commit` against a temporary repository."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from assembler.lint.files import instruction_files_pattern
from tests.helpers.checkout import git, git_env, snapshot
from tests.helpers.trees import ROOT, git_init

pytestmark = [
    pytest.mark.slow,  # the real pre-commit installs the hook into its own environment
    pytest.mark.skipif(
        not (ROOT / ".git").exists(), reason="try-repo needs this checkout to be a git repository"
    ),
]


def _env(tmp: Path) -> dict[str, str]:
    # The hook's own environment is cached across the runs of a test; HOME keeps the real
    # ~/.claude out of the hook's context checks.
    return {**git_env(tmp / "home"), "PRE_COMMIT_HOME": str(tmp / "pre-commit-home")}


def _pre_commit(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def _try_repo(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _pre_commit(
        repo, env, "try-repo", str(ROOT), "ctxasm-lint", "--all-files", "--color", "never"
    )


def _readme_snippet() -> dict[str, Any]:
    """The `.pre-commit-config.yaml` the README tells a user to write."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Pre-commit hook") :]
    (block,) = re.findall(r"```yaml\n(.*?)```", section[: section.index("\n## ")], re.DOTALL)
    config: dict[str, Any] = yaml.safe_load(block)
    return config


def _commit(
    repo: Path, env: dict[str, str], files: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """`git commit` of `files` (written, and staged) through the installed hook."""
    for rel, text in files.items():
        (repo / rel).write_text(text, encoding="utf-8")
        git(repo, env, "add", rel)
    return subprocess.run(
        ["git", "-C", str(repo), "commit", "-m", "change"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_the_readme_hook_blocks_a_commit_of_a_long_claude_md_until_the_repository_relaxes_it(
    tmp_path: Path,
) -> None:
    env = _env(tmp_path)
    # The README's local hook runs the installed `ctxasm`: this checkout's, first on PATH.
    env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), env["PATH"]))
    config = _readme_snippet()  # as written: nothing to fill in
    (entry,) = config["repos"]
    assert entry["repo"] == "local"
    assert [hook["id"] for hook in entry["hooks"]] == ["ctxasm-lint"]
    repo = git_init(tmp_path / "target")
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    git(repo, env, "add", ".pre-commit-config.yaml")
    git(repo, env, "commit", "-q", "-m", "hook")
    installed = _pre_commit(repo, env, "install")
    assert installed.returncode == 0, installed.stdout + installed.stderr

    long = "".join(f"- rule {i}\n" for i in range(250))
    blocked = _commit(repo, env, {"CLAUDE.md": long})
    shown = blocked.stdout + blocked.stderr
    assert blocked.returncode == 1, shown
    assert "CLAUDE.md:201:1: error CTX101 250 lines, over the 200-line limit: " in shown
    assert "relax the code in [lint.severity] or with --no-size-errors" in shown
    assert git(repo, env, "rev-list", "--count", "HEAD") == "1"  # nothing was committed

    relaxed = _commit(repo, env, {".ctxasm.toml": '[lint.severity]\nCTX101 = "warning"\n'})
    assert relaxed.returncode == 0, relaxed.stdout + relaxed.stderr
    assert "CLAUDE.md:201:1: warning CTX101 250 lines" in relaxed.stdout + relaxed.stderr
    assert git(repo, env, "ls-files") == ".ctxasm.toml\n.pre-commit-config.yaml\nCLAUDE.md"

    git(repo, env, "rm", "-q", ".ctxasm.toml")
    blocked = _commit(repo, env, {"CLAUDE.md": long + "- one more\n"})
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    entry["hooks"][0]["args"] = ["--no-size-errors"]  # the README's commented-out line
    with_args = {".pre-commit-config.yaml": yaml.safe_dump(config)}
    passed = _commit(repo, env, with_args)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "warning CTX101 251 lines" in passed.stdout + passed.stderr

    secret = "key: sk-ant-api03-Zx8fQ2mK9vL4pR7tW1yB3nC6dE5gH0jA\n"
    still = _commit(repo, env, {"CLAUDE.md": secret})  # relaxing sizes relaxes nothing else
    assert still.returncode == 1, still.stdout + still.stderr
    assert "CLAUDE.md:1:6: error CTX501 " in still.stdout + still.stderr


def test_pre_commit_autoupdate_freeze_moves_rev_to_the_newest_commit_hash(tmp_path: Path) -> None:
    env = _env(tmp_path)
    upstream = tmp_path / "ctxasm"
    old = snapshot(upstream, env)
    (upstream / "NEWS").write_text("a later commit\n")
    git(upstream, env, "add", "NEWS")
    git(upstream, env, "commit", "-q", "-m", "later")
    new = git(upstream, env, "rev-parse", "HEAD")
    config = _readme_snippet()
    config["repos"][0].update(repo=str(upstream), rev=old)
    repo = git_init(tmp_path / "target")
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    updated = _pre_commit(repo, env, "autoupdate", "--freeze")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    after = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert after["repos"][0]["rev"] == new


def test_hook_shows_warnings_and_passes_when_clean(tmp_path: Path) -> None:
    env = _env(tmp_path)
    repo = git_init(tmp_path / "target")
    (repo / "CLAUDE.md").write_text("See @gone.md\n" + "".join(f"- rule {i}\n" for i in range(20)))
    (repo / "notes.md").write_text("".join(f"- not an instruction file {i}\n" for i in range(300)))
    git(repo, env, "add", "-A")
    warned = _try_repo(repo, env)  # a warning that is not about size is shown, and passes
    assert warned.returncode == 0, warned.stdout + warned.stderr
    assert "CLAUDE.md:1:5: warning CTX201 " in warned.stdout
    assert "notes.md" not in warned.stdout

    (repo / "CLAUDE.md").write_text("".join(f"- rule {i}\n" for i in range(20)))
    git(repo, env, "add", "-A")
    passing = _try_repo(repo, env)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "ctxasm lint" in passing.stdout and "Passed" in passing.stdout


def test_the_hook_definition_covers_exactly_the_instruction_files() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hooks = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"]
    (local,) = [h for h in hooks if h["id"] == "ctxasm-lint"]  # beside ruff and mypy
    assert (hook["id"], hook["language"]) == ("ctxasm-lint", "python")
    # An oversized file fails the commit by default; `args:` follow the entry, so a
    # repository's `args: [--no-size-errors]` undoes it and its other args keep it.
    assert hook["entry"] == "ctxasm lint --size-errors"
    assert local["entry"] == ".venv/bin/ctxasm lint --size-errors"
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
