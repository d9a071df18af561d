"""`ctxasm render` output, captured once and compared after every change to the package.

Every case renders one tree (a fixture, or a repository of the shared corpus laid out in a
temporary directory) in every format through the real CLI. What is compared is the SHA-256 of
stdout and of stderr, after one normalisation that applies equally to both sides:

* the trees are laid out in one fixed directory on tmpfs, `WORK`, each made in name order, so
  the listing order is the same everywhere and absolute paths (and the hashes
  of text holding them, such as `prompt_cache_key`) are the same in every run;
* diagnostic codes are masked (`[code]` at the end of a stderr or markdown diagnostic line,
  the `"code"` of a json diagnostic): the codes are allowed to change, nothing else is;
Every other byte counts.

The corpus is not copied into the project: only digests are stored. Write them with

    .venv/bin/python -m tests.helpers.render_identity > tests/data/render-identity.json
    .venv/bin/python -m tests.helpers.render_identity 2.1.197 > tests/data/render-identity-2.1.197.json

before a change (the second: every render at Claude Code 2.1.197, the release modelled before
2.1.332); `tests/output/test_render_identity.py` recomputes them after it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.corpus import copy_sorted

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = Path(os.environ.get("CTXASM_CORPUS") or ROOT.parent / "shared" / "corpus")
DATA = ROOT / "tests" / "data" / "render-identity.json"
OLD_RELEASE = "2.1.197"
OLD_DATA = ROOT / "tests" / "data" / f"render-identity-{OLD_RELEASE}.json"
# tmpfs lists a directory's entries in the order they were made, and every tree is made in
# name order (`copy_sorted`): the listing, which decides the order rules load in, is the same
# on every Linux machine, and the digests hold wherever they were taken.
WORK = Path("/dev/shm/ctxasm-render-identity")
DATE = "2026-11-30"
FORMATS: tuple[tuple[str, ...], ...] = (
    ("--format", "xml"),
    ("--format", "markdown"),
    ("--format", "json"),
    ("--format", "claude-code"),
    ("--format", "anthropic"),
    ("--format", "openai"),
    ("--format", "openai", "--api", "chat"),
)
_LINE_CODE = re.compile(r" \[[^\]\n]*\]$", re.MULTILINE)
_JSON_CODE = re.compile(r'"code": "[^"]*"')


@dataclass(frozen=True)
class Case:
    """One `ctxasm render` call: which tree, where the agent starts, what it touches."""

    name: str
    cwd: str  # relative to the laid-out tree
    args: tuple[str, ...]  # home, managed dir, policy, touches (relative paths)
    env: tuple[tuple[str, str], ...] = ()


def _git_init(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True)


def fixture_cases(into: Path) -> Iterator[tuple[Case, Path]]:
    """The fixtures laid out under `into` and the cases that render them."""
    copy_sorted(FIXTURES / "demo", into / "demo")
    _git_init(into / "demo" / "repo")
    copy_sorted(FIXTURES / "bootstrap", into / "workspace")
    shutil.copy(FIXTURES / "bootstrap-seed.toml", into / "bootstrap-seed.toml")
    demo = ("--home", "demo/home", "--managed-dir", "demo/managed")
    env = (("CLAUDE_CODE_PROJECT_DIR_NAME", "demo-repo"),)
    touch = ("--touch", "demo/repo/services/api/src/handlers/users.ts")
    yield Case("demo/api+touch", "demo/repo/services/api", (*demo, *touch), env), into
    yield Case("demo/api", "demo/repo/services/api", demo, env), into
    yield Case("demo/root", "demo/repo", demo, env), into
    yield (
        Case("demo/root+touch", "demo/repo", (*demo, "--touch", "demo/repo/web/src/App.tsx"), env),
        into,
    )
    (into / "h").mkdir()
    plain = ("--home", "h", "--managed-dir", "m")
    yield Case("bootstrap", "workspace", (*plain, "--policy", "bootstrap")), into
    seed = (*plain, "--policy", "bootstrap-seed.toml")
    yield Case("bootstrap-seed", "workspace", seed), into


def corpus_cases(into: Path) -> Iterator[tuple[Case, Path]]:
    """Each corpus repository laid out under `into`: root, deepest and root with touches."""
    from benchmarks.corpus import deepest_instruction_dir, lay_out, pick_touches

    for source in sorted(p for p in CORPUS.iterdir() if (p / "tree").is_dir()):
        base = into / source.name
        laid = lay_out(source, base)
        deep, _ = deepest_instruction_dir(laid.repo)
        (base / "home").mkdir(exist_ok=True)
        plain = ("--home", "home", "--managed-dir", "managed")
        name = source.name
        yield Case(f"{name}/root", "repo", plain), base
        yield Case(f"{name}/deepest", deep.relative_to(base).as_posix(), plain), base
        touches: list[str] = []
        for rel in pick_touches(source):
            target = laid.repo / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.touch()
            touches += ["--touch", f"repo/{rel}"]
        yield Case(f"{name}/root+touch", "repo", (*plain, *touches)), base


def normalise(text: str, *, fmt: str) -> str:
    if fmt == "json":
        text = _JSON_CODE.sub('"code": "*"', text)
    elif fmt == "markdown":
        head, mark, tail = text.rpartition("\n## Diagnostics\n")
        if mark:
            text = head + mark + _LINE_CODE.sub(" [*]", tail)
    return text


def render(
    case: Case, base: Path, fmt: tuple[str, ...], version: tuple[str, ...] = ()
) -> tuple[int, str, str]:
    """Exit code and normalised stdout and stderr of one render, run in this process as the
    console script runs it (`tests.helpers.cli`), in `base`, with the `CLAUDE_` and `CTXASM_`
    variables of this environment unset; `version`: its `--client-version` option, if any."""
    from tests.helpers.cli import ctxasm

    env: dict[str, str | None] = {
        k: None for k in os.environ if k.startswith(("CLAUDE_", "CTXASM_"))
    }
    env.update(case.env)
    args = [*case.args, *fmt, "--date", DATE, *version]
    here = os.getcwd()
    os.chdir(base)
    try:
        done = ctxasm(["render", case.cwd, *args], env=env)  # type: ignore[arg-type]
    finally:
        os.chdir(here)
    out = normalise(done.stdout, fmt=fmt[1])
    err = _LINE_CODE.sub(" [*]", done.stderr)
    return done.exit_code, out, err


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def listing_order(into: Path) -> str:
    """The order this filesystem lists a directory in. Claude Code reads rules directories in
    raw order (so does ctxasm), and ext4 lists by a hash seeded per filesystem: digests taken
    on one filesystem hold on another only if it lists in the same order."""
    probe = into / "listing-order"
    probe.mkdir()
    for i in range(16):
        (probe / f"{chr(97 + i)}.md").touch()
    with os.scandir(probe) as it:
        order = "".join(entry.name[0] for entry in it)
    shutil.rmtree(probe)
    return order


def capture(*, corpus: bool, client_version: str | None = None) -> dict[str, object]:
    """The listing order, and every case's exit code and digests:
    `{"listing order": "...", "cases": {case name: {format: [code, out, err]}}}`; with
    `client_version`, the Claude Code cases render at that release (the others as they are)."""
    cases: dict[str, dict[str, list[object]]] = {}
    # One capture at a time on this machine: every checkout lays its trees out in `WORK`.
    lock = os.open(f"{WORK}.lock", os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    if WORK.exists():
        shutil.rmtree(WORK)  # left by an interrupted run
    WORK.mkdir(mode=0o700)
    try:
        order = listing_order(WORK)
        laid = list(fixture_cases(WORK))
        if corpus:
            laid += corpus_cases(WORK)
        for case, base in laid:
            version = _version_option(case, client_version)
            cases[case.name] = {
                " ".join(fmt[1:]): [code, digest(o), digest(e)]
                for fmt in FORMATS
                for code, o, e in [render(case, base, fmt, version)]
            }
    finally:
        shutil.rmtree(WORK)
        os.close(lock)  # releases the lock
    return {"listing order": order, "cases": cases}


def _version_option(case: Case, client_version: str | None) -> tuple[str, ...]:
    """`--client-version` for a case of the default policy (the others model no release)."""
    if client_version is None or "--policy" in case.args:
        return ()
    return ("--client-version", client_version)


def main() -> None:
    version = sys.argv[1] if len(sys.argv) > 1 else None
    print(
        json.dumps(
            capture(corpus=CORPUS.is_dir(), client_version=version), indent=1, sort_keys=True
        )
    )


if __name__ == "__main__":
    main()
