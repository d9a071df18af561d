"""examples/agent_loop.py against the local fake Messages API: one tool call, one answer."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers.fake_api import FakeAPI, anthropic_text, anthropic_tool_use
from tests.helpers.trees import ROOT, git_init


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_loop", ROOT / "examples" / "agent_loop.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _script(path: str, body: dict[str, Any]) -> dict[str, Any]:
    """First turn: read the handler; then answer."""
    if len(body["messages"]) == 1:
        return anthropic_tool_use("read_file", {"path": "src/handlers/users.ts"}, "toolu_1")
    return anthropic_text("Handlers live in src/handlers.")


def test_the_agent_loop_attaches_lazily_loaded_files_to_the_tool_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "fixtures" / "demo", tmp_path / "demo", symlinks=True)
    git_init(tmp_path / "demo" / "repo")
    api_dir = tmp_path / "demo" / "repo" / "services" / "api"
    monkeypatch.setenv("CLAUDE_CODE_PROJECT_DIR_NAME", "demo-repo")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with FakeAPI(_script).running() as api:
        code = _example().main(
            [
                str(api_dir),
                "--prompt",
                "Where do handlers live?",
                "--base-url",
                api.url,
                "--model",
                "claude-sonnet-4-6",
                "--home",
                str(tmp_path / "demo" / "home"),
                "--managed-dir",
                str(tmp_path / "demo" / "managed"),
            ]
        )
    out, err = capsys.readouterr()
    assert (code, out) == (0, "Handlers live in src/handlers.\n")
    assert err.splitlines() == [
        "turn 1: 10 input, 0 read from cache, 0 written",
        "turn 2: 10 input, 0 read from cache, 0 written",
    ]
    first, second = (r.body for r in api.requests)
    # Assembled once: both turns send the same system blocks, so the prefix stays cached.
    assert first["system"] == second["system"]
    assert [b["text"].split(" ", 1)[0] for b in first["system"]][:2] == [
        "<managed_policy",
        "<user_instructions",
    ]
    # The tool result carries the file and what reading it lazily loaded, as Claude Code does.
    [result] = second["messages"][-1]["content"]
    handlers = api_dir / "src" / "handlers"
    assert result["tool_use_id"] == "toolu_1"
    assert result["content"].startswith((handlers / "users.ts").read_text())
    assert result["content"].count("<system-reminder>\nContents of ") == 2
    assert f"<system-reminder>\nContents of {handlers / 'CLAUDE.md'}:\n\n" in result["content"]
    assert f"Contents of {api_dir / '.claude' / 'rules' / 'handlers.md'}:" in result["content"]
    # One breakpoint left free by the system blocks, used on the conversation's last block.
    for body in (first, second):
        marks = json.dumps(body).count('"cache_control"')
        assert marks <= 4
        assert "cache_control" in body["messages"][-1]["content"][-1]
        assert all("cache_control" not in b for m in body["messages"][:-1] for b in m["content"])
