"""`ctxasm explain --policy codex` beside the peer `agents-doctor explain`, same trees, same run.

`agents-doctor` (PyPI, satoissei/agents-doctor) reimplements Codex CLI's AGENTS.md loader.
It is never a dependency of ctxasm: install it in a throwaway environment and point
`AGENTS_DOCTOR` at its executable (else it is looked for on PATH; absent: skipped):

    python3 -m venv /tmp/adoctor-venv && /tmp/adoctor-venv/bin/pip install agents-doctor
    AGENTS_DOCTOR=/tmp/adoctor-venv/bin/agents-doctor python -m benchmarks.agents_doctor

Trees: an AGENTS.md monorepo derived from the synthetic monorepo (`benchmarks/monorepo.py`:
an AGENTS.md, with CJK text, wherever it has a CLAUDE.md, so the deep chain crosses the
32 KiB budget), and every corpus tree (`benchmarks/corpus.py`). For each start directory
(the deepest ones holding an AGENTS.md, at most `MAX_STARTS` a tree), both tools explain it
as JSON; the project docs each reports must be the same files with the same bytes loaded
(ctxasm's cut at a character boundary may keep up to 3 bytes less: `splits_character`).
Time: the median wall clock of each tool over all start directories, interleaved, as
processes (`ctxasm` and `agents-doctor` both start a Python), and the ratio ours / theirs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from .harness import CORPUS, WORK, Check, compile_package, heading, median, ms, row, venv_script

RATIO_TARGET = 1.0
MAX_STARTS = 12
CJK = "代码评审必须覆盖接口变更与错误处理。"


def peer() -> str | None:
    """The `agents-doctor` executable (`AGENTS_DOCTOR`, else on PATH), or None."""
    found = os.environ.get("AGENTS_DOCTOR") or shutil.which("agents-doctor")
    return found if found and os.access(found, os.X_OK) else None


def agents_monorepo(work: Path = WORK) -> Path:
    """The synthetic monorepo's CLAUDE.md tree as AGENTS.md files (made once, then reused)."""
    from .monorepo import generate

    mono = generate()
    root = work / "agents-monorepo"
    stamp = root / "source.txt"
    if stamp.is_file() and stamp.read_text() == str(mono.repo):
        return root / "repo"
    if root.exists():
        shutil.rmtree(root)
    repo = root / "repo"
    for claude in sorted(mono.repo.rglob("CLAUDE.md")):
        if ".claude" in claude.parts:
            continue
        target = repo / claude.parent.relative_to(mono.repo) / "AGENTS.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        body = claude.read_text(encoding="utf-8", errors="replace")
        target.write_text(body + "\n" + "\n".join([CJK] * 40) + "\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    stamp.write_text(str(mono.repo))
    return repo


def starts(repo: Path) -> list[Path]:
    """The deepest directories holding an AGENTS.md (ties by name), at most `MAX_STARTS`."""
    found = {repo}
    for directory, subdirs, names in os.walk(repo):
        subdirs[:] = [d for d in subdirs if d != ".git"]
        if "AGENTS.md" in names or "AGENTS.override.md" in names:
            found.add(Path(directory))
    return sorted(found, key=lambda p: (-len(p.parts), str(p)))[:MAX_STARTS]


def ours(cwd: Path, home: Path) -> list[str]:
    return [venv_script("ctxasm"), "explain", str(cwd), "--policy", "codex", "--json",
            "--home", str(home), "--managed-dir", str(home / "managed")]  # fmt: skip


def theirs(tool: str, cwd: Path) -> list[str]:
    return [tool, "explain", "--format", "json", str(cwd)]


def our_docs(out: str, root: Path) -> list[tuple[str, int]]:
    """(path relative to the project root, bytes loaded) of each project doc ctxasm loads."""
    data: dict[str, Any] = json.loads(out)
    docs = []
    for s in data["sources"]:
        if s["layer"] == "project" and s["status"] in ("loaded", "truncated"):
            path = Path(s["file"])
            # The cut's reason says how many bytes are past the budget ("N bytes past ...").
            past = sum(
                int(c["reason"].split(" bytes past", 1)[0].replace(",", ""))
                for c in s["cuts"]
                if c["kind"] == "codex-budget"
            )
            docs.append((path.relative_to(root).as_posix(), path.stat().st_size - past))
    return docs


def their_docs(out: str) -> list[tuple[str, int, int, bool]]:
    """(path, raw bytes, bytes loaded, whether the cut splits a character) per doc loaded."""
    data: dict[str, Any] = json.loads(out)
    return [
        (c["path"], c["raw_bytes"], c["included_bytes"], bool(c.get("splits_character")))
        for c in data["chunks"]
        if c["status"] in ("loaded", "cut_short")
    ]


def compare(
    tool: str, repo: Path, home: Path, label: str, runs: int
) -> tuple[list[float], list[float], int]:
    """Both tools on each start directory: same files, same bytes; their times."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CTXASM", "CODEX"))}
    env["CODEX_HOME"] = str(home / ".codex")  # empty: no global file, no config
    mine: list[float] = []
    peer_times: list[float] = []
    mismatches = 0
    root = Path(os.path.realpath(repo))
    for cwd in starts(root):
        cmds = [ours(cwd, home), theirs(tool, cwd)]
        outs = ["", ""]
        for i in range(runs + 1):  # the first round warms caches and is not counted
            for k in range(2):
                j = (i + k) % 2
                start = time.perf_counter()
                done = subprocess.run(
                    cmds[j], cwd=cwd, env=env, capture_output=True, text=True, check=False
                )
                elapsed = time.perf_counter() - start
                outs[j] = done.stdout
                if i:
                    (mine if j == 0 else peer_times).append(elapsed)
        a = our_docs(outs[0], root)
        b = their_docs(outs[1])
        same = [p for p, _ in a] == [p for p, *_ in b] and all(
            loaded == included or (split and 0 < included - loaded <= 3)
            for (_, loaded), (_, _, included, split) in zip(a, b, strict=False)
        )
        if not same:
            mismatches += 1
            row(f"  {label}: differs at {cwd.relative_to(root)}", f"ctxasm {a} / agents-doctor {b}")
    return mine, peer_times, mismatches


def run(runs: int = 3, corpus_names: list[str] | None = None) -> list[Check]:
    compile_package()  # bytecode written, as an installed wheel has it
    heading("codex: ctxasm explain --policy codex vs agents-doctor explain")
    tool = peer()
    if tool is None:
        row("agents-doctor", "skipped: not found (set AGENTS_DOCTOR or put it on PATH)")
        return []
    version = subprocess.run([tool, "--version"], capture_output=True, text=True, check=False)
    row("agents-doctor", (version.stdout or version.stderr).strip())
    all_mine: list[float] = []
    all_theirs: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        (home / ".codex").mkdir(parents=True)
        trees = [("monorepo", agents_monorepo())]
        if CORPUS.is_dir():
            from .corpus import lay_out

            for name in corpus_names or sorted(
                p.name for p in CORPUS.iterdir() if (p / "tree").is_dir()
            ):
                trees.append((name, lay_out(CORPUS / name, Path(tmp) / name).repo))
        for label, repo in trees:
            mine, peer_times, mismatches = compare(tool, repo, home, label, runs)
            all_mine += mine
            all_theirs += peer_times
            row(
                f"{label}: {len(starts(Path(os.path.realpath(repo))))} starts",
                f"ctxasm {ms(median(mine))}, agents-doctor {ms(median(peer_times))}, "
                f"ratio {median(mine) / median(peer_times):.2f}x, "
                f"{'same files and bytes' if not mismatches else f'{mismatches} differ'}",
            )
    ratio = median(all_mine) / median(all_theirs)
    row("all trees: ratio ctxasm / agents-doctor (medians)", f"{ratio:.2f}x")
    return [
        Check("codex explain: ctxasm / agents-doctor (medians)", round(ratio, 2), RATIO_TARGET, "x")
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.agents_doctor")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("corpus", nargs="*", help="corpus trees (default: all)")
    args = parser.parse_args(argv)
    for check in run(args.runs, args.corpus or None):
        print(check.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
