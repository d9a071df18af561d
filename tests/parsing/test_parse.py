"""The per-process parse memo: keyed by content, so it is never stale, and bounded."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from assembler.parsing import parse
from assembler.parsing.parse import Switches
from tests.helpers.trees import build, codes, git_init, run

ALL = Switches(strip_frontmatter=True, strip_comments=True, find_imports=True)


@pytest.fixture(autouse=True)
def empty_memo() -> None:
    parse.forget()


def test_a_file_rewritten_with_the_same_size_and_times_is_seen_anew(tmp_path: Path) -> None:
    """Nothing keyed by path or stat: same length, same mtime, new words, new imports."""
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "Use @a.md now\n", "a.md": "alpha\n", "b.md": "bravo\n"})
    claude = repo / "CLAUDE.md"
    before = os.stat(claude)
    first = run(tmp_path, repo)
    assert [s.display for s in first.sources] == ["CLAUDE.md", "a.md"]

    claude.write_text("Use @b.md now\n", encoding="utf-8")
    os.utime(claude, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(claude).st_size == before.st_size
    second = run(tmp_path, repo)
    assert [s.display for s in second.sources] == ["CLAUDE.md", "b.md"]
    assert second.sources[0].content == "Use @b.md now"


def test_the_same_text_is_parsed_once_and_shared() -> None:
    text = "---\npaths: src/**\n---\n<!-- note -->\nSee @x.md\n"
    first = parse.parse(text, ALL)
    again = parse.parse("".join([text]), ALL)  # an equal string, not the same object
    assert again is first
    assert first.globs is not None and first.globs.patterns == ("src",)  # `/**` dropped
    assert first.text == "See @x.md\n" and first.imports == ("x.md",)
    # Other switches are another entry.
    plain = parse.parse(text, Switches(False, False, False))
    assert plain.text == text and plain.imports == () and plain.globs is None


def test_invalid_frontmatter_is_reported_on_every_load(tmp_path: Path) -> None:
    """A memo hit still gives the diagnostics a fresh parse gives."""
    # Invalid even after the client's retry that quotes values with YAML syntax.
    invalid = '---\npaths:\n  - "src/**\nowner: [oops\n---\nbody\n'
    build(tmp_path / "repo", {"CLAUDE.md": invalid})
    assert "CTX301" in codes(run(tmp_path, tmp_path / "repo"))
    assert "CTX301" in codes(run(tmp_path, tmp_path / "repo"))


def test_the_memo_holds_at_most_its_budget() -> None:
    texts = [f"{i:05d} text" for i in range(parse.MEMO_ENTRIES + 40)]
    for text in texts:
        parse.parse(text, ALL)
    assert parse.memo_info().currsize == parse.MEMO_ENTRIES
    # The newest stay, the oldest went.
    hits = parse.memo_info().hits
    parse.parse(texts[-1], ALL)
    assert parse.memo_info().hits == hits + 1
    parse.parse(texts[0], ALL)
    assert parse.memo_info().hits == hits + 1
    # A text over the per-text limit is parsed every time and never kept.
    long = "y" * (parse.MEMO_TEXT_CHARS + 1)
    before = parse.memo_info()
    assert parse.parse(long, ALL).text == long
    assert parse.parse(long, ALL).text == long
    after = parse.memo_info()
    assert (after.hits, after.misses) == (before.hits, before.misses)


def test_the_memo_holds_at_most_its_characters() -> None:
    """Big texts push the oldest out by their size, however few they are."""
    size = parse.MEMO_TEXT_CHARS
    texts = [f"{i:05d}" + "z" * (size - 5) for i in range(parse.MEMO_TOTAL_CHARS // size + 3)]
    for text in texts:
        parse.parse(text, ALL)
    info = parse.memo_info()
    assert info.chars <= parse.MEMO_TOTAL_CHARS
    assert info.currsize == parse.MEMO_TOTAL_CHARS // size
    hits = info.hits
    parse.parse(texts[-1], ALL)  # the newest stayed
    parse.parse(texts[0], ALL)  # the oldest went
    assert parse.memo_info().hits == hits + 1


def test_threads_share_the_memo_safely() -> None:
    texts = [f"rule {i} @f{i}.md\n" * 20 for i in range(200)]
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i in range(len(texts)):
                text = texts[(i + offset) % len(texts)]
                assert parse.parse(text, ALL).imports[0].startswith("f")
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k * 37,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert parse.memo_info().currsize == len(texts)


def test_a_leading_byte_order_mark_is_dropped_and_a_bom_only_file_skipped(tmp_path: Path) -> None:
    """Checked against Claude Code 2.1.197: the mark never reaches the prompt."""
    git_init(tmp_path / "repo")
    (tmp_path / "repo/CLAUDE.md").write_bytes(b"\xef\xbb\xbf---\npaths: x\n---\nbody")
    (tmp_path / "repo/CLAUDE.local.md").write_bytes(b"\xef\xbb\xbf")
    a = run(tmp_path, "repo")
    assert [s.content for s in a.sources] == ["body"]  # frontmatter seen after the mark
    assert codes(a) == ["CTX404"]
