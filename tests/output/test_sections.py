"""One token count per source (`source_tokens`), and every view's totals made of it.

`explain`, `render --format json`, the markdown preview, `watch` and `cache` counted different
texts (explain each section with its separator; json and watch the whole output at once;
cache each tier's text): on the demo tree 535 / 531 / 522 tokens. Each now shows a source's
count as `source_tokens` gives it and sums those, and says the counts are estimated.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.trees import FIXTURES, build, git_init


def _ctxasm(cwd: Path, *args: str, home: Path, managed: Path) -> subprocess.CompletedProcess[str]:
    machine = ("--home", str(home), "--managed-dir", str(managed))
    return subprocess.run(
        [sys.executable, "-m", "assembler", *args, *machine],
        cwd=cwd,
        env=_environ(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _environ() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CTXASM_"))}
    return {**env, "CLAUDE_CODE_PROJECT_DIR_NAME": "demo-repo", "COLUMNS": "200"}


def _watch_first_line(cwd: Path, *args: str) -> str:
    """The line `ctxasm watch` prints when it starts; then it is stopped (SIGTERM: exit 0)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "assembler", "watch", *args],
        cwd=cwd,
        env=_environ(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        while True:
            ready, _, _ = select.select([proc.stderr], [], [], deadline - time.monotonic())
            assert ready, "watch printed nothing in time"
            line = proc.stderr.readline()
            if line.startswith("ctxasm: watching"):
                return line
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()


def _demo(tmp_path: Path) -> tuple[Path, Path, Path]:
    shutil.copytree(FIXTURES / "demo", tmp_path / "demo", symlinks=True)
    git_init(tmp_path / "demo" / "repo")
    demo = tmp_path / "demo"
    return demo / "repo" / "services" / "api", demo / "home", demo / "managed"


def test_every_view_counts_a_source_and_the_context_alike(tmp_path: Path) -> None:
    api, home, managed = _demo(tmp_path)
    machine = {"home": home, "managed": managed}
    explained = json.loads(_ctxasm(api, "explain", ".", "--json", **machine).stdout)
    rendered = json.loads(_ctxasm(api, "render", ".", "--format", "json", **machine).stdout)
    preview = _ctxasm(api, "render", ".", "--format", "markdown", **machine).stdout
    cached = json.loads(_ctxasm(api, "cache", ".", "--json", **machine).stdout)
    table = _ctxasm(api, "explain", ".", **machine).stdout
    cache_text = _ctxasm(api, "cache", ".", **machine).stdout
    watched = _watch_first_line(api, ".", "--home", str(home), "--managed-dir", str(managed))

    budget = explained["budget"]
    total, boundary = budget["total"], budget["boundary"]
    # One count per source: explain's rows, the json format's sources, the markdown entries.
    rows = {r["path"]: r["tokens"] for r in explained["sources"] if r["status"] == "loaded"}
    sources = {s["path"]: s["tokens"] for s in rendered["sources"] if not s["dropped"]}
    entries = dict(re.findall(r"^## \d+\. `(.+)` \(\w+\)\n\n\*.* · (\d+) tokens", preview, re.M))
    assert rows == sources == {path: int(n) for path, n in entries.items()}
    # Every total is their sum (and the boundary marker's, which the request does not send).
    assert boundary > 0 and total == sum(rows.values()) + boundary
    assert [layer["tokens"] for layer in budget["layers"]] == [t["tokens"] for t in cached["tiers"]]
    assert rendered["stats"]["tokens"] == total
    assert rendered["stats"]["static_tokens"] == budget["layers"][0]["tokens"]  # managed
    assert f"10 sources · {total:,} tokens (estimated)\n" in preview
    assert f"budget: {total:,} tokens (estimated), no total budget" in table
    assert f", {total:,} tokens (estimated), in " in watched
    assert cache_text.startswith(f"5 tiers, {total - boundary:,} tokens (estimated); ")
    assert (
        f"note: the boundary marker is structure here, not text: not sent, so the tiers hold "
        f"{boundary:,} tokens fewer than the context's {total:,} (explain, render)"
    ) in cache_text
    # explain's JSON schema adds no key within its version: its docs say the counts are estimated.
    assert [view["estimated"] for view in (rendered["stats"], cached)] == [True, True]


def test_one_source_is_one_source(tmp_path: Path) -> None:
    """ "1 sources" was a plural bug in the markdown preview and `watch`."""
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "Only this."})
    machine = {"home": tmp_path / "home", "managed": tmp_path / "managed"}
    preview = _ctxasm(repo, "render", ".", "--format", "markdown", **machine).stdout
    assert "\n1 source · " in preview
    line = _watch_first_line(repo, ".", "--home", str(tmp_path / "home"), "--managed-dir", "m")
    assert line.startswith("ctxasm: watching 1 source, ")
    cache_text = _ctxasm(repo, "cache", ".", **machine).stdout
    assert cache_text.startswith("1 tier, ")
