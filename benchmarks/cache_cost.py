"""What prompt caching costs over a working week, for three layouts of the same instructions.

The instructions: an agent's own system prompt (the base tier) and the five layers ctxasm
assembles, laid out on disk and assembled for real; sizes after seed 2's measurement of a
fresh Claude Code session (tools ~10,000 tokens, main instructions ~5,000, auto-memory
instructions ~3,000 -> base 18,000; project CLAUDE.md ~4,000 plus a skills list ~1,500; user
CLAUDE.md ~100), with a managed policy, a CLAUDE.local.md and a MEMORY.md index of our choosing.

The week: one request a minute, 09:00-17:00, Monday to Friday (2,400 requests), 5-minute TTL.
Edits arrive as a Poisson process at the issue's rates: managed monthly, user weekly, project
daily, local 4 and memory 6 times a day; each simulated week has its own seeded history and
the totals are over all weeks.

The layouts:
  (a) ctxasm: one block per tier, breakpoints from `assembler.tiers.plan` (3, one left for
      the conversation's moving breakpoint; (a4) uses all 4);
  (b) Claude Code: the system prompt with its breakpoint, then every instruction file in one
      block after it with one breakpoint (SPEC section 4);
  (c) the first seed article: soul, user, agent (rules), memory in one system string, with
      one breakpoint at its end (the best that layout allows);
  optimum: only the changed tier and what follows re-processed (a breakpoint at every tier end).
The cache model is the API's [API-PC]: writes only at breakpoints, a read finds the longest
prefix written earlier at a breakpoint within 20 blocks before one of this request's, each hit
refreshes the TTL, an entry expires after its TTL; prices relative to base input: read 0.1x,
5-minute write 1.25x, 1-hour write 2x, anything after the last breakpoint 1x.

    python -m benchmarks.cache_cost [--weeks N] [--reserve-breakpoint | --all-breakpoints]
"""

from __future__ import annotations

import argparse
import random
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from assembler import Layer, assemble
from assembler.clients.claude_code.settings import slug
from assembler.output.tiers import (
    READ_MULTIPLIER,
    TTL,
    RequestOptions,
    Tier,
    plan,
    text_hash,
    tiers,
)

from .harness import Check, heading, report, row

TARGET_VS_OPTIMUM = 1.05
BASE_TOKENS = 18_000
SIZES = {  # tokens of each file's content
    "managed/CLAUDE.md": 800,
    "home/.claude/CLAUDE.md": 100,
    "repo/CLAUDE.md": 4_000,
    "repo/.claude/rules/skills-list.md": 1_500,  # stands in for the skills index
    "repo/CLAUDE.local.md": 300,
    "MEMORY": 1_500,
}
EDITS_PER_DAY = {"managed": 1 / 22, "user": 1 / 5, "project": 1.0, "local": 4.0, "memory": 6.0}
DAYS, DAY_START, DAY_MINUTES = 5, 9 * 60, 8 * 60
TTL_MINUTES = 5
LOOKBACK_BLOCKS = 20


class Block(NamedTuple):
    name: str
    tokens: int
    parts: tuple[str, ...]  # the tiers whose text it holds
    ttl: TTL | None = None
    static: bool = False


class Bill(NamedTuple):
    read: float = 0
    written: float = 0  # 5-minute writes (all this benchmark uses)
    uncached: float = 0

    @property
    def cost(self) -> float:
        return (
            READ_MULTIPLIER * self.read
            + TTL.FIVE_MINUTES.write_multiplier * self.written
            + (self.uncached)
        )

    def __add__(self, other: object) -> Bill:
        assert isinstance(other, Bill)
        return Bill(*(a + b for a, b in zip(self, other, strict=True)))


