"""One request for an assembly: the working directory and everything else a run depends on.

`Options` is the one written list of what a caller may set (`assemble()`, `explain()`,
`lint()` and the `Assembler` all take it as keyword arguments); `Request` is the same with
the defaults filled in from the machine, frozen.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple, TypedDict, Unpack

from .clients import registry
from .compaction import Compaction, checked_compaction
from .discovery import locations
from .display import shown
from .errors import RequestError
from .model import Policy, TokenCounter
from .tokens import estimate_tokens
from .versions import checked_asked

PathLike = str | os.PathLike[str]
PolicySpec = str | os.PathLike[str] | Policy | None


class Options(TypedDict, total=False):
    """What a caller may set besides the working directory (all optional).

    `policy`: a built-in name, a TOML path or a `Policy` (default: the project's
    `.ctxasm.toml` / `[tool.ctxasm]`, else `policy.DEFAULT_POLICY`); `home`, `managed_dir`, `environ`:
    the machine (default: the real one; pass them to make a run hermetic); `touched`: paths
    the agent has read, in order (lazy loading); `max_tokens`: a total budget (default: the
    policy's; 0: none); `counter`: a token counter (default: `estimate_tokens`); `now`: the
    moment for the date (default: now); `client_version`: the release of the policy's client
    to model (a release number, `latest` or `installed`; default: the newest it models);
    `subagent`: the agent type (a built-in one or a custom agent's name) whose context to
    assemble instead of the main agent's, `touched` then being its reads (default: none).
    `after_compact`: the first request after a compaction instead of the start (`"manual"`,
    `"auto"`, True for manual, or a `compaction.Compaction` naming the skills invoked and
    whether the session was continued in another process).
    """

    policy: PolicySpec
    home: PathLike | None
    managed_dir: PathLike | None
    environ: Mapping[str, str] | None
    touched: Sequence[PathLike]
    max_tokens: int | None
    counter: TokenCounter | None
    now: dt.datetime | None
    client_version: str | None
    subagent: str | None
    after_compact: Compaction | str | bool | None


class Request(NamedTuple):
    """`Options` with the defaults filled in: the whole input of one assembly."""

    cwd: Path
    policy: PolicySpec
    home: Path
    managed_dir: Path
    environ: Mapping[str, str]
    touched: tuple[PathLike, ...]
    max_tokens: int | None
    counter: TokenCounter
    now: dt.datetime | None
    client_version: str | None = None  # as asked (`versions.checked_asked`); None: the newest
    subagent: str | None = None  # the agent type asked for; None: the main agent
    after_compact: Compaction | None = None  # the first request after this compaction

    @classmethod
    def of(cls, cwd: PathLike | Request = ".", **options: Unpack[Options]) -> Request:
        """The request for `cwd` with `options` (a `Request` is returned as it is)."""
        if isinstance(cwd, Request):
            if options:
                raise TypeError("pass options inside the Request, not beside it")
            return cwd
        unknown = sorted(set(options) - set(Options.__annotations__))
        if unknown:  # a TypedDict checks nothing at run time
            known = ", ".join(Options.__annotations__)
            raise TypeError(f"unknown option {unknown[0]!r}; the options are {known}")
        home = options.get("home")
        managed = options.get("managed_dir")
        environ = options.get("environ")
        policy = options.get("policy")
        if not isinstance(policy, Policy) and policy is not None:
            checked_path(policy, "policy")
        if options.get("subagent") is not None and options.get("after_compact") not in (
            None,
            False,
        ):
            raise RequestError(
                "--subagent and --after-compact (subagent=, after_compact=): a subagent's "
                "context or the main agent's after a compaction, one at a time; pass one of them"
            )
        return cls(
            cwd=Path(checked_path(cwd, "cwd")),
            policy=policy,
            home=Path(checked_path(home, "home")) if home is not None else locations.default_home(),
            managed_dir=(
                Path(checked_path(managed, "managed_dir"))
                if managed is not None
                else registry.default_managed_dir()
            ),
            environ=MappingProxyType(
                _checked_environ(locations.default_environ() if environ is None else environ)
            ),
            touched=checked_paths(options.get("touched", ()), "touched"),
            max_tokens=_checked_budget(options.get("max_tokens")),
            counter=options.get("counter") or estimate_tokens,
            now=_checked_now(options.get("now")),
            client_version=checked_asked(options.get("client_version")),
            subagent=_checked_subagent(options.get("subagent")),
            after_compact=checked_compaction(options.get("after_compact")),
        )


# Options come from callers' code and data: a wrong one is a `RequestError` naming the
# option, never a TypeError or ValueError from deep inside a run.


def checked_path(value: object, what: str) -> PathLike:
    """`value` when it is a usable path (`str` or `os.PathLike` of `str`, no NUL byte)."""
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if isinstance(text, bytes):
        raise RequestError(f"{what}: {value!r} is bytes; pass a str path (os.fsdecode)")
    if not isinstance(text, str):
        raise RequestError(f"{what}: {type(value).__name__} is not a path; pass a str path")
    if "\0" in text:
        raise RequestError(f"{what}: '{shown(text)}' holds a NUL byte; not a valid path")
    return value  # type: ignore[return-value]  # checked above


def checked_paths(values: object, what: str) -> tuple[PathLike, ...]:
    """A list of paths; one path alone (a str would be read as its characters) is an error."""
    if isinstance(values, str | bytes | os.PathLike):
        raise RequestError(f"{what}: one path where a list is expected; pass [{values!r}]")
    if not isinstance(values, Iterable):
        raise RequestError(f"{what}: {type(values).__name__} is not a list of paths")
    return tuple(checked_path(value, what) for value in values)


def _checked_subagent(value: object) -> str | None:
    if value is None or (isinstance(value, str) and value.strip() and "\0" not in value):
        return value
    raise RequestError(f"subagent: {value!r}; pass the name of an agent type of the client")


def _checked_budget(value: object) -> int | None:
    if value is None or (type(value) is int and value >= 0):
        return value
    raise RequestError(f"max_tokens: {value!r}; pass a whole number of tokens, 0 or more")


def _checked_now(value: object) -> dt.datetime | None:
    if value is None or isinstance(value, dt.datetime):
        return value
    raise RequestError(f"now: {value!r} is not a datetime.datetime; pass one, or None for now")


def checked_date(value: object) -> str:
    """`value` when it is a calendar date written YYYY-MM-DD (what a client prints as today)."""
    if isinstance(value, str) and len(value) == 10 and value[4] == "-" == value[7]:
        try:
            return dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass  # 2026-13-45: the shape of a date, not a day
    raise RequestError(f"date: {value!r} is not a calendar date like 2026-01-31")


def _checked_environ(environ: object) -> dict[str, str]:
    if not isinstance(environ, Mapping):
        raise RequestError(f"environ: {type(environ).__name__} is not a mapping of str to str")
    for name, value in environ.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise RequestError(f"environ: {name!r}: names and values must be str")
        if "\0" in value:
            raise RequestError(f"environ: {name}: holds a NUL byte")
    return dict(environ)
