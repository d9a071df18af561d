"""Untrusted instruction files (SPEC section 11): every bad input gives a diagnostic that names
the file and says what to do, and the CLI exits 1 for error-severity problems (0 for warnings),
never with a traceback, never hanging, in bounded memory.

Every case is built from real files in `tmp_path`, inside a real `git init` project. The
library result is the oracle for the CLI: `ctxasm render` must print exactly the library's text
on stdout and exactly its warning/error lines on stderr. Inputs that could hang (FIFOs, loops,
1 GB files) also go through the real CLI in a subprocess with a timeout; in-process runs are
guarded so that a FIFO opened for reading makes the test fail instead of hanging.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assembler import Assembly, Severity, assemble
from tests.helpers.cli import ctxasm
from tests.helpers.trees import git_init
from tests.helpers.unprivileged import as_unprivileged, traversable  # noqa: F401 (a fixture)

TIMEOUT = 30

# --- watching what the library opens ------------------------------------------------------

_WATCHED: set[str] = set()
_OPENED: list[str] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or not _WATCHED or not args:
        return
    path = args[0]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if isinstance(path, str) and os.path.abspath(path) in _WATCHED:
        _OPENED.append(os.path.abspath(path))


sys.addaudithook(_audit)


@pytest.fixture
def opened() -> Iterator[Callable[[Path], list[str]]]:
    """`watch(path)` starts recording every `open` of `path` in this process; returns the log."""

    def watch(path: Path) -> list[str]:
        _WATCHED.add(os.path.abspath(path))
        return _OPENED

    try:
        yield watch
    finally:
        _WATCHED.clear()
        _OPENED.clear()


@contextmanager
def fifos_never_opened(root: Path) -> Iterator[None]:
    """Fail (never hang) if anything opens a FIFO under `root` for reading meanwhile.

    A blocking open of a FIFO waits for a writer forever. A thread plays the writer: its
    non-blocking open succeeds only while a reader has the FIFO open, which releases a blocked
    reader and proves the FIFO was opened.
    """
    fifos = [
        os.path.join(directory, name)
        for directory, dirs, files in os.walk(root)
        for name in (*dirs, *files)
        if stat.S_ISFIFO(os.lstat(os.path.join(directory, name)).st_mode)
    ]
    stop = threading.Event()
    opened: list[str] = []

    def play_the_writer() -> None:
        while not stop.wait(0.02):
            for fifo in fifos:
                try:
                    fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                except OSError:  # ENXIO: no reader
                    continue
                opened.append(fifo)
                os.close(fd)

    thread = threading.Thread(target=play_the_writer, daemon=True)
    if fifos:
        thread.start()
    started = time.monotonic()
    try:
        yield
    finally:
        stop.set()
        if fifos:
            thread.join(TIMEOUT)
    assert opened == [], "a FIFO was opened for reading"
    assert time.monotonic() - started < TIMEOUT


# --- building trees and running things ----------------------------------------------------


@dataclass(frozen=True)
class Tree:
    root: Path

    @property
    def project(self) -> Path:
        return self.root / "proj"

    @property
    def home(self) -> Path:
        home = self.root / "home"
        home.mkdir(exist_ok=True)
        return home

    @property
    def managed(self) -> Path:
        return self.root / "managed"

    def assemble(self) -> Assembly:
        with fifos_never_opened(self.root):
            return assemble(self.project, home=self.home, managed_dir=self.managed, environ={})

    def invoke(self, args: Sequence[str] | None = None) -> tuple[int, str, str]:
        """`ctxasm render` in this process (click's CliRunner): exit code, stdout, stderr."""
        with fifos_never_opened(self.root):
            result = ctxasm(args or self.cli_args())
        return result.exit_code, result.stdout, result.stderr

    def cli_args(self) -> list[str]:
        return [
            "render",
            str(self.project),
            "--home",
            str(self.home),
            "--managed-dir",
            str(self.managed),
        ]


def make_tree(tmp_path: Path) -> Tree:
    tree = Tree(tmp_path)
    git_init(tree.project)
    return tree


def cli_env() -> dict[str, str]:
    """A clean environment: no CLAUDE_* variable of the developer may leak into the run."""
    env = {"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8"}
    if "PYTHONPATH" in os.environ:  # testing a checkout that is not the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def run_cli(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "assembler", *args],
        capture_output=True,
        timeout=TIMEOUT,
        cwd=cwd,
        env=cli_env(),
    )


