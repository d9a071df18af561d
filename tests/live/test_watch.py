"""`ctxasm watch` with real watchdog events on real files: every kind of change re-renders,
and the render equals a fresh `assemble()`; waits poll the output with a deadline."""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from assembler import Assembler, DiscoveryError, assemble
from assembler.errors import AssemblerError
from assembler.live.watch import Update, Watcher, relevant
from assembler.output.write import write_file
from tests.helpers.trees import ROOT, build, git_init, machine

WAIT = 15.0  # generous: a passing test never waits this long


class Session:
    """A `Watcher` on `cwd` and every update it gave, in order."""

    def __init__(
        self, tmp_path: Path, cwd: Path, debounce: float = 0.02, out: Path | None = None
    ) -> None:
        self.tmp_path, self.cwd, self.out = tmp_path, cwd, out
        self.assembler = Assembler(cwd, **machine(tmp_path))
        self.watcher = Watcher(
            self.assembler, render=lambda a: a.render("xml"), debounce=debounce, out=out
        )
        self.updates = [self.watcher.start()]
        self._written(self.updates[0])

    def _written(self, update: Update) -> None:
        """What `ctxasm watch --out` does with an update: its render into `out`."""
        if self.out is not None and update.text is not None:
            write_file(self.out, update.text)

    def fresh(self) -> str:
        return assemble(self.cwd, **machine(self.tmp_path)).render("xml")

    def until(self, done: Callable[[Update], bool]) -> Update:
        """Poll for updates until the latest satisfies `done` (or fail at the deadline)."""
        deadline = time.monotonic() + WAIT
        while not done(self.updates[-1]):
            left = deadline - time.monotonic()
            assert left > 0, f"no such update; got {[u.line for u in self.updates]}"
            update = self.watcher.next_update(timeout=left)
            if update is not None:
                self.updates.append(update)
                self._written(update)
        return self.updates[-1]

    def rendered(self, text: str) -> Update:
        return self.until(lambda u: u.text == text)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "home/.claude/CLAUDE.md": "User.",
            "repo/CLAUDE.md": "Root. @docs/guide.md",
            "repo/docs/guide.md": "Guide.",
            "repo/.claude/rules/style.md": "Style.",
            "repo/CLAUDE.local.md": "Local.",
            "repo/notes.md": "Notes, soon local.",
            "repo/pkg/keep.txt": "",
        },
    )
    return repo


@pytest.fixture
def session(tmp_path: Path, tree: Path) -> Iterator[Session]:
    watching = Session(tmp_path, tree)
    try:
        yield watching
    finally:
        watching.watcher.close()


