"""Settings a repository or a machine holds in an unusable shape: a warning naming the file,
never a crash, and the rest of the run as the client would do it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.trees import build, git_init, run


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{bad", "invalid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"projects": [1]}', "'projects' is not an object"),
    ],
)
def test_an_unusable_claude_json_is_reported(tmp_path: Path, text: str, said: str) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "hi", "home/.claude.json": text})
    a = run(tmp_path, "repo")
    [problem] = a.diagnostics
    assert (problem.code, problem.path) == ("CTX701", "~/.claude.json")
    assert said in problem.message and "not approved" in problem.message


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ('{"claudeMdExcludes": "CLAUDE.md"}', "claudeMdExcludes"),
        ('{"claudeMdExcludes": [1, null]}', "claudeMdExcludes"),
        ('{"autoMemoryEnabled": "no"}', "autoMemoryEnabled"),
        ('{"autoMemoryDirectory": 7}', "autoMemoryDirectory"),
    ],
)
def test_wrong_typed_settings_are_reported(tmp_path: Path, settings: str, key: str) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "hi", "repo/.claude/settings.json": settings})
    a = run(tmp_path, "repo")
    assert [s.content for s in a.sources] == ["hi"]
    [problem] = [d for d in a.diagnostics if d.code == "CTX701"]
    assert problem.path == ".claude/settings.json" and repr(key) in problem.message


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_a_mixed_exclude_list_is_ignored_whole(tmp_path: Path, version: str) -> None:
    """A `claudeMdExcludes` list holding any non-string entry is ignored as a whole (SPEC 4b,
    found by fuzzing 2.1.197): its string patterns exclude nothing (they did before)."""
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "hi",
            "repo/.claude/settings.json": '{"claudeMdExcludes": [1, "**/CLAUDE.md"]}',
        },
    )
    a = run(tmp_path, "repo", client_version=version)
    assert [s.content for s in a.sources] == ["hi"]
    assert [d.code for d in a.diagnostics] == ["CTX701"]
