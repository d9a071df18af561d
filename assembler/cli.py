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
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, TypeVar

import click

from .display import shown
from .errors import AssemblerError, RequestError
from .model import Diagnostic, Severity

if TYPE_CHECKING:
    from .assembly import Assembly
    from .output.tiers import RequestOptions
    from .request import Options

F = TypeVar("F", bound=Callable[..., Any])


def handle_errors(func: F) -> F:
    """Map expected errors to one line on stderr and their exit code; anything else to 3."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except AssemblerError as err:
            click.echo(f"ctxasm: {shown(str(err))}", err=True)
            sys.exit(err.exit_code)
        except (click.exceptions.Exit, click.ClickException, KeyboardInterrupt, SystemExit):
            raise
        except Exception as err:
            if os.environ.get("CTXASM_DEBUG"):
                raise
            click.echo(
                f"ctxasm: internal error: {type(err).__name__}: {shown(str(err))}; "
                "rerun with CTXASM_DEBUG=1 for the traceback and report it",
                err=True,
            )
            sys.exit(3)

    return wrapper  # type: ignore[return-value]


def _date(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise click.BadParameter(f"{value!r} is not a date like 2026-01-31")
    from .request import checked_date

    try:
        return checked_date(value)
    except RequestError:
        raise click.BadParameter(f"{value!r} is not a calendar date like 2026-01-31") from None


class DiscoveryArgs(NamedTuple):
    """The shared discovery options, handed to a command as `discovery`."""

    policy: str | None
    touched: tuple[Path, ...]
    home: Path | None
    managed_dir: Path | None
    max_tokens: int | None

    def options(self, *, touched: bool = True) -> Options:
        """The library's options (`request.Options`) for `assemble`, `explain`, `lint` and the
        `Assembler`; `touched=False` leaves the touched paths out (watch passes them per run)."""
        return {
            "policy": self.policy,
            "home": self.home,
            "managed_dir": self.managed_dir,
            "environ": cli_environ(self.home),
            "max_tokens": self.max_tokens,
            "touched": self.touched if touched else (),
        }

    def warnings(self) -> list[str]:
        """What was given that cannot be what the user meant (a typo in a path)."""
        out = []
        if self.home is not None and not os.path.isdir(self.home):
            out.append(
                f"--home {shown(str(self.home))}: no such directory; no user instructions, "
                "settings or auto memory are loaded: check the path"
            )
        out += [
            f"--touch {shown(str(t))}: no such file; what the client attaches for that path "
            "is shown all the same"
            for t in self.touched
            if not os.path.lexists(t)
        ]
        return out


def discovery_options(func: F) -> F:
    """The options every command shares to point discovery at any tree, hermetically; the
    command receives them as `discovery` (a `DiscoveryArgs`)."""
    return _discovery_options(func, touch=True)


def start_discovery_options(func: F) -> F:
    """`discovery_options` without `--touch`, for a command that checks what loads at start
    (lint): an option it would ignore is not offered."""
    return _discovery_options(func, touch=False)


def _discovery_options(func: F, *, touch: bool) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs["discovery"] = DiscoveryArgs(
            kwargs.pop("policy"),
            kwargs.pop("touch", ()),
            kwargs.pop("home"),
            kwargs.pop("managed_dir"),
            kwargs.pop("max_tokens"),
        )
        for warning in kwargs["discovery"].warnings():
            click.echo(f"ctxasm: warning: {warning}", err=True)
        return func(*args, **kwargs)

    touch_option = click.option(
        "--touch",
        "touch",
        multiple=True,
        type=click.Path(path_type=Path),
        help="A path the agent reads; lazily loaded files are added. Repeatable.",
    )
    options = [
        click.option(
            "--policy",
            help="Built-in policy name or a policy .toml file (default: the project's config, else the built-in default policy).",
        ),
        *((touch_option,) if touch else ()),
        click.option(
            "--home",
            type=click.Path(file_okay=False, path_type=Path),
            help="Home directory to use instead of ~.",
        ),
        click.option(
            "--managed-dir",
            type=click.Path(file_okay=False, path_type=Path),
            help="Managed policy directory instead of the machine's.",
        ),
        click.option(
            "--max-tokens", type=click.IntRange(min=0), help="Total token budget (0 = none)."
        ),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]


def _ttl(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    if not values:  # click calls back for absent options too: do not import tiers for nothing
        return values
    from .errors import CacheError
    from .output.tiers import make_options

    try:  # each value, and their order whatever tiers the run finds: before any work
        make_options(ttl=values)
    except CacheError as err:
        raise click.BadParameter(str(err).removeprefix("ttl: ")) from None
    return values


_CACHE_OPTIONS = ("ttl", "scope", "model", "min_cache_tokens", "reserve_breakpoint", "openai_api")


def _request_value(given: dict[str, Any]) -> RequestOptions | None:
    """A `RequestOptions` from the cache options as given; None when all are the defaults (so
    `ctxasm render` need not import the tiers module)."""
    defaults = given["openai_api"] == "responses" and all(
        given[name] in (None, False, ()) for name in _CACHE_OPTIONS if name != "openai_api"
    )
    if defaults:
        return None
    from .output.tiers import make_options

    return make_options(
        ttl=given["ttl"],
        scope=given["scope"],
        model=given["model"],
        min_tokens=given["min_cache_tokens"],
        reserve_breakpoint=given["reserve_breakpoint"],
        openai_api=given["openai_api"],
    )


def _cache_options(api: bool) -> list[Callable[[F], F]]:
    options = [
        click.option(
            "--env",
            is_flag=True,
            help="Add the environment section (cwd, platform, git branch and status, date), last.",
        ),
        click.option(
            "--ttl",
            multiple=True,
            callback=_ttl,
            metavar="5m|1h|TIER=5m|TIER=1h",
            help="Cache TTL of every breakpoint, or of one tier (repeatable); longest first.",
        ),
        click.option(
            "--scope",
            type=click.Choice(("global",)),
            help="Cache scope of the breakpoint that ends the static prefix.",
        ),
        click.option(
            "--model", help="Model id; sets the minimum cacheable length (default 1,024)."
        ),
        click.option(
            "--min-cache-tokens",
            type=click.IntRange(min=0),
            help="Minimum cacheable length in tokens (overrides --model).",
        ),
        click.option(
            "--reserve-breakpoint",
            is_flag=True,
            help="Use at most 3 breakpoints: one stays free for the conversation.",
        ),
    ]
    if api:
        options.append(
            click.option(
                "--api",
                "openai_api",
                type=click.Choice(("responses", "chat")),
                default="responses",
                show_default=True,
                help="Request shape of --format openai.",
            )
        )
    return options


def request_options(*, api: bool) -> Callable[[F], F]:
    """The agent-facing options, handed to the command as `request` (a `RequestOptions`, or
    None for the defaults) and `env` (add the environment section)."""

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in _CACHE_OPTIONS if name in kwargs}
            given.setdefault("openai_api", "responses")
            kwargs["request"] = _request_value(given)
            return func(*args, **kwargs)

        decorated: Any = wrapper
        for option in reversed(_cache_options(api)):
            decorated = option(decorated)
        return decorated  # type: ignore[no-any-return]

    return decorate


def cli_environ(home: Path | None) -> dict[str, str]:
    """The process environment; with `--home`, minus the variables that move an agent's home
    directory (`Client.home_variables`), which would win over it."""
    environ = dict(os.environ)
    if home is not None:
        from .clients import registry

        for name in registry.home_variables():
            environ.pop(name, None)
    return environ


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
    from .output.write import write_file, write_stdout

    if out is None:
        return write_stdout(text)
    sources = sources_of(assembly) if assembly is not None else ()
    project = assembly.context.project_root if assembly is not None else None
    write_file(out, text, sources=sources, project=project, option=option)
    return True


def sources_of(assembly: Assembly) -> list[str]:
    """The files an `--out` must not overwrite: every source found, loaded or not."""
    return [s.path for s in (*assembly.discovered, *assembly.conditional)]


_COMMANDS: dict[str, Callable[[], click.Command]] = {}


def _lazy_command(factory: Callable[[], click.Command]) -> Callable[[], click.Command]:
    """Register a command built on first use (see `_LazyGroup`)."""
    _COMMANDS[factory.__name__.removeprefix("_").removesuffix("_command")] = factory
    return factory


class _LazyGroup(click.Group):
    """Builds a command only when it runs (or help lists it): creating every command's click
    options at start-up would cost `ctxasm lint` more than its whole start-up budget allows."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        factory = _COMMANDS.get(cmd_name)
        return factory() if factory is not None else None


