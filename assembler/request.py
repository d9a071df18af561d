"""One request for an assembly: the working directory and everything else a run depends on.

`Options` is the one written list of what a caller may set (`assemble()`, `explain()`,
`lint()` and the `Assembler` all take it as keyword arguments); `Request` is the same with
the defaults filled in from the machine, frozen.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple, TypedDict, Unpack

from .discovery import locations
from .model import Policy, TokenCounter
from .tokens import estimate_tokens

PathLike = str | os.PathLike[str]
PolicySpec = str | os.PathLike[str] | Policy | None


class Options(TypedDict, total=False):
    """What a caller may set besides the working directory (all optional).

    `policy`: a built-in name, a TOML path or a `Policy` (default: the project's
    `.ctxasm.toml` / `[tool.ctxasm]`, else `claude-code`); `home`, `managed_dir`, `environ`:
    the machine (default: the real one; pass them to make a run hermetic); `touched`: paths
    the agent has read, in order (lazy loading); `max_tokens`: a total budget (default: the
    policy's; 0: none); `counter`: a token counter (default: `estimate_tokens`); `now`: the
    moment for the date (default: now).
    """

    policy: PolicySpec
    home: PathLike | None
    managed_dir: PathLike | None
    environ: Mapping[str, str] | None
    touched: Sequence[PathLike]
    max_tokens: int | None
    counter: TokenCounter | None
    now: dt.datetime | None


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
        return cls(
            cwd=Path(cwd),
            policy=options.get("policy"),
            home=Path(home) if home is not None else locations.default_home(),
            managed_dir=Path(managed) if managed is not None else locations.default_managed_dir(),
            environ=MappingProxyType(
                dict(locations.default_environ() if environ is None else environ)
            ),
            touched=tuple(options.get("touched", ())),
            max_tokens=options.get("max_tokens"),
            counter=options.get("counter") or estimate_tokens,
            now=options.get("now"),
        )
