"""`ctxasm verify` with the real clients on the project's fixture trees, at every pinned
version (`make clients` installs them; without them these tests are skipped, and with
CTXASM_REQUIRE_CLIENTS=1, as CI sets it, they fail instead).

Each case runs the installed program headless against verify's stand-in provider; a planted
difference (predicting 2.1.197 for a 2.1.332 program on a tree of AGENTS.md files) must make
verify fail; and the recorder reproduces the checked-in references.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from assembler.clients import registry
from assembler.verify.check import client_sides, session, verify
from tests.helpers.cli import ctxasm
from tests.helpers.client_cases import (
    BY_NAME,
    CASES,
    Case,
    case_headless,
    case_params,
    lay_out,
    load,
    machine,
    reads,
    recorded,
    replayed,
)
from tests.helpers.clients import CACHE, PINS, REQUIRED, Pin, installed

pytestmark = pytest.mark.slow


def _program(pin: Pin) -> Path:
    managed = registry.get(pin.client).managed_dir(sys.platform)
    if managed is not None and managed.exists():  # a stat: the guard forbids reading it
        pytest.skip(f"{managed} exists: the program reads it, and the fixtures have none")
    program = installed(pin)
    if program is None:
        message = f"{pin.package}@{pin.version} is not installed in {CACHE}: run make clients"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    return program


@pytest.mark.parametrize(("case", "pin"), case_params(subagents=False))
def test_verify_agrees_with_the_installed_client(case: Case, pin: Pin, fixed_tmp: Path) -> None:
    program = _program(pin)
    cwd = lay_out(case, fixed_tmp)
    verdict = verify(
        cwd, case.client, reads=reads(case, fixed_tmp), program=str(program), **machine(fixed_tmp)
    )
    assert verdict.version == pin.version
    assert verdict.agree, verdict.text()


def test_a_planted_version_makes_verify_fail(fixed_tmp: Path) -> None:
    """A 2.1.332 program on a tree of AGENTS.md files, predicted as 2.1.197: the AGENTS.md
    files 2.1.332 loads are reported, and the exit code is 1."""
    case, pin = BY_NAME["agents-only"], PINS[1]
    assert pin.version == "2.1.332"
    program = _program(pin)
    cwd = lay_out(case, fixed_tmp)
    ran = ctxasm(
        ["verify", str(cwd), "--bin", str(program), "--client-version", "2.1.197",
         "--home", str(fixed_tmp / "home"), "--managed-dir", str(fixed_tmp / "managed")]
    )  # fmt: skip
    assert ran.exit_code == 1, ran.output
    assert ran.stdout.startswith(f"Claude Code 2.1.332 ({program}, predicted as 2.1.197): ")
    for agents in ("repo/AGENTS.md", "repo/services/AGENTS.md"):
        assert f"  {fixed_tmp}/{agents}: only the client sent it\n" in ran.stdout


@pytest.mark.parametrize(
    ("case", "pin"),
    [pytest.param(c, p, id=f"{p.key}-{c.name}") for c in CASES for p in c.pins()],
)
def test_the_recorder_reproduces_the_reference(case: Case, pin: Pin, fixed_tmp: Path) -> None:
    """What the program sends today is, part by part, what was recorded (the recorder is
    verify's own capture, `session`)."""
    program = _program(pin)
    cwd = lay_out(case, fixed_tmp)
    headless = case_headless(case, fixed_tmp)
    with session(headless, str(program), fixed_tmp / "home", reads(case, fixed_tmp)) as run:
        assert run.version(cwd) == pin.version
        turns = run.capture(cwd)
    fresh = recorded(turns, headless.kept, fixed_tmp, pin.prefix(CACHE))
    again = client_sides(headless, replayed({"turns": fresh}, fixed_tmp))
    assert again == client_sides(headless, replayed(load(case, pin), fixed_tmp))
