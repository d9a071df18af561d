"""The mirror `ctxasm verify` runs an agent in: copies of exactly what a prediction reads, at
their own paths under a new directory; links kept; settings reduced to what changes loading;
nothing of git's but a repository's skeleton; the real tree and home never written; and the
prediction for the mirror checked against the real tree's before anything runs."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from assembler.clients.headless import Headless, Relocation
from assembler.errors import VerifyError
from assembler.verify import check, mirror
from assembler.verify.process import environment
from tests.helpers.trees import Link, build, git_init


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.lstat().st_mtime_ns, p.lstat().st_size) for p in root.rglob("*")}


def _headless(client: str) -> Headless:
    return check.client_of(client)[1]


def _mirror(
    tmp: Path, cwd: Path, client: str = "claude-code", reads: tuple[str, ...] = ()
) -> tuple[Relocation, mirror.Laid, Path]:
    root = tmp / "mirror"
    root.mkdir()
    version = "2.1.332" if client == "claude-code" else "latest"
    _, where, laid = check._mirror(
        cwd, client, _headless(client), version, reads, tmp / "home", tmp / "managed",
        str(root.resolve()),
    )  # fmt: skip
    return where, laid, root.resolve()


def _files(root: Path) -> list[str]:
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink()
    )


def _in(root: Path, path: Path) -> Path:
    return Path(str(root) + str(path))


def test_only_what_ctxasm_reads_is_mirrored_at_its_own_path(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "Repo.\n@docs/a.md\n", "docs/a.md": "A.\n", "src/x.ts": "x\n",
                 "README.md": "not read\n"})  # fmt: skip
    home = build(tmp_path / "home", {
        ".claude/CLAUDE.md": "Mine.\n",
        ".claude/rules/a.md": "Rule.\n",
        ".claude/projects/x/history.jsonl": "a transcript\n",
        ".claude/.credentials.json": '{"token": "secret"}',
        "notes.txt": "not read\n",
        ".claude.json": json.dumps({
            "oauthAccount": {"emailAddress": "a@b.c"},
            "projects": {str(repo): {"hasClaudeMdExternalIncludesApproved": True, "history": ["x"]},
                         "/elsewhere": {"lastCost": 1}},
        }),
    })  # fmt: skip
    before = _snapshot(tmp_path / "repo"), _snapshot(tmp_path / "home")
    where, _, root = _mirror(tmp_path, repo)
    files = _files(root)
    real = [f for f in files if "/.git/" not in f]
    assert real == sorted(
        str(p.relative_to("/"))
        for p in (
            home / ".claude.json",
            home / ".claude/CLAUDE.md",
            home / ".claude/rules/a.md",
            repo / "CLAUDE.md",
            repo / "docs/a.md",
        )
    )
    assert _in(root, repo / "CLAUDE.md").read_text() == "Repo.\n@docs/a.md\n"
    assert json.loads(_in(root, home / ".claude.json").read_text()) == {
        "projects": {str(root) + str(repo): {"hasClaudeMdExternalIncludesApproved": True}}
    }
    assert not _in(root, home / ".claude/.credentials.json").exists()
    assert oct(os.stat(_in(root, home / ".claude/CLAUDE.md")).st_mode & 0o777) == "0o600"
    assert where.outside(f"Contents of {root}{repo}/CLAUDE.md") == f"Contents of {repo}/CLAUDE.md"
    assert (_snapshot(tmp_path / "repo"), _snapshot(tmp_path / "home")) == before


def test_a_repository_is_a_skeleton_without_its_config_or_hooks(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "Repo.\n"})
    (repo / ".git/config").write_text('[core]\n\tfsmonitor = "touch /tmp/pwned"\n')
    (repo / ".git/hooks/post-checkout").write_text("#!/bin/sh\ntouch /tmp/pwned\n")
    _, _, root = _mirror(tmp_path, repo)
    git = _in(root, repo / ".git")
    assert sorted(str(p.relative_to(git)) for p in git.rglob("*")) == [
        "HEAD", "objects", "refs", "refs/heads"
    ]  # fmt: skip


def test_a_worktree_pointer_leads_into_the_mirror(tmp_path: Path) -> None:
    main = git_init(tmp_path / "main")
    wt_git = main / ".git/worktrees/wt"
    wt_git.mkdir(parents=True)
    (wt_git / "commondir").write_text("../..\n")
    (wt_git / "gitdir").write_text(f"{tmp_path}/wt/.git\n")
    build(tmp_path / "wt", {"CLAUDE.md": "Worktree.\n"})
    (tmp_path / "wt/.git").write_text(f"gitdir: {wt_git}\n")
    where, _, root = _mirror(tmp_path, tmp_path / "wt")
    assert _in(root, tmp_path / "wt/.git").read_text() == f"gitdir: {root}{wt_git}\n"
    assert _in(root, wt_git / "gitdir").read_text() == f"{root}{tmp_path}/wt/.git\n"
    assert _in(root, wt_git / "HEAD").read_text() == "ref: refs/heads/main\n"
    # The auto-memory folder is the main repository's, moved with the mirror.
    assert where.project == str(main)


def test_links_stay_links_and_their_targets_are_there(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    shared = build(tmp_path / "shared", {"AGENTS.md": "@../agents-real.md\n", "rules/r.md": "R.\n"})
    build(tmp_path, {"agents-real.md": "Real.\n"})
    build(repo, {
        "CLAUDE.md": Link("AGENTS.md"),  # a chain: CLAUDE.md -> AGENTS.md -> ../shared/AGENTS.md
        "AGENTS.md": Link("../shared/AGENTS.md"),
        ".claude/rules": Link(str(shared / "rules")),  # absolute, out of the project
        "up.md": Link("../" * 40 + "etc/hostname"),  # climbs above the root
    })  # fmt: skip
    _, _, root = _mirror(tmp_path, repo)
    assert os.readlink(_in(root, repo / "CLAUDE.md")) == "AGENTS.md"
    assert os.readlink(_in(root, repo / "AGENTS.md")) == "../shared/AGENTS.md"
    assert _in(root, repo / "CLAUDE.md").read_text() == "@../agents-real.md\n"
    assert _in(root, tmp_path / "agents-real.md").read_text() == "Real.\n"
    assert os.readlink(_in(root, repo / ".claude/rules")) == f"{root}{shared}/rules"
    assert _in(root, repo / ".claude/rules/r.md").read_text() == "R.\n"


def test_a_relative_link_that_climbs_above_the_root_stays_in_the_mirror(tmp_path: Path) -> None:
    where = Relocation(str(tmp_path / "m"), str(tmp_path / "home"), str(tmp_path))
    assert mirror._moved_target("/a/b/link", "../../../../etc/x", where) == f"{tmp_path}/m/etc/x"
    assert mirror._moved_target("/a/b/link", "../c/x", where) == "../c/x"
    assert mirror._moved_target("/a/b/link", "/etc/x", where) == f"{tmp_path}/m/etc/x"


def test_settings_keep_only_what_changes_loading(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(repo, {
        "CLAUDE.md": "Repo.\n",
        "vendor/CLAUDE.md": "Vendored.\n",
        ".claude/settings.json": json.dumps({
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch /tmp/x"}]}]},
            "apiKeyHelper": "touch /tmp/x", "enableAllProjectMcpServers": True,
            "env": {"ANTHROPIC_BASE_URL": "http://127.0.0.2:1"},
            "enabledPlugins": {"evil@market": True, "agents-md@builtin": False},
            "claudeMdExcludes": [f"{repo}/vendor/**", "**/nothing.md", 3],
            "statusLine": {"type": "command", "command": "touch /tmp/x"},
        }),
        ".mcp.json": json.dumps({"mcpServers": {"x": {"command": "touch"}}}),
    })  # fmt: skip
    _, laid, root = _mirror(tmp_path, repo)
    settings = json.loads(_in(root, repo / ".claude/settings.json").read_text())
    assert settings == {
        "claudeMdExcludes": [f"{root}{repo}/vendor/**", "**/nothing.md", 3],
        "enabledPlugins": {"agents-md@builtin": False},
    }
    assert laid.withheld == (
        f"{repo}/.claude/settings.json: hooks, apiKeyHelper, enableAllProjectMcpServers, "
        "env (ANTHROPIC_BASE_URL), statusLine",
    )
    assert laid.environ == (
        (f"{repo}/.claude/settings.json", "ANTHROPIC_BASE_URL", "http://127.0.0.2:1"),
    )
    assert not _in(root, repo / ".mcp.json").exists()


def test_a_settings_file_that_is_no_json_object_is_empty_in_the_mirror(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "Repo.\n", ".claude/settings.local.json": '{"hooks": 1,'})
    _, laid, root = _mirror(tmp_path, repo)
    assert _in(root, repo / ".claude/settings.local.json").read_text() == "{}"
    assert laid.withheld == (
        f"{repo}/.claude/settings.local.json: all of it: it is no JSON object",
    )


def test_a_file_reached_as_settings_and_as_instructions_is_reduced(tmp_path: Path) -> None:
    """A CLAUDE.md linked to the local settings: the copy is the reduced settings, so the
    prediction for the mirror is not the tree's, and verify refuses before anything runs."""
    repo = git_init(tmp_path / "repo")
    hooks = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/x"}]}]}}
    build(
        repo,
        {
            ".claude/settings.local.json": json.dumps(hooks),
            "CLAUDE.md": Link(".claude/settings.local.json"),
        },
    )
    root = tmp_path / "mirror"
    root.mkdir()
    headless = _headless("claude-code")
    real, where, _ = check._mirror(
        repo, "claude-code", headless, "2.1.332", (), tmp_path / "home", tmp_path / "managed",
        str(root.resolve()),
    )  # fmt: skip
    home_in = Path(where.inside(str(tmp_path / "home")))
    ours = check.predicted_steps(
        where.inside(str(repo)), "claude-code", "2.1.332", (), home=home_in,
        managed_dir=tmp_path / "managed", environ=environment(home_in, {}),
    )  # fmt: skip
    with pytest.raises(
        VerifyError,
        match=r"CLAUDE\.md: the copy verify runs the agent in would not load what the tree does",
    ):
        check._same_as_real(headless, real, ours, where)
    assert "touch" not in _in(root.resolve(), repo / ".claude/settings.local.json").read_text()


