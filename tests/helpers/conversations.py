"""One conversation written once, built in both message shapes (Anthropic blocks, OpenAI
tool_calls / role "tool"), and read back the same way from either."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from assembler.conversation import scan

SHAPES = ("anthropic", "openai")


class User(NamedTuple):
    text: str


class Say(NamedTuple):
    text: str


class Call(NamedTuple):
    id: str
    name: str
    input: dict[str, Any]


class Out(NamedTuple):
    id: str
    text: str
    error: bool = False


Step = User | Say | Call | Out


def build(shape: str, steps: Sequence[Step]) -> list[dict[str, Any]]:
    """The messages of `steps`: consecutive calls form one assistant message, consecutive
    results one user message (Anthropic) or one tool message each (OpenAI)."""
    out: list[dict[str, Any]] = []
    for step in steps:
        last = out[-1] if out else None
        if isinstance(step, User):
            out.append({"role": "user", "content": step.text})
        elif isinstance(step, Say):
            out.append({"role": "assistant", "content": step.text})
        elif isinstance(step, Call) and shape == "anthropic":
            use = {"type": "tool_use", "id": step.id, "name": step.name, "input": step.input}
            if last and last["role"] == "assistant" and isinstance(last["content"], list):
                last["content"].append(use)
            else:
                out.append({"role": "assistant", "content": [use]})
        elif isinstance(step, Call):
            call = {
                "id": step.id,
                "type": "function",
                "function": {"name": step.name, "arguments": json.dumps(step.input)},
            }
            if last and last["role"] == "assistant" and last.get("tool_calls"):
                last["tool_calls"].append(call)
            else:
                out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif shape == "anthropic":
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": step.id,
                "content": step.text,
            }
            if step.error:
                block["is_error"] = True
            if (
                last is not None
                and last["role"] == "user"
                and isinstance(last["content"], list)
                and last["content"][0]["type"] == "tool_result"
            ):
                last["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        else:
            out.append({"role": "tool", "tool_call_id": step.id, "content": step.text})
    return out


def results(messages: Sequence[Any]) -> dict[str, str]:
    """Each tool result's text by its call id, in order."""
    return {r.id: r.text for r in scan(messages).results}


def pairs_intact(messages: Sequence[Any]) -> bool:
    """Every result's call is in an earlier message, and every call has its results."""
    found = scan(messages)
    ids = {r.id for r in found.results}
    return all(r.id in found.calls and found.calls[r.id].at < r.at for r in found.results) and (
        set(found.calls) <= ids
    )


def session(size: int = 755) -> list[Step]:
    """The first article's session: ls -la, then two files read, then a question."""
    return [
        User("你好，你知道我是谁吗？"),
        Say("你好，小明！"),
        User("看看当前目录有什么文件"),
        Call("call_ls", "bash", {"command": "ls -la"}),
        Out("call_ls", "l" * size),
        Say("当前目录有 bootstrap.js、compress.js、index.js 等文件"),
        User("读一下 compress.js"),
        Call("call_c", "read_file", {"path": "compress.js"}),
        Out("call_c", "c" * 4097),
        Say("compress.js 是对话历史压缩模块"),
        User("读一下 index.js"),
        Call("call_i", "read_file", {"path": "index.js"}),
        Out("call_i", "i" * 5372),
        Say("index.js 是主入口"),
        User("总结一下我们今天聊了什么"),
    ]
