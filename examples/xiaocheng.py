"""小橙 (Xiaocheng): the first seed article's demo agent, end to end, offline.

    .venv/bin/python examples/xiaocheng.py    # in a clone, after `make demo`

Bootstrap first: ctxasm renders `fixtures/bootstrap` as the article's system prompt (soul,
user profile, rules, memory index). Then the article's five prompts, each through its
`chat()`: prune → compress → the model, in a ReAct loop of at most ten steps. Before each
prompt it prints `[Tokens: N / 6000]`, the prompt tokens the model reported for the last call
(the article's trigger: no estimate of our own); then the `[Prune]` and `[Compress]` lines of
`assembler.conversation`. `raw.jsonl` and `ctx.json` land in `--store-dir` (default: a new
temporary directory, printed at the end).

The model is scripted (no network, no key): it answers from the system prompt, calls the
article's two tools (`bash` for `ls -la`, `read_file`) on this runtime's own sources (as the
article's agent read its own `compress.js` and `index.js`), and reports its prompt tokens as
ctxasm's estimate of what it was sent. Its `bash` answers only `ls -la`, from the listing,
without dates or owners, so the trace is the same on every machine.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from assembler import assemble
from assembler.conversation import Conversation, Levels, Micro, prompt
from assembler.tokens import estimate_tokens

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = (
    "你好，你知道我是谁吗？",
    "看看当前目录有什么文件",
    "读一下 compact.py",
    "读一下 pipeline.py",
    "总结一下我们今天聊了什么",
)
MAX_ITERATIONS = 10


class Reply(NamedTuple):
    text: str
    calls: tuple[tuple[str, str, dict[str, Any]], ...]  # (id, tool, args)
    prompt_tokens: int


def ls_la(project: Path) -> str:
    """`ls -la` of `project`, without dates or owners."""
    lines = [f"total {len(list(project.iterdir()))}"]
    for entry in sorted(project.iterdir()):
        kind = "d" if entry.is_dir() else "-"
        size = 4096 if entry.is_dir() else entry.stat().st_size
        lines.append(f"{kind}rw-r--r--  1 xiaocheng  staff  {size:>6}  {entry.name}")
    return "\n".join(lines)


def run_tool(project: Path, name: str, args: dict[str, Any]) -> str:
    if name == "bash":
        if args.get("command") != "ls -la":
            return "bash: this demo shell runs only `ls -la`"
        return ls_la(project)
    target = (project / str(args.get("path", ""))).resolve()
    if not target.is_relative_to(project) or not target.is_file():
        return f"{args.get('path')}: no such file"
    return target.read_text(encoding="utf-8")


def model(system: str, messages: Sequence[dict[str, Any]]) -> Reply:
    """The scripted model: one tool call for a prompt that needs one, then an answer."""
    tokens = estimate_tokens(system + json.dumps(list(messages), ensure_ascii=False))
    last_user = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    answered = messages[-1]["role"] == "tool"
    if last_user.startswith("看看") and not answered:
        return Reply("", (("call_ls", "bash", {"command": "ls -la"}),), tokens)
    if last_user.startswith("读一下") and not answered:
        path = last_user.split()[-1]
        return Reply("", ((f"call_{path}", "read_file", {"path": path}),), tokens)
    if answered:
        result = messages[-1]["content"]
        if result.startswith("total"):
            names = [line.split()[-1] for line in result.splitlines()[1:]]
            return Reply(f"当前目录有 {'、'.join(names[:4])} 等文件。", (), tokens)
        first = result.split('"""', 2)[1].strip().splitlines()[0] if '"""' in result else result
        return Reply(f"{last_user.split()[-1]}：{first}", (), tokens)
    name = re.search(r"姓名：(\S+)", system)
    if last_user.startswith("你好"):
        return Reply(f"你好，{name.group(1) if name else '朋友'}！当然知道你是谁。", (), tokens)
    summary = next(
        (m["content"] for m in messages if str(m["content"]).startswith("[对话摘要]")), ""
    )
    earlier = summary.removeprefix("[对话摘要]\n") or "；".join(
        m["content"] for m in messages[:-1] if m["role"] == "user"
    )
    # Files read after the summarised part (the kept messages), not only those it names.
    later = [
        json.loads(call["function"]["arguments"]).get("path", "")
        for m in messages
        for call in m.get("tool_calls") or ()
        if call["function"]["name"] == "read_file"
    ]
    read = earlier.rpartition("读过的文件：")[2]  # the summary's list of files read
    more = [p for p in dict.fromkeys(later) if p and p not in read]
    if more:
        earlier += f"之后又读了：{'、'.join(more)}。"
    return Reply(f"今天我们主要做了这些事——{earlier}", (), tokens)


def summarize(request: list[dict[str, str]]) -> str:
    """The scripted summariser: the user's requests and the files read, from the transcript."""
    conversation = request[-1]["content"]
    asked = re.findall(r"^\[user\] (.+)$", conversation, re.M)
    files = re.findall(r'\\"path\\": \\"([^"\\]+)', conversation)  # inside tool_calls' JSON
    return f"用户小明，前端工程师。用户的请求：{'；'.join(asked)}。读过的文件：{'、'.join(files)}。"


