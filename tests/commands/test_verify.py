"""`ctxasm verify` end to end without node: a stand-in program (tests/helpers/replay_agent.py)
sends what Claude Code 2.1.197 sent for the demo tree (the recorded reference) to the
stand-in provider that verify starts; exit 0 when ctxasm agrees, 1 with the diff when a
planted change makes it differ, 2 with one line when the program cannot be run."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from tests.helpers import replay_agent
from tests.helpers.cli import ctxasm
from tests.helpers.client_cases import BY_NAME, lay_out, load, replayed
from tests.helpers.clients import PINS
from tests.helpers.trees import RELATIVE_PATH, plant_programs

CASE = BY_NAME["demo-api"]
PIN = PINS[0]  # Claude Code 2.1.197


def _setup(root: Path, **mode: bool) -> tuple[Path, list[str]]:
    cwd = lay_out(CASE, root)
    turns = replayed(load(CASE, PIN), root)
    program = replay_agent.install(
        root / "bin", "claude", "2.1.197 (Claude Code)", turns, root / "home", **mode
    )
    args = [
        "verify", str(cwd), "--bin", str(program), "--home", str(root / "home"),
        "--managed-dir", str(root / "managed"), "--touch", str(root / CASE.reads[0]),
    ]  # fmt: skip
    return cwd, args


def test_the_same_context_exits_0(fixed_tmp: Path) -> None:
    _, args = _setup(fixed_tmp)
    ran = ctxasm(args)
    assert (ran.exit_code, ran.stderr) == (0, "")
    assert ran.stdout == (
        f"Claude Code 2.1.197 ({fixed_tmp}/bin/claude): the same instruction context, byte for "
        "byte (at start, after reading services/api/src/handlers/users.ts)\n"
    )


def test_a_planted_difference_exits_1_with_where(fixed_tmp: Path) -> None:
    _, args = _setup(fixed_tmp)
    memory = next((fixed_tmp / "home/.claude/projects").glob("*/memory/MEMORY.md"))
    memory.write_text(memory.read_text().replace("once", "twice"))  # after the recording
    ran = ctxasm(args)
    assert ran.exit_code == 1, ran.output
    lines = ran.stdout.splitlines()
    assert lines[:3] == [
        f"Claude Code 2.1.197 ({fixed_tmp}/bin/claude): 1 difference(s)",
        "at start:",
        f"  {memory}: the bytes differ",
    ]
    assert lines[4].startswith("    client: …") and "rerun it ⟦once before" in lines[4]
    assert lines[5].startswith("    ctxasm: …") and "rerun it ⟦twice before" in lines[5]


def test_the_home_is_copied_never_written(fixed_tmp: Path) -> None:
    _, args = _setup(fixed_tmp)
    home = fixed_tmp / "home"
    before = {p: p.stat().st_mtime_ns for p in home.rglob("*")}
    assert ctxasm(args).exit_code == 0
    assert {p: p.stat().st_mtime_ns for p in home.rglob("*")} == before


def test_a_program_not_found_exits_2_in_one_line(fixed_tmp: Path) -> None:
    _, args = _setup(fixed_tmp)
    args[args.index("--bin") + 1] = str(fixed_tmp / "nowhere" / "claude")
    ran = ctxasm(args)
    assert ran.exit_code == 2
    assert ran.stderr == (
        f"ctxasm: {fixed_tmp}/nowhere/claude: not an executable file; install Claude Code or "
        "pass --bin with its path\n"
    )
    ran = ctxasm(
        [*args[: args.index("--bin")], *args[args.index("--bin") + 2 :]],
        env={"PATH": str(fixed_tmp)},
    )
    assert (ran.exit_code, ran.stderr.count("\n")) == (2, 1)
    assert "claude: not found on PATH" in ran.stderr


def test_the_program_is_never_the_repositorys(fixed_tmp: Path) -> None:
    """Without `--bin`, in a repository holding its own `./claude` and
    `./node_modules/.bin/claude`, with a PATH whose empty, `.` and `node_modules/.bin`
    entries name them: the program run is the user's (found after them), and verify says
    which entries it passed over; with none of the user's, one line and exit 2."""
    cwd, args = _setup(fixed_tmp)
    args = [*args[: args.index("--bin")], *args[args.index("--bin") + 2 :]]
    marker = fixed_tmp / "marker"
    plant_programs(cwd, marker)
    passed_over = (
        'relative PATH entries not looked in ("", ".", "node_modules/.bin": they name the '
        "directory ctxasm runs in, which may be the repository's)"
    )
    with contextlib.chdir(cwd):  # the relative entries are of ctxasm's directory
        ran = ctxasm(args, env={"PATH": f"{RELATIVE_PATH}:{fixed_tmp / 'bin'}"})
        missing = ctxasm(args, env={"PATH": RELATIVE_PATH})
    assert ran.exit_code == 0, ran.output
    assert ran.stderr == (
        f"PATH: warning: {passed_over} looking for claude; ran {fixed_tmp}/bin/claude [CTX606]\n"
    )
    assert ran.stdout.startswith(f"Claude Code 2.1.197 ({fixed_tmp}/bin/claude): the same")
    assert (missing.exit_code, missing.stdout) == (2, "")
    assert missing.stderr == (
        f"ctxasm: claude: not found on PATH; {passed_over}; install Claude Code or pass --bin "
        "with its path\n"
    )
    assert not marker.exists()


