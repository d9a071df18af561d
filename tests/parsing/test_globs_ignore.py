"""`paths:` globs against the npm `ignore` package (7.0.5, the one Claude Code bundles).

`tests/data/globs-ignore.jsonl` holds what `ignore().add(patterns).ignores(path)` decided for
2,600 random `paths:` values and relative paths, after the client's own comma splitting,
brace expansion and `/**` removal; `tests/tools/ignore_reference.js` made it (node is needed
only to regenerate it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.parsing import frontmatter as fm
from assembler.parsing import globs

REFERENCE = Path(__file__).parents[1] / "data" / "globs-ignore.jsonl"


def _reference() -> list[dict[str, object]]:
    return [json.loads(line) for line in REFERENCE.read_text("utf-8").splitlines()]


def _ours(value: object, path: str) -> bool:
    return globs.first_match(fm.expand_paths(value).patterns, path) is not None


def _parent_by_parent(patterns: tuple[str, ...], path: str) -> bool:
    """`ignore`'s own order (each parent directory, every pattern), never the one search."""
    rules = [r for r in map(globs._rule, patterns) if not isinstance(r, str)]
    match = globs._matcher([r._replace(tail=True) for r in rules])
    return match is not None and match(path)


def test_the_reference_is_large_and_balanced() -> None:
    rows = _reference()
    assert len(rows) >= 2000
    assert 0.3 < sum(bool(r["match"]) for r in rows) / len(rows) < 0.7


def test_paths_globs_decide_as_the_ignore_package_does() -> None:
    differ = [r for r in _reference() if _ours(r["paths"], str(r["path"])) != r["match"]]
    assert not differ, f"{len(differ)} differ; the first: {differ[0]}"


def test_the_one_search_agrees_with_ignores_parent_by_parent_walk() -> None:
    for row in _reference():
        patterns = fm.expand_paths(row["paths"]).patterns
        assert _parent_by_parent(patterns, str(row["path"])) == row["match"], row


@pytest.mark.parametrize(
    ("value", "path", "expected"),
    [
        ("src/**/*.TS", "src/app.ts", True),  # case-insensitive (the example)
        ("*.{ts,tsx}", "src/App.TSX", True),
        (["src/**/*.ts", "!src/gen/**"], "src/gen/x.ts", True),  # `!src/gen` is no parent
        (["src/*.ts", "!src/x.ts"], "src/x.ts", False),  # a later `!` re-includes
        (["src/**", "!src/gen"], "src/gen/x.ts", True),  # below an ignored parent
        ("[!a]pp.ts", "app.ts", True),  # `[!a]` is no negation to ignore: `!` or `a`
        ("[!a]pp.ts", "bpp.ts", False),
        ("docs/", "docs/a.md", True),
        ("docs/", "docs", False),
        ("./lib/*.py", "lib/x.py", False),
        ("**/", "src/x.ts", True),
        ("a[z-b]", "az", False),  # `ignore` drops the reversed range: an empty class
        ("[é-a]*", "éa", False),  # JavaScript refuses this range: the pattern matches nothing
        (["[é-a]*", "b"], "b", True),  # ... and the others still work
    ],
)
def test_forms_rule_authors_write(value: object, path: str, expected: bool) -> None:
    assert _ours(value, path) is expected


_ATOMS = ["a", "B", ".x", "*", "?", "**", "[ab]", "[!a]", "[a-c]", "a*", "*b", "\\*", "[]a]",
          "[", "ab", "x.md", "[a-]", "\\ ", " ", "#", "!", "\\!", "é"]  # fmt: skip
_SEGMENTS = ["a", "b", "A", ".x", "ab", "x.md", "*", "[", "a b", "!", "é", "É", "#"]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.builds(
            lambda lead, parts, trail: lead + "/".join(parts) + trail,
            st.sampled_from(["", "", "/", "**/", "!", "!/"]),
            st.lists(
                st.lists(st.sampled_from(_ATOMS), min_size=1, max_size=2).map("".join),
                min_size=1,
                max_size=3,
            ),
            st.sampled_from(["", "", "/", "/**", "/*"]),
        ),
        min_size=1,
        max_size=3,
    ),
    st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=4).map("/".join),
)
def test_one_search_and_the_walk_agree(patterns: list[str], path: str) -> None:
    """Where a pattern may end right after a `/` inside the path, `globs` walks the parents
    as `ignore` does; elsewhere one search decides. Both must say the same."""
    ours = globs.first_match(patterns, path) is not None
    assert ours == _parent_by_parent(tuple(patterns), path)
