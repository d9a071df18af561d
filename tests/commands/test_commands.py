"""`ctxasm` as a whole: `main(argv)` returns the exit code, errors are mapped in one place,
the help lists every command, and start-up imports only the command that runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

from assembler.commands import COMMANDS, cli, main
from tests.helpers.cli import ctxasm
from tests.helpers.trees import ROOT, build, git_init


def test_main_returns_the_exit_code_and_does_not_exit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0  # click's own exit, returned
    assert capsys.readouterr().out.startswith("ctxasm, version 0.")
    assert main(["codes", "--bogus"]) == 2  # a usage error, click's message
    assert capsys.readouterr().err == (
        "Usage: ctxasm codes [OPTIONS]\nTry 'ctxasm codes --help' for help.\n\n"
        "Error: No such option '--bogus'.\n"
    )


def test_every_exit_code_through_main(tmp_path: Path) -> None:
    git_init(tmp_path / "ok")
    git_init(tmp_path / "bad")
    build(tmp_path, {"ok/CLAUDE.md": "fine", "bad/CLAUDE.md": "ok", "bad/CLAUDE.local.md": "\0"})
    machine = ["--home", str(tmp_path), "--managed-dir", str(tmp_path / "managed")]
    fine = ctxasm(["render", str(tmp_path / "ok"), *machine])
    assert (fine.exit_code, fine.stderr) == (0, "")
    findings = ctxasm(["render", str(tmp_path / "bad"), *machine])
    assert findings.exit_code == 1  # an error in a file: rendered all the same
    assert "<project_instructions" in findings.stdout
    assert findings.stderr.startswith("CLAUDE.local.md: error: file is binary")
    missing = ctxasm(["render", str(tmp_path / "nope"), *machine])  # an AssemblerError
    assert (missing.exit_code, missing.stdout) == (2, "")
    assert missing.stderr == (
        f"ctxasm: {tmp_path}/nope: no such directory (No such file or directory); "
        "pass an existing PATH\n"
    )
    unknown = ctxasm(["rendr"])
    assert unknown.exit_code == 2
    assert unknown.stderr.endswith("Error: No such command 'rendr'.\n")


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
        "from assembler.commands import main\n"
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
    result = ctxasm([*args, "--help"])
    assert (result.exit_code, result.stderr) == (0, ""), args
    return result.stdout


def test_help_lists_whole_summaries_and_ends_every_command_with_examples() -> None:
    """`ctxasm --help` lists each command with a summary that is not cut short; each
    command's help documents every option and ends with examples of it."""
    ctx = click.Context(cli)
    names = cli.list_commands(ctx)
    listing, _, examples = _help().split("Commands:\n")[1].partition("\nExamples:\n")
    assert "..." not in listing, listing
    # The top-level help ends with examples too (it had none: issue 34), of real commands.
    shown = [line.split()[1] for line in examples.splitlines() if line.strip()]
    assert len(shown) >= 3 and set(shown) <= set(names), examples
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


def test_one_module_per_command() -> None:
    for name, lazy in COMMANDS.items():
        command = cli.get_command(click.Context(cli), name)
        assert command is not None and command.name == name
        assert command.callback is not None
        assert command.callback.__module__ == f"assembler.commands.{lazy.module}"


_PROBE = """
import sys
from assembler.commands import main
code = main(sys.argv[1:])
ours = sorted(m for m in sys.modules if m.startswith("assembler.commands."))
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"jinja2", "watchdog", "rich"})
print(code, ours, heavy, "assembler.clients.registry" in sys.modules, file=sys.stderr)
"""
_LINT = ["assembler.commands.echo", "assembler.commands.lint", "assembler.commands.options"]


@pytest.mark.parametrize(
    ("args", "modules", "registry"),
    [
        (["--version"], [], False),
        (["--help"], [], False),  # the summaries are the group's: no command is imported
        (["lint", "--help"], _LINT, True),
        (["lint"], _LINT, True),
    ],
)
def test_start_up_imports_the_command_that_runs_and_nothing_heavy(
    tmp_path: Path, args: list[str], modules: list[str], registry: bool
) -> None:
    build(tmp_path, {"repo/CLAUDE.md": "---\npaths: x\n---\n@gone.md and text\n"})
    git_init(tmp_path / "repo")
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args, *(machine if args == ["lint"] else [])],
        capture_output=True,
        text=True,
        cwd=tmp_path / "repo",
        check=True,
    )
    assert done.stderr.splitlines()[-1] == f"0 {modules} [] {registry}"


@pytest.mark.parametrize("command", [[], *([name] for name in COMMANDS)])
def test_help_fits_80_columns(command: list[str]) -> None:
    """Every help text, examples included (two were 81 and 82 columns), at COLUMNS=80."""
    shown = ctxasm([*command, "--help"], env={"COLUMNS": "80"})
    assert shown.exit_code == 0
    too_wide = [line for line in shown.stdout.splitlines() if len(line) > 80]
    assert too_wide == []
