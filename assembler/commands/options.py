"""The options several commands share and the values they hand a command: discovery (point
it at any tree, hermetically) and `--out`; and `Command`, whose help ends with examples."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import click

from ..clients import registry
from ..display import shown

if TYPE_CHECKING:
    from ..request import Options

F = TypeVar("F", bound=Callable[..., Any])


class Command(click.Command):
    """A command whose help ends with an Examples section (`examples=`, one line each)."""

    def __init__(self, *args: Any, examples: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.examples = tuple(examples)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        with formatter.section("Examples"):
            for line in self.examples:
                formatter.write(f"{'':>{formatter.current_indent}}{line}\n")


class DiscoveryArgs(NamedTuple):
    """The shared discovery options, handed to a command as `discovery`."""

    policy: str | None
    touched: tuple[Path, ...]
    home: Path | None
    managed_dir: Path | None
    max_tokens: int | None
    client_version: str | None = None

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
            "client_version": self.client_version,
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


def cli_environ(home: Path | None) -> dict[str, str]:
    """The process environment; with `--home`, minus the variables that move an agent's home
    directory (`Client.home_variables`), which would win over it."""
    environ = dict(os.environ)
    if home is not None:
        for name in registry.home_variables():
            environ.pop(name, None)
    return environ


def _client_version(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from ..errors import RequestError
    from ..versions import checked_asked

    try:
        return checked_asked(value)
    except RequestError as err:
        raise click.BadParameter(str(err)) from None


def discovery_options(func: F) -> F:
    """The options every command shares to point discovery at any tree, hermetically; the
    command receives them as `discovery` (a `DiscoveryArgs`)."""
    return _discovery_options(func, touch=True)


def start_discovery_options(func: F) -> F:
    """`discovery_options` without `--touch`, for a command that checks what loads at start
    (lint): an option it would ignore is not offered."""
    return _discovery_options(func, touch=False)


def agents_discovery_options(func: F) -> F:
    """`discovery_options` without `--policy`, for a command that runs every agent with its
    own policy (report)."""
    return _discovery_options(func, touch=True, policy=False)


def _discovery_options(func: F, *, touch: bool, policy: bool = True) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs["discovery"] = DiscoveryArgs(
            kwargs.pop("policy", None),
            kwargs.pop("touch", ()),
            kwargs.pop("home"),
            kwargs.pop("managed_dir"),
            kwargs.pop("max_tokens"),
            kwargs.pop("client_version"),
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
    policy_option = click.option(
        "--policy",
        help="Built-in policy name or a policy .toml file (default: the project's config, else the built-in default policy).",
    )
    options = [
        *((policy_option,) if policy else ()),
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
        click.option(
            "--client-version",
            callback=_client_version,
            metavar="VERSION|latest|installed",
            help="The release of the policy's client to model (default: the newest modelled; "
            "installed: ask the installed client).",
        ),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]


path_argument = click.argument("path", default=".", type=click.Path(path_type=Path))

out_option = click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write here instead of stdout (a file is replaced atomically; a FIFO or device is written in place).",
)

subagent_option = click.option(
    "--subagent",
    metavar="NAME",
    help="What a subagent of this type receives instead of the main agent (general-purpose, "
    "Explore, Plan, fork, or a custom agent's name); --touch paths are its reads.",
)


def compact_options(func: F) -> F:
    """`--after-compact` and its details; the command receives `after` (a
    `compaction.Compaction`, or None without `--after-compact`)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from ..compaction import Compaction, Trigger

        asked, trigger = kwargs.pop("after_compact"), kwargs.pop("compact")
        skills, continued = tuple(kwargs.pop("skill")), kwargs.pop("continued")
        if not asked and (trigger is not None or skills or continued):
            raise click.UsageError(
                "--compact, --skill and --continued describe --after-compact: add it"
            )
        kwargs["after"] = (
            Compaction(Trigger(trigger or "manual"), skills, continued) if asked else None
        )
        return func(*args, **kwargs)

    options = [
        click.option(
            "--after-compact",
            is_flag=True,
            help="What the model has in the first request after a compaction (--touch: files "
            "read before it).",
        ),
        click.option(
            "--compact",
            type=click.Choice(["manual", "auto"]),
            help="How the compaction started (default: manual, as /compact).",
        ),
        click.option(
            "--skill",
            multiple=True,
            metavar="NAME",
            help="A skill invoked before the compaction. Repeatable.",
        ),
        click.option(
            "--continued",
            is_flag=True,
            help="The first request comes from another process (a continued session).",
        ),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]