def atomic_save(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.swp")
    temp.write_text(text)
    os.replace(temp, path)


def rename_into_place(repo: Path) -> None:
    (repo / "CLAUDE.local.md").unlink()
    os.rename(repo / "notes.md", repo / "CLAUDE.local.md")


CHANGES: dict[str, tuple[Callable[[Path], object], str]] = {
    "edit": (lambda r: (r / "CLAUDE.md").write_text("Root, edited. @docs/guide.md"), "changed CLAUDE.md"),
    "atomic save": (lambda r: atomic_save(r / "CLAUDE.md", "Root, saved. @docs/guide.md"), "changed CLAUDE.md"),
    "delete": (lambda r: (r / "CLAUDE.local.md").unlink(), "removed CLAUDE.local.md"),
    "rename into place": (rename_into_place, "changed CLAUDE.local.md"),
    "new rules file": (lambda r: (r / ".claude/rules/new.md").write_text("New."), "added .claude/rules/new.md"),
    "new rules subdirectory": (
        lambda r: build(r, {".claude/rules/deep/deeper.md": "Deeper."}),
        "added .claude/rules/deep/deeper.md",
    ),
    "imported file": (lambda r: (r / "docs/guide.md").write_text("Guide, v2."), "changed docs/guide.md"),
    "directory removed": (lambda r: shutil.rmtree(r / ".claude"), "removed .claude/rules/style.md"),
}  # fmt: skip


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_renders_again(session: Session, tree: Path, change: str) -> None:
    make, said = CHANGES[change]
    before = session.updates[-1].text
    make(tree)
    expected = session.fresh()
    assert expected != before
    update = session.rendered(expected)
    assert said in update.line
    assert update.line.endswith(
        f"{update.tokens:,} tokens ({update.tokens - session.updates[-2].tokens:+,})"
    )


def test_a_new_local_file_in_a_nested_cwd(tmp_path: Path, tree: Path) -> None:
    watching = Session(tmp_path, tree / "pkg")
    try:
        (tree / "pkg" / "CLAUDE.local.md").write_text("Mine, here.")
        update = watching.rendered(watching.fresh())
        assert update.line.startswith("ctxasm: added pkg/CLAUDE.local.md; ")
        build(tree, {"pkg/.claude/rules/pkg.md": "A rules directory that did not exist."})
        update = watching.rendered(watching.fresh())
        assert update.line.startswith("ctxasm: added pkg/.claude/rules/pkg.md; ")
        assert str(tree / "pkg" / ".claude" / "rules") in watching.watcher.directories
    finally:
        watching.watcher.close()


def test_first_update_and_what_is_watched(tmp_path: Path, session: Session, tree: Path) -> None:
    first = session.updates[0]
    assert first.text == session.fresh()
    assert first.line == (
        f"ctxasm: watching 5 sources, {first.tokens:,} tokens (estimated), "
        f"in {len(session.watcher.directories)} directories (Ctrl-C stops)"
    )
    watched = session.watcher.directories
    for directory in (
        tree,
        tree / ".claude",
        tree / ".claude/rules",
        tree / "docs",
        tmp_path / "home",
    ):
        assert str(directory) in watched
    assert str(tree / "pkg") not in watched  # below cwd: nothing there loads at start
    plan = session.watcher.plan
    assert relevant(plan, str(tree / "CLAUDE.local.md"))
    assert relevant(plan, str(tree / ".claude" / "rules" / "any.md"))
    assert relevant(plan, str(tree / ".claude"))  # a directory on the way to sources
    assert not relevant(plan, str(tree / "README.md"))
    assert not relevant(plan, str(tree / ".CLAUDE.md.swp"))


def test_a_monorepo_is_not_watched_as_a_tree(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "mono")
    build(repo, {f"packages/p{i}/src/CLAUDE.md": f"Package {i}." for i in range(40)})
    build(repo, {"CLAUDE.md": "Root.", "packages/p7/src/deep/CLAUDE.local.md": "Deep."})
    watching = Session(tmp_path, repo / "packages" / "p7" / "src" / "deep")
    try:
        watched = set(watching.watcher.directories)
        deep = repo / "packages/p7/src/deep"
        chain = {str(deep), *(str(d) for d in deep.parents)}
        assert watched - chain <= {str(tmp_path / "home"), str(tmp_path / "managed")}
    finally:
        watching.watcher.close()


def test_a_bad_file_is_reported_and_the_watch_goes_on(session: Session, tree: Path) -> None:
    (tree / "CLAUDE.md").write_bytes(b"binary\0data")
    update = session.rendered(session.fresh())
    assert update.line.startswith(
        "ctxasm: no longer loaded CLAUDE.md (file is binary (NUL byte at offset 6); not loaded: "
        "replace it with text), docs/guide.md; "
    )
    assert [d.code for d in update.diagnostics] == ["CTX003"]
    (tree / "CLAUDE.md").write_text("Root, repaired.")
    update = session.rendered(session.fresh())
    assert update.line.startswith("ctxasm: added CLAUDE.md; ")


def test_a_bad_policy_file_is_reported_and_the_watch_goes_on(session: Session, tree: Path) -> None:
    (tree / ".ctxasm.toml").write_text("nonsense = true\n")
    update = session.until(lambda u: u.text is None)
    assert update.line.startswith(f"ctxasm: {tree}/.ctxasm.toml: unknown key 'nonsense'")
    assert update.line.endswith("; still watching")
    (tree / ".ctxasm.toml").write_text('[render]\nboundary = "--- cut here ---"\n')
    update = session.rendered(session.fresh())
    assert update.text is not None and "--- cut here ---" in update.text


def test_a_burst_of_writes_ends_in_a_fresh_render(tmp_path: Path, tree: Path) -> None:
    watching = Session(tmp_path, tree, debounce=0.1)
    try:
        for i in range(200):
            (tree / "CLAUDE.md").write_text(f"Root, version {i}. " + "x" * (i % 7))
        watching.rendered(watching.fresh())
        assert "Root, version 199." in (watching.updates[-1].text or "")
        assert len(watching.updates) < 50  # debounced, not one render per write
    finally:
        watching.watcher.close()


def test_stop_ends_updates(session: Session, tree: Path) -> None:
    session.watcher.stop()
    assert session.watcher.next_update(timeout=WAIT) is None


# --- --out and what the run reads ----------------------------------------------------------


def _swap_rules_for_a_link(tree: Path, target: Path) -> None:
    """What a repository may do while a watch runs: `.claude/rules` becomes a link."""
    shutil.rmtree(tree / ".claude" / "rules")
    os.symlink(target, tree / ".claude" / "rules")


def test_an_out_the_rules_link_only_walks_past_is_written(tmp_path: Path, tree: Path) -> None:
    """`.claude/rules` swapped for a link to a tree `--out` is written in (as a link to `/`
    is to every tree): the output is an entry the walk looks at, not a rule (`ctx.xml`), so
    it changes nothing the run reads. The watch renders the new rules and writes them (it
    exited 2 with "--out is itself a source of the context", which it was not)."""
    shared = tmp_path / "shared"
    build(shared, {"team.md": "Team rule.", "out": None})
    out = shared / "out" / "ctx.xml"
    watching = Session(tmp_path, tree, out=out)
    try:
        assert out.read_text() == watching.fresh()
        _swap_rules_for_a_link(tree, shared)
        update = watching.rendered(watching.fresh())
        assert "Team rule." in (update.text or "")
        assert update.line.startswith(
            f"ctxasm: added {shared}/team.md; removed .claude/rules/style.md; "
        )
        assert [d.code for d in update.diagnostics] == ["CTX801"]  # the link leads out
        assert out.read_text() == update.text
    finally:
        watching.watcher.close()


def test_an_out_the_rules_link_makes_a_rule_is_not_written_while_it_is(
    tmp_path: Path, tree: Path
) -> None:
    """The same with `--out ctx.md`: through the link the output is a rule, so writing it
    would feed each render into the next. One line says so, the file is left as it was, the
    watch goes on, and once the link is gone it writes again."""
    shared = tmp_path / "shared"
    shared.mkdir()
    out = shared / "ctx.md"
    watching = Session(tmp_path, tree, out=out)
    try:
        written = out.read_text()
        _swap_rules_for_a_link(tree, shared)
        update = watching.until(lambda u: u.text is None)
        assert update.line == (
            f"ctxasm: {out}: --out is now read as a source of the context (rule in "
            ".claude/rules), so this render is not written to it; still watching"
        )
        assert out.read_text() == written
        os.unlink(tree / ".claude" / "rules")
        build(tree, {".claude/rules/style.md": "Style, back."})
        update = watching.rendered(watching.fresh())
        assert out.read_text() == update.text and "Style, back." in update.text
    finally:
        watching.watcher.close()


@pytest.mark.parametrize(
    ("out", "said"),
    [
        ("CLAUDE.md", "read as a source of the context (in cwd)"),
        ("CLAUDE.local.md.missing", None),
        (".claude/settings.json", "a file the run reads (settings, a policy)"),
        ("nowhere/CLAUDE.local.md", None),
    ],
)
def test_an_out_the_run_reads_is_refused_at_start(
    tmp_path: Path, tree: Path, out: str, said: str | None
) -> None:
    (tree / "CLAUDE.local.md").unlink()
    (tree / ".claude/settings.json").write_text("{}")
    if out == "CLAUDE.local.md.missing":
        out, said = "CLAUDE.local.md", "a file the agent would load once it is there"
    assembler = Assembler(tree, **machine(tmp_path))
    with Watcher(assembler, render=lambda a: a.text, out=tree / out) as watcher:
        if said is None:  # looked at by no run: written
            assert watcher.start().text is not None
            return
        with pytest.raises(AssemblerError) as refused:
            watcher.start()
    assert str(refused.value) == f"{tree / out}: --out is itself {said}; write it elsewhere"


# --- the real CLI, in a subprocess --------------------------------------------------------


def poll(path: Path, done: Callable[[str], bool]) -> str:
    deadline = time.monotonic() + WAIT
    while True:
        text = path.read_text() if path.exists() else ""
        if done(text):
            return text
        assert time.monotonic() < deadline, f"{path} never got there; last: {text!r}"
        time.sleep(0.01)


def test_cli_watch_rewrites_out_and_exits_0_on_ctrl_c(tmp_path: Path, tree: Path) -> None:
    out = tmp_path / "ctx.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CTXASM_"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "assembler", "watch", str(tree), "--out", str(out),
         "--debounce", "20", "--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )  # fmt: skip
    try:
        poll(out, lambda text: text == assemble(tree, **machine(tmp_path)).render("xml"))
        (tree / "CLAUDE.local.md").write_text("Local, from the CLI test.")
        expected = assemble(tree, **machine(tmp_path)).render("xml")
        poll(out, lambda text: text == expected)
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".ctx.xml")) == []
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr
    assert stdout == ""
    lines = stderr.splitlines()
    assert lines[0].startswith("ctxasm: watching 5 sources, ")
    assert lines[1].startswith("ctxasm: changed CLAUDE.local.md; ")
    assert len(lines) == 2, stderr


