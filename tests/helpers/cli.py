"""`ctxasm` run in this process as its console script runs it: `main(argv)`, whose return
value is the exit code, with stdout and stderr captured by click's test runner."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from click.testing import CliRunner

from assembler.commands import main


class Ran(NamedTuple):
    exit_code: int
    stdout: str
    stderr: str
    output: str  # stdout and stderr interleaved, as a terminal shows them


def ctxasm(args: Sequence[str], env: Mapping[str, str] | None = None) -> Ran:
    """`ctxasm ARGS`: its exit code and what it printed; `env`: variables set meanwhile."""
    with CliRunner().isolation(env=env) as (stdout, stderr, output):
        try:
            code = main(args)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        streams = (s.getvalue().decode("utf-8", "replace") for s in (stdout, stderr, output))
        return Ran(code, *streams)
