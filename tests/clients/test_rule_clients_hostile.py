"""The `cursor` and `copilot` clients on a hostile repository: special files, loops, links out
of the project, YAML bombs, backtracking globs and a tree thousands of directories deep give
diagnostics and bounded work, never a crash or a hang (docs/security.md)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import pytest

from assembler import assemble
from assembler.clients import copilot, cursor
from assembler.clients.base import FileNote
from assembler.lint import lint
from assembler.live.explain import explain
from assembler.parsing import frontmatter as fm
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


def _frontmatter_parses(check: Callable[[], object]) -> int:
    """How many times `check()` parses a frontmatter block (calls of `split_frontmatter`,
    counted by a profile hook; past a few it stops the check: the old code parsed once per
    finding, 20 s for 2,000 keys)."""
    code = fm.split_frontmatter.__code__
    count = 0

    def hook(frame: FrameType, event: str, arg: object) -> None:
        nonlocal count
        if event == "call" and frame.f_code is code:
            count += 1
            if count > 3:
                raise AssertionError("the frontmatter is parsed again for each finding")

    sys.setprofile(hook)
    try:
        check()
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize(
    ("path", "code"),
    [
        (".cursor/rules/keys.mdc", "CTX925"),
        (".github/instructions/keys.instructions.md", "CTX935"),
    ],
)
def test_thousands_of_unknown_keys_parse_the_frontmatter_once(
    tmp_path: Path, path: str, code: str
) -> None:
    """Issue 22 item 6: 2,000 unknown keys in a 17 KB file gave 2,000 findings, each finding
    its line by parsing the frontmatter again (quadratic: 20 s a file). One index of line
    starts, as for CLAUDE.md; each key's finding still points at its own line."""
    text = "---\n" + "".join(f"key{i}: v\n" for i in range(2000)) + "applyTo: '**'\n---\nBody.\n"
    repo = tree(tmp_path, {f"repo/{path}": text})
    client = cursor.CLIENT if path.endswith(".mdc") else copilot.CLIENT
    notes: list[FileNote] = []
    assert (
        _frontmatter_parses(lambda: notes.extend(client.check_file(repo / path, text, None))) == 1
    )
    unknown = [(n.line, n.message) for n in notes if n.code.code == code]
    assert len(unknown) == 2000 + path.endswith(".mdc")  # Cursor does not read applyTo
    assert all(f"'key{line - 2}'" in message for line, message in unknown[:2000])
    found = lint(base=repo, **machine(tmp_path)).findings
    assert [(f.line, f.code) for f in found if f.code == code] == [(i, code) for i in range(2, 102)]
