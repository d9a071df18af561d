"""The options commands share: discovery (a typo in a path is a warning, `--home` is the
whole user layer) and `--format` (the registry's formats, whenever they are asked for)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

import assembler.commands.render  # noqa: F401  (the command is defined before a client registers)
from assembler.clients import registry
from assembler.clients.base import Client, FileRole
from assembler.discovery.context import Discovery, Run
from tests.helpers.cli import ctxasm
from tests.helpers.trees import build, git_init


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
    result = ctxasm([command, *target, *machine])
    assert result.exit_code == 0, result.stderr
    warning = (
        f"ctxasm: warning: --home {home}: no such directory; no user instructions, settings "
        "or auto memory are loaded: check the path"
    )
    assert result.stderr.splitlines()[0] == warning
    home.mkdir()
    again = ctxasm([command, *target, *machine])
    assert warning not in again.stderr
    assert again.stdout == result.stdout


def test_home_option_ignores_claude_config_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"home/.claude/CLAUDE.md": "from --home", "elsewhere/CLAUDE.md": "from env"})
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    result = ctxasm(["render", str(tmp_path / "repo"), *machine])
    assert result.exit_code == 0
    assert "from --home" in result.stdout
    assert "from env" not in result.stdout


class _Plugin(Client[None]):
    """All `--format` asks of a client: its name and its formats (it loads nothing)."""

    name = "plugin"
    formats: ClassVar[Mapping[str, Any]] = {"plugin-format": lambda assembly, date: {}}

    def discover(self, run: Run) -> Discovery[None]:
        return Discovery((), ())

    def classify(self, path: Path) -> FileRole | None:
        return None


@pytest.fixture
def plugin() -> Iterator[None]:
    registry.register(_Plugin())
    try:
        yield
    finally:
        registry.unregister("plugin")


@pytest.mark.usefixtures("plugin")
@pytest.mark.parametrize("command", ["render", "watch"])
def test_format_offers_a_client_registered_after_the_command_is_defined(command: str) -> None:
    assert "|plugin-format|" in ctxasm([command, "--help"]).stdout


@pytest.mark.parametrize("command", ["render", "watch"])
def test_format_no_longer_offers_a_client_once_it_is_gone(command: str) -> None:
    help_text = ctxasm([command, "--help"]).stdout
    assert "--format [xml|markdown|json|claude-code|" in help_text
    assert "plugin-format" not in help_text