def test_an_env_key_that_changes_loading_is_refused(tmp_path: Path) -> None:
    home = build(
        tmp_path / "home", {".claude/CLAUDE.md": "Mine.\n", "elsewhere/CLAUDE.md": "Other.\n"}
    )
    repo = git_init(tmp_path / "repo")
    build(repo, {
        "CLAUDE.md": "Repo.\n",
        ".claude/settings.json": json.dumps({"env": {"CLAUDE_CONFIG_DIR": str(home / "elsewhere"), "BASH_DEFAULT_TIMEOUT_MS": "9"}}),
    })  # fmt: skip
    root = tmp_path / "mirror"
    root.mkdir()
    headless = _headless("claude-code")
    _, where, laid = check._mirror(
        repo,
        "claude-code",
        headless,
        "2.1.332",
        (),
        home,
        tmp_path / "managed",
        str(root.resolve()),
    )
    home_in = Path(where.inside(str(home)))
    ours = check.predicted_steps(
        where.inside(str(repo)), "claude-code", "2.1.332", (), home=home_in,
        managed_dir=tmp_path / "managed", environ=environment(home_in, {}),
    )  # fmt: skip
    with pytest.raises(
        VerifyError, match="its env sets CLAUDE_CONFIG_DIR, which changes what the agent loads"
    ):
        check._refuse_environ(
            laid, ours, "claude-code", headless, "2.1.332", (), home_in, tmp_path / "managed"
        )
    # Without it, the other key changes nothing that loads: the run goes ahead without it.
    check._refuse_environ(
        laid._replace(environ=laid.environ[1:]), ours, "claude-code", headless, "2.1.332", (),
        home_in, tmp_path / "managed",
    )  # fmt: skip


