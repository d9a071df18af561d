"""The client seam, proven by a toy agent that exists only in these tests.

The toy agent loads `TOY.md` from the project root down to cwd (and, lazily, from the
directories below cwd on the way to a file it reads), renders its own `toy` format from a
template of its own, and owns `TOY.md` files for lint, where only the size checks apply. It
is one class and one template; registering it is all it takes for the policy, the CLI,
rendering, `explain`, lint, the `Assembler` and `watch` to serve it, none of them changed.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from assembler import Assembler, PolicyError, assemble, load_policy
from assembler.cli import cli
from assembler.clients import registry
from assembler.clients.base import Client, FileKind, FileRole, FormatContext
from assembler.discovery.context import Discovery, Run, ancestors
from assembler.discovery.loader import Loader, text_source
from assembler.lint import lint
from assembler.live.explain import Status, explain
from assembler.live.watch import Watcher
from assembler.model import Assembled, Layer, Reason, Why
from assembler.output import formats
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


class Toy(Client[None]):
    name = "toy"
    templates = DATA / "toy"
    instruction_files = r"(?:^|/)TOY\.md$"
    lint_codes = frozenset({"CTX101", "CTX102", "CTX404"})

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
            "toy.toml": 'name = "toy"\nclient = "toy"\n[render]\nformat = "toy"\n',
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
    result = CliRunner().invoke(
        cli,
        ["render", str(project), "--policy", str(tmp_path / "toy.toml"), "--format", "toy", *args],
        catch_exceptions=False,
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
