"""Building on-disk instruction trees for tests, and reading assemblies back compactly."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assembler import Assembly, assemble


@dataclass(frozen=True)
class Link:
    """A symlink to `target` (as written: relative or absolute)."""

    target: str


def build(root: Path, files: Mapping[str, str | Link | None]) -> Path:
    """Create `files` under `root`: text, a `Link`, or None for an empty directory."""
    for rel, value in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if value is None:
            path.mkdir(parents=True, exist_ok=True)
        elif isinstance(value, Link):
            os.symlink(value.target, path)
        else:
            path.write_text(value, encoding="utf-8")
    return root


def git_init(directory: Path) -> Path:
    """A fresh git repository at `directory` (created), isolated from the user's git config."""
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["git", "init", "-q", str(directory)],
        check=True,
        capture_output=True,
        timeout=30,
        env={"PATH": os.environ.get("PATH", "")},
    )
    return directory


def tracked_index(repo_dir: Path, count: int) -> None:
    """`count` tracked `CLAUDE.md` files in git's index only (none on disk), in seconds."""
    git_init(repo_dir)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(repo_dir.parent)}
    blob = subprocess.run(
        ["git", "-C", str(repo_dir), "hash-object", "-w", "--stdin"],
        input=b"Use tabs.\n", capture_output=True, check=True, env=env,
    ).stdout.decode().strip()  # fmt: skip
    entries = "".join(f"100644 {blob}\tp{i:07}/CLAUDE.md\n" for i in range(count))
    subprocess.run(
        ["git", "-C", str(repo_dir), "update-index", "--index-info"],
        input=entries.encode(), check=True, env=env, timeout=600,
    )  # fmt: skip


def machine(tmp: Path) -> dict[str, Any]:
    """A hermetic machine inside `tmp`: the `home`, `managed_dir` and `environ` options."""
    return {"home": tmp / "home", "managed_dir": tmp / "managed", "environ": {}}


def run(tmp: Path, cwd: str | Path, **kwargs: object) -> Assembly:
    """Assemble hermetically: home, managed dir and environment all inside `tmp`."""
    kwargs.setdefault("home", tmp / "home")
    kwargs.setdefault("managed_dir", tmp / "managed")
    kwargs.setdefault("environ", {})
    target = cwd if isinstance(cwd, Path) and cwd.is_absolute() else tmp / cwd
    return assemble(target, **kwargs)  # type: ignore[arg-type]


def listing(assembly: Assembly) -> list[tuple[str, str, str]]:
    """(layer, display path, reason) of every source that made it in, in load order."""
    return [(s.layer.value, s.display, s.reason.text) for s in assembly.sources if not s.dropped]


def codes(assembly: Assembly) -> list[str]:
    return [d.code for d in assembly.diagnostics]


ROOT = Path(__file__).resolve().parent.parent.parent  # the checkout
FIXTURES = ROOT / "fixtures"
DATA = ROOT / "tests" / "data"


CORPUS = Path(os.environ.get("CTXASM_CORPUS") or ROOT.parent / "shared" / "corpus")
CORPUS_TREES = (
    sorted(p.name for p in CORPUS.iterdir() if (p / "tree").is_dir()) if CORPUS.is_dir() else []
)


@dataclass(frozen=True)
class Tree:
    """Where an agent starts, with the machine the run uses and the paths it touches."""

    cwd: Path
    home: Path
    managed: Path
    touched: tuple[Path, ...] = ()
    environ: Mapping[str, str] = field(default_factory=dict)

    def options(self) -> dict[str, Any]:
        """The library's options for a run in `cwd`."""
        return {
            "home": self.home,
            "managed_dir": self.managed,
            "environ": dict(self.environ),
            "touched": self.touched,
        }

    def args(self) -> list[str]:
        """`cwd` and the same options on a command line (the environment is the caller's)."""
        touched = [arg for t in self.touched for arg in ("--touch", str(t))]
        machine = ["--home", str(self.home), "--managed-dir", str(self.managed)]
        return [str(self.cwd), *machine, *touched]


