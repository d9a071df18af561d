"""Shared pieces of the benchmarks: where things are, timing, and how results are reported.

This machine is noisy (2 shared cores), so no benchmark compares against a fixed number of
milliseconds: each measures a *floor* in the same run, interleaved with the thing measured,
and reports medians and the ratio between them. Targets are ratios (or MiB for memory).
"""

from __future__ import annotations

import gc
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
# Generated trees live here (git-ignored); CTXASM_BENCH_WORK moves them, e.g. to a tmpfs.
WORK = Path(os.environ.get("CTXASM_BENCH_WORK") or PROJECT / "benchmarks" / ".work")
CORPUS = Path(os.environ.get("CTXASM_CORPUS") or PROJECT.parent / "shared" / "corpus")


@dataclass(frozen=True, slots=True)
class Check:
    """One target: what was measured, the limit, and whether it held."""

    name: str
    value: float
    limit: float
    unit: str

    @property
    def ok(self) -> bool:
        return self.value <= self.limit

    def line(self) -> str:
        verdict = "ok  " if self.ok else "MISS"
        value = f"{self.value:.0f}" if float(self.value).is_integer() else f"{self.value:.2f}"
        return f"{verdict} {self.name}: {value}{self.unit} (target <= {self.limit:g}{self.unit})"


def report(checks: Sequence[Check]) -> int:
    """Print one line per check; the exit status of a suite run alone (1: a target missed)."""
    for check in checks:
        print(check.line())
    return 0 if all(c.ok for c in checks) else 1


def python() -> str:
    """The interpreter running the benchmarks (the project's venv under `make bench`)."""
    return sys.executable


def venv_script(name: str) -> str:
    """A console script installed next to the running interpreter (e.g. `ctxasm`)."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"benchmarks: {name} is not installed; run `make bench` (it installs it)")
    return found


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def timed(func: Callable[[], object], clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds for one call, with the garbage collector paused (as `timeit` does);
    `clock=time.process_time` counts this process's CPU only (other load on the machine
    then moves it less)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = clock()
        func()
        return clock() - start
    finally:
        if enabled:
            gc.enable()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs"


def heading(title: str) -> None:
    print(f"\n== {title}", flush=True)


def row(label: str, value: str) -> None:
    print(f"  {label:<44} {value}", flush=True)


def compile_package() -> None:
    """Write `assembler`'s bytecode, as `pip install` does for a wheel.

    Without it, an editable checkout under `PYTHONDONTWRITEBYTECODE=1` (set on some machines)
    recompiles every module from source on each start, which is not what users run.
    """
    import compileall

    compileall.compile_dir(str(PROJECT / "assembler"), quiet=1)