def reported(assembly: Assembly) -> str:
    """What the CLI prints on stderr: one line per warning or error, in order."""
    return "".join(d.line() + "\n" for d in assembly.diagnostics if d.severity is not Severity.INFO)


def summary(assembly: Assembly) -> list[tuple[str, Severity, str]]:
    return [(d.code, d.severity, d.path) for d in assembly.diagnostics]


# --- the cases ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One bad input: how to build it, and the exact diagnostics and sources it must give."""

    setup: Callable[[Path], None]
    diagnostics: tuple[tuple[str, Severity, str, str], ...]  # code, severity, path, next step
    sources: tuple[tuple[str, str], ...] = ()  # display path, content
    exit_code: int = 1


def _binary(p: Path) -> None:
    (p / "CLAUDE.md").write_bytes(b"# Rules\n\x00\x01\x02binary junk\n")


def _invalid_utf8(p: Path) -> None:
    (p / "CLAUDE.md").write_bytes(b"caf\xe9 au lait\n\xff\xfe ok \xe2\x82\n")


def _fifo(p: Path) -> None:
    os.mkfifo(p / "CLAUDE.md")


def _sparse(p: Path) -> None:
    with open(p / "CLAUDE.md", "wb") as f:
        f.truncate(1 << 30)


def _rules_dir_loop(p: Path) -> None:
    rules = p / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.md").write_text("Use tabs.\n")
    os.symlink("..", rules / "up")  # .claude/rules/up -> .claude, which holds rules/ again


def _rule_self_loop(p: Path) -> None:
    rules = p / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.md").write_text("Use tabs.\n")
    os.symlink("self.md", rules / "self.md")


def _claude_md_self_loop(p: Path) -> None:
    os.symlink("CLAUDE.md", p / "CLAUDE.md")


def _invalid_frontmatter(p: Path) -> None:
    rules = p / ".claude" / "rules"
    rules.mkdir(parents=True)
    # Invalid even after the client's retry that quotes `key: value` lines with YAML syntax.
    (rules / "api.md").write_text('---\npaths:\n  - "src/**\nowner: [oops\n---\nRule body\n')


def _import_directory(p: Path) -> None:
    (p / "docs").mkdir()
    (p / "docs" / "guide.md").write_text("guide")
    (p / "CLAUDE.md").write_text("Read @docs first.\n")


def _broken_symlink(p: Path) -> None:
    os.symlink("AGENTS.md", p / "CLAUDE.md")


def _directory(p: Path) -> None:
    (p / "CLAUDE.md").mkdir()
    (p / "CLAUDE.md" / "notes.md").write_text("inside")


def _fifo_rule(p: Path) -> None:
    rules = p / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.md").write_text("Use tabs.\n")
    os.mkfifo(rules / "pipe.md")


def _surrogate_in_managed_settings(p: Path) -> None:
    managed = p.parent / "managed"
    managed.mkdir()
    # Valid JSON whose string holds a lone surrogate (\ud800): no UTF-8 encoding exists for it.
    (managed / "managed-settings.json").write_text('{"claudeMd": "Be careful \\ud800 here."}')
    (p / "CLAUDE.md").write_text("project rules")


E, W = Severity.ERROR, Severity.WARNING

