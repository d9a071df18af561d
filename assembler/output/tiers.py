"""Stability tiers and prompt-cache breakpoints: one block per tier, at most four breakpoints.

The native sections, most stable first, are grouped into tiers: each run of sections of one
layer (base, managed, user, project, local, subdirectory, memory, environment) is one block.
A provider caches a *prefix* [API-PC]: an edit invalidates its block and every block after
it, so with a breakpoint at the end of each tier an edit re-processes only its tier and what
follows. The Anthropic rules this module obeys (anthropics' prompt-caching page, snapshot
2026-08-22, anchors section 2):
  * at most 4 breakpoints per request; one may be left for the conversation's moving one;
  * a prefix below the model's minimum cacheable length is not cached (and no error is
    returned), so a breakpoint there is not spent;
  * mixed TTLs must be longest first (1h breakpoints before 5m ones);
  * prices relative to base input: 5-minute write 1.25x, 1-hour write 2x, read 0.1x.
With more tiers than breakpoints, the breakpoints go where they minimise the expected cost of
a request under a model of how often each layer changes (`CHANGES_PER_DAY`).
"""

from __future__ import annotations

import enum
import itertools
import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ..errors import CacheError
from ..model import Assembled, Layer
from ..tokens import estimated
from .sections import SEPARATOR, boundary_tokens, section_text, sections, source_tokens

MAX_BREAKPOINTS = 4
DEFAULT_MIN_TOKENS = 1024
READ_MULTIPLIER = 0.1


class TTL(enum.Enum):
    FIVE_MINUTES = "5m"
    ONE_HOUR = "1h"

    @property
    def write_multiplier(self) -> float:
        return 2.0 if self is TTL.ONE_HOUR else 1.25

    @property
    def seconds(self) -> int:
        return 3600 if self is TTL.ONE_HOUR else 300


# Minimum cacheable prompt length per model family, as printed on the Claude API page
# (snapshot 2026-08-22, anchors section 2). Looked up by the model id without "claude-", a
# date, a Bedrock version or a Vertex "@..." suffix; any other model gets DEFAULT_MIN_TOKENS.
MIN_CACHEABLE_TOKENS: Mapping[str, int] = {
    "opus-5": 512,
    "fable-5": 512,
    "mythos-5": 512,
    "opus-4-8": 1024,
    "sonnet-5": 1024,
    "sonnet-4-6": 1024,
    "sonnet-4-5": 1024,
    "opus-4-1": 1024,
    "opus-4": 1024,
    "sonnet-4": 1024,
    "mythos-preview": 2048,
    "opus-4-7": 2048,
    "haiku-3-5": 2048,
    "3-5-haiku": 2048,
    "opus-4-6": 4096,
    "opus-4-5": 4096,
    "haiku-4-5": 4096,
}

# How often each layer changes, in edits per working day: the edit history (managed
# monthly, user weekly, project daily, local and memory several times a day); the base text
# changes with releases, the environment and lazily attached files with every session.
CHANGES_PER_DAY: Mapping[Layer, float] = {
    Layer.BASE: 1 / 30,
    Layer.MANAGED: 1 / 22,
    Layer.USER: 1 / 5,
    Layer.PROJECT: 1.0,
    Layer.LOCAL: 4.0,
    Layer.SUBDIRECTORY: 10.0,
    Layer.MEMORY: 6.0,
    Layer.ENVIRONMENT: 10.0,
}
_MODEL_SUFFIX = re.compile(r"(-\d{8})?(-v\d+(:\d+)?)?(@.*)?$")
REQUESTS_PER_DAY = 480  # one request a minute over an eight-hour day


def min_cacheable_tokens(model: str | None) -> int:
    """The minimum cacheable length for a model id (e.g. `claude-haiku-4-5-20251001`)."""
    if not model:
        return DEFAULT_MIN_TOKENS
    name = model.lower().removeprefix("anthropic.").removeprefix("claude-")
    # Exact families only: a prefix would give `opus-4-5` the minimum of `opus-4`.
    return MIN_CACHEABLE_TOKENS.get(_MODEL_SUFFIX.sub("", name), DEFAULT_MIN_TOKENS)


