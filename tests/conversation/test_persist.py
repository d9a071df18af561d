"""Large tool outputs persisted to disk, shell output and errors cut, the per-message budget."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assembler.conversation import Kind, persist_results, persist_tool_result
from assembler.conversation.persist import Action, preview, result_path
from assembler.display import format_file_size as format_size
from tests.helpers.conversations import SHAPES, Call, Out, Step, User, build, results


def test_a_result_over_50000_chars_is_saved_and_replaced_by_the_articles_block(
    tmp_path: Path,
) -> None:
    text = "行" * 20_000 + "x" * 30_001  # 50,001 characters, 90,001 bytes
    done = persist_tool_result(text, tool_use_id="toolu_01A09", store_dir=tmp_path)
    saved = tmp_path / "tool-results" / "toolu_01A09.txt"
    assert done.action is Action.PERSISTED and done.path == saved
    assert saved.read_text(encoding="utf-8") == text
    assert done.content == (
        "<persisted-output>\n"
        f"Output too large (87.9KB). Full output saved to: {saved}\n"
        "\n"
        "Preview (first 2KB):\n"
        f"{'行' * 666}\n"  # 1,998 bytes: the 667th character would cross 2,000
        "...\n"
        "</persisted-output>"
    )
    # At the limit it stays.
    kept = persist_tool_result("y" * 50_000, tool_use_id="t", store_dir=tmp_path)
    assert kept.action is Action.KEPT and kept.content == "y" * 50_000


def test_sizes_print_as_claude_codes_format_file_size() -> None:
    sizes = (512, 2_000, 46_285, 1024, 3 * 1024 * 1024, 1_280, 1_280 * 1024)
    assert [format_size(n) for n in sizes] == [
        "512 bytes",
        "2KB",
        "45.2KB",
        "1KB",
        "3MB",
        "1.3KB",  # the client rounds half up; the runtime's own port said 1.2KB
        "1.3MB",
    ]


def test_the_preview_never_splits_a_character() -> None:
    for text in ("é" * 3000, "😀" * 1000, "a" + "é" * 1500, "ab" + "行" * 1000):
        cut = preview(text)
        assert text.startswith(cut) and 1996 < len(cut.encode()) <= 2000


def test_shell_output_keeps_its_head_and_counts_the_lines_cut(tmp_path: Path) -> None:
    text = "a" * 29_995 + "bbbbbbbbbb" + "\nline" * 10  # the cut starts inside a line
    done = persist_tool_result(text, tool_use_id="t", store_dir=tmp_path, kind=Kind.SHELL)
    assert done.action is Action.SHELL_CUT
    assert done.content == text[:30_000] + "\n\n... [11 lines truncated] ..."
    again = persist_tool_result(done.content, tool_use_id="t", store_dir=tmp_path, kind=Kind.SHELL)
    assert again.action is Action.KEPT  # never cut twice
    assert not (tmp_path / "tool-results").exists()


def test_an_error_keeps_5000_chars_of_head_and_of_tail(tmp_path: Path) -> None:
    text = "H" * 5_000 + "m" * 7_000 + "T" * 5_000
    done = persist_tool_result(text, tool_use_id="t", store_dir=tmp_path, kind=Kind.ERROR)
    assert done.content == "H" * 5_000 + "\n\n... [7000 characters truncated] ...\n\n" + "T" * 5_000
    again = persist_tool_result(done.content, tool_use_id="t", store_dir=tmp_path, kind=Kind.ERROR)
    assert again.action is Action.KEPT


@pytest.mark.parametrize(
    "bad", ["../../etc/passwd", "a/b", "x\x00y", "a" * 1000, "..", ".", "", "toolu_ü"]
)
def test_ids_cannot_escape_the_store(tmp_path: Path, bad: str) -> None:
    store = tmp_path / "store"
    done = persist_tool_result("z" * 50_001, tool_use_id=bad, store_dir=store)
    assert done.action is Action.PERSISTED and done.path is not None
    assert done.path.parent == store / "tool-results"
    assert len(done.path.name) <= 100 and done.path.read_text() == "z" * 50_001
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [done.path.name]


def test_distinct_ids_get_distinct_files(tmp_path: Path) -> None:
    names = {result_path(tmp_path, i) for i in ("a/b", "a_b", "a\x00b", "a.b", "a" * 300)}
    assert len(names) == 5


def test_a_failed_write_keeps_the_result_whole(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.write_text("a file where the store should be")
    done = persist_tool_result("z" * 50_001, tool_use_id="t", store_dir=store)
    assert done.action is Action.FAILED and done.content == "z" * 50_001
    assert str(done).startswith("Tool result t kept whole: cannot write ")


@pytest.mark.parametrize("shape", SHAPES)
def test_results_persist_through_the_list_on_both_shapes(shape: str, tmp_path: Path) -> None:
    steps: list[Step] = [User("go"), Call("big", "Read", {}), Out("big", "r" * 60_000)]
    steps += [Call("sh", "bash", {}), Out("sh", "s" * 40_000)]
    steps += [Call("err", "Read", {}), Out("err", "e" * 20_000, error=shape == "anthropic")]
    messages = build(shape, steps)
    before = copy.deepcopy(messages)
    done = persist_results(messages, store_dir=tmp_path)
    text = results(done.messages)
    assert text["big"].startswith("<persisted-output>\nOutput too large (58.6KB).")
    assert text["sh"] == "s" * 30_000 + "\n\n... [1 lines truncated] ..."
    if shape == "anthropic":  # OpenAI tool messages carry no error flag
        assert text["err"].startswith("e" * 5_000 + "\n\n... [10000 characters truncated]")
    else:
        assert text["err"] == "e" * 20_000
    assert messages == before
    assert persist_results(done.messages, store_dir=tmp_path).actions == ()  # idempotent


@pytest.mark.parametrize("shape", SHAPES)
def test_one_messages_results_over_200000_chars_persist_largest_first(
    shape: str, tmp_path: Path
) -> None:
    sizes = {"a": 45_000, "b": 49_000, "c": 30_000, "d": 48_000, "e": 47_000}
    steps: list[Step] = [User("go"), *(Call(i, "Read", {}) for i in sizes)]
    steps += [Out(i, i * n) for i, n in sizes.items()]
    done = persist_results(build(shape, steps), store_dir=tmp_path)
    text = results(done.messages)
    saved = sorted(i for i, t in text.items() if t.startswith("<persisted-output>"))
    assert saved == ["b"]  # 219,000 → 49,000 saved → ~172,000: under the budget
    assert sum(len(t) for t in text.values()) <= 200_000
    assert (tmp_path / "tool-results" / "b.txt").read_text() == "b" * 49_000


def test_an_id_equal_to_another_ids_escaped_name_gets_its_own_file(tmp_path: Path) -> None:
    """Issue 22: `x/` was saved as `x_-<hash>.txt`, which is also where the id `x_-<hash>`
    went, so the second result overwrote the first one's output."""
    escaped = result_path(tmp_path, "x/").stem
    assert result_path(tmp_path, escaped) != result_path(tmp_path, "x/")
    first = persist_tool_result("1" * 50_001, tool_use_id="x/", store_dir=tmp_path)
    second = persist_tool_result("2" * 50_001, tool_use_id=escaped, store_dir=tmp_path)
    assert first.path is not None and first.path.read_text() == "1" * 50_001
    assert second.path is not None and second.path.read_text() == "2" * 50_001


_SAFE = st.from_regex(r"[A-Za-z0-9_-]{1,130}", fullmatch=True)


def _kin(tool_id: str) -> list[str]:
    """An id, and ids shaped like the name it gets: the collision the issue found, and its
    neighbours (the name cut short, with a suffix, as a content-named second file would)."""
    stem = result_path("/store", tool_id).stem
    return [tool_id, stem, stem[:-1], stem + "-" + stem[-16:], stem + ".0123456789abcdef"]


@given(st.lists(st.text(max_size=140) | _SAFE, max_size=6))
def test_the_file_name_of_an_id_is_injective(seeds: list[str]) -> None:
    ids = list(dict.fromkeys(i for seed in seeds for i in _kin(seed)))
    names = [result_path("/store", i) for i in ids]
    assert len(set(names)) == len(ids)
    assert all(p.parent == Path("/store/tool-results") for p in names)