def instruction_tiers(tmp: Path) -> tuple[Tier, ...]:
    """The base tier, then the tiers of a real assembly of files of the sizes above."""
    repo = tmp / "repo"
    (repo / ".git").mkdir(parents=True)
    for rel, tokens in SIZES.items():
        path = tmp / rel
        if rel == "MEMORY":
            path = tmp / "home/.claude/projects" / slug(repo) / "memory/MEMORY.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(("lorem ipsum dolor sit amet " * tokens)[: 4 * tokens], encoding="utf-8")
    a = assemble(repo, home=tmp / "home", managed_dir=tmp / "managed", environ={})
    base = Tier("base", Layer.BASE, "base", BASE_TOKENS, 0, text_hash("base"), True, ())
    shifted = tuple(t._replace(start=t.start + BASE_TOKENS) for t in tiers(a))
    return (base, *shifted)


def ours(layers: Sequence[Tier], reserve: bool) -> list[Block]:
    cache_plan = plan(layers, RequestOptions(reserve_breakpoint=reserve, scope="global"))
    return [
        Block(t.name, t.tokens, (t.name,), p.ttl if (p := cache_plan.at(i)) else None, t.static)
        for i, t in enumerate(layers)
    ]


def claude_code(layers: Sequence[Tier]) -> list[Block]:
    rest = layers[1:]
    return [
        Block("system prompt", layers[0].tokens, ("base",), TTL.FIVE_MINUTES, True),
        Block(
            "claudeMd", sum(t.tokens for t in rest), tuple(t.name for t in rest), TTL.FIVE_MINUTES
        ),
    ]


def seed(layers: Sequence[Tier]) -> list[Block]:
    # soul (base), user, agent (managed, project and local rules), memory: one string.
    names = ("base", "user", "managed", "project", "local", "memory")
    tokens = sum(t.tokens for t in layers)
    return [
        Block(
            "system",
            tokens,
            tuple(n for n in names if n in {t.name for t in layers}),
            TTL.FIVE_MINUTES,
        )
    ]


def edit_history(rng: random.Random) -> list[tuple[int, str]]:
    """(minute of the week, tier) for every edit in working hours, in time order."""
    edits = []
    for name, per_day in EDITS_PER_DAY.items():
        minute = 0.0
        while True:
            minute += rng.expovariate(per_day / DAY_MINUTES)
            if minute >= DAYS * DAY_MINUTES:
                break
            day, offset = divmod(int(minute), DAY_MINUTES)
            edits.append((day * 1440 + DAY_START + offset, name))
    return sorted(edits)


def request_times() -> list[int]:
    return [d * 1440 + DAY_START + m for d in range(DAYS) for m in range(DAY_MINUTES)]


def simulate(blocks: Sequence[Block], edits: Sequence[tuple[int, str]]) -> Bill:
    """Every request of the week against the API's cache rules; the summed bill."""
    versions: dict[str, int] = {}
    store: dict[tuple[object, ...], tuple[int, int]] = {}  # prefix -> (expires at, ttl minutes)
    ends, total = [], 0
    for b in blocks:
        total += b.tokens
        ends.append(total)
    points = [i for i, b in enumerate(blocks) if b.ttl is not None]
    bill, pending = Bill(), list(edits)
    for now in request_times():
        while pending and pending[0][0] <= now:
            versions[pending[0][1]] = versions.get(pending[0][1], 0) + 1
            pending.pop(0)
        keys = [(b.name, tuple(versions.get(p, 0) for p in b.parts)) for b in blocks]
        prefix = [tuple(keys[: i + 1]) for i in range(len(blocks))]
        hit = -1
        for i in range(len(blocks) - 1, -1, -1):
            entry = store.get(prefix[i])
            near = any(p >= i and p - i < LOOKBACK_BLOCKS for p in points)
            if near and entry is not None and entry[0] >= now:
                hit = i
                break
        read = ends[hit] if hit >= 0 else 0
        for i in range(hit + 1):  # each hit refreshes its entry's timer
            entry = store.get(prefix[i])
            if entry is not None and entry[0] >= now:
                store[prefix[i]] = (now + entry[1], entry[1])
        written, previous = 0, read
        for p in points:
            if ends[p] > previous:
                written += ends[p] - previous
                previous = ends[p]
            store[prefix[p]] = (now + TTL_MINUTES, TTL_MINUTES)
        bill += Bill(read, written, total - max(previous, read))
    return bill


