"""The release of an agent installed on this machine, as the agent itself reports it.

`--client-version installed` runs the client's own `--version` (`Client.version_command`),
found in the absolute entries of the run's `PATH` (`discovery.programs`: a relative one may be
the repository's), with its no-network variables set (`Client.version_environ`) and that
`PATH` without its relative entries: no network, at most `TIMEOUT_S` seconds (the environment's
`CTXASM_VERSION_TIMEOUT` sets another, 1 to 600: Gemini CLI 0.61 took 21 s on a busy machine)
and `MAX_OUTPUT` bytes of output read, and the first release number in what it prints is the answer. Anything
else is a `RequestError` that says how to go on without it.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ..discovery.programs import absolute_path, on_path
from ..display import shown
from ..errors import RequestError
from ..model import Diagnostic

TIMEOUT_S = 30.0
TIMEOUT_VARIABLE = "CTXASM_VERSION_TIMEOUT"
MAX_TIMEOUT_S = 600
MAX_OUTPUT = 4096
_RELEASE = re.compile(r"(?<![\d.])\d{1,9}(?:\.\d{1,9}){1,3}(?![\d.])")


class Installed(NamedTuple):
    """The release the installed client reported, and the warning that `PATH` entries were
    passed over to find it (`CTX606`)."""

    release: str
    notes: tuple[Diagnostic, ...]


def installed_version(
    title: str, command: Sequence[str], environ: Mapping[str, str], quiet: Mapping[str, str]
) -> Installed:
    """The release `command` (the client's `--version`) prints; `quiet`: variables that keep
    the client off the network while it answers."""
    if not command:
        raise RequestError(f"{title} cannot be asked its version; pass --client-version latest")
    found = on_path(command[0], environ.get("PATH"))
    then = "pass --client-version with a modelled version (or latest)"
    if found.path is None:
        raise RequestError(
            f"{command[0]}: {title} is not installed (not on PATH{found.missing()}); {then}"
        )
    path = absolute_path(environ.get("PATH"))
    wait = _timeout(environ)
    out = _run_bounded([found.path, *command[1:]], {**environ, **quiet, "PATH": path}, wait)
    if out is None:
        raise RequestError(
            f"{command[0]} {' '.join(command[1:])} did not answer within {wait:g} s; set "
            f"{TIMEOUT_VARIABLE} (seconds, up to {MAX_TIMEOUT_S}) to wait longer, or {then}"
        )
    release = _RELEASE.search(out)
    if release is None:
        said = shown(out.strip().splitlines()[0] if out.strip() else "nothing")
        raise RequestError(f"{command[0]} printed no release number ({said!r}); {then}")
    return Installed(release.group(), found.notes(command[0]))


def _timeout(environ: Mapping[str, str]) -> float:
    """How long the client may take to answer: `CTXASM_VERSION_TIMEOUT`, else `TIMEOUT_S`."""
    text = environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return TIMEOUT_S
    if text.isascii() and text.isdigit() and len(text) <= 3 and 1 <= int(text) <= MAX_TIMEOUT_S:
        return float(text)
    raise RequestError(
        f"{TIMEOUT_VARIABLE}={shown(text, 20)!r}: give a whole number of seconds from 1 to "
        f"{MAX_TIMEOUT_S}"
    )


def _run_bounded(argv: list[str], env: Mapping[str, str], timeout: float) -> str | None:
    """The first `MAX_OUTPUT` bytes `argv` prints, or None when it does not finish within
    `timeout` seconds."""
    try:
        child = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(env),
            start_new_session=True,  # its own process group: a timeout ends all of it
        )
    except OSError as err:
        raise RequestError(
            f"{argv[0]}: cannot run it ({err.strerror}); pass --client-version with a "
            "modelled version (or latest)"
        ) from None
    got: list[bytes] = []
    assert child.stdout is not None
    reader = threading.Thread(target=lambda: got.append(child.stdout.read(MAX_OUTPUT)))  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    finished = not reader.is_alive()
    if not finished or child.poll() is None:
        try:
            child.wait(timeout=0 if not finished else 1)
        except subprocess.TimeoutExpired:
            _kill(child)
    reader.join()
    child.stdout.close()
    if not finished:
        return None
    return b"".join(got).decode("utf-8", "replace")


def _kill(child: subprocess.Popen[bytes]) -> None:
    killpg = getattr(os, "killpg", None)  # POSIX: the whole group it may have started
    try:
        if killpg is None:
            raise OSError
        killpg(child.pid, 9)
    except OSError:
        child.kill()
    child.wait()
