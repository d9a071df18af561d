"""`assemble()` and the `Assembly` it returns: the library's front door."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from . import locations
from .budget import apply_budget
from .discover import Discovery, build_context, discover_claude_code, with_client_settings
from .lazy import resolve_touched
from .lazy import touch as lazy_touch
from .loader import Context
from .model import Diagnostic, Severity, Source
from .policy import Policy, resolve_policy
from .sections import escape_content
from .tokens import TokenCounter, estimate_tokens

if TYPE_CHECKING:
    from .observer import Observer
    from .skills import Skill
    from .tiers import RequestOptions

PathLike = str | os.PathLike[str]


class Assembly(NamedTuple):
    """The assembled context: ordered sources, what was cut and why, and its renderings.

    A frozen value: rendering it twice gives the same bytes. `touch()` returns a new one.
    """

    policy: Policy
    context: Context
    discovered: tuple[Source, ...]
    sources: tuple[Source, ...]
    diagnostics: tuple[Diagnostic, ...]
    conditional: tuple[Source, ...] = ()
    touched: tuple[str, ...] = ()
    max_tokens: int = 0
    date: str = ""
    counter: TokenCounter = estimate_tokens
    skills: tuple[Skill, ...] = ()

    @property
    def text(self) -> str:
        """The native XML rendering."""
        return self.render("xml")

    def render(
        self,
        fmt: str | None = None,
        *,
        date: str | None = None,
        options: RequestOptions | None = None,
    ) -> str:
        """One output format; `options` shape the `anthropic` and `openai` requests."""
        from .render import render

        return render(self, fmt or self.policy.format, date=date, options=options)

    def skill(self, name: str) -> str:
        """The full text of a listed skill, read now (progressive disclosure: the index
        carries only names and descriptions)."""
        from .skills import find_skill, skill_text

        return skill_text(find_skill(self.skills, name), self.policy.limits.skip_bytes)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    def touch(self, path: PathLike) -> Assembly:
        """The assembly after the agent reads `path`: lazily loaded files appended."""
        if self.policy.discoverer != "claude-code":
            return self
        target = resolve_touched(path)
        already = [s.path for s in self.discovered]
        added, notes = lazy_touch(self.context, self.policy, self.counter, target, already)
        shown = self.context.display(str(target))
        return _finish(
            self,
            discovered=(*self.discovered, *added),
            touched=(*self.touched, shown),
            extra=(*self.discovery_notes(), *notes),
        )

    def dated(self, now: dt.datetime | None = None) -> Assembly:
        """This assembly as of `now` (default: today), for a kept result: a live date moves on
        at midnight; a fixed one (`now`, `CLAUDE_CODE_OVERRIDE_DATE`) does not."""
        date = today(self.context.environ, now)
        return self if self.date == date else self._replace(date=date)

    def detached(self) -> Assembly:
        """The same value without the run's observer: later `touch()` calls must not feed
        a record that is finished (`explain`, the `Assembler`, reuse)."""
        return self._replace(context=self.context._replace(observer=None))

    def attached(self, since: Assembly) -> tuple[Source, ...]:
        """The sources this assembly has and `since` does not (what a touch attached)."""
        known = {s.path for s in since.discovered}
        return tuple(s for s in self.sources if s.path not in known)

    def discovery_notes(self) -> tuple[Diagnostic, ...]:
        return tuple(
            d
            for d in self.diagnostics
            if not d.code.startswith(
                ("budget-", "file-truncated", "index-truncated", "closing-tag")
            )
        )


def _dedupe(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    return tuple(dict.fromkeys(diagnostics))


def _finish(
    base: Assembly,
    *,
    discovered: Sequence[Source],
    touched: Sequence[str],
    extra: Sequence[Diagnostic],
) -> Assembly:
    sources, cut_notes = apply_budget(discovered, base.policy, base.max_tokens, base.counter)
    escaped = [
        Diagnostic(
            "closing-tag-escaped",
            Severity.WARNING,
            s.display,
            f"contains </{s.tag}> {n} time(s); escaped as &lt;/{s.tag}> so it cannot end its section",
        )
        for s in sources
        if not s.dropped and (n := escape_content(s.content, s.tag)[1])
    ]
    return base._replace(
        discovered=tuple(discovered),
        sources=sources,
        touched=tuple(touched),
        diagnostics=_dedupe((*extra, *cut_notes, *escaped)),
    )


def today(environ: Mapping[str, str], now: dt.datetime | None) -> str:
    override = environ.get("CLAUDE_CODE_OVERRIDE_DATE")
    if override:
        return override
    return (now or dt.datetime.now()).date().isoformat()


class Request(NamedTuple):
    """The arguments of one `assemble()` call, defaults filled in."""

    cwd: Path
    policy: str | os.PathLike[str] | Policy | None
    home: Path
    managed_dir: Path
    environ: Mapping[str, str]
    touched: tuple[PathLike, ...]
    max_tokens: int | None
    counter: TokenCounter
    now: dt.datetime | None


def assemble(
    cwd: PathLike = ".",
    *,
    policy: str | os.PathLike[str] | Policy | None = None,
    home: PathLike | None = None,
    managed_dir: PathLike | None = None,
    environ: Mapping[str, str] | None = None,
    touched: Sequence[PathLike] = (),
    max_tokens: int | None = None,
    counter: TokenCounter | None = None,
    now: dt.datetime | None = None,
    environment: bool = False,
    observer: Observer | None = None,
) -> Assembly:
    """Discover, budget and prepare the context an agent started in `cwd` would see.

    `policy` is a built-in name, a TOML path or a `Policy`; by default the project's
    `.ctxasm.toml` / `[tool.ctxasm]` if any, else `claude-code`. `home`, `managed_dir` and
    `environ` default to the real machine; pass them to make a run hermetic. `environment`
    adds the environment section (working directory, platform, git, date), always last.
    `observer` listens to discovery (`explain`, the incremental `Assembler`).

    A request repeated in this process is answered with its last result once everything
    that result came from is proven unchanged on disk (`assembler.reuse`): the instruction
    files are read again and compared byte for byte.
    """
    request = Request(
        cwd=Path(cwd),
        policy=policy,
        home=Path(home) if home is not None else locations.default_home(),
        managed_dir=Path(managed_dir)
        if managed_dir is not None
        else locations.default_managed_dir(),
        environ=MappingProxyType(dict(locations.default_environ() if environ is None else environ)),
        touched=tuple(touched),
        max_tokens=max_tokens,
        counter=counter or estimate_tokens,
        now=now,
    )
    if observer is None and not environment:
        from .reuse import assemble_reusing

        return assemble_reusing(request)
    return run(request, environment=environment, observer=observer)


def run(
    request: Request, *, environment: bool = False, observer: Observer | None = None
) -> Assembly:
    """One discovery run: what `assemble()` does when it has no result to reuse."""
    env = request.environ
    context = build_context(request.cwd, request.home, request.managed_dir, env)
    chosen = resolve_policy(request.policy, context.cwd, context.project_root)
    if chosen.discoverer == "claude-code":
        context = with_client_settings(context)
    if observer is not None:
        context = context._replace(observer=observer)
    count = request.counter
    discovery = _discover(context, chosen, count)
    date = today(env, request.now)
    if environment:
        from .environment import environment_source

        added = environment_source(context, chosen, count, date)
        discovery = discovery._replace(sources=(*discovery.sources, added))
    max_tokens = request.max_tokens
    base = Assembly(
        policy=chosen,
        context=context,
        discovered=discovery.sources,
        sources=(),
        diagnostics=(),
        conditional=discovery.conditional,
        max_tokens=chosen.limits.max_tokens if max_tokens is None else max_tokens,
        date=date,
        counter=count,
        skills=discovery.skills,
    )
    result = _finish(base, discovered=discovery.sources, touched=(), extra=discovery.diagnostics)
    for path in request.touched:
        result = result.touch(path)
    return result


def _discover(context: Context, policy: Policy, counter: TokenCounter) -> Discovery:
    if policy.discoverer == "bootstrap":
        from .bootstrap import discover_bootstrap

        return discover_bootstrap(context, policy, counter)
    discovery = discover_claude_code(context, policy, counter)
    if not policy.skills:
        return discovery
    from .skills import discover_skills

    skills, index, notes = discover_skills(context, policy, counter)
    return discovery._replace(
        sources=(*discovery.sources, *((index,) if index else ())),
        diagnostics=(*discovery.diagnostics, *notes),
        skills=skills,
    )