CASES: dict[str, Case] = {
    "binary": Case(
        _binary,
        (("CTX003", E, "CLAUDE.md", "replace it with text"),),
    ),
    "CTX002": Case(
        _invalid_utf8,
        (("CTX002", W, "CLAUDE.md", "re-save it as UTF-8"),),
        (("CLAUDE.md", "caf\ufffd au lait\n\ufffd\ufffd ok \ufffd"),),
        exit_code=0,
    ),
    "fifo": Case(
        _fifo,
        (("CTX004", E, "CLAUDE.md", "make it a regular file"),),
    ),
    "sparse-1gb": Case(
        _sparse,
        (("CTX105", E, "CLAUDE.md", "split it or move detail into imported files"),),
    ),
    "rules-directory-loop": Case(
        _rules_dir_loop,
        (("CTX703", Severity.INFO, ".claude/rules", "not re-entered"),),
        ((".claude/rules/style.md", "Use tabs."),),
        exit_code=0,
    ),
    "claude-md-self-loop": Case(
        _claude_md_self_loop,
        (("CTX005", E, "CLAUDE.md", "fix the link"),),
    ),
    "CTX301": Case(
        _invalid_frontmatter,
        (("CTX301", W, ".claude/rules/api.md", "fix the YAML"),),
        ((".claude/rules/api.md", "Rule body"),),
        exit_code=0,
    ),
    "import-directory": Case(
        _import_directory,
        (("CTX206", W, "docs", "import a file inside it instead"),),
        (("CLAUDE.md", "Read @docs first."),),
        exit_code=0,
    ),
    "broken-symlink": Case(
        _broken_symlink,
        (("CTX006", W, "CLAUDE.md", "fix or remove the link"),),
        exit_code=0,
    ),
    "directory": Case(
        _directory,
        (("CTX007", W, "CLAUDE.md", "import a file inside it instead"),),
        exit_code=0,
    ),
    # A looping symlink is a loop, whether it is CLAUDE.md or a rule (same code, same severity).
    "rule-self-loop": Case(
        _rule_self_loop,
        (("CTX005", E, ".claude/rules/self.md", "fix the link"),),
        ((".claude/rules/style.md", "Use tabs."),),
    ),
    # Every skip says why (STYLE.md): a FIFO named like a rule is refused like a FIFO CLAUDE.md.
    "fifo-rule": Case(
        _fifo_rule,
        (("CTX004", E, ".claude/rules/pipe.md", "make it a regular file"),),
        ((".claude/rules/style.md", "Use tabs."),),
    ),
}

# Inputs that could hang or loop: also run through the real CLI in a subprocess with a timeout.
HANG_PRONE = (
    "fifo",
    "sparse-1gb",
    "rules-directory-loop",
    "claude-md-self-loop",
    "rule-self-loop",
    "fifo-rule",
)


def _params(names: Sequence[str] = tuple(CASES)) -> list[Any]:
    return [pytest.param(name, CASES[name], id=name) for name in names]


def check_library(assembly: Assembly, case: Case) -> None:
    assert summary(assembly) == [(c, s, p) for c, s, p, _ in case.diagnostics]
    for diagnostic, (_, _, _, next_step) in zip(
        assembly.diagnostics, case.diagnostics, strict=True
    ):
        assert next_step in diagnostic.message
    assert [(s.display, s.content) for s in assembly.sources] == list(case.sources)
    assert bool(assembly.errors) == (case.exit_code == 1)


@pytest.mark.parametrize(("name", "case"), _params())
def test_library_reports_bad_input(tmp_path: Path, name: str, case: Case) -> None:
    tree = make_tree(tmp_path)
    case.setup(tree.project)
    check_library(tree.assemble(), case)


@pytest.mark.parametrize(("name", "case"), _params(HANG_PRONE))
def test_cli_process_reports_bad_input(tmp_path: Path, name: str, case: Case) -> None:
    """The real CLI in a subprocess: exact stdout, exact stderr lines, exit code, no hang."""
    tree = make_tree(tmp_path)
    case.setup(tree.project)
    assembly = tree.assemble()
    check_library(assembly, case)
    result = run_cli(tree.cli_args(), cwd=tmp_path)
    stderr = result.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr
    assert (result.returncode, result.stdout, stderr) == (
        case.exit_code,
        assembly.render("xml").encode("utf-8"),
        reported(assembly),
    )