class Tier(NamedTuple):
    """One block: a run of sections of one layer, with what caching it needs to know."""

    name: str
    layer: Layer
    text: str
    tokens: int
    start: int  # tokens of every tier before this one
    sha256: str
    static: bool  # before the dynamic boundary: the same for every user
    sources: tuple[str, ...]

    @property
    def end(self) -> int:
        return self.start + self.tokens


class RequestOptions(NamedTuple):
    """How the agent-facing formats place breakpoints and shape the request."""

    ttl: TTL = TTL.FIVE_MINUTES
    tier_ttls: tuple[tuple[str, TTL], ...] = ()  # per tier name, overriding `ttl`
    scope: str | None = None  # "global": on the breakpoint that ends the static prefix
    min_tokens: int = DEFAULT_MIN_TOKENS
    reserve_breakpoint: bool = False
    openai_api: str = "responses"  # or "chat"
    changes_per_day: tuple[tuple[Layer, float], ...] = ()  # overrides of CHANGES_PER_DAY


def parse_ttl(spec: str) -> tuple[str | None, TTL]:
    """`5m`, `1h` (every tier) or `TIER=5m`, `TIER=1h` (one tier)."""
    tier, _, value = spec.rpartition("=")
    try:
        ttl = TTL(value.strip())
    except ValueError:
        raise CacheError(f"ttl: {spec!r} is not 5m, 1h, or TIER=5m|1h") from None
    name = tier.strip().lower()
    if tier and name not in {layer.value for layer in Layer}:
        raise CacheError(
            f"ttl: unknown tier {name!r}; use one of {', '.join(layer.value for layer in Layer)}"
        )
    return (name or None), ttl


def _check_explicit_order(per_tier: dict[str, TTL]) -> None:
    """What is wrong with the TTLs whatever tiers a run finds, said before any work: an
    unknown tier, or a tier given a longer TTL than an earlier tier was given."""
    known = [layer.value for layer in Layer]
    for name in per_tier:
        if name not in known:
            raise CacheError(f"ttl: unknown tier {name!r}; use one of {', '.join(known)}")
    given = [(name, per_tier[name]) for name in known if name in per_tier]
    for i, (name, ttl) in enumerate(given):
        for earlier, before in given[:i]:
            if ttl.seconds > before.seconds:
                raise CacheError(
                    f"ttl: {name}={ttl.value} follows {earlier} at {before.value}; the API "
                    f"requires longer TTLs first: give {ttl.value} to every tier before {name} too"
                )


def make_options(
    *,
    ttl: Sequence[str] = (),
    scope: str | None = None,
    model: str | None = None,
    min_tokens: int | None = None,
    reserve_breakpoint: bool = False,
    openai_api: str = "responses",
) -> RequestOptions:
    """Options from their command-line spelling; `min_tokens` wins over the model's minimum."""
    default, per_tier = TTL.FIVE_MINUTES, {}
    for spec in ttl:
        name, value = parse_ttl(spec)
        if name is None:
            default = value
        else:
            per_tier[name] = value
    _check_explicit_order(per_tier)
    return RequestOptions(
        ttl=default,
        tier_ttls=tuple(per_tier.items()),
        scope=scope,
        min_tokens=min_cacheable_tokens(model) if min_tokens is None else min_tokens,
        reserve_breakpoint=reserve_breakpoint,
        openai_api=openai_api,
    )


class Breakpoint(NamedTuple):
    tier: int
    ttl: TTL
    scope: str | None = None


