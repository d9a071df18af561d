"""`--out` and stdout: files replaced atomically, links followed, devices and FIFOs never
replaced, a source never overwritten, and write errors as one line (the real CLI)."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import pytest

from assembler import AssemblerError
from assembler.output.write import write_file
from tests.helpers.trees import ROOT, Link, build, git_init

RENDERED = (
    '__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__\n\n<project_instructions source="CLAUDE.md">\nhello\n'
    "</project_instructions>\n"
)
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")


def ctxasm(
    tmp: Path, *args: str, stdout: int | IO[Any] = subprocess.PIPE, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    (tmp / "home").mkdir(exist_ok=True)
    machine = ("--home", str(tmp / "home"), "--managed-dir", str(tmp / "managed"))
    kwargs.setdefault("timeout", 60)
    if "cwd" in kwargs:  # the package, wherever the command runs
        kwargs["env"] = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "assembler", *args, *machine],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        **kwargs,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "hello"})
    return tmp_path / "repo"


def render_to(repo: Path, out: str | Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return ctxasm(repo.parent, "render", str(repo), "--out", str(out), **kwargs)


def test_a_file_is_replaced_atomically_and_keeps_its_mode(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "ctx.xml"
    out.write_text("old, and longer than what replaces it " * 10)
    out.chmod(0o640)
    inode = out.stat().st_ino
    assert render_to(repo, out).returncode == 0
    assert out.read_text() == RENDERED
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert out.stat().st_ino != inode  # a new file renamed into place, not rewritten
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx.xml", "home", "repo"]  # no temp


def test_a_new_file_follows_the_umask(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "new.xml"
    result = render_to(repo, out, preexec_fn=lambda: os.umask(0o027))
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o640  # not mkstemp's 0600


def test_a_symlink_is_written_through(repo: Path, tmp_path: Path) -> None:
    build(tmp_path, {"real/ctx.xml": "old", "link.xml": Link("real/ctx.xml")})
    build(tmp_path, {"dangling.xml": Link("real/later.xml")})
    assert render_to(repo, tmp_path / "link.xml").returncode == 0
    assert render_to(repo, tmp_path / "dangling.xml").returncode == 0
    assert os.readlink(tmp_path / "link.xml") == "real/ctx.xml"
    assert (tmp_path / "real/ctx.xml").read_text() == RENDERED
    assert (tmp_path / "real/later.xml").read_text() == RENDERED


def test_a_fifo_is_written_in_place(repo: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    result = render_to(repo, fifo)
    reader.join(timeout=30)
    assert (result.returncode, got) == (0, [RENDERED])
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_stdout_as_a_path_is_written_in_place(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "log"
    log.write_text("kept\n")
    # /dev/fd/1 rather than /dev/stdout: a regression here, run as root, must not be able to
    # rename a file over the machine's /dev/stdout (a rename into /dev/fd fails harmlessly).
    with log.open("a") as appended:
        assert render_to(repo, "/dev/fd/1", stdout=appended).returncode == 0
    assert log.read_text() == "kept\n" + RENDERED


@root_only
def test_a_device_is_never_replaced(repo: Path, tmp_path: Path) -> None:
    full, null = tmp_path / "full", tmp_path / "null"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    result = render_to(repo, full)
    assert (result.returncode, result.stderr) == (
        2,
        f"ctxasm: {full}: cannot write (No space left on device)\n",
    )
    assert render_to(repo, null).returncode == 0
    for device in (full, null):
        assert stat.S_ISCHR(device.lstat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full", "home", "null", "repo"]


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(AssemblerError, match="socket or block device; refusing"):
            write_file(path, "text")
    assert stat.S_ISSOCK(path.lstat().st_mode)


@pytest.mark.parametrize("via", ["repo/CLAUDE.md", "link.md"])  # the user's link to it
def test_out_never_overwrites_a_source(repo: Path, via: str) -> None:
    build(repo, {".claude/rules/r.md": "---\npaths: a\n---\nr"})
    build(repo.parent, {"link.md": Link("repo/CLAUDE.md")})
    out = repo.parent / via
    for args in (("render", "--out"), ("cache", "--save")):
        result = ctxasm(repo.parent, args[0], str(repo), args[1], str(out))
        assert (result.returncode, result.stderr) == (
            2,
            f"ctxasm: {out}: is {repo / 'CLAUDE.md'}, a source of this context; "
            "write the output elsewhere\n",
        )
    rule = render_to(repo, repo / ".claude/rules/r.md")  # conditional, not loaded yet
    assert rule.returncode == 2 and "a source of this context" in rule.stderr
    assert (repo / "CLAUDE.md").read_text() == "hello"


def _closed_pipe() -> int:
    read, write = os.pipe()
    os.close(read)
    return write


STDOUT_FAILURES = {
    "full disk": "stdout: cannot write (No space left on device)",  # `> /dev/full`
    "closed": "stdout is closed: nothing can be written; use --out or redirect it",  # `>&-`
}
COMMANDS: dict[str, Sequence[str]] = {
    "render": ("render", "{repo}"),
    "explain": ("explain", "{repo}"),
    "lint": ("lint", "{repo}/CLAUDE.md", "--format", "json"),  # "[]": something to write
    "cache": ("cache", "{repo}"),
}


@pytest.mark.parametrize("failure", sorted(STDOUT_FAILURES))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_failed_write_to_stdout_is_one_line(repo: Path, command: str, failure: str) -> None:
    message = STDOUT_FAILURES[failure]
    args = [a.format(repo=repo) for a in COMMANDS[command]]
    (repo / "h").mkdir(exist_ok=True)
    if failure == "closed":
        shell = ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "assembler", *args]
        result = subprocess.run(
            [*shell, "--home", str(repo / "h"), "--managed-dir", str(repo / "m")],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    else:
        if not os.path.exists("/dev/full"):
            pytest.skip("no /dev/full here")
        with open("/dev/full", "w") as full:
            result = ctxasm(repo.parent, *args, stdout=full)
    assert (result.returncode, result.stderr) == (2, f"ctxasm: {message}\n")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_reader_that_went_away_is_no_error(repo: Path, command: str) -> None:
    """`ctxasm ... | head -c0`: the pipe's reader is gone before anything is written. Not a
    failure: nothing on stderr, and the exit code the run has anyway (0 for this clean tree)."""
    args = [a.format(repo=repo) for a in COMMANDS[command]]
    fd = _closed_pipe()
    try:
        result = ctxasm(repo.parent, *args, stdout=fd)
    finally:
        os.close(fd)
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.parametrize(
    ("command", "code"), [("render", 0), ("explain", 0), ("render, a binary import", 1)]
)
def test_head_reads_one_line_and_the_run_keeps_its_exit_code(
    tmp_path: Path, command: str, code: int
) -> None:
    """A real `| head -1` over an output larger than the pipe's buffer: the write that fails is
    quiet, and the exit code is the run's own (1: a file that cannot be loaded)."""
    git_init(tmp_path / "repo")
    imports = "".join(f"@part{i}.md\n" for i in range(40)) + ("@bad.md\n" if code else "")
    files = {f"repo/part{i}.md": f"part {i} " + "x" * 30_000 for i in range(40)}
    build(tmp_path, {"repo/CLAUDE.md": imports, **files, "repo/bad.md": "\0binary"})
    if command == "explain":
        build(tmp_path, {f"repo/.claude/rules/r{i}.md": "rule" for i in range(1_000)})
    (tmp_path / "home").mkdir()
    argv = [command.split(",")[0], "repo", "--home", "home", "--managed-dir", "managed"]
    pipeline = 'set -o pipefail; "$@" | head -1 >/dev/null; echo "status ${PIPESTATUS[0]}" >&2'
    done = subprocess.run(
        ["bash", "-c", pipeline, "bash", sys.executable, "-m", "assembler", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    lines = done.stderr.splitlines()
    assert lines[-1] == f"status {code}", done.stderr
    assert not [line for line in lines if line.startswith("ctxasm:")], done.stderr


def test_a_watch_ends_when_its_reader_has_gone(repo: Path) -> None:
    """`ctxasm watch | head -c0`: nobody is left to render for, so the watch ends (0)."""
    fd = _closed_pipe()
    try:
        result = ctxasm(repo.parent, "watch", str(repo), stdout=fd)
    finally:
        os.close(fd)
    assert result.returncode == 0, result.stderr
    assert "cannot write" not in result.stderr


# --- links the repository planted (issue 22, item 1) ----------------------------------------

VICTIM = "export PATH=/usr/bin  # the user's own\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file of the user's outside the project (`~/.bashrc`), and a directory (`~`)."""
    build(tmp_path, {"victim/.bashrc": VICTIM, "home": None})
    return tmp_path / "victim"


def planted(repo: Path, result: subprocess.CompletedProcess[str], link: Path, to: Path) -> None:
    """`result` refused the link `link` (in `repo`) that leads to `to`: exit 2, one line that
    names the link and suggests the path it reaches."""
    assert result.returncode == 2, result.stderr
    *before, refusal = result.stderr.splitlines()
    assert all(line.startswith("ctxasm: watching ") for line in before), result.stderr
    assert f"{link} is a symlink in the project {repo} " in refusal
    assert "not written through" in refusal
    assert str(to) in refusal


SAVES = {"render": ("render", "--out"), "cache": ("cache", "--save")}


@pytest.mark.parametrize("command", sorted(SAVES))
def test_a_planted_link_out_of_the_project_is_refused(
    repo: Path, victim: Path, command: str
) -> None:
    """`ctxasm render --out ctx.xml` in a clone whose `ctx.xml` links to `~/.bashrc`."""
    build(repo, {"ctx.xml": Link(str(victim / ".bashrc"))})
    name, option = SAVES[command]
    result = ctxasm(repo.parent, name, option, "ctx.xml", cwd=repo)
    planted(repo, result, repo / "ctx.xml", victim / ".bashrc")
    assert f"pass {option} {victim / '.bashrc'} to write there" in result.stderr
    assert (victim / ".bashrc").read_text() == VICTIM


@pytest.mark.parametrize(
    "out",
    [
        "out/ctx.xml",  # a planted directory link at a component
        "out/../ctx.xml",  # `..` after the link is its target's parent, as the kernel has it
        "chain.xml",  # a link to a link to ~/.bashrc
        "deep/er/ctx.xml",  # a link below a real directory of the project
    ],
)
def test_a_planted_link_at_any_component_is_refused(repo: Path, victim: Path, out: str) -> None:
    build(
        repo,
        {
            "out": Link(str(victim)),
            "chain.xml": Link("hop.xml"),
            "hop.xml": Link("../victim/.bashrc"),
            "deep/er": Link("../../victim"),
        },
    )
    before = sorted(p.name for p in victim.parent.iterdir())
    result = render_to(repo, repo / out)
    assert result.returncode == 2, result.stderr
    assert "is a symlink in the project" in result.stderr
    assert (victim / ".bashrc").read_text() == VICTIM
    assert sorted(p.name for p in victim.iterdir()) == [".bashrc"]
    assert sorted(p.name for p in victim.parent.iterdir()) == before


def test_a_planted_dangling_link_is_refused(repo: Path, victim: Path) -> None:
    """A link to a file still to create (`~/.ssh/authorized_keys`) would create it."""
    build(repo, {"ctx.xml": Link(str(victim / "authorized_keys")), "in.xml": Link("no-such")})
    result = render_to(repo, repo / "ctx.xml")
    planted(repo, result, repo / "ctx.xml", victim / "authorized_keys")
    assert "which does not exist" in result.stderr
    assert not (victim / "authorized_keys").exists()
    inside = render_to(repo, repo / "in.xml")  # dangling inside the project: refused too
    planted(repo, inside, repo / "in.xml", repo / "no-such")
    assert not (repo / "no-such").exists()
    build(repo, {"loop.xml": Link("loop.xml")})
    loop = render_to(repo, repo / "loop.xml")
    planted(repo, loop, repo / "loop.xml", repo / "loop.xml")
    assert "to loop.xml, a loop of links" in loop.stderr


def test_a_link_chain_through_the_users_link_is_checked_where_each_link_stands(
    repo: Path, victim: Path, tmp_path: Path
) -> None:
    """The user's link in /tmp to the project's `ctx.xml`, which the repository linked out."""
    build(repo, {"ctx.xml": Link(str(victim / ".bashrc"))})
    build(tmp_path, {"mine.xml": Link(str(repo / "ctx.xml"))})
    planted(repo, render_to(repo, tmp_path / "mine.xml"), repo / "ctx.xml", victim / ".bashrc")
    assert (victim / ".bashrc").read_text() == VICTIM


def test_a_link_that_stays_in_the_project_is_refused_too(repo: Path) -> None:
    """A link into the project may reach a file of the user's there: a repository that
    commits `ctx.md -> .git/hooks/pre-commit` (or `.venv/bin/activate`) would have its
    rendering run as the user's hook. No link of the repository's is written through."""
    build(
        repo,
        {
            ".git/hooks/pre-commit": "#!/bin/sh\nexit 0\n",
            ".venv/bin/activate": "# the user's venv\n",
            "ctx.md": Link(".git/hooks/pre-commit"),
            "act.md": Link(".venv/bin/activate"),
            "build/ctx.xml": "old",
            "in.xml": Link("build/ctx.xml"),
            "b": Link("build"),
        },
    )
    os.chmod(repo / ".git/hooks/pre-commit", 0o755)
    hook = repo / ".git/hooks/pre-commit"
    result = render_to(repo, "ctx.md", cwd=repo)
    planted(repo, result, repo / "ctx.md", hook)
    assert f"pass --out {hook} to write there" in result.stderr
    planted(repo, render_to(repo, "act.md", cwd=repo), repo / "act.md", repo / ".venv/bin/activate")
    planted(repo, render_to(repo, repo / "in.xml"), repo / "in.xml", repo / "build/ctx.xml")
    planted(repo, render_to(repo, repo / "b/new.xml"), repo / "b", repo / "build")
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    assert (repo / ".venv/bin/activate").read_text() == "# the user's venv\n"
    assert (repo / "build/ctx.xml").read_text() == "old"
    assert not (repo / "build/new.xml").exists()
    assert render_to(repo, hook).returncode == 0  # the path itself: the user asked for it
    assert hook.read_text() == RENDERED


def test_links_the_user_made_outside_the_project_are_written_through(
    repo: Path, victim: Path, tmp_path: Path
) -> None:
    build(tmp_path, {"mine.xml": Link(str(victim / ".bashrc")), "dir": Link(str(victim))})
    assert render_to(repo, tmp_path / "mine.xml").returncode == 0
    assert render_to(repo, tmp_path / "dir" / "ctx.xml").returncode == 0
    assert (victim / ".bashrc").read_text() == RENDERED  # the user asked for it
    assert (victim / "ctx.xml").read_text() == RENDERED
    assert os.path.islink(tmp_path / "mine.xml")


def test_a_submodules_superproject_is_the_repositorys_too(repo: Path, victim: Path) -> None:
    """`cd vendor/sub && ctxasm render . --out ../../ctx.xml` in a clone: the submodule's
    superproject planted `ctx.xml` (the run loads the superproject's CLAUDE.md too)."""
    git_dir = repo / ".git" / "modules" / "sub"
    git_dir.mkdir(parents=True)
    build(
        repo,
        {
            "vendor/sub/.git": "gitdir: ../../.git/modules/sub\n",
            "vendor/sub/CLAUDE.md": "sub",
            "ctx.xml": Link(str(victim / ".bashrc")),
        },
    )
    sub = repo / "vendor" / "sub"
    result = ctxasm(repo.parent, "render", ".", "--out", "../../ctx.xml", cwd=sub)
    planted(repo, result, repo / "ctx.xml", victim / ".bashrc")
    assert (victim / ".bashrc").read_text() == VICTIM


def test_outside_git_a_link_out_of_the_directory_written_from_is_refused(
    tmp_path: Path, victim: Path
) -> None:
    """`cd download && ctxasm render sub --out ctx.xml`, no git: the download planted
    `ctx.xml`; a link that stays there is the user's to follow (the directory may be home)."""
    build(
        tmp_path,
        {
            "download/sub/CLAUDE.md": "hello",
            "download/ctx.xml": Link("../victim/.bashrc"),
            "download/mine.xml": Link("notes/ctx.xml"),
            "download/notes": None,
        },
    )
    download = tmp_path / "download"
    result = ctxasm(tmp_path, "render", "sub", "--out", "ctx.xml", cwd=download)
    assert result.returncode == 2, result.stderr
    assert (
        f"{download / 'ctx.xml'} is a symlink in the directory outside git {download} "
        "that leads out of it" in result.stderr
    )
    assert (victim / ".bashrc").read_text() == VICTIM
    mine = ctxasm(tmp_path, "render", "sub", "--out", "mine.xml", cwd=download)
    assert mine.returncode == 0, mine.stderr
    assert (download / "notes/ctx.xml").read_text().endswith("hello\n</project_instructions>\n")


def test_a_project_without_git_is_its_start_directory(tmp_path: Path, victim: Path) -> None:
    build(tmp_path, {"download/CLAUDE.md": "hello", "download/ctx.xml": Link("../victim/.bashrc")})
    download = tmp_path / "download"
    planted(download, render_to(download, "ctx.xml", cwd=download), download / "ctx.xml",
            victim / ".bashrc")  # fmt: skip
    assert (victim / ".bashrc").read_text() == VICTIM


def test_the_work_tree_the_command_runs_in_is_a_project_too(repo: Path, victim: Path) -> None:
    """`render vendor/sub --out ctx.xml` in a clone: the run's project is the submodule, and
    `ctx.xml` is a link the clone planted."""
    git_init(repo / "vendor" / "sub")
    build(repo, {"vendor/sub/CLAUDE.md": "sub", "ctx.xml": Link(str(victim / ".bashrc"))})
    result = ctxasm(repo.parent, "render", "vendor/sub", "--out", "ctx.xml", cwd=repo)
    planted(repo, result, repo / "ctx.xml", victim / ".bashrc")
    assert (victim / ".bashrc").read_text() == VICTIM


def test_watch_refuses_a_planted_link(repo: Path, victim: Path) -> None:
    build(repo, {"ctx.xml": Link(str(victim / ".bashrc"))})
    result = ctxasm(repo.parent, "watch", "--out", "ctx.xml", cwd=repo)
    planted(repo, result, repo / "ctx.xml", victim / ".bashrc")
    assert (victim / ".bashrc").read_text() == VICTIM


@pytest.mark.parametrize("command", ["render", "cache", "watch"])
def test_a_fifo_without_a_reader_is_an_error_not_a_hang(repo: Path, command: str) -> None:
    os.mkfifo(repo / "pipe")
    option = "--save" if command == "cache" else "--out"
    result = ctxasm(repo.parent, command, option, "pipe", cwd=repo, timeout=30)
    assert (result.returncode, result.stderr.splitlines()[-1]) == (
        2,
        "ctxasm: pipe: a FIFO with no reader; start its reader first, or pass a regular file",
    )
    assert stat.S_ISFIFO((repo / "pipe").lstat().st_mode)
