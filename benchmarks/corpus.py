"""ctxasm on eight real repositories' instruction trees (read from the shared corpus at run time).

For each `<corpus>/<name>/`: create the repository's directories (`dirs.txt`) in a temporary
directory, copy `tree/` into it (symlinks kept; a symlink the extraction stored as a one-line
stub file is restored from the list in `SOURCE.md`), `git init`, then assemble with an empty
home and managed directory at the root and at the deepest directory holding an instruction
file, and attach a few of `sample_files.txt` as touched paths. Per repository: sources loaded,
tokens, diagnostics by code, time; and whether an `Assembler`'s kept result, answered by `stat`
calls alone, is what a discovery run gives. Nothing from the corpus is copied into the project.

    python -m benchmarks.corpus [NAME...]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .harness import CORPUS, Check, heading, median, ms, report

CLAUDE_FILES = ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md")
OTHER_FILES = ("AGENTS.md", "GEMINI.md")  # used only when a repository has no CLAUDE files
_ITEM = re.compile(r"^\* `([^`]+)` — (.+)$")
_LINK = re.compile(r"^\* `([^`]+)` -> `([^`]+)`$")


@dataclass(frozen=True, slots=True)
class Laid:
    repo: Path
    home: Path
    managed: Path
    dirs: int
    files: int
    links: int
    restored: int


def _section(text: str, title: str) -> list[str]:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(f"## {title}")), None)
    if start is None:
        return []
    out = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        out.append(line)
    return out


def _safe(rel: str) -> bool:
    parts = Path(rel).parts
    return bool(rel) and not os.path.isabs(rel) and ".." not in parts


def copy_sorted(source: Path, into: Path) -> None:
    """`shutil.copytree(source, into, symlinks=True, dirs_exist_ok=True)`, each directory's
    entries made in name order: on a filesystem that lists entries in the order they were
    made (tmpfs), the copy lists the same on every machine, whatever the source's order."""
    into.mkdir(parents=True, exist_ok=True)
    for entry in sorted(os.scandir(source), key=lambda e: e.name):
        target = into / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
        elif entry.is_dir():
            copy_sorted(Path(entry.path), target)
        else:
            shutil.copy2(entry.path, target)


def lay_out(source: Path, into: Path) -> Laid:
    repo, home, managed = into / "repo", into / "home", into / "managed"
    for d in (repo, home, managed):
        d.mkdir(parents=True)
    dirs = [line.strip() for line in (source / "dirs.txt").read_text().splitlines()]
    for rel in dirs:
        if _safe(rel):
            os.makedirs(repo / rel, exist_ok=True)
    copy_sorted(source / "tree", repo)
    files = 0
    for directory, subdirs, names in os.walk(repo):  # the corpus is read-only; the copy is ours
        os.chmod(directory, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP)
        for name in names:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                os.chmod(path, stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP)
                files += 1
        subdirs[:] = [s for s in subdirs if not os.path.islink(os.path.join(directory, s))]
    links = restored = 0
    text = (source / "SOURCE.md").read_text(encoding="utf-8")
    for line in _section(text, "Symlinks"):
        match = _LINK.match(line.strip())
        if not match or not _safe(match.group(1)):
            continue
        link, target = repo / match.group(1), match.group(2)
        if link.is_symlink():
            links += 1
        elif (
            link.is_file() and link.read_text(encoding="utf-8", errors="replace").strip() == target
        ):
            link.unlink()
            link.symlink_to(target)
            links += 1
            restored += 1
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return Laid(repo, home, managed, len(dirs), files, links, restored)


def deepest_instruction_dir(repo: Path) -> tuple[Path, str]:
    """The deepest directory holding a CLAUDE file or rules (else AGENTS.md/GEMINI.md)."""
    for names, note in ((CLAUDE_FILES, ""), (OTHER_FILES, " (no CLAUDE files: AGENTS/GEMINI)")):
        holders: list[Path] = []
        for directory, subdirs, _files in os.walk(repo):
            subdirs[:] = [s for s in subdirs if s != ".git"]
            here = Path(directory)
            if any((here / n).is_file() for n in names) or (
                names is CLAUDE_FILES and (here / ".claude" / "rules").is_dir()
            ):
                holders.append(here)
        holders = [h for h in holders if h.name != ".claude"]
        if holders:
            best = max(holders, key=lambda p: (len(p.relative_to(repo).parts), str(p)))
            return best, note
    return repo, " (no instruction file)"


def pick_touches(source: Path, limit: int = 5) -> list[str]:
    """A few sample files: one per matched rule (<= 3), the two deepest nested, one unmatched."""
    text = (source / "SOURCE.md").read_text(encoding="utf-8")
    items = [m.groups() for line in _section(text, "Sample files") if (m := _ITEM.match(line))]
    chosen: list[str] = []
    rules: set[str] = set()
    for path, why in items:
        if why.startswith("matches claude paths") and why not in rules and len(rules) < 3:
            rules.add(why)
            chosen.append(path)
    nested = sorted(
        (p for p, why in items if why.startswith("below nested")),
        key=lambda p: (-p.count("/"), p),
    )
    chosen += nested[:2]
    chosen += [p for p, why in items if why == "matches no conditional rule"][:1]
    if not chosen:
        samples = (source / "sample_files.txt").read_text().splitlines()
        chosen = [s.strip() for s in samples if s.strip()][:limit]
    return [p for p in chosen if _safe(p)][: limit + 1]


