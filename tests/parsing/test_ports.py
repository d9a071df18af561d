"""The ports of JavaScript packages live in their own subpackages, each naming the upstream
version it follows and how to re-sync it (issue 23, item 5).

`parsing/marked/` ports `marked`'s lexer and `parsing/ignore/` the npm `ignore` package's
pattern translation. The version a port names is the one its reference data was made with
(the reference scripts in `tests/tools/` and docs/markdown.md say the same), and its
docstring gives the steps to re-sync; that the ports import nothing else of ctxasm is an
import contract (`lint-imports`).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from assembler.parsing import ignore, marked

ROOT = Path(__file__).resolve().parents[2]


def _named_version(doc: str | None, package: str) -> str:
    found: list[str] = re.findall(rf"`{package}` (\d+\.\d+\.\d+)", doc or "")
    assert found, f"the {package} port names no upstream version"
    assert len(set(found)) == 1, f"the {package} port names several versions: {found}"
    return found[0]


@pytest.mark.parametrize(
    ("port", "package", "reference", "data", "check"),
    [
        (
            marked,
            "marked",
            "tests/tools/markdown_corpus.py",
            "tests/data/markdown-corpus.jsonl",
            "tests/parsing/test_markdown_corpus.py",
        ),
        (
            ignore,
            "ignore",
            "tests/tools/ignore_reference.js",
            "tests/data/globs-ignore.jsonl",
            "tests/parsing/test_globs_ignore.py",
        ),
    ],
)
def test_a_port_names_its_upstream_and_how_to_resync(
    port: object, package: str, reference: str, data: str, check: str
) -> None:
    doc = getattr(port, "__doc__", None) or ""
    version = _named_version(doc, package)
    assert "Re-syncing" in doc
    for path in (reference, data, check):
        assert path in doc, f"the {package} port's re-sync steps do not name {path}"
        assert (ROOT / path).is_file(), path
    script = (ROOT / reference).read_text(encoding="utf-8")
    assert f"{package}@{version}" in script, f"{reference} does not install {package}@{version}"
    markdown_doc = (ROOT / "docs" / "markdown.md").read_text(encoding="utf-8")
    assert f"{package}@{version}" in markdown_doc


@pytest.mark.parametrize(
    "old", ["blocks", "inline", "jsre", "ignore_js"], ids=lambda name: f"parsing.{name}"
)
def test_the_port_modules_are_only_in_their_subpackages(old: str) -> None:
    assert importlib.util.find_spec(f"assembler.parsing.{old}") is None
