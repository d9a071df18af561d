"""`report.page`: one valid, self-contained HTML page; the same inputs give the same bytes;
nothing from the repository becomes markup."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assembler.report.build import build
from assembler.report.page import render, visible
from tests.helpers.report_pages import PLANTED, PLANTED_NAME, Structure, hostile
from tests.helpers.trees import CORPUS_TREES, ROOT, Link, corpus_tree, demo_tree, git_init, machine
from tests.helpers.trees import build as build_tree

SECTIONS = ("summary", "agents", "drift", "tokens", "why-not", "lint", "lazy", "cache", "files")


def test_the_demo_page_is_valid_and_has_every_section(tmp_path: Path) -> None:
    tree = demo_tree(tmp_path)
    html = render(build(tree.cwd, **tree.options()))
    page = Structure(html)
    page.check()
    assert set(SECTIONS) <= set(page.ids)
    text = "".join(page.text)
    for words in (
        "Every agent side by side",
        "Where the tokens go",
        "Why not",
        "Lint findings",
        "Lazy loading",
        "Cache",
        "external import not approved",  # why not: the import
        "CTX402",  # lint: CLAUDE.local.md is not git-ignored
        "services/api/src/handlers/users.ts",  # the touched path
    ):
        assert words in text, words
    # The lint finding links to its line, which the file's text holds.
    assert "#f7-1" in page.links and "f7-1" in page.ids
    # Nothing is fetched: the page forbids it, and names no other place.
    assert "default-src 'none'" in html
    assert all(link.startswith("#") for link in page.links)


def test_the_same_inputs_give_the_same_bytes(tmp_path: Path) -> None:
    """Twice in this process, and in two processes with other hash seeds (set order)."""
    tree = demo_tree(tmp_path)
    first = render(build(tree.cwd, **tree.options()))
    assert render(build(tree.cwd, **tree.options())) == first
    digests = set()
    for seed in ("1", "2"):
        out = tmp_path / f"page-{seed}.html"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CTXASM_"))}
        env.update({**tree.environ, "PYTHONHASHSEED": seed})
        subprocess.run(
            [sys.executable, "-m", "assembler", "report", *tree.args(), "--out", str(out)],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            check=False,
        )
        digests.add(hashlib.sha256(out.read_bytes()).hexdigest())
    assert len(digests) == 1
    assert (tmp_path / "page-1.html").read_text(encoding="utf-8") == first


def test_planted_markup_stays_text(tmp_path: Path) -> None:
    """`<script>`, `</textarea>`, an `<img>` handler and bidi controls in a CLAUDE.md, in every
    agent's file and in a rule's name: all shown as text, none of it markup."""
    tree = hostile(tmp_path)
    report = build(tree.cwd, **tree.options())
    html = render(report)
    page = Structure(html)
    page.check()  # no script, no img, no handler: the planted tags are text
    text = "".join(page.text)
    assert "<script>document.title='pwned';window.pwned=1</script>" in text
    assert "</textarea></pre></style><script>alert(1)</script>" in text
    assert "&lt;script&gt;" in html and "<script" not in html
    # The rule's name: its newline, escape and bidi control written as escapes.
    assert visible(f".claude/rules/{PLANTED_NAME}") in text
    assert "\\u202e" in text and "\\x1b[31m" in text
    assert not any(c in html for c in ("\u202e", "\u202c", "\x1b"))
    # Every agent's file: each loaded and shown.
    assert {row.path for row, _ in report.rows} >= {"CLAUDE.md", "AGENTS.md", "GEMINI.md"}
    assert text.count(PLANTED.splitlines()[1]) >= 4


def test_text_from_outside_the_project_never_reaches_the_page(tmp_path: Path) -> None:
    """A page is an artifact others read: what the repository reaches outside of itself (a
    link, moved auto memory; a linked file only lint names) is named, its text withheld."""
    repo = git_init(tmp_path / "repo")
    secrets = {f"secret{i}.txt": f"TOKEN-{i}-hunter2\n" for i in range(4)}
    build_tree(tmp_path, {**secrets, "memory/MEMORY.md": "TOKEN-memory-hunter2\n"})
    build_tree(
        repo,
        {
            "CLAUDE.md": Link("../secret0.txt"),
            "AGENTS.md": Link("../secret1.txt"),
            "api/CLAUDE.md": Link("../../secret2.txt"),
            "other/CLAUDE.md": Link("../../secret3.txt"),
            "api/x.ts": "",
            ".claude/settings.local.json": json.dumps(
                {"autoMemoryDirectory": str(tmp_path / "memory")}
            ),
        },
    )
    (tmp_path / "home").mkdir()
    options = {**machine(tmp_path), "touched": [repo / "api" / "x.ts"]}
    report = build(repo, **options)
    html = render(report)
    assert "hunter2" not in html
    named = {card.path for card in report.cards if card.missing.startswith("read from outside")}
    assert {"CLAUDE.md", "AGENTS.md", "api/CLAUDE.md"} <= named
    assert any(p.endswith("memory/MEMORY.md") for p in named)
    Structure(html).check()


def test_visible_is_one_printable_line_with_its_tabs() -> None:
    assert visible("a\tb") == "a\tb"
    assert visible("a\nb\u202ec\x1b") == "a\\nb\\u202ec\\x1b"
    assert visible("\udcff.md") == "\\xff.md"


def test_the_template_escapes_every_value() -> None:
    """Autoescape is on and nothing in the template turns it off."""
    template = (ROOT / "templates" / "report" / "page.html.j2").read_text(encoding="utf-8")
    for unsafe in ("|safe", "| safe", "autoescape false", "Markup", "<script"):
        assert unsafe not in template, unsafe


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS_TREES, reason="the shared corpus is not here")
@pytest.mark.parametrize("name", CORPUS_TREES)
def test_every_corpus_tree_gives_a_small_valid_page(tmp_path: Path, name: str) -> None:
    tree = corpus_tree(tmp_path, name)
    report = build(tree.cwd, **tree.options())
    html = render(report)
    Structure(html).check()
    assert len(html.encode("utf-8")) < 300_000
    assert any(a.run.loaded for a in report.agents)
