"""The `cursor` and `copilot` clients on a hostile repository: special files, loops, links out
of the project, YAML bombs, backtracking globs and a tree thousands of directories deep give
diagnostics and bounded work, never a crash or a hang (docs/security.md)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from assembler import assemble
from assembler.lint import lint
from assembler.live.explain import explain
from tests.helpers.hostile_tree import mkdirs, remove
from tests.helpers.rule_trees import tree
from tests.helpers.trees import build, machine

BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefg", "bcdefgh", strict=True)
)
DEPTH = 1500


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Path]:
    build(tmp_path, {"home/secret.md": "PRIVATE-MARKER\n"})
    repo = tree(
        tmp_path,
        {
            "repo/.cursor/rules/bin.mdc": "---\nalwaysApply: true\n---\nA\0B\n",
            "repo/.cursor/rules/bomb.mdc": f"---\n{BOMB}globs: '**'\n---\nBomb.\n",
            "repo/.cursor/rules/slow.mdc": "---\nglobs: '" + "*a" * 400 + "z'\n---\nSlow.\n",
            "repo/.github/instructions/bomb.instructions.md": f"---\n{BOMB}---\nBomb.\n",
            "repo/.github/instructions/slow.instructions.md": (
                '---\napplyTo: "' + "*a" * 400 + 'z"\n---\nSlow.\n'
            ),
        },
    )
    os.mkfifo(repo / ".cursor" / "rules" / "fifo.mdc")
    os.symlink(".", repo / ".cursor" / "rules" / "loop")
    os.symlink(tmp_path / "home" / "secret.md", repo / ".cursor" / "rules" / "leak.mdc")
    os.symlink(tmp_path / "home" / "secret.md", repo / "AGENTS.md")
    deep = repo / "/".join(["d"] * DEPTH)
    mkdirs(deep)  # without recursion
    build(deep, {"AGENTS.md": "Deep agents.\n", "f.py": ""})
    yield repo
    remove(repo / "d")  # pytest's clean-up recurses once per level


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["cursor", "copilot"])
def test_every_command_ends_with_diagnostics(tmp_path: Path, hostile: Path, policy: str) -> None:
    deep = hostile / "/".join(["d"] * DEPTH) / "f.py"
    a = assemble(
        hostile, policy=policy, touched=[deep, hostile / ("a" * 400 + "z")], **machine(tmp_path)
    )
    said = {d.code for d in a.diagnostics}
    assert "CTX802" in said  # the link into the home directory is loaded and said
    assert "Deep agents." in a.text
    assert "Bomb." not in a.render("xml")
    if policy == "cursor":
        assert {"CTX003", "CTX004", "CTX308"} <= said
    explain(hostile, policy=policy, touched=[deep], **machine(tmp_path))
    found = lint(base=hostile, policy=policy, **machine(tmp_path))
    assert "CTX802" in {f.code for f in found.findings}