def test_a_hostile_name_keeps_the_update_on_one_line(session: Session, tree: Path) -> None:
    (tree / ".claude/rules/a\nctxasm: forged\x1b[2J.md").write_text("Forged.")
    update = session.until(lambda u: "added" in u.line)
    assert update.line.startswith("ctxasm: added .claude/rules/a\\nctxasm: forged\\x1b[2J.md; ")


@pytest.mark.parametrize("where", ["missing", "a file"])
def test_watching_no_directory_is_an_error_at_start(tmp_path: Path, tree: Path, where: str) -> None:
    target = tree / "CLAUDE.md" if where == "a file" else tmp_path / "missing"
    with (
        Watcher(Assembler(target, **machine(tmp_path)), render=lambda a: a.text) as watcher,
        pytest.raises(DiscoveryError, match="directory"),
    ):
        watcher.start()
    result = subprocess.run(
        [sys.executable, "-m", "assembler", "watch", str(target),
         "--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")],
        capture_output=True, text=True, timeout=WAIT, check=False,
    )  # fmt: skip
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"ctxasm: {target}: ") and result.stderr.count("\n") == 1


def test_watched_directories_are_capped_and_the_cap_is_said(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {f"repo/.claude/rules/d{i}/r.md": f"rule {i}" for i in range(6)})
    assembler = Assembler(tmp_path / "repo", **machine(tmp_path))
    with Watcher(assembler, render=lambda a: a.text, max_watched=3) as watcher:
        first = watcher.start()
        assert len(watcher.directories) == 3
        assert watcher.unwatched > 0
        assert f"{watcher.unwatched} more directories are not watched (over 3" in first.line


