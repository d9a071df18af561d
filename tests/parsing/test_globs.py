"""`parsing.globs`: linear matchers with the semantics of wcmatch (`claudeMdExcludes`),
compared with it on generated patterns and paths (`paths:` globs against the npm `ignore`
package: `test_globs_ignore.py`)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wcmatch import glob as wcglob

from assembler.parsing import globs

WC_FLAGS = wcglob.GLOBSTAR | wcglob.BRACE | wcglob.DOTGLOB | wcglob.EXTGLOB | wcglob.FORCEUNIX

# Pieces of patterns and of paths, small enough that the two matchers meet often. `*(a|*)`
# (an extglob that matches an empty segment) is left out: wcmatch then also lets `/**/` match
# across the root's empty segment, which ctxasm does not reproduce.
_ATOMS = ["a", "b", ".x", "*", "?", "**", "[ab]", "[!a]", "[a-c]", "@(a|b)", "*(a)", "+(a|bb)",
          "?(a)", "a*", "*b", "\\*", "[]a]", "[", "ab", "{a,b}", "x.md", "[[:alpha:]]", "[a-]",
          "[!]]", "@(a*|b)"]  # fmt: skip
_SEGMENTS = ["a", "b", ".x", "ab", "bb", "x.md", "*", "[", "ba", "aaa", "c", "a]", ":]", "[:"]

patterns = st.builds(
    lambda absolute, parts, slash: ("/" if absolute else "") + "/".join(parts) + slash,
    st.booleans(),
    st.lists(
        st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=2).map("".join),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(["", "", "", "/"]),
)
paths = st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=4).map(lambda p: "/".join(p))

# A guard against a hang or an exponential blow-up, far from what a loaded machine takes
# (the work is milliseconds): never a timing of the machine.
HANG = 30.0


# Derandomized: wcmatch is a stand-in for picomatch, and the two differ on extglobs that
# match an empty segment (`/**/*(a)/a` on `/a`: wcmatch yes, picomatch and ctxasm no), which a
# random seed finds now and then; picomatch itself is compared in
# tests/discovery/test_excludes_negation.py (tests/data/excludes-picomatch.jsonl).
@settings(max_examples=600, deadline=None, derandomize=True)
@given(patterns, paths)
def test_excludes_match_as_wcmatch_does(pattern: str, path: str) -> None:
    compiled = globs.excludes([pattern])
    assert compiled.match is not None, compiled.refused
    assert compiled.match("/" + path) == wcglob.globmatch("/" + path, [pattern], flags=WC_FLAGS)


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("*a" * 40 + "*z", "a" * 60),  # exponential for a backtracking engine
        ("**/a/" * 30 + "z", "/".join(["a"] * 200)),
        ("+(a|aa)" * 20 + "z", "a" * 5000),
        ("*(a|b)*", "ab" * 2500),
    ],
)
def test_pathological_globs_match_in_linear_time(pattern: str, path: str) -> None:
    start = time.perf_counter()
    ignore = globs.gitignore(pattern)
    assert ignore.match is not None and not ignore.match(path)
    excluded = globs.excludes(["/" + pattern])
    assert excluded.match is not None and excluded.match("/" + path) == (pattern == "*(a|b)*")
    assert time.perf_counter() - start < HANG  # backtracking: longer than the universe


def test_a_two_megabyte_glob_is_refused_before_it_is_translated() -> None:
    huge = "*a" * (1024 * 1024)
    start = time.perf_counter()
    assert globs.gitignore(huge) == globs.Compiled(None, globs.TOO_COMPLEX)
    assert globs.excludes([huge, "/ok/*"]).refused == ((0, "longer than 1,024 characters"),)
    assert globs.admit([huge, "ok"]) == globs.Admitted(
        ("ok",), ((huge, "longer than 1,024 characters"),)
    )
    assert time.perf_counter() - start < HANG


def test_one_list_compiles_at_most_its_character_budget() -> None:
    pattern = "x" * 1000
    admitted = globs.admit([pattern + str(i) for i in range(100)])
    assert len(admitted.kept) == globs.GLOB_CHARS_BUDGET // 1004
    assert {why for _, why in admitted.refused} == {"past the 64 KiB of globs one list may hold"}


def test_excludes_share_one_brace_budget() -> None:
    ten = "/{a,b,c,d,e,f,g,h,i,j}" * 2  # 100 patterns each
    compiled = globs.excludes([ten] * 11)
    assert compiled.refused == ((10, "brace expansion past the 1,000 patterns all share"),)
    assert compiled.match is not None and compiled.match("/a/j")


def test_complement_extglobs_are_refused_not_backtracked() -> None:
    compiled = globs.excludes(["/r/!(a)/x", "/r/b/x"])
    assert compiled.refused == ((0, "uses !(...), which ctxasm cannot match in linear time"),)
    assert compiled.match is not None and compiled.match("/r/b/x")


def test_names_that_are_not_utf8_match_as_the_client_reads_them() -> None:
    """A byte that is not UTF-8 is a lone surrogate to Python and U+FFFD to the client: it
    matches `*` and `?`, never a crash (RE2 takes UTF-8 only)."""
    name = b"/repo/not-utf8-\xff\xfe.md".decode("utf-8", "surrogateescape")
    found = globs.excludes(["**/not-utf8-*", "/repo/\udcff"])
    assert found.match is not None and found.match(name)
    assert globs.first_match(["not-utf8-??.md"], name.removeprefix("/repo/")) == "not-utf8-??.md"


# --- workspace globs (Cursor `globs:`, Copilot `applyTo:`) ----------------------------------


@pytest.mark.parametrize(
    ("pattern", "matched"),
    [
        # GitHub's examples (data/reusables/copilot/custom-instructions-path.md)
        ("*", ["a.py"]),
        ("**", ["a.py", "src/a.py", "src/b/a.py", ".github/x.md"]),
        ("**/*", ["a.py", "src/a.py", "src/b/a.py", ".github/x.md"]),
        ("*.py", ["a.py"]),
        ("**/*.py", ["a.py", "src/a.py", "src/b/a.py"]),
        ("src/*.py", ["src/a.py"]),
        ("src/**/*.py", ["src/a.py", "src/b/a.py"]),
        ("**/b/**/*.py", ["src/b/a.py"]),
        ("./src/*.py", ["src/a.py"]),  # a leading ./ or / is the workspace itself
        ("/src/*.py", ["src/a.py"]),
        ("src/**", ["src/a.py", "src/b/a.py"]),
        ("**/*.{py,md}", ["a.py", "src/a.py", "src/b/a.py", ".github/x.md"]),
    ],
)
def test_workspace_globs_are_anchored_and_star_stays_in_a_segment(
    pattern: str, matched: list[str]
) -> None:
    paths = ["a.py", "src/a.py", "src/b/a.py", ".github/x.md"]
    match = globs.workspace([pattern], "/r").match
    assert match is not None
    assert [p for p in paths if match(f"/r/{p}")] == matched
    assert not match("/other/a.py")


def test_workspace_globs_escape_their_directory_and_refuse_what_they_cannot_match() -> None:
    odd = "/r/[a]{b,c}*"
    found = globs.workspace(["x.md"], odd)
    assert found.match is not None
    assert found.match(f"{odd}/x.md") and not found.match("/r/a/x.md")
    refused = globs.workspace(["", "ok/*.md", "x" * 2000], "/r")
    assert refused.refused == ((2, "longer than 1,024 characters"),)
    assert refused.match is not None and refused.match("/r/ok/a.md")
    assert globs.workspace([""], "/r").match is None  # an empty glob matches nothing
