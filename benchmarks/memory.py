"""Peak memory of a monorepo run, in a fresh process, against the interpreter's own baseline.

The run: a fresh interpreter assembles the synthetic monorepo eight levels deep, renders it in
every format and attaches a touched file below cwd, then reports its `ru_maxrss`. The baseline:
a fresh interpreter that imports exactly the modules the run ended up with (read from the
run's `sys.modules`) and does nothing else. Medians over several runs, interleaved; target:
the run's peak <= 60 MiB.

On Linux a child's `ru_maxrss` starts at the RSS its *parent* had when it forked (the kernel
carries the old address space's high-water mark across `exec`), so a child started from this
(large) process would report our size, not its own. Children are therefore started through
`/bin/sh`, whose small address space is the one carried over; `VmHWM` from `/proc/self/status`
(per address space, reset by `exec`) is printed as a cross-check.

    python -m benchmarks.memory [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from typing import Any

from .harness import PROJECT, Check, compile_package, heading, median, python, report, row
from .monorepo import Monorepo, generate

TARGET_MIB = 60.0

_RUN = """
import json, resource, sys, tracemalloc
from assembler import assemble
cwd, home, managed, touched, trace = sys.argv[1:6]
if trace == "trace":  # a separate run: Python allocations of the work, imports excluded
    import assembler.output.render, jinja2, yaml
    assemble(cwd, home=home, managed_dir=managed, environ={}).text
    tracemalloc.start()
assembly = assemble(cwd, home=home, managed_dir=managed, environ={})
sizes = [len(assembly.render(fmt)) for fmt in ("xml", "markdown", "json", "claude-code")]
after = assembly.touch(touched)
sizes.append(len(after.text))
def hwm():
    try:
        with open("/proc/self/status") as status:
            return next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return 0
print(json.dumps({
    "vmhwm_kib": hwm(),
    "traced_peak": tracemalloc.get_traced_memory()[1],
    "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "sources": len(after.sources),
    "chars": sizes,
    "modules": sorted(sys.modules),
}))
"""

_BASELINE = """
import importlib, json, resource, sys
for name in json.load(sys.stdin):
    try:
        importlib.import_module(name)
    except Exception:
        pass
status = open("/proc/self/status").read() if sys.platform == "linux" else ""
hwm = next((int(l.split()[1]) for l in status.splitlines() if l.startswith("VmHWM:")), 0)
print(json.dumps({"maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "vmhwm_kib": hwm}))
"""


# `exit $?` keeps the shell from exec'ing python in its own place.
_LAUNCHER = ["/bin/sh", "-c", '"$@"; exit $?', "sh"] if os.name == "posix" else []


def _child(code: str, args: list[str], stdin: str | None = None) -> dict[str, Any]:
    done = subprocess.run(
        [*_LAUNCHER, python(), "-c", code, *args],
        cwd=PROJECT,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"benchmarks.memory: child failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def run_args(m: Monorepo) -> list[str]:
    touched = m.chain_dir(m.depth + 2) / "invoice_handler.ts"
    return [str(m.deep_cwd), str(m.home), str(m.managed), str(touched), "plain"]


def run(runs: int = 5) -> list[Check]:
    compile_package()
    heading("memory: peak RSS of a monorepo run (fresh process) vs the interpreter baseline")
    m = generate()
    args = run_args(m)
    first = _child(_RUN, args)
    modules = json.dumps(first["modules"])
    peaks: list[float] = []
    bases: list[float] = []
    hwms: list[float] = []
    base_hwms: list[float] = []
    for _ in range(runs):
        result = _child(_RUN, args)
        peaks.append(result["maxrss_kib"] / 1024)
        hwms.append(result["vmhwm_kib"] / 1024)
        baseline = _child(_BASELINE, [], modules)
        bases.append(baseline["maxrss_kib"] / 1024)
        base_hwms.append(baseline["vmhwm_kib"] / 1024)
    peak, base = median(peaks), median(bases)
    row("run", f"assemble depth {m.depth}, 4 formats, 1 touch: {first['sources']} sources")
    row(
        f"baseline: same {len(first['modules'])} modules imported, {runs} runs",
        f"median {base:.1f} MiB",
    )
    row(f"run: ru_maxrss, {runs} runs", f"median {peak:.1f} MiB (max {max(peaks):.1f})")
    row("run above the baseline", f"{(peak - base) * 1024:.0f} KiB ({peak / base:.2f}x)")
    if hwms[0]:
        row(
            "cross-check VmHWM: run / baseline", f"{median(hwms):.1f} / {median(base_hwms):.1f} MiB"
        )
    traced = _child(_RUN, [*args[:-1], "trace"])["traced_peak"]
    row("python allocations of a warm run (tracemalloc peak)", f"{traced / 1024:.0f} KiB")
    return [Check("memory: peak RSS of the monorepo run", peak, TARGET_MIB, " MiB")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    return report(run(args.runs))


if __name__ == "__main__":
    raise SystemExit(main())
