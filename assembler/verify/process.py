"""Running an agent's program: bounded in time, in its own process group (a timeout ends it
and every process it started), with an environment of ctxasm's making (`environment`), its
output kept in temporary files of which only the tail is read back."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from ..discovery.programs import absolute_path, on_path
from ..display import shown
from ..errors import VerifyError
from ..model import Diagnostic

TAIL = 4096  # the bytes of its output kept to say why a run failed
# Every proxy variable points at a port where nothing listens, except for the loopback
# addresses: a request the program makes to anything but the stand-in fails at once.
_NOWHERE = "http://127.0.0.1:9"
_LOOPBACK = "127.0.0.1,localhost,::1"


class Finished(NamedTuple):
    """How a run ended: its exit status and the last lines it printed."""

    status: int
    output: str

    def last_line(self) -> str:
        lines = [line for line in self.output.splitlines() if line.strip()]
        return shown(lines[-1], 200) if lines else "(it printed nothing)"


def environment(home: Path, extra: Mapping[str, str], path: str | None = None) -> dict[str, str]:
    """What the program runs with: `PATH` (to find its interpreter), the temporary `HOME`,
    the proxies that go nowhere, no colour, and `extra` (its client's variables). Nothing
    else of ctxasm's own environment (no key, no variable that moves a home) reaches it."""
    environ = {
        "PATH": absolute_path(os.environ.get("PATH", os.defpath) if path is None else path),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
    }
    # git run by the program (2.1.197 runs `git status`) takes configuration from the
    # environment over every file, a repository's `.git/config` included: no fsmonitor command
    # and no hooks, whatever a repository the program reaches says.
    environ.update(
        GIT_CONFIG_COUNT="2",
        GIT_CONFIG_KEY_0="core.fsmonitor",
        GIT_CONFIG_VALUE_0="false",
        GIT_CONFIG_KEY_1="core.hooksPath",
        GIT_CONFIG_VALUE_1=os.devnull,
        GIT_TERMINAL_PROMPT="0",
    )
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        environ[name] = environ[name.lower()] = _NOWHERE
    environ["NO_PROXY"] = environ["no_proxy"] = _LOOPBACK
    environ.update(extra)
    return environ


class Located(NamedTuple):
    """The program's path, and the warning that `PATH` entries were passed over (`CTX606`)."""

    path: str
    notes: tuple[Diagnostic, ...] = ()


def locate(program: str, environ: Mapping[str, str], hint: str) -> Located:
    """The program's path: `program` itself when it names a file (the user's `--bin`), else
    found in the absolute entries of `PATH` (`discovery.programs`: a relative one may be the
    repository's)."""
    if os.sep in program:
        if os.path.isfile(program) and os.access(program, os.X_OK):
            return Located(os.path.abspath(program))
        raise VerifyError(f"{shown(program)}: not an executable file; {hint}")
    found = on_path(program, environ.get("PATH"))
    if found.path is None:
        raise VerifyError(f"{shown(program)}: not found on PATH{found.missing()}; {hint}")
    return Located(found.path, found.notes(program))


def run(
    argv: Sequence[str], cwd: Path, environ: Mapping[str, str], timeout: float, what: str
) -> Finished:
    """Run `argv` in `cwd` to its end, stdin closed; over `timeout` seconds, its process
    group is killed and a `VerifyError` names `what` and the time."""
    with tempfile.TemporaryFile() as out:
        try:
            child = subprocess.Popen(
                list(argv), cwd=cwd, env=dict(environ), stdin=subprocess.DEVNULL,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        except OSError as err:
            raise VerifyError(f"{what}: cannot start {shown(argv[0])}: {err.strerror}") from None
        try:
            status = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(child)
            raise VerifyError(
                f"{what}: no answer in {timeout:g} s; it was stopped (a longer --timeout, "
                "or run it by hand to see where it waits)"
            ) from None
        finally:
            _kill_group(child)
        out.seek(max(0, out.seek(0, os.SEEK_END) - TAIL))
        return Finished(status, out.read(TAIL).decode("utf-8", "replace"))


def _kill(child: subprocess.Popen[bytes]) -> None:
    _kill_group(child)
    child.kill()
    child.wait()


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    """End what the program left running (its process group: it led one of its own)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
