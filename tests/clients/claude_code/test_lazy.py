"""Lazy loading for touched paths: order, conditional rules, no re-attachment, wrapper."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.trees import build, git_init, run

TREE = {
    "home/.claude/rules/user-ts.md": "---\npaths: '**/*.ts'\n---\nuser ts rule",
    "managed/.claude/rules/managed-api.md": "---\npaths: api/**\n---\nmanaged api rule",
    "repo/CLAUDE.md": "root",
    "repo/.claude/rules/root-ts.md": "---\npaths:\n  - api/src/*.{ts,tsx}\n---\nroot ts rule",
    "repo/.claude/rules/root-py.md": "---\npaths: '*.py'\n---\nroot py rule",
    "repo/api/CLAUDE.md": "api file",
    "repo/api/.claude/CLAUDE.md": "api dot-claude file",
    "repo/api/CLAUDE.local.md": "api local",
    "repo/api/.claude/rules/api-always.md": "api unconditional rule",
    "repo/api/.claude/rules/api-src.md": "---\npaths: src/**\n---\napi src rule",
    "repo/api/src/CLAUDE.md": "src file",
    "repo/api/src/app.ts": "code",
    "repo/api/src/other.ts": "code",
    "repo/web/CLAUDE.md": "web file",
}


def _setup(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, TREE)


def _listed(directory: Path) -> list[str]:
    """The names in `directory` in the order the filesystem lists them (the client's)."""
    with os.scandir(directory) as entries:
        return [entry.name for entry in entries]


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_touch_attaches_nested_files_and_their_rules_in_place_then_conditional_rules(
    tmp_path: Path, version: str
) -> None:
    """Each nested directory's rules (unconditional, and conditional ones that match, in
    directory order) come at its position, before the conditional rules of cwd and above
    (SPEC 4b, found by fuzzing 2.1.197; ctxasm put them last before)."""
    _setup(tmp_path)
    start = run(tmp_path, "repo", client_version=version)
    after = start.touch(tmp_path / "repo/api/src/app.ts")
    api_rules = {
        "api-always.md": "rule in api/.claude/rules, on the way to api/src/app.ts",
        "api-src.md": "paths: 'src' matched api/src/app.ts",
    }
    assert [(s.display, s.reason.text) for s in after.attached(start)] == [
        ("api/CLAUDE.md", "in api, on the way to api/src/app.ts"),
        ("api/.claude/CLAUDE.md", "in api, on the way to api/src/app.ts"),
        ("api/CLAUDE.local.md", "in api, on the way to api/src/app.ts"),
        *(
            (f"api/.claude/rules/{name}", api_rules[name])
            for name in _listed(tmp_path / "repo/api/.claude/rules")
        ),
        ("api/src/CLAUDE.md", "in api/src, on the way to api/src/app.ts"),
        (f"{tmp_path}/managed/.claude/rules/managed-api.md", "paths: 'api' matched api/src/app.ts"),
        ("~/.claude/rules/user-ts.md", "paths: '**/*.ts' matched api/src/app.ts"),
        (".claude/rules/root-ts.md", "paths: 'api/src/*.ts' matched api/src/app.ts"),
    ]
    assert all(s.lazy and s.layer.value == "subdirectory" for s in after.attached(start))


def test_a_file_loaded_at_start_or_attached_before_is_not_attached_again(tmp_path: Path) -> None:
    _setup(tmp_path)
    start = run(tmp_path, "repo/api")
    first = start.touch(tmp_path / "repo/api/src/app.ts")
    assert [s.display for s in first.attached(start)] == [
        "api/src/CLAUDE.md",
        "~/.claude/rules/user-ts.md",
        ".claude/rules/root-ts.md",
        "api/.claude/rules/api-src.md",
    ]
    second = first.touch(tmp_path / "repo/api/src/other.ts")
    assert second.attached(first) == ()
    assert second.touched == ("api/src/app.ts", "api/src/other.ts")


def test_user_and_managed_rule_globs_are_relative_to_cwd(tmp_path: Path) -> None:
    _setup(tmp_path)
    start = run(tmp_path, "repo/api")
    after = start.touch(tmp_path / "repo/api/x.ts")
    # managed `api/**` is relative to cwd (repo/api), so repo/api/x.ts is `x.ts`: no match.
    assert [s.display for s in after.attached(start)] == ["~/.claude/rules/user-ts.md"]


def test_touch_outside_cwd_attaches_nothing(tmp_path: Path) -> None:
    _setup(tmp_path)
    start = run(tmp_path, "repo/api")
    after = start.touch(tmp_path / "repo/web/x.ts")
    assert after.attached(start) == ()
    assert "CTX407" in [d.code for d in after.diagnostics]


def test_touched_at_assembly_time_equals_touching_later(tmp_path: Path) -> None:
    _setup(tmp_path)
    target = tmp_path / "repo/api/src/app.ts"
    direct = run(tmp_path, "repo", touched=[target])
    later = run(tmp_path, "repo").touch(target)
    assert direct.render("claude-code") == later.render("claude-code")
    assert direct.text == later.text


def test_claude_code_wrapper_for_lazy_files_keeps_content_untrimmed(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "root\n",
            "repo/sub/CLAUDE.md": "---\nx: 1\n---\nsub text\n\n",
            "repo/sub/f.py": "",
        },
    )
    a = run(tmp_path, "repo", touched=[tmp_path / "repo/sub/f.py"])
    out = a.render("claude-code", date="2026-01-31")
    sub = tmp_path / "repo/sub/CLAUDE.md"
    assert out.endswith(
        f"\n\n<system-reminder>\nContents of {sub}:\n\nsub text\n\n\n</system-reminder>"
    )