class _Command(click.Command):
    """A command whose help ends with an Examples section (`examples=`, one line each)."""

    def __init__(self, *args: Any, examples: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.examples = tuple(examples)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        with formatter.section("Examples"):
            for line in self.examples:
                formatter.write(f"{'':>{formatter.current_indent}}{line}\n")


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ctxasm", prog_name="ctxasm")
def cli() -> None:
    """Assemble, preview and check the instruction context an agent loads."""


def format_option(func: F) -> F:
    """`--format`, one of the format registry's names."""
    from .output import formats

    return click.option(
        "--format",
        "fmt",
        type=click.Choice(formats.names()),
        help="Output format (default: the policy's, xml).",
    )(func)


out_option = click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here instead of stdout (a file is replaced atomically; a FIFO or device is written in place).",
)


def _assembled(path: Path, discovery: DiscoveryArgs, env: bool) -> Assembly:
    """What `render` and `cache` report on."""
    from .assembly import assemble

    return assemble(path, environment=env, **discovery.options())


def _finish(assembly: Assembly) -> NoReturn:
    """Diagnostics on stderr; exit 1 when any is an error."""
    report(assembly.diagnostics)
    sys.exit(1 if assembly.errors else 0)


@_lazy_command
def _render_command() -> click.Command:
    @click.command(
        "render",
        cls=_Command,
        short_help="Print the context an agent started in PATH sees.",
        examples=(
            "ctxasm render                        # what an agent started here loads",
            "ctxasm render services/api --touch services/api/src/app.ts --format markdown",
            "ctxasm render --format anthropic --ttl 1h --out request.json",
        ),
    )
    @click.argument("path", default=".", type=click.Path(path_type=Path))
    @discovery_options
    @format_option
    @click.option(
        "--date",
        callback=_date,
        help="Date for a client's own format (YYYY-MM-DD; default today).",
    )
    @out_option
    @request_options(api=True)
    @handle_errors
    def render(
        path: Path,
        discovery: DiscoveryArgs,
        fmt: str | None,
        date: str | None,
        out: Path | None,
        env: bool,
        request: RequestOptions | None,
    ) -> None:
        """Print the context an agent started in PATH would see."""
        assembly = _assembled(path, discovery, env)
        write_output(assembly.render(fmt, date=date, options=request), out, assembly)
        _finish(assembly)

    return render


