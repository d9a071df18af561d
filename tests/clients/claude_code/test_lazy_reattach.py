"""Up to Claude Code 2.1.197 a read attaches again what was loaded at start: the client skips
only the files earlier reads attached (2.1.332 skips them too, SPEC 4b.7). One case each: imported at start then reached by a read; attached by one
read and reached by a later one; imports shared between the two; and the same answers from
`Assembly.touch`, `assemble(touched=...)`, the `Assembler` and `explain`."""

from __future__ import annotations

from pathlib import Path

from assembler import Assembler, Assembly
from assembler.live.explain import Status, explain
from tests.helpers.trees import build, git_init, machine, run

TREE = {
    "repo/CLAUDE.md": "root @sub/CLAUDE.md @shared.md",
    "repo/shared.md": "shared",
    "repo/sub/CLAUDE.md": "sub @extra.md",
    "repo/sub/extra.md": "extra",
    "repo/sub/a/CLAUDE.md": "a @../../shared.md @../common.md",
    "repo/sub/b/CLAUDE.md": "b @../common.md",
    "repo/sub/common.md": "common",
    "repo/sub/a/x.ts": "",
    "repo/sub/b/y.ts": "",
    "repo/sub/a/z.ts": "",
}


OLD = "2.1.197"


def _start(tmp: Path, version: str = OLD) -> Assembly:
    git_init(tmp / "repo")
    build(tmp, TREE)
    return run(tmp, "repo", client_version=version)


def test_from_2_1_332_a_file_imported_at_start_is_not_attached_again(tmp_path: Path) -> None:
    """SPEC 4b.7: a nested file already in the start context through an import stays out
    when a read reaches it; only what nothing loaded yet is attached."""
    start = _start(tmp_path, "2.1.332")
    after = start.touch(tmp_path / "repo/sub/a/x.ts")
    assert [s.display for s in after.attached(start)] == ["sub/a/CLAUDE.md", "sub/common.md"]
    assert start.client_version == "2.1.332"


def test_a_file_imported_at_start_is_attached_again_with_its_imports(tmp_path: Path) -> None:
    """The issue's example: `sub/CLAUDE.md`, imported by the root file at start, comes back
    (with its own import) when a file under `sub/` is read."""
    start = _start(tmp_path)
    assert [s.content for s in start.sources] == [
        "root @sub/CLAUDE.md @shared.md",
        "sub @extra.md",
        "extra",
        "shared",
    ]
    first = start.touch(tmp_path / "repo/sub/a/x.ts")
    assert [(s.display, s.content) for s in first.attached(start)] == [
        ("sub/CLAUDE.md", "sub @extra.md"),
        ("sub/extra.md", "extra"),
        ("sub/a/CLAUDE.md", "a @../../shared.md @../common.md"),
        ("shared.md", "shared"),  # loaded at start too: attached again
        ("sub/common.md", "common"),
    ]
    assert all(s.read_attached and s.lazy for s in first.attached(start))
    rendered = first.render("claude-code")
    assert rendered.count("Contents of " + str(tmp_path / "repo/sub/CLAUDE.md")) == 2


def test_what_a_read_attached_is_not_attached_by_a_later_read(tmp_path: Path) -> None:
    first = _start(tmp_path).touch(tmp_path / "repo/sub/a/x.ts")
    again = first.touch(tmp_path / "repo/sub/a/z.ts")
    assert again.attached(first) == ()


def test_imports_shared_between_two_reads_are_attached_once(tmp_path: Path) -> None:
    """`sub/common.md` is imported by `sub/a` and `sub/b`: the first read attaches it, the
    second attaches only `sub/b/CLAUDE.md` (`sub/CLAUDE.md` and its import came with the
    first)."""
    first = _start(tmp_path).touch(tmp_path / "repo/sub/a/x.ts")
    second = first.touch(tmp_path / "repo/sub/b/y.ts")
    assert [s.display for s in second.attached(first)] == ["sub/b/CLAUDE.md"]


def test_every_way_in_gives_the_same_attachments(tmp_path: Path) -> None:
    start = _start(tmp_path)
    reads = [tmp_path / "repo/sub/a/x.ts", tmp_path / "repo/sub/b/y.ts"]
    stepwise = start.touch(reads[0]).touch(reads[1])
    direct = run(tmp_path, "repo", touched=reads, client_version=OLD)
    live = Assembler(tmp_path / "repo", **machine(tmp_path), client_version=OLD).assemble(reads)
    assert direct.render("claude-code") == stepwise.render("claude-code")
    assert live.render("claude-code") == stepwise.render("claude-code")
    explained = explain(tmp_path / "repo", touched=reads, **machine(tmp_path), client_version=OLD)
    loaded = [(r.path, r.lazy) for r in explained.rows if r.status is Status.LOADED]
    assert loaded == [(s.display, s.lazy) for s in stepwise.sources]
    assert ("sub/CLAUDE.md", False) in loaded and ("sub/CLAUDE.md", True) in loaded
