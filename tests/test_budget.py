"""The budgeter: per-file limits, the MEMORY.md cut, the total budget, token estimates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assembler import Layer, TokenCounter, assemble, estimate_tokens
from assembler.budget import limit_chars
from assembler.clients.claude_code.memory_index import truncate_index
from assembler.clients.claude_code.settings import slug
from assembler.discovery.loader import RUN_TEXT_CHARS
from assembler.display import format_file_size
from tests.helpers.trees import build, git_init, run


@pytest.mark.parametrize(
    ("size", "text"),
    [(500, "500 bytes"), (25_000, "24.4KB"), (1024, "1KB"), (1_572_864, "1.5MB"), (25_600, "25KB")],
)
def test_file_sizes_read_like_the_client(size: int, text: str) -> None:
    assert format_file_size(size) == text


def test_index_cut_by_chars_only_uses_the_size_message() -> None:
    content = "\n".join("x" * 300 for _ in range(100))  # 100 lines, 30,099 chars
    result = truncate_index(content, 200, 25_000, "MEMORY.md")
    assert result is not None
    text, why = result
    assert why == "29.4KB (limit: 24.4KB) \u2014 index entries are too long"
    kept = text.split("\n\n> WARNING")[0]
    assert kept == "\n".join("x" * 300 for _ in range(83))  # cut at the last newline before 25,000
    assert text.endswith(
        f"> WARNING: MEMORY.md is {why}. Only part of it was loaded. Keep index entries to one line under ~200 chars; move detail into topic files."
    )


def test_index_cut_by_both_limits() -> None:
    content = "\n".join("y" * 200 for _ in range(250))
    result = truncate_index(content, 200, 25_000, "MEMORY.md")
    assert result is not None and result[1] == "250 lines and 49.1KB"


def test_index_within_limits_is_untouched() -> None:
    assert truncate_index("a\nb", 200, 25_000, "MEMORY.md") is None


def test_seed_char_limit() -> None:
    assert limit_chars("  abc  ", 2000, "\n...(truncated)") is None
    assert (
        limit_chars("x" * 1999 + "  yz", 2000, "\n...(truncated)")
        == "x" * 1999 + "\n...(truncated)"
    )


def test_bootstrap_file_over_2000_chars_is_cut_and_recorded(tmp_path: Path) -> None:
    build(tmp_path, {"ws/soul.md": "灵" * 2500})
    a = run(tmp_path, "ws", policy="bootstrap")
    soul = next(s for s in a.sources if s.tag == "soul")
    assert soul.content == "灵" * 2000 + "\n...(truncated)"
    assert [(c.kind, c.chars) for c in soul.cuts] == [("file-chars", 500 - len("\n...(truncated)"))]
    assert "CTX103" in [d.code for d in a.diagnostics]


def test_total_budget_cuts_least_stable_first_and_never_managed(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "managed/CLAUDE.md": "managed " * 50,
            "home/.claude/CLAUDE.md": "user " * 50,
            "repo/CLAUDE.md": "\n".join(f"project line {i}" for i in range(50)),
            "repo/CLAUDE.local.md": "local " * 50,
            f"home/.claude/projects/{slug(repo)}/memory/MEMORY.md": "memory " * 50,
        },
    )
    full = run(tmp_path, "repo")
    budget = estimate_tokens(full.text) - 150
    cut = run(tmp_path, "repo", max_tokens=budget)
    assert estimate_tokens(cut.text) <= budget
    by_layer = {s.layer: s for s in cut.sources}
    assert by_layer[Layer.MEMORY].dropped
    assert [c.kind for c in by_layer[Layer.LOCAL].cuts] == ["budget-trim"]
    assert by_layer[Layer.LOCAL].content.endswith("\n...(truncated to fit the token budget)")
    assert not any(by_layer[layer].cuts for layer in (Layer.MANAGED, Layer.USER, Layer.PROJECT))
    assert [d.code for d in cut.diagnostics] == ["CTX603", "CTX602"]

    deeper = run(tmp_path, "repo", max_tokens=budget - 120)
    assert estimate_tokens(deeper.text) <= budget - 120
    assert [s.layer for s in deeper.sources if s.dropped] == [Layer.LOCAL, Layer.MEMORY]
    assert [c.kind for c in {s.layer: s for s in deeper.sources}[Layer.PROJECT].cuts] == [
        "budget-trim"
    ]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("abcd", 1), ("abcde", 2), ("é", 1), ("éé", 1), ("中文", 2), ("😀", 2), ("a中", 2)],
)
def test_token_estimate_counts_bytes_for_non_ascii(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


def test_a_custom_counter_is_used_everywhere(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "one two three"})
    a = run(tmp_path, "repo", counter=lambda text: len(text.split()))
    assert a.sources[0].stats.tokens == 3


def test_a_budget_that_holds_no_source_is_an_error_not_an_empty_success(tmp_path: Path) -> None:
    """`--max-tokens 30` dropped every source and exited 0 with empty output."""
    import subprocess
    import sys

    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "# Project\n\nUse pytest for tests. Always run ruff first.\n",
            "repo/.claude/rules/a.md": "rule one two three four five six\n",
        },
    )
    a = run(tmp_path, "repo", max_tokens=30)
    assert all(s.dropped for s in a.sources)
    [error] = [d for d in a.diagnostics if d.code == "CTX601"]
    assert "holds none of the 2 sources" in error.message
    assert not all(s.dropped for s in run(tmp_path, "repo", max_tokens=60).sources)
    assert "CTX601" not in [d.code for d in run(tmp_path, "repo", max_tokens=60).diagnostics]
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "m")]
    done = subprocess.run(
        [sys.executable, "-m", "assembler", "render", "--max-tokens", "30", *machine],
        cwd=tmp_path / "repo",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "raise --max-tokens [CTX601]" in done.stderr


def test_lint_counts_with_the_counter_it_is_given(tmp_path: Path) -> None:
    """`lint(counter=...)` was accepted and ignored: a counter of 10**6 a text still gave
    CTX601 "535 tokens (estimated)"."""
    from assembler.lint import lint

    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "one two three\n"})
    home, managed = tmp_path / "home", tmp_path / "m"

    def linted(counter: TokenCounter = estimate_tokens) -> list[tuple[str, str]]:
        found = lint(
            cwd=tmp_path / "repo", max_tokens=1_000, home=home, managed_dir=managed, environ={},
            counter=counter,
        )  # fmt: skip
        return [(f.code, f.message) for f in found.findings]

    [(code, message)] = linted(counter=lambda t: 10**6)
    assert code == "CTX601" and "(estimated)" not in message and "1,000,000" in message
    assert linted() == []


def test_truncation_markers_count_in_the_runs_text(tmp_path: Path) -> None:
    """1,000 rules of 15,999 characters (16 Mi characters is what one run loads) each cut 9
    characters short with a 1,024-character marker: the markers took the run's text to
    17,014,000 characters, past the bound on it. They count in it: the files past it
    are cut without the marker, each with a CTX705, and the run's text stays within it."""
    files: dict[str, str | None] = {
        f"repo/.claude/rules/r{i:03}.md": ("z" * 99 + "\n") * 160 for i in range(1000)
    }
    marker = "m" * 1024
    files["repo/.ctxasm.toml"] = f'[limits]\nfile_chars = 15990\ntruncation_marker = "{marker}"\n'
    build(tmp_path, files)
    assembly = run(tmp_path, "repo")
    rules = [s for s in assembly.sources if not s.dropped]
    assert len(rules) == 1000
    total = sum(len(s.content) for s in rules)
    assert RUN_TEXT_CHARS - len(marker) < total <= RUN_TEXT_CHARS  # as many markers as fit
    unmarked = {s.display for s in rules if not s.content.endswith(marker)}
    assert 200 < len(unmarked) < 300
    assert {len(s.content) for s in rules if s.display in unmarked} == {15_990}  # cut all the same
    said = [d for d in assembly.diagnostics if d.code == "CTX705"]
    assert {d.path for d in said} == unmarked
    assert said[0].message == (
        "cut without the truncation marker: with it this run's text would pass 16,777,216 "
        "characters (every cut file gets one); shorten limits.truncation_marker or raise "
        "limits.file_chars"
    )


def test_a_dropped_file_is_said_at_the_tokens_explain_shows(tmp_path: Path) -> None:
    """`render --max-tokens 50` said CLAUDE.local.md was "dropped (7 tokens)" while explain
    listed it at 25 (issue 34): the note counts the section, as the budget and explain do."""
    from assembler.live import explain

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("Root instructions. " * 8 + "\n")
    (repo / "CLAUDE.local.md").write_text("local notes here " * 4 + "\n")
    where: dict[str, Any] = {"home": tmp_path / "h", "managed_dir": tmp_path / "m", "environ": {}}
    [note] = [d for d in assemble(repo, max_tokens=50, **where).diagnostics if d.code == "CTX603"]
    [row] = [r for r in explain(repo, max_tokens=50, **where).rows if r.path == "CLAUDE.local.md"]
    assert note.message == f"dropped ({row.tokens:,} tokens) to fit the 50-token budget"
    assert row.tokens is not None and row.tokens > 20
