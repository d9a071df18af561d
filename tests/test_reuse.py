"""Plain `assemble()` repeated: its last result once disk proves nothing changed (every file
it read is read again and compared), a discovery run otherwise."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from assembler import Assembly, assemble, reuse
from assembler.incremental import signature
from assembler.observer import QuietObserver
from assembler.reader import same_bytes
from tests.changes import CHANGES, apply_change
from tests.test_incremental import calls, machine, project
from tests.trees import build


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return project(tmp_path)


def settle(cwd: Path, **kwargs: Any) -> Assembly:
    """Call until a call is answered from a kept result: the files were just written, and a
    signature younger than the filesystem's clock granularity proves nothing."""
    deadline = time.monotonic() + 10
    before = reuse.info().hits
    while reuse.info().hits == before:
        assert time.monotonic() < deadline, "never reused"
        result = assemble(cwd, **kwargs)
    return result


def fresh(cwd: Path, **kwargs: Any) -> Assembly:
    """What a discovery run gives now (nothing kept to reuse)."""
    reuse.forget()
    return assemble(cwd, **kwargs)


def only_kept() -> Any:
    results = list(reuse._MEMO.results.values())
    assert len(results) == 1
    return results[0]


@pytest.fixture(autouse=True)
def _empty_memo() -> None:
    reuse.forget()


def test_a_repeated_request_reads_every_file_again_and_gets_the_same_result(
    tmp_path: Path, repo: Path
) -> None:
    first = settle(repo, **machine(tmp_path))
    again, seen = calls(lambda: assemble(repo, **machine(tmp_path)))
    assert again is first
    opened = {p for event, p in seen if event == "open"}
    read = {s.path for s in (*first.discovered, *first.conditional)}
    assert {p for p in opened if p.endswith(".md")} == read  # each source, compared again
    listed = {p for event, p in seen if event == "os.scandir"}
    assert listed == {
        str(repo / ".claude" / "rules"),
        str(tmp_path / "home" / ".claude" / "rules"),
    }
    assert again.render("json") == fresh(repo, **machine(tmp_path)).render("json")
    assert again.context.observer is None


def test_the_first_call_pays_nothing_and_the_second_records(tmp_path: Path, repo: Path) -> None:
    time.sleep(0.1)  # let the files age past the clock granularity
    before = reuse.info()
    assemble(repo, **machine(tmp_path))
    assert reuse.info().results == before.results  # one call: nothing recorded
    second = assemble(repo, **machine(tmp_path))
    assert reuse.info().results == before.results + 1
    assert assemble(repo, **machine(tmp_path)) is second
    assert reuse.info().hits == before.hits + 1


def test_just_written_files_are_not_trusted(tmp_path: Path, repo: Path) -> None:
    (repo / "CLAUDE.md").write_text("Root, just written.")
    results = [assemble(repo, **machine(tmp_path)) for _ in range(3)]
    assert reuse.info().results == 0
    assert results[2] is not results[1]


@pytest.mark.parametrize("change", CHANGES)
def test_every_kind_of_change_is_seen(tmp_path: Path, repo: Path, change: str) -> None:
    cwd = repo / "src"
    before = settle(cwd, **machine(tmp_path))
    apply_change(change, tmp_path, repo, cwd, before, lambda: settle(cwd, **machine(tmp_path)))
    after = assemble(cwd, **machine(tmp_path))
    assert after.render("json") == fresh(cwd, **machine(tmp_path)).render("json")
    assert after.render("xml") != before.render("xml")


def test_bytes_are_compared_even_when_every_stat_matches(tmp_path: Path, repo: Path) -> None:
    settle(repo, **machine(tmp_path))
    kept = only_kept()
    guide = repo / "docs" / "guide.md"
    original = guide.read_bytes()
    guide.write_bytes(b"Gu1de.")  # same size; the signature (ctime) changes: pretend it did not

    def as_if_stat_unchanged() -> Any:
        return kept._replace(signatures=tuple(signature(p) for p in kept.paths))

    assert not reuse.current(as_if_stat_unchanged())
    guide.write_bytes(original)
    assert reuse.current(as_if_stat_unchanged())


def test_listings_are_compared_even_when_every_stat_matches(tmp_path: Path, repo: Path) -> None:
    settle(repo, **machine(tmp_path))
    kept = only_kept()
    extra = repo / ".claude" / "rules" / "notes.txt"
    extra.write_text("not a rule, but a new entry")
    stale = kept._replace(signatures=tuple(signature(p) for p in kept.paths))
    assert not reuse.current(stale)
    extra.unlink()
    assert reuse.current(kept._replace(signatures=tuple(signature(p) for p in kept.paths)))


def test_settings_and_approvals_are_compared_too(tmp_path: Path, repo: Path) -> None:
    build(tmp_path, {"home/.claude/settings.json": "{}", "home/.claude.json": "{}"})
    settle(repo, **machine(tmp_path))
    compared = {path for path, _ in only_kept().contents}
    assert str(tmp_path / "home" / ".claude" / "settings.json") in compared
    assert str(tmp_path / "home" / ".claude.json") in compared


