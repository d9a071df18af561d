"""The client seam, proven by a toy agent that exists only in these tests.

The toy agent loads `TOY.md` from the project root down to cwd (and, lazily, from the
directories below cwd on the way to a file it reads), renders its own `toy` format from a
template of its own, and owns `TOY.md` files for lint, where only the size checks apply. It
is one class and one template; registering it is all it takes for the policy, the CLI,
rendering, `explain`, lint, the `Assembler` and `watch` to serve it, none of them changed.
"""

from __future__ import annotations

import ast
import io
import re
import time
import tokenize
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import assembler
from assembler import Assembler, PolicyError, assemble, load_policy
from assembler.clients import registry
from assembler.clients.base import (
    Advice,
    Client,
    FileKind,
    FileNote,
    FileRole,
    FormatContext,
    Tracked,
)
from assembler.codes import WARNING, Code
from assembler.commands.options import cli_environ
from assembler.discovery.context import Discovery, Run, ancestors
from assembler.discovery.loader import Loader, text_source
from assembler.lint import lint
from assembler.lint.files import instruction_files_pattern
from assembler.live.explain import Status, explain
from assembler.live.watch import Watcher
from assembler.model import Assembled, Layer, Reason, Why
from assembler.output import formats
from tests.helpers import hook
from tests.helpers.cli import ctxasm
from tests.helpers.trees import DATA, build, git_init, machine

_IN_CHAIN = Reason(Why.ANCESTOR, "toy file on the way to cwd")


def _toy_format(assembly: Assembled, date: str) -> Mapping[str, Any]:
    """One line per file, headed by the last file the agent read."""
    entries = [
        {"path": s.display, "first": s.content.splitlines()[0] if s.content else ""}
        for s in assembly.sources
        if not s.dropped
    ]
    return {"entries": entries, "cwd": assembly.touched[-1] if assembly.touched else "."}


# The toy agent's own check: a line that says TODO, which the toy agent would obey.
TOY_TODO = Code(
    "CTX990", "toy-todo", "a TODO in a toy file: the toy agent takes it as a task", WARNING
)


class Toy(Client[None]):
    name = "toy"
    title = "the toy agent"
    templates = DATA / "toy"
    instruction_files = r"(?:^|/)TOY\.md$"
    read_when_ignored = ("**/TOY.md",)  # read by name, ignored by git or not
    home_variables = ("TOY_HOME",)
    own_codes = (TOY_TODO,)
    lint_codes = frozenset({"CTX101", "CTX102", "CTX404", TOY_TODO.code})
    advice = Advice(split="move detail into the TOY.md of the directory it is about")

    def check_file(
        self, path: Path, text: str | None, tracked: Tracked | None
    ) -> Sequence[FileNote]:
        lines = (text or "").splitlines()
        return [
            FileNote(i, 1, TOY_TODO, "TODO: the toy agent starts on it; make it a plain note")
            for i, line in enumerate(lines, 1)
            if line.startswith("TODO")
        ]

    @property
    def formats(self) -> Mapping[str, FormatContext]:
        return {"toy": _toy_format}

    def discover(self, run: Run) -> Discovery[None]:
        loader = Loader(run)
        out = []
        for directory in ancestors(run.context.cwd):
            if Path(directory).is_relative_to(run.context.project_root):
                out += loader.load(f"{directory}/TOY.md", Layer.PROJECT, _IN_CHAIN, False)
        return Discovery(tuple(i.source for i in out), tuple(loader.diagnostics))

    def touch(
        self, run: Run, state: None, target: Path, already: Collection[str]
    ) -> Discovery[None]:
        loader = Loader(run)
        found = []
        directory = target.parent
        while directory != run.context.cwd and directory.is_relative_to(run.context.cwd):
            reason = Reason(Why.NESTED, f"on the way to {target.name}")
            for item in loader.load(str(directory / "TOY.md"), Layer.SUBDIRECTORY, reason, False):
                if item.source.path not in already:
                    found.append(item.source)
            directory = directory.parent
        return Discovery(tuple(reversed(found)), tuple(loader.diagnostics))

    def classify(self, path: Path) -> FileRole | None:
        return FileRole(FileKind.INSTRUCTIONS, path.parent) if path.name == "TOY.md" else None


class ToyWithNotes(Toy):
    """The toy agent after it learned to read one more input, `NOTES.toy` in cwd: a change to
    this client alone, through the run's `Disk`."""

    name = "toy-notes"

    def discover(self, run: Run) -> Discovery[None]:
        found = super().discover(run)
        path = str(run.context.cwd / "NOTES.toy")
        result = run.disk.read(path, run.policy.limits.skip_bytes)
        if not result.ok:
            return found
        reason = Reason(Why.CWD, "the toy agent's notes")
        note = text_source(
            Layer.LOCAL, path, "NOTES.toy", reason, result.text.strip(), "notes", run.counter
        )
        return found._replace(sources=(*found.sources, note))


