"""Cold `ctxasm render` of the demo fixture vs a fresh interpreter importing its dependencies.

Both are fresh processes, run interleaved (the order alternates each round) so that noise on
this shared machine hits both alike; we report the median wall time of each and the ratio
(target <= 1.25). The floor, `python -c "import click, jinja2, yaml"`, is what
any CLI on this stack pays before doing anything. Then `-X importtime` (as
`PYTHONPROFILEIMPORTTIME=1`, so the console script runs unchanged) names the slowest imports.

    python -m benchmarks.cold_render [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from .harness import (
    PROJECT,
    Check,
    compile_package,
    heading,
    median,
    ms,
    python,
    report,
    row,
    venv_script,
)

RATIO_TARGET = 1.25
DEMO_ARGS = (
    "render",
    "fixtures/demo/repo/services/api",
    "--home",
    "fixtures/demo/home",
    "--managed-dir",
    "fixtures/demo/managed",
    "--touch",
    "fixtures/demo/repo/services/api/src/handlers/users.ts",
)  # exactly `make demo`
FLOOR_CODE = "import click, jinja2, yaml"


def commands() -> tuple[list[str], list[str]]:
    return [venv_script("ctxasm"), *DEMO_ARGS], [python(), "-c", FLOOR_CODE]


def import_only() -> list[str]:
    """The floor plus importing the CLI and the library (everything but the work)."""
    code = f"{FLOOR_CODE}; import assembler.commands.render, assembler.assembly, assembler.output.render"
    return [python(), "-c", code]


def wall(cmd: Sequence[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        cmd, cwd=PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):  # 1: findings; anything else is a broken run
        raise SystemExit(f"benchmarks: {' '.join(cmd)} exited {done.returncode}")
    return elapsed


def interleaved(cmds: Sequence[Sequence[str]], runs: int) -> list[list[float]]:
    """Wall times of each command, `runs` rounds, the order rotating every round."""
    for _ in range(2):  # warm the page cache and the bytecode caches
        for cmd in cmds:
            wall(cmd)
    times: list[list[float]] = [[] for _ in cmds]
    for i in range(runs):
        for k in range(len(cmds)):
            j = (i + k) % len(cmds)
            times[j].append(wall(cmds[j]))
    return times


def import_times(cmd: Sequence[str], runs: int = 5) -> dict[str, tuple[float, float, int]]:
    """module -> (median self µs, median cumulative µs, nesting level) over `runs` runs."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    selfs: dict[str, list[float]] = defaultdict(list)
    cumuls: dict[str, list[float]] = defaultdict(list)
    level: dict[str, int] = {}
    for _ in range(runs):
        done = subprocess.run(
            cmd, cwd=PROJECT, env=env, capture_output=True, text=True, check=False
        )
        for line in done.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, cumulative, name = line[len("import time:") :].split("|")
            module = name.strip()
            selfs[module].append(float(self_us))
            cumuls[module].append(float(cumulative))
            level[module] = (len(name) - len(name.lstrip()) - 1) // 2
    return {m: (median(selfs[m]), median(cumuls[m]), level[m]) for m in selfs}


def report_imports(top: int = 10) -> None:
    cli, floor = commands()
    ours = import_times(cli)
    base = import_times(floor)
    print(f"  -X importtime, `ctxasm render` (median of 5), the {top} slowest cumulative imports:")
    print("      cumul     self  module")
    for module, (self_us, cumul, lvl) in sorted(
        ours.items(), key=lambda kv: kv[1][1], reverse=True
    )[:top]:
        print(f"    {cumul / 1000:6.1f} ms {self_us / 1000:5.1f} ms  {'  ' * lvl}{module}")
    extra = {m: v for m, v in ours.items() if m not in base}
    extra_self = sum(v[0] for v in extra.values())
    row(
        "modules imported beyond the floor's",
        f"{len(extra)} ({extra_self / 1000:.1f} ms own import time)",
    )
    heavy = sorted(extra.items(), key=lambda kv: kv[1][0], reverse=True)[:8]
    print("    by own time: " + ", ".join(f"{m} {v[0] / 1000:.1f} ms" for m, v in heavy))


