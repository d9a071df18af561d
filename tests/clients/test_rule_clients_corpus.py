"""The `cursor` and `copilot` clients on every tree of the shared corpus (eight real
repositories' instruction files, laid out by `benchmarks.corpus.lay_out`): no crash, every file
reported exists and is one of the client's own kinds, explain and lint run to the end."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest

from assembler import assemble
from assembler.lint import lint
from assembler.live.explain import explain
from benchmarks.corpus import lay_out
from benchmarks.harness import CORPUS

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here"),
]

NAMES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else []
# What each client may report: its own files, or its index of agent-requested rules.
OWN = {
    "cursor": re.compile(r"(?:^|/)(?:AGENTS\.md|\.cursorrules|\.cursor/rules/.+\.mdc)$"),
    "copilot": re.compile(
        r"(?:^|/)(?:AGENTS\.md|\.github/copilot-instructions\.md|"
        r"\.github/instructions/.+\.instructions\.md)$"
    ),
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("policy", sorted(OWN))
def test_each_corpus_tree(name: str, policy: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        laid = lay_out(CORPUS / name, Path(tmp))
        machine: dict[str, Any] = {"home": laid.home, "managed_dir": laid.managed, "environ": {}}
        samples = (CORPUS / name / "sample_files.txt").read_text().splitlines()[:8]
        touched = [laid.repo / s for s in samples if s and not os.path.isabs(s)]
        deepest = max((p.parent for p in touched), key=lambda p: len(p.parts), default=laid.repo)
        deepest.mkdir(parents=True, exist_ok=True)
        for cwd in (laid.repo, deepest):
            a = assemble(cwd, policy=policy, touched=touched, **machine)
            files = [s.path for s in a.sources if not s.path.startswith("<")]
            assert all(os.path.lexists(p) for p in files), files
            assert all(OWN[policy].search(p) for p in files), files
            assert a.render("xml") == a.render("xml")
        result = explain(laid.repo, policy=policy, touched=touched, **machine)
        loaded = [r.path for r in result.rows if r.status.value == "loaded"]
        assert loaded == [s.display for s in result.assembly.sources if not s.dropped]
        found = lint(base=laid.repo, policy=policy, **machine)
        assert all(os.path.lexists(laid.repo / f) for f in found.files)


def test_trigger_dev_cursor_rules_sort_into_their_kinds() -> None:
    """The one corpus tree with `.cursor/rules`: three always rules (with an empty `globs:`),
    one agent-requested, three auto-attached, one by a glob that is not valid YAML unquoted."""
    name = "triggerdotdev__trigger.dev"
    if name not in NAMES:
        pytest.skip("tree not in the corpus")
    with tempfile.TemporaryDirectory() as tmp:
        laid = lay_out(CORPUS / name, Path(tmp))
        machine: dict[str, Any] = {"home": laid.home, "managed_dir": laid.managed, "environ": {}}
        a = assemble(laid.repo, policy="cursor", **machine)
        assert [s.display for s in a.sources] == [
            ".cursor/rules/executing-commands.mdc",
            ".cursor/rules/repo.mdc",
            ".cursor/rules/writing-tests.mdc",
            "AGENTS.md",
            ".cursor/rules",
        ]
        assert a.sources[-1].content == (
            "- migrations: how to create and apply database migrations"
        )
        task = laid.repo / "packages" / "x" / "src" / "trigger" / "task.ts"
        after = a.touch(task)
        assert sorted(s.display for s in after.attached(a)) == [
            ".cursor/rules/otel-metrics.mdc",
            ".cursor/rules/writing-tasks.mdc",
        ]
