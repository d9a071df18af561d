"""Session-wide safety: no test may read the real home, /etc/claude-code or the real env."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from assembler.clients import registry
from assembler.discovery import locations
from tests.helpers.golden import fixed_tmp  # noqa: F401  (a fixture for every golden test)

# Property tests draw the same examples on every run, so CI never fails on a seed nobody can
# reproduce; `CTXASM_HYPOTHESIS=explore` draws new ones (and a failure prints its seed).
settings.register_profile("deterministic", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("CTXASM_HYPOTHESIS", "deterministic"))

_REAL_HOME = Path(os.path.expanduser("~")).resolve()
_GUARDED = tuple(
    str(p)
    for p in (
        _REAL_HOME / ".claude",
        _REAL_HOME / ".claude.json",
        _REAL_HOME / "CLAUDE.md",
        _REAL_HOME / ".codex",
        _REAL_HOME / ".gemini",
        Path("/etc/claude-code"),
        Path("/Library/Application Support/ClaudeCode"),
    )
)
_guard_on = False


class TouchedTheRealMachine(AssertionError):
    """A test reached the real home, /etc/claude-code or os.environ through the library."""


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _guard_on or event not in ("open", "os.scandir", "os.listdir") or not args:
        return
    path = args[0]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        return
    full = os.path.abspath(path)
    if any(full == g or full.startswith(g + os.sep) for g in _GUARDED):
        raise TouchedTheRealMachine(f"test touched {full}; pass home=/managed_dir= explicitly")


sys.addaudithook(_audit)


def _refuse(name: str) -> Any:
    def refuse(*args: object, **kwargs: object) -> Any:
        raise TouchedTheRealMachine(f"test used {name}(); pass it explicitly")

    return refuse


@pytest.fixture(autouse=True, scope="session")
def _no_real_machine() -> Iterator[None]:
    global _guard_on
    places = [(locations, "default_home"), (locations, "default_environ")]
    places.append((registry, "default_managed_dir"))
    saved = [(module, name, getattr(module, name)) for module, name in places]
    for module, name in places:
        setattr(module, name, _refuse(name))
    _guard_on = True
    try:
        yield
    finally:
        _guard_on = False
        for module, name, value in saved:
            setattr(module, name, value)


# What a terminal tells rich about itself: pytest-xdist's workers inherit COLUMNS=80 and
# LINES=24 (a developer's shell may export them, or NO_COLOR), and `explain` would print at
# that width instead of the plain 120 columns of a run without a terminal.
_TERMINAL = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR")


@pytest.fixture(autouse=True)
def _no_client_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """CLI tests run in this process: drop every CLAUDE_* (CODEX_*, GEMINI_*) variable the
    developer may have, and what the terminal around the test run says about itself."""
    for name in list(os.environ):
        if name.startswith(("CLAUDE_", "CTXASM_", "CODEX_", "GEMINI_")) or name in _TERMINAL:
            monkeypatch.delenv(name)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        help="Rewrite golden files from the current output.",
    )


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))