def demo_tree(tmp: Path) -> Tree:
    """The `make demo` tree copied under `tmp` (its repository its own git root), started in
    services/api with the demo's lazily loaded handler file touched."""
    import shutil

    shutil.copytree(FIXTURES / "demo", tmp / "demo", symlinks=True)
    git_init(tmp / "demo" / "repo")
    api = tmp / "demo" / "repo" / "services" / "api"
    return Tree(
        api,
        tmp / "demo" / "home",
        tmp / "demo" / "managed",
        (api / "src" / "handlers" / "users.ts",),
        {"CLAUDE_CODE_PROJECT_DIR_NAME": "demo-repo"},
    )


def demo_assembly(tmp: Path, client_version: str | None = None) -> Assembly:
    """`demo_tree`, assembled (at `client_version`, default the newest)."""
    tree = demo_tree(tmp)
    return assemble(tree.cwd, **tree.options(), client_version=client_version)


def corpus_tree(tmp: Path, name: str) -> Tree:
    """The corpus repository `name` laid out under `tmp` (never copied into the project),
    started at its root with its sample files (created) touched."""
    from benchmarks.corpus import lay_out, pick_touches

    laid = lay_out(CORPUS / name, tmp / name)
    touched = []
    for rel in pick_touches(CORPUS / name):
        (laid.repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (laid.repo / rel).touch()
        touched.append(laid.repo / rel)
    return Tree(laid.repo, laid.home, laid.managed, tuple(touched))


def bootstrap_assembly(tmp: Path) -> Assembly:
    """The seed workspace copied under `tmp`, with the bootstrap policy."""
    import shutil

    shutil.copytree(FIXTURES / "bootstrap", tmp / "workspace")
    return assemble(
        tmp / "workspace", policy="bootstrap", home=tmp / "h", managed_dir=tmp / "m", environ={}
    )


def client_fixture(tmp: Path, name: str) -> Path:
    """`fixtures/<name>` copied under `tmp`, its `repo` made a git repository; the copy."""
    import shutil

    shutil.copytree(FIXTURES / name, tmp / name, symlinks=True)
    git_init(tmp / name / "repo")
    return tmp / name


def codex_assembly(tmp: Path) -> Assembly:
    """The Codex CLI fixture: CODEX_HOME with a config naming a fallback, started in
    `repo/services/api`."""
    top = client_fixture(tmp, "codex")
    return assemble(
        top / "repo" / "services" / "api",
        policy="codex",
        home=top / "home",
        managed_dir=tmp / "managed",
        environ={},
    )


def gemini_assembly(tmp: Path) -> Assembly:
    """The Gemini CLI fixture: a global GEMINI.md, started in `repo/app`."""
    top = client_fixture(tmp, "gemini")
    return assemble(
        top / "repo" / "app", policy="gemini", home=top / "home", managed_dir=tmp / "m", environ={}
    )


def bytes_read() -> int:
    """What this process has read so far (`rchar` of /proc/self/io: every `read` call)."""
    with open("/proc/self/io") as io:
        return int(next(line for line in io if line.startswith("rchar:")).split()[1])


# A PATH's relative entries, as a user's may hold them: the empty one (the leading `:`), `.`
# and `node_modules/.bin`. Each names a directory of whatever directory a process runs in.
RELATIVE_PATH = ":.:node_modules/.bin"


def plant_programs(repo: Path, marker: Path, names: tuple[str, ...] = ("claude",)) -> None:
    """A repository's own `./<name>` and `./node_modules/.bin/<name>`: real executables that
    append their path to `marker` (outside the repository) and print a release number."""
    for directory in (repo, repo / "node_modules" / ".bin"):
        directory.mkdir(parents=True, exist_ok=True)
        for name in names:
            script = directory / name
            script.write_text(f'#!/bin/sh\necho "$0" >> "{marker}"\necho 2.1.197\n')
            script.chmod(0o755)