class CachePlan(NamedTuple):
    tiers: tuple[Tier, ...]
    breakpoints: tuple[Breakpoint, ...]
    min_tokens: int
    slots: int
    notes: tuple[str, ...] = ()
    estimated: bool = False  # the counts are ctxasm's estimate (`tokens.estimated`)

    def at(self, index: int) -> Breakpoint | None:
        return next((b for b in self.breakpoints if b.tier == index), None)

    @property
    def static_text(self) -> str:
        return SEPARATOR.join(t.text for t in self.tiers if t.static)

    @property
    def dynamic_text(self) -> str:
        return SEPARATOR.join(t.text for t in self.tiers if not t.static)

    @property
    def total_tokens(self) -> int:
        return self.tiers[-1].end if self.tiers else 0


def text_hash(text: str) -> str:
    import hashlib  # OpenSSL costs ~2 ms to load: only on the paths that hash

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def tiers(assembly: Assembled) -> tuple[Tier, ...]:
    """The assembly's native sections grouped into tiers (the boundary marker is structure
    here, not text: the static prefix is the leading run of static tiers)."""
    policy = assembly.policy
    static_layers = set(policy.static_layers) - {Layer.ENVIRONMENT}
    groups: list[tuple[Layer, list[str], list[str], list[int]]] = []
    for section in sections(assembly.sources, policy):
        if section.source is None:
            continue
        layer = section.source.layer
        if not groups or groups[-1][0] is not layer:
            groups.append((layer, [], [], []))
        groups[-1][1].append(section_text(section))
        groups[-1][2].append(section.source.display)
        groups[-1][3].append(source_tokens(section.source, policy, assembly.counter))
    out: list[Tier] = []
    start = 0
    still_static = True
    for layer, texts, displays, counts in groups:
        text = SEPARATOR.join(texts)
        if not text:
            continue  # the API rejects empty text blocks
        still_static = still_static and layer in static_layers
        tokens = sum(counts)  # its sources' counts, as every view counts them
        out.append(
            Tier(
                layer.value,
                layer,
                text,
                tokens,
                start,
                text_hash(text),
                still_static,
                tuple(displays),
            )
        )
        start += tokens
    return tuple(out)


def tier_ttls(tiers: Sequence[Tier], options: RequestOptions) -> list[TTL]:
    """Each tier's TTL. Longer TTLs must come first, as the API requires [API-PC]: a tier
    without a TTL of its own never gets a longer one than the tier before it (so `1h` with
    `local=5m` means 1 hour up to the local tier, 5 minutes from there on); a tier given a
    longer TTL than the one before it is an error."""
    chosen = dict(options.tier_ttls)
    known = [layer.value for layer in Layer]
    for name in chosen:
        if name not in known:
            raise CacheError(f"ttl: unknown tier {name!r}; use one of {', '.join(known)}")
    ttls: list[TTL] = []
    for tier in tiers:
        ttl = chosen.get(tier.name)
        if ttls and ttl is not None and ttl.seconds > ttls[-1].seconds:
            raise CacheError(
                f"ttl: {tier.name}={ttl.value} follows {tiers[len(ttls) - 1].name} at "
                f"{ttls[-1].value}; the API requires longer TTLs first: give {ttl.value} to "
                f"every tier before {tier.name} too"
            )
        if ttl is None:
            ttl = options.ttl
            if ttls and ttl.seconds > ttls[-1].seconds:
                ttl = ttls[-1]
        ttls.append(ttl)
    return ttls


def change_probabilities(tiers: Sequence[Tier], options: RequestOptions) -> list[float]:
    rates = {**CHANGES_PER_DAY, **dict(options.changes_per_day)}
    return [min(1.0, rates.get(t.layer, 1.0) / REQUESTS_PER_DAY) for t in tiers]


def expected_cost(
    tiers: Sequence[Tier], positions: Sequence[int], ttls: Sequence[TTL], probs: Sequence[float]
) -> float:
    """The expected price of one request, in base-input tokens, with breakpoints at
    `positions` (sorted tier indices), when each tier changes with probability `probs[i]`.

    A change first seen at tier j reads the prefix up to the last breakpoint before j (its
    cache entry was written by an earlier request), writes every breakpoint's segment from
    there on at its TTL's rate, and pays full price for anything after the last breakpoint.
    """
    if not tiers:
        return 0.0
    total = tiers[-1].end
    cached = tiers[positions[-1]].end if positions else 0
    cost = float(total - cached)  # past the last breakpoint: never cached
    unchanged = 1.0
    for j in range(len(tiers)):
        p = unchanged * probs[j]
        unchanged *= 1 - probs[j]
        if p == 0:
            continue
        cost += p * rewrite_cost(tiers, positions, ttls, j)
    return cost + unchanged * READ_MULTIPLIER * cached


