"""In-process assembly eight levels deep in the synthetic monorepo, against an I/O floor.

The floor is the I/O the client cannot avoid for that cwd, by the generator's model: `os.stat`
of every missing candidate, a listing of every rules directory, and `os.stat` + read of every
file it must read. Everything runs in the same process, interleaved, many times; we report
best and median and the ratio of medians.

Two calls are measured. An agent's every turn is `Assembler.assemble()` repeated: when nothing
changed it costs one `stat` per dependency (target <= 2x the floor; it reads nothing, so it
sits below it). A plain `assemble()` is a discovery run: nothing is kept between calls, only
the parse memo (`assembler.parsing.parse`) spares parsing a text seen before; its ratio is
reported as it is, with a regression guard, and the benchmark checks that it opens every file
the floor reads. Beside them: the first call in a process (the parse memo emptied too).

Then, in a fresh process, every filesystem call of one `assemble()` is counted (audit hooks on
`open`/`os.scandir`/`os.listdir`, counters on `os.stat`/`os.lstat`) at several depths, to show
the cost grows with the depth of cwd and never touches a directory off its chain, however
many directories the repository has.

    python -m benchmarks.assemble_deep [--reps N]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

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
    timed,
    us,
)
from .monorepo import CWD_DEPTH, Monorepo, generate

RATIO_TARGET = 2.0
# A discovery run pays for Python per candidate and per file (provenance, parsing, budget): 5x
# its floor when this guard was set (2026-11). It keeps that from growing unnoticed.
RUN_GUARD = 6.5
DEPTHS = (0, 2, 4, 6, 8)


def floor_io(m: Monorepo) -> Callable[[], None]:
    must_stat, must_list, must_read = m.must_stat, m.must_list, m.must_read

    def run() -> None:
        for path in must_stat:
            with contextlib.suppress(OSError):
                os.stat(path)
        for directory in must_list:
            with os.scandir(directory) as it:
                for _ in it:
                    pass
        for path in must_read:
            os.stat(path)
            with open(path, "rb") as f:
                f.read()

    return run


def assembler_call(m: Monorepo, cwd: Path | None = None) -> Callable[[], Any]:
    from assembler import assemble

    target = cwd or m.deep_cwd

    def run() -> Any:
        return assemble(target, home=m.home, managed_dir=m.managed, environ={})

    return run


def check_model(m: Monorepo) -> Check:
    """The library loads exactly what the generator's model says (else the floor is wrong)."""
    assembly = assembler_call(m)()
    got = [s.path for s in assembly.sources]
    missing = sorted(set(m.loaded) - set(got))
    extra = sorted(set(got) - set(m.loaded))
    row("sources loaded (library / model)", f"{len(got)} / {len(m.loaded)}")
    codes = Counter(d.code for d in assembly.diagnostics)
    row("diagnostics", ", ".join(f"{c} {n}" for c, n in sorted(codes.items())) or "none")
    for path in missing:
        print(f"    model loads, library does not: {path}")
    for path in extra:
        print(f"    library loads, model does not: {path}")
    return Check("deep: sources differing from the model", len(missing) + len(extra), 0, "")


class Timings(NamedTuple):
    floors: list[float]
    repeats: list[float]  # Assembler.assemble() repeated, nothing changed: `stat` calls only
    renders: list[float]  # the same + .text
    full_runs: list[float]  # assemble(): a discovery run (texts parsed before: memo hits)
    first_parses: list[float]  # assemble() with the parse memo emptied: every file parsed


def assembler_repeat(m: Monorepo) -> Callable[[], Any]:
    """`Assembler.assemble()` on the deep cwd, once its first result is kept."""
    from assembler import Assembler

    asm = Assembler(m.deep_cwd, home=m.home, managed_dir=m.managed, environ={})
    deadline = time.monotonic() + 5  # the generator just wrote files: wait until trusted
    while asm.reuses < 3 and time.monotonic() < deadline:
        asm.assemble()
    return asm.assemble


def measure(m: Monorepo, reps: int) -> Timings:
    from assembler.parsing import parse

    floor, full, repeat = floor_io(m), assembler_call(m), assembler_repeat(m)

    def repeat_render() -> str:
        text: str = repeat().text
        return text

    for _ in range(5):  # warm up: imports, policy files, the page cache
        floor()
        full()
        repeat_render()
    timings = Timings([], [], [], [], [])
    for i in range(reps):
        timings.floors.append(timed(floor))
        timings.repeats.append(timed(repeat))
        timings.full_runs.append(timed(full))
        if i % 4 == 0:
            timings.renders.append(timed(repeat_render))
            parse.forget()
            timings.first_parses.append(timed(full))
    return timings


