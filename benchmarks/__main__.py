"""`make bench` = `python -m benchmarks`: every benchmark, then one line per target.

Each benchmark prints medians and ratios against a floor measured in the same run (the machine
is noisy), and returns its targets as `Check`s. Exit status: 0, unless a benchmark crashed or
`--strict` is given and a target was missed.

    python -m benchmarks [--only NAME ...] [--strict] [--quick]
"""

from __future__ import annotations

import argparse
import time
import traceback
from collections.abc import Callable

from . import (
    agents_doctor,
    assemble_deep,
    cache_cost,
    cold_render,
    conversation,
    corpus,
    lint_speed,
    memory,
    monorepo,
    reassemble,
    watch_latency,
)
from .harness import Check, heading


def _generate() -> list[Check]:
    heading("monorepo: the synthetic tree")
    monorepo.main([])
    return []


def suites(quick: bool) -> dict[str, Callable[[], list[Check]]]:
    return {
        "monorepo": _generate,
        "cold_render": lambda: cold_render.run(15 if quick else 21),
        "assemble_deep": lambda: assemble_deep.run(60 if quick else 150),
        "memory": lambda: memory.run(3 if quick else 5),
        "corpus": lambda: corpus.run(),
        "cache_cost": lambda: cache_cost.run(10 if quick else 20),
        "lint": lambda: lint_speed.run(15 if quick else 21),
        "reassemble": lambda: reassemble.run(100 if quick else 300),
        "watch_latency": lambda: watch_latency.run(20 if quick else 50),
        "agents_doctor": lambda: agents_doctor.run(1 if quick else 3),
        "conversation": lambda: conversation.run(1 if quick else 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--only", action="append", choices=list(suites(False)), default=[])
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    checks: list[Check] = []
    crashed: list[str] = []
    for name, suite in suites(args.quick).items():
        if args.only and name not in args.only:
            continue
        try:
            checks += suite()
        except Exception:  # report the others too; the crash is in the exit status
            traceback.print_exc()
            crashed.append(name)
    heading(f"summary ({time.perf_counter() - start:.0f} s)")
    for check in checks:
        print(check.line())
    for name in crashed:
        print(f"CRASH {name}")
    missed = [c for c in checks if not c.ok]
    print(f"{len(checks) - len(missed)} of {len(checks)} targets met")
    if crashed:
        return 2
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
