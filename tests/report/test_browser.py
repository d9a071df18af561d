"""The report's page in a real browser (headless Chromium): it loads with no console error and
no request, shows every section at 1280 px and on a 390 px phone, in light and dark, prints,
and a script planted in the repository never runs. Screenshots are compared by structure
(what is shown, and how many), never by pixels.

They skip, saying why, where Chromium or Playwright is missing; CI installs both (.ci/run).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from assembler.report.build import build
from assembler.report.page import render
from tests.helpers.browser import STRUCTURE, chromium, missing, open_page
from tests.helpers.report_pages import hostile
from tests.helpers.trees import CORPUS_TREES, Tree, corpus_tree, demo_tree

# In CI (.ci/run installs Chromium) they never skip: a missing browser fails them.
_SKIP = missing() is not None and os.environ.get("CI") != "true"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(_SKIP, reason=str(missing()))]

SECTIONS = {"top", "summary", "agents", "tokens", "why-not", "lint", "lazy", "cache", "files"}
WIDTHS = (1280, 390)


@pytest.fixture(scope="module")
def browser() -> Any:
    with chromium() as b:
        yield b


def _page(tree: Tree, into: Path) -> Path:
    out = into / "page.html"
    out.write_text(render(build(tree.cwd, **tree.options())), encoding="utf-8")
    return out


def _read_well(browser: Any, page: Path, tmp_path: Path) -> dict[str, Any]:
    """Load the page at each width, in both colour schemes: no error, no request, every
    section shown, the same structure; a screenshot of each."""
    seen: dict[int, Any] = {}
    for width in WIDTHS:
        for scheme in ("light", "dark"):
            loaded = open_page(browser, page, width, scheme)
            assert loaded.errors == [] and loaded.dialogs == []
            assert [c for c in loaded.console if c[0] in ("error", "warning")] == []
            assert loaded.requests == [page.as_uri()]  # the page itself, nothing else
            structure = loaded.page.evaluate(STRUCTURE)
            assert {k for k, shown in structure["sections"].items() if shown} == SECTIONS
            assert not structure["overflow"], f"wider than {width} px"
            shot = tmp_path / f"{width}-{scheme}.png"
            loaded.page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000
            if scheme == "light":
                seen[width] = structure
            loaded.page.context.close()
    assert seen[1280] == seen[390]
    return seen[1280]  # type: ignore[no-any-return]


def test_the_demo_page_reads_well(browser: Any, tmp_path: Path) -> None:
    tree = demo_tree(tmp_path)
    structure = _read_well(browser, _page(tree, tmp_path), tmp_path)
    assert structure["agentCards"] == 5 and structure["fileRows"] == 12
    assert structure["bars"] == 1 and structure["segments"] == 12
    assert structure["findings"] == 1 and structure["files"] == 12


@pytest.mark.skipif(not CORPUS_TREES, reason="the shared corpus is not here")
def test_a_corpus_page_reads_well(browser: Any, tmp_path: Path) -> None:
    name = "triggerdotdev__trigger.dev"
    tree = corpus_tree(tmp_path, name if name in CORPUS_TREES else CORPUS_TREES[0])
    structure = _read_well(browser, _page(tree, tmp_path), tmp_path)
    assert structure["fileRows"] > 1 and structure["bars"] >= 1 and structure["segments"] > 1


def test_light_dark_and_print(browser: Any, tmp_path: Path) -> None:
    page = _page(demo_tree(tmp_path), tmp_path)
    colours = {}
    for scheme in ("light", "dark"):
        loaded = open_page(browser, page, 1280, scheme)
        colours[scheme] = loaded.page.evaluate("getComputedStyle(document.body).backgroundColor")
        if scheme == "light":
            loaded.page.emulate_media(media="print")
            nav = loaded.page.evaluate("getComputedStyle(document.querySelector('nav')).display")
            assert nav == "none"
            assert loaded.page.pdf()[:5] == b"%PDF-"
        loaded.page.context.close()
    assert colours["light"] != colours["dark"]


def test_a_planted_script_never_runs(browser: Any, tmp_path: Path) -> None:
    """Even with the page's Content Security Policy taken out: the planted `<script>`, the
    `</textarea>` before another, the `<img onerror>` are text, so nothing runs."""
    html = render(build(**_args(hostile(tmp_path))))
    bare = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    assert bare != html
    for text, name in ((html, "page.html"), (bare, "no-csp.html")):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        loaded = open_page(browser, path, 1280)
        page = loaded.page
        assert loaded.errors == [] and loaded.dialogs == [] and loaded.console == []
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.title().startswith("ctxasm report: ")
        assert page.evaluate("document.querySelectorAll('script, img, iframe').length") == 0
        assert "<script>document.title='pwned'" in page.inner_text("#files")
        assert loaded.requests == [path.as_uri()]
        page.context.close()


def _args(tree: Tree) -> dict[str, Any]:
    return {"cwd": tree.cwd, **tree.options()}
