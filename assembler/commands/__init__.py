"""`ctxasm`: one module per command, each a thin click adapter over the library, and `main`,
which maps every error to one line and an exit code in one place.

Exit codes (SPEC section 9): 0 ok, 1 findings or over budget, 2 usage or configuration
error, 3 internal error.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import click

from ..display import shown
from ..errors import AssemblerError


class Lazy(NamedTuple):
    """A command the group imports only when it runs or shows its own help."""

    module: str  # under assembler.commands; the command is the module's function of its name
    summary: str  # its line in `ctxasm --help`


COMMANDS = {
    "cache": Lazy("cache", "Show the cache tiers, or where the cache breaks."),
    "codes": Lazy("codes", "List every diagnostic code."),
    "explain": Lazy("explain", "Show every candidate source and its fate."),
    "lint": Lazy("lint", "Check instruction files (all by default)."),
    "render": Lazy("render", "Print the context an agent started in PATH sees."),
    "report": Lazy("report", "Write one HTML page of what every agent loads."),
    "verify": Lazy("verify", "Check ctxasm against the agent's own program, offline."),
    "watch": Lazy("watch", "Render again whenever a source changes."),
}


class LazyGroup(click.Group):
    """click's lazily loading group (click.palletsprojects.com/en/stable/complex/, "Lazily
    Loading Subcommands"): `ctxasm lint` imports the lint command's module and no other, and
    `ctxasm --help` lists the summaries without importing any (click's own listing would load
    every command to ask it for its summary)."""

    def __init__(self, *args: Any, lazy_subcommands: Mapping[str, Lazy], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = lazy_subcommands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.lazy_subcommands)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        lazy = self.lazy_subcommands.get(cmd_name)
        if lazy is None:
            return None
        command = getattr(importlib.import_module(f"{__name__}.{lazy.module}"), cmd_name)
        if not isinstance(command, click.Command):
            raise TypeError(f"{__name__}.{lazy.module}.{cmd_name} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl(
                [(name, self.lazy_subcommands[name].summary) for name in self.list_commands(ctx)]
            )

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        with formatter.section("Examples"):  # as every command's help ends (docs/cli.md)
            for line in _EXAMPLES:
                formatter.write(f"{'':>{formatter.current_indent}}{line}\n")


_EXAMPLES = (
    "ctxasm explain                    # each file an agent here loads, and why",
    "ctxasm render --format markdown   # the context itself, by section",
    "ctxasm lint                       # check every instruction file",
    "ctxasm report --open              # one page of what each agent loads",
    "ctxasm render -h                  # a command's options and examples",
)


def _show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """`--version`: the version and the commit this copy was built from (`version.py`)."""
    if value and not ctx.resilient_parsing:
        from ..version import version_line  # runs git: only when asked

        click.echo(version_line())
        ctx.exit()


@click.group(
    cls=LazyGroup,
    lazy_subcommands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and the commit it was built from, and exit.",
)
def cli() -> None:
    """Assemble, preview and check the instruction context an agent loads."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run `ctxasm` on `argv` (default: the process's arguments) and return its exit code.

    The one place errors become exit codes: click's usage errors print click's message (2);
    an `AssemblerError` is one line (its `exit_code`, 2 but for an unmeetable budget); a
    command returns 1 for findings itself; anything else is a bug: one line and 3, or the
    traceback with CTXASM_DEBUG set.
    """
    try:
        code = cli.main(args=argv, prog_name="ctxasm", standalone_mode=False)
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except click.Abort:  # Ctrl-C; click has ended the ^C line
        click.echo("Aborted!", err=True)
        return 1
    except AssemblerError as err:
        click.echo(f"ctxasm: {shown(str(err))}", err=True)
        return err.exit_code
    except SystemExit as exit_:  # click's own: a closed pipe, shell completion
        return exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    except Exception as err:
        if os.environ.get("CTXASM_DEBUG"):
            raise
        click.echo(
            f"ctxasm: internal error: {type(err).__name__}: {shown(str(err))}; "
            "rerun with CTXASM_DEBUG=1 for the traceback and report it",
            err=True,
        )
        return 3
    return code if isinstance(code, int) else 0