def optimum(layers: Sequence[Tier], edits: Sequence[tuple[int, str]]) -> Bill:
    """Only the changed tier and what follows re-processed; everything cold after a gap."""
    names = [t.name for t in layers]
    total = sum(t.tokens for t in layers)
    bill, pending, last = Bill(), list(edits), None
    changed: set[str] = set()
    for now in request_times():
        while pending and pending[0][0] <= now:
            changed.add(pending.pop(0)[1])
        if last is None or now - last > TTL_MINUTES:
            bill += Bill(0, total, 0)
        else:
            first = min((names.index(n) for n in changed), default=len(names))
            before = sum(t.tokens for t in layers[:first])
            bill += Bill(before, total - before, 0)
        changed.clear()
        last = now
    return bill


def run(weeks: int = 20, reserve: bool = True) -> list[Check]:
    heading(f"cache_cost: {weeks} simulated working weeks, 1 request/minute, 5-minute TTL")
    with tempfile.TemporaryDirectory(prefix="ctxasm-cache-cost-") as tmp:
        layers = instruction_tiers(Path(tmp))
    layouts = {
        "(a) ctxasm tiers": ours(layers, reserve),
        "(a4) ctxasm tiers, all 4 breakpoints": ours(layers, False),
        "(b) Claude Code layout": claude_code(layers),
        "(c) seed article layout": seed(layers),
    }
    row("tiers (tokens)", ", ".join(f"{t.name} {t.tokens:,}" for t in layers))
    for name, blocks in layouts.items():
        marks = [b.name for b in blocks if b.ttl is not None]
        row(f"{name}: breakpoints", ", ".join(marks))
    bills = dict.fromkeys([*layouts, "optimum"], Bill())
    edit_count = 0
    for week in range(weeks):
        edits = edit_history(random.Random(week))
        edit_count += len(edits)
        for name, blocks in layouts.items():
            bills[name] += simulate(blocks, edits)
        bills["optimum"] += optimum(layers, edits)
    requests = weeks * DAYS * DAY_MINUTES
    row("requests, edits", f"{requests:,}, {edit_count:,} ({edit_count / weeks:.1f} a week)")
    print(f"  {'per request':<40} {'read':>8} {'write':>8} {'base':>8} {'cost':>9}")
    for name, bill in bills.items():
        r, w, u, c = (x / requests for x in (bill.read, bill.written, bill.uncached, bill.cost))
        print(f"  {name:<40} {r:>8,.0f} {w:>8,.0f} {u:>8,.0f} {c:>9,.1f}")
    a, opt = bills["(a) ctxasm tiers"], bills["optimum"]
    ratios = {
        "(a)/(b)": a.cost / bills["(b) Claude Code layout"].cost,
        "(a)/(c)": a.cost / bills["(c) seed article layout"].cost,
        "(a)/optimum": a.cost / opt.cost,
        "(a4)/optimum": bills["(a4) ctxasm tiers, all 4 breakpoints"].cost / opt.cost,
        "written tokens (a)/(b)": a.written / bills["(b) Claude Code layout"].written,
        "written tokens (a)/(c)": a.written / bills["(c) seed article layout"].written,
    }
    for name, value in ratios.items():
        row(f"cost ratio {name}" if "written" not in name else name, f"{value:.3f}")
    return [
        Check("cache_cost: (a) / optimum", round(ratios["(a)/optimum"], 4), TARGET_VS_OPTIMUM, "x")
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cache_cost")
    parser.add_argument("--weeks", type=int, default=20)
    parser.add_argument(
        "--all-breakpoints",
        action="store_true",
        help="(a) uses all 4 breakpoints instead of leaving one for the conversation",
    )
    args = parser.parse_args(argv)
    return report(run(args.weeks, reserve=not args.all_breakpoints))


if __name__ == "__main__":
    raise SystemExit(main())
