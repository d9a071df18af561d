"""The claude-code discoverer, one test per fact of SPEC section 4 (layers, order, files)."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from assembler import Layer, Why
from assembler.clients.claude_code import CLIENT
from assembler.clients.claude_code.settings import slug
from assembler.discovery.context import Run
from assembler.discovery.disk import Disk
from assembler.tokens import estimate_tokens
from tests.helpers.trees import Link, build, codes, git_init, listing, run


def test_every_layer_in_the_clients_order(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "managed/CLAUDE.md": "managed file",
            "managed/managed-settings.json": json.dumps({"claudeMd": "inline managed"}),
            "managed/.claude/rules/m.md": "managed rule",
            "home/.claude/CLAUDE.md": "user file",
            "home/.claude/rules/u.md": "user rule",
            "repo/CLAUDE.md": "root file",
            "repo/.claude/CLAUDE.md": "root dot-claude file",
            "repo/.claude/rules/r.md": "root rule",
            "repo/CLAUDE.local.md": "root local",
            "repo/.claude/CLAUDE.local.md": "never loaded",
            "repo/pkg/CLAUDE.md": "pkg file",
            "repo/pkg/CLAUDE.local.md": "pkg local",
            f"home/.claude/projects/{slug(tmp_path / 'repo')}/memory/MEMORY.md": "memory",
        },
    )
    m = f"{tmp_path}/managed"
    assert listing(run(tmp_path, "repo/pkg")) == [
        ("managed", f"{m}/CLAUDE.md", "managed policy file"),
        ("managed", "<managed-settings>", "claudeMd in managed-settings.json"),
        ("managed", f"{m}/.claude/rules/m.md", f"rule in {m}/.claude/rules"),
        ("user", "~/.claude/CLAUDE.md", "user instructions"),
        ("user", "~/.claude/rules/u.md", "rule in ~/.claude/rules"),
        ("project", "CLAUDE.md", "ancestor of cwd"),
        ("project", ".claude/CLAUDE.md", "ancestor of cwd"),
        ("project", ".claude/rules/r.md", "rule in .claude/rules"),
        ("local", "CLAUDE.local.md", "ancestor of cwd"),
        ("project", "pkg/CLAUDE.md", "in cwd"),
        ("local", "pkg/CLAUDE.local.md", "in cwd"),
        (
            "memory",
            f"~/.claude/projects/{slug(tmp_path / 'repo')}/memory/MEMORY.md",
            "auto memory index of the project",
        ),
    ]


def test_ancestors_above_the_git_root_are_loaded(tmp_path: Path) -> None:
    git_init(tmp_path / "work" / "repo")
    build(tmp_path, {"CLAUDE.md": "top", "work/CLAUDE.md": "work", "work/repo/CLAUDE.md": "repo"})
    assert [(d, r) for _, d, r in listing(run(tmp_path, "work/repo"))] == [
        ("../../CLAUDE.md", "ancestor of cwd"),
        ("../CLAUDE.md", "ancestor of cwd"),
        ("CLAUDE.md", "in cwd"),
    ]


def test_nested_git_repository_is_its_own_project_root(tmp_path: Path) -> None:
    git_init(tmp_path / "outer")
    git_init(tmp_path / "outer" / "vendor" / "inner")
    build(tmp_path, {"outer/CLAUDE.md": "outer", "outer/vendor/inner/CLAUDE.md": "inner"})
    a = run(tmp_path, "outer/vendor/inner")
    assert a.context.project_root == tmp_path / "outer" / "vendor" / "inner"
    assert [d for _, d, _ in listing(a)] == ["../../CLAUDE.md", "CLAUDE.md"]


def test_outside_git_the_project_root_and_memory_slug_are_the_cwd(tmp_path: Path) -> None:
    cwd = tmp_path / "plain"
    build(
        tmp_path,
        {"plain/CLAUDE.md": "x", f"home/.claude/projects/{slug(cwd)}/memory/MEMORY.md": "mem"},
    )
    a = run(tmp_path, "plain")
    assert a.context.git_root is None
    assert [s.layer for s in a.sources] == [Layer.PROJECT, Layer.MEMORY]


def test_home_claude_md_is_an_ancestor_file_not_a_user_file(tmp_path: Path) -> None:
    build(tmp_path, {"home/CLAUDE.md": "home root file", "home/proj/CLAUDE.md": "proj"})
    git_init(tmp_path / "home" / "proj")
    assert listing(run(tmp_path, "home/proj")) == [
        ("project", "~/CLAUDE.md", "ancestor of cwd"),
        ("project", "CLAUDE.md", "in cwd"),
    ]


def test_claude_config_dir_replaces_dot_claude(tmp_path: Path) -> None:
    build(
        tmp_path,
        {
            "cfg/CLAUDE.md": "from config dir",
            "cfg/rules/a.md": "rule",
            "home/.claude/CLAUDE.md": "ignored",
        },
    )
    git_init(tmp_path / "repo")
    a = run(tmp_path, "repo", environ={"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")})
    assert [s.content for s in a.sources] == ["from config dir", "rule"]


def test_files_below_cwd_are_not_loaded_at_start(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "root", "repo/sub/CLAUDE.md": "below"})
    assert [s.content for s in run(tmp_path, "repo").sources] == ["root"]


def test_frontmatter_and_block_comments_are_stripped_and_empty_files_skipped(
    tmp_path: Path,
) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": (
                "---\ntitle: x\npaths: src/**\n---\n"
                "<!-- maintainers only -->\n"
                "Keep <!-- inline stays --> this.\n\n"
                "<!-- unclosed comment stays\n"
            ),
            "repo/.claude/CLAUDE.md": "---\nname: x\n---\n<!-- only a comment -->\n   \n",
        },
    )
    a = run(tmp_path, "repo")
    assert [s.content for s in a.sources] == [
        "Keep <!-- inline stays --> this.\n\n<!-- unclosed comment stays"
    ]
    assert "CTX404" in codes(a)


def test_symlink_chains_are_followed_and_shown_by_the_links_own_path(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/.agents/AGENTS.md": "agents text",
            "repo/AGENTS.md": Link(".agents/AGENTS.md"),
            "repo/CLAUDE.md": Link("AGENTS.md"),
            "repo/docs/CONTRIBUTING.md": "contributing",
            "repo/docs/CLAUDE.md": Link("CONTRIBUTING.md"),
        },
    )
    a = run(tmp_path, "repo/docs")
    assert [(s.display, s.path, s.content) for s in a.sources] == [
        ("CLAUDE.md", str(tmp_path / "repo/CLAUDE.md"), "agents text"),
        ("docs/CLAUDE.md", str(tmp_path / "repo/docs/CLAUDE.md"), "contributing"),
    ]


def test_claude_md_excludes_remove_user_project_local_but_never_managed(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "home/.claude/settings.json": json.dumps(
                {"claudeMdExcludes": [f"{tmp_path}/repo/CLAUDE.md", "**/legacy/**"]}
            ),
            "managed/CLAUDE.md": "managed",
            "repo/CLAUDE.md": "excluded by absolute path",
            "repo/CLAUDE.local.md": "kept",
            "repo/legacy/CLAUDE.md": "excluded by glob",
        },
    )
    a = run(tmp_path, "repo/legacy", managed_dir=tmp_path / "managed")
    assert [s.content for s in a.sources] == ["managed", "kept"]
    assert codes(a).count("CTX405") == 2


def test_managed_settings_excludes_never_remove_managed_files(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "managed/managed-settings.json": json.dumps({"claudeMdExcludes": ["**/CLAUDE.md"]}),
            "managed/CLAUDE.md": "managed",
            "repo/CLAUDE.md": "project",
        },
    )
    assert [s.content for s in run(tmp_path, "repo").sources] == ["managed"]


def test_auto_memory_is_cut_at_200_lines_with_the_clients_warning(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    memory = "\n".join(f"- entry {i}" for i in range(250))
    build(tmp_path, {f"home/.claude/projects/{slug(tmp_path / 'repo')}/memory/MEMORY.md": memory})
    (source,) = run(tmp_path, "repo", client_version="2.1.197").sources
    expected = "\n".join(f"- entry {i}" for i in range(200)) + (
        "\n\n> WARNING: MEMORY.md is 250 lines (limit: 200). Only part of it was loaded. "
        "Keep index entries to one line under ~200 chars; move detail into topic files."
    )
    assert source.content == expected
    assert [(c.kind, c.lines) for c in source.cuts] == [("index", 48)]


def test_auto_memory_can_be_turned_off_or_moved(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            f"home/.claude/projects/{slug(tmp_path / 'repo')}/memory/MEMORY.md": "default place",
            "elsewhere/MEMORY.md": "moved",
            "home/.claude/settings.json": json.dumps({"autoMemoryDirectory": "~/../elsewhere"}),
        },
    )
    assert [
        s.content
        for s in run(tmp_path, "repo", environ={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}).sources
    ] == []
    (moved,) = run(tmp_path, "repo").sources
    assert moved.content == "moved"


@pytest.mark.parametrize(
    "directory",
    [
        "~/.claude/projects/-other-project/memory",
        "{tmp}/home/.claude/projects/-other-project/memory",
        "{tmp}/repo/notes",
    ],
)
def test_auto_memory_the_repositorys_local_settings_move_is_loaded_and_reported(
    tmp_path: Path, directory: str
) -> None:
    """`.claude/settings.local.json` moves auto memory as the client does (to another project's
    memory, or to a file of the repository's own): it loads as the user's own memory, and is
    reported (issue 22)."""
    git_init(tmp_path / "repo")
    moved = directory.format(tmp=tmp_path)
    build(
        tmp_path,
        {
            "home/.claude/projects/-other-project/memory/MEMORY.md": "- another project's memory",
            "repo/notes/MEMORY.md": "- another project's memory",
            "repo/.claude/settings.local.json": json.dumps({"autoMemoryDirectory": moved}),
        },
    )
    a = run(tmp_path, "repo")
    [memory] = [s for s in a.sources if s.layer is Layer.MEMORY]
    assert memory.content == "- another project's memory"
    [warning] = [d for d in a.diagnostics if d.code == "CTX804"]
    assert warning.path == memory.display
    assert ".claude/settings.local.json sets autoMemoryDirectory" in warning.message
    notes = CLIENT.discover(Run(a.context, a.policy, estimate_tokens, Disk())).notes
    assert [(n.path, n.code) for n in notes] == [(memory.path, "CTX804")]


def test_auto_memory_moved_by_the_user_or_in_checked_in_settings_is_not_reported(
    tmp_path: Path,
) -> None:
    """The client ignores autoMemoryDirectory in the project's checked-in
    `.claude/settings.json` (so does ctxasm); the user's and the managed settings are trusted."""
    git_init(tmp_path / "repo")
    other = json.dumps({"autoMemoryDirectory": "~/.claude/projects/-other-project/memory"})
    build(
        tmp_path,
        {
            f"home/.claude/projects/{slug(tmp_path / 'repo')}/memory/MEMORY.md": "- own memory",
            "home/.claude/projects/-other-project/memory/MEMORY.md": "- another project's memory",
            "repo/.claude/settings.json": other,
        },
    )
    assert [s.content for s in run(tmp_path, "repo").sources] == ["- own memory"]
    build(tmp_path, {"home/.claude/settings.json": other})
    a = run(tmp_path, "repo")
    assert [s.content for s in a.sources] == ["- another project's memory"]
    assert codes(a) == []
    build(
        tmp_path, {"repo/.claude/settings.local.json": json.dumps({"autoMemoryDirectory": "~/x"})}
    )
    build(tmp_path, {"managed/managed-settings.json": other})
    a = run(tmp_path, "repo")  # the managed settings win over the repository's
    assert [s.content for s in a.sources] == ["- another project's memory"]
    assert codes(a) == []


def test_worktree_uses_the_main_repository_for_the_memory_slug(tmp_path: Path) -> None:
    import subprocess

    main = git_init(tmp_path / "main")
    subprocess.run(
        ["git", "-C", str(main), "commit", "-q", "--allow-empty", "-m", "x"],
        check=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )
    subprocess.run(
        ["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "wt")], check=True
    )
    build(tmp_path, {f"home/.claude/projects/{slug(main)}/memory/MEMORY.md": "shared memory"})
    a = run(tmp_path, "wt")
    assert a.context.canonical_root == main
    assert [(s.layer, s.content) for s in a.sources] == [(Layer.MEMORY, "shared memory")]


def test_nested_worktree_skips_checked_in_files_of_the_main_repo_above_it(tmp_path: Path) -> None:
    import subprocess

    main = git_init(tmp_path / "main")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(
        ["git", "-C", str(main), "commit", "-q", "--allow-empty", "-m", "x"], check=True, env=env
    )
    subprocess.run(
        ["git", "-C", str(main), "worktree", "add", "-q", str(main / ".worktrees" / "wt")],
        check=True,
    )
    build(
        tmp_path,
        {
            "main/CLAUDE.md": "main checked-in file",
            "main/CLAUDE.local.md": "main local file",
            "main/.worktrees/wt/CLAUDE.md": "worktree file",
        },
    )
    assert [s.content for s in run(tmp_path, "main/.worktrees/wt").sources] == [
        "main local file",
        "worktree file",
    ]


def test_reasons_name_their_kind(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "x", "home/.claude/CLAUDE.md": "u"})
    assert [s.reason.why for s in run(tmp_path, "repo").sources] == [Why.USER_FILE, Why.CWD]


def test_the_override_date_is_claude_codes_and_no_other_clients(tmp_path: Path) -> None:
    """`CLAUDE_CODE_OVERRIDE_DATE` is Claude Code's variable (`Client.date`): it fixes the date
    of a Claude Code run, and a Codex run keeps its own (issue 23: it applied to every client)."""
    build(git_init(tmp_path / "repo"), {"CLAUDE.md": "Rules.", "AGENTS.md": "Rules."})
    environ = {"CLAUDE_CODE_OVERRIDE_DATE": "2020-02-02"}
    now = dt.datetime(2021, 3, 4, 12, 0)
    assert run(tmp_path, "repo", environ=environ, now=now).date == "2020-02-02"
    assert run(tmp_path, "repo", environ=environ, now=now, policy="codex").date == "2021-03-04"
    assert CLIENT.date(environ) == "2020-02-02" and CLIENT.date({}) is None
