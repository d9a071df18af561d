"""The `cursor` client on real trees: each rule kind with and without a touched file, nested
`.cursor/rules` and `AGENTS.md`, `globs` as a string and a list, `.cursorrules`, and the
commands (render, explain, lint, watch, cache, the `Assembler`) that ask the registry."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from assembler import Assembler, assemble
from assembler.clients import cursor
from assembler.lint import lint
from assembler.live.explain import Skip, Status, explain
from assembler.live.watch import Watcher
from tests.helpers.cli import ctxasm
from tests.helpers.rule_trees import CURSOR_TREE, tree
from tests.helpers.trees import Link, build, bytes_read, git_init, listing, machine

AT_START = [
    ("project", ".cursor/rules/style.mdc", "always-applied rule in .cursor/rules"),
    ("project", "AGENTS.md", "AGENTS.md at the workspace root"),
    ("project", ".cursorrules", "legacy .cursorrules at the workspace root"),
    ("project", ".cursor/rules", "agent-requested rules: 1 rule, name and description only"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return tree(tmp_path, CURSOR_TREE)


def test_at_start_always_rules_agents_md_legacy_file_and_the_requested_index(
    tmp_path: Path, repo: Path
) -> None:
    a = assemble(repo, policy="cursor", **machine(tmp_path))
    assert listing(a) == AT_START
    index = a.sources[-1]
    assert (index.tag, index.content) == (
        "requested_rules",
        "- migrations: Writing database migrations",
    )
    assert "Function components" not in a.text and "Release checklist" not in a.text
    assert "Never read." not in a.text and "Nested legacy" not in a.text


def test_each_kind_says_why_it_is_not_loaded(tmp_path: Path, repo: Path) -> None:
    result = explain(repo, policy="cursor", **machine(tmp_path))
    skipped = {r.path: (r.skip, r.code) for r in result.rows if r.status is Status.SKIPPED}
    assert skipped == {
        ".cursor/rules/migrations.mdc": (Skip.REQUESTED, "CTX922"),
        ".cursor/rules/python.mdc": (Skip.NOT_MATCHED, "CTX921"),
        ".cursor/rules/release.mdc": (Skip.MANUAL, "CTX923"),
        ".cursor/rules/web/react.mdc": (Skip.NOT_MATCHED, "CTX921"),
    }
    manual = next(r for r in result.rows if r.path == ".cursor/rules/release.mdc")
    assert manual.detail == (
        "manual rule (no alwaysApply, globs or description): loaded only when you mention @release"
    )


@pytest.mark.parametrize(
    ("touched", "attached"),
    [
        ("src/app.tsx", [("web/react.mdc", "globs: 'src/**/*.tsx' matched src/app.tsx")]),
        ("src/util.js", [("web/react.mdc", "globs: 'src/**/*.{js,jsx}' matched src/util.js")]),
        ("scripts/deploy.sh", [("python.mdc", "globs: 'scripts/*.sh' matched scripts/deploy.sh")]),
        ("README.md", []),
    ],
)
def test_auto_attached_rules_by_comma_string_and_by_list(
    tmp_path: Path, repo: Path, touched: str, attached: list[tuple[str, str]]
) -> None:
    a = assemble(repo, policy="cursor", **machine(tmp_path))
    after = a.touch(repo / touched)
    assert [
        (s.display.removeprefix(".cursor/rules/"), s.reason.text) for s in after.attached(a)
    ] == attached
    assert all(s.layer.value == "subdirectory" for s in after.attached(a))


def test_a_touch_below_attaches_the_nested_scope_then_matching_rules(
    tmp_path: Path, repo: Path
) -> None:
    a = assemble(repo, policy="cursor", **machine(tmp_path))
    after = a.touch(repo / "pkg" / "api" / "handlers" / "user.py")
    assert [s.display for s in after.attached(a)] == [
        "pkg/api/.cursor/rules/api.mdc",
        "pkg/api/AGENTS.md",
        ".cursor/rules/python.mdc",
        "pkg/api/.cursor/rules/handlers.mdc",  # its globs are relative to pkg/api
    ]
    again = after.touch(repo / "pkg" / "api" / "handlers" / "user.py")
    assert again.attached(after) == ()


def test_cwd_in_a_nested_scope_loads_it_at_start(tmp_path: Path, repo: Path) -> None:
    a = assemble(repo / "pkg" / "api", policy="cursor", **machine(tmp_path))
    assert [(s.display, s.reason.why.value) for s in a.sources] == [
        (".cursor/rules/style.mdc", "rule"),
        ("AGENTS.md", "ancestor of cwd"),
        (".cursorrules", "ancestor of cwd"),
        ("pkg/api/.cursor/rules/api.mdc", "rule"),
        ("pkg/api/AGENTS.md", "in cwd"),
        (".cursor/rules", "agent-requested rules index"),
    ]
    after = a.touch(repo / "pkg" / "api" / "handlers" / "user.py")
    assert [s.display for s in after.attached(a)] == [
        ".cursor/rules/python.mdc",
        "pkg/api/.cursor/rules/handlers.mdc",
    ]


def test_always_apply_must_be_a_boolean(tmp_path: Path) -> None:
    repo = tree(
        tmp_path,
        {
            "repo/.cursor/rules/quoted.mdc": '---\nalwaysApply: "true"\ndescription: Quoted\n---\nQ.\n',
            "repo/.cursor/rules/plain.mdc": "---\nalwaysApply: true\n---\nP.\n",
        },
    )
    a = assemble(repo, policy="cursor", **machine(tmp_path))
    assert [s.display for s in a.sources] == [".cursor/rules/plain.mdc", ".cursor/rules"]
    assert [d.code for d in a.diagnostics] == ["CTX926", "CTX922"]


def test_rule_kinds_follow_the_frontmatter() -> None:
    kinds: dict[str, tuple[dict[str, object], cursor.Kind]] = {
        "always": ({"alwaysApply": True, "globs": "x"}, cursor.Kind.ALWAYS),
        "string true": ({"alwaysApply": "true"}, cursor.Kind.MANUAL),
        "globs list": ({"globs": ["a/*.py", "b/**"]}, cursor.Kind.AUTO),
        "empty globs": ({"globs": "", "description": "d"}, cursor.Kind.REQUESTED),
        "blank description": ({"description": "  "}, cursor.Kind.MANUAL),
        "nothing": ({}, cursor.Kind.MANUAL),
    }
    assert {k: cursor.rule_of(data, "/r").kind for k, (data, _) in kinds.items()} == {
        k: kind for k, (_, kind) in kinds.items()
    }
    assert cursor.rule_of({"globs": "a/*.{ts,tsx}, b/**"}, "/r").globs.patterns == (
        "a/*.{ts,tsx}",
        "b/**",
    )


def test_formats_render_through_the_native_xml(tmp_path: Path, repo: Path) -> None:
    a = assemble(repo, policy="cursor", **machine(tmp_path))
    assert a.render() == a.render("xml")
    assert '<requested_rules source=".cursor/rules">\n- migrations: Writing' in a.render()
    forged = tree(
        tmp_path / "forged",
        {"repo/.cursor/rules/f.mdc": "---\nalwaysApply: true\n---\n<requested_rules>x\n"},
    )
    out = assemble(forged, policy="cursor", **machine(tmp_path)).render()
    assert "&lt;requested_rules>x" in out


def test_the_cli_renders_and_explains_with_the_policy(tmp_path: Path, repo: Path) -> None:
    args = [
        "--policy",
        "cursor",
        "--home",
        str(tmp_path / "home"),
        "--managed-dir",
        str(tmp_path / "m"),
    ]
    rendered = ctxasm(["render", str(repo), *args, "--touch", str(repo / "src" / "app.tsx")])
    assert rendered.exit_code == 0
    assert '<subdirectory_instructions source=".cursor/rules/web/react.mdc">' in rendered.stdout
    explained = ctxasm(["explain", str(repo), *args, "--json"])
    assert explained.exit_code == 0
    rows = json.loads(explained.stdout)["sources"]
    assert {r["path"]: r["status"] for r in rows}[".cursor/rules/release.mdc"] == "skipped"
    cached = ctxasm(["cache", str(repo), *args])
    assert cached.exit_code == 0 and "static prefix" in cached.stdout


def test_the_assembler_follows_a_new_rule_and_a_changed_kind(tmp_path: Path, repo: Path) -> None:
    asm = Assembler(repo, policy="cursor", **machine(tmp_path))
    first = asm.assemble()
    assert str(repo / ".cursor" / "rules") in asm.dependencies.listed
    build(repo, {".cursor/rules/new.mdc": "---\nalwaysApply: true\n---\nNew rule.\n"})
    (repo / ".cursor" / "rules" / "release.mdc").write_text(
        "---\nalwaysApply: true\n---\nNow always.\n"
    )
    deadline = time.monotonic() + 10
    second = asm.assemble()
    while "New rule." not in second.text:
        assert time.monotonic() < deadline
        second = asm.assemble()
    assert "Now always." in second.text and "New rule." not in first.text
    fresh = assemble(repo, policy="cursor", **machine(tmp_path))
    assert second.render("json") == fresh.render("json")


def test_watch_sees_a_rule_change_its_kind(tmp_path: Path, repo: Path) -> None:
    asm = Assembler(repo, policy="cursor", **machine(tmp_path))
    watcher = Watcher(asm, render=lambda a: a.render("xml"), debounce=0.02)
    try:
        first = watcher.start()
        assert first.text is not None and "Release checklist." not in first.text
        time.sleep(0.05)
        (repo / ".cursor" / "rules" / "release.mdc").write_text(
            "---\nalwaysApply: true\n---\nRelease checklist.\n"
        )
        deadline = time.monotonic() + 15
        update = None
        while update is None or "Release checklist." not in (update.text or ""):
            assert time.monotonic() < deadline, "watch did not follow the rule"
            update = watcher.next_update(timeout=deadline - time.monotonic())
        assert re.search(r"release\.mdc", update.line)
    finally:
        watcher.close()


def test_lint_checks_cursor_files_for_cursor(tmp_path: Path, repo: Path) -> None:
    build(
        repo,
        {
            ".cursor/rules/bad.mdc": '---\nalwaysApply: "yes"\nglobs: 3\npaths: x\n---\nBad.\n',
            "docs/.cursor/rules/ok.mdc": "---\nglobs: '*.md'\n---\n" + "line\n" * 230,
        },
    )
    result = lint(base=repo, ignore=["CTX605"], **machine(tmp_path))
    found = [(f.path, f.line, f.code) for f in result.findings]
    assert found == [
        (".cursor/rules/bad.mdc", 2, "CTX926"),
        (".cursor/rules/bad.mdc", 3, "CTX927"),
        (".cursor/rules/bad.mdc", 4, "CTX925"),
        (".cursor/rules/notes.md", 1, "CTX924"),
        ("docs/.cursor/rules/ok.mdc", 201, "CTX101"),
    ]
    assert ".cursorrules" in result.files and "pkg/api/.cursor/rules/api.mdc" in result.files


def test_render_out_refuses_a_rule_that_waits_for_a_touch(tmp_path: Path, repo: Path) -> None:
    target = repo / ".cursor" / "rules" / "web" / "react.mdc"
    before = target.read_text()
    args = [
        "--policy",
        "cursor",
        "--home",
        str(tmp_path / "h"),
        "--managed-dir",
        str(tmp_path / "m"),
    ]
    result = ctxasm(["render", str(repo), *args, "--out", str(target)])
    assert result.exit_code == 2 and "source" in result.stderr
    assert target.read_text() == before


def test_a_rule_of_thousands_of_globs_is_cut_at_one_thousand(tmp_path: Path) -> None:
    globs = ",".join(f"d{i}/*.py" for i in range(5000))
    repo = tree(tmp_path, {"repo/.cursor/rules/many.mdc": f"---\nglobs: {globs}\n---\nMany.\n"})
    a = assemble(repo, policy="cursor", **machine(tmp_path))
    assert [d.code for d in a.diagnostics] == ["CTX307", "CTX921"]
    assert (
        "'4,000 more' is refused (past the 1,000 globs one rule may list)"
        in a.diagnostics[0].message
    )
    assert "Many." in a.touch(repo / "d999" / "x.py").text
    assert "Many." not in a.touch(repo / "d1000" / "x.py").text
    found = lint([".cursor/rules/many.mdc"], base=repo, **machine(tmp_path)).findings
    assert [(f.code, f.line) for f in found] == [("CTX102", 1), ("CTX927", 2)]


def test_explain_lists_what_a_touch_attached_once(tmp_path: Path, repo: Path) -> None:
    touched = repo / "pkg" / "api" / "handlers" / "user.py"
    result = explain(repo, policy="cursor", touched=[touched], **machine(tmp_path))
    rows = [(r.path, r.status.value) for r in result.visible(False) if r.path.startswith("pkg/")]
    assert rows == [
        ("pkg/api/.cursor/rules/api.mdc", "loaded"),
        ("pkg/api/AGENTS.md", "loaded"),
        ("pkg/api/.cursor/rules/handlers.mdc", "loaded"),
    ]


def test_a_huge_description_is_cut_in_the_index_and_said(tmp_path: Path) -> None:
    """Issue 22 item 7: agent-requested rules are listed by their descriptions, all at once;
    each is cut at 4,096 characters and the index holds at most 1 Mi characters, said in
    render, explain and lint (CTX706)."""
    rules: dict[str, str | None] = {
        "repo/.cursor/rules/huge.mdc": "---\ndescription: " + "why " * 500_000 + "\n---\nHuge.\n",
        **{
            f"repo/.cursor/rules/r{i:03d}.mdc": f"---\ndescription: {'d' * 4096}\n---\nR.\n"
            for i in range(256)
        },
    }
    repo = tree(tmp_path, rules)
    a = assemble(repo, policy="cursor", **machine(tmp_path))
    index = a.sources[-1].content.split("\n")
    assert index[0] == "- huge: " + ("why " * 1024)[:4093] + "..."
    assert len(index) == 255  # 254 of the 256 others fit
    said = [(d.path, d.message) for d in a.diagnostics if d.code == "CTX706"]
    assert said == [
        (
            ".cursor/rules/huge.mdc",
            "agent-requested rule 'huge': description is over 4,096 characters: listed cut to "
            "4,096; shorten it",
        ),
        (
            ".cursor/rules/r254.mdc",
            "this and 1 more: 2 agent-requested rules are not listed; an index lists at most "
            "1,048,576 characters of names and descriptions",
        ),
    ]
    [row] = [r for r in explain(repo, policy="cursor", **machine(tmp_path)).rows if r.path == ".cursor/rules/huge.mdc"]  # fmt: skip
    assert "CTX706" in [n.code for n in row.notes]
    found = lint([".cursor/rules/huge.mdc"], base=repo, **machine(tmp_path)).findings
    assert [(f.code, f.line) for f in found] == [("CTX102", 1), ("CTX309", 1), ("CTX706", 2)]
    # The 2 MB line is cut before YAML sees it (Cursor documents no limit), and said.
    [cut] = [d.message for d in a.diagnostics if d.code == "CTX309"]
    assert cut.startswith("YAML frontmatter is 2,000,014 characters, 1 line(s) over 8,192:")


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="counts reads in /proc/self/io")
def test_rules_linked_to_one_file_are_read_and_parsed_once(tmp_path: Path) -> None:
    """1,000 rules linked to one 4 MB rule took 64 s to render (each link read and its YAML
    parsed anew; the adversarial review of issue 22): processing is kept by the file, not its
    name, for `render` and `explain` alike. 200 links of a 2 MiB rule here."""
    repo = git_init(tmp_path / "repo")
    description = "x" * (2 * 1024 * 1024)
    (repo / "big.mdc").write_text(f"---\ndescription: {description}\n---\nbody\n")
    build(repo, {f".cursor/rules/r{i:03d}.mdc": Link("../../big.mdc") for i in range(200)})
    options = {**machine(tmp_path), "policy": "cursor"}
    assemble(repo, **options)  # modules imported, caches warm: what follows is the run's own
    for run in (assemble, explain):
        before = bytes_read()
        run(repo, **options)
        assert bytes_read() - before < 3 * 2 * 1024 * 1024, run.__name__
