"""Claude Code's version table, and the text and settings facts of SPEC 4b on real trees at
both modelled releases (2.1.197 and 2.1.332)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import pytest

from assembler.clients.claude_code.versions import FACTS, MODELLED, Facts, facts_at
from tests.helpers.trees import ROOT, build, git_init, run

OLD, NEW = MODELLED


def test_the_table_is_the_facts_value_and_every_fact_says_where_it_was_seen() -> None:
    assert tuple(f.name for f in FACTS) == Facts._fields
    assert all(re.search(r"2\.1\.(197|332)", f.observed) for f in FACTS)
    assert not any(facts_at(OLD)) and all(facts_at(NEW))  # every row so far: new in 2.1.332


def test_docs_list_every_version_gated_fact() -> None:
    doc = (ROOT / "docs" / "claude-code.md").read_text(encoding="utf-8")
    assert [f.name for f in FACTS if f"`{f.name}`" not in doc] == []


def _contents(tmp_path: Path, files: Mapping[str, str | bytes], version: str) -> list[str]:
    git_init(tmp_path / "repo")
    for path, data in files.items():
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data if isinstance(data, bytes) else data.encode())
    return [s.content for s in run(tmp_path, "repo", client_version=version).sources]


@pytest.mark.parametrize(
    ("text", "old", "new"),
    [
        # Lexed (it holds <!--) but nothing removed: 2.1.197 made it LF, 2.1.332 keeps CRLF.
        (b"a\r\nb <!-- x -->\r\n", "a\nb <!-- x -->", "a\r\nb <!-- x -->"),
        # A comment block removed: LF under both.
        (b"a\r\n\r\n<!-- x -->\r\nb\r\n", "a\n\nb", "a\n\nb"),
        # A link reference definition in lexed text: 2.1.197 drops it, 2.1.332 keeps it.
        (b"A\n\n[a]: http://x\n\n<!-- c -->\n", "A", "A\n\n[a]: http://x"),
        # A leading BOM: 2.1.197 keeps it through processing, so the comment after it stays.
        ("\ufeff<!-- c -->\nD".encode(), "<!-- c -->\nD", "<!-- c -->\nD"),
        # and frontmatter after it: 2.1.197 loads the block as text, 2.1.332 parses it.
        ("\ufeff---\nx: 1\n---\nC".encode(), "---\nx: 1\n---\nC", "C"),
    ],
)
def test_text_processing_by_release(tmp_path: Path, text: bytes, old: str, new: str) -> None:
    """SPEC 4b.4 and the 2.1.197 details found by fuzzing (ctxasm made every lexed text LF,
    kept definitions and dropped a leading BOM first, under either release)."""
    assert _contents(tmp_path / "o", {"repo/CLAUDE.md": text}, OLD) == [old]
    assert _contents(tmp_path / "n", {"repo/CLAUDE.md": text}, NEW) == [new]


def test_a_definition_only_file_left_blank_under_2_1_197_is_skipped(tmp_path: Path) -> None:
    files = {"repo/CLAUDE.md": "[a]: http://x\n\n<!-- c -->\n"}
    assert _contents(tmp_path / "o", files, OLD) == []
    assert _contents(tmp_path / "n", files, NEW) == ["[a]: http://x"]


def test_a_bom_prefixed_rule_with_paths_is_conditional_from_2_1_332(tmp_path: Path) -> None:
    rule = "\ufeff---\npaths: src/**\n---\nC"
    files = {"repo/.claude/rules/r.md": rule, "repo/src/a.ts": ""}
    assert _contents(tmp_path / "o", files, OLD) == ["---\npaths: src/**\n---\nC"]
    assert _contents(tmp_path / "n", files, NEW) == []
    later = run(tmp_path / "n", "repo", client_version=NEW)
    touched = later.touch(tmp_path / "n/repo/src/a.ts")
    assert [s.content for s in touched.attached(later)] == ["C"]


def test_the_git_roots_local_settings_count_from_a_deeper_cwd_from_2_1_332(
    tmp_path: Path,
) -> None:
    """SPEC 4b.5: `claudeMdExcludes` of the root's `.claude/settings.local.json` applies to a
    start in a subdirectory (its `.claude/settings.json` still does not)."""
    excludes = json.dumps({"claudeMdExcludes": ["**/sub/CLAUDE.md"]})
    files = {
        "repo/.claude/settings.local.json": excludes,
        "repo/.claude/settings.json": json.dumps({"claudeMdExcludes": ["**/CLAUDE.local.md"]}),
        "repo/sub/CLAUDE.md": "sub",
        "repo/sub/CLAUDE.local.md": "local",
    }
    git_init(tmp_path / "repo")
    build(tmp_path, files)
    old = run(tmp_path, "repo/sub", client_version=OLD)
    new = run(tmp_path, "repo/sub", client_version=NEW)
    assert [s.content for s in old.sources] == ["sub", "local"]
    assert [s.content for s in new.sources] == ["local"]