def test_same_bytes(tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(b"abc")
    assert same_bytes(str(path), b"abc")
    assert not same_bytes(str(path), b"ab")  # the file is longer
    assert not same_bytes(str(path), b"abcd")  # shorter
    assert not same_bytes(str(path), b"abd")
    assert not same_bytes(str(tmp_path / "missing.md"), b"")
    assert not same_bytes(str(tmp_path), b"")  # a directory
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    assert not same_bytes(str(fifo), b"x")  # and it does not block
    assert not same_bytes("bad\0path", b"")


def test_requests_are_kept_apart(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = repo / "src" / "app.ts"
    plain = settle(repo, **machine(tmp_path))
    touched = settle(repo, touched=[app], **machine(tmp_path))
    tight = settle(repo, max_tokens=5, **machine(tmp_path))
    dated = settle(repo, **{**machine(tmp_path), "environ": {"CLAUDE_CODE_OVERRIDE_DATE": "x"}})
    assert len({id(plain), id(touched), id(tight), id(dated)}) == 4
    assert touched.touched == ("src/app.ts",)
    assert tight.sources != plain.sources
    assert dated.date == "x"
    monkeypatch.chdir(repo)
    here = settle(Path("."), **machine(tmp_path))
    monkeypatch.chdir(repo / "src")
    below = settle(Path("."), **machine(tmp_path))
    assert here.render("json") == plain.render("json")
    assert below.render("json") == fresh(repo / "src", **machine(tmp_path)).render("json")


def test_observed_runs_and_the_environment_section_always_run(tmp_path: Path, repo: Path) -> None:
    settle(repo, **machine(tmp_path))
    hits = reuse.info().hits
    for _ in range(3):
        assemble(repo, observer=QuietObserver(), **machine(tmp_path))
        assemble(repo, environment=True, **machine(tmp_path))
    assert reuse.info().hits == hits


def test_a_failing_request_is_not_kept(tmp_path: Path, repo: Path) -> None:
    (repo / ".ctxasm.toml").write_text("nonsense = 1\n")
    time.sleep(0.1)
    for _ in range(3):
        with pytest.raises(Exception, match="unknown key 'nonsense'"):
            assemble(repo, **machine(tmp_path))
    assert reuse.info().results == 0
    (repo / ".ctxasm.toml").unlink()
    assert assemble(repo, **machine(tmp_path)).render("json") == fresh(
        repo, **machine(tmp_path)
    ).render("json")


def test_the_memo_is_bounded(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    time.sleep(0.1)
    for budget in range(reuse.KEEP_RESULTS + 4):
        for _ in range(2):
            assemble(repo, max_tokens=1000 + budget, **machine(tmp_path))
    assert reuse.info().results == reuse.KEEP_RESULTS
    assert 0 < reuse.info().size <= reuse.MEMO_BYTES
    monkeypatch.setattr(reuse, "MEMO_BYTES", 40)  # less than the files: nothing more is kept
    reuse.forget()
    for _ in range(3):
        assemble(repo, **machine(tmp_path))
    assert reuse.info() == reuse.Info(hits=0, runs=3, results=0, size=0)


def test_threads_share_the_memo(tmp_path: Path, repo: Path) -> None:
    expected = settle(repo, **machine(tmp_path)).render("json")
    got: list[str] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for i in range(20):
                touched = [repo / "src" / "app.ts"] if i % 3 == 0 else []
                result = assemble(repo, touched=touched, **machine(tmp_path))
                if not touched:
                    got.append(result.render("json"))
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert got and set(got) == {expected}


class _WordCounter:
    """A token counter that cannot be hashed (it defines equality only)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _WordCounter)

    __hash__ = None  # type: ignore[assignment]

    def __call__(self, text: str) -> int:
        return len(text.split())


def test_a_request_that_cannot_be_compared_always_runs(tmp_path: Path, repo: Path) -> None:
    time.sleep(0.1)
    results = [assemble(repo, counter=_WordCounter(), **machine(tmp_path)) for _ in range(3)]
    assert reuse.info() == reuse.Info(hits=0, runs=3, results=0, size=0)
    assert results[2].render("json") == results[0].render("json")


def test_relative_paths_stay_right_when_the_process_changes_directory(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(tmp_path, {"cfg/CLAUDE.md": "Config one.", "elsewhere/cfg/CLAUDE.md": "Config two."})
    relative: dict[str, Any] = {**machine(tmp_path), "environ": {"CLAUDE_CONFIG_DIR": "cfg"}}
    monkeypatch.chdir(tmp_path)
    assert "Config one." in settle(repo, **relative).text
    monkeypatch.chdir(tmp_path / "elsewhere")  # the same arguments, another "cfg"
    after = assemble(repo, **relative)
    assert "Config two." in after.text
    assert after.render("json") == fresh(repo, **relative).render("json")