@pytest.fixture
def toy() -> Iterator[Toy]:
    client, notes = Toy(), ToyWithNotes()
    registry.register(client)
    registry.register(notes)
    try:
        yield client
    finally:
        registry.unregister(client.name)
        registry.unregister(notes.name)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/TOY.md": "Root toy rules.\nSecond line.",
            "repo/CLAUDE.md": "Claude's file: not the toy's.",
            "repo/app/TOY.md": "App toy rules.",
            "repo/app/deep/TOY.md": "Deep toy rules.",
            "repo/app/deep/main.py": "",
            "toy.toml": 'name = "toy"\nclient = "toy"\n[render]\nformat = "toy"\n[lint]\nmax_lines = 200\n',
            "notes.toml": 'name = "toy-notes"\nclient = "toy-notes"\n',
        },
    )
    return repo


def test_a_policy_names_the_client_and_its_format_is_known(
    toy: Toy, project: Path, tmp_path: Path
) -> None:
    policy = load_policy(tmp_path / "toy.toml")
    assert (policy.client, policy.format) == ("toy", "toy")
    assert "toy" in formats.names()
    build(tmp_path, {"bad.toml": 'client = "toy"\n[render]\nformat = "toy-2"\n'})
    with pytest.raises(PolicyError, match=r"'render.format' must be one of .*toy.*not 'toy-2'"):
        load_policy(tmp_path / "bad.toml")


def test_the_seam_is_closed_once_the_client_is_gone(tmp_path: Path) -> None:
    build(tmp_path, {"toy.toml": 'client = "toy"\n'})
    with pytest.raises(PolicyError, match=r"'client' must be one of claude-code, bootstrap"):
        load_policy(tmp_path / "toy.toml")
    assert "toy" not in formats.names()


def test_discovery_touch_and_the_native_format(toy: Toy, project: Path, tmp_path: Path) -> None:
    policy = tmp_path / "toy.toml"
    assembly = assemble(project / "app", policy=policy, **machine(tmp_path))
    assert [(s.display, s.reason.text) for s in assembly.sources] == [
        ("TOY.md", "toy file on the way to cwd"),
        ("app/TOY.md", "toy file on the way to cwd"),
    ]
    touched = assembly.touch(project / "app" / "deep" / "main.py")
    assert [s.display for s in touched.attached(assembly)] == ["app/deep/TOY.md"]
    assert touched.render() == (
        "TOY CONTEXT for app/deep/main.py\n"
        "TOY.md: Root toy rules.\n"
        "app/TOY.md: App toy rules.\n"
        "app/deep/TOY.md: Deep toy rules.\n"
    )
    assert '<project source="TOY.md">' in touched.render("xml")  # generic formats work too


def test_the_cli_offers_and_renders_the_clients_format(
    toy: Toy, project: Path, tmp_path: Path
) -> None:
    args = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    result = ctxasm(
        ["render", str(project), "--policy", str(tmp_path / "toy.toml"), "--format", "toy", *args]
    )
    assert (result.exit_code, result.stdout) == (0, "TOY CONTEXT for .\nTOY.md: Root toy rules.\n")


def test_explain_lists_what_the_client_considered(toy: Toy, project: Path, tmp_path: Path) -> None:
    result = explain(project / "app", policy=tmp_path / "toy.toml", **machine(tmp_path))
    loaded = [r.path for r in result.rows if r.status is Status.LOADED]
    assert loaded == ["TOY.md", "app/TOY.md"]
    assert result.rules_order is None  # the toy agent lists no directory


def test_lint_finds_the_clients_files_and_applies_only_its_checks(
    toy: Toy, project: Path, tmp_path: Path
) -> None:
    long_with_secret = "".join(f"rule {i}\n" for i in range(230))
    long_with_secret += "key: sk-ant-api03-Zx8fQ2mK9vL4pR7tW1yB3nC6dE5gH0jA\n"
    (project / "app" / "TOY.md").write_text(long_with_secret)
    result = lint(base=project, policy=tmp_path / "toy.toml", **machine(tmp_path))
    assert "app/TOY.md" in result.files and "CLAUDE.md" in result.files
    toy_codes = {f.code for f in result.findings if f.path == "app/TOY.md"}
    assert toy_codes == {"CTX101"}  # the secret check does not apply to the toy's files
    same_for_claude = project / "CLAUDE.md"
    same_for_claude.write_text(long_with_secret)
    claude = lint(["CLAUDE.md"], base=project, **machine(tmp_path))
    assert {"CTX101", "CTX501"} <= {f.code for f in claude.findings}


