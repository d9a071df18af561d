"""`assemble()` and the `Assembly` it returns: the library's front door.

A run resolves the request's machine facts and policy, asks the policy's client what it
loads (`clients.registry`), applies the budget and attaches what each touched path adds.
Every file access goes through one `Disk`; an observer on it (`explain`, the incremental
`Assembler`) hears all of them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Unpack

from . import codes
from .budget import apply_budget
from .clients import registry
from .clients.base import Agents, Client, touch_skips
from .compaction import AfterCompact, Compaction, CompactionProfile
from .discovery.context import Context, Discovery, Run, build_context
from .discovery.disk import Disk, Observer
from .discovery.touches import resolve_touched
from .errors import RequestError, SkillError
from .model import AgentType, Diagnostic, Policy, Severity, Skill, Source, TokenCounter, Why
from .output.sections import Escaped, escape_content, neutral_boundary, section_content
from .policy import resolve_policy
from .request import Options, PathLike, Request, checked_path
from .tokens import estimate_tokens
from .versions import NO_VERSION, ClientVersion

if TYPE_CHECKING:
    from .output.tiers import RequestOptions


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
    notes: tuple[Diagnostic, ...] = ()  # what discovery said (the budget's notes come after)
    state: Any = None  # the client's own, for later touches (`Discovery.state`)
    version: ClientVersion = NO_VERSION  # the client's release modelled, and how it was chosen
    agent: AgentType | None = None  # the subagent whose context this is (None: the main agent)
    compacted: AfterCompact | None = None  # the first request after a compaction, when asked

    @property
    def client_version(self) -> str:
        """The release of the client this assembly models ("" for a client that models no
        particular release)."""
        return self.version.modelled

    @property
    def text(self) -> str:
        """The native XML rendering without the final newline that ends it as a file (the
        seed workspace's string byte for byte), with the dynamic boundary marker between the
        halves: a marker for ctxasm and for caches, never for a model (send `static_text` and
        `dynamic_text`)."""
        return self.render("xml").removesuffix("\n")

    @property
    def cwd(self) -> str:
        """The directory the agent starts in (its real path), absolute."""
        return str(self.context.cwd)

    @property
    def static_text(self) -> str:
        """The sections before the dynamic boundary (the same for every user and every
        day: cache it), without the marker; "" when there are none."""
        from .output.tiers import plan_for

        return plan_for(self).static_text

    @property
    def dynamic_text(self) -> str:
        """The sections after the dynamic boundary, without the marker."""
        from .output.tiers import plan_for

        return plan_for(self).dynamic_text

    def render(
        self,
        fmt: str | None = None,
        *,
        date: str | None = None,
        options: RequestOptions | None = None,
    ) -> str:
        """One output format; `options` shape the `anthropic` and `openai` requests."""
        from .output.render import render

        return render(self, fmt or self.policy.format, date=date, options=options)

    def skill(self, name: str) -> str:
        """The full text of a listed skill, read now (progressive disclosure: the index
        carries only names and descriptions)."""
        client = registry.get(self.policy.client)
        return client.skill_text(_find_skill(self.skills, name), self.policy.limits.skip_bytes)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    def touch(self, path: PathLike, *, observer: Observer | None = None) -> Assembly:
        """The assembly after the agent reads `path`: lazily loaded files appended."""
        run = Run(self.context, self.policy, self.counter, Disk(observer), version=self.version)
        target = resolve_touched(checked_path(path, "touched"), run.disk)
        client = registry.get(self.policy.client)
        already = touch_skips(client, self.version, self.discovered)
        added = client.touch(run, self.state, target, already)
        if added is None:  # this client loads nothing lazily
            return self
        return _finish(
            self,
            discovered=(*self.discovered, *added.sources),
            touched=(*self.touched, self.context.display(str(target))),
            notes=(*self.notes, *added.diagnostics),
        )

    def agents(self, *, observer: Observer | None = None, lint: bool = False) -> Agents:
        """The agent types this agent can start as subagents (read now), with what is wrong
        with their definitions; with `lint`, also where its files speak to types that will
        not see them."""
        client = registry.get(self.policy.client)
        run = Run(self.context, self.policy, self.counter, Disk(observer), version=self.version)
        return client.agents(run, self.discovered if lint else ())

    def subagent(self, name: str, *, observer: Observer | None = None) -> Assembly:
        """What a subagent of type `name`, started by this agent now, has: the files it
        receives of those loaded at start (`AgentType`), and none of what this agent's reads
        attached (a fork shares them); its `touch()`es never change this assembly. An
        unknown type is a `RequestError` naming the types there are."""
        agents = self.agents(observer=observer)
        agent = agents.named(name)
        if agent is None:
            client = registry.get(self.policy.client)
            raise RequestError(_no_agent(client, self.version, name, agents.types))
        notes = (*self.notes, *agents.diagnostics)
        if agent.shares_parent:
            return _finish(self._replace(agent=agent), discovered=self.discovered,
                           touched=self.touched, notes=notes)  # fmt: skip
        started = tuple(s for s in self.discovered if not s.read_attached)
        return _finish(self._replace(agent=agent), discovered=started, touched=(), notes=notes)

    def reread(self) -> Assembly:
        """The same start read again from disk (same machine, policy, budget and release;
        no touches): what a client re-reads after a compaction, edits included."""
        request = Request(
            cwd=self.context.cwd,
            policy=self.policy,
            home=self.context.home,
            managed_dir=self.context.managed_dir,
            environ=self.context.environ,
            touched=(),
            max_tokens=self.max_tokens,
            counter=self.counter,
            now=None,
            client_version=self.version.modelled or None,
        )
        return run(request)

    def compaction_profile(self, context_window: int | None) -> CompactionProfile:
        """How this assembly's client compacts a conversation at the release modelled, for a
        model whose context window is `context_window` (None: none configured), for
        `conversation.Conversation(profile=...)`; a `RequestError` when not modelled."""
        client = registry.get(self.policy.client)
        found = client.compaction_profile(self.version, self.context.environ, context_window)
        if found is None:
            raise RequestError(
                f"compaction_profile: {client.title}'s compaction is not modelled; use the "
                "provider-neutral lines (Conversation without profile=)"
            )
        return found

    def dated(self, now: dt.datetime | None = None) -> Assembly:
        """This assembly as of `now` (default: today), for a kept result: a live date moves on
        at midnight; a fixed one (`now`, or one the client's environment fixes) does not."""
        date = today(registry.get(self.policy.client), self.context.environ, now)
        return self if self.date == date else self._replace(date=date)

    def attached(self, since: Assembly) -> tuple[Source, ...]:
        """The sources this assembly has and `since` does not (what a touch attached)."""
        known = {s.key for s in since.discovered}
        return tuple(s for s in self.sources if s.key not in known)


def _find_skill(skills: Sequence[Skill], name: str) -> Skill:
    """The listed skill called `name` (or in the folder of that name)."""
    for skill in skills:
        if name in (skill.name, skill.directory):
            return skill
    known = ", ".join(s.name for s in skills) or "none"
    raise SkillError(f"{name}: no such skill; listed skills: {known}")


def _no_agent(
    client: Client[Any], version: ClientVersion, name: str, types: Sequence[AgentType]
) -> str:
    """A subagent type the client does not have, in its answer's terms."""
    at = f"{client.title} {version.modelled}".rstrip()
    if not types:
        return f"subagent {name}: {at} starts no subagents; leave --subagent out"
    names = ", ".join(sorted((a.name for a in types), key=str.lower))
    answer = f"Agent type '{name}' not found"
    return f'subagent {name}: {at} answers "{answer}"; its agent types: {names}'


def _received(sources: Iterable[Source], agent: AgentType | None) -> tuple[Source, ...]:
    """What `agent` receives of the discovered sources: its own reads' files always; the
    skills list when it gets one; the files loaded at start when it gets them."""
    if agent is None:
        return tuple(sources)
    return tuple(s for s in sources if receives(agent, s))


def receives(agent: AgentType, source: Source) -> bool:
    """Whether `agent` has `source` of what its parent discovered."""
    if source.lazy or source.reason.why is Why.ENVIRONMENT:
        return True
    if source.reason.why is Why.SKILLS:
        return agent.skills
    return agent.instructions


def _dedupe(diagnostics: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    return tuple(dict.fromkeys(diagnostics))


def _finish(
    base: Assembly,
    *,
    discovered: Sequence[Source],
    touched: Sequence[str],
    notes: Sequence[Diagnostic],
) -> Assembly:
    """Budget the discovered sources and say what was cut or escaped."""
    received = _received(discovered, base.agent)
    sources, cut_notes = apply_budget(received, base.policy, base.max_tokens, base.counter)
    escaped = [
        note
        for s in sources
        if not s.dropped
        for note in forged_structure(
            s, escape_content(section_content(s), base.policy, s.tag), base.policy.boundary
        )
    ]
    return base._replace(
        discovered=tuple(discovered),
        sources=sources,
        touched=tuple(touched),
        notes=tuple(notes),
        diagnostics=_dedupe((*notes, *cut_notes, *escaped)),
    )


def forged_structure(source: Source, found: Escaped, boundary: str) -> list[Diagnostic]:
    """What a source's content held of ctxasm's structure, and how it was neutralised."""
    notes = []
    if found.closing:
        tags = tuple(dict.fromkeys(found.closing))
        mine = tags == (source.tag.lower(),)
        written = (source.tag,) if mine else tags
        notes.append(
            codes.CLOSING_TAG.at(
                source.display,
                f"contains {', '.join(f'</{t}>' for t in written)} {len(found.closing)} time(s); "
                f"escaped as {', '.join(f'&lt;/{t}>' for t in written)} "
                f"so it cannot end {'its' if mine else 'a'} section",
            )
        )
    if found.opening or found.boundaries:
        opened = tuple(dict.fromkeys(found.opening))
        markers = [boundary] if found.boundaries else []
        forged = [f"<{t}>" for t in opened] + markers
        neutral = [f"&lt;{t}" for t in opened] + [neutral_boundary(m) for m in markers]
        notes.append(
            codes.FORGED_STRUCTURE.at(
                source.display,
                f"contains {', '.join(forged)} {len(found.opening) + found.boundaries} time(s); "
                f"neutralised as {', '.join(neutral)} so it cannot start a section or move "
                "the boundary",
            )
        )
    if found.headings:
        notes.append(
            codes.FORGED_STRUCTURE.at(
                source.display,
                f"contains {found.headings} line(s) shaped like a section heading of the "
                "markdown format (## N. `path` (layer)); escaped as "
                "\\## there so it cannot start a section",
            )
        )
    return notes


def version_notes(version: ClientVersion) -> tuple[Diagnostic, ...]:
    """The one line that says a run models another release than the one asked for, and the
    one that says which `PATH` entries the installed client was not looked for in."""
    if not version.note:
        return version.path_notes
    return (*version.path_notes, codes.VERSION_APPROXIMATED.at("<client-version>", version.note))


def today(client: Client[Any], environ: Mapping[str, str], now: dt.datetime | None) -> str:
    """The date of a run: the one `client`'s environment fixes (`Client.date`), else `now`'s
    (default: the current moment's)."""
    return client.date(environ) or (now or dt.datetime.now()).date().isoformat()


def assemble(
    cwd: PathLike | Request = ".", *, environment: bool = False, **options: Unpack[Options]
) -> Assembly:
    """Discover, budget and prepare the context an agent started in `cwd` would see.

    `options` are those of `request.Options` (policy, home, managed_dir, environ, touched,
    max_tokens, counter, now, client_version, subagent), or pass a whole `Request` as `cwd`.
    `environment` adds the environment section (working directory, platform, git, date),
    always last.
    """
    return run(Request.of(cwd, **options), environment=environment)


def run(
    request: Request, *, environment: bool = False, observer: Observer | None = None
) -> Assembly:
    """One discovery run for `request`, every file access told to `observer`."""
    disk = Disk(observer)
    context = build_context(request.cwd, request.home, request.managed_dir, request.environ, disk)
    policy = resolve_policy(request.policy, context.cwd, context.project_root, disk)
    client = registry.get(policy.client)
    version = client.choose_version(request.client_version, request.environ)
    discovery = client.discover(Run(context, policy, request.counter, disk, version=version))
    date = today(client, request.environ, request.now)
    if environment:
        discovery = _with_environment(discovery, context, policy, request.counter, date)
    base = Assembly(
        policy=policy,
        context=context,
        discovered=discovery.sources,
        sources=(),
        diagnostics=(),
        conditional=discovery.conditional,
        max_tokens=policy.limits.max_tokens if request.max_tokens is None else request.max_tokens,
        date=date,
        counter=request.counter,
        skills=discovery.skills,
        state=discovery.state,
        version=version,
    )
    notes = (*version_notes(version), *discovery.diagnostics)
    result = _finish(base, discovered=discovery.sources, touched=(), notes=notes)
    if request.subagent is not None:  # the touches are the subagent's reads
        result = result.subagent(request.subagent, observer=observer)
    for path in request.touched:
        result = result.touch(path, observer=observer)
    if request.after_compact is not None:
        result = after_compact(result, request.after_compact, request.touched, observer)
    return result


def after_compact(
    assembly: Assembly,
    compaction: Compaction,
    touched: Sequence[PathLike],
    observer: Observer | None = None,
) -> Assembly:
    """`assembly` with what its client keeps at `compaction` (`Client.after_compact`): the
    touched paths are the files the model read before it."""
    client = registry.get(assembly.policy.client)
    disk = Disk(observer)
    targets = [str(resolve_touched(path, disk)) for path in touched]
    reads = [(target, assembly.context.display(target)) for target in targets]
    limit = assembly.policy.limits.skip_bytes
    skills = []
    for name in compaction.skills:
        skill = _find_skill(assembly.skills, name)
        skills.append((skill, client.skill_text(skill, limit)))
    after = client.after_compact(
        assembly.sources, reads, skills, compaction, assembly.version, disk, limit
    )
    if after is None:
        raise RequestError(
            f"--after-compact (after_compact=): what survives a compaction is not modelled for "
            f"{client.title}; choose a policy whose client models it (docs/cli.md)"
        )
    return assembly._replace(compacted=after)


def _with_environment(
    discovery: Discovery[Any], context: Context, policy: Policy, counter: TokenCounter, date: str
) -> Discovery[Any]:
    from .discovery.environment import environment_source

    added = environment_source(context, policy, counter, date)
    return discovery._replace(sources=(*discovery.sources, added))
