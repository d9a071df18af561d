"""Writing a hostile `Plan` (tests/helpers/hostile.py) to disk.

`build` makes a fresh directory: the project, a real git repository (`git init`, every file
staged so lint's git checks see it; or, as a plan asks, a submodule of a repository in the
directory above, a directory below a `.git` file, no git), beside a fake home, a managed
directory and a directory of planted secrets. The secrets (`planted-outside/secret.md`,
`~/.ssh/id_rsa`, `~/secret.md`, another project's auto memory, and a variable in the CLI's
environment) each hold a unique random marker that must never reach stdout without a
warning.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.hostile import (
    OTHER_MEMORY,
    OUTSIDE,
    SNAPSHOT,
    Config,
    Git,
    Json,
    Link,
    Node,
    Plan,
    Raw,
    Special,
    Text,
    Where,
    written_after_git_add,
)

# --- building a plan on disk ----------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """A built plan: where everything is, and the markers that must not leak."""

    root: Path
    project: Path
    home: Path
    managed: Path
    outside: Path
    markers: Mapping[str, str]  # "outside", "home", "env" -> the planted marker
    touch: str  # project-relative
    lint_files: tuple[str, ...]  # project-relative, for the pre-commit mode
    snapshot: Path | None
    outside_links: tuple[str, ...]  # project-relative links that lead out of the project


def _merge(a: Mapping[str, object], b: Mapping[str, object]) -> dict[str, object]:
    out = dict(a)
    for key, value in b.items():
        old = out.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            out[key] = _merge(old, value)
        else:
            out[key] = value
    return out


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(value)


def toml_text(table: Mapping[str, object], prefix: tuple[str, ...] = ()) -> str:
    keys = [f"{k} = {_toml_value(v)}\n" for k, v in table.items() if not isinstance(v, Mapping)]
    out = ("[" + ".".join(prefix) + "]\n" if prefix else "") + "".join(keys)
    for k, v in table.items():
        if isinstance(v, Mapping):
            out += toml_text(v, (*prefix, k))
    return out


def _socket(path: Path) -> None:
    """A unix socket at `path` (bound in a short directory: the name limit is 108 bytes)."""
    short = tempfile.mkdtemp(prefix="s", dir="/tmp")
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(os.path.join(short, "s"))
        os.rename(os.path.join(short, "s"), path)
    except OSError:  # another filesystem: a FIFO is special enough
        os.mkfifo(path)
    finally:
        if os.path.lexists(os.path.join(short, "s")):
            os.unlink(os.path.join(short, "s"))
        os.rmdir(short)


def _secrets(layout: Layout) -> None:
    o, h = layout.markers["outside"], layout.markers["home"]
    files = {
        layout.outside / "secret.md": f"{o}\nOutside secret {o}\n",
        layout.outside / "CLAUDE.md": f"{o}\nOutside instructions {o}\n",
        layout.outside / "SKILL.md": f"---\nname: planted\ndescription: {o}\n---\n{o}\n",
        layout.outside / "policy.toml": toml_text(
            {
                "client": "bootstrap",
                "workspace": {
                    "files": [
                        {"path": str(layout.outside / "secret.md"), "tag": "soul", "layer": "base"}
                    ]
                },
            }
        ),
        layout.home
        / ".ssh"
        / "id_rsa": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{h}\n-----END OPENSSH PRIVATE KEY-----\n",
        layout.home / "secret.md": f"{h}\nHome secret {h}\n",
        layout.home / OTHER_MEMORY / "MEMORY.md": f"- {h} another project's memory {h}\n",
        layout.outside / "MEMORY.md": f"- {o} memory outside {o}\n",
        layout.home / ".claude" / "CLAUDE.md": "User notes.\n",
        layout.project / "CLAUDE.md": "Project notes.\n",
        layout.project / ".claude" / "rules" / "style.md": "Use tabs.\n",
        layout.project / "src" / "app.ts": "export {};\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    layout.managed.mkdir()


def mkdirs(path: Path) -> None:
    """`mkdir -p` without recursion (`Path.mkdir(parents=True)` recurses once per level)."""
    missing = []
    while not os.path.lexists(path) and path != path.parent:
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        os.mkdir(directory)


def remove(root: Path) -> None:
    """`rm -rf` (`shutil.rmtree` recurses once per level: deep trees exceed the limit)."""
    subprocess.run(["rm", "-rf", "--", str(root)], check=False, timeout=120)


def _inside(path: Path, base: Path) -> bool:
    """Whether `path` really is under `base` (never write through a link another part made)."""
    real, top = os.path.realpath(path), os.path.realpath(base)
    return real == top or real.startswith(top + os.sep)


def _write(path: Path, node: Node, base: Path, layout: Layout) -> None:
    if not _inside(path.parent, base):
        return
    mkdirs(path.parent)
    if os.path.isdir(path) and not os.path.islink(path):
        if not isinstance(node, (Link, Special)):
            return  # a directory already holds other parts' files: keep them
        remove(path)
    elif os.path.lexists(path):
        os.unlink(path)
    if isinstance(node, Text):
        path.write_bytes(node.text.encode("utf-8", "surrogateescape"))
    elif isinstance(node, Raw):
        path.write_bytes(node.data)
    elif isinstance(node, Special):
        if node.kind == "fifo":
            os.mkfifo(path)
        else:
            _socket(path)
    elif isinstance(node, Link):
        os.symlink(_fill(node.target, layout), path)
    elif isinstance(node, Json):
        path.write_text(json.dumps(_filled(node.value, layout)))
    elif isinstance(node, Config):
        pyproject = path.name == "pyproject.toml"
        text = (
            toml_text({"tool": {"ctxasm": dict(node.table)}})
            if pyproject
            else toml_text(node.table)
        )
        path.write_bytes(_fill(text, layout).encode("utf-8", "surrogateescape"))


def _fill(text: str, layout: Layout) -> str:
    for name, value in (
        ("outside", layout.outside),
        ("home", layout.home),
        ("project", layout.project),
    ):
        text = text.replace("{" + name + "}", str(value))
    return text


def _filled(value: object, layout: Layout) -> object:
    """`value` with `_fill` applied to every string in it."""
    if isinstance(value, str):
        return _fill(value, layout)
    if isinstance(value, list):
        return [_filled(v, layout) for v in value]
    if isinstance(value, Mapping):
        return {k: _filled(v, layout) for k, v in value.items()}
    return value


def _git(layout: Layout, shape: str) -> None:
    """The project's git (`hostile.Git`): a repository, a submodule of a repository in the
    directory above it, a directory below a `.git` file, or no git at all."""
    env = {"PATH": os.environ.get("PATH", "")}

    def init(*args: str) -> None:
        subprocess.run(
            ["git", "init", "-q", *args], check=True, capture_output=True, timeout=30, env=env
        )

    if shape == "submodule":
        init(str(layout.root))
        mkdirs(layout.root / ".git" / "modules")
        init(
            "--separate-git-dir",
            str(layout.root / ".git" / "modules" / "project"),
            str(layout.project),
        )
    elif shape == "git file":
        init("--separate-git-dir", str(layout.root / "project.git"), str(layout.project))
    else:
        init(str(layout.project))
        if shape == "none":
            remove(layout.project / ".git")


def _combined(plan: Plan) -> dict[tuple[Where, str], Node]:
    nodes: dict[tuple[Where, str], Node] = {}
    for p in plan.parts:
        for where, rel, node in p.files:
            old = nodes.get((where, rel))
            if isinstance(old, Text) and isinstance(node, Text):
                node = Text(old.text + node.text)
            elif isinstance(old, Raw) and isinstance(node, Text):
                node = Raw(old.data + node.text.encode("utf-8", "surrogateescape"))
            elif isinstance(old, Config) and isinstance(node, Config):
                node = Config(_merge(old.table, node.table))
            nodes[(where, rel)] = node
    return nodes


def _leaves_project(node: Node) -> bool:
    return isinstance(node, Link) and (
        node.target.startswith(("/", "{outside}", "{home}")) or node.target == ".."
    )


def build(root: Path, plan: Plan) -> Layout:
    """Write `plan` under `root` (created): the project, a fake home, a managed directory and
    the planted secrets, with fresh random markers."""
    touch = next((p.touch for p in reversed(plan.parts) if p.touch), "src/app.ts")
    nodes = _combined(plan)
    layout = Layout(
        root=root,
        project=root / plan.name,
        home=root / "home",
        managed=root / "managed",
        outside=root / OUTSIDE,
        markers={k: f"{k}{secrets.token_hex(12)}" for k in ("outside", "home", "env")},
        touch=touch,
        lint_files=tuple(
            dict.fromkeys(
                ["CLAUDE.md", *(rel for (w, rel), _ in nodes.items() if w == "project")][:6]
            )
        ),
        snapshot=root / plan.name / SNAPSHOT if ("project", SNAPSHOT) in nodes else None,
        outside_links=tuple(
            rel for (w, rel), n in nodes.items() if w == "project" and _leaves_project(n)
        ),
    )
    gits = [node.shape for node in nodes.values() if isinstance(node, Git)]
    _git(layout, gits[-1] if gits else "repository")
    _secrets(layout)
    bases = {
        "project": layout.project,
        "home": layout.home,
        "managed": layout.managed,
        "above": layout.root,
    }
    # Files first, then links and special files: a part's link may replace a directory path
    # another part fills, and a link written first would send those files through it.
    files = [(at, node) for at, node in nodes.items() if not isinstance(node, Git)]
    ordered = sorted(files, key=lambda kv: isinstance(kv[1], (Link, Special)))
    late = [(key, node) for key, node in ordered if written_after_git_add(*key, node)]
    for (where, rel), node in ordered:
        if ((where, rel), node) not in late:
            _write(bases[where] / rel, node, bases[where], layout)
    touched = layout.project / touch
    if not os.path.lexists(touched) and _inside(touched.parent, layout.project):
        try:
            mkdirs(touched.parent)
            touched.write_text("")
        except OSError:  # under a link or a special file: touched as it is
            pass
    subprocess.run(
        ["git", "add", "-A", "--ignore-errors", "."],
        cwd=layout.project,
        capture_output=True,
        timeout=60,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(layout.home)},
    )
    for (where, rel), node in late:
        _write(bases[where] / rel, node, bases[where], layout)
    return layout
