"""Hostile repositories: content from outside the project is loaded as the client loads it
and reported every time; rules directories, a whole run and deep trees stay bounded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assembler.discovery import loader, rules
from tests.helpers.trees import Link, build, codes, git_init, run


def _warnings(assembly: object, code: str) -> list[str]:
    return [d.path for d in assembly.diagnostics if d.code == code]  # type: ignore[attr-defined]


def test_a_symlinked_claude_md_outside_the_project_loads_and_is_reported(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path, {"shared/notes.md": "shared notes", "repo/CLAUDE.md": Link("../shared/notes.md")}
    )
    a = run(tmp_path, "repo")
    assert [s.content for s in a.sources] == ["shared notes"]
    assert _warnings(a, "CTX801") == ["CLAUDE.md"]
    assert "outside the project" in a.diagnostics[0].message
    assert str(tmp_path / "shared" / "notes.md") in a.diagnostics[0].message


def test_a_target_in_the_home_directory_is_its_own_code(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {"home/.ssh/id_rsa.md": "PRIVATE KEY", "repo/CLAUDE.md": Link("../home/.ssh/id_rsa.md")},
    )
    a = run(tmp_path, "repo")
    assert [s.content for s in a.sources] == ["PRIVATE KEY"]  # the client loads it too
    assert codes(a) == ["CTX802"]


def test_a_rules_directory_linked_outside_reports_every_rule(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "outside/a.md": "rule a",
            "outside/b.md": "rule b",
            "repo/.claude/rules": Link("../../outside"),
        },
    )
    a = run(tmp_path, "repo")
    assert sorted(s.content for s in a.sources) == ["rule a", "rule b"]
    assert sorted(_warnings(a, "CTX801")) == [
        str(tmp_path / "outside" / n) for n in ("a.md", "b.md")
    ]


def test_an_import_through_a_symlinked_directory_loads_and_is_reported(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "outside/docs/guide.md": "the guide",
            "repo/CLAUDE.md": "See @docs/guide.md",
            "repo/docs": Link("../outside/docs"),
        },
    )
    a = run(tmp_path, "repo", client_version="2.1.197")
    assert [s.content for s in a.sources] == ["See @docs/guide.md", "the guide"]
    assert codes(a) == ["CTX801"]


def test_from_2_1_332_an_import_through_a_symlinked_directory_out_of_cwd_is_dropped(
    tmp_path: Path,
) -> None:
    """SPEC 4b.6: the import resolves outside cwd through the linked directory, so 2.1.332
    drops it as external (CTX204, saying through which directory); 2.1.197 loads it."""
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "outside/docs/guide.md": "the guide",
            "repo/CLAUDE.md": "See @docs/guide.md",
            "repo/docs": Link("../outside/docs"),
            "repo/inside": Link("sub"),
            "repo/sub/x.md": "inside",
            "repo/CLAUDE.local.md": "and @inside/x.md",
        },
    )
    a = run(tmp_path, "repo", client_version="2.1.332")
    assert [s.content for s in a.sources] == ["See @docs/guide.md", "and @inside/x.md", "inside"]
    (dropped,) = [d for d in a.diagnostics if d.code == "CTX204"]
    assert dropped.path == "docs/guide.md"
    assert f"through a symlinked directory ({tmp_path}/outside/docs/guide.md)" in dropped.message


def test_links_inside_the_project_and_ancestor_files_are_not_reported(tmp_path: Path) -> None:
    git_init(tmp_path / "parent/repo")
    build(
        tmp_path,
        {
            "parent/CLAUDE.md": "the user's own file above the repository",
            "parent/repo/AGENTS.md": "agents",
            "parent/repo/CLAUDE.md": Link("AGENTS.md"),
        },
    )
    a = run(tmp_path, "parent/repo")
    assert len(a.sources) == 2
    assert codes(a) == []


def test_a_case_folded_import_loads_like_the_client_and_is_reported(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/case/CLAUDE.md": "See @../CASE/x.md", "repo/CASE/x.md": "cased"})
    a = run(tmp_path, "repo/case")
    assert [s.content for s in a.sources] == ["See @../CASE/x.md", "cased"]
    assert codes(a) == ["CTX803"]


def test_a_link_to_the_root_in_rules_stops_at_the_limits(tmp_path: Path) -> None:
    """The client reads the whole machine; we stop and say so, within seconds and memory."""
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "hi", "repo/.claude/rules/root": Link("/")})
    script = (
        "import sys; from assembler import assemble\n"
        f"a = assemble({str(tmp_path / 'repo')!r}, home={str(tmp_path / 'home')!r}, "
        f"managed_dir={str(tmp_path / 'm')!r}, environ={{}})\n"
        "print(sum(len(s.content) for s in a.sources), sorted({d.code for d in a.diagnostics}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    total, found = done.stdout.split(" ", 1)
    assert int(total) <= loader.RUN_TEXT_CHARS
    assert "CTX801" in found or "CTX704" in found


def test_rules_directory_bounds(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    many = {
        f"repo/.claude/rules/r{i:04d}.md": f"rule {i}" for i in range(rules.RULES_MAX_FILES + 5)
    }
    deep = "repo/.claude/rules/" + "d/" * (rules.RULES_MAX_DEPTH + 3) + "deep.md"
    build(tmp_path, {**many, deep: "too deep"})
    a = run(tmp_path, "repo")
    assert len(a.sources) == rules.RULES_MAX_FILES
    assert "too deep" not in [s.content for s in a.sources]
    limits = [d.message for d in a.diagnostics if d.code == "CTX704"]
    assert any("deep" in m for m in limits) and any("rule files" in m for m in limits)


def test_a_rules_tree_deeper_than_the_recursion_limit_is_walked_without_recursion(
    tmp_path: Path,
) -> None:
    git_init(tmp_path / "repo")
    rules_dir = tmp_path / "repo/.claude/rules"
    rules_dir.mkdir(parents=True)
    (rules_dir / "top.md").write_text("top")
    levels = sys.getrecursionlimit() + 100
    deep = rules_dir
    for _ in range(levels):
        deep = deep / "d"
        os.mkdir(deep)
    try:
        a = run(tmp_path, "repo")
    finally:  # shutil.rmtree recurses: pytest could not remove the tree
        for _ in range(levels):
            os.rmdir(deep)
            deep = deep.parent
    assert [s.content for s in a.sources] == ["top"]
    assert "CTX704" in codes(a)


def test_a_run_loads_a_bounded_amount_of_text(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    per_file = 3 * 1024 * 1024
    count = loader.RUN_TEXT_CHARS // per_file + 2
    files = {f"repo/big{i}.md": "x" * per_file for i in range(count)}
    imports = " ".join(f"@big{i}.md" for i in range(count))
    build(tmp_path, {**files, "repo/CLAUDE.md": imports})
    a = run(tmp_path, "repo")
    assert sum(len(s.raw) for s in a.sources) <= loader.RUN_TEXT_CHARS
    assert "CTX705" in codes(a)


def test_a_skill_linked_outside_the_project_is_listed_and_reported(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "outside/deploy/SKILL.md": "---\ndescription: deploys\n---\nsteps",
            "repo/CLAUDE.md": "hi",
            "repo/.claude/skills/deploy": Link("../../../outside/deploy"),
        },
    )
    a = run(tmp_path, "repo")
    assert [s.name for s in a.skills] == ["deploy"]
    assert codes(a) == ["CTX801"]


def _deep_tree(root: Path, levels: int) -> Path:
    deep = root
    for _ in range(levels):
        deep = deep / "d"
        os.mkdir(deep)
    return deep


def _remove_deep_tree(deep: Path, levels: int) -> None:
    for _ in range(levels):  # shutil.rmtree recurses: pytest could not remove the tree
        for child in deep.iterdir():
            child.unlink()
        os.rmdir(deep)
        deep = deep.parent


def _machine_options(tmp_path: Path) -> list[str]:
    return ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]


@pytest.mark.slow
def test_a_path_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    """Touching it, starting in it, and explaining there: no RecursionError, no quadratic
    `realpath` (each directory is resolved once)."""
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "top"})
    levels = sys.getrecursionlimit() + 100
    deep = _deep_tree(tmp_path / "repo", levels)
    (deep / "CLAUDE.md").write_text("deep")
    try:
        touched = run(tmp_path, "repo", touched=[str(deep / "x.py")])
        inside = run(tmp_path, deep)
        explained = subprocess.run(
            [sys.executable, "-m", "assembler", "explain", *_machine_options(tmp_path)],
            cwd=deep,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "COLUMNS": "100"},
        )
    finally:
        _remove_deep_tree(deep, levels)
    assert [s.content for s in touched.sources] == ["top", "deep"]
    assert [s.content for s in inside.sources] == ["top", "deep"]
    assert explained.returncode == 0, explained.stderr


def test_a_repositorys_git_config_runs_no_command(tmp_path: Path) -> None:
    """`core.fsmonitor` names a command git runs when it reads the index (status, ls-files)."""
    repo = git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "hi"})
    marker = tmp_path / "ran"
    subprocess.run(
        ["git", "-C", str(repo), "config", "core.fsmonitor", f"touch {marker}; false"], check=True
    )
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    for command in (["render", "--env"], ["lint"]):
        subprocess.run(
            [sys.executable, "-m", "assembler", *command, *_machine_options(tmp_path)],
            cwd=repo,
            env=env,
            capture_output=True,
            timeout=60,
        )
    assert not marker.exists()


# --- ancestors above a moved project root (issue 22, item 3) ------------------------------


def _moved_root(tmp: Path, shape: str) -> Path:
    """Where the agent starts in `dl/`, a tree the repository's author wrote above the project
    root: `dl/proj` a submodule of `dl` (its `.git` a file), `dl/proj/sub` below a `.git` file,
    or `dl/proj` in a download with no `.git` at all (the root is then cwd)."""
    dl = tmp / "dl"
    dl.mkdir()
    env = {"PATH": os.environ.get("PATH", "")}
    if shape == "submodule":
        git_init(dl)
        (dl / ".git" / "modules").mkdir()
        git = ["git", "init", "-q", "--separate-git-dir", str(dl / ".git/modules/proj")]
        subprocess.run([*git, str(dl / "proj")], check=True, capture_output=True, env=env)
        return dl / "proj"
    if shape == "below a .git file":
        git = ["git", "init", "-q", "--separate-git-dir", str(tmp / "proj.git")]
        subprocess.run([*git, str(dl / "proj")], check=True, capture_output=True, env=env)
        (dl / "proj" / "sub").mkdir()
        return dl / "proj" / "sub"
    (dl / "proj").mkdir()
    return dl / "proj"


_SHAPES = ("submodule", "below a .git file", "download without .git")


@pytest.mark.parametrize("shape", _SHAPES)
def test_an_ancestor_file_linked_to_the_home_directory_is_reported(
    tmp_path: Path, shape: str
) -> None:
    """The client loads it (so ctxasm does), but it is not the user's own file above the
    project: its real path is not where it stands."""
    cwd = _moved_root(tmp_path, shape)
    build(
        tmp_path,
        {"home/.ssh/id_rsa.md": "PRIVATE KEY", "dl/CLAUDE.md": Link("../home/.ssh/id_rsa.md")},
    )
    a = run(tmp_path, cwd)
    assert [s.content for s in a.sources] == ["PRIVATE KEY"]
    [warning] = a.diagnostics
    assert (warning.code, warning.path) == (
        "CTX802",
        a.context.display(str(tmp_path / "dl/CLAUDE.md")),
    )
    assert "~/.ssh/id_rsa.md" in warning.message


def test_ancestor_files_are_reported_only_when_they_reach_out_of_where_they_stand(
    tmp_path: Path,
) -> None:
    """A link from `dl/CLAUDE.md` to `dl/docs/CLAUDE.md` (or into the project below it) stays
    where it stands; to another tree, to the home directory, through a linked rules directory or
    through an import of a linked directory, it does not."""
    cwd = _moved_root(tmp_path, "download without .git")
    build(
        tmp_path,
        {
            "home/secret.md": "home secret",
            "home/rules/r.md": "home rule",
            "other/notes.md": "other tree",
            "dl/docs/CLAUDE.md": "docs of the download",
            "dl/CLAUDE.md": Link("docs/CLAUDE.md"),
            "dl/.claude/CLAUDE.md": Link("../proj/AGENTS.md"),
            "dl/proj/AGENTS.md": "agents below",
            "dl/CLAUDE.local.md": Link("../other/notes.md"),
            "dl/.claude/rules": Link("../../home/rules"),
            "dl/proj/CLAUDE.md": "See @linked/secret.md",
            "dl/proj/linked": Link("../../home"),
        },
    )
    a = run(tmp_path, cwd, client_version="2.1.197")  # 2.1.332 drops the linked import
    assert sorted(s.content for s in a.sources) == sorted(
        [
            "docs of the download",
            "agents below",
            "home rule",
            "other tree",
            "See @linked/secret.md",
            "home secret",
        ]
    )
    found = sorted((d.code, d.path) for d in a.diagnostics)
    assert found == [
        ("CTX801", "../CLAUDE.local.md"),
        ("CTX802", "linked/secret.md"),  # the project's own import: reported as before
        ("CTX802", "~/rules/r.md"),
    ]


def test_an_ancestor_import_through_a_linked_directory_is_reported(tmp_path: Path) -> None:
    """An ancestor's `@proj/linked/x` is inside cwd as written, so the client loads it without
    approval; its real path is in the home directory."""
    cwd = _moved_root(tmp_path, "submodule")
    build(
        tmp_path,
        {
            "home/secret.md": "home secret",
            "dl/CLAUDE.md": "See @proj/linked/secret.md",
            "dl/proj/linked": Link("../../home"),
        },
    )
    a = run(tmp_path, cwd, client_version="2.1.197")  # 2.1.332 drops it (SPEC 4b.6)
    assert [s.content for s in a.sources] == ["See @proj/linked/secret.md", "home secret"]
    assert [(d.code, d.path) for d in a.diagnostics] == [("CTX802", "linked/secret.md")]


def test_an_ancestor_skill_linked_to_the_home_directory_is_reported(tmp_path: Path) -> None:
    """Without git, skills are looked for up to the filesystem root: `dl/.claude/skills`."""
    cwd = _moved_root(tmp_path, "download without .git")
    build(
        tmp_path,
        {
            "home/deploy/SKILL.md": "---\ndescription: deploys\n---\nsteps",
            "dl/.claude/skills/deploy": Link("../../../home/deploy"),
        },
    )
    a = run(tmp_path, cwd)
    assert [s.name for s in a.skills] == ["deploy"]
    assert codes(a) == ["CTX802"]


def test_the_users_own_files_are_not_reported_wherever_they_link(tmp_path: Path) -> None:
    """User and managed layers are trusted: a user or managed file linked to another tree is
    the user's or the machine's choice, even when the home directory is above the project; an
    ancestor file linked within the directory it stands in (`~/CLAUDE.md` to `~/notes`) is
    the user's own."""
    git_init(tmp_path / "home/work/repo")
    build(
        tmp_path,
        {
            "dotfiles/CLAUDE.md": "user file kept elsewhere",
            "dotfiles/managed.md": "managed file kept elsewhere",
            "managed/CLAUDE.md": Link("../dotfiles/managed.md"),
            "home/.claude/CLAUDE.md": Link("../../dotfiles/CLAUDE.md"),
            "home/CLAUDE.md": Link("notes/CLAUDE.md"),
            "home/notes/CLAUDE.md": "the user's notes, within the home directory",
        },
    )
    a = run(tmp_path, "home/work/repo")
    assert [s.content for s in a.sources] == [
        "managed file kept elsewhere",
        "user file kept elsewhere",
        "the user's notes, within the home directory",
    ]
    assert codes(a) == []