def _summary(assembly: Any) -> str:
    loaded = [s for s in assembly.sources if not s.dropped]
    tokens = sum(s.stats.tokens for s in loaded)
    return f"{len(loaded)} sources, {tokens:,} tokens"


def _codes(assembly: Any) -> str:
    codes = Counter(d.code for d in assembly.diagnostics)
    return ", ".join(f"{c} {n}" for c, n in sorted(codes.items())) or "no diagnostics"


def kept_differs(cwd: Path, **kwargs: Any) -> bool:
    """Whether an `Assembler`'s kept result (answered by `stat` calls alone) differs from a
    discovery run, or is never answered so (the files were just laid out: it waits for them to
    be older than the clock granularity)."""
    from assembler import Assembler, assemble

    asm = Assembler(cwd, **kwargs)
    deadline = time.monotonic() + 5
    kept = asm.assemble()
    while asm.reuses == 0 and time.monotonic() < deadline:
        kept = asm.assemble()
    if asm.reuses == 0:
        return True
    return bool(kept.render("json") != assemble(cwd, **kwargs).render("json"))


def run_repo(source: Path, reps: int = 5) -> tuple[int, int]:
    """Lay out and assemble one repository; the number of runs that raised, and of repeated
    Assembler results that differ from a discovery run."""
    from assembler import assemble

    failures = differing = 0
    with tempfile.TemporaryDirectory(prefix="ctxasm-corpus-") as tmp:
        laid = lay_out(source, Path(tmp))
        print(
            f"  {source.name}: {laid.dirs:,} dirs, {laid.files} files in tree/, "
            f"{laid.links} symlink(s) ({laid.restored} restored from one-line stubs)"
        )

        def assembled(cwd: Path) -> tuple[Any, float]:
            times = []
            result = None
            for _ in range(reps):
                start = time.perf_counter()
                result = assemble(cwd, home=laid.home, managed_dir=laid.managed, environ={})
                _ = result.text
                times.append(time.perf_counter() - start)
            return result, median(times)

        deep, note = deepest_instruction_dir(laid.repo)
        base = None
        for label, cwd in (("root", laid.repo), ("deepest", deep)):
            where = cwd.relative_to(laid.repo).as_posix()
            try:
                assembly, seconds = assembled(cwd)
            except Exception as err:  # a benchmark reports, it does not stop at the first bug
                failures += 1
                print(f"    {label:<8} {where}: RAISED {type(err).__name__}: {err}")
                continue
            if label == "root":
                base = assembly
            shown = "." if where == "." else where + "/" + (note or "")
            print(
                f"    {label:<8} {shown}: {_summary(assembly)}, {ms(seconds)}; {_codes(assembly)}"
            )
            if kept_differs(cwd, home=laid.home, managed_dir=laid.managed, environ={}):
                differing += 1
                print(f"    {label:<8} {shown}: the Assembler's kept result DIFFERS from a run")
        if base is None:
            return failures, differing
        for rel in pick_touches(source):
            target = laid.repo / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.touch()
            try:
                start = time.perf_counter()
                after = base.touch(target)
                seconds = time.perf_counter() - start
            except Exception as err:
                failures += 1
                print(f"    touch    {rel}: RAISED {type(err).__name__}: {err}")
                continue
            added = after.attached(base)
            names = ", ".join(s.display for s in added) or "nothing"
            print(f"    touch    {rel}: +{len(added)} ({names}), {ms(seconds)}")
    return failures, differing


def run(names: Sequence[str] = ()) -> list[Check]:
    heading(f"corpus: real instruction trees from {CORPUS}")
    if not CORPUS.is_dir():
        print(f"  skipped: {CORPUS} does not exist (set CTXASM_CORPUS to point at it)")
        return []
    sources = sorted(p for p in CORPUS.iterdir() if (p / "tree").is_dir())
    if names:
        sources = [p for p in sources if p.name in names]
    failures = differing = 0
    start = time.perf_counter()
    for source in sources:
        raised, differs = run_repo(source)
        failures, differing = failures + raised, differing + differs
    print(f"  {len(sources)} repositories in {time.perf_counter() - start:.1f} s")
    return [
        Check("corpus: runs that raised", failures, 0, ""),
        Check("corpus: Assembler results (kept) that differ from a run", differing, 0, ""),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.corpus")
    parser.add_argument("names", nargs="*", help="repository directory names (default: all)")
    args = parser.parse_args(argv)
    return report(run(args.names))


if __name__ == "__main__":
    raise SystemExit(main())
