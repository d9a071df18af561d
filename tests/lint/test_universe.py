"""Whole-repository lint skips discovering a directory only where no duplicate can be: its
findings are those of the same files linted one by one (the file-list form discovers the
context of every file), on generated repositories where paragraphs repeat across siblings,
ancestors, imports, the user's file, auto memory, and starts whose settings move memory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler.clients.claude_code.settings import slug
from assembler.lint import lint
from tests.helpers.trees import build, git_init, machine

PARAGRAPHS = [
    f"Paragraph {name}: always run the whole test suite before you push a change here."
    for name in ("alpha", "beta", "gamma", "delta")
]
DIRS = ["", "a", "a/b", "a/b/c", "d", "d/e"]
PLACES = ["CLAUDE.md", ".claude/CLAUDE.md", ".claude/rules/r.md", "CLAUDE.local.md"]


@st.composite
def repositories(draw: st.DrawFn) -> dict[str, str]:
    files: dict[str, str] = {}
    texts = st.lists(st.sampled_from(PARAGRAPHS), min_size=1, max_size=2)
    for directory in draw(st.lists(st.sampled_from(DIRS), min_size=1, max_size=5, unique=True)):
        for place in draw(st.lists(st.sampled_from(PLACES), min_size=1, max_size=2, unique=True)):
            body = "\n\n".join(draw(texts))
            if draw(st.booleans()):
                body += "\n\n@" + draw(
                    st.sampled_from(["/docs/shared.md", "docs/x.md", "../up.md"])
                )
            files[os.path.join("repo", directory, place)] = body + "\n"
        if draw(st.integers(0, 4)) == 0:  # a start whose settings move auto memory
            settings_file = os.path.join("repo", directory, ".claude", "settings.local.json")
            files[settings_file] = json.dumps({"autoMemoryDirectory": "~/moved"})
    files["repo/docs/shared.md"] = "\n\n".join(draw(texts)) + "\n"
    files["repo/docs/x.md"] = "\n\n".join(draw(texts)) + "\n"
    files["repo/up.md"] = "\n\n".join(draw(texts)) + "\n"
    if draw(st.booleans()):
        files["home/.claude/CLAUDE.md"] = "\n\n".join(draw(texts)) + "\n"
    if draw(st.booleans()):
        files["home/moved/MEMORY.md"] = "\n\n".join(draw(texts)) + "\n"
    files["repo/.gitignore"] = "CLAUDE.local.md\n"
    return files


def _lint_both(tmp: Path, files: dict[str, str], memory_text: str = PARAGRAPHS[0]) -> None:
    git_init(tmp / "repo")
    build(tmp, files)
    memory = tmp / "home/.claude/projects" / slug(Path(os.path.realpath(tmp / "repo")))
    build(memory, {"memory/MEMORY.md": memory_text + "\n"})
    subprocess.run(["git", "-C", str(tmp / "repo"), "add", "-A"], check=True, capture_output=True)
    whole = lint([], base=tmp / "repo", **machine(tmp))
    # `cwd`: what the repository's start says of files from outside that no file holds (auto
    # memory its settings move: CTX804), which whole-repository lint reports too.
    one_by_one = lint(list(whole.files), base=tmp / "repo", cwd=tmp / "repo", **machine(tmp))
    assert whole.findings == one_by_one.findings


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(repositories())
def test_whole_repository_findings_are_those_of_each_file(files: dict[str, str]) -> None:
    tmp = Path(tempfile.mkdtemp())
    try:
        _lint_both(tmp, files)
    finally:
        shutil.rmtree(tmp)


def test_a_start_whose_settings_move_memory_is_discovered(tmp_path: Path) -> None:
    """`a/` has settings that move auto memory to a file repeating `a/CLAUDE.md`: the start in
    `a/` loads both, though the repository's own start loads neither memory."""
    files = {
        "repo/CLAUDE.md": PARAGRAPHS[1] + "\n",
        "repo/a/CLAUDE.md": PARAGRAPHS[0] + "\n",
        "repo/a/.claude/settings.local.json": json.dumps({"autoMemoryDirectory": "~/moved"}),
        "home/moved/MEMORY.md": PARAGRAPHS[0] + "\n",
        "repo/.gitignore": "",
    }
    _lint_both(tmp_path, files, memory_text=PARAGRAPHS[3])
    whole = lint([], base=tmp_path / "repo", **machine(tmp_path))
    assert [(f.path, f.code) for f in whole.findings if f.code == "CTX502"] == [
        ("a/CLAUDE.md", "CTX502")
    ]


