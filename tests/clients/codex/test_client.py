"""The `codex` client on real trees: what Codex CLI 0.171 loads, cuts and sends (SPEC 5)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from assembler import Assembler, Assembly, assemble
from assembler.clients.codex.client import utf8_boundary
from assembler.lint import lint
from assembler.live.explain import Skip, Status, explain
from assembler.live.watch import Watcher
from tests.helpers.cli import ctxasm
from tests.helpers.trees import Link, build, codes, git_init, listing, machine

WRAP = "# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\n{text}\n</INSTRUCTIONS>"
GLOBAL_ONLY = "# AGENTS.md instructions\n\n<INSTRUCTIONS>\n{text}\n</INSTRUCTIONS>"


def _codex(tmp: Path, cwd: Path, **options: object) -> Assembly:
    return assemble(cwd, policy="codex", **{**machine(tmp), **options})


def _repo(tmp: Path, files: dict[str, str]) -> Path:
    repo = git_init(tmp / "repo")
    build(tmp, files)
    return repo


def test_root_to_cwd_with_overrides_and_nothing_above_the_root_or_below_cwd(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {
            "AGENTS.md": "above the root: never read",
            "home/.codex/AGENTS.override.md": "global override",
            "home/.codex/AGENTS.md": "global, shadowed by the override",
            "repo/AGENTS.md": "root",
            "repo/a/AGENTS.override.md": "a override",
            "repo/a/AGENTS.md": "a shadowed",
            "repo/a/b/AGENTS.md": "b",
            "repo/a/b/c/AGENTS.md": "below cwd: never read",
        },
    )
    assembly = _codex(tmp_path, repo / "a" / "b")
    assert listing(assembly) == [
        ("user", "~/.codex/AGENTS.override.md", "Codex global instructions (CODEX_HOME)"),
        ("project", "AGENTS.md", "project doc between the project root and cwd"),
        ("project", "a/AGENTS.override.md", "project doc between the project root and cwd"),
        ("project", "a/b/AGENTS.md", "project doc in cwd"),
    ]
    assert "CTX905" in codes(assembly)  # a/AGENTS.md is shadowed
    cwd = os.path.realpath(repo / "a" / "b")
    text = "global override\n\n--- project-doc ---\n\nroot\n\na override\n\nb"
    assert assembly.render("codex") == WRAP.format(cwd=cwd, text=text)


def test_an_empty_global_override_falls_through_and_codex_home_is_honoured(tmp_path: Path) -> None:
    build(
        tmp_path,
        {
            "elsewhere/AGENTS.override.md": " \n\t\n",
            "elsewhere/AGENTS.md": "\n  from CODEX_HOME  \n",
            "home/.codex/AGENTS.md": "not this one",
            "work/x": "",
        },
    )
    assembly = _codex(
        tmp_path, tmp_path / "work", environ={"CODEX_HOME": str(tmp_path / "elsewhere")}
    )
    # Only CODEX_HOME's file contributes: no directory in the header (SPEC 4b, Codex 0.171).
    assert assembly.render("codex") == GLOBAL_ONLY.format(text="from CODEX_HOME")


@pytest.mark.parametrize(
    ("files", "config"),
    [
        ({}, ""),  # no project doc
        ({"repo/AGENTS.md": " \n\n"}, ""),  # a blank one
        ({"repo/AGENTS.md": "project"}, "project_doc_max_bytes = 0\n"),  # none read
    ],
)
def test_the_header_names_no_directory_when_only_the_global_file_contributes(
    tmp_path: Path, files: dict[str, str], config: str
) -> None:
    """SPEC 4b (Codex 0.171): `# AGENTS.md instructions`, without ` for <cwd>`, when no
    project doc contributes (ctxasm named cwd before)."""
    build(tmp_path, {"home/.codex/AGENTS.md": "mine", "home/.codex/config.toml": config, **files})
    git_init(tmp_path / "repo")
    assembly = _codex(tmp_path, tmp_path / "repo")
    assert assembly.render("codex") == GLOBAL_ONLY.format(text="mine")
    assert assembly.client_version == "0.171"


def test_fallback_names_from_config_and_no_git_root_means_cwd_only(tmp_path: Path) -> None:
    build(
        tmp_path,
        {
            "home/.codex/config.toml": 'project_doc_fallback_filenames = ["", "TEAM.md", "AGENTS.md"]\n',
            "top/AGENTS.md": "parent: no git root, so not read",
            "top/work/TEAM.md": "team notes\n",
            "top/work/sub/TEAM.md": "below cwd",
        },
    )
    assembly = _codex(tmp_path, tmp_path / "top" / "work")
    assert [s.display for s in assembly.sources] == ["TEAM.md"]  # shown relative to cwd
    assert assembly.render("codex").endswith("<INSTRUCTIONS>\nteam notes\n\n</INSTRUCTIONS>")


def test_project_root_markers_are_configurable_and_empty_means_cwd_only(tmp_path: Path) -> None:
    files = {"proj/.hg/x": "", "proj/AGENTS.md": "root by .hg", "proj/app/AGENTS.md": "app"}
    build(tmp_path, files)
    build(tmp_path, {"home/.codex/config.toml": 'project_root_markers = [".hg"]\n'})
    marked = _codex(tmp_path, tmp_path / "proj" / "app")
    assert [s.display for s in marked.sources] == ["../AGENTS.md", "AGENTS.md"]
    build(tmp_path, {"home/.codex/config.toml": "project_root_markers = []\n"})
    alone = _codex(tmp_path, tmp_path / "proj" / "app")
    assert [s.display for s in alone.sources] == ["AGENTS.md"]


def test_a_project_doc_above_the_project_root_linked_elsewhere_is_reported(
    tmp_path: Path,
) -> None:
    """A root marker above the git root (or cwd) walks from a directory above the project:
    its doc is reported like an ancestor file of Claude Code's when its real path is not where
    it stands (issue 22); a doc there that stays put is not."""
    build(
        tmp_path,
        {
            "home/.codex/config.toml": 'project_root_markers = [".hg"]\n',
            "home/.ssh/id_rsa.md": "PRIVATE KEY",
            "dl/.hg/x": "",
            "dl/AGENTS.md": Link("../home/.ssh/id_rsa.md"),
            "dl/proj/AGENTS.md": "below",
            "plain/.hg/x": "",
            "plain/AGENTS.md": Link("docs/AGENTS.md"),
            "plain/docs/AGENTS.md": "the download's own",
            "plain/proj/x": "",
        },
    )
    linked = _codex(tmp_path, tmp_path / "dl" / "proj")
    assert [s.content for s in linked.sources] == ["PRIVATE KEY", "below"]
    assert [(d.code, d.path) for d in linked.diagnostics] == [("CTX802", "../AGENTS.md")]
    plain = _codex(tmp_path, tmp_path / "plain" / "proj")
    assert [s.content for s in plain.sources] == ["the download's own"]
    assert codes(plain) == []


def test_budget_cut_inside_a_multibyte_character_is_moved_back_and_reported(
    tmp_path: Path,
) -> None:
    # 10 ASCII bytes, then "é" (2 bytes) straddling byte 12 of a 12-byte budget.
    repo = _repo(
        tmp_path,
        {
            "home/.codex/config.toml": "project_doc_max_bytes = 12\n",
            "repo/AGENTS.md": "line one\n\nXé and more\n",
            "repo/app/AGENTS.md": "dropped: the budget is spent",
        },
    )
    assembly = _codex(tmp_path, repo / "app")
    (root,) = assembly.sources
    assert root.content == "line one\n\nX"
    assert root.cuts and root.cuts[0].kind == "codex-budget"
    notes = {d.code: d for d in assembly.diagnostics}
    assert "line 3 (byte 12 of 23): 11 characters never reach" in notes["CTX901"].message
    assert "splits a character there, ctxasm keeps 11 bytes" in notes["CTX901"].message
    assert notes["CTX902"].path == "app/AGENTS.md"
    cwd = os.path.realpath(repo / "app")
    assert assembly.render("codex") == WRAP.format(cwd=cwd, text="line one\n\nX")


def test_cjk_text_is_budgeted_in_bytes_not_characters(tmp_path: Path) -> None:
    cjk = "汉字" * 10  # 20 characters, 60 bytes
    repo = _repo(
        tmp_path,
        {"home/.codex/config.toml": "project_doc_max_bytes = 31\n", "repo/AGENTS.md": cjk},
    )
    (doc,) = _codex(tmp_path, repo).sources
    assert doc.content == cjk[:10]  # 30 bytes: the 11th character would need bytes 31..33
    assert utf8_boundary("汉".encode()[:2]) == 0 and utf8_boundary("a汉".encode()) == 4


def test_whitespace_docs_cost_nothing_and_zero_disables_project_docs(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {
            "home/.codex/AGENTS.md": "global",
            "home/.codex/config.toml": "project_doc_max_bytes = 6\n",
            "repo/AGENTS.md": " \n \n \n \n",
            "repo/app/AGENTS.md": "sixsix",
        },
    )
    assert [s.content for s in _codex(tmp_path, repo / "app").sources] == ["global", "sixsix"]
    build(tmp_path, {"home/.codex/config.toml": "project_doc_max_bytes = 0\n"})
    assembly = _codex(tmp_path, repo / "app")
    assert assembly.render("codex").endswith("<INSTRUCTIONS>\nglobal\n</INSTRUCTIONS>")


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ('project_doc_max_bytes = "big"\n', "project_doc_max_bytes must be a non-negative integer"),
        ("project_doc_max_bytes = -1\n", "project_doc_max_bytes must be a non-negative integer"),
        ("project_doc_fallback_filenames = 3\n", "must be a list of strings"),
        ('project_root_markers = ["../up"]\n', "is not a name in a directory"),
        ("project_doc_max_bytes = \n", "invalid TOML"),
    ],
)
def test_bad_config_values_are_reported_and_defaults_used(
    tmp_path: Path, config: str, says: str
) -> None:
    repo = _repo(tmp_path, {"home/.codex/config.toml": config, "repo/AGENTS.md": "root"})
    assembly = _codex(tmp_path, repo)
    (problem,) = [d for d in assembly.diagnostics if d.code == "CTX903"]
    assert problem.path == "~/.codex/config.toml" and says in problem.message
    assert [s.content for s in assembly.sources] == ["root"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_doc_makes_codex_load_no_project_doc(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"repo/AGENTS.md": "root", "repo/app/AGENTS.md": "secret"})
    (repo / "app" / "AGENTS.md").chmod(0)
    try:
        assembly = _codex(tmp_path, repo / "app")
    finally:
        (repo / "app" / "AGENTS.md").chmod(0o644)
    assert assembly.sources == ()
    assert "CTX904" in codes(assembly)


def test_explain_shows_the_cut_and_the_dropped_doc(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {
            "home/.codex/config.toml": "project_doc_max_bytes = 10\n",
            "repo/AGENTS.md": "0123456789 and more",
            "repo/app/AGENTS.md": "never",
        },
    )
    result = explain(repo / "app", policy="codex", **machine(tmp_path))
    rows = {r.path: r for r in result.rows}
    assert rows["AGENTS.md"].status is Status.TRUNCATED
    assert "past project_doc_max_bytes" in rows["AGENTS.md"].detail
    assert rows["app/AGENTS.md"].status is Status.SKIPPED
    assert rows["app/AGENTS.md"].skip is Skip.CLIENT_BUDGET


def test_the_assembler_and_watch_follow_codex_inputs(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"repo/AGENTS.md": "first", "home/.codex/config.toml": ""})
    config = tmp_path / "home" / ".codex" / "config.toml"
    asm = Assembler(repo, policy="codex", **machine(tmp_path))
    time.sleep(0.1)  # a file changed within a clock tick of a run is never trusted as unchanged
    first = asm.assemble()
    assert asm.assemble() is first  # nothing changed: the same assembly
    assert str(config) in asm.dependencies.paths
    config.write_text("project_doc_max_bytes = 3\n")
    assert [s.content for s in asm.assemble().sources] == ["fir"]
    watcher = Watcher(asm, render=lambda a: a.render("codex"), debounce=0.02)
    try:
        watcher.start()
        time.sleep(0.05)
        (repo / "AGENTS.override.md").write_text("override wins")
        deadline = time.monotonic() + 15
        update = None
        while update is None or "ove" not in (update.text or ""):
            assert time.monotonic() < deadline, "watch did not follow AGENTS.override.md"
            update = watcher.next_update(timeout=deadline - time.monotonic())
    finally:
        watcher.close()


def test_cli_render_and_cache_with_the_codex_policy(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"repo/AGENTS.md": "root rules"})
    args = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "m")]
    render = ctxasm(["render", str(repo), "--policy", "codex", *args])
    assert render.exit_code == 0
    assert render.stdout == WRAP.format(cwd=os.path.realpath(repo), text="root rules")
    cache = ctxasm(["cache", str(repo), "--policy", "codex", *args])
    assert cache.exit_code == 0, cache.output


def test_lint_names_the_line_where_codex_stops_and_spares_skill_files(tmp_path: Path) -> None:
    long = "".join(f"rule {i:04d}: keep it\n" for i in range(2000))  # 36,000 bytes
    repo = _repo(
        tmp_path,
        {
            "repo/AGENTS.md": long,
            "repo/.claude/skills/deploy/AGENTS.md": long,
            "repo/.agents/skills/deploy/references/AGENTS.md": long,
        },
    )
    result = lint(base=repo, ignore=["CTX605"], **machine(tmp_path))
    found = {(f.path, f.code, f.line) for f in result.findings}
    assert ("AGENTS.md", "CTX901", 32768 // len("rule 0000: keep it\n") + 1) in found
    assert ("AGENTS.md", "CTX101", 201) in found
    assert not {f for f in result.findings if "skills" in f.path}
    assert "CTX201" not in {f.code for f in result.findings}  # Codex follows no @imports


def test_lint_reports_a_doc_codex_drops_once_the_budget_is_spent(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"repo/AGENTS.md": "x" * 40_000, "repo/app/AGENTS.md": "app rules\n"})
    result = lint(["app/AGENTS.md"], base=repo, ignore=["CTX605"], **machine(tmp_path))
    assert [(f.code, f.line) for f in result.findings] == [("CTX902", 1)]
    assert "32,768-byte project_doc_max_bytes is spent" in result.findings[0].message
