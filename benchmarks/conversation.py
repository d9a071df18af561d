"""The conversation runtime on a long list: every level on 30,000 tool results (issue 22).

The floor is `scan()` of the same list, measured in the same run: the one pass over every
message that each level starts with. The whole pipeline (`prepare`) is also given against
one `json.dumps` of the list (issue 34: target 3x), the cost of writing it once, which a
compaction pays at least for `raw.jsonl` and again for the summariser's transcript. Each level is reported as a ratio against it, and as
the growth from N to 2N results (2.0: linear; a quadratic pass shows as 4.0). Three shapes:
one result per message (Anthropic), every result in one user message (over the
per-message budget: persisting writes a file for most results, so there only the growth is
a target), and OpenAI tool messages.

    python -m benchmarks.conversation [--results N] [--reps N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from typing import Any

from .harness import Check, heading, median, ms, report, row, timed

RESULTS = 30_000
LEVEL_TARGET = 12.0  # a level against one scan of the list
PREPARE_TARGET = 40.0  # the whole pipeline (a dozen passes, raw.jsonl, the summary request)
DUMPS_TARGET = 3.0  # the whole pipeline against one json.dumps of the list
GROWTH = 2.6  # time for 2N results / time for N (2.0 is linear, 4.0 quadratic)
SHAPES = ("one per message", "one message", "openai")
TEXT = "x" * 400
CPU = time.process_time  # over prune's 300 characters: every old result is cut


def long_conversation(results: int, shape: str = SHAPES[0], tool: str = "Read") -> list[Any]:
    """A user request, then `results` calls of `tool` each with its result (every `Read`
    reads its own file), then three short exchanges."""
    messages: list[Any] = [{"role": "user", "content": "go"}]
    if shape == "openai":
        for i in range(results):
            function = {"name": tool, "arguments": f'{{"path": "f{i}"}}'}
            call = {"id": f"t{i}", "type": "function", "function": function}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"t{i}", "content": TEXT})
    else:
        uses = [
            {"type": "tool_use", "id": f"t{i}", "name": tool, "input": {"path": f"f{i}"}}
            for i in range(results)
        ]
        outs = [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": TEXT} for i in range(results)
        ]
        if shape == "one message":
            messages += [{"role": "assistant", "content": uses}, {"role": "user", "content": outs}]
        else:
            for use, out in zip(uses, outs, strict=True):
                messages.append({"role": "assistant", "content": [use]})
                messages.append({"role": "user", "content": [out]})
    for turn in range(3):  # a short chat after: collapse and compaction keep the last four
        messages.append({"role": "assistant", "content": f"answer {turn}"})
        messages.append({"role": "user", "content": f"question {turn}"})
    return messages


def summarize(request: list[dict[str, str]]) -> str:
    return "<summary>s</summary>"


def levels(store: str) -> dict[str, Callable[[list[Any]], object]]:
    """Each level as one call on a list (a new `Conversation` for each pipeline run)."""
    from assembler import conversation as c

    def prepare(micro: Any, compacting: bool) -> Callable[[list[Any]], object]:
        def run(messages: list[Any]) -> object:
            levels = c.Levels(prune=True, micro=micro)
            conv = c.Conversation(store_dir=store, summarize=summarize, threshold=10, levels=levels)
            conv.record(100 if compacting else None)
            return conv.prepare(messages)

        return run

    return {
        "prune": lambda m: c.prune_tool_results(m),
        "clear (time)": lambda m: c.clear_old_tool_results(m, last_request_at=0, now=7200),
        "cache edits": lambda m: c.cache_edit_tool_results(m),
        "persist": lambda m: c.persist_results(m, store_dir=store),
        "collapse": lambda m: c.apply_collapse(m, c.stage_collapse(m, summarize=summarize)),
        "compact": lambda m: c.compact(m, summarize=summarize, sessions_dir=store),
        "prepare (time)": prepare(c.Micro.TIME, False),
        "prepare (cache)": prepare(c.Micro.CACHE, False),
        "prepare, compacting": prepare(c.Micro.TIME, True),
    }


def measure(results: int, shape: str, reps: int) -> dict[str, float]:
    """Median CPU seconds of the floor and of each level, interleaved, on `results` results
    (CPU, not wall-clock: the growth from N to 2N is the point, and other load on a shared
    machine blurs it)."""
    import json

    from assembler.conversation import scan

    messages = long_conversation(results, shape)
    times: dict[str, list[float]] = {"scan": [], "json.dumps": []}
    with tempfile.TemporaryDirectory() as store:
        runs = levels(store)
        for _ in range(reps):
            times["scan"].append(timed(lambda: scan(messages), CPU))
            times["json.dumps"].append(timed(lambda: json.dumps(messages), CPU))
            for name, level in runs.items():
                times.setdefault(name, []).append(timed(lambda: level(messages), CPU))  # noqa: B023
    return {name: median(values) for name, values in times.items()}


def run(reps: int = 3, results: int = RESULTS) -> list[Check]:
    checks = []
    for shape in SHAPES:
        heading(f"conversation: every level on {results:,} tool results, {shape}")
        single = measure(results, shape, reps)
        double = measure(2 * results, shape, reps)
        row("floor: scan()", ms(single["scan"]))
        row("json.dumps of the list", ms(single["json.dumps"]))
        for name, seconds in single.items():
            if name in ("scan", "json.dumps"):
                continue
            ratio = seconds / single["scan"]
            growth = double[name] / seconds
            row(name, f"{ms(seconds)}  {ratio:.1f}x scan  x{growth:.2f} for 2N")
            checks.append(Check(f"conversation {name}, {shape} (2N / N)", growth, GROWTH, "x"))
            if shape == "one message" and (name == "persist" or name.startswith("prepare")):
                continue  # one message over the 200,000-character budget: a file per result
            target = PREPARE_TARGET if name.startswith("prepare") else LEVEL_TARGET
            checks.append(Check(f"conversation {name}, {shape} (x scan)", ratio, target, "x"))
            if name.startswith("prepare") and shape == SHAPES[0]:
                dumps = seconds / single["json.dumps"]
                row(f"  {name} / json.dumps", f"{dumps:.1f}x")
                checks.append(
                    Check(f"conversation {name}, {shape} (x json.dumps)", dumps, DUMPS_TARGET, "x")
                )
    return checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.conversation")
    parser.add_argument("--results", type=int, default=RESULTS)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args(argv)
    return report(run(args.reps, args.results))


if __name__ == "__main__":
    raise SystemExit(main())