def test_directories_over_the_cap_later_are_said_once(tmp_path: Path) -> None:
    """A watch that needs more directories than it may watch only later (rules linked to a
    large tree mid-watch) says so on that update's line, once."""
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "Root.", "repo/.claude/rules/r.md": "rule"})
    with Watcher(Assembler(tmp_path / "repo", **machine(tmp_path)), render=str) as counting:
        counting.start()
        cap = len(counting.directories) + 2  # room for two of the six directories to come
    assembler = Assembler(tmp_path / "repo", **machine(tmp_path))
    with Watcher(assembler, render=lambda a: a.text, max_watched=cap, debounce=0.02) as watcher:
        assert "not watched" not in watcher.start().line
        build(tmp_path, {f"staged/d{i}/r.md": f"rule {i}" for i in range(6)})
        os.rename(tmp_path / "staged", tmp_path / "repo/.claude/rules/more")  # all at once
        update = watcher.next_update(timeout=WAIT)
        assert update is not None and watcher.unwatched > 0
        assert update.line.endswith(
            f"; {watcher.unwatched} more directories are not watched (over {cap}, or the system "
            "gave no more watches): changes there are not seen"
        )
        (tmp_path / "repo/CLAUDE.md").write_text("Root, edited.")
        update = watcher.next_update(timeout=WAIT)
        assert update is not None and "not watched" not in update.line