def test_lint_words_the_clients_advice_and_reports_its_own_code(
    toy: Toy, project: Path, tmp_path: Path
) -> None:
    (project / "app" / "TOY.md").write_text(
        "".join(f"rule {i}\n" for i in range(230)) + "TODO ship\n"
    )
    result = lint(base=project, policy=tmp_path / "toy.toml", **machine(tmp_path))
    found = [(f.line, f.code, f.message) for f in result.findings if f.path == "app/TOY.md"]
    assert found == [
        (201, "CTX101", "231 lines, over the 200-line limit: move detail into the TOY.md of the directory it is about"),
        (231, "CTX990", "TODO: the toy agent starts on it; make it a plain note"),
    ]  # fmt: skip
    selected = lint(base=project, select=["CTX990"], **machine(tmp_path))
    assert [(f.path, f.code) for f in selected.findings] == [("app/TOY.md", "CTX990")]
    listed = ctxasm(["codes"]).stdout
    assert re.search(r"^CTX990 +warning +- +toy-todo ", listed, re.MULTILINE)


def test_lint_checks_the_clients_git_ignored_files(toy: Toy, project: Path, tmp_path: Path) -> None:
    """The toy agent reads TOY.md by name, ignored or not: whole-repository lint checks it."""
    build(project, {".gitignore": "app/\n"})
    result = lint(base=project, policy=tmp_path / "toy.toml", **machine(tmp_path))
    assert {"app/TOY.md", "app/deep/TOY.md"} <= set(result.ignored) <= set(result.files)


def test_home_drops_the_clients_home_variables(toy: Toy, monkeypatch: pytest.MonkeyPatch) -> None:
    """With `--home`, a variable that moves the toy agent's home would win: it is dropped."""
    monkeypatch.setenv("TOY_HOME", "/elsewhere")
    assert "TOY_HOME" in registry.home_variables()
    assert "TOY_HOME" not in cli_environ(Path("/home/someone"))
    assert cli_environ(None)["TOY_HOME"] == "/elsewhere"


def test_the_hook_files_are_the_registrys() -> None:
    """`.pre-commit-hooks.yaml` hands the hook every registered client's files, and this
    repository's own use of it the same (`python -m tests.helpers.hook` rewrites both)."""
    for path in (hook.HOOKS, hook.CONFIG):
        assert hook.files_line(path.read_text(encoding="utf-8")) == instruction_files_pattern(), (
            f"{path.name} is not the registry's: run python -m tests.helpers.hook"
        )


def test_a_new_client_is_in_the_hook_files(toy: Toy) -> None:
    written = hook.files_line(hook.written(hook.HOOKS.read_text(encoding="utf-8")))
    assert re.search(written, "app/TOY.md") and not re.search(written, "app/TOYS.md")
    assert re.search(written, "CLAUDE.md")  # the built-in clients' files stay


def test_the_assembler_and_watch_follow_a_new_input(
    toy: Toy, project: Path, tmp_path: Path
) -> None:
    """`NOTES.toy` is read by the client alone; nothing else was told about it."""
    notes = project / "NOTES.toy"
    notes.write_text("First notes.")
    asm = Assembler(project, policy=tmp_path / "notes.toml", **machine(tmp_path))
    asm.assemble()
    assert str(notes) in asm.dependencies.paths
    watcher = Watcher(asm, render=lambda a: a.render("xml"), debounce=0.02)
    try:
        first = watcher.start()
        assert first.text is not None and "First notes." in first.text
        time.sleep(0.05)
        notes.write_text("Second notes, longer.")
        deadline = time.monotonic() + 15
        update = None
        while update is None or "Second notes" not in (update.text or ""):
            assert time.monotonic() < deadline, "watch did not follow NOTES.toy"
            update = watcher.next_update(timeout=deadline - time.monotonic())
        assert re.search(r"changed NOTES\.toy", update.line)
    finally:
        watcher.close()


# --- nothing outside `clients/` names a client -------------------------------------------------

ASSEMBLER = Path(assembler.__file__).parent
# Settings keys, environment variables and directories the clients read that no seam member
# declares (what members declare is derived below), and the one word of an agent's name that
# its title does not hold alone ("Gemini CLI").
KNOWN = (
    "claudeMd", "autoMemoryDirectory", "autoMemoryEnabled", "CLAUDE_CODE_", "CLAUDE_COWORK_",
    "CODEX_HOME", "project_doc_", "project_root_markers", "context.fileName", "alwaysApply",
    "applyTo", "excludeAgent", ".codex", ".gemini", ".cursor", ".github/instructions", "Gemini",
)  # fmt: skip
# Packages whose prose (docstrings and comments, never code) may name the client it ports,
# and why: the one short list of exceptions.
CITING = {
    "parsing/": "ports of one client's reading of a file (its `marked` lexing, its `@import`, "
    "frontmatter and glob rules, the npm `ignore` it bundles): each function names the "
    "upstream function it follows, which is how a port is re-synced (docs/markdown.md)",
    "conversation/": "the runtime reproduces one agent's compaction, numbers and shapes, as "
    "the articles describe it; it loads no instruction file, so it is no client of the seam",
}
_PATHLIKE = re.compile(r"[\w.~*-]+(?:/[\w.~*-]+)*")


