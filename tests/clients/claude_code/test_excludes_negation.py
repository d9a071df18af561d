"""Negated `claudeMdExcludes` patterns: picomatch tests each pattern on its own and excludes
a file when any matches, so `!x` excludes every path `x` does not match: user files, the
kept file's imports, every other project file; never managed files or auto memory."""

from __future__ import annotations

import json
from pathlib import Path

from assembler.clients.claude_code.settings import slug
from assembler.parsing import globs
from tests.helpers.trees import DATA, build, codes, git_init, run

REFERENCE = DATA / "excludes-picomatch.jsonl"


def test_excludes_decide_as_picomatch_does() -> None:
    """600 lists of 1-3 patterns, a third of them negated (`!`, `!!`, `!!!`), on the absolute
    paths of a project and a home (`tests/tools/picomatch_reference.js`)."""
    rows = [json.loads(line) for line in REFERENCE.read_text("utf-8").splitlines()]
    assert len(rows) >= 500
    differ = []
    for row in rows:
        compiled = globs.excludes(row["patterns"])
        ours = compiled.match is not None and compiled.match(row["path"])
        if ours != row["excluded"]:
            differ.append(row)
    assert not differ, f"{len(differ)} differ; the first: {differ[0]}"


def _tree(tmp: Path, excludes: list[str]) -> Path:
    git_init(tmp / "repo")
    build(
        tmp,
        {
            "home/.claude/settings.json": json.dumps({"claudeMdExcludes": excludes}),
            "home/.claude/CLAUDE.md": "user",
            "home/.claude/rules/style.md": "user rule",
            "managed/CLAUDE.md": "managed",
            "repo/CLAUDE.md": "project root",
            "repo/CLAUDE.local.md": "local",
            "repo/.claude/rules/r.md": "project rule",
            "repo/a/b/c/CLAUDE.md": "kept @shared.md",
            "repo/a/b/c/shared.md": "import of the kept file",
            "repo/legacy/CLAUDE.md": "legacy",
            f"home/.claude/projects/{slug(tmp / 'repo')}/memory/MEMORY.md": "memory",
        },
    )
    return tmp / "repo" / "a" / "b" / "c"


def test_a_negation_alone_keeps_only_the_file_it_names(tmp_path: Path) -> None:
    """The issue's example: the user's own CLAUDE.md and rules, the project's other files and
    the kept file's import are excluded; managed files and auto memory never are."""
    cwd = _tree(tmp_path, ["!**/a/b/c/CLAUDE.md"])
    a = run(tmp_path, cwd)
    assert [s.content for s in a.sources] == ["managed", "kept @shared.md", "memory"]
    assert codes(a).count("CTX405") == 6  # user, user rule, root, rule, local, the import


def test_a_negation_beside_ordinary_patterns(tmp_path: Path) -> None:
    """`!**/repo/**` excludes what is outside the repository (the user's files); the ordinary
    pattern still excludes inside it."""
    git_init(tmp_path / "repo")
    _tree(tmp_path, ["!**/repo/**", "**/legacy/**"])
    a = run(tmp_path, "repo/legacy")
    assert [s.content for s in a.sources] == [
        "managed",
        "project root",
        "project rule",
        "local",
        "memory",
    ]


def test_two_bangs_cancel_out(tmp_path: Path) -> None:
    cwd = _tree(tmp_path, ["!!**/a/b/c/CLAUDE.md"])
    contents = [s.content for s in run(tmp_path, cwd).sources]
    assert "kept @shared.md" not in contents and "import of the kept file" not in contents
    assert "user" in contents and "project root" in contents


def test_a_negation_excludes_lazily_reached_files_too(tmp_path: Path) -> None:
    """A file below cwd reached by a read is a project file like any other."""
    _tree(tmp_path, ["!**/a/b/c/CLAUDE.md"])
    build(tmp_path, {"repo/a/CLAUDE.md": "on the way", "repo/a/b/c/x.ts": ""})
    a = run(tmp_path, "repo", touched=[tmp_path / "repo/a/b/c/x.ts"])
    assert [s.content for s in a.sources] == ["managed", "memory", "kept @shared.md"]