_CHILD = """
import cProfile, json, os, pstats, re, sys, time
from collections import Counter
t0 = time.perf_counter()
from assembler.commands import main
t1 = time.perf_counter()
out, sys.stdout = sys.stdout, open(os.devnull, "w")
sys.stderr = open(os.devnull, "w")
profiling = sys.argv[1] == "profile"
regex = Counter()
if profiling:  # what the work costs beyond the imports: import what the floor and ctxasm import
    import click, jinja2, yaml, assembler.assembly, assembler.output.render
    real_compile = re._compile
    def timed_compile(pattern, flags):
        start = time.perf_counter()
        try:
            return real_compile(pattern, flags)
        finally:
            frame = sys._getframe(1)
            while frame and frame.f_globals.get("__name__", "").split(".")[0] == "re":
                frame = frame.f_back
            regex[frame.f_globals.get("__name__", "?") if frame else "?"] += time.perf_counter() - start
    re._compile = timed_compile
    profiler = cProfile.Profile()
    profiler.enable()
main(sys.argv[2:])
t2 = time.perf_counter()
result = {"import": t1 - t0, "main": t2 - t1}
if profiling:
    profiler.disable()
    entries = pstats.Stats(profiler).stats
    buckets = Counter()
    for (f, line, func), v in entries.items():
        if "importlib" in f or func in ("<built-in method marshal.loads>", "<built-in method builtins.exec>", "<built-in method builtins.__build_class__>") or "_imp." in func:
            key = "importing modules (loader, unmarshal, module bodies)"
        elif "/re/" in f:
            key = "compiling regular expressions"
        elif "/jinja2/" in f or "/markupsafe/" in f:
            key = "jinja2 (template compile and render)"
        elif "/yaml/" in f:
            key = "yaml"
        elif "/assembler/" in f:
            key = "assembler code"
        elif "/click/" in f:
            key = "click"
        elif f.endswith(("/dataclasses.py", "/enum.py", "/typing.py", "/abc.py")):
            key = "class creation (dataclasses, enum, typing, abc)"
        elif f.endswith(("/pathlib.py", "/posixpath.py")) or "posix." in func:
            key = "paths and filesystem calls (pathlib, posixpath, posix.*)"
        else:
            key = "other (stdlib, builtins)"
        buckets[key] += v[2]
    ours = [(func, f, line, v[1], v[3]) for (f, line, func), v in entries.items() if "/assembler/" in f or (func in ("get_template", "compile", "render") and "/jinja2/" in f) or "/tomllib/" in f and func == "loads"]
    result["total"] = sum(v[2] for v in entries.values())
    result["buckets"] = buckets.most_common()
    result["ours"] = sorted(ours, key=lambda x: x[4], reverse=True)[3:15]
    result["regex"] = regex.most_common(6)
out.write(json.dumps(result))
"""


_IMPORT_CHILD = """
import dataclasses, json, re, sys, time
from collections import Counter
import click, jinja2, yaml
regex, classes, counts = Counter(), Counter(), Counter()
real_compile, real_process = re._compile, dataclasses._process_class
def caller():
    frame = sys._getframe(2)
    while frame and frame.f_globals.get("__name__", "").split(".")[0] in ("re", "dataclasses"):
        frame = frame.f_back
    return frame.f_globals.get("__name__", "?") if frame else "?"
def timed_compile(pattern, flags):
    start = time.perf_counter()
    try:
        return real_compile(pattern, flags)
    finally:
        if not isinstance(pattern, re.Pattern):
            regex[caller()] += time.perf_counter() - start
def timed_process(cls, *args):
    start = time.perf_counter()
    try:
        return real_process(cls, *args)
    finally:
        classes[cls.__module__] += time.perf_counter() - start
        counts[cls.__module__] += 1
re._compile, dataclasses._process_class = timed_compile, timed_process
t0 = time.perf_counter()
import assembler.commands.render, assembler.assembly, assembler.output.render
total = time.perf_counter() - t0
print(json.dumps({"total": total, "regex": regex.most_common(), "classes": classes.most_common(), "counts": counts}))
"""


