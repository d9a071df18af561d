"""The `gemini` client on real trees: what Gemini CLI loads, inlines and sends (SPEC 5)."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pytest

from assembler import Assembler, Assembly, assemble
from assembler.clients.gemini.imports import code_regions, find_imports
from assembler.lint import lint
from assembler.live.explain import Status, explain
from tests.helpers.cli import ctxasm
from tests.helpers.trees import Link, build, bytes_read, git_init, machine

PREAMBLE = "# Contextual Instructions (GEMINI.md)\nThe following content is loaded from local and global configuration files.\n"


def _gemini(tmp: Path, cwd: Path, **options: object) -> Assembly:
    return assemble(cwd, policy="gemini", **{**machine(tmp), **options})


def _block(path: Path | str, text: str) -> str:
    return f"--- Context from: {path} ---\n{text}\n--- End of Context from: {path} ---"


def _project(*blocks: str) -> str:
    return (
        "<loaded_context>\n<project_context>\n"
        + "\n\n".join(blocks)
        + "\n</project_context>\n</loaded_context>"
    )


def test_global_in_the_system_part_project_root_to_cwd_in_the_user_part(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "GEMINI.md": "above the git root: never read",
            "home/.gemini/GEMINI.md": "\n global \n",
            "repo/GEMINI.md": "root",
            "repo/app/GEMINI.md": "app",
            "repo/app/deep/GEMINI.md": "below cwd: never read",
        },
    )
    text = _gemini(tmp_path, repo / "app").render("gemini")
    home, real = os.path.realpath(tmp_path / "home"), os.path.realpath(repo)
    system, user = text.split("\n\n<loaded_context>\n<project_context>\n")
    assert system.startswith(PREAMBLE)
    assert system.endswith(
        "<loaded_context>\n" + _block(f"{home}/.gemini/GEMINI.md", "global") + "\n</loaded_context>"
    )
    assert "<loaded_context>\n<project_context>\n" + user == _project(
        _block(f"{real}/GEMINI.md", "root"), _block(f"{real}/app/GEMINI.md", "app")
    )


def test_no_global_no_system_part_and_nothing_renders_nothing(tmp_path: Path) -> None:
    build(tmp_path, {"work/GEMINI.md": "only", "empty/x": ""})
    real = os.path.realpath(tmp_path / "work")
    assert _gemini(tmp_path, tmp_path / "work").render("gemini") == _project(
        _block(f"{real}/GEMINI.md", "only")
    )
    assert _gemini(tmp_path, tmp_path / "empty").render("gemini") == ""


def test_no_git_root_means_cwd_only(tmp_path: Path) -> None:
    build(tmp_path, {"top/GEMINI.md": "parent", "top/work/GEMINI.md": "cwd"})
    assembly = _gemini(tmp_path, tmp_path / "top" / "work")
    assert [s.content for s in assembly.sources] == ["cwd"]


def test_project_files_are_sorted_as_javascript_sorts_paths(tmp_path: Path) -> None:
    """`getEnvironmentMemoryPaths` sorts: `Alpha/GEMINI.md` comes before the root's
    `GEMINI.md` ("A" < "G"), and several names of one directory are sorted too."""
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/.gemini/settings.json": json.dumps(
                {"context": {"fileName": ["GEMINI.md", "AGENTS.md"]}}
            ),
            "repo/GEMINI.md": "root gemini",
            "repo/AGENTS.md": "root agents",
            "repo/Alpha/GEMINI.md": "alpha",
        },
    )
    assembly = _gemini(tmp_path, repo / "Alpha")
    # Workspace settings are read from cwd: Alpha has none, so only GEMINI.md is looked for.
    assert [s.content for s in assembly.sources] == ["alpha", "root gemini"]
    both = _gemini(tmp_path, repo)
    assert [s.content for s in both.sources] == ["root agents", "root gemini"]


def test_context_file_name_string_list_and_bad_values(tmp_path: Path) -> None:
    build(
        tmp_path,
        {
            "home/.gemini/settings.json": json.dumps({"context": {"fileName": "CONTEXT.md"}}),
            "work/CONTEXT.md": "user setting",
            "work/GEMINI.md": "default name",
        },
    )
    assert [s.content for s in _gemini(tmp_path, tmp_path / "work").sources] == ["user setting"]
    build(tmp_path, {"work/.gemini/settings.json": '{"context": {"fileName": 7}}'})
    bad = _gemini(tmp_path, tmp_path / "work")
    (problem,) = [d for d in bad.diagnostics if d.code == "CTX915"]
    assert problem.path == ".gemini/settings.json" and "must be a file name" in problem.message
    assert [s.content for s in bad.sources] == ["user setting"]  # the bad value is ignored
    commented = (
        '{\n  // the team\'s name, "quoted"\n  "context": {/* */ "fileName": "GEMINI.md"}\n}'
    )
    build(tmp_path, {"work/.gemini/settings.json": commented})  # comments, as the client allows
    assert [s.content for s in _gemini(tmp_path, tmp_path / "work").sources] == ["default name"]
    build(tmp_path, {"work/.gemini/settings.json": "{not json"})
    assert any(d.code == "CTX915" for d in _gemini(tmp_path, tmp_path / "work").diagnostics)


def _chain(tmp: Path, length: int) -> Path:
    """GEMINI.md imports 1.md, which imports 2.md, ... up to `length`.md."""
    repo = git_init(tmp / "repo")
    files = {"repo/GEMINI.md": "root @./1.md"}
    for i in range(1, length + 1):
        files[f"repo/{i}.md"] = f"file {i}" + (f" @./{i + 1}.md" if i < length else "")
    build(tmp, files)
    return repo


def test_imports_are_inlined_five_levels_deep_and_the_sixth_stays_text(tmp_path: Path) -> None:
    repo = _chain(tmp_path / "five", 5)
    (five,) = _gemini(tmp_path, repo).sources
    assert "file 5" in five.content and "@" not in five.content
    assert five.content.count("<!-- Imported from:") == 5
    repo = _chain(tmp_path / "six", 6)
    six = _gemini(tmp_path, repo)
    assert "file 6" not in six.sources[0].content
    assert "file 5 @./6.md\n<!-- End of import from: ./5.md -->" in six.sources[0].content
    (deep,) = [d for d in six.diagnostics if d.code == "CTX912"]
    assert deep.path == "5.md" and "@./6.md is past Gemini CLI's 5 import levels" in deep.message


def test_import_markers_cycles_code_spans_failures_and_leaving_the_project(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "secret.md": "outside the project",
            "repo/GEMINI.md": "a: @./a.md\n`@./a.md` stays\n@../secret.md\n@./gone.md\nme@x.md",
            "repo/a.md": "A @./b.md",
            "repo/b.md": "B @./a.md",
        },
    )
    (source,) = _gemini(tmp_path, repo).sources
    gone = os.path.join(os.path.realpath(repo), "gone.md")
    assert source.content == (
        "a: <!-- Imported from: ./a.md -->\n"
        "A <!-- Imported from: ./b.md -->\n"
        "B <!-- File already processed: ./a.md -->\n"
        "<!-- End of import from: ./b.md -->\n"
        "<!-- End of import from: ./a.md -->\n"
        "`@./a.md` stays\n"
        "<!-- Import failed: ../secret.md - Path traversal attempt -->\n"
        f"<!-- Import failed: ./gone.md - ENOENT: no such file or directory, access '{gone}' -->\n"
        "me@x.md"
    )
    found = {d.code for d in _gemini(tmp_path, repo).diagnostics}
    assert {"CTX911", "CTX913", "CTX914"} <= found


def test_the_import_scanner_matches_the_clients(tmp_path: Path) -> None:
    assert [f.path for f in find_imports("@a @./b\tx@c @1 @/abs\n@_no")] == ["a", "./b", "/abs"]
    assert code_regions("x `a` ``b`c`` ```open") == [(2, 5), (6, 13), (14, 16)]
    # An unclosed run of three closes at a later run of two (the regex backtracks); a run
    # of four closes inside itself.
    assert code_regions("```a``") == [(0, 6)]
    assert code_regions("````") == [(0, 4)] and code_regions("`") == []
    assert code_regions("`" * 50_000 + "x") == [(0, 50_000)]

    # Python's `re` backtracks as JavaScript's does: an oracle on short texts.
    oracle = re.compile(r"(`+)([\s\S]*?)\1")
    rng = random.Random(12)
    for _ in range(2000):
        text = "".join(rng.choice("```ab\n") for _ in range(rng.randint(0, 24)))
        assert code_regions(text) == [(m.start(), m.end()) for m in oracle.finditer(text)], text


def test_explain_lists_the_context_files_and_the_assembler_reuses(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(tmp_path, {"repo/GEMINI.md": "root @./a.md", "repo/a.md": "imported"})
    result = explain(repo, policy="gemini", **machine(tmp_path))
    assert [r.path for r in result.rows if r.status is Status.LOADED] == ["GEMINI.md"]
    asm = Assembler(repo, policy="gemini", **machine(tmp_path))
    asm.assemble()
    assert str(repo / "a.md") in asm.dependencies.paths  # an edit to the import is followed
    (repo / "a.md").write_text("changed")
    assert "changed" in asm.assemble().sources[0].content


def test_cli_render_of_the_gemini_format(tmp_path: Path) -> None:
    build(tmp_path, {"w/GEMINI.md": "hello"})
    args = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "m")]
    result = ctxasm(["render", str(tmp_path / "w"), "--policy", "gemini", *args])
    real = os.path.realpath(tmp_path / "w")
    assert (result.exit_code, result.stdout) == (0, _project(_block(f"{real}/GEMINI.md", "hello")))
    cache = ctxasm(["cache", str(tmp_path / "w"), "--policy", "gemini", *args])
    assert cache.exit_code == 0, cache.output


def test_lint_reports_import_problems_where_they_are_written(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    text = "intro\n  see @../../etc/passwd\n@./gone.md\n@./a.md\n"
    build(tmp_path, {"repo/GEMINI.md": text, "repo/a.md": "back to @./GEMINI.md"})
    result = lint(base=repo, **machine(tmp_path))
    assert [(f.path, f.line, f.col, f.code) for f in result.findings] == [
        ("GEMINI.md", 2, 7, "CTX911"),
        ("GEMINI.md", 3, 1, "CTX913"),
        ("GEMINI.md", 4, 1, "CTX914"),  # a.md inlined GEMINI.md again, whose @./a.md is a cycle
    ]


def test_lint_reports_a_bad_context_file_name_in_the_workspace_settings(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(tmp_path, {"repo/.gemini/settings.json": '{"context": {"fileName": ["../x.md"]}}'})
    result = lint(base=repo, **machine(tmp_path))
    assert [(f.path, f.line, f.code) for f in result.findings] == [
        (".gemini/settings.json", 1, "CTX915")
    ]
    assert "is not a file name in a directory" in result.findings[0].message


@pytest.mark.slow
def test_a_hostile_context_file_is_bounded(tmp_path: Path) -> None:
    """200,000 imports and 100,000 code spans: at most 10,000 imports followed or reported,
    the rest left as written and said once (no quadratic scan of spans or lines)."""
    build(tmp_path, {"w/GEMINI.md": "@../x " * 200_000 + "`a` " * 100_000})
    assembly = _gemini(tmp_path, tmp_path / "w")
    assert [d.code for d in assembly.diagnostics] == ["CTX911", "CTX705"]  # the same, once
    failed = "<!-- Import failed: ../x - Path traversal attempt --> "
    assert assembly.sources[0].content.startswith(failed * 10_000 + "@../x ")
    assert assembly.sources[0].content.endswith("@../x " * 10 + "`a` " * 99_999 + "`a`")


def test_touching_a_file_attaches_just_in_time_context_once(tmp_path: Path) -> None:
    """`loadJitSubdirectoryMemory`: the files from the touched file's directory up to the
    root that are not loaded yet, root first, appended to the tool's output."""
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/GEMINI.md": "root",
            "repo/app/GEMINI.md": "app",
            "repo/app/src/GEMINI.md": "src @./style.md",
            "repo/app/src/style.md": "tabs",
            "repo/app/src/lib/GEMINI.md": "lib",
            "repo/app/src/lib/main.ts": "",
            "outside/x.ts": "",
        },
    )
    start = _gemini(tmp_path, repo / "app")
    touched = start.touch(repo / "app" / "src" / "lib" / "main.ts")
    assert [(s.content, s.lazy) for s in touched.attached(start)] == [
        (
            "src <!-- Imported from: ./style.md -->\ntabs\n<!-- End of import from: ./style.md -->",
            True,
        ),
        ("lib", True),
    ]
    real = os.path.realpath(repo)
    assert touched.render("gemini").endswith(
        "\n\n--- Newly Discovered Project Context ---\n"
        + _block(f"{real}/app/src/GEMINI.md", touched.sources[-2].content)
        + "\n\n"
        + _block(f"{real}/app/src/lib/GEMINI.md", "lib")
        + "\n--- End Project Context ---"
    )
    again = touched.touch(repo / "app" / "src" / "lib" / "main.ts")
    assert again.attached(touched) == ()  # loaded once
    away = touched.touch(tmp_path / "outside" / "x.ts")
    assert away.attached(touched) == () and "CTX407" in [d.code for d in away.diagnostics]


