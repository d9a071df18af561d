"""`ctxasm render`: options, output, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from assembler.cli import cli
from tests.helpers.trees import ROOT, build, git_init


def invoke(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    (tmp_path / "home").mkdir(exist_ok=True)
    result = CliRunner().invoke(
        cli,
        [
            "render",
            *args,
            "--home",
            str(tmp_path / "home"),
            "--managed-dir",
            str(tmp_path / "managed"),
        ],
        catch_exceptions=False,
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
        "the client drops it unless external imports are approved in ~/.claude.json [CTX204]"
    ]


@pytest.mark.parametrize("command", ["render", "explain", "lint", "cache"])
def test_a_missing_home_is_a_warning(tmp_path: Path, command: str) -> None:
    """A typo in --home would silently drop the user's layer: say so, and still run."""
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "project rules"})
    home = tmp_path / "hmoe"
    machine = ["--home", str(home), "--managed-dir", str(tmp_path / "managed")]
    target = (
        [str(tmp_path / "repo" / "CLAUDE.md")] if command == "lint" else [str(tmp_path / "repo")]
    )
    result = CliRunner().invoke(cli, [command, *target, *machine], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    warning = (
        f"ctxasm: warning: --home {home}: no such directory; no user instructions, settings "
        "or auto memory are loaded: check the path"
    )
    assert result.stderr.splitlines()[0] == warning
    home.mkdir()
    again = CliRunner().invoke(cli, [command, *target, *machine], catch_exceptions=False)
    assert warning not in again.stderr
    assert again.stdout == result.stdout


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


def test_home_option_ignores_claude_config_dir(tmp_path: Path, monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    git_init(tmp_path / "repo")
    build(tmp_path, {"home/.claude/CLAUDE.md": "from --home", "elsewhere/CLAUDE.md": "from env"})
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    code, out, _ = invoke(tmp_path, str(tmp_path / "repo"))
    assert code == 0
    assert "from --home" in out
    assert "from env" not in out


def test_python_dash_m_and_version() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "assembler", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    assert result.stdout.startswith("ctxasm, version 0.")


def test_internal_errors_exit_3_with_one_line(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    script = (
        "import assembler.clients.claude_code as c\n"
        "def boom(*args, **kwargs): raise RuntimeError('kaboom')\n"
        "c.ClaudeCode.discover = boom\n"
        "from assembler.cli import main\n"
        f"raise SystemExit(main(['render', {str(tmp_path / 'repo')!r}, '--home', {str(tmp_path)!r}, '--managed-dir', {str(tmp_path)!r}]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert result.returncode == 3
    assert result.stderr == (
        "ctxasm: internal error: RuntimeError: kaboom; rerun with CTXASM_DEBUG=1 for the traceback and report it\n"
    )


def _help(*args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--help"], catch_exceptions=False)
    assert (result.exit_code, result.stderr) == (0, ""), args
    return result.stdout


def test_help_lists_whole_summaries_and_ends_every_command_with_examples() -> None:
    """`ctxasm --help` lists each command with a summary that is not cut short; each
    command's help documents every option and ends with examples of it."""
    import click

    ctx = click.Context(cli)
    names = cli.list_commands(ctx)
    listing = _help().split("Commands:\n")[1]
    assert "..." not in listing, listing
    assert sorted(line.split()[0] for line in listing.splitlines() if line.strip()) == names
    for name in names:
        command = cli.get_command(ctx, name)
        assert command is not None
        undocumented = [
            p.name for p in command.params if isinstance(p, click.Option) and not p.help
        ]
        assert undocumented == [], name
        text = _help(name)
        options, _, examples = text.partition("\nExamples:\n")
        assert "\nOptions:\n" in options and examples, (name, text)
        shown = [line.strip() for line in examples.splitlines() if line.strip()]
        assert 2 <= len(shown) <= 3 and all(s.startswith("ctxasm ") for s in shown), (name, text)
        assert all(s.split()[1] == name for s in shown), (name, shown)


def test_policy_all_outside_explain_says_where_it_works(tmp_path: Path) -> None:
    code, out, err = invoke(tmp_path, str(tmp_path), "--policy", "all")
    assert (code, out) == (2, "")
    assert "(`all` compares every agent, with `ctxasm explain` only)" in err
    assert len(err.splitlines()) == 1