def profile(call: Callable[[], Any], runs: int = 40, top: int = 14) -> None:
    """cProfile of `runs` calls: the functions with the most own time, and their share."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(runs):
        call()
    profiler.disable()
    stats = pstats.Stats(profiler)
    entries: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in entries.values()) or 1.0
    print(
        f"  cProfile over {runs} calls ({ms(total / runs)} per call under the profiler), by own time:"
    )
    ranked = sorted(entries.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    for (filename, line, func), (_cc, ncalls, tottime, cumtime, _callers) in ranked:
        where = _short(filename)
        print(
            f"    {100 * tottime / total:5.1f}%  own {ms(tottime / runs):>9}  cum {ms(cumtime / runs):>9}"
            f"  {ncalls // runs:>6}x  {func}  ({where}:{line})"
        )
    print("  by cumulative time (assembler functions):")
    ours = [kv for kv in entries.items() if "/assembler/" in kv[0][0]]
    for (filename, line, func), (_cc, ncalls, _tt, cumtime, _callers) in sorted(
        ours, key=lambda kv: kv[1][3], reverse=True
    )[:top]:
        print(
            f"    {100 * cumtime / total:5.1f}%  cum {ms(cumtime / runs):>9}  {ncalls // runs:>6}x"
            f"  {func}  ({_short(filename)}:{line})"
        )


def run_calls(m: Monorepo) -> Check:
    """What a discovery run does on disk: it reads every file the model reads, so the
    comparison with the floor is of like with like."""
    call = assembler_call(m)
    with audited() as seen:
        call()
    opened = {os.path.normpath(p) for e, p in seen if e == "open"}
    listed = {p for e, p in seen if e in ("os.scandir", "os.listdir")}
    must_read = {os.path.normpath(p) for p in m.must_read}
    row(
        "discovery run: files opened / dirs listed",
        f"{len(opened)} / {len(listed)} (the floor: {len(must_read)} / {len(m.must_list)})",
    )
    for path in sorted(must_read - opened)[:10]:
        print(f"    the model reads it, the discovery run did not: {path}")
    return Check(
        "deep: files the floor reads that a discovery run does not", len(must_read - opened), 0, ""
    )


# Where the audit hook writes while `audited()` is open. A hook cannot be removed, so it is
# installed once, on first use: the timings taken before it pay nothing for it.
_AUDIT: list[tuple[str, str]] | None = None
_HOOKED = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _AUDIT is not None and event in ("open", "os.scandir", "os.listdir") and args:
        target = args[0]
        if isinstance(target, (str, bytes, os.PathLike)):
            _AUDIT.append((event, os.fsdecode(target)))


@contextlib.contextmanager
def audited() -> Iterator[list[tuple[str, str]]]:
    """The files opened and directories listed meanwhile, as (event, path)."""
    global _AUDIT, _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED = True
    events: list[tuple[str, str]] = []
    _AUDIT = events
    try:
        yield events
    finally:
        _AUDIT = None


# (module, attribute) wrapped to time one stage of assemble(), and what it is.
STAGES = (
    (
        "assembler.discovery.loader",
        "parse",
        "parse.parse: frontmatter, comments, @imports (memoized)",
    ),
    ("assembler.discovery.disk", "read_text", "reader.read_text: stat + open + read + decode"),
    ("assembler.discovery.loader", "Loader.resolve", "Loader.resolve: lstat + cached realpath"),
    ("assembler.discovery.context", "display_path", "locations.display_path: display paths"),
    ("assembler.discovery.loader", "text_stats", "tokens.text_stats: line/byte/token counts"),
    ("assembler.assembly", "resolve_policy", "policy.resolve_policy: finding + parsing TOML"),
    ("assembler.clients.claude_code.client", "read_setup", "settings.read_setup: settings JSON"),
    ("assembler.assembly", "build_context", "context.build_context: realpath, git root"),
    ("assembler.assembly", "apply_budget", "budget.apply_budget"),
    ("assembler.assembly", "escape_content", "sections.escape_content"),
)


def stage_split(m: Monorepo, runs: int = 30) -> None:
    """Median time per call of assemble() spent in each stage, without a profiler's overhead."""
    import importlib

    spent: dict[str, float] = dict.fromkeys((label for _, _, label in STAGES), 0.0)
    originals = []
    for module_name, dotted, label in STAGES:
        owner: Any = importlib.import_module(module_name)
        *path, attr = dotted.split(".")
        for name in path:
            owner = getattr(owner, name)
        original = getattr(owner, attr, None)
        if original is None:  # a stage that no longer exists: nothing to time
            continue
        originals.append((owner, attr, original))
        module = owner

        def wrapper(*args: Any, _f: Any = original, _label: str = label, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return _f(*args, **kwargs)
            finally:
                spent[_label] += time.perf_counter() - start

        setattr(module, attr, wrapper)
    call = assembler_call(m)
    try:
        call()
        for label in spent:
            spent[label] = 0.0
        total = sum(timed(call) for _ in range(runs))
    finally:
        for module, attr, original in originals:
            setattr(module, attr, original)
    print(
        f"  where assemble() spends its time (stage timers, {runs} calls, {ms(total / runs)} per call):"
    )
    for label, seconds in sorted(spent.items(), key=lambda kv: kv[1], reverse=True):
        print(f"    {100 * seconds / total:5.1f}%  {ms(seconds / runs):>9}  {label}")
    rest = total - sum(spent.values())
    print(
        f"    {100 * rest / total:5.1f}%  {ms(rest / runs):>9}  everything else (loader/discover glue, pathlib)"
    )


def _short(filename: str) -> str:
    for marker in ("/site-packages/", str(PROJECT) + "/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename.rsplit("/lib/", 1)[-1]


# --- filesystem calls, counted in a fresh process -----------------------------------------


def _count_calls(m: Monorepo, depth: int) -> dict[str, Any]:
    """Every filesystem call of one assemble() at `depth`, and how it compares to the model."""
    cwd = m.chain_dir(depth)
    call = assembler_call(m, cwd)
    call()  # warm: imports and policy loading are not what we count
    real_stat, real_lstat = os.stat, os.lstat
    with audited() as events:  # opens and listings; stat calls are counted by wrappers

        def stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            if isinstance(path, (str, bytes, os.PathLike)):
                events.append(("stat", os.fsdecode(path)))
            return real_stat(path, *args, **kwargs)

        def lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
            events.append(("lstat", os.fsdecode(path)))
            return real_lstat(path, *args, **kwargs)

        os.stat, os.lstat = stat, lstat
        try:
            call()
        finally:
            os.stat, os.lstat = real_stat, real_lstat

    expected = m.expected(cwd)
    root = str(m.root)
    inside = [(e, p) for e, p in events if p == root or p.startswith(root + os.sep)]
    # Directories the model allows: the cwd's chain, and the chains of every path it names.
    allowed: set[str] = set()
    for path in (cwd, *expected.must_read, *expected.must_stat, *expected.must_list):
        for d in (Path(path), *Path(path).parents):
            allowed.add(str(d))
    touched = {p if e in ("os.scandir", "os.listdir") else os.path.dirname(p) for e, p in inside}
    off_chain = sorted(d for d in touched if d not in allowed and d.startswith(root))
    listed = sorted({p for e, p in inside if e in ("os.scandir", "os.listdir")})
    opened = {os.path.normpath(p) for e, p in inside if e == "open"}
    must_read = {os.path.normpath(p) for p in expected.must_read}
    must_stat = {os.path.normpath(p) for p in expected.must_stat}
    outside = sorted({p for e, p in events if e == "open" and (e, p) not in inside})
    return {
        "depth": depth,
        "calls": dict(Counter(e for e, _ in events)),
        "calls_inside": len(inside),
        "dirs_touched": len(touched),
        "off_chain": off_chain,
        "listed": len(listed),
        "listed_unexpected": sorted(set(listed) - {str(p) for p in expected.must_list}),
        "must_read": len(must_read),
        "not_opened": sorted(must_read - opened),
        "opened_unexpected": sorted(opened - must_read - must_stat),
        "opened_outside": [_short(p) for p in outside],
    }


def count_calls(m: Monorepo, depths: Iterable[int]) -> list[dict[str, Any]]:
    return [_count_calls(m, d) for d in depths]


def report_calls(results: list[dict[str, Any]], n_dirs: int) -> list[Check]:
    print(f"  filesystem calls of one assemble() ({n_dirs:,} directories in the repository):")
    print("    depth  stat  lstat  open  scandir  in-tree  dirs touched  rule dirs listed")
    for r in results:
        c = r["calls"]
        print(
            f"    {r['depth']:>5}  {c.get('stat', 0):>4}  {c.get('lstat', 0):>5}  {c.get('open', 0):>4}"
            f"  {c.get('os.scandir', 0) + c.get('os.listdir', 0):>7}  {r['calls_inside']:>7}"
            f"  {r['dirs_touched']:>12}  {r['listed']:>16}"
        )
    first, last = results[0], results[-1]
    span = last["depth"] - first["depth"]
    if span:
        per_level = (last["calls_inside"] - first["calls_inside"]) / span
        row("marginal in-tree calls per level of depth", f"{per_level:.1f}")
    off = sorted({d for r in results for d in r["off_chain"]})
    unexpected = sorted({d for r in results for d in r["listed_unexpected"]})
    unread = sorted({p for r in results for p in r["not_opened"]})
    for d in off[:10]:
        print(f"    touched off the chain: {d}")
    for d in unexpected[:10]:
        print(f"    listed, not a rules directory of the chain: {d}")
    for p in unread[:10]:
        print(f"    the model reads it, the library did not open it: {p}")
    deep = results[-1]
    for p in deep["opened_unexpected"][:10]:
        print(f"    opened, not a file or candidate the model names: {p}")
    row(
        f"depth {deep['depth']}: files opened outside the tree",
        ", ".join(deep["opened_outside"]) or "none",
    )
    return [
        Check(
            f"deep: in-tree files opened that the model does not name (depth {deep['depth']})",
            len(deep["opened_unexpected"]),
            0,
            "",
        ),
        Check("deep: directories touched off the cwd's chain", len(off), 0, ""),
        Check("deep: directories listed that are not chain rules dirs", len(unexpected), 0, ""),
        Check(
            f"deep: directories touched at depth {deep['depth']} (of {n_dirs:,})",
            deep["dirs_touched"],
            # generous: the chain, its rule dirs and import targets, never the whole tree
            4 * (deep["depth"] + 1) + 2 * deep["listed"] + 20,
            "",
        ),
    ]


# --- the benchmark ------------------------------------------------------------------------


def run(reps: int = 150) -> list[Check]:
    compile_package()
    heading(f"assemble_deep: in-process assemble() {CWD_DEPTH} levels deep vs the I/O floor")
    m = generate()
    row("monorepo", f"{m.root} ({'reused' if m.reused else 'generated'})")
    row(
        "cwd",
        f"{m.deep_cwd.relative_to(m.repo)} (depth {m.depth})",
    )
    row(
        "floor: files read / missing stat'ed / dirs listed",
        f"{len(m.must_read)} / {len(m.must_stat)} / {len(m.must_list)}",
    )
    checks = [check_model(m)]
    t = measure(m, reps)
    f_med, a_med, r_med = median(t.floors), median(t.repeats), median(t.renders)
    full_med, p_med = median(t.full_runs), median(t.first_parses)
    row(f"floor (stat + read), {reps} runs: best / median", f"{us(min(t.floors))} / {us(f_med)}")
    row(
        f"Assembler.assemble() repeated, {reps} runs: best / median",
        f"{ms(min(t.repeats))} / {ms(a_med)} (nothing changed: one stat per dependency)",
    )
    row(f"Assembler.assemble() repeated + .text, {len(t.renders)} runs: median", ms(r_med))
    row(
        f"assemble(), a discovery run, {reps} runs: best / median",
        f"{ms(min(t.full_runs))} / {ms(full_med)} ({full_med / f_med:.1f}x the floor;"
        " texts parsed before)",
    )
    row(
        f"assemble(), parse memo emptied, {len(t.first_parses)} runs: median",
        f"{ms(p_med)} ({p_med / f_med:.1f}x the floor: every file parsed, as in a new process)",
    )
    ratio, run_ratio = a_med / f_med, full_med / f_med
    row(
        "ratio Assembler repeated / floor (medians)",
        f"{ratio:.2f}x (best: {min(t.repeats) / min(t.floors):.2f}x)",
    )
    checks.append(
        Check("deep: Assembler.assemble() repeated / I/O floor (medians)", ratio, RATIO_TARGET, "x")
    )
    checks.append(
        Check(
            "deep: assemble() discovery run / I/O floor (medians; regression guard)",
            run_ratio,
            RUN_GUARD,
            "x",
        )
    )
    checks.append(run_calls(m))
    if run_ratio > RUN_GUARD:
        stage_split(m)
        profile(assembler_call(m))

    out = subprocess.run(
        [python(), "-m", "benchmarks.assemble_deep", "--count-calls"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        print(out.stderr[-2000:])
        checks.append(Check("deep: counting filesystem calls (crashed)", 1, 0, ""))
        return checks
    checks += report_calls(json.loads(out.stdout), len(m.layout.dirs))
    return checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.assemble_deep")
    parser.add_argument("--reps", type=int, default=150)
    parser.add_argument("--count-calls", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.count_calls:
        json.dump(count_calls(generate(), DEPTHS), sys.stdout)
        return 0
    return report(run(args.reps))


if __name__ == "__main__":
    raise SystemExit(main())
