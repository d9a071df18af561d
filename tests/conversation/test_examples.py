"""The conversation examples run: `examples/xiaocheng.py` (the first article's demo, offline)
and `examples/conversation_loop.py` (the real `anthropic` SDK against the local fake server)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from assembler.conversation import prompt
from tests.helpers.fake_api import FakeAPI, anthropic_text, anthropic_tool_use
from tests.helpers.trees import ROOT, build


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_xiaocheng_prints_the_articles_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _example("xiaocheng").main(["--store-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[:4] == [
        "=== 小橙 · 个人助理 Agent ===",
        "演示上下文管理：Bootstrap + 剪枝 + 压缩",
        "[Bootstrap] System prompt loaded",
        "[Config] Token threshold: 6000",
    ]
    prompts = re.findall(r"^\[Tokens: (\S+) / 6000\] You: (.+)$", out, re.M)
    assert [p for _, p in prompts] == [
        "你好，你知道我是谁吗？",
        "看看当前目录有什么文件",
        "读一下 compact.py",
        "读一下 pipeline.py",
        "总结一下我们今天聊了什么",
    ]
    counts = [c for c, _ in prompts]
    assert counts[0] == "—" and all(c.isdigit() for c in counts[1:])
    assert [int(c) for c in counts[1:]] == sorted(int(c) for c in counts[1:])
    assert int(counts[-1]) >= 6000 > int(counts[-2])
    # Bootstrap: the agent knows its user from the fixture's user.md.
    assert "Agent: 你好，小明！当然知道你是谁。" in lines
    assert '  [Step 1] Tool: bash({"command":"ls -la"})' in lines
    # The last turn: prune the oldest result, then compress, as in the article.
    raw = tmp_path / "sessions" / "raw.jsonl"
    last = lines.index(f"[Tokens: {counts[-1]} / 6000] You: 总结一下我们今天聊了什么")
    tail = lines[last + 1 : last + 4]
    prune = re.fullmatch(r"  \[Prune\] Tool result truncated: (\d+) → (\d+) chars", tail[0])
    assert prune is not None
    before, after = map(int, prune.groups())
    assert after == 200 + len(f"\n...(truncated, original: {before} chars)")
    assert tail[1:] == [
        f"  [Compress] Persisting 15 messages to {raw}",
        f"  [Compress] {counts[-1]} → (compressed, awaiting next LLM call)",
    ]
    [saved] = [json.loads(line) for line in raw.read_text(encoding="utf-8").splitlines()]
    snapshot = json.loads((tmp_path / "sessions" / "ctx.json").read_text(encoding="utf-8"))
    assert len(saved) == 15 and snapshot[1:] == saved[-4:]
    assert snapshot[0]["role"] == "assistant" and snapshot[0]["content"].startswith(
        "[对话摘要]\n用户小明"
    )
    # The answer names every file read: the summary's and those of the kept messages (it
    # named compact.py alone, though pipeline.py was read too: issue 34).
    [answer] = [line for line in lines if line.startswith("Agent: 今天我们主要做了这些事")]
    assert "compact.py" in answer and answer.endswith("之后又读了：pipeline.py。")


def test_xiaocheng_runs_in_one_command(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "xiaocheng.py"), "--store-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "  [Compress] Persisting 15 messages to " in done.stdout


@pytest.mark.skipif(
    not (ROOT / ".venv" / "bin" / "python").exists(), reason="the README's command runs .venv"
)
def test_the_readme_command_runs_as_written(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (command,) = re.findall(r"^(\S*python\S* examples/xiaocheng\.py)\b", readme, re.MULTILINE)
    assert command == ".venv/bin/python examples/xiaocheng.py"
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=ROOT,  # where the README's commands run: the clone
        env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)},  # its store lands in tmp_path
        capture_output=True, text=True, encoding="utf-8", timeout=120, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert "[Tokens: " in done.stdout and "  [Compress] Persisting 15 messages to " in done.stdout


def _is_summary(body: dict[str, Any]) -> bool:
    return "tools" not in body


def _compaction_script(path: str, body: dict[str, Any]) -> dict[str, Any]:
    """Prompt 1: read a 60,000-character log, then answer (reporting 1,200 prompt tokens);
    prompt 2 is compacted first, then answered."""
    if _is_summary(body):
        return anthropic_text(
            "<analysis>drop me</analysis><summary>The user read big.log.</summary>"
        )
    last = body["messages"][-1]["content"]
    if last[0].get("text") == "Read big.log":
        return anthropic_tool_use("read_file", {"path": "big.log"}, "toolu_big")
    reply = anthropic_text("Read it." if last[0]["type"] == "tool_result" else "Done.")
    reply["usage"]["input_tokens"] = 1_200
    return reply


def _run_loop(tmp_path: Path, script: Any, *options: str) -> FakeAPI:
    project = build(
        tmp_path / "project",
        {"big.log": "L" * 60_000, **{f"f{i}.txt": f"file {i}" for i in range(7)}},
    )
    with FakeAPI(script).running() as api:
        code = _example("conversation_loop").main(
            [
                str(project),
                *options,
                "--base-url",
                api.url,
                "--store-dir",
                str(tmp_path / "store"),
                "--home",
                str(tmp_path / "home"),
                "--managed-dir",
                str(tmp_path / "managed"),
            ]
        )
    assert code == 0
    return api


def test_the_anthropic_loop_persists_and_compacts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    api = _run_loop(
        tmp_path,
        _compaction_script,
        "--prompt",
        "Read big.log",
        "--prompt",
        "And now?",
        "--threshold",
        "1000",
    )
    out, err = capsys.readouterr()
    assert out == "Read it.\nDone.\n"
    store = (tmp_path / "store").resolve()
    events = err.splitlines()
    assert events[0].startswith(
        f"[Persist] Tool result saved to {store / 'tool-results' / 'toolu_big.txt'}: 60000 → "
    )
    assert events[1:] == [
        f"[Compress] Persisting 5 messages to {tmp_path / 'store' / 'sessions' / 'raw.jsonl'}",
        "[Compress] 1200 → (compressed, awaiting next LLM call)",
    ]
    bodies = [r.body for r in api.requests]
    assert [_is_summary(b) for b in bodies] == [False, False, True, False]
    # The persisted block went to the model in place of the 60,000 characters.
    sent = bodies[1]["messages"][-1]["content"][0]["content"]
    assert sent.startswith("<persisted-output>\nOutput too large (58.6KB). Full output saved to: ")
    # The summariser's call: the conversation as text, then the nine-part prompt; no tools.
    summary_call = bodies[2]
    assert summary_call["max_tokens"] == 20_000 and "system" not in summary_call
    assert summary_call["messages"][0]["content"].startswith("[user] ")
    assert summary_call["messages"][1] == {"role": "user", "content": prompt("nine-part").text}
    # After compaction: the summary first, the last four messages kept (tool pair intact).
    after = bodies[3]["messages"]
    assert after[0] == {"role": "user", "content": "[Conversation summary]\nThe user read big.log."}
    assert [m["role"] for m in after] == ["user", "assistant", "user", "assistant", "user"]
    assert after[1]["content"][0]["type"] == "tool_use"
    assert bodies[0]["system"] == bodies[3]["system"]  # the instruction context never moved


def _many_reads(path: str, body: dict[str, Any]) -> dict[str, Any]:
    last = body["messages"][-1]["content"]
    if last[-1].get("text") == "Read them all":
        reply = anthropic_tool_use("read_file", {"path": "f0.txt"}, "toolu_0")
        reply["content"] = [
            {
                "type": "tool_use",
                "id": f"toolu_{i}",
                "name": "read_file",
                "input": {"path": f"f{i}.txt"},
            }
            for i in range(7)
        ]
        return reply
    return anthropic_text("ok")


def test_the_anthropic_loop_sends_cache_edits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    api = _run_loop(
        tmp_path, _many_reads, "--prompt", "Read them all", "--prompt", "Next", "--cache-edits"
    )
    out, err = capsys.readouterr()
    assert out == "ok\nok\n"
    assert err.splitlines() == [f"[Micro] Cache edit: delete toolu_{i}" for i in range(4)]
    last = api.requests[-1].body["messages"]
    results = last[2]["content"]
    assert [b.get("cache_reference") for b in results] == [f"toolu_{i}" for i in range(4)] + [
        None
    ] * 3
    assert last[-1]["content"][0] == {
        "type": "cache_edits",
        "edits": [{"type": "delete", "cache_reference": f"toolu_{i}"} for i in range(4)],
    }
    assert last[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert json.dumps(last).count("cache_control") == 1


@pytest.mark.parametrize("example", ["agent_loop", "conversation_loop"])
def test_an_unreachable_api_is_one_line_naming_the_offline_example(
    example: str, tmp_path: Path
) -> None:
    """No server where the API should be (a port nothing listens on): one line, not the
    SDK's traceback, and how to run the example that needs no network."""
    with socket.socket() as probe:  # a free port, closed again: connections are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    project = build(tmp_path / "project", {"CLAUDE.md": "Be brief."})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    api = ["--prompt", "hi", "--base-url", f"http://127.0.0.1:{port}"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / f"{example}.py"), str(project), *api, *machine],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(
        f"{example}.py: cannot reach the API at http://127.0.0.1:{port} ("
    )
    assert done.stderr.endswith(
        "check the network or --base-url; to see the runtime without a network, run "
        ".venv/bin/python examples/xiaocheng.py\n"
    )