def rewrite_cost(
    tiers: Sequence[Tier], positions: Sequence[int], ttls: Sequence[TTL], first_changed: int
) -> float:
    """Read + write price (up to the last breakpoint) when `first_changed` is the first tier
    that differs from the cached request."""
    hit = 0
    for b in positions:
        if b < first_changed:
            hit = tiers[b].end
    cost = READ_MULTIPLIER * hit
    previous = hit
    for b in positions:
        if tiers[b].end > previous:
            cost += (tiers[b].end - previous) * ttls[b].write_multiplier
            previous = tiers[b].end
    return cost


def plan(tiers: Sequence[Tier], options: RequestOptions | None = None) -> CachePlan:
    """Where the breakpoints go: at most 4 (3 with one reserved), only where the prefix
    reaches the minimum cacheable length, TTLs longest first, the cheapest such placement."""
    options = options or RequestOptions()
    slots = MAX_BREAKPOINTS - (1 if options.reserve_breakpoint else 0)
    tiers = tuple(tiers)
    ttls = tier_ttls(tiers, options)
    notes: list[str] = []
    eligible = [i for i, t in enumerate(tiers) if t.end >= options.min_tokens]
    short = [t.name for t in tiers if t.end < options.min_tokens]
    if short:
        notes.append(
            f"no breakpoint after {', '.join(short)}: the prefix there is under the "
            f"{options.min_tokens:,}-token minimum, so it would not be cached"
        )
    static_end = max((i for i, t in enumerate(tiers) if t.static), default=None)
    forced: tuple[int, ...] = ()
    if options.scope and static_end is not None:
        if static_end in eligible:
            forced = (static_end,)
        else:
            notes.append(f"no {options.scope} breakpoint: the static prefix is under the minimum")
    elif options.scope:
        notes.append(f"no {options.scope} breakpoint: there is no static prefix")
    probs = change_probabilities(tiers, options)
    best: tuple[float, int, tuple[int, ...]] | None = None
    for size in range(min(slots, len(eligible)) + 1):
        for combo in itertools.combinations(eligible, size):
            if not set(forced) <= set(combo):
                continue
            cost = expected_cost(tiers, combo, ttls, probs)
            # Ties (a breakpoint that saves nothing) go to more breakpoints, then earlier ones:
            # breakpoints are free [API-PC] and guard against edits the model did not expect.
            key = (round(cost, 9), -size, combo)
            if best is None or key < best:
                best = key
    positions = best[2] if best else ()
    if len(eligible) > slots:
        notes.append(
            f"{len(eligible)} tiers could take a breakpoint, {slots} may: placed where an edit "
            "is expected to cost least"
        )
    breakpoints = tuple(
        Breakpoint(i, ttls[i], options.scope if i in forced else None) for i in positions
    )
    return CachePlan(tiers, breakpoints, options.min_tokens, slots, tuple(notes))


def plan_for(assembly: Assembled, options: RequestOptions | None = None) -> CachePlan:
    """The plan of `assembly`'s tiers. Their counts are its sources' counts, as `explain`
    shows them; the context's total also holds the boundary marker, which no tier sends."""
    found = plan(tiers(assembly), options)
    marker = boundary_tokens(assembly.policy, assembly.counter) if found.tiers else 0
    notes = found.notes
    if marker:
        total = found.total_tokens + marker
        notes += (
            f"the boundary marker is structure here, not text: not sent, so the tiers hold "
            f"{marker:,} tokens fewer than the context's {total:,} (explain, render)",
        )
    return found._replace(notes=notes, estimated=estimated(assembly.counter))