def test_a_diamond_of_imports_repeats_the_text_each_time_as_the_client_does(
    tmp_path: Path,
) -> None:
    """Each file is read once a run, yet inlined wherever it is imported (by a link too), and
    the next run reads it again."""
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/GEMINI.md": "@a.md @b.md @link.md",
            "repo/a.md": "A @c.md",
            "repo/b.md": "B @c.md",
            "repo/c.md": "C",
            "repo/link.md": Link("c.md"),
        },
    )

    def inlined(path: str, text: str) -> str:
        return f"<!-- Imported from: {path} -->\n{text}\n<!-- End of import from: {path} -->"

    c = inlined("c.md", "C")
    assert _gemini(tmp_path, repo).sources[0].content == " ".join(
        [inlined("a.md", f"A {c}"), inlined("b.md", f"B {c}"), inlined("link.md", "C")]
    )
    (repo / "c.md").write_text("changed")
    assert _gemini(tmp_path, repo).sources[0].content.count("changed") == 3


MIB = 1024 * 1024


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="counts reads in /proc/self/io")
def test_imports_past_the_budget_are_refused_without_reading_each_file_again(
    tmp_path: Path,
) -> None:
    """Issue 22 item 5: each file is read once per run, and one that cannot fit in what is
    left of the 16 Mi characters is not read at all. Six files of 4 MiB, then 200 more
    imports of the first: four are inlined (the budget), the rest are refused as before, and
    the run reads about the four files (the old code read every import: 824 MiB). Linux:
    what the process read is its `rchar`."""
    repo = git_init(tmp_path / "repo")
    names = "abcdef"
    for name in names:  # 4 MiB of ASCII each: four fill the budget exactly
        (repo / f"{name}.md").write_bytes(name.encode() * (4 * MIB))
    (repo / "GEMINI.md").write_text(" ".join(f"@{n}.md" for n in names) + " @a.md" * 200)
    _gemini(tmp_path, repo)  # modules imported, caches warm: what follows is the run's own
    before = bytes_read()
    content = _gemini(tmp_path, repo).sources[0].content
    assert bytes_read() - before < 17 * MIB
    failed = [f"<!-- Import failed: {n}.md - ctxasm inlines at most 16,777,216 characters in one run -->" for n in "efaaaa"]  # fmt: skip
    assert content.count("<!-- Imported from: ") == 4
    assert content.endswith(" ".join(failed[:2]) + (" " + failed[2]) * 200)
    before = bytes_read()
    result = lint(base=repo, **machine(tmp_path))
    # Gemini's run, and Claude Code's import walk of the file (each file once: 24 MiB).
    assert bytes_read() - before < 41 * MIB
    refused = [f for f in result.findings if f.code == "CTX913"]
    assert (len(refused), refused[0].line, refused[0].col) == (100, 1, 25)  # e.md; capped