def _codes(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())


@_lazy_command
def _lint_command() -> click.Command:
    @click.command(
        "lint",
        cls=_Command,
        short_help="Check instruction files (all by default).",
        examples=(
            "ctxasm lint                          # every instruction file of the repository",
            "ctxasm lint services/api --format sarif   # the instruction files under it",
            "ctxasm lint --cwd services/api --select CTX2,CTX3",
        ),
    )
    @click.argument("files", nargs=-1, type=click.Path(path_type=Path))
    @click.option(
        "--cwd",
        type=click.Path(file_okay=False, path_type=Path),
        help="Also check the whole context of this directory.",
    )
    @start_discovery_options
    @click.option(
        "--select",
        multiple=True,
        help="Only these codes or prefixes (comma-separated, repeatable).",
    )
    @click.option(
        "--ignore",
        multiple=True,
        help="Skip these codes or prefixes (comma-separated, repeatable).",
    )
    @click.option(
        "--format",
        "fmt",
        type=click.Choice(("text", "json", "sarif")),
        default="text",
        show_default=True,
        help="text: one line per finding; json; sarif: for code scanning.",
    )
    @click.option("--strict", is_flag=True, help="Fail (exit 1) on warnings too, not only errors.")
    @click.option("--quiet", "-q", is_flag=True, help="No summary line after the findings.")
    @handle_errors
    def lint(
        files: tuple[Path, ...],
        cwd: Path | None,
        discovery: DiscoveryArgs,
        select: tuple[str, ...],
        ignore: tuple[str, ...],
        fmt: str,
        strict: bool,
        quiet: bool,
    ) -> None:
        """Check instruction files (all of them under . when FILES is empty)."""
        from .lint import lint as run_lint
        from .lint.report import render as render_findings

        result = run_lint(
            files,
            cwd=cwd,
            select=_codes(select),
            ignore=_codes(ignore),
            **discovery.options(touched=False),
        )
        from .lint.report import summary

        write_output(render_findings(result.findings, fmt), None)
        if fmt == "text" and not quiet:
            click.echo(
                summary(result.findings, len(result.files), result.ignored, result.memory),
                err=True,
            )
        sys.exit(1 if result.fails(strict=strict) else 0)

    return lint


