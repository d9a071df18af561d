"""`ctxasm`: thin click adapters over the library. Errors become one line and an exit code.

Exit codes (SPEC section 9): 0 ok, 1 findings or over budget, 2 usage or configuration
error, 3 internal error.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from .errors import AssemblerError
from .model import Diagnostic, Severity

F = TypeVar("F", bound=Callable[..., Any])
FORMAT_CHOICES = ("xml", "markdown", "json", "claude-code")


def handle_errors(func: F) -> F:
    """Map expected errors to one line on stderr and their exit code; anything else to 3."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except AssemblerError as err:
            click.echo(f"ctxasm: {err}", err=True)
            sys.exit(err.exit_code)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:
            if os.environ.get("CTXASM_DEBUG"):
                raise
            click.echo(
                f"ctxasm: internal error: {type(err).__name__}: {err}; "
                "rerun with CTXASM_DEBUG=1 for the traceback and report it",
                err=True,
            )
            sys.exit(3)

    return wrapper  # type: ignore[return-value]


def _date(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise click.BadParameter(f"{value!r} is not a date like 2026-01-31")
    return value


def discovery_options(func: F) -> F:
    """The options every command shares to point discovery at any tree, hermetically."""
    options = [
        click.option(
            "--policy",
            help="Built-in policy name or a policy .toml file (default: the project's config, else claude-code).",
        ),
        click.option(
            "--touch",
            "touch",
            multiple=True,
            type=click.Path(path_type=Path),
            help="A path the agent reads; lazily loaded files are added. Repeatable.",
        ),
        click.option(
            "--home",
            type=click.Path(file_okay=False, path_type=Path),
            help="Home directory to use instead of ~.",
        ),
        click.option(
            "--managed-dir",
            type=click.Path(file_okay=False, path_type=Path),
            help="Managed policy directory instead of /etc/claude-code.",
        ),
        click.option(
            "--max-tokens", type=click.IntRange(min=0), help="Total token budget (0 = none)."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def cli_environ(home: Path | None) -> dict[str, str]:
    """The process environment; with `--home`, minus `CLAUDE_CONFIG_DIR` (which would win)."""
    environ = dict(os.environ)
    if home is not None:
        environ.pop("CLAUDE_CONFIG_DIR", None)
    return environ


def report(diagnostics: Sequence[Diagnostic], minimum: Severity = Severity.WARNING) -> None:
    for diagnostic in diagnostics:
        if diagnostic.severity.rank >= minimum.rank:
            click.echo(diagnostic.line(), err=True)


def write_output(text: str, out: Path | None) -> None:
    """To stdout as is (plus a newline on a terminal), or atomically to `out`."""
    if out is None:
        # Exact bytes, UTF-8 whatever the locale (click.echo would strip ANSI escapes that an
        # instruction file may really contain).
        if sys.stdout.isatty() and not text.endswith("\n"):
            text += "\n"
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
        sys.stdout.buffer.flush()
        return
    import tempfile

    directory = out.parent if str(out.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, out)
    except OSError as err:
        raise AssemblerError(
            f"{out}: cannot write ({err.strerror}); check the directory exists and is writable"
        ) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ctxasm", prog_name="ctxasm")
def cli() -> None:
    """Assemble, preview and check the instruction context an agent loads."""


@cli.command()
@click.argument("path", default=".", type=click.Path(path_type=Path))
@discovery_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMAT_CHOICES),
    help="Output format (default: the policy's, xml).",
)
@click.option(
    "--date", callback=_date, help="Date for the claude-code format (YYYY-MM-DD; default today)."
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here (atomically) instead of stdout.",
)
@handle_errors
def render(
    path: Path,
    policy: str | None,
    touch: tuple[Path, ...],
    home: Path | None,
    managed_dir: Path | None,
    max_tokens: int | None,
    fmt: str | None,
    date: str | None,
    out: Path | None,
) -> None:
    """Print the context an agent started in PATH would see."""
    from .assembly import assemble

    assembly = assemble(
        path,
        policy=policy,
        home=home,
        managed_dir=managed_dir,
        environ=cli_environ(home),
        touched=touch,
        max_tokens=max_tokens,
    )
    write_output(assembly.render(fmt, date=date), out)
    report(assembly.diagnostics)
    sys.exit(1 if assembly.errors else 0)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="ctxasm")
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 1
    return 0
