"""A stand-in for an agent's program, for `ctxasm verify`'s tests without node: it sends the
turns of a recorded reference to the base URL verify gives it, as the real program would.

`install(bin_dir, ...)` writes it as `bin_dir/<program>` with its settings beside it
(`agent.json`): the version it prints, the turns it sends, or `hang` (it never answers; it
starts a child that hangs too, and writes both process ids beside itself) or `silent` (it
sends nothing).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_SCRIPT = """#!{python}
import json, os, re, subprocess, sys, time, urllib.request
from pathlib import Path
here = Path(__file__).resolve().parent
conf = json.loads((here / "agent.json").read_text())
if sys.argv[1:] == ["--version"]:
    print(conf["version"])
    sys.exit(0)
if conf.get("hang"):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    (here / "pids").write_text(f"{{os.getpid()}} {{child.pid}}")
    time.sleep(600)
base = os.environ[conf["variable"]]
# The recorded turns name the tree they were recorded in, which holds the home they were
# recorded with; this run's home is $HOME, in the mirror verify runs it in (the same tree
# under a directory of verify's).
# Claude Code names the project's memory folder after the project's path: in the mirror too.
home = os.environ["HOME"]
mirror = home[: -len(conf["home"])] if home.endswith(conf["home"]) else ""
tree = os.path.dirname(conf["home"])
text = json.dumps(conf["turns"])
if mirror:
    slug = lambda path: re.sub("[^a-zA-Z0-9]", "-", path)
    text = text.replace(slug(tree), slug(mirror + tree))
    text = text.replace(json.dumps(tree + "/")[1:-1], json.dumps(mirror + tree + "/")[1:-1])
else:
    text = text.replace(json.dumps(conf["home"])[1:-1], json.dumps(home)[1:-1])
for turn in [] if conf.get("silent") else json.loads(text):
    body = dict(turn, model="claude-sonnet-4-5", stream=True, tools=[{{"name": "Read"}}])
    request = urllib.request.Request(
        base + "/v1/messages?beta=true", data=json.dumps(body).encode(),
        headers={{"content-type": "application/json"}},
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        if b'"tool_use"' not in reply.read():
            break
print("ok")
"""


def install(
    bin_dir: Path,
    program: str,
    version: str,
    turns: Sequence[Mapping[str, Any]] = (),
    home: Path | None = None,
    **mode: bool,
) -> Path:
    """The agent at `bin_dir/program`, printing `version` and sending `turns` (recorded with
    `home`, which it replaces by the one it runs with)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / program
    path.write_text(_SCRIPT.format(python=sys.executable), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    settings = {
        "version": version, "turns": list(turns), "home": str(home), "variable": "ANTHROPIC_BASE_URL",
        **mode,
    }  # fmt: skip
    (bin_dir / "agent.json").write_text(json.dumps(settings), encoding="utf-8")
    return path


def pids(bin_dir: Path) -> list[int]:
    """The ids of a hanging agent and its child, once it has started them."""
    text = (bin_dir / "pids").read_text(encoding="utf-8") if (bin_dir / "pids").exists() else ""
    return [int(p) for p in text.split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split(") ")[-1].startswith("Z"))


__all__ = ["alive", "install", "pids"]
