"""Running a check as a user who cannot read what it is given: `nobody` when the tests run as
root (as in CI containers), else the current user after `chmod 000`.

`nobody` may not be able to read this checkout (it can sit in a private directory), so the
child reads the shipped policies and templates from a world-readable copy: it is given what
it needs, and only the file under test is out of its reach. Modules are imported by the
parent before it forks (each test runs its check once first)."""

from __future__ import annotations

import atexit
import functools
import os
import pickle
import select
import shutil
import signal
import stat
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assembler import resources

NOBODY = 65534
TIMEOUT = 30


def _chmod_add(path: Path, bits: int) -> int:
    mode = stat.S_IMODE(os.stat(path).st_mode)
    os.chmod(path, mode | bits)
    return mode


@pytest.fixture
def traversable(tmp_path: Path) -> Iterator[None]:
    """Let `nobody` traverse every directory down to `tmp_path` (restored afterwards)."""
    if os.geteuid() != 0:  # not root: the test runs as this user, nothing to open up
        yield
        return
    saved: list[tuple[Path, int]] = []
    for directory in [tmp_path, *tmp_path.parents]:
        mode = stat.S_IMODE(os.stat(directory).st_mode)
        if not mode & stat.S_IXOTH:
            saved.append((directory, _chmod_add(directory, stat.S_IXOTH)))
    try:
        yield
    finally:
        for directory, mode in saved:
            os.chmod(directory, mode)


@functools.cache
def _readable_data() -> Path:
    """The shipped data directories, copied where every user can read them (once a session)."""
    copy = Path(tempfile.mkdtemp(prefix="ctxasm-data-"))
    atexit.register(shutil.rmtree, copy, True)
    for name in ("policies", "templates"):
        shutil.copytree(resources.data_dir(name), copy / name)
    for directory, _, files in os.walk(copy):
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(os.path.join(directory, name), 0o644)
    return copy


def _as_nobody(fn: Callable[[], Any]) -> Any:
    """Run `fn` in a forked child with uid/gid `nobody`; return its (pickled) result."""
    data = _readable_data()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read_end)
            # The child's own process only: it reads the shipped data from the copy.
            resources.data_dir = lambda name: data / name  # type: ignore[assignment]
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            payload = pickle.dumps(("ok", fn()))
        except BaseException:
            payload = pickle.dumps(("raised", traceback.format_exc()))
        try:
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    deadline = time.monotonic() + TIMEOUT
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            ready, _, _ = select.select([pipe], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pytest.fail("the unprivileged child hung")
            chunk = os.read(pipe.fileno(), 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    os.waitpid(pid, 0)
    status, value = pickle.loads(b"".join(chunks))
    assert status == "ok", value
    return value


def as_unprivileged(target: Path, fn: Callable[[], Any]) -> Any:
    """`fn()` run by a user that cannot read `target` (mode 000): `nobody` when we are root."""
    if os.geteuid() == 0:
        return _as_nobody(fn)
    try:
        if target.is_dir():
            os.listdir(target)
        else:
            target.open("rb").close()
    except PermissionError:
        return fn()
    pytest.skip("chmod 000 does not stop this non-root user from reading")
