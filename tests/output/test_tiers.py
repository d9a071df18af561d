"""Tiers and breakpoints: at most 4, only where the prefix is cacheable, TTLs longest first."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assembler import Layer, estimate_tokens
from assembler.errors import CacheError
from assembler.output.provider import anthropic_system
from assembler.output.sections import source_tokens
from assembler.output.tiers import (
    TTL,
    RequestOptions,
    Tier,
    expected_cost,
    make_options,
    min_cacheable_tokens,
    plan,
    plan_for,
    rewrite_cost,
    tiers,
)
from tests.helpers.trees import build, git_init, run

LAYERS = list(Layer)


def make_tiers(spec: Sequence[tuple[Layer, int]], static: int = 0) -> tuple[Tier, ...]:
    out, start = [], 0
    for i, (layer, tokens) in enumerate(spec):
        text = f"{layer.value} {i}"
        out.append(Tier(layer.value, layer, text, tokens, start, text, i < static, ()))
        start += tokens
    return tuple(out)


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("claude-sonnet-4-5-20250929", 1024),
        ("claude-opus-4-5-20251101", 4096),  # not "opus-4": the longest family wins
        ("claude-opus-4-1-20250805", 1024),
        ("claude-haiku-4-5", 4096),
        ("claude-3-5-haiku-20241022", 2048),
        ("claude-opus-4-7", 2048),
        ("claude-opus-5", 512),
        ("claude-sonnet-4-50", 1024),  # an unknown id: the default, not a prefix match
        ("claude-opus-5-5", 1024),  # not listed on the page: the default
        ("anthropic.claude-haiku-4-5-20251001-v1:0", 4096),  # Bedrock
        ("claude-opus-4-6@20260101", 4096),  # Vertex
        ("claude-opus-4-20250514", 1024),
        ("gpt-5", 1024),
        (None, 1024),
    ],
)
def test_minimum_cacheable_length_per_model(model: str | None, minimum: int) -> None:
    assert min_cacheable_tokens(model) == minimum


def test_one_breakpoint_per_tier_when_there_are_four_or_fewer() -> None:
    spec = [(Layer.MANAGED, 2000), (Layer.USER, 300), (Layer.PROJECT, 3000), (Layer.LOCAL, 100)]
    result = plan(make_tiers(spec, static=1))
    assert [(b.tier, b.ttl, b.scope) for b in result.breakpoints] == [
        (0, TTL.FIVE_MINUTES, None),
        (1, TTL.FIVE_MINUTES, None),
        (2, TTL.FIVE_MINUTES, None),
        (3, TTL.FIVE_MINUTES, None),
    ]
    # So an edit re-processes only its tier and what follows: read the prefix, write the rest.
    ttls = [TTL.FIVE_MINUTES] * 4
    positions = [b.tier for b in result.breakpoints]
    t = result.tiers
    for j in range(4):
        assert rewrite_cost(t, positions, ttls, j) == pytest.approx(
            0.1 * t[j].start + 1.25 * (5400 - t[j].start)
        )


def test_no_breakpoint_where_the_prefix_is_under_the_minimum() -> None:
    spec = [(Layer.MANAGED, 400), (Layer.USER, 500), (Layer.PROJECT, 900), (Layer.LOCAL, 50)]
    result = plan(make_tiers(spec), RequestOptions(min_tokens=1024))
    assert [b.tier for b in result.breakpoints] == [2, 3]  # prefixes 1,800 and 1,850
    assert result.notes[0].startswith("no breakpoint after managed, user: the prefix there is")
    assert plan(make_tiers(spec), RequestOptions(min_tokens=4096)).breakpoints == ()


def test_never_more_than_four_and_one_left_when_reserved() -> None:
    spec = [(layer, 1500) for layer in LAYERS]  # 8 tiers
    four = plan(make_tiers(spec))
    three = plan(make_tiers(spec), RequestOptions(reserve_breakpoint=True))
    assert len(four.breakpoints) == 4 and four.slots == 4
    assert len(three.breakpoints) == 3 and three.slots == 3
    # The last tier always ends on one: everything is read from the cache between edits.
    assert four.breakpoints[-1].tier == three.breakpoints[-1].tier == 7
    assert "8 tiers could take a breakpoint, 4 may" in four.notes[-1]


def test_breakpoints_go_before_the_tiers_that_change_most() -> None:
    # The often-edited tiers (local, memory: several times a day) sit at the end; the rarely
    # edited ones (base, managed, user) need no breakpoint of their own between them.
    spec = [(layer, 2000) for layer in LAYERS if layer is not Layer.SUBDIRECTORY]
    result = plan(make_tiers(spec, static=2))
    names = [result.tiers[b.tier].name for b in result.breakpoints]
    assert names == ["project", "local", "memory", "environment"]


def test_global_scope_goes_on_the_static_prefix_and_is_kept() -> None:
    spec = [(Layer.BASE, 1500), (Layer.MANAGED, 500), (Layer.USER, 200), (Layer.PROJECT, 900)]
    result = plan(make_tiers(spec, static=2), RequestOptions(scope="global"))
    assert [(b.tier, b.scope) for b in result.breakpoints] == [
        (0, None),
        (1, "global"),  # the end of the static prefix, the same for every user
        (2, None),
        (3, None),
    ]
    below = plan(make_tiers(spec, static=2), RequestOptions(scope="global", min_tokens=4000))
    assert below.breakpoints == ()
    assert "no global breakpoint: the static prefix is under the minimum" in below.notes


def test_mixed_ttls_must_be_longest_first() -> None:
    spec = [(Layer.MANAGED, 2000), (Layer.USER, 300), (Layer.PROJECT, 3000), (Layer.LOCAL, 100)]
    ok = plan(make_tiers(spec), make_options(ttl=["1h", "user=5m"]))
    # A tier without its own TTL never gets a longer one than the tier before it.
    assert [b.ttl.value for b in ok.breakpoints] == ["1h", "5m", "5m", "5m"]
    with pytest.raises(CacheError, match=r"ttl: user=1h follows managed at 5m; the API requires"):
        plan(make_tiers(spec), make_options(ttl=["user=1h"]))
    with pytest.raises(CacheError, match=r"not 5m, 1h, or TIER=5m\|1h"):
        make_options(ttl=["2h"])
    with pytest.raises(CacheError, match="unknown tier 'proj'"):
        make_options(ttl=["proj=1h"])


def test_one_hour_writes_cost_twice_base() -> None:
    spec = [(Layer.MANAGED, 2000), (Layer.LOCAL, 1000)]
    t = make_tiers(spec)
    assert rewrite_cost(t, [0, 1], [TTL.ONE_HOUR, TTL.ONE_HOUR], 1) == pytest.approx(
        0.1 * 2000 + 2.0 * 1000
    )
    # Nothing after the last breakpoint is cached: it is billed at base price every time.
    assert expected_cost(t, [0], [TTL.FIVE_MINUTES] * 2, [0.0, 0.0]) == pytest.approx(
        0.1 * 2000 + 1000
    )


TIER_SPECS = st.lists(st.sampled_from(LAYERS), unique=True, max_size=8).flatmap(
    lambda layers: st.tuples(*(st.tuples(st.just(x), st.integers(0, 6000)) for x in layers))
)


@settings(max_examples=300, deadline=None)
@given(
    spec=TIER_SPECS,
    static=st.integers(0, 3),
    reserve=st.booleans(),
    min_tokens=st.sampled_from([0, 512, 1024, 2048, 4096]),
    scope=st.sampled_from([None, "global"]),
    hours=st.integers(0, 8),
)
def test_breakpoint_invariants(
    spec: tuple[tuple[Layer, int], ...],
    static: int,
    reserve: bool,
    min_tokens: int,
    scope: str | None,
    hours: int,
) -> None:
    tiers_ = make_tiers(spec, static=min(static, len(spec)))
    # A valid mixed-TTL spec: the first `hours` tiers 1 hour, the rest 5 minutes.
    ttl = ["5m"] + [f"{t.name}=1h" for t in tiers_[:hours]]
    options = make_options(ttl=ttl, scope=scope, min_tokens=min_tokens, reserve_breakpoint=reserve)
    result = plan(tiers_, options)
    points = result.breakpoints
    assert len(points) <= (3 if reserve else 4)
    assert [b.tier for b in points] == sorted({b.tier for b in points})
    assert all(tiers_[b.tier].end >= min_tokens for b in points)
    seconds = [b.ttl.seconds for b in points]
    assert seconds == sorted(seconds, reverse=True)  # longest first
    assert all(b.scope is None or tiers_[b.tier].static for b in points)
    blocks = anthropic_system(result)
    marks = [b["cache_control"] for b in blocks if "cache_control" in b]
    assert len(marks) == len(points) <= 4
    ttls = [3600 if m.get("ttl") == "1h" else 300 for m in marks]
    assert ttls == sorted(ttls, reverse=True)
    assert plan(tiers_, options) == result  # deterministic


# --- on real trees ------------------------------------------------------------------------

WORDS = st.integers(0, 900)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=st.lists(WORDS, min_size=6, max_size=6), reserve=st.booleans())
def test_real_assemblies_never_carry_more_than_four_breakpoints(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int], reserve: bool
) -> None:
    tmp = tmp_path_factory.mktemp("tiers")
    git_init(tmp / "repo")
    names = [
        "managed/CLAUDE.md",
        "home/.claude/CLAUDE.md",
        "repo/CLAUDE.md",
        "repo/CLAUDE.local.md",
        "repo/sub/CLAUDE.md",
        "repo/.claude/rules/r.md",
    ]
    build(tmp, {n: "word " * k for n, k in zip(names, sizes, strict=True) if k})
    build(tmp, {"repo/sub/x.py": ""})
    a = run(tmp, "repo", touched=[tmp / "repo" / "sub" / "x.py"])
    options = RequestOptions(min_tokens=256, reserve_breakpoint=reserve, scope="global")
    system = json.loads(a.render("anthropic", options=options))["system"]
    marks = [b["cache_control"] for b in system if "cache_control" in b]
    assert len(marks) <= (3 if reserve else 4)
    # The blocks are the native sections, in order, without the boundary marker.
    native = a.text.replace("__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__\n\n", "")
    native = native.removesuffix("\n\n__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__")
    assert "\n\n".join(b["text"] for b in system) == native
    assert [t.name for t in tiers(a)] == [
        layer.value for layer in Layer if any(s.layer is layer for s in a.sources)
    ]


def test_tiers_of_a_real_tree(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "managed/CLAUDE.md": "Managed.",
            "home/.claude/CLAUDE.md": "User.",
            "repo/CLAUDE.md": "Project.",
            "repo/.claude/rules/a.md": "Rule.",
            "repo/CLAUDE.local.md": "Local.",
        },
    )
    assembly = run(tmp_path, "repo")
    result = plan_for(assembly, RequestOptions(min_tokens=0))
    assert [(t.name, t.static, t.sources) for t in result.tiers] == [
        ("managed", True, (str(tmp_path / "managed" / "CLAUDE.md"),)),
        ("user", False, ("~/.claude/CLAUDE.md",)),
        ("project", False, ("CLAUDE.md", ".claude/rules/a.md")),
        ("local", False, ("CLAUDE.local.md",)),
    ]
    assert result.tiers[2].text == (
        '<project_instructions source="CLAUDE.md">\nProject.\n</project_instructions>\n\n'
        '<project_instructions source=".claude/rules/a.md">\nRule.\n</project_instructions>'
    )
    # A tier's tokens are its sources' counts, as explain shows them (each with the separator
    # after it), not a count of its own text.
    count = {
        s.display: source_tokens(s, assembly.policy, estimate_tokens) for s in assembly.sources
    }
    assert [t.tokens for t in result.tiers] == [
        sum(count[name] for name in t.sources) for t in result.tiers
    ]
    assert [t.tokens for t in result.tiers[1:3]] == [20, 40]  # the first names tmp_path
    assert (
        [t.start for t in result.tiers]
        == list(  # the running sums
            itertools.accumulate((t.tokens for t in result.tiers[:-1]), initial=0)
        )
    )
    assert result.static_text == result.tiers[0].text
