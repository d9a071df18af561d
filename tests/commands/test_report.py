"""`ctxasm report`: where the page goes, what it prints, its errors and its exit codes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.cli import ctxasm
from tests.helpers.report_pages import Structure
from tests.helpers.trees import build, demo_tree, git_init


def _tree(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "# Root\n\nUse tabs.\n", "AGENTS.md": "# Agents\n\nUse tabs.\n"})
    (tmp_path / "home").mkdir()
    return repo, ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]


def test_without_out_the_page_goes_to_the_current_directory_and_the_path_is_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, machine = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    ran = ctxasm(["report", str(repo), *machine])
    assert (ran.exit_code, ran.stdout, ran.stderr) == (0, "ctxasm-report.html\n", "")
    Structure((tmp_path / "ctxasm-report.html").read_text(encoding="utf-8")).check()


def test_out_writes_there_and_the_exit_code_follows_the_findings(tmp_path: Path) -> None:
    tree = demo_tree(tmp_path)
    out = tmp_path / "page.html"
    ran = ctxasm(["report", *tree.args(), "--out", str(out)], env=tree.environ)
    # The demo's CLAUDE.local.md is not git-ignored: a lint error (CTX402), as `ctxasm lint`.
    assert (ran.exit_code, ran.stdout) == (1, f"{out}\n")
    assert "CTX402" in out.read_text(encoding="utf-8")


def test_a_link_the_repository_planted_is_not_written_through(tmp_path: Path) -> None:
    repo, machine = _tree(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    os.symlink(victim, repo / "report.html")
    ran = ctxasm(["report", str(repo), *machine, "--out", str(repo / "report.html")])
    assert ran.exit_code == 2 and "a link the repository may have planted" in ran.stderr
    assert victim.read_text() == "keep me"


def test_save_cache_then_against(tmp_path: Path) -> None:
    repo, machine = _tree(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    out = str(tmp_path / "page.html")
    assert ctxasm(["report", str(repo), *machine, "--out", out, "--save-cache", str(cache)])[0] == 0
    assert sorted(p.name for p in cache.iterdir()) == [
        "claude-code.json", "codex.json", "copilot.json", "cursor.json", "gemini.json",
    ]  # fmt: skip
    (repo / "AGENTS.md").write_text("# Agents\n\nUse spaces.\n")
    ran = ctxasm(["report", str(repo), *machine, "--out", out, "--against", str(cache)])
    assert ran.exit_code == 0
    page = Path(out).read_text(encoding="utf-8")
    assert "the first change is tier <strong>project</strong> (changed)" in page
    assert "no tier changed" in page  # Claude Code reads CLAUDE.md, which did not change


@pytest.mark.parametrize(
    ("option", "words"),
    [
        ("--against", "no such directory of snapshots; write one with"),
        ("--save-cache", "no such directory; create it for --save-cache"),
    ],
)
def test_a_missing_directory_is_one_line_and_exit_2(
    tmp_path: Path, option: str, words: str
) -> None:
    repo, machine = _tree(tmp_path)
    ran = ctxasm(["report", str(repo), *machine, option, str(tmp_path / "none"), "--out", "-"])
    assert ran.exit_code == 2 and words in ran.stderr and len(ran.stderr.splitlines()) == 1
    assert not (tmp_path / "-").exists()


def test_policy_is_no_option_every_agent_runs_its_own(tmp_path: Path) -> None:
    repo, machine = _tree(tmp_path)
    ran = ctxasm(["report", str(repo), *machine, "--policy", "codex"])
    assert ran.exit_code == 2 and "No such option '--policy'" in ran.stderr


def test_each_agent_is_named_with_the_release_modelled(tmp_path: Path) -> None:
    """Every agent's release is on the page (issue 27: "each with its modelled version");
    `--client-version latest` is every agent's newest model, and one release, which is one
    agent's, is a usage error in one line, as for `explain --policy all`."""
    repo, machine = _tree(tmp_path)
    out = tmp_path / "page.html"
    ran = ctxasm(["report", str(repo), *machine, "--out", str(out), "--client-version", "latest"])
    assert ran.exit_code == 0, ran.stderr
    page = out.read_text(encoding="utf-8")
    for line in (
        "Claude Code 2.1.332 <span",
        "Codex 0.171 <span",
        "Gemini CLI 0.61 <span",
        '<p class="muted">modelled at 2.1.332</p>',
        '<p class="muted">no particular release</p>',
    ):
        assert line in page
    one = ctxasm(["report", str(repo), *machine, "--out", str(out), "--client-version", "2.1.197"])
    assert one.exit_code == 2
    assert one.stderr.count("\n") == 1 and "a release is one agent's" in one.stderr


def test_exit_1_is_said_on_stderr(tmp_path: Path) -> None:
    """`report` exited 1 with nothing on stderr when lint found an error (issue 34)."""
    repo = git_init(tmp_path / "repo")
    (repo / "CLAUDE.md").write_text("key: sk-ant-api03-Zx8fQ2mK9vL4pR7tW1yB3nC6dE5gH0jA\n")
    (tmp_path / "home").mkdir()
    ran = ctxasm(["report", str(repo), "--home", str(tmp_path / "home"), "--managed-dir",
                  str(tmp_path / "m"), "--out", str(tmp_path / "page.html")])  # fmt: skip
    assert ran.exit_code == 1
    assert ran.stderr == "ctxasm: the page shows 1 lint error; `ctxasm lint` lists them\n"


def test_open_without_a_browser_says_so(tmp_path: Path) -> None:
    """`report --open` on a machine without a display did nothing and said nothing."""
    import subprocess
    import sys

    repo = git_init(tmp_path / "repo")
    (repo / "CLAUDE.md").write_text("Root.\n")
    (tmp_path / "home").mkdir()
    (tmp_path / "nothing").mkdir()  # PATH: no browser, no xdg-open; no DISPLAY either
    ran = subprocess.run(
        [sys.executable, "-m", "assembler", "report", str(repo), "--home", str(tmp_path / "home"),
         "--managed-dir", str(tmp_path / "m"), "--out", str(tmp_path / "page.html"), "--open"],
        capture_output=True, text=True, timeout=120, check=False,
        env={"PATH": str(tmp_path / "nothing"), "HOME": str(tmp_path / "home")},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "page.html").is_file()
    assert ran.stderr.endswith("where there is one\n") and "no browser" in ran.stderr
