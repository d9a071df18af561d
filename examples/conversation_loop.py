"""An agent loop through the official `anthropic` SDK with ctxasm's conversation runtime.

The instruction context goes in `system` (assembled once, so the prefix stays cached); every
call goes through `Conversation.prepare` first: large tool outputs persisted to disk, old
results cleared (time-based, or with `--cache-edits` the `cache_reference` / `cache_edits`
request shape), context collapse and full compaction with Claude Code's nine-part prompt,
summarised through the same SDK. Each action prints as an event on stderr.

    make demo && .venv/bin/pip install anthropic    # in a clone of ctxasm: both in .venv
    .venv/bin/python examples/conversation_loop.py services/api \\
        --prompt "Where do handlers live?" \\
        --prompt "And the tests?"

ctxasm is not on PyPI: elsewhere, `pip install anthropic /path/to/a/ctxasm/clone`.

It talks to any server that speaks the Messages API: `--base-url`, else `ANTHROPIC_BASE_URL`,
else Anthropic's. `cache_edits` is not part of Anthropic's public API: `--cache-edits` shows
the request shape (against a local server) and is off by default.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anthropic

from assembler import Assembly
from assembler.conversation import Conversation, Levels, Micro, split_system

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_loop import (  # the other example, beside this one
    TOOLS,
    add_arguments,
    assistant_blocks,
    context_and_client,
    unreachable,
)

MAX_READ_BYTES = 1 << 20  # the runtime persists what is over 50,000 characters


def read_file(root: Path, path: str) -> tuple[str, bool]:
    """(the text, whether it is an error)."""
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        return f"{path}: outside the working directory", True
    try:
        with target.open("rb") as handle:
            return handle.read(MAX_READ_BYTES).decode("utf-8", "replace"), False
    except OSError as err:
        return f"{path}: {err.strerror}", True


def summarizer(client: anthropic.Anthropic, model: str) -> Any:
    """The runtime's `summarize` through the SDK: one call, no tools, 20,000 tokens out."""

    def summarize(request: list[dict[str, str]]) -> str:
        system, messages = split_system(request)
        # Claude Code's MAX_OUTPUT_TOKENS_FOR_SUMMARY; no tools: the prompt says text only.
        options: dict[str, Any] = {"model": model, "max_tokens": 20_000, "messages": messages}
        if system:
            options["system"] = system
        response = client.messages.create(**options)
        return "".join(b.text for b in response.content if b.type == "text")

    return summarize


def run(
    client: anthropic.Anthropic,
    ctx: Assembly,
    conv: Conversation,
    prompts: Sequence[str],
    model: str,
    max_turns: int,
) -> list[str]:
    """Each prompt in turn, tool calls answered until the model stops; its answers."""
    system = [{"type": "text", "text": t} for t in (ctx.static_text, ctx.dynamic_text) if t]
    root = ctx.context.cwd
    messages: list[Any] = []
    answers = []
    for text in prompts:
        messages.append({"role": "user", "content": [{"type": "text", "text": text}]})
        for _ in range(max_turns):
            ready = conv.prepare(messages)
            for event in ready.events:
                print(event, file=sys.stderr)
            messages = ready.messages
            response = client.messages.create(
                model=model,
                max_tokens=4096,
                system=system,  # type: ignore[arg-type]
                tools=TOOLS,  # type: ignore[arg-type]
                messages=ready.request,
            )
            usage = response.usage
            conv.record(
                usage.input_tokens
                + (usage.cache_read_input_tokens or 0)
                + (usage.cache_creation_input_tokens or 0)
            )
            messages.append({"role": "assistant", "content": assistant_blocks(response.content)})
            if response.stop_reason != "tool_use":
                answers.append("".join(b.text for b in response.content if b.type == "text"))
                break
            results = []
            for block in response.content:
                if block.type == "tool_use":
                    output, failed = read_file(root, str(block.input.get("path", "")))
                    result = {"type": "tool_result", "tool_use_id": block.id, "content": output}
                    results.append({**result, "is_error": True} if failed else result)
            messages.append({"role": "user", "content": results})
        else:
            answers.append("(stopped after the last allowed turn)")
    return answers


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompt", action="append", required=True, help="a user turn (repeat)")
    add_arguments(parser)
    parser.add_argument("--context-window", type=int, default=200_000)
    parser.add_argument("--threshold", type=int, help="compact at this many prompt tokens")
    parser.add_argument("--cache-edits", action="store_true", help="cache-preserving clearing")
    parser.add_argument("--store-dir", type=Path, help="tool-results/ and sessions/ (a temp dir)")
    args = parser.parse_args(argv)
    ctx, client = context_and_client(args)
    conv = Conversation(
        ctx,
        store_dir=args.store_dir or Path(tempfile.mkdtemp(prefix="ctxasm-conversation-")),
        context_window=args.context_window,
        threshold=args.threshold,
        summarize=summarizer(client, args.model),
        levels=Levels(micro=Micro.CACHE if args.cache_edits else Micro.TIME),
        reattach_instructions=False,  # they are in `system`, which compaction never drops
    )
    try:
        for answer in run(client, ctx, conv, args.prompt, args.model, args.max_turns):
            print(answer)
    except anthropic.APIConnectionError as err:  # a timeout too
        print(unreachable(err, client), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
