"""The agent-facing options of `render` and `cache`: the environment section and how the
request is cached (`--ttl`, `--scope`, `--model`, ...), handed to the command as one
`RequestOptions`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..errors import CacheError
from ..output.tiers import RequestOptions, make_options

F = TypeVar("F", bound=Callable[..., Any])

_CACHE_OPTIONS = ("ttl", "scope", "model", "min_cache_tokens", "reserve_breakpoint", "openai_api")


def _ttl(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    try:  # each value, and their order whatever tiers the run finds: before any work
        make_options(ttl=values)
    except CacheError as err:
        raise click.BadParameter(str(err).removeprefix("ttl: ")) from None
    return values


def _request_value(given: dict[str, Any]) -> RequestOptions | None:
    """A `RequestOptions` from the cache options as given; None when all are the defaults."""
    defaults = given["openai_api"] == "responses" and all(
        given[name] in (None, False, ()) for name in _CACHE_OPTIONS if name != "openai_api"
    )
    if defaults:
        return None
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
    None for the defaults) and `env` (add the environment section); `api`: also `--api`, the
    request shape of `--format openai`."""

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
