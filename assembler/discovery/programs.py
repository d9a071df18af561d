"""Finding a program on `PATH` without the repository's help.

A `PATH` entry that is empty (a leading, trailing or doubled `:`) or relative (`.`,
`node_modules/.bin`) names a directory relative to the one the process runs in, and ctxasm
runs in the repository it reads as often as not: an agent's program found there is the
repository's, and running it (for its `--version`, for `ctxasm verify`) would run the
repository's code. Such entries are not looked in, and the lookup says which it passed over
(docs/security.md, "Running programs"). An absolute entry is the user's, wherever it points.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from typing import NamedTuple

from .. import codes
from ..display import shown
from ..model import Diagnostic


class Found(NamedTuple):
    """Where a program is, and the relative `PATH` entries passed over to get there."""

    path: str | None  # an absolute path; None: in no absolute entry
    skipped: tuple[str, ...]  # relative or empty entries before it (all of them when None)

    def notes(self, program: str) -> tuple[Diagnostic, ...]:
        """The one warning that entries were passed over (`CTX606`), when one was."""
        if not self.skipped or self.path is None:
            return ()
        message = f"{_passed_over(self.skipped)} looking for {program}; ran {self.path}"
        return (codes.PATH_ENTRY_SKIPPED.at("PATH", message),)

    def missing(self) -> str:
        """What a "not found" error adds: the entries passed over, when there were any."""
        return f"; {_passed_over(self.skipped)}" if self.skipped else ""


def on_path(program: str, path: str | None) -> Found:
    """`program` (a bare name) in the absolute entries of `path` (a `PATH` value; None:
    `os.defpath`), in order."""
    skipped: list[str] = []
    for entry in (os.defpath if path is None else path).split(os.pathsep):
        if not os.path.isabs(entry):
            skipped.append(entry)
            continue
        found = shutil.which(program, path=entry)
        # Windows' `which` also looks in the current directory: a relative answer is that.
        if found is not None and os.path.isabs(found):
            return Found(found, tuple(dict.fromkeys(skipped)))
    return Found(None, tuple(dict.fromkeys(skipped)))


def absolute_path(path: str | None) -> str:
    """`path` (a `PATH` value; None: `os.defpath`) without its relative and empty entries:
    what a program ctxasm runs gets, so that what it runs by name is not the repository's
    either (`#!/usr/bin/env node` in a repository holding `./node`)."""
    entries = (os.defpath if path is None else path).split(os.pathsep)
    return os.pathsep.join(e for e in entries if os.path.isabs(e))


def _passed_over(skipped: Sequence[str]) -> str:
    shown_entries = ", ".join(f'"{shown(e)}"' for e in skipped)
    return (
        f"relative PATH entries not looked in ({shown_entries}: they name the directory "
        "ctxasm runs in, which may be the repository's)"
    )
