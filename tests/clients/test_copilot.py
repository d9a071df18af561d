"""The `copilot` client on real trees: `.github/copilot-instructions.md`, path-specific
instructions (`applyTo`, `excludeAgent`), the nearest `AGENTS.md`, and the commands that ask
the registry (render, explain, lint, the `Assembler`)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from assembler import Assembler, assemble
from assembler.lint import lint
from assembler.live.explain import Skip, Status, explain
from tests.helpers.rule_trees import COPILOT_TREE, tree
from tests.helpers.trees import build, listing, machine


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return tree(tmp_path, COPILOT_TREE)


def test_at_the_root_wide_file_all_files_instructions_and_root_agents_md(
    tmp_path: Path, repo: Path
) -> None:
    a = assemble(repo, policy="copilot", **machine(tmp_path))
    assert listing(a) == [
        ("project", ".github/copilot-instructions.md", "repository-wide instructions"),
        (
            "project",
            ".github/instructions/all.instructions.md",
            "instructions in .github/instructions, applyTo: '**'",
        ),
        ("project", "AGENTS.md", "the AGENTS.md nearest cwd"),
    ]
    assert "Review only." not in a.text  # excludeAgent: coding-agent


def test_the_nearest_agents_md_wins(tmp_path: Path, repo: Path) -> None:
    a = assemble(repo / "pkg" / "api", policy="copilot", **machine(tmp_path))
    assert [s.display for s in a.sources if s.display.endswith("AGENTS.md")] == [
        "pkg/api/AGENTS.md"
    ]
    result = explain(repo / "pkg" / "api", policy="copilot", **machine(tmp_path))
    farther = [(r.path, r.skip) for r in result.rows if r.skip is Skip.FARTHER]
    assert farther == [("pkg/AGENTS.md", Skip.FARTHER), ("AGENTS.md", Skip.FARTHER)]
    # A directory without its own: the next one up.
    lib = assemble(repo / "pkg" / "lib", policy="copilot", **machine(tmp_path))
    assert [s.display for s in lib.sources][-1] == "pkg/AGENTS.md"


def test_explain_says_why_each_instructions_file_is_out(tmp_path: Path, repo: Path) -> None:
    result = explain(repo, policy="copilot", **machine(tmp_path))
    skipped = {r.path: (r.skip, r.code) for r in result.rows if r.status is Status.SKIPPED}
    assert skipped == {
        ".github/instructions/frontend/ts.instructions.md": (Skip.NOT_MATCHED, "CTX931"),
        ".github/instructions/loose.instructions.md": (Skip.MANUAL, "CTX932"),
        ".github/instructions/python.instructions.md": (Skip.NOT_MATCHED, "CTX931"),
        ".github/instructions/review.instructions.md": (Skip.EXCLUDED_AGENT, "CTX933"),
    }  # AGENTS.md files below cwd are no candidates: nothing there is being worked on


@pytest.mark.parametrize(
    ("touched", "attached"),
    [
        (
            "src/app.ts",
            [
                (
                    ".github/instructions/frontend/ts.instructions.md",
                    "applyTo: 'src/**/*.ts' matched src/app.ts",
                )
            ],
        ),
        (
            "src/deep/view.tsx",
            [
                (
                    ".github/instructions/frontend/ts.instructions.md",
                    "applyTo: 'src/**/*.tsx' matched src/deep/view.tsx",
                )
            ],
        ),
        (
            "pkg/api/x.py",
            [
                (
                    ".github/instructions/python.instructions.md",
                    "applyTo: '**/*.py' matched pkg/api/x.py",
                ),
                ("pkg/api/AGENTS.md", "the AGENTS.md nearest pkg/api/x.py"),
            ],
        ),
        ("README.md", []),
    ],
)
def test_apply_to_and_the_agents_md_nearest_a_touched_file(
    tmp_path: Path, repo: Path, touched: str, attached: list[tuple[str, str]]
) -> None:
    build(repo, {"README.md": ""})
    a = assemble(repo, policy="copilot", **machine(tmp_path))
    after = a.touch(repo / touched)
    assert [(s.display, s.reason.text) for s in after.attached(a)] == attached


def test_exclude_agent_code_review_still_reaches_the_coding_agent(
    tmp_path: Path, repo: Path
) -> None:
    a = assemble(repo, policy="copilot", **machine(tmp_path)).touch(repo / "pkg" / "lib" / "y.py")
    assert "Python, agent only." in a.text and "Review only." not in a.text


def test_instructions_in_cwd_are_read_too(tmp_path: Path, repo: Path) -> None:
    build(
        repo, {"pkg/.github/instructions/pkg.instructions.md": '---\napplyTo: "*"\n---\nPkg all.\n'}
    )
    a = assemble(repo / "pkg", policy="copilot", **machine(tmp_path))
    assert "pkg/.github/instructions/pkg.instructions.md" in [s.display for s in a.sources]
    outside = assemble(repo, policy="copilot", **machine(tmp_path))
    assert "Pkg all." not in outside.text


def test_a_touch_outside_the_workspace_attaches_nothing(tmp_path: Path, repo: Path) -> None:
    build(tmp_path, {"elsewhere/x.py": ""})
    a = assemble(repo, policy="copilot", **machine(tmp_path))
    after = a.touch(tmp_path / "elsewhere" / "x.py")
    assert after.attached(a) == ()
    assert [d.code for d in after.diagnostics][-1] == "CTX407"


def test_the_assembler_follows_an_apply_to_edit(tmp_path: Path, repo: Path) -> None:
    asm = Assembler(repo, policy="copilot", **machine(tmp_path))
    first = asm.assemble()
    assert "TypeScript." not in first.text
    (repo / ".github" / "instructions" / "frontend" / "ts.instructions.md").write_text(
        '---\napplyTo: "**"\n---\nTypeScript.\n'
    )
    deadline = time.monotonic() + 10
    second = asm.assemble()
    while "TypeScript." not in second.text:
        assert time.monotonic() < deadline
        second = asm.assemble()
    fresh = assemble(repo, policy="copilot", **machine(tmp_path))
    assert second.render("json") == fresh.render("json")


def test_lint_checks_each_file_for_the_agents_that_load_it(tmp_path: Path, repo: Path) -> None:
    long = "word " * 900
    build(
        repo,
        {
            ".github/copilot-instructions.md": long,
            "pkg/AGENTS.md": long,  # code review does not read AGENTS.md
            ".github/instructions/review.instructions.md": (
                '---\napplyTo: "**"\nexcludeAgent: "coding-agent"\n---\n' + long
            ),
            ".github/instructions/python.instructions.md": (
                '---\napplyTo: "**/*.py"\nexcludeAgent: "code-review"\n---\n' + long
            ),
        },
    )
    result = lint(
        base=repo, ignore=["CTX605"], **machine(tmp_path)
    )  # the default policy: claude-code
    found = [(f.path, f.line, f.col, f.code) for f in result.findings]
    assert found == [
        (".github/copilot-instructions.md", 1, 4001, "CTX938"),
        (".github/instructions/loose.instructions.md", 1, 1, "CTX932"),
        (".github/instructions/review.instructions.md", 5, 3950, "CTX938"),
    ]
