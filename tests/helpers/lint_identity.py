"""Whole-repository `ctxasm lint` findings, captured once and compared after every change
that means to make lint faster, not different.

Each case lints one tree (the demo fixture, or a repository of the shared corpus laid out in
a temporary directory) through the real CLI, `--format json`, from the repository's root. What
is compared is the exit code and the SHA-256 of stdout and of stderr; the trees are laid out in
one fixed directory, so absolute paths are the same in every run. The corpus is not copied into
the project: only digests are stored. Write them with

    .venv/bin/python -m tests.helpers.lint_identity > tests/data/lint-identity.json

and say why in the commit when a change means to alter findings.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from benchmarks.corpus import copy_sorted
from tests.helpers.render_identity import CORPUS, FIXTURES, ROOT, digest, listing_order

DATA = ROOT / "tests" / "data" / "lint-identity.json"
# tmpfs lists a directory's entries in the order they were made, and every tree is made in
# name order (`copy_sorted`): the listing, which decides the order rules load in, is the same
# on every Linux machine, and the digests hold wherever they were taken.
WORK = Path("/dev/shm/ctxasm-lint-identity")


def cases(
    into: Path, *, corpus: bool
) -> Iterator[tuple[str, Path, tuple[str, ...], dict[str, str]]]:
    """(name, repository, machine options, environment) of each tree laid out under `into`."""
    copy_sorted(FIXTURES / "demo", into / "demo")
    subprocess.run(["git", "init", "-q", str(into / "demo" / "repo")], check=True)
    subprocess.run(["git", "-C", str(into / "demo" / "repo"), "add", "-A"], check=True)
    demo = ("--home", str(into / "demo/home"), "--managed-dir", str(into / "demo/managed"))
    yield "demo", into / "demo" / "repo", demo, {"CLAUDE_CODE_PROJECT_DIR_NAME": "demo-repo"}
    if not corpus:
        return
    from benchmarks.corpus import lay_out

    for source in sorted(p for p in CORPUS.iterdir() if (p / "tree").is_dir()):
        laid = lay_out(source, into / source.name)
        machine = ("--home", str(laid.home), "--managed-dir", str(laid.managed))
        yield source.name, laid.repo, machine, {}


def lint(repo: Path, machine: tuple[str, ...], extra_env: dict[str, str]) -> list[object]:
    """Exit code and the digests of stdout and stderr of one whole-repository lint, run in
    this process as the console script runs it, in `repo`, with the `CLAUDE_` and `CTXASM_`
    variables of this environment unset."""
    from tests.helpers.cli import ctxasm

    env: dict[str, str | None] = {
        k: None for k in os.environ if k.startswith(("CLAUDE_", "CTXASM_"))
    }
    env.update(extra_env)
    here = os.getcwd()
    os.chdir(repo)
    try:
        done = ctxasm(["lint", "--format", "json", *machine], env=env)  # type: ignore[arg-type]
    finally:
        os.chdir(here)
    return [done.exit_code, digest(done.stdout), digest(done.stderr)]


def capture(*, corpus: bool) -> dict[str, object]:
    """`{"listing order": "...", "cases": {name: [code, stdout digest, stderr digest]}}`."""
    lock = os.open(f"{WORK}.lock", os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)  # one capture at a time: every checkout uses `WORK`
    if WORK.exists():
        shutil.rmtree(WORK)
    WORK.mkdir(mode=0o700)
    try:
        order = listing_order(WORK)
        found = {
            name: lint(repo, machine, env)
            for name, repo, machine, env in cases(WORK, corpus=corpus)
        }
    finally:
        shutil.rmtree(WORK)
        os.close(lock)
    return {"listing order": order, "cases": found}


def main() -> None:
    print(json.dumps(capture(corpus=CORPUS.is_dir()), indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