def chat(conv: Conversation, messages: list[Any], system: str, project: Path) -> list[Any]:
    """The article's `chat()`: prune and compress, then the ReAct loop."""
    ready = conv.prepare(messages)
    for event in ready.events:
        print(f"  {event}")
    messages = ready.messages
    for step in range(1, MAX_ITERATIONS + 1):
        reply = model(system, messages)
        conv.record(reply.prompt_tokens)
        if not reply.calls:
            print(f"Agent: {reply.text}\n")
            return [*messages, {"role": "assistant", "content": reply.text}]
        calls = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in reply.calls
        ]
        messages = [*messages, {"role": "assistant", "content": None, "tool_calls": calls}]
        for call_id, name, args in reply.calls:
            result = run_tool(project, name, args)
            shown = json.dumps(args, ensure_ascii=False, separators=(",", ":"))  # JSON.stringify
            print(f"  [Step {step}] Tool: {name}({shown})")
            preview = result[:120].replace("\n", "\\n")
            print(f"           Result: {preview}{'...' if len(result) > 120 else ''}")
            messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    print("Agent: （达到最大迭代次数）\n")
    return messages


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, default=ROOT / "fixtures" / "bootstrap")
    parser.add_argument("--project", type=Path, default=ROOT / "assembler" / "conversation")
    parser.add_argument("--store-dir", type=Path, help="where sessions/ goes (default: a temp dir)")
    parser.add_argument("--threshold", type=int, default=6000)
    args = parser.parse_args(argv)
    store = args.store_dir or Path(tempfile.mkdtemp(prefix="xiaocheng-"))
    seed = ROOT / "fixtures" / "bootstrap-seed.toml"
    system = assemble(
        args.workspace,
        policy=str(seed),
        home=store / "home",
        managed_dir=store / "managed",
        environ={},
    ).text
    conv = Conversation(
        store_dir=store,
        summarize=summarize,
        threshold=args.threshold,
        levels=Levels(prune=True, micro=Micro.OFF, collapse=False),
        keep_recent=4,
        prompt=prompt("compress"),
        summary_role="assistant",
        summary_prefix="[对话摘要]\n",
        read_tools=(),  # the article's compress re-attaches nothing
    )
    print("=== 小橙 · 个人助理 Agent ===")
    print("演示上下文管理：Bootstrap + 剪枝 + 压缩")
    print("[Bootstrap] System prompt loaded")
    print(f"[Config] Token threshold: {args.threshold}\n")
    messages: list[Any] = []
    for text in PROMPTS:
        shown = "—" if conv.last_prompt_tokens is None else conv.last_prompt_tokens
        print(f"[Tokens: {shown} / {args.threshold}] You: {text}")
        messages = chat(
            conv, [*messages, {"role": "user", "content": text}], system, args.project.resolve()
        )
    print(f"[Session] {conv.sessions_dir}: raw.jsonl and ctx.json ({len(messages)} messages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
