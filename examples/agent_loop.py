"""A minimal agent turn loop over ctxasm and the official `anthropic` SDK.

It assembles the instruction context once, sends it as tiered `system` blocks with cache
breakpoints (one breakpoint left free for the conversation, which this loop moves to the last
message every turn), gives the model one tool, `read_file`, and attaches the instruction files
that reading a file lazily loads (nested CLAUDE.md, matching `.claude/rules`) to that tool's
result, as Claude Code does: the system blocks never change, so the cache keeps hitting.

    make demo && .venv/bin/pip install anthropic    # in a clone of ctxasm: both in .venv
    .venv/bin/python examples/agent_loop.py services/api --prompt "Where do handlers live?"

ctxasm is not on PyPI: elsewhere, `pip install anthropic /path/to/a/ctxasm/clone`.

It talks to any server that speaks the Messages API: `--base-url`, else `ANTHROPIC_BASE_URL`,
else Anthropic's. `--home` and `--managed-dir` point discovery at another setup.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anthropic

from assembler import Assembly, RequestOptions, Source, assemble

TOOLS = [
    {
        "name": "read_file",
        "description": "Read a text file of the project, by path relative to the working directory.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    }
]
MAX_READ_CHARS = (
    50_000  # Claude Code's DEFAULT_MAX_RESULT_SIZE_CHARS (Claude Code 2.1.88, `toolLimits.ts`)
)


def reminder(source: Source) -> str:
    """How Claude Code delivers a lazily loaded file (docs/claude-code.md, lazy loading)."""
    return (
        f"\n\n<system-reminder>\nContents of {source.path}:\n\n{source.content}\n</system-reminder>"
    )


def read_file(root: Path, path: str) -> tuple[Path | None, str]:
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        return None, f"{path}: outside the working directory"
    try:
        return target, target.read_text(encoding="utf-8", errors="replace")[:MAX_READ_CHARS]
    except OSError as err:
        return None, f"{path}: {err.strerror}"


def with_moving_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with one breakpoint, on the last block of the last message: the slot the
    system blocks left free (at most 4 per request: platform.claude.com/docs/en/build-with-claude/prompt-caching)."""
    out = [dict(m, content=[dict(b) for b in m["content"]]) for m in messages]
    for message in out:
        for block in message["content"]:
            block.pop("cache_control", None)
    out[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return out


def assistant_blocks(content: Sequence[Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in content:
        if block.type == "text":
            blocks.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            blocks.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
    return blocks


def run(client: anthropic.Anthropic, ctx: Assembly, prompt: str, model: str, max_turns: int) -> str:
    """Turns until the model stops asking for files; returns its last text."""
    request = json.loads(ctx.render("anthropic", options=RequestOptions(reserve_breakpoint=True)))
    root = ctx.context.cwd
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": prompt}]}
    ]
    for turn in range(1, max_turns + 1):
        response = client.messages.create(
            model=model,
            max_tokens=1024,
            system=request["system"],
            tools=TOOLS,  # type: ignore[arg-type]
            messages=with_moving_breakpoint(messages),  # type: ignore[arg-type]
        )
        usage = response.usage
        print(
            f"turn {turn}: {usage.input_tokens} input, {usage.cache_read_input_tokens or 0} "
            f"read from cache, {usage.cache_creation_input_tokens or 0} written",
            file=sys.stderr,
        )
        messages.append({"role": "assistant", "content": assistant_blocks(response.content)})
        text = "".join(b.text for b in response.content if b.type == "text")
        if response.stop_reason != "tool_use":
            return text
        results = []
        for block in response.content:
            if block.type != "tool_use":
                continue
            target, output = read_file(root, str(block.input.get("path", "")))
            if target is not None:
                later = ctx.touch(target)  # what reading it lazily loads ...
                output += "".join(reminder(s) for s in later.attached(ctx))  # ... rides along
                ctx = later
            results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
        messages.append({"role": "user", "content": results})
    return "(stopped after the last allowed turn)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options both examples take besides their prompts: where the agent starts, the model
    and server, and the machine the instruction context is assembled on."""
    parser.add_argument("path", nargs="?", default=".", help="the agent's working directory")
    parser.add_argument("--model", default="claude-sonnet-4-6")
    parser.add_argument("--base-url", default=os.environ.get("ANTHROPIC_BASE_URL"))
    parser.add_argument("--max-turns", type=int, default=8)
    parser.add_argument("--home", type=Path, help="home directory to use instead of ~")
    parser.add_argument("--managed-dir", type=Path, help="managed policy directory")


def context_and_client(args: argparse.Namespace) -> tuple[Assembly, anthropic.Anthropic]:
    """The instruction context of `args.path`, and the SDK client for `args.base_url`."""
    ctx = assemble(
        args.path,
        home=args.home or Path.home(),
        managed_dir=args.managed_dir,
        environ=dict(os.environ),
    )
    client = anthropic.Anthropic(
        base_url=args.base_url,
        # A local server needs no key; Anthropic's API reads ANTHROPIC_API_KEY.
        api_key=os.environ.get("ANTHROPIC_API_KEY") or "no-key-for-a-local-server",
    )
    return ctx, client


OFFLINE = ".venv/bin/python examples/xiaocheng.py"  # the example that needs no network


def unreachable(err: anthropic.APIConnectionError, client: anthropic.Anthropic) -> str:
    """One line for a server that cannot be reached, instead of the SDK's traceback, naming
    the example that runs without a network."""
    cause = " ".join(str(err.__cause__ or err).split())
    return (
        f"{Path(sys.argv[0]).name}: cannot reach the API at {client.base_url} ({cause}): check "
        f"the network or --base-url; to see the runtime without a network, run {OFFLINE}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompt", required=True)
    add_arguments(parser)
    args = parser.parse_args(argv)
    ctx, client = context_and_client(args)
    try:
        print(run(client, ctx, args.prompt, args.model, args.max_turns))
    except anthropic.APIConnectionError as err:  # a timeout too
        print(unreachable(err, client), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