class Names(NamedTuple):
    """What the registered clients declare that only they may name."""

    words: tuple[re.Pattern[str], ...]  # names, titles, variables, keys, wording
    files: tuple[re.Pattern[str], ...]  # `instruction_files`: a path-like token one matches
    dirs: frozenset[str]  # directory names: skill homes, scratch and ignored-file globs

    def named(self, line: str) -> str | None:
        """What `line` names of a client, or None."""
        for word in self.words:
            if found := word.search(line):
                return str(found.group(0))
        tokens: list[str] = _PATHLIKE.findall(line)
        for token in tokens:
            parts = token.split("/")
            if any(p.search(token) for p in self.files) or any(
                part == d or part.startswith(d + ".") for part in parts for d in self.dirs
            ):
                return token
        return None


def registered_names() -> Names:
    clients = registry.clients()
    words = {c.name for c in clients} | {c.title for c in clients}
    words |= {v for c in clients for v in c.home_variables}
    dirs = {
        d for c in clients for d in (*c.skill_homes, *(s.split("/")[0] for s in c.scratch_dirs))
    }
    dirs |= {
        part
        for c in clients
        for glob in c.read_when_ignored
        for part in glob.split("/")
        if part.startswith(".") and "*" not in part
    }
    return Names(
        (*(re.compile(rf"(?<![\w-]){re.escape(w)}(?![\w-])") for w in sorted(words)),
         *(re.compile(re.escape(k)) for k in KNOWN)),
        tuple(re.compile(c.instruction_files) for c in clients if c.instruction_files),
        frozenset(dirs),
    )  # fmt: skip


def prose_lines(text: str) -> tuple[set[int], dict[int, int]]:
    """The lines of `text` that are docstrings, and where each comment starts (line: column)."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Constant):
            continue
        if isinstance(node.value.value, str):
            docstrings.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    comments = {
        token.start[0]: token.start[1]
        for token in tokenize.generate_tokens(io.StringIO(text).readline)
        if token.type == tokenize.COMMENT
    }
    return docstrings, comments


def naming_a_client(names: Names) -> list[str]:
    """`module:line: name` for each line outside `clients/` that names a client (the prose of
    `CITING` packages left out)."""
    found = []
    for path in sorted(ASSEMBLER.rglob("*.py")):
        rel = path.relative_to(ASSEMBLER).as_posix()
        if rel.startswith("clients/"):
            continue
        text = path.read_text(encoding="utf-8")
        citing = any(rel.startswith(package) for package in CITING)
        docstrings, comments = prose_lines(text) if citing else (set(), {})
        for number, line in enumerate(text.splitlines(), 1):
            if number in docstrings:
                continue
            code = line[: comments[number]] if number in comments else line
            if (name := names.named(code)) is not None:
                found.append(f"assembler/{rel}:{number}: {name}")
    return found


def test_no_module_outside_clients_names_a_client() -> None:
    """A client's file names, settings, environment variables and wording are its own: the
    rest of the package asks the registry (docs/architecture.md, "The client seam")."""
    assert naming_a_client(registered_names()) == []


def test_the_names_come_from_what_the_clients_declare(toy: Toy) -> None:
    names = registered_names()
    for line in (
        "see CLAUDE.md",  # Claude Code's `instruction_files`
        "a rule in x/.claude/rules/a.md",
        "under .claude/worktrees",  # its scratch directory
        "the ~/.claude.json approvals",  # a file of its skill home's name
        "set CLAUDE_CONFIG_DIR",  # its home variable
        "as Claude Code does",  # its title
        "the claude-code format",  # its name
        "Codex stops reading",
        "pkg/AGENTS.override.md",
        "web/.cursor/rules/a.mdc",
        "the applyTo key",  # a setting no member declares (`KNOWN`)
        "app/TOY.md",  # a client registered now
        "set TOY_HOME",
    ):
        assert names.named(line) is not None, line
    for line in ("docs/notes.md", "the rules directory", "a scanned position", "the Claude API"):
        assert names.named(line) is None, line
    assert [reason for reason in CITING.values() if len(reason) < 80] == []  # each says why
