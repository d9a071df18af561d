"""Bounded YAML frontmatter and the one brace budget of a rule's `paths:`."""

from __future__ import annotations

import time

from assembler.parsing import frontmatter as fm

# A guard against a hang or an exponential blow-up, far from what a loaded machine takes
# (the work is milliseconds): never a timing of the machine.
HANG = 30.0


def alias_bomb(levels: int = 8) -> str:
    """Under 1 KB of YAML whose `paths` stands for 10**(levels + 1) strings."""
    lines = ["a0: &a0 [" + ",".join(["x"] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels + 1)]
    return "\n".join([*lines, f"paths: *a{levels}"])


def test_an_alias_bomb_is_dropped_naming_the_limit() -> None:
    text = f"---\n{alias_bomb()}\n---\nbody"
    assert len(text) < 1024
    start = time.perf_counter()
    frontmatter, body = fm.split_frontmatter(text)
    assert (frontmatter.present, frontmatter.data, frontmatter.error, body) == (
        True,
        {},
        "",
        "body",
    )
    assert frontmatter.too_complex == (
        "is over 20,000 nodes, each alias counted as the nodes it stands for"
    )
    assert fm.conditional_globs(frontmatter) is None
    assert time.perf_counter() - start < HANG  # unbounded: a billion nodes, hours


def test_aliases_within_the_limit_still_work() -> None:
    frontmatter, _ = fm.split_frontmatter(f"---\n{alias_bomb(2)}\n---\nbody")
    assert frontmatter.too_complex == "" and len(frontmatter.data["paths"]) == 10


def test_a_recursive_alias_and_deep_nesting_are_dropped() -> None:
    recursive, _ = fm.split_frontmatter("---\npaths: &a [*a]\n---\n")
    assert recursive.too_complex == "has an alias to a node that contains it"
    deep, _ = fm.split_frontmatter("---\nx: " + "[" * 64 + "]" * 64 + "\n---\n")
    assert deep.too_complex == "is nested over 64 levels"
    fits, _ = fm.split_frontmatter("---\nx: " + "[" * 63 + "]" * 63 + "\n---\n")
    assert fits.too_complex == "" and "x" in fits.data


def test_fifty_thousand_keys_are_refused_quickly() -> None:
    keys = "\n".join(f"k{i}: v" for i in range(50_000))
    start = time.perf_counter()
    frontmatter, body = fm.split_frontmatter(f"---\npaths: src/**\n{keys}\n---\nbody")
    assert frontmatter.too_complex.startswith("is over 20,000 nodes") and body == "body"
    assert time.perf_counter() - start < HANG  # unbounded: a billion nodes, hours


def test_the_brace_budget_is_shared_by_every_pattern_of_a_list() -> None:
    ten = "{a,b,c,d,e,f,g,h,i,j}"
    value = [f"d{i}/{ten}" for i in range(150)]
    globs = fm.expand_paths(value)
    assert len(globs.patterns) == 1000  # 100 patterns of ten, then the list is full
    assert globs.patterns[-1] == "d99/j"
    assert globs.over_budget == tuple(value[100:120]) and globs.over_count == 50


def test_a_list_from_an_alias_and_a_comma_string_share_the_budget() -> None:
    frontmatter, _ = fm.split_frontmatter(
        "---\nall: &all ["
        + ",".join(["'x{a,b}'"] * 100)
        + "]\npaths: [*all, *all, *all, *all, *all, *all]\n---\n"
    )
    globs = fm.conditional_globs(frontmatter)
    assert globs is not None and len(globs.patterns) == 1000
    assert globs.over_count == 100
    commas = fm.expand_paths(",".join(["y"] * 5000))
    assert (len(commas.patterns), commas.over_count) == (1000, 4000)


def test_a_rule_whose_only_glob_is_refused_stays_conditional() -> None:
    frontmatter, _ = fm.split_frontmatter("---\npaths: '" + "*a" * 600 + "'\n---\n")
    globs = fm.conditional_globs(frontmatter)
    assert globs is not None and globs.patterns == ()
    assert [why for _, why in globs.too_complex] == ["longer than 1,024 characters"]
