"""Re-assembly with nothing changed, eight levels deep in the synthetic monorepo, against the
floor of `os.stat` on the same paths (target <= 3x).

The floor is one `os.stat` of each path the client must look at for that cwd by the
generator's own model (files it reads, candidates it finds missing, rules directories it
lists): the least I/O that can prove nothing changed. It runs in the same process, interleaved
with `Assembler.assemble()`, many times; we report medians and their ratio. Also shown: the
same floor over the `Assembler`'s own dependency list (its pure overhead), the first (full)
assembly, a re-assembly after one file changed (only that file is read again) and a fresh
`assemble()` for comparison.

    python -m benchmarks.reassemble [--reps N]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .harness import Check, compile_package, heading, median, ms, report, row, timed, us
from .monorepo import CWD_DEPTH, Monorepo, generate

RATIO_TARGET = 3.0


def stat_floor(paths: Sequence[str]) -> Callable[[], None]:
    """One `os.stat` per path and nothing else (try/except: cheaper than `suppress`)."""
    stat = os.stat

    def run() -> None:
        for path in paths:
            try:  # noqa: SIM105 (suppress() costs more than the stat: the floor must be tight)
                stat(path)
            except OSError:
                pass

    return run


def model_paths(m: Monorepo) -> list[str]:
    return list(dict.fromkeys(str(p) for p in (*m.must_read, *m.must_stat, *m.must_list)))


def settled_assembler(m: Monorepo) -> Any:
    """An `Assembler` past its first run, once its signatures are old enough to be trusted
    (the generator rewrites a few files at every run)."""
    from assembler import Assembler

    asm = Assembler(m.deep_cwd, home=m.home, managed_dir=m.managed, environ={})
    first = timed(asm.assemble)
    deadline = time.monotonic() + 5
    while asm.reuses == 0 and time.monotonic() < deadline:
        asm.assemble()
    row("first assembly (full run)", ms(first))
    return asm


def one_change(m: Monorepo, asm: Any, reps: int) -> tuple[list[float], list[float]]:
    """A re-assembly after one file's times changed (read again), and a fresh `assemble()`."""
    from assembler import assemble

    target = m.deep_cwd / "CLAUDE.md"
    st = os.stat(target)
    changed, fresh = [], []
    try:
        for i in range(reps):
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + i + 1))
            changed.append(timed(asm.assemble))
            fresh.append(
                timed(lambda: assemble(m.deep_cwd, home=m.home, managed_dir=m.managed, environ={}))
            )
    finally:
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    return changed, fresh


def opened_after_one_change(m: Monorepo, asm: Any) -> list[str]:
    """The files a re-assembly opens after one file changed (should be that file alone)."""
    import sys

    target = m.deep_cwd / ".claude" / "CLAUDE.md"
    opened: list[str] = []
    counting = False

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if counting and event == "open" and isinstance(args[0], str) and args[0].endswith(".md"):
            opened.append(args[0])

    sys.addaudithook(hook)
    st = os.stat(target)
    deadline = time.monotonic() + 5
    before = asm.reuses
    while asm.reuses == before and time.monotonic() < deadline:  # settle again first
        asm.assemble()
    try:
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
        counting = True
        asm.assemble()
        counting = False
    finally:
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    return [str(Path(p).relative_to(m.root)) for p in opened]


def run(reps: int = 300) -> list[Check]:
    compile_package()
    heading(f"reassemble: Assembler.assemble() with nothing changed, cwd {CWD_DEPTH} levels deep")
    m = generate()
    asm = settled_assembler(m)
    paths = model_paths(m)
    deps = asm.dependencies.paths
    row("paths: the model's floor / the Assembler's", f"{len(paths)} / {len(deps)}")
    floor, own = stat_floor(paths), stat_floor(deps)
    again = asm.assemble
    for _ in range(20):
        floor(), own(), again()
    floors, owns, agains = [], [], []
    for _ in range(reps):
        floors.append(timed(floor))
        owns.append(timed(own))
        agains.append(timed(again))
    f_med, o_med, a_med = median(floors), median(owns), median(agains)
    row(
        f"floor: os.stat of the model's paths, {reps} runs", f"{us(f_med)} (best {us(min(floors))})"
    )
    row("os.stat of the Assembler's dependencies", us(o_med))
    row("Assembler.assemble(), nothing changed", f"{us(a_med)} (best {us(min(agains))})")
    row("  reused / full runs", f"{asm.reuses} / {asm.runs}")
    ratio = a_med / f_med
    row("ratio re-assembly / floor (medians)", f"{ratio:.2f}x")
    row("ratio re-assembly / stat of its own dependencies", f"{a_med / o_med:.2f}x")
    changed, fresh = one_change(m, asm, max(10, reps // 15))
    row("after one file changed: re-assembly (median)", ms(median(changed)))
    row("a fresh assemble() (median)", ms(median(fresh)))
    opened = opened_after_one_change(m, asm)
    row("files opened after one change", ", ".join(opened) or "none")
    return [
        Check("reassemble: nothing changed / os.stat floor (medians)", ratio, RATIO_TARGET, "x"),
        Check("reassemble: .md files read again after one change", len(opened), 1, ""),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reassemble")
    parser.add_argument("--reps", type=int, default=300)
    args = parser.parse_args(argv)
    return report(run(args.reps))


if __name__ == "__main__":
    raise SystemExit(main())
