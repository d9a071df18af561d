"""`ctxasm render`: options, output, exit codes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import ctxasm
from tests.helpers.trees import build, git_init


def invoke(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    (tmp_path / "home").mkdir(exist_ok=True)
    result = ctxasm(
        [
            "render",
            *args,
            "--home",
            str(tmp_path / "home"),
            "--managed-dir",
            str(tmp_path / "managed"),
        ]
    )
    return result.exit_code, result.stdout, result.stderr


def test_render_prints_the_native_xml(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "hello"})
    code, out, err = invoke(tmp_path, str(tmp_path / "repo"))
    assert (code, out, err) == (
        0,
        '__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__\n\n<project_instructions source="CLAUDE.md">\nhello\n</project_instructions>\n',
        "",
    )


def test_formats_date_touch_and_out(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "root", "repo/sub/CLAUDE.md": "sub", "repo/sub/a.py": ""})
    out_file = tmp_path / "out" / "ctx.txt"
    out_file.parent.mkdir()
    code, out, err = invoke(
        tmp_path,
        str(tmp_path / "repo"),
        "--format",
        "claude-code",
        "--date",
        "2026-02-03",
        "--touch",
        str(tmp_path / "repo/sub/a.py"),
        "--out",
        str(out_file),
    )
    assert (code, out, err) == (0, "", "")
    text = out_file.read_text()
    assert "Today's date is 2026-02-03." in text
    assert text.endswith(
        f"<system-reminder>\nContents of {tmp_path}/repo/sub/CLAUDE.md:\n\nsub\n</system-reminder>"
    )
    assert [p.name for p in out_file.parent.iterdir()] == ["ctx.txt"]  # no temp file left behind


def test_json_format_is_the_whole_assembly(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "@missing.md hi"})
    code, out, _ = invoke(tmp_path, str(tmp_path / "repo"), "--format", "json")
    data = json.loads(out)
    assert code == 0
    assert [s["path"] for s in data["sources"]] == ["CLAUDE.md"]
    assert [d["code"] for d in data["diagnostics"]] == ["CTX201"]
    assert data["stats"]["sources"] == 1


def test_warnings_go_to_stderr_one_line_each(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "@../outside.md", "outside.md": "x"})
    code, _, err = invoke(tmp_path, str(tmp_path / "repo"))
    assert code == 0
    assert err.splitlines() == [
        "../outside.md: warning: @../outside.md in CLAUDE.md points outside the working directory; "
        "the client drops it unless external imports are approved (answer yes when Claude Code "
        "asks at start; it records hasClaudeMdExternalIncludesApproved for the project in "
        "~/.claude.json) [CTX204]"
    ]


def test_errors_in_files_exit_1_and_still_render(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "ok", "repo/CLAUDE.local.md": "bin\0ary"})
    code, out, err = invoke(tmp_path, str(tmp_path / "repo"))
    assert code == 1
    assert "<project_instructions" in out
    assert err.startswith("CLAUDE.local.md: error: file is binary (NUL byte at offset 3)")


def test_missing_path_is_one_line_and_exit_2(tmp_path: Path) -> None:
    code, out, err = invoke(tmp_path, str(tmp_path / "nope"))
    assert (code, out) == (2, "")
    assert (
        err
        == f"ctxasm: {tmp_path}/nope: no such directory (No such file or directory); pass an existing PATH\n"
    )


def test_bad_policy_is_one_line_and_exit_2(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    bad = tmp_path / "bad.toml"
    bad.write_text('extends = "claude-code"\nlimits = 1\n')
    code, out, err = invoke(tmp_path, str(tmp_path / "repo"), "--policy", str(bad))
    assert (code, out, err) == (2, "", f"ctxasm: {bad}: 'limits' must be a table\n")


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    code, _, err = invoke(tmp_path, str(tmp_path), "--date", "yesterday")
    assert code == 2
    assert "'yesterday' is not a date like 2026-01-31" in err
    for not_a_day in ("2026-13-45", "2026-02-30", "0000-01-01"):  # the shape, not a calendar day
        code, out, err = invoke(tmp_path, str(tmp_path), "--date", not_a_day)
        assert (code, out) == (2, ""), not_a_day
        assert f"'{not_a_day}' is not a calendar date like 2026-01-31" in err
    code, _, err = invoke(tmp_path, str(tmp_path), "--format", "yaml")
    assert code == 2


def test_budget_that_cannot_be_met_exits_1(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"managed/CLAUDE.md": "word " * 400, "repo/CLAUDE.md": "project " * 100})
    code, out, err = invoke(tmp_path, str(tmp_path / "repo"), "--max-tokens", "50")
    assert code == 1
    assert "<project_instructions" not in out
    assert "[CTX601]" in err
    code, out, _ = invoke(tmp_path, str(tmp_path / "repo"), "--max-tokens", "700")
    assert code == 0
    assert "truncated to fit the token budget" in out


def test_unwritable_out_is_one_line(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    code, _, err = invoke(
        tmp_path, str(tmp_path / "repo"), "--out", str(tmp_path / "no" / "dir" / "x.txt")
    )
    assert code == 2
    assert err.startswith(f"ctxasm: {tmp_path}/no/dir/x.txt: cannot write")


def test_policy_all_outside_explain_says_where_it_works(tmp_path: Path) -> None:
    code, out, err = invoke(tmp_path, str(tmp_path), "--policy", "all")
    assert (code, out) == (2, "")
    assert "(`all` compares every agent, with `ctxasm explain` only)" in err
    assert len(err.splitlines()) == 1


def test_another_agents_format_is_a_usage_error(tmp_path: Path) -> None:
    """`--policy codex --format claude-code` would print Claude Code's wrapper around the
    AGENTS.md files only Codex loads: exit 2, one line, nothing on stdout. The same under
    `watch`, at start. A format for every policy renders any agent's files."""
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/AGENTS.md": "agents", "repo/CLAUDE.md": "claude"})
    repo = str(tmp_path / "repo")
    code, out, err = invoke(tmp_path, repo, "--policy", "codex", "--format", "claude-code")
    assert (code, out) == (2, "")
    assert err == (
        "ctxasm: claude-code is Claude Code's own format, but the policy's client is Codex: "
        "those bytes are what neither agent sends; use a claude-code policy (--policy "
        "claude-code) or a format for every policy (xml, markdown, json, anthropic, openai)\n"
    )
    code, out, err = invoke(tmp_path, repo, "--format", "gemini")
    assert (code, out, err.count("\n")) == (2, "", 1)
    assert "gemini is Gemini CLI's own format, but the policy's client is Claude Code" in err
    home = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    watched = ctxasm(["watch", repo, "--policy", "codex", "--format", "claude-code", *home])
    assert (watched.exit_code, watched.stdout, watched.stderr.count("\n")) == (2, "", 1)
    for fmt in ("xml", "markdown", "json", "anthropic", "openai", "codex"):
        code, out, err = invoke(tmp_path, repo, "--policy", "codex", "--format", fmt)
        assert (code, "agents" in out, err) == (0, True, ""), fmt