def test_a_watch_of_many_directories_fits_in_a_small_address_space(tmp_path: Path) -> None:
    """With a watchdog thread per directory and 8 MiB stacks, 150 rules directories could not
    start under a 1 GiB address-space limit ("can't start new thread", exit 3). Now one
    inotify thread watches them all on Linux (small stacks elsewhere), and directories left
    unwatched are said: no crash."""
    git_init(tmp_path / "repo")
    build(tmp_path, {f"repo/.claude/rules/d{i}/r.md": f"rule {i}" for i in range(400)})
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "from assembler import Assembler\n"
        "from assembler.live.watch import Watcher\n"
        f"a = Assembler({str(tmp_path / 'repo')!r}, home={str(tmp_path / 'home')!r}, "
        f"managed_dir={str(tmp_path / 'm')!r}, environ={{}})\n"
        "with Watcher(a, render=lambda a: a.text) as w:\n"
        "    line = w.start().line\n"
        "    print(len(w.directories), w.unwatched, line)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    watched, unwatched, line = done.stdout.split(" ", 2)
    assert int(watched) > 14 and int(watched) + int(unwatched) > 400  # 14: 8 MiB stacks
    assert int(unwatched) == 0 or f"{unwatched} more directories are not watched" in line


def _status(pid: int) -> dict[str, int]:
    """Threads, VmPeak and VmHWM (KiB) of a running process, from /proc."""
    fields = {}
    with open(f"/proc/{pid}/status", encoding="utf-8") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("Threads", "VmPeak", "VmHWM"):
                fields[name] = int(value.split()[0])
    return fields


def _stderr_line(proc: subprocess.Popen[str], deadline: float) -> str:
    import select

    assert proc.stderr is not None
    ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
    assert ready, "no line on stderr in time"
    return proc.stderr.readline()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="one inotify thread: Linux")
