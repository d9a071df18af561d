"""`@imports`: syntax, placement, depth, cycles, duplicates, external approval (SPEC 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assembler.parsing.imports import find_imports, has_text_extension
from tests.helpers.trees import Link, build, codes, git_init, listing, run


def tokens(text: str) -> list[str]:
    return [token for token, _ in find_imports(text, "/base", "/home/u")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@a.md", ["a.md"]),
        ("see @./b.md and @../c.md", ["./b.md", "../c.md"]),
        ("home @~/notes.md abs @/etc/x.md", ["~/notes.md", "/etc/x.md"]),
        ("mail foo@bar.com is not an import", []),
        ("@my\\ file.md", ["my file.md"]),
        ("@guide.md#setup", ["guide.md"]),
        ("@#heading @/ @@x @(x) @*x", []),
        ("`@inline.md` stays code", []),
        ("```\n@fenced.md\n```\n", []),
        ("    @indented.md\n", []),
        ("<!-- @commented.md -->\n", []),
        ("<!-- c --> @after-comment.md\n", ["after-comment.md"]),
        ("<div>\n@inside-html.md\n</div>\n", []),
        ("- item @listed.md\n- ```\n  @in-list-fence.md\n  ```\n", ["listed.md"]),
        ("> quoted @quoted.md\n", ["quoted.md"]),
        ("@a.md @a.md", ["a.md"]),
        ("npm @google/gemini-cli-core", ["google/gemini-cli-core"]),
        ("**@bold.md** and _@em.md_", ["bold.md", "em.md"]),
        # An image's text is tokens like a link's: `marked` scans both (tests/data/markdown-corpus).
        ("[see @linked.md](https://x.dev/@not) ![@alt.md](img.png)", ["linked.md", "alt.md"]),
        # A tight list item's text is scanned whole before its tokens, link destination and
        # all, as `marked` gives it to the client (tests/data/markdown-corpus.jsonl).
        (
            "- [Arend van Beelen @arendjr](https://github.com/arendjr)",
            ["arendjr](https://github.com/arendjr)", "arendjr"],
        ),
        ("@docs/_partials/snake_case.md", ["docs/_partials/snake_case.md"]),
    ],
)
def test_import_syntax(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


def test_resolution_is_relative_to_the_importing_files_directory() -> None:
    assert find_imports("@x.md @../y.md @~/z.md", "/repo/docs", "/home/u") == [
        ("x.md", "/repo/docs/x.md"),
        ("../y.md", "/repo/y.md"),
        ("~/z.md", "/home/u/z.md"),
    ]


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("a.md", True),
        ("a.MD", True),
        ("Makefile", True),
        (".env", True),
        ("a.png", False),
        ("a.md.", False),
    ],
)
def test_only_text_extensions_are_imported(name: str, ok: bool) -> None:
    assert has_text_extension(f"/x/{name}") is ok


def test_imports_follow_their_importer_depth_first_with_its_layer(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "root @a.md @b.md",
            "repo/a.md": "a @a1.md",
            "repo/a1.md": "a1",
            "repo/b.md": "b",
            "repo/CLAUDE.local.md": "local @l.md",
            "repo/l.md": "from local",
        },
    )
    assert listing(run(tmp_path, "repo")) == [
        ("project", "CLAUDE.md", "in cwd"),
        ("project", "a.md", "imported by CLAUDE.md (@a.md) at depth 1"),
        ("project", "a1.md", "imported by a.md (@a1.md) at depth 2"),
        ("project", "b.md", "imported by CLAUDE.md (@b.md) at depth 1"),
        ("local", "CLAUDE.local.md", "in cwd"),
        ("local", "l.md", "imported by CLAUDE.local.md (@l.md) at depth 1"),
    ]


def test_depth_four_loads_depth_five_is_refused(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "@d1.md",
            **{f"repo/d{i}.md": f"d{i} @d{i + 1}.md" for i in range(1, 6)},
        },
    )
    a = run(tmp_path, "repo")
    assert [s.display for s in a.sources] == ["CLAUDE.md", "d1.md", "d2.md", "d3.md", "d4.md"]
    assert "CTX203" in codes(a)


def test_cycles_duplicates_and_missing_files_are_skipped(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "@a.md @b.md @missing.md",
            "repo/a.md": "a @CLAUDE.md @b.md",
            "repo/b.md": "b",
            "repo/.claude/rules/rule.md": "rule @b.md",
        },
    )
    a = run(tmp_path, "repo")
    assert [s.display for s in a.sources] == ["CLAUDE.md", "a.md", "b.md", ".claude/rules/rule.md"]
    assert {"CTX202", "CTX208", "CTX201"} <= set(codes(a))


def test_a_file_already_loaded_as_a_rule_is_not_imported_again(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path, {"repo/.claude/rules/r.md": "rule", "repo/CLAUDE.local.md": "@.claude/rules/r.md"}
    )
    assert [s.display for s in run(tmp_path, "repo").sources] == [
        ".claude/rules/r.md",
        "CLAUDE.local.md",
    ]


def test_external_imports_are_dropped_unless_approved(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "shared/team.md": "team rules",
            "repo/CLAUDE.md": "@../shared/team.md",
            "repo/pkg/x": None,
            "home/.claude/CLAUDE.md": "@~/../shared/team.md",
        },
    )
    a = run(tmp_path, "repo")
    # The user file may import anywhere; the project file's external import is dropped.
    assert [(s.layer.value, s.display, s.content) for s in a.sources] == [
        ("user", "~/.claude/CLAUDE.md", "@~/../shared/team.md"),
        ("user", f"{tmp_path}/shared/team.md", "team rules"),
        ("project", "CLAUDE.md", "@../shared/team.md"),
    ]
    assert "CTX204" in codes(a)

    build(
        tmp_path,
        {
            "home/.claude.json": json.dumps(
                {"projects": {str(repo): {"hasClaudeMdExternalIncludesApproved": True}}}
            )
        },
    )
    (tmp_path / "home/.claude/CLAUDE.md").unlink()
    approved = run(tmp_path, "repo")
    assert [(s.layer.value, s.content) for s in approved.sources] == [
        ("project", "@../shared/team.md"),
        ("project", "team rules"),
    ]


def test_ancestor_import_of_a_sibling_is_external_to_a_deeper_cwd(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {"repo/CLAUDE.md": "@AGENTS.md", "repo/AGENTS.md": "agents", "repo/pkg/CLAUDE.md": "pkg"},
    )
    assert [s.display for s in run(tmp_path, "repo").sources] == ["CLAUDE.md", "AGENTS.md"]
    deeper = run(tmp_path, "repo/pkg")
    assert [s.display for s in deeper.sources] == ["CLAUDE.md", "pkg/CLAUDE.md"]
    assert "CTX204" in codes(deeper)


def test_an_import_of_nothing_is_missing_from_every_cwd(tmp_path: Path) -> None:
    """`@langfuse/shared` (an npm package named in prose) resolves to no file: from a
    subdirectory it lies outside cwd too, but approving external imports would load nothing,
    so it is missing (CTX201) there as at the root, not an unapproved import (CTX204)."""
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "Types come from @langfuse/shared and @docs/gone.md",
            "repo/web/CLAUDE.md": "web",
            "repo/web/deep/x": None,
        },
    )
    for cwd in ("repo", "repo/web", "repo/web/deep"):
        found = run(tmp_path, cwd).diagnostics
        assert [(d.code, d.path) for d in found] == [
            ("CTX201", "langfuse/shared"),
            ("CTX201", "docs/gone.md"),
        ], cwd
        assert found[0].message == "imported by CLAUDE.md but missing"


def test_imports_resolve_from_the_symlink_target_directory(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/.agents/AGENTS.md": "@detail.md",
            "repo/.agents/detail.md": "detail beside the target",
            "repo/CLAUDE.md": Link(".agents/AGENTS.md"),
        },
    )
    assert [s.content for s in run(tmp_path, "repo").sources] == [
        "@detail.md",
        "detail beside the target",
    ]


def test_imports_inside_code_are_not_followed_on_disk(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "```python\n@pytest.fixture\n```\nUse `@x.md`.\n",
            "repo/pytest.fixture": "no",
            "repo/x.md": "no",
        },
    )
    assert [s.display for s in run(tmp_path, "repo").sources] == ["CLAUDE.md"]


def test_non_text_import_is_refused(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "@logo.png", "repo/logo.png": "not really an image"})
    a = run(tmp_path, "repo")
    assert [s.display for s in a.sources] == ["CLAUDE.md"]
    assert "CTX205" in codes(a)
