"""`ctxasm lint`: cold start on one file, and throughput over the synthetic monorepo.

1. Cold `ctxasm lint CLAUDE.md` (the demo repository's root CLAUDE.md, laid out as its own git
   repository) vs the floor `python -c "import click, yaml"`, fresh processes,
   interleaved; target ratio <= 1.2. Also checks that lint never imports jinja2/watchdog/rich.
2. Every instruction file of the 10,000-directory monorepo, linted in one process: files per
   second, and the ratio to reading the same files with plain Python (open + read + decode);
   given as a file list (the pre-commit form) and as whole-repository lint (no files).
3. When the Rust peer `agnix` is installed (`AGNIX=/path/to/agnix`, else on PATH; never a
   project dependency: `python3 -m venv /tmp/agnix-venv && /tmp/agnix-venv/bin/pip install
   agnix`), the wall clock of `ctxasm lint` and `agnix .` in the monorepo's root, fresh
   processes, interleaved, and the ratio ctxasm / agnix (issue 13's target: below 1); also
   `ctxasm lint` with its whole-context checks off, the work agnix does (each file alone).

    python -m benchmarks.lint_speed [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time
from pathlib import Path

from .cold_render import interleaved
from .harness import (
    PROJECT,
    WORK,
    Check,
    compile_package,
    heading,
    median,
    ms,
    python,
    row,
    venv_script,
)
from .monorepo import generate

RATIO_TARGET = 1.2
FLOOR_CODE = "import click, yaml"


def demo_repo() -> Path:
    """fixtures/demo/repo copied to its own git repository (as a user's repo would be)."""
    target = WORK / "lint-demo-repo"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(PROJECT / "fixtures" / "demo" / "repo", target)
    subprocess.run(["git", "init", "-q", str(target)], check=True)
    subprocess.run(["git", "-C", str(target), "add", "-A"], check=True)
    return target


def cold(runs: int) -> Check:
    repo = demo_repo()
    demo = PROJECT / "fixtures" / "demo"
    lint_cmd = [
        venv_script("ctxasm"), "lint", str(repo / "CLAUDE.md"),
        "--home", str(demo / "home"), "--managed-dir", str(demo / "managed"),
    ]  # fmt: skip
    floor_cmd = [python(), "-c", FLOOR_CODE]
    ours, floor = interleaved([lint_cmd, floor_cmd], runs)
    ratio = median(ours) / median(floor)
    row(f"floor ({FLOOR_CODE}), {runs} runs median", ms(median(floor)))
    row(f"ctxasm lint CLAUDE.md, {runs} runs median", ms(median(ours)))
    row("ratio lint / floor (medians)", f"{ratio:.2f}x")
    probe = (
        "import sys\nfrom assembler.commands import main\n"
        f"main(['lint', {str(repo / 'CLAUDE.md')!r}, '--home', {str(demo / 'home')!r}, '--managed-dir', {str(demo / 'managed')!r}])\n"
    )
    done = subprocess.run(
        [python(), "-c", probe + ""], capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
    )  # fmt: skip
    heavy = sorted(
        {
            line.split("|")[-1].strip().split(".")[0]
            for line in done.stderr.splitlines()
            if line.startswith("import time:")
        }
        & {"jinja2", "watchdog", "rich"}
    )
    row("heavy modules imported by lint", ", ".join(heavy) or "none")
    return Check(
        "lint cold: ctxasm lint CLAUDE.md / import floor (medians)",
        round(ratio, 2),
        RATIO_TARGET,
        "x",
    )


def throughput() -> list[Check]:
    from assembler.lint import is_instruction_file, lint
    from assembler.parsing.parse import forget

    mono = generate()
    files = sorted(
        p
        for p in mono.repo.rglob("*")
        if p.is_file() and is_instruction_file(p.relative_to(mono.repo).as_posix())
    )
    start = time.perf_counter()
    for path in files:
        with path.open("rb") as f:
            f.read().decode("utf-8", "replace")
    floor = time.perf_counter() - start
    start = time.perf_counter()
    result = lint(
        [str(p) for p in files],
        base=mono.repo,
        home=mono.home,
        managed_dir=mono.managed,
        environ={},
    )
    elapsed = time.perf_counter() - start
    row("instruction files in the monorepo", f"{len(files):,}")
    row("findings", f"{len(result.findings):,}")
    row("lint: all files in one process", f"{ms(elapsed)} ({len(files) / elapsed:,.0f} files/s)")
    row("plain read of the same files", f"{ms(floor)} ({len(files) / floor:,.0f} files/s)")
    row("ratio lint / plain read", f"{elapsed / floor:.0f}x")
    runs = []
    for _ in range(3):  # each a first parse, as in a fresh process: the parse memo emptied
        forget()
        start = time.perf_counter()
        whole = lint([], base=mono.repo, home=mono.home, managed_dir=mono.managed, environ={})
        runs.append(time.perf_counter() - start)
    elapsed = min(runs)
    count = len(whole.files)
    row(
        "whole-repository lint, one process (best of 3, each parsing anew)",
        f"{ms(elapsed)} ({count / elapsed:,.0f} files/s)",
    )
    row("whole-repository lint findings", f"{len(whole.findings):,}")
    checks = [
        Check(  # 2,000 files/s (issue 13): half a millisecond a file
            "whole-repository lint of the monorepo, one process: ms per file",
            round(elapsed / count * 1000, 2),
            0.5,
            " ms",
        )
    ]
    return checks + versus_agnix(mono.repo, mono.home, mono.managed)


def agnix() -> str | None:
    """The `agnix` executable (`AGNIX`, else on PATH), or None."""
    found = os.environ.get("AGNIX") or shutil.which("agnix")
    return found if found and os.access(found, os.X_OK) else None


def versus_agnix(repo: Path, home: Path, managed: Path, runs: int = 5) -> list[Check]:
    """Wall clock of whole-repository `ctxasm lint` and `agnix .` on the same tree, same run."""
    peer = agnix()
    if peer is None:
        row("ctxasm lint / agnix .", "skipped: agnix not found (set AGNIX or put it on PATH)")
        return []
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CTXASM"))}
    ours = [venv_script("ctxasm"), "lint", "--home", str(home), "--managed-dir", str(managed)]
    # The work agnix does (each file on its own): the whole-context checks turned off.
    per_file = [*ours, "--ignore", "CTX502,CTX207,CTX601"]
    cmds = [ours, per_file, [peer, "."]]
    times: list[list[float]] = [[] for _ in cmds]
    for i in range(runs + 1):  # the first round warms the caches and is not counted
        for k in range(len(cmds)):
            j = (i + k) % len(cmds)
            start = time.perf_counter()
            subprocess.run(cmds[j], cwd=repo, env=env, capture_output=True, check=False)
            if i:
                times[j].append(time.perf_counter() - start)
    row(f"ctxasm lint (whole repo), {runs} runs median", ms(median(times[0])))
    row("ctxasm lint --ignore CTX502,CTX207,CTX601 (per-file checks)", ms(median(times[1])))
    row(f"agnix . (same tree), {runs} runs median", ms(median(times[2])))
    ratio = median(times[0]) / median(times[2])
    row("ratio ctxasm lint / agnix . (medians)", f"{ratio:.2f}x")
    row(
        "ratio per-file checks only / agnix . (medians)",
        f"{median(times[1]) / median(times[2]):.2f}x",
    )
    return [
        Check("whole-repository lint: ctxasm lint / agnix . (medians)", round(ratio, 2), 1.0, "x")
    ]


def run(runs: int = 21) -> list[Check]:
    compile_package()
    heading("lint: cold start and monorepo throughput")
    checks = [cold(runs)]
    checks += throughput()
    return checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.lint_speed")
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args(argv)
    for check in run(args.runs):
        print(check.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