@_lazy_command
def _codes_command() -> click.Command:
    @click.command(
        "codes",
        cls=_Command,
        short_help="List every diagnostic code.",
        examples=(
            "ctxasm codes",
            "ctxasm codes --json",
        ),
    )
    @click.option("--json", "as_json", is_flag=True, help="Print the catalogue as JSON.")
    @handle_errors
    def codes_command(as_json: bool) -> None:
        """List every diagnostic code: its name, severity in lint and at load, and summary."""
        from .clients.registry import catalogue
        from .codes import catalogue_json, catalogue_text

        entries = catalogue()
        write_output(catalogue_json(entries) if as_json else catalogue_text(entries), None)

    return codes_command


@_lazy_command
def _cache_command() -> click.Command:
    @click.command(
        "cache",
        cls=_Command,
        short_help="Show the cache tiers, or where the cache breaks.",
        examples=(
            "ctxasm cache --save before.json      # hashes and token counts, no text",
            "ctxasm cache --against before.json   # the first tier that changed, and the cost",
        ),
    )
    @click.argument("path", default=".", type=click.Path(path_type=Path))
    @discovery_options
    @request_options(api=False)
    @click.option(
        "--against",
        type=click.Path(dir_okay=False, path_type=Path),
        help="A snapshot (from --save) to compare with: the first diverging tier and the cost.",
    )
    @click.option(
        "--save",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Write this run's snapshot here (hashes and token counts, no text).",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    @handle_errors
    def cache(
        path: Path,
        discovery: DiscoveryArgs,
        env: bool,
        request: RequestOptions | None,
        against: Path | None,
        save: Path | None,
        as_json: bool,
    ) -> None:
        """Per tier: tokens, hash and breakpoints; against a snapshot: where the cache breaks."""
        from .output.cache import (
            build_report,
            load_snapshot,
            report_json,
            report_text,
            snapshot_text,
        )
        from .output.tiers import plan_for

        previous = load_snapshot(against) if against else None
        assembly = _assembled(path, discovery, env)
        result = build_report(plan_for(assembly, request), previous)
        if save:
            write_output(snapshot_text(result.snapshot), save, assembly, "--save")
            click.echo(f"ctxasm: snapshot saved to {shown(str(save))}", err=True)
        write_output(report_json(result) if as_json else report_text(result, str(against)), None)
        _finish(assembly)

    return cache


@_lazy_command
def _explain_command() -> click.Command:
    @click.command(
        "explain",
        cls=_Command,
        short_help="Show every candidate source and its fate.",
        examples=(
            "ctxasm explain services/api",
            "ctxasm explain --policy all --touch src/app.ts",
            "ctxasm explain --json | jq '.sources[] | select(.status == \"skipped\")'",
        ),
    )
    @click.argument("path", default=".", type=click.Path(path_type=Path))
    @discovery_options
    @click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="The same facts as JSON (schema in docs/explain-and-watch.md).",
    )
    @click.option(
        "--all", "show_all", is_flag=True, help="Also list candidate locations that do not exist."
    )
    @click.option(
        "--client",
        help="A client, with its built-in policy (like --policy); 'all': every agent side by "
        "side, as --policy all.",
    )
    @handle_errors
    def explain(
        path: Path,
        discovery: DiscoveryArgs,
        as_json: bool,
        show_all: bool,
        client: str | None,
    ) -> None:
        """Every candidate source in load order: why it is there, its size, what became of it.
        With --policy all (or --client all): every agent side by side, and where they differ."""
        from .live.explain import explain as run_explain
        from .live.explain_view import json_text, show

        if client is not None and discovery.policy is not None:
            raise click.UsageError("--client and --policy both name a policy; give one")
        if "all" in (client, discovery.policy):
            if show_all:
                raise click.UsageError("--all lists one agent's absent candidates; not with all")
            _explain_side_by_side(path, discovery, as_json)
        options = discovery.options()
        if client is not None:
            from .clients import registry
            from .policy import agent_policy

            options["policy"] = agent_policy(registry.get(client))
        result = run_explain(path, **options)
        if as_json:
            write_output(json_text(result, show_all=show_all), None)
        else:
            import io

            shown_text = io.StringIO()  # written at once: a closed pipe is one error line
            show(
                result,
                file=shown_text,
                environ=os.environ,
                is_tty=sys.stdout is not None and sys.stdout.isatty(),
                show_all=show_all,
            )
            write_output(shown_text.getvalue(), None)
        sys.exit(1 if result.assembly.errors else 0)

    return explain