def test_gemini_settings_keep_only_what_changes_loading(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(repo, {
        "CONTEXT.md": "Context.\n",
        ".env": "GOOGLE_GEMINI_BASE_URL=http://127.0.0.2:1\n",
        ".gemini/settings.json": json.dumps({
            "context": {"fileName": ["CONTEXT.md"]}, "hooksConfig": {"enabled": True},
            "mcpServers": {"x": {"command": "touch"}}, "tools": {"discoveryCommand": "touch /tmp/x"},
            "telemetry": {"enabled": True, "otlpEndpoint": "http://127.0.0.2:4318"},
        }),
    })  # fmt: skip
    build(
        tmp_path / "home",
        {
            ".gemini/settings.json": json.dumps(
                {"mcpServers": {"y": {"command": "touch"}}, "ui": {"theme": "x"}}
            )
        },
    )
    _, laid, root = _mirror(tmp_path, repo, "gemini")
    workspace = _in(root, repo / ".gemini/settings.json")
    assert json.loads(workspace.read_text()) == {"context": {"fileName": ["CONTEXT.md"]}}
    assert not _in(root, repo / ".env").exists()
    assert laid.withheld == (
        f"{tmp_path}/home/.gemini/settings.json: mcpServers, ui",
        f"{repo}/.gemini/settings.json: hooksConfig, mcpServers, tools, telemetry",
    )
    headless = _headless("gemini")
    home_in = _in(root, tmp_path / "home")
    launch = headless.launch(
        "http://127.0.0.1:1", check._reader(home_in), check._reader(_in(root, repo))
    )
    user = json.loads(launch.files[".gemini/settings.json"])
    assert "mcpServers" not in user and user["telemetry"]["enabled"] is False
    assert launch.environ["OTEL_SDK_DISABLED"] == "true"


def test_codex_config_keeps_its_loading_keys(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(repo, {"AGENTS.md": "Agents.\n", "DOCS.md": "Docs.\n"})
    build(tmp_path / "home", {".codex/config.toml": (
        'notify = ["touch", "/tmp/x"]\nproject_doc_max_bytes = 10\n'
        'project_doc_fallback_filenames = ["DOCS.md", "Ω\\u007f"]\n'
        '[mcp_servers.x]\ncommand = "touch"\n'
        f'[projects."{repo}"]\ntrust_level = "trusted"\n'
    )})  # fmt: skip
    _, laid, root = _mirror(tmp_path, repo, "codex")
    config = tomllib.loads(_in(root, tmp_path / "home/.codex/config.toml").read_text())
    assert config == {
        "project_doc_max_bytes": 10,
        "project_doc_fallback_filenames": ["DOCS.md", "Ω\x7f"],
    }
    assert laid.withheld == (f"{tmp_path}/home/.codex/config.toml: notify, mcp_servers, projects",)


def test_past_the_entries_the_mirror_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "Repo.\n", **{f".claude/rules/r{i}.md": "R.\n" for i in range(30)}})
    monkeypatch.setattr(mirror, "MAX_ENTRIES", 20)
    with pytest.raises(VerifyError, match="more than 20 entries to copy into the mirror"):
        _mirror(tmp_path, repo)