@pytest.mark.parametrize(("name", "case"), _params())
def test_cli_reports_bad_input(tmp_path: Path, name: str, case: Case) -> None:
    """`ctxasm render`: the library's xml rendering on stdout, its warnings/errors on stderr, exit code."""
    tree = make_tree(tmp_path)
    case.setup(tree.project)
    assembly = tree.assemble()
    assert tree.invoke() == (case.exit_code, assembly.render("xml"), reported(assembly))


# --- specific guarantees ------------------------------------------------------------------


def test_invalid_utf8_keeps_every_valid_character(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    raw = "第一条用中文回答\n".encode() + b"\x80\x80 bad lead bytes\n" + "emoji 🙂 ok".encode()
    (tree.project / "CLAUDE.md").write_bytes(raw)
    assembly = tree.assemble()
    assert [(s.display, s.content) for s in assembly.sources] == [
        ("CLAUDE.md", "第一条用中文回答\n\ufffd\ufffd bad lead bytes\nemoji 🙂 ok"),
    ]
    offset = len("第一条用中文回答\n".encode())
    assert [(d.code, d.message) for d in assembly.diagnostics] == [
        (
            "CTX002",
            f"invalid UTF-8 at byte {offset}; loaded with replacement characters: re-save it as UTF-8",
        )
    ]


def test_fifo_is_refused_without_being_opened(
    tmp_path: Path, opened: Callable[[Path], list[str]]
) -> None:
    tree = make_tree(tmp_path)
    fifo = tree.project / "CLAUDE.md"
    os.mkfifo(fifo)
    log = opened(fifo)
    assembly = tree.assemble()  # also fails if the FIFO is opened, even non-blocking
    assert log == []  # not even opened
    assert summary(assembly) == [("CTX004", Severity.ERROR, "CLAUDE.md")]


def test_fifo_as_import_target_does_not_block(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    os.mkfifo(tree.project / "pipe.md")
    (tree.project / "CLAUDE.md").write_text("See @pipe.md\n")
    result = run_cli(tree.cli_args(), cwd=tmp_path)
    stderr = result.stderr.decode()
    assert result.returncode == 1
    assert stderr == (
        "pipe.md: error: import is not a regular file (FIFO, socket or device); "
        "not read: make it a regular file [CTX004]\n"
    )
    assert b"See @pipe.md" in result.stdout


@pytest.mark.slow
def test_sparse_1gb_file_is_skipped_without_opening_it(
    tmp_path: Path, opened: Callable[[Path], list[str]]
) -> None:
    tree = make_tree(tmp_path)
    _sparse(tree.project)
    log = opened(tree.project / "CLAUDE.md")
    assembly = tree.assemble()
    assert log == []
    assert [d.message for d in assembly.diagnostics] == [
        "file is 1,073,741,824 bytes, over the 4,194,304-byte limit; the client skips it: "
        "split it or move detail into imported files"
    ]


_PEAK_RSS = textwrap.dedent(
    """
    import json, resource, subprocess, sys
    run = subprocess.run(sys.argv[1:], capture_output=True, timeout=25)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if sys.platform == "darwin":
        peak //= 1024  # bytes there, KiB on Linux
    print(json.dumps({"rc": run.returncode, "stdout": run.stdout.decode(),
                      "stderr": run.stderr.decode(), "peak_kib": peak}))
    """
)


@pytest.mark.slow
def test_sparse_1gb_file_costs_bounded_memory_in_the_cli(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    _sparse(tree.project)
    (tree.project / "CLAUDE.local.md").write_text("local notes")
    # A fresh wrapper process whose only child is the CLI, so RUSAGE_CHILDREN is the CLI's.
    wrapper = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, sys.executable, "-m", "assembler", *tree.cli_args()],
        capture_output=True,
        timeout=TIMEOUT,
        cwd=tmp_path,
        env=cli_env(),
        check=True,
    )
    run = json.loads(wrapper.stdout)
    assert run["rc"] == 1
    assert run["stderr"] == (
        "CLAUDE.md: error: file is 1,073,741,824 bytes, over the 4,194,304-byte limit; "
        "the client skips it: split it or move detail into imported files [CTX105]\n"
    )
    assert "local notes" in run["stdout"]
    assert 0 < run["peak_kib"] < 200 * 1024, f"peak RSS {run['peak_kib']} KiB"


@pytest.mark.slow
def test_sparse_1gb_import_is_skipped(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    with open(tree.project / "big.md", "wb") as f:
        f.truncate(1 << 30)
    (tree.project / "CLAUDE.md").write_text("Context: @big.md\n")
    assembly = tree.assemble()
    assert summary(assembly) == [("CTX105", Severity.ERROR, "big.md")]
    assert assembly.diagnostics[0].message.startswith("import is 1,073,741,824 bytes")
    assert [s.display for s in assembly.sources] == ["CLAUDE.md"]


def test_rules_directory_loop_loads_each_rule_once(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    _rules_dir_loop(tree.project)
    (tree.project / ".claude" / "rules" / "nested").mkdir()
    (tree.project / ".claude" / "rules" / "nested" / "deep.md").write_text("Deep rule.")
    os.symlink("../..", tree.project / ".claude" / "rules" / "nested" / "back")
    result = run_cli([*tree.cli_args(), "--format", "json"], cwd=tmp_path)
    assert result.returncode == 0
    assert result.stderr == b""
    data = json.loads(result.stdout)
    assert sorted(s["path"] for s in data["sources"]) == [
        ".claude/rules/nested/deep.md",
        ".claude/rules/style.md",
    ]
    # Both links lead back to `.claude`: it is entered once, then reported, as is rules/.
    assert sorted((d["code"], d["path"]) for d in data["diagnostics"]) == [
        ("CTX703", ".claude"),
        ("CTX703", ".claude/rules"),
    ]


def test_rule_symlink_to_itself_terminates_with_a_diagnostic(tmp_path: Path) -> None:
    """Whatever its code, a self-referencing rule is reported by name and never followed."""
    tree = make_tree(tmp_path)
    _rule_self_loop(tree.project)
    result = run_cli(tree.cli_args(), cwd=tmp_path)
    stderr = result.stderr.decode()
    assert "Traceback" not in stderr
    assert result.returncode in (0, 1)
    assert stderr.startswith(".claude/rules/self.md: ")
    assert "fix the link" in stderr
    assert b"Use tabs." in result.stdout


def test_lone_surrogate_in_managed_settings_does_not_crash(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    _surrogate_in_managed_settings(tree.project)
    result = run_cli(tree.cli_args(), cwd=tmp_path)
    stderr = result.stderr.decode()
    assert result.returncode == 0, stderr
    assert "internal error" not in stderr
    assert stderr.endswith(
        ": warning: claudeMd holds invalid Unicode (lone surrogates), replaced by U+FFFD: "
        f"fix {tree.managed / 'managed-settings.json'} [CTX701]\n"
    )
    out = result.stdout.decode("utf-8")  # strict: the output is valid UTF-8
    assert "Be careful \ufffd" in out
    assert "project rules" in out


def test_lone_surrogate_diagnostic_is_shown_at_managed_settings(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    _surrogate_in_managed_settings(tree.project)
    assert summary(tree.assemble()) == [("CTX701", W, "<managed-settings>")]


def test_lone_surrogate_becomes_one_replacement_character(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    _surrogate_in_managed_settings(tree.project)
    assert [(s.display, s.content) for s in tree.assemble().sources] == [
        ("<managed-settings>", "Be careful \ufffd here."),
        ("CLAUDE.md", "project rules"),
    ]


def test_invalid_frontmatter_makes_the_rule_unconditional(tmp_path: Path) -> None:
    """Control: the same rule with valid YAML is conditional and so not loaded at start."""
    tree = make_tree(tmp_path)
    _invalid_frontmatter(tree.project)
    rules = tree.project / ".claude" / "rules"
    (rules / "valid.md").write_text('---\npaths:\n  - "src/**"\n---\nConditional body\n')
    assembly = tree.assemble()
    assert [(s.display, s.content, s.paths) for s in assembly.sources] == [
        (".claude/rules/api.md", "Rule body", ())
    ]
    assert [(s.display, s.paths) for s in assembly.conditional] == [
        (".claude/rules/valid.md", ("src",))
    ]
    assert summary(assembly) == [("CTX301", Severity.WARNING, ".claude/rules/api.md")]


def _unreadable_file(p: Path) -> Path:
    target = p / "CLAUDE.md"
    target.write_text("secret rules")
    return target


def _unreadable_rules(p: Path) -> Path:
    rules = p / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.md").write_text("Use tabs.")
    return rules


def _unsearchable_dot_claude(p: Path) -> Path:
    (p / ".claude" / "rules").mkdir(parents=True)
    (p / ".claude" / "CLAUDE.md").write_text("hidden")
    (p / ".claude" / "rules" / "style.md").write_text("Use tabs.")
    return p / ".claude"


# kind -> how to build it (returns what to chmod 000), and (code, severity, path, message).
UNREADABLE: dict[str, tuple[Callable[[Path], Path], list[tuple[str, str, str, str]]]] = {
    "file": (
        _unreadable_file,
        [
            (
                "CTX001",
                "error",
                "CLAUDE.md",
                "file cannot be read (Permission denied); not loaded: fix its permissions",
            )
        ],
    ),
    "dot-claude-directory": (
        _unsearchable_dot_claude,
        [
            (
                "CTX701",
                "warning",
                ".claude/settings.json",
                "cannot read (Permission denied); fix its permissions",
            ),
            (
                "CTX701",
                "warning",
                ".claude/settings.local.json",
                "cannot read (Permission denied); fix its permissions",
            ),
            (
                "CTX001",
                "error",
                ".claude/CLAUDE.md",
                "file cannot be read (Permission denied); not loaded: fix its permissions",
            ),
            (
                "CTX702",
                "error",
                ".claude/rules",
                "rules directory cannot be listed; fix its permissions",
            ),
        ],
    ),
    "rules-directory": (
        _unreadable_rules,
        [
            (
                "CTX702",
                "error",
                ".claude/rules",
                "rules directory cannot be listed; fix its permissions",
            )
        ],
    ),
}


@pytest.mark.parametrize("kind", sorted(UNREADABLE))
@pytest.mark.usefixtures("traversable")
def test_unreadable_input_is_reported(tmp_path: Path, kind: str) -> None:
    setup, expected = UNREADABLE[kind]
    tree = make_tree(tmp_path)
    (tree.project / "CLAUDE.local.md").write_text("local notes")
    target = setup(tree.project)
    tree.assemble().render("xml")  # import everything first: the child cannot read /root
    os.chmod(target, 0)
    try:

        def run() -> tuple[list[tuple[str, str, str, str]], list[str]]:
            assembly = tree.assemble()
            return (
                [(d.code, d.severity.value, d.path, d.message) for d in assembly.diagnostics],
                [s.display for s in assembly.sources],
            )

        diagnostics, sources = as_unprivileged(target, run)
    finally:
        os.chmod(target, 0o755)
    assert diagnostics == expected
    assert sources == ["CLAUDE.local.md"]


@pytest.mark.usefixtures("traversable")
def test_cli_exits_1_for_an_unreadable_file(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    target = _unreadable_file(tree.project)
    assert tree.invoke()[0] == 0  # import everything first: the child cannot read /root
    os.chmod(target, 0)
    try:
        outcome = as_unprivileged(target, tree.invoke)
    finally:
        os.chmod(target, 0o644)
    assert outcome == (
        1,
        "",
        "CLAUDE.md: error: file cannot be read (Permission denied); not loaded: "
        "fix its permissions [CTX001]\n",
    )
