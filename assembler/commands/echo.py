"""What a command prints: diagnostics on stderr, its output on stdout or into a file, and the
exit code an assembly's diagnostics make."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..model import Diagnostic, Severity
from ..output.write import write_file, write_stdout

if TYPE_CHECKING:
    from ..assembly import Assembly


def columns() -> int | None:
    """How wide text may be: `COLUMNS` when set, else the terminal's width when stdout is
    one; None (no limit) when the output goes to a file or a pipe."""
    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns if sys.stdout.isatty() else None
    except (AttributeError, OSError, ValueError):  # no usable stdout
        return None


def wrapped(text: str, width: int | None) -> str:
    """`text` with each line of prose longer than `width` broken at spaces, its continuations
    indented two more than the line (None: as it is). A table's row (columns aligned by runs
    of spaces) is left whole: broken, it would not read as a row."""
    if not width:
        return text
    import textwrap

    out = []
    for line in text.split("\n"):
        lead = " " * (len(line) - len(line.lstrip(" ")))
        if len(line) <= width or "  " in line.strip():
            out.append(line)
            continue
        out.append(
            textwrap.fill(
                line, width, subsequent_indent=lead + "  ", break_long_words=False,
                break_on_hyphens=False,
            )
        )  # fmt: skip
    return "\n".join(out)


def report(diagnostics: Sequence[Diagnostic], minimum: Severity = Severity.WARNING) -> None:
    for diagnostic in diagnostics:
        if diagnostic.severity.rank >= minimum.rank:
            click.echo(diagnostic.line(), err=True)


def write_output(
    text: str, out: Path | None, assembly: Assembly | None = None, option: str = "--out"
) -> bool:
    """To stdout, or to `out` (`output.write`: atomic, never a device replaced, never one of
    the sources of `assembly`, never through a link its project planted; a refusal suggests
    `option`). False when stdout is a pipe whose reader has gone."""
    if out is None:
        return write_stdout(text)
    sources = sources_of(assembly) if assembly is not None else ()
    project = assembly.context.project_root if assembly is not None else None
    write_file(out, text, sources=sources, project=project, option=option)
    return True


def sources_of(assembly: Assembly) -> list[str]:
    """The files an `--out` must not overwrite: every source found, loaded or not."""
    return [s.path for s in (*assembly.discovered, *assembly.conditional)]


def finish(assembly: Assembly) -> int:
    """Diagnostics on stderr; the exit code: 1 when any is an error."""
    report(assembly.diagnostics)
    return 1 if assembly.errors else 0