def test_settings_read_from_the_run_cache_still_tell_kinds_apart(tmp_path: Path) -> None:
    """The root's own settings file exists: its second read in the run comes from the cache
    (once its times are settled), and must still count as a setting the kinds compare."""
    files = {
        "repo/CLAUDE.md": PARAGRAPHS[1] + "\n",
        "repo/.claude/settings.local.json": "{}",
        "repo/a/CLAUDE.md": PARAGRAPHS[0] + "\n",
        "repo/a/.claude/settings.local.json": json.dumps({"autoMemoryDirectory": "~/moved"}),
        "home/moved/MEMORY.md": PARAGRAPHS[0] + "\n",
        "repo/.gitignore": "",
    }
    git_init(tmp_path / "repo")
    build(tmp_path, files)
    subprocess.run(["git", "-C", str(tmp_path / "repo"), "add", "-A"], check=True)
    time.sleep(0.2)  # past the read cache's freshness window: the settings are kept
    whole = lint([], base=tmp_path / "repo", **machine(tmp_path))
    assert [(f.path, f.code) for f in whole.findings if f.code == "CTX502"] == [
        ("a/CLAUDE.md", "CTX502")
    ]


def test_siblings_that_repeat_each_other_are_no_duplicates(tmp_path: Path) -> None:
    files = {
        "repo/a/CLAUDE.md": PARAGRAPHS[0] + "\n",
        "repo/b/CLAUDE.md": PARAGRAPHS[0] + "\n",
        "repo/c/CLAUDE.md": PARAGRAPHS[1] + "\n\n@../b/CLAUDE.md\n",
    }
    _lint_both(tmp_path, files, memory_text=PARAGRAPHS[3])
    whole = lint([], base=tmp_path / "repo", **machine(tmp_path))
    assert [(f.path, f.code) for f in whole.findings if f.code == "CTX502"] == []


def test_many_files_given_are_checked_as_one_by_one(tmp_path: Path) -> None:
    """From `INDEX_FROM_FILES` files given (`pre-commit run --all-files`), lint indexes the
    repository first: the findings are those of the same files given a few at a time."""
    from assembler.lint import INDEX_FROM_FILES

    files = {"repo/CLAUDE.md": PARAGRAPHS[0] + "\n", "repo/.gitignore": ""}
    for i in range(INDEX_FROM_FILES + 6):
        text = PARAGRAPHS[i % 3] + ("\n\n" + PARAGRAPHS[3] if i % 5 == 0 else "")
        files[f"repo/pkg{i}/CLAUDE.md"] = text + "\n"
    git_init(tmp_path / "repo")
    build(tmp_path, files)
    subprocess.run(["git", "-C", str(tmp_path / "repo"), "add", "-A"], check=True)
    names = sorted(p.removeprefix("repo/") for p in files if p.endswith(".md"))
    together = lint(names, base=tmp_path / "repo", **machine(tmp_path))
    apart = [
        f
        for start in range(0, len(names), 20)
        for f in lint(
            names[start : start + 20], base=tmp_path / "repo", **machine(tmp_path)
        ).findings
    ]
    assert together.findings == tuple(
        sorted(apart, key=lambda f: (f.path, f.line, f.col, f.code, f.message))
    )
    repeating_the_root = sum(1 for i in range(INDEX_FROM_FILES + 6) if i % 3 == 0)
    assert sum(f.code == "CTX502" for f in together.findings) == repeating_the_root
