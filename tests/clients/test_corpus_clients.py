"""The `codex` and `gemini` clients on every tree of the shared corpus: no crash, and the
files each reports are files that exist, on the way from the git root to cwd, in order."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from assembler import assemble
from benchmarks.corpus import lay_out
from benchmarks.harness import CORPUS

TREES = sorted(p.name for p in CORPUS.iterdir() if (p / "tree").is_dir()) if CORPUS.is_dir() else []
MAX_DIRS = 25  # start directories tried per tree


def _start_dirs(repo: Path) -> list[Path]:
    """The root and every directory holding an AGENTS.md or GEMINI.md (the deepest first)."""
    found = {repo}
    for directory, subdirs, names in os.walk(repo):
        subdirs[:] = [d for d in subdirs if d != ".git"]
        if {"AGENTS.md", "GEMINI.md", "AGENTS.override.md"} & set(names):
            found.add(Path(directory))
    return sorted(found, key=lambda p: (-len(p.parts), str(p)))[:MAX_DIRS]


def _expected_codex(repo: Path, cwd: Path) -> list[str]:
    """An independent reading of the rule: per directory root to cwd, the first that exists."""
    chain = [cwd, *cwd.parents]
    chain = chain[: chain.index(repo) + 1][::-1]
    out = []
    for directory in chain:
        for name in ("AGENTS.override.md", "AGENTS.md"):
            path = directory / name
            if path.is_file() and path.read_bytes().strip():
                out.append(str(path))
                break
    return out


@pytest.mark.slow
@pytest.mark.skipif(not TREES, reason="the shared corpus is not here")
@pytest.mark.parametrize("name", TREES)
def test_codex_and_gemini_on_the_corpus(name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        laid = lay_out(CORPUS / name, Path(tmp))
        repo = Path(os.path.realpath(laid.repo))
        machine: dict[str, Any] = {"home": laid.home, "managed_dir": laid.managed, "environ": {}}
        for cwd in _start_dirs(repo):
            codex = assemble(cwd, policy="codex", **machine)
            paths = [s.path for s in codex.sources]
            assert all(os.path.isfile(p) for p in paths)
            if sum(os.path.getsize(p) for p in paths) < 32 * 1024:  # no budget cut
                assert paths == _expected_codex(repo, cwd), cwd
            assert codex.render("codex").startswith("# AGENTS.md instructions for") or not paths
            gemini = assemble(cwd, policy="gemini", **machine)
            for source in gemini.sources:
                assert os.path.isfile(source.path) and source.path.endswith("/GEMINI.md")
                assert repo in Path(source.path).parents
                assert Path(source.path).parent in (cwd, *cwd.parents)
            rendered = gemini.render("gemini")
            assert rendered.count("--- Context from: ") == len(gemini.sources)