def test_a_rules_link_to_a_wide_tree_is_watched_by_one_thread_in_bounded_memory(
    tmp_path: Path,
) -> None:
    """A rules entry linked to a tree of 1,500 directories (as a link to `/` finds on a
    full machine): a thread per directory took 1,027 threads and 1.3 GiB of address space,
    and under a 1 GiB limit ended in MemoryError depending on what the machine held. Now one
    inotify thread watches the 1,024 it may, whatever the tree, and real events still come."""
    repo = git_init(tmp_path / "repo")
    wide = tmp_path / "wide"
    for i in range(1500):
        os.makedirs(wide / f"d{i:04}")
        (wide / f"d{i:04}" / "x.txt").write_text("")
    build(tmp_path, {"repo/CLAUDE.md": "Root.\n", "home": None, "managed": None})
    (repo / ".claude" / "rules").mkdir(parents=True)
    os.symlink(wide, repo / ".claude" / "rules" / "wide")

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    proc = subprocess.Popen(
        [sys.executable, "-m", "assembler", "watch", str(repo), "--debounce", "20",
         "--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=limit,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        first = _stderr_line(proc, deadline)
        assert "in 1,024 directories" in first and "more directories are not watched" in first
        status = _status(proc.pid)
        (wide / "d0003" / "new.md").write_text("A new rule.\n")  # d0003 is watched
        while "added" not in (line := _stderr_line(proc, deadline)):
            pass
        assert "new.md" in line
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(WAIT)
        if proc.stderr is not None:
            proc.stderr.close()
    assert code == 0
    assert status["Threads"] <= 4, status
    assert status["VmPeak"] < 512 << 10, status  # KiB: under half of the 1 GiB limit


def test_rules_swapped_for_a_link_to_the_root_while_watching(tmp_path: Path) -> None:
    """`ctxasm watch --out ctx.xml` while the repository swaps `.claude/rules` for a link to
    `/`: the walk of `/` stops at its limits (`CTX704`, said with the update), it may pass
    the output file (through `/tmp`, or `/proc/PID/cwd`: the watch runs in the repository),
    which it only looks at; the watch goes on and writes the next change. It exited 2 with
    "--out is itself a source of the context"."""
    top = Path(tempfile.mkdtemp(prefix="w", dir="/tmp"))  # few entries before it in /tmp
    try:
        repo = git_init(top / "repo")
        build(top, {"repo/CLAUDE.md": "Root.\n", "repo/.claude/rules/style.md": "Style.\n"})
        build(top, {"home": None, "managed": None})
        out = repo / "ctx.xml"
        proc = subprocess.Popen(
            [sys.executable, "-m", "assembler", "watch", str(repo), "--out", str(out),
             "--debounce", "20", "--home", str(top / "home"), "--managed-dir", str(top / "managed")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=repo,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        said: queue.Queue[str] = queue.Queue()  # a burst of lines: read by a thread

        def read() -> None:
            for line in proc.stderr or ():
                said.put(line)
            said.put("")  # the watch ended

        reader = threading.Thread(target=read)
        reader.start()
        try:
            assert said.get(timeout=60).startswith("ctxasm: watching 2 sources, ")
            poll(out, lambda text: "Style." in text)
            shutil.rmtree(repo / ".claude" / "rules")
            os.symlink("/", repo / ".claude" / "rules")
            lines: list[str] = []
            while not any("[CTX704]" in line for line in lines):
                lines.append(said.get(timeout=60))
                assert lines[-1], f"the watch ended: {lines}"
            assert lines[0].startswith("ctxasm: removed .claude/rules/style.md; "), lines
            assert "more directories are not watched (over 1,024" in lines[0]
            assert (
                ".claude/rules: warning: rules directory over 20,000 entries; the rest is "
                "not loaded"
            ) in "".join(lines)
            (repo / "CLAUDE.md").write_text("Root, edited.\n")
            poll(out, lambda text: "Root, edited." in text and "Style." not in text)
            assert proc.poll() is None
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=WAIT)
            reader.join(timeout=WAIT)
            if proc.stderr is not None:
                proc.stderr.close()
        rest = "".join(said.queue)
        assert proc.returncode == 0, rest
        assert "--out is" not in "".join(lines) + rest
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(top / "repo" / ".claude" / "rules")  # never rmtree through a link to /
        shutil.rmtree(top)


def test_a_file_that_turned_binary_is_not_said_removed(tmp_path: Path) -> None:
    """`watch` said "removed CLAUDE.local.md" when the file turned binary (issue 34): a file
    still there that no longer loads is "no longer loaded", with the run's reason."""
    from assembler.live.watch import summary

    repo = git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "Root.\n", "repo/CLAUDE.local.md": "Local.\n"})
    before = assemble(repo, **machine(tmp_path))
    (repo / "CLAUDE.local.md").write_bytes(b"Local\x00binary\n")
    after = assemble(repo, **machine(tmp_path))
    line = summary(before, after, 10, 5)
    assert "removed" not in line
    assert line.startswith(
        "ctxasm: no longer loaded CLAUDE.local.md (file is binary (NUL byte at offset 5)"
    ), line
    (repo / "CLAUDE.local.md").unlink()
    assert summary(before, assemble(repo, **machine(tmp_path)), 10, 5).startswith(
        "ctxasm: removed CLAUDE.local.md;"
    )