def _explain_side_by_side(path: Path, discovery: DiscoveryArgs, as_json: bool) -> NoReturn:
    """`explain --policy all`: every agent side by side; exits."""
    import io

    from .live.side_by_side import side_by_side
    from .live.side_by_side_view import json_text, show

    options = discovery.options()
    del options["policy"]
    result = side_by_side(path, **options)
    if as_json:
        write_output(json_text(result), None)
    else:
        text = io.StringIO()  # written at once: a closed pipe is one error line
        is_tty = sys.stdout is not None and sys.stdout.isatty()
        show(result, file=text, environ=os.environ, is_tty=is_tty)
        write_output(text.getvalue(), None)
    sys.exit(1 if result.errors else 0)


@_lazy_command
def _watch_command() -> click.Command:
    @click.command(
        "watch",
        cls=_Command,
        short_help="Render again whenever a source changes.",
        examples=(
            "ctxasm watch --out context.xml",
            "ctxasm watch services/api --format markdown",
        ),
    )
    @click.argument("path", default=".", type=click.Path(path_type=Path))
    @discovery_options
    @format_option
    @out_option
    @click.option(
        "--debounce",
        type=click.IntRange(min=0),
        default=100,
        show_default=True,
        help="Milliseconds of quiet before rendering again.",
    )
    @handle_errors
    def watch(
        path: Path,
        discovery: DiscoveryArgs,
        fmt: str | None,
        out: Path | None,
        debounce: int,
    ) -> None:
        """Render again whenever a source, or a place where one could appear, changes."""
        import contextlib
        import signal

        from .live.assembler import Assembler
        from .live.watch import Watcher, printable

        # Ctrl-C must end a watch even when it was started from a shell that ignores SIGINT in
        # background jobs (Python then installs no handler of its own); SIGTERM ends it cleanly too.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        # watchdog logs a race of its own threads at shutdown as an error ("queue_events()
        # called when the thread is inactive"); with no handler Python would print it to
        # stderr after our last line. What a watch must report reaches us as exceptions.
        import logging

        logging.getLogger("watchdog").addHandler(logging.NullHandler())
        assembler = Assembler(path, **discovery.options(touched=False))
        with (
            Watcher(
                assembler,
                render=lambda a: a.render(fmt),
                touched=discovery.touched,
                debounce=debounce / 1000,
                out=out,
            ) as watcher,
            contextlib.suppress(KeyboardInterrupt),  # Ctrl-C is how a watch ends: exit 0
        ):
            for update in watcher.updates():
                click.echo(update.line, err=True)
                report(update.diagnostics)
                if update.text is not None:
                    text = update.text if out else printable(update.text)
                    if not write_output(text, out, update.assembly):
                        break  # the reader has gone: nobody is left to watch for
        sys.exit(0)

    return watch


def main(argv: Sequence[str] | None = None) -> int:
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="ctxasm")
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 1
    return 0