def test_a_program_that_hangs_is_stopped_and_exits_2(fixed_tmp: Path) -> None:
    _, args = _setup(fixed_tmp, hang=True)
    started = time.monotonic()
    ran = ctxasm([*args, "--timeout", "2"])
    assert time.monotonic() - started < 30
    assert ran.exit_code == 2
    assert ran.stderr == (
        f"ctxasm: {fixed_tmp}/bin/claude: no answer in 2 s; it was stopped (a longer --timeout, "
        "or run it by hand to see where it waits)\n"
    )
    pids = replay_agent.pids(fixed_tmp / "bin")
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while any(map(replay_agent.alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(replay_agent.alive, pids)), "the program or its child was left running"


def test_a_program_that_sends_nothing_exits_2(fixed_tmp: Path) -> None:
    _, args = _setup(fixed_tmp, silent=True)
    ran = ctxasm(args)
    assert ran.exit_code == 2
    assert ran.stderr == (
        f"ctxasm: {fixed_tmp}/bin/claude sent 0 request(s) of its conversation where 2 were "
        "expected (exit status 0): ok\n"
    )


def test_a_read_where_the_agent_attaches_nothing_is_a_usage_error(fixed_tmp: Path) -> None:
    ran = ctxasm(
        ["verify", str(fixed_tmp), "--policy", "codex", "--touch", "x", "--home", str(fixed_tmp)]
    )
    assert ran.exit_code == 2
    assert ran.stderr.startswith("ctxasm: --touch: ") and ran.stderr.count("\n") == 1


def test_the_program_gets_no_variable_of_ctxasm(fixed_tmp: Path) -> None:
    """Only PATH reaches it from the caller's environment: no key, no home of an agent."""
    _, args = _setup(fixed_tmp)
    secret = {"ANTHROPIC_API_KEY": "sk-real", "CLAUDE_CONFIG_DIR": str(fixed_tmp / "elsewhere")}
    ran = ctxasm(args, env={**secret, "PATH": os.environ["PATH"]})
    assert ran.exit_code == 0, ran.output


def test_no_version_or_no_directory_exits_2(fixed_tmp: Path) -> None:
    cwd, args = _setup(fixed_tmp)
    replay_agent.install(
        fixed_tmp / "bin", "claude", "Claude Code, version unknown", [], fixed_tmp / "home"
    )
    ran = ctxasm(args)
    assert ran.exit_code == 2
    assert ran.stderr == (
        f"ctxasm: {fixed_tmp}/bin/claude --version: no version in what it printed: "
        "Claude Code, version unknown\n"
    )
    args[1] = str(cwd / "nowhere")
    ran = ctxasm(args)
    assert (ran.exit_code, ran.stderr) == (
        2,
        f"ctxasm: {cwd}/nowhere: not a directory; pass the directory the agent starts in\n",
    )
