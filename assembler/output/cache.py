"""`ctxasm cache`: per tier the tokens, the hash and the breakpoints; against a snapshot, where
the cache breaks and what the next request costs.

A snapshot keeps hashes and token counts, never text. Against one, the first tier whose hash
(or name) differs is the first divergence: every tier from there on is re-processed. The next
request reads from the cache what an earlier request wrote at a breakpoint before the
divergence, writes the rest up to its last breakpoint, and pays full price after that. Prices
are the documented multipliers of base input [API-PC]: 5-minute write 1.25x, 1-hour write 2x,
read 0.1x; the relative cost assumes the snapshot's request is still cached (within its TTL).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from ..display import counted
from ..errors import CacheError
from .provider import prompt_cache_key
from .tiers import READ_MULTIPLIER, TTL, CachePlan, text_hash

SNAPSHOT_VERSION = 1


class TierState(NamedTuple):
    """What a snapshot keeps of one tier."""

    name: str
    tokens: int
    sha256: str
    ttl: TTL | None = None  # the breakpoint's TTL; None: no breakpoint on this tier
    scope: str | None = None


class Snapshot(NamedTuple):
    tiers: tuple[TierState, ...]
    static_sha256: str
    prompt_cache_key: str
    min_tokens: int
    slots: int
    client: str = ""  # the agent whose context it is ("": a snapshot that does not say)


class Divergence(NamedTuple):
    """The first tier that differs from the snapshot, and the price of the next request."""

    position: int  # index in the current tiers (== len when only removals follow)
    tier: str
    change: str  # "changed", "added", "removed" or "none"
    read: int
    written_5m: int
    written_1h: int
    uncached: int
    relative_cost: float  # of the next request, against paying base price for everything
    cached_cost: float  # the same when nothing has changed, for comparison

    @property
    def reprocessed(self) -> int:
        return self.written_5m + self.written_1h + self.uncached


class CacheReport(NamedTuple):
    plan: CachePlan
    snapshot: Snapshot
    divergence: Divergence | None = None


def snapshot_of(plan: CachePlan, client: str = "") -> Snapshot:
    states = []
    for i, tier in enumerate(plan.tiers):
        point = plan.at(i)
        states.append(
            TierState(
                tier.name,
                tier.tokens,
                tier.sha256,
                point.ttl if point else None,
                point.scope if point else None,
            )
        )
    static = plan.static_text
    key = prompt_cache_key(plan) or ""
    return Snapshot(tuple(states), text_hash(static), key, plan.min_tokens, plan.slots, client)


def _request_price(
    tiers: Sequence[TierState], hit: int
) -> tuple[int, int, int, int]:  # read, written 5m, written 1h, uncached
    ends, total = [], 0
    for tier in tiers:
        total += tier.tokens
        ends.append(total)
    marked = [i for i, t in enumerate(tiers) if t.ttl is not None]
    if not marked:
        return 0, 0, 0, total  # no cache_control at all: nothing is cached or read
    written = {TTL.FIVE_MINUTES: 0, TTL.ONE_HOUR: 0}
    previous = hit
    for i in marked:
        if ends[i] > previous:
            ttl = tiers[i].ttl
            assert ttl is not None
            written[ttl] += ends[i] - previous
            previous = ends[i]
    return hit, written[TTL.FIVE_MINUTES], written[TTL.ONE_HOUR], total - max(previous, hit)


def _relative(read: int, w5: int, w1: int, uncached: int) -> float:
    total = read + w5 + w1 + uncached
    if total == 0:
        return 0.0
    cost = (
        READ_MULTIPLIER * read
        + TTL.FIVE_MINUTES.write_multiplier * w5
        + TTL.ONE_HOUR.write_multiplier * w1
        + uncached
    )
    return cost / total


def compare(current: Snapshot, previous: Snapshot) -> Divergence:
    """Where `current` first differs from `previous`, and what its next request costs."""
    now, before = current.tiers, previous.tiers
    d = 0
    while d < len(now) and d < len(before) and now[d][:3] == before[d][:3]:
        d += 1
    if d == len(now) == len(before):
        change, name = "none", ""
    elif d >= len(before):
        change, name = "added", now[d].name
    elif d >= len(now):
        change, name = "removed", before[d].name
    elif now[d].name == before[d].name:
        change, name = "changed", now[d].name
    elif now[d].name not in {t.name for t in before}:
        change, name = "added", now[d].name
    else:
        change, name = "removed", before[d].name
    # An entry written at an earlier breakpoint before the divergence is found by looking
    # back from a breakpoint of this request at or after it (the 20-block lookback [API-PC];
    # there are never more than 8 tiers).
    last_marked = max((i for i, t in enumerate(now) if t.ttl is not None), default=-1)
    hit = prefix = 0
    for i, tier in enumerate(before[:d]):
        prefix += tier.tokens
        if tier.ttl is not None and i <= last_marked:
            hit = prefix
    read, w5, w1, uncached = _request_price(now, hit)
    cached = _request_price(now, sum(t.tokens for t in now[: last_marked + 1]))
    return Divergence(
        d,
        name,
        change,
        read,
        w5,
        w1,
        uncached,
        _relative(read, w5, w1, uncached),
        _relative(*cached),
    )


def build_report(plan: CachePlan, against: Snapshot | None = None, client: str = "") -> CacheReport:
    """The report of `plan` (the context of `client`'s agent), compared with `against`."""
    snapshot = snapshot_of(plan, client)
    return CacheReport(plan, snapshot, compare(snapshot, against) if against else None)


# --- snapshot files -----------------------------------------------------------------------


def snapshot_data(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "version": SNAPSHOT_VERSION,
        "tiers": [
            {
                "name": t.name,
                "tokens": t.tokens,
                "sha256": t.sha256,
                "breakpoint": None if t.ttl is None else {"ttl": t.ttl.value, "scope": t.scope},
            }
            for t in snapshot.tiers
        ],
        "static_sha256": snapshot.static_sha256,
        "prompt_cache_key": snapshot.prompt_cache_key,
        "min_tokens": snapshot.min_tokens,
        "slots": snapshot.slots,
    } | ({"client": snapshot.client} if snapshot.client else {})


def _tier_state(item: Mapping[str, Any]) -> TierState:
    point = item.get("breakpoint")
    ttl = TTL(point["ttl"]) if point else None
    scope = point.get("scope") if point else None
    if scope is not None and not isinstance(scope, str):
        raise TypeError("a breakpoint's scope must be a string")
    return TierState(_text(item, "name"), _count(item, "tokens"), _text(item, "sha256"), ttl, scope)


# The largest count a snapshot may hold. No run counts that many tokens; the bound keeps every
# count a float holds exactly (costs are computed in floats), whatever a snapshot says.
MAX_COUNT = 2**53


def _count(data: Mapping[str, Any], key: str) -> int:
    """`data[key]`, a whole number from 0 to `MAX_COUNT`: not a float (`1e999`, `NaN` and
    `Infinity` are floats to Python's json), not a boolean."""
    value = data[key]
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        raise TypeError(f"{key} must be a whole number from 0 to 2**53")
    return value


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a string")
    return value


def _client(data: Mapping[str, Any]) -> str:
    """The snapshot's agent: a client name, or "" where an older snapshot does not say."""
    value = data.get("client", "")
    if not isinstance(value, str) or len(value) > 64:
        raise TypeError("client must be a client's name")
    return value


def foreign(snapshot: Snapshot, client: str) -> bool:
    """Whether `snapshot` says it is another agent's context than `client`'s."""
    return bool(snapshot.client) and snapshot.client != client


# A snapshot lists a few tiers; anything this large is not one.
SNAPSHOT_BYTES = 1024 * 1024


def load_snapshot(path: str | os.PathLike[str]) -> Snapshot:
    """A snapshot written by `--save` (or `ctxasm cache --json`); one-line errors. Read like
    any untrusted file: at most `SNAPSHOT_BYTES`, never a FIFO or a device."""
    from ..discovery.reader import ReadStatus, read_text

    result = read_text(os.fspath(path), SNAPSHOT_BYTES)
    if result.status in (ReadStatus.MISSING, ReadStatus.BROKEN_LINK):
        raise CacheError(f"{path}: snapshot not found; create one with --save")
    if result.status is ReadStatus.TOO_LARGE:
        raise CacheError(
            f"{path}: over the {SNAPSHOT_BYTES:,}-byte limit for a snapshot; recreate it with --save"
        )
    if not result.ok:
        detail = result.detail or result.status.value
        raise CacheError(f"{path}: cannot read ({detail}); pass a snapshot written by --save")
    try:
        data = json.loads(result.text)
    except RecursionError:
        raise CacheError(
            f"{path}: not a JSON snapshot (nested too deeply); recreate it with --save"
        ) from None
    except ValueError as err:
        raise CacheError(f"{path}: not a JSON snapshot ({err}); recreate it with --save") from None
    version = data.get("version") if isinstance(data, dict) else None
    if type(version) is not int or version != SNAPSHOT_VERSION:
        raise CacheError(
            f"{path}: not a version-{SNAPSHOT_VERSION} ctxasm snapshot; recreate it with --save"
        )
    try:
        return Snapshot(
            tuple(_tier_state(item) for item in data["tiers"]),
            _text(data, "static_sha256"),
            _text(data, "prompt_cache_key"),
            _count(data, "min_tokens"),
            _count(data, "slots"),
            _client(data),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise CacheError(f"{path}: malformed snapshot ({err}); recreate it with --save") from None


def snapshot_text(snapshot: Snapshot) -> str:
    return json.dumps(snapshot_data(snapshot), indent=2) + "\n"


# --- reports ------------------------------------------------------------------------------


def _divergence_data(d: Divergence) -> dict[str, Any]:
    return d._asdict() | {
        "reprocessed": d.reprocessed,
        "relative_cost": round(d.relative_cost, 4),
        "cached_cost": round(d.cached_cost, 4),
    }


def report_json(report: CacheReport) -> str:
    data = snapshot_data(report.snapshot)
    data["notes"] = list(report.plan.notes)
    data["estimated"] = report.plan.estimated
    data["against"] = None if report.divergence is None else _divergence_data(report.divergence)
    return json.dumps(data, indent=2) + "\n"


def _breakpoint_cell(state: TierState) -> str:
    if state.ttl is None:
        return "-"
    return f"{state.ttl.value} {state.scope}" if state.scope else state.ttl.value


def report_text(report: CacheReport, against_name: str = "the snapshot") -> str:
    snap, plan = report.snapshot, report.plan
    used = sum(1 for t in snap.tiers if t.ttl is not None)
    lines = [
        f"{counted(len(snap.tiers), 'tier')}, {counted(plan.total_tokens, 'token')}"
        f"{' (estimated)' if plan.estimated else ''}; {used} of {plan.slots} "
        f"breakpoints used{' (1 of the 4 left for the conversation)' if plan.slots < 4 else ''}; "
        f"minimum cacheable {plan.min_tokens:,} tokens",
        f"  {'#':>2}  {'tier':<13} {'tokens':>8} {'prefix':>8}  {'sha256':<12}  breakpoint",
    ]
    prefix = 0
    for i, t in enumerate(snap.tiers, 1):
        prefix += t.tokens
        lines.append(
            f"  {i:>2}  {t.name:<13} {t.tokens:>8,} {prefix:>8,}  {t.sha256[:12]}  {_breakpoint_cell(t)}"
        )
    static = sum(t.tokens for t in plan.tiers if t.static)
    lines.append(
        f"static prefix: {static:,} tokens, sha256 {snap.static_sha256[:12]}, "
        f"prompt_cache_key {snap.prompt_cache_key}"
    )
    lines += [f"note: {n}" for n in plan.notes]
    d = report.divergence
    if d is not None:
        if d.change == "none":
            lines.append(f"against {against_name}: no tier changed")
        else:
            lines.append(
                f"against {against_name}: first divergence: {d.tier} ({d.change}), "
                f"tier {d.position + 1} of {len(snap.tiers)}"
            )
        writes = f"{d.written_5m:,} written (5m)"
        if d.written_1h:
            writes += f", {d.written_1h:,} written (1h)"
        lines.append(
            f"  next request: {d.read:,} tokens read from the cache, {writes}, "
            f"{d.uncached:,} uncached; {d.reprocessed:,} re-processed"
        )
        lines.append(
            f"  relative cost: {d.relative_cost:.3f}x of an uncached request "
            f"(unchanged: {d.cached_cost:.3f}x)"
        )
    return "\n".join(lines) + "\n"