def import_breakdown(runs: int = 5) -> None:
    """Importing assembler after the floor's imports: dataclass creation and regex compiles."""
    cmd = [python(), "-c", _IMPORT_CHILD]
    results = [
        json.loads(
            subprocess.run(cmd, cwd=PROJECT, capture_output=True, text=True, check=True).stdout
        )
        for _ in range(runs)
    ]
    total = median([r["total"] for r in results])
    regex = median([sum(t for _, t in r["regex"]) for r in results])
    classes = median([sum(t for _, t in r["classes"]) for r in results])
    n_classes = sum(results[0]["counts"].values())
    row("in the process: import assembler after the floor", ms(total))
    row(
        f"  of which {n_classes} @dataclass creations",
        f"{ms(classes)} ({100 * classes / total:.0f}%)",
    )
    row("  of which regex compiles at import", f"{ms(regex)} ({100 * regex / total:.0f}%)")
    last = results[-1]
    print(
        "    dataclasses by module: "
        + ", ".join(f"{m} {last['counts'][m]}x {ms(t)}" for m, t in last["classes"][:6])
    )
    print(
        "    regex compiles by module: " + ", ".join(f"{m} {ms(t)}" for m, t in last["regex"][:6])
    )


def _where(filename: str) -> str:
    return filename.split("site-packages/")[-1].replace(str(PROJECT) + "/", "")


def breakdown(runs: int = 5) -> None:
    """Where a cold run's time goes: importing the CLI vs the first (cold) `main()` call."""
    cmd = [python(), "-c", _CHILD]

    def child(mode: str) -> dict[str, Any]:
        done = subprocess.run(
            [*cmd, mode, *DEMO_ARGS], cwd=PROJECT, capture_output=True, text=True, check=True
        )
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    times = [child("time") for _ in range(runs)]
    row(
        "in the process: import assembler.commands (median)",
        ms(median([t["import"] for t in times])),
    )
    row("in the process: first main() call (median)", ms(median([t["main"] for t in times])))
    prof = child("profile")
    total = prof["total"]
    print(
        f"  the first main() after all imports, under cProfile ({ms(total)} with the profiler), own time by kind:"
    )
    for kind, seconds in prof["buckets"]:
        print(f"    {100 * seconds / total:5.1f}%  {ms(seconds):>9}  {kind}")
    print("  regular expressions compiled during that main(), by the module compiling them:")
    for module, seconds in prof["regex"]:
        print(f"    {ms(seconds):>9}  {module}")
    print("  assembler (and jinja2/tomllib entry) functions by cumulative time, below main():")
    for func, filename, line, ncalls, cumtime in prof["ours"]:
        print(
            f"    {100 * cumtime / total:5.1f}%  cum {ms(cumtime):>9}  {ncalls:>4}x  {func}  ({_where(filename)}:{line})"
        )


def run(runs: int = 21) -> list[Check]:
    compile_package()
    heading("cold_render: `ctxasm render` (make demo) vs python -c 'import click, jinja2, ...'")
    cli, floor = commands()
    clis, floors, imports = interleaved([cli, floor, import_only()], runs)
    c_med, f_med, i_med = median(clis), median(floors), median(imports)
    row(
        f"floor (fresh interpreter + imports), {runs} runs",
        f"median {ms(f_med)}, best {ms(min(floors))}",
    )
    row(f"ctxasm render demo, {runs} runs", f"median {ms(c_med)}, best {ms(min(clis))}")
    ratio = c_med / f_med
    row("ratio ctxasm / floor (medians)", f"{ratio:.2f}x")
    row(
        f"floor + import assembler.commands.render/.assembly/.output.render, {runs} runs",
        f"median {ms(i_med)} ({i_med / f_med:.2f}x)",
    )
    row("  so: importing assembler beyond the floor", ms(i_med - f_med))
    row("  and: the work (argument parsing, assemble, render)", ms(c_med - i_med))
    report_imports()
    import_breakdown()
    breakdown()
    return [Check("cold: ctxasm render / import floor (medians)", ratio, RATIO_TARGET, "x")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cold_render")
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args(argv)
    return report(run(max(15, args.runs)))


if __name__ == "__main__":
    raise SystemExit(main())
