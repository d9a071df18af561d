"""`.claude/rules`: conditional vs unconditional, globs, order, symlinks (SPEC 4)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assembler.discovery.rules import matching_patterns
from assembler.parsing.frontmatter import expand_paths, split_frontmatter
from tests.helpers.trees import Link, build, codes, git_init, run


def test_conditional_rules_wait_unconditional_ones_load(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/.claude/rules/always.md": "always",
            "repo/.claude/rules/star.md": '---\npaths: "**"\n---\nstar counts as always',
            "repo/.claude/rules/meta.md": "---\ndescription: no paths\n---\nfrontmatter without paths",
            "repo/.claude/rules/ts.md": "---\npaths: src/**/*.ts\n---\nonly for ts",
            "repo/.claude/rules/notes.txt": "not a rule",
            "repo/.claude/rules/UPPER.MD": "not a rule either",
        },
    )
    a = run(tmp_path, "repo", policy=str(_name_ordered(tmp_path)))
    assert [s.content for s in a.sources] == [
        "always",
        "frontmatter without paths",
        "star counts as always",
    ]
    assert [s.display for s in a.conditional] == [".claude/rules/ts.md"]
    assert a.conditional[0].paths == ("src/**/*.ts",)


def _name_ordered(tmp_path: Path) -> Path:
    policy = tmp_path / "by-name.toml"
    policy.write_text('extends = "claude-code"\n[rules]\norder = "name"\n')
    return policy


def test_rules_recurse_into_subdirectories_at_their_position(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/.claude/rules/a.md": "a",
            "repo/.claude/rules/b/inner.md": "b/inner",
            "repo/.claude/rules/c.md": "c",
        },
    )
    a = run(tmp_path, "repo", policy=str(_name_ordered(tmp_path)))
    assert [s.content for s in a.sources] == ["a", "b/inner", "c"]


def test_directory_order_is_what_scandir_returns(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    names = [f"r{i:02d}.md" for i in (7, 3, 11, 1, 9)]
    build(tmp_path, {f"repo/.claude/rules/{n}": n for n in names})
    raw = [e.name for e in os.scandir(tmp_path / "repo/.claude/rules")]
    assert [s.content for s in run(tmp_path, "repo").sources] == raw


def test_symlinked_rule_directories_load_once_and_loops_end(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "shared-rules/s.md": "shared",
            "repo/.claude/rules/shared": Link(str(tmp_path / "shared-rules")),
            "repo/.claude/rules/loop": Link("."),
        },
    )
    a = run(tmp_path, "repo")
    assert [(s.content, s.path) for s in a.sources] == [
        ("shared", str(tmp_path / "shared-rules/s.md"))
    ]
    assert "CTX703" in codes(a)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("src/**/*.ts", ("src/**/*.ts",)),
        ("src/*.ts, lib/*.ts", ("src/*.ts", "lib/*.ts")),
        (["a/**", "b/*.{ts,tsx}"], ("a", "b/*.ts", "b/*.tsx")),
        ("*.{a, b}.{c,d}", ("*.a.c", "*.a.d", "*.b.c", "*.b.d")),
        ("{x,y},z", ("x", "y", "z")),
    ],
)
def test_paths_values_split_and_expand_like_the_client(
    value: object, expected: tuple[str, ...]
) -> None:
    assert expand_paths(value).patterns == expected


def test_brace_expansion_over_the_budget_is_used_unexpanded() -> None:
    huge = "".join("{a,b}" for _ in range(11))  # 2**11 = 2048 patterns
    globs = expand_paths([huge, "ok/*.md"])
    assert globs.over_budget == (huge,)
    assert globs.patterns == (huge, "ok/*.md")


def test_invalid_yaml_is_retried_with_quoted_globs() -> None:
    fm, body = split_frontmatter("---\npaths: **/*.{ts,tsx}\n---\nbody")
    assert (fm.data, fm.error, body) == ({"paths": "**/*.{ts,tsx}"}, "", "body")


def test_unparseable_frontmatter_is_still_stripped() -> None:
    fm, body = split_frontmatter("---\npaths: [unclosed\n  - x: : y\n---\nbody")
    assert fm.present and fm.error and fm.data == {} and body == "body"


@pytest.mark.parametrize(
    ("patterns", "target", "base", "matched"),
    [
        (("src/**/*.ts",), "/r/src/a/b.ts", "/r", "src/**/*.ts"),
        (("*.py",), "/r/deep/x/y.py", "/r", "*.py"),
        (("docs",), "/r/docs/guide/x.md", "/r", "docs"),
        (("src/*.ts",), "/r/src/a/b.ts", "/r", None),
        (("src/**",), "/elsewhere/src/x", "/r", None),
        (("[", "ok/*"), "/r/ok/x", "/r", "ok/*"),
    ],
)
def test_globs_use_gitignore_semantics(
    patterns: tuple[str, ...], target: str, base: str, matched: str | None
) -> None:
    from assembler.parsing.frontmatter import Globs

    assert matching_patterns(Globs(patterns), target, base) == matched


def test_paths_on_a_claude_md_is_ignored(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "---\npaths: nothing/**\n---\nloads anyway"})
    assert [s.content for s in run(tmp_path, "repo").sources] == ["loads anyway"]


def test_imports_of_a_conditional_rule_load_at_start(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/.claude/rules/ts.md": "---\npaths: '*.ts'\n---\n@../../docs/ts.md",
            "repo/docs/ts.md": "detail",
        },
    )
    a = run(tmp_path, "repo")
    assert [s.content for s in a.sources] == ["detail"]
    assert "CTX209" in codes(a)