def test_nothing_loaded_names_the_agents_that_do_load_files_here(tmp_path: Path) -> None:
    """Issue 26: gemini-cli's eight GEMINI.md rendered 0 bytes under the default policy and
    said nothing. One line on stderr names each agent that loads files here and how to see
    them; an agent that loads something says no such line."""
    repo = git_init(tmp_path / "repo")
    build(repo, {"GEMINI.md": "# g\n", "pkg/GEMINI.md": "# p\n"})
    (tmp_path / "home").mkdir()
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    ran = ctxasm(["render", str(repo), *machine])
    assert (ran.exit_code, ran.stdout) == (0, "")
    assert ran.stderr == (
        "ctxasm: nothing loads here for Claude Code; Gemini CLI loads 1 file (--policy gemini); "
        "all side by side: ctxasm explain --policy all\n"
    )
    loaded = ctxasm(["render", str(repo), *machine, "--policy", "gemini"])
    assert loaded.exit_code == 0 and loaded.stdout and loaded.stderr == ""


def test_subagent_of_a_client_without_subagents_is_a_usage_error(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/AGENTS.md": "hello"})
    code, out, err = invoke(
        tmp_path, str(tmp_path / "repo"), "--policy", "codex", "--subagent", "Explore"
    )
    assert (code, out) == (2, "")
    assert (
        err.startswith("ctxasm: subagent Explore: Codex 0.171 starts no subagents;")
        and err.count("\n") == 1
    )
    code, out, err = invoke(tmp_path, str(tmp_path / "repo"), "--subagent", " ")
    assert (code, out, err.count("\n")) == (2, "", 1) and "pass the name of an agent type" in err


def test_a_subagent_after_a_compaction_is_one_question_too_many(tmp_path: Path) -> None:
    """`--subagent` and `--after-compact` describe two different requests: one line, exit 2,
    nothing written; and a subagent that starts without instruction files (Explore) is no
    reason to point at other agents."""
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "# root\n", "AGENTS.md": "# for Codex\n"})
    (tmp_path / "home").mkdir()
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    both = ctxasm(["render", str(repo), *machine, "--subagent", "Explore", "--after-compact"])
    assert (both.exit_code, both.stdout, both.stderr.count("\n")) == (2, "", 1)
    assert "one at a time" in both.stderr
    explore = ctxasm(["render", str(repo), *machine, "--subagent", "Explore"])
    assert explore.exit_code == 0 and "nothing loads here" not in explore.stderr


def test_an_empty_context_says_so_on_stderr(tmp_path: Path) -> None:
    """`render` in a directory with no instruction files, and `render --subagent Explore`,
    printed nothing and exited 0 (issue 34): one line says why."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "m")]
    empty = ctxasm(["render", str(repo), *machine])
    assert (empty.exit_code, empty.stdout) == (0, "")
    assert empty.stderr == (
        "ctxasm: nothing loads here for Claude Code: no instruction file in any place it "
        "reads; `ctxasm explain --all` lists every place\n"
    )
    (repo / "CLAUDE.md").write_text("Root.\n")
    explore = ctxasm(["render", str(repo), "--subagent", "Explore", *machine])
    assert explore.exit_code == 0
    assert explore.stderr.startswith("ctxasm: the Explore agent starts with no instruction files")
    assert ctxasm(["render", str(repo), *machine]).stderr == ""  # something loads: nothing said


def test_errors_name_the_options_the_user_typed(tmp_path: Path) -> None:
    """Errors named the library's parameters (`subagent and after_compact: ...`, issue 34)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "m")]
    both = ctxasm(["render", str(repo), "--subagent", "Explore", "--after-compact", *machine])
    assert both.exit_code == 2 and both.stderr.startswith("ctxasm: --subagent and --after-compact")
    codex = ctxasm(["render", str(repo), "--after-compact", "--policy", "codex", *machine])
    assert codex.exit_code == 2 and codex.stderr.startswith("ctxasm: --after-compact ")
