"""Latency of `ctxasm watch`: from a file write to the new output written (target <= 50 ms).

The watch runs in this process on the synthetic monorepo's deep cwd (eight levels down, every
ancestor watched), with the debounce at 0 so that only the work is measured: inotify delivery,
event filtering, the re-assembly (only the changed file is read again), rendering the xml and
writing the output atomically. Each edit rewrites a `CLAUDE.local.md` in the cwd (created
for the benchmark and removed afterwards) and waits until the output holds the new text; we
report the median over the edits, and the 90th percentile. With the default debounce (100 ms)
a render comes that much later.

    python -m benchmarks.watch_latency [--edits N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from .harness import Check, compile_package, heading, median, ms, report, row
from .monorepo import generate

LATENCY_TARGET_MS = 50.0
WARMUP = 5


def measure(edits: int) -> tuple[list[float], int]:
    from assembler import Assembler
    from assembler.commands.echo import write_output
    from assembler.live.watch import Watcher

    m = generate()
    local = m.deep_cwd / "CLAUDE.local.md"
    local.unlink(missing_ok=True)  # ours, from an interrupted run: the model has none here
    asm = Assembler(m.deep_cwd, home=m.home, managed_dir=m.managed, environ={})
    latencies: list[float] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        Watcher(asm, render=lambda a: a.text, debounce=0) as w,
    ):
        out = Path(tmp) / "ctx.xml"
        first = w.start()
        assert first.text is not None
        write_output(first.text, out)
        watched = len(w.directories)
        try:
            for i in range(WARMUP + edits):
                marker = f"edit number {i} of the latency benchmark"
                start = time.perf_counter()
                local.write_text(f"# Local notes\n\n{marker}\n")
                while True:
                    update = w.next_update(timeout=10)
                    if update is None:
                        raise RuntimeError(f"no render after edit {i}")
                    if update.text is not None and marker in update.text:
                        write_output(update.text, out)
                        break
                if i >= WARMUP:
                    latencies.append(time.perf_counter() - start)
        finally:
            local.unlink(missing_ok=True)
    return latencies, watched


def run(edits: int = 50) -> list[Check]:
    compile_package()
    heading(f"watch_latency: file write to new output, {edits} edits, debounce 0")
    latencies, watched = measure(edits)
    ordered = sorted(latencies)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    row("directories watched (non-recursive)", str(watched))
    row("latency: median / p90 / max", f"{ms(median(latencies))} / {ms(p90)} / {ms(ordered[-1])}")
    return [
        Check(
            "watch: write to new output, median (debounce excluded)",
            median(latencies) * 1000,
            LATENCY_TARGET_MS,
            " ms",
        )
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.watch_latency")
    parser.add_argument("--edits", type=int, default=50)
    args = parser.parse_args(argv)
    return report(run(args.edits))


if __name__ == "__main__":
    raise SystemExit(main())
