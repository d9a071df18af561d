"""Invariants, checked with hypothesis on real files (STYLE.md, "Property tests").

(a) Rendering is deterministic: the same files give the same bytes in every format, and two
    users (different home directories, usernames and checkout paths) get a byte-identical
    prefix before the dynamic boundary.
(b) The total budget holds: with `max_tokens=N` the text costs at most N tokens whenever N
    covers the managed files (never cut); otherwise a `budget-unmet` error says so. Every cut
    is recorded as a `Cut` on its source, with a diagnostic.
(c) Truncation never splits a character: the per-file limit, the MEMORY.md index cut and budget
    trims keep a prefix of the original that ends on a character boundary, for any text (CJK,
    astral emoji, combining marks).

Each example builds its own directory (`tmp_path_factory`): `tmp_path` is shared by every
example of a test.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from assembler import Assembly, Layer, Severity, Source, assemble, estimate_tokens
from assembler.budget import BUDGET_MARKER
from assembler.clients.claude_code.memory_index import truncate_index
from assembler.output.formats import names as format_names
from tests.helpers.trees import git_init

BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
SEPARATOR = "\n\n"
NOW = dt.datetime(2026, 1, 31, 12, 0)
TRUNCATED = "\n...(truncated)"

# No "explain" phase: it re-runs a failing file-based example hundreds of times.
SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink),
)

# Characters of every UTF-8 length, plus what makes "character" ambiguous: astral emoji
# (4 bytes, 2 UTF-16 units), combining marks and joiners (a grapheme of several code points).
CHARS = st.one_of(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E),
    st.sampled_from(["\n", "\n", " ", "\t", "\u00e9", "\u00df", "\u200d", "\ufe0f", "\u3000"]),
    st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),  # CJK
    st.characters(min_codepoint=0x3040, max_codepoint=0x30FF),  # kana
    st.characters(min_codepoint=0x1F300, max_codepoint=0x1FAFF),  # emoji, astral
    st.characters(min_codepoint=0x0300, max_codepoint=0x036F),  # combining marks
)
TEXT = st.text(CHARS, max_size=80)


@st.composite
def long_text(draw: st.DrawFn, max_repeat: int = 40) -> str:
    """Long text cheaply: a few random pieces, repeated, joined by a newline or nothing."""
    pieces = draw(st.lists(st.text(CHARS, max_size=40), min_size=1, max_size=12))
    joiner = draw(st.sampled_from(["\n", "", " ", "\n\n"]))
    return joiner.join(pieces * draw(st.integers(1, max_repeat)))


@st.composite
def memory_index(draw: st.DrawFn) -> str:
    """An index of 1-260 lines totalling up to ~40,000 chars: over either real limit or both."""
    pieces = draw(st.lists(st.text(CHARS, min_size=1, max_size=20), min_size=1, max_size=8))
    lines = draw(st.one_of(st.integers(150, 260), st.integers(1, 260)))
    target = draw(st.one_of(st.integers(20_000, 40_000), st.integers(1, 40_000)))
    mean = max(1, sum(map(len, pieces)) // len(pieces))
    width = max(1, target // (lines * mean))
    n = len(pieces)
    return "\n".join("".join(pieces[(i + j) % n] for j in range(width)) for i in range(lines))


BODY = st.one_of(TEXT, long_text(max_repeat=12))
NAME = st.from_regex(r"[a-z][a-z0-9_-]{0,7}", fullmatch=True)


def same(actual: str | bytes, expected: str | bytes, what: str) -> None:
    """`actual == expected`, failing with the first difference (pytest's diff of two long texts
    takes seconds, and hypothesis repeats it for every shrink step)."""
    if actual == expected:
        return
    i = next(
        (i for i, (a, b) in enumerate(zip(actual, expected, strict=False)) if a != b),
        min(len(actual), len(expected)),
    )
    raise AssertionError(
        f"{what} differs at {i} (lengths {len(actual)}, {len(expected)}): "
        f"{actual[max(0, i - 60) : i + 60]!r} != {expected[max(0, i - 60) : i + 60]!r}"
    )


def same_source(new: Source, old: Source, what: str) -> None:
    same(new.content, old.content, what)
    assert (new.dropped, new.cuts, new.stats, new.display) == (
        old.dropped,
        old.cuts,
        old.stats,
        old.display,
    ), what


# --- building trees -----------------------------------------------------------------------


@contextmanager
def fresh_dir(factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A new directory for one example, removed after it (thousands of examples when shrinking)."""
    with tempfile.TemporaryDirectory(dir=factory.getbasetemp()) as name:
        yield Path(name)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def slug(path: Path) -> str:
    return re.sub(r"[^a-zA-Z0-9]", "-", str(path))


@dataclass(frozen=True)
class Files:
    """What each layer holds: one body per file, rules as (name, body)."""

    managed: str
    managed_rules: tuple[tuple[str, str], ...]
    user: str
    project: str
    rules: tuple[tuple[str, str], ...]
    local: str
    memory: str


FILES = st.builds(
    Files,
    managed=BODY,
    managed_rules=st.lists(st.tuples(NAME, BODY), max_size=2, unique_by=lambda r: r[0]).map(tuple),
    user=BODY,
    project=BODY,
    rules=st.lists(st.tuples(NAME, BODY), max_size=3, unique_by=lambda r: r[0]).map(tuple),
    local=BODY,
    memory=BODY,
)


def write_managed(managed: Path, files: Files) -> None:
    write(managed / "CLAUDE.md", files.managed)
    for name, body in files.managed_rules:
        write(managed / ".claude" / "rules" / f"{name}.md", body)


def write_user(home: Path, project: Path, files: Files) -> None:
    write(home / ".claude" / "CLAUDE.md", files.user)
    write(home / "CLAUDE.md", "home-level notes for " + home.name)
    write(project / "CLAUDE.md", files.project)
    for name, body in files.rules:
        write(project / ".claude" / "rules" / f"{name}.md", body)
    write(project / "CLAUDE.local.md", files.local)
    write(home / ".claude" / "projects" / slug(project) / "memory" / "MEMORY.md", files.memory)


def run(
    project: Path,
    home: Path,
    managed: Path,
    *,
    user: str = "dev",
    max_tokens: int | None = None,
    client_version: str | None = None,
) -> Assembly:
    return assemble(
        project,
        home=home,
        managed_dir=managed,
        environ={"USER": user, "LOGNAME": user, "HOME": str(home)},
        max_tokens=max_tokens,
        now=NOW,
        client_version=client_version,
    )


# --- (a) determinism ----------------------------------------------------------------------


def static_json_sections(assembly: Assembly) -> list[object]:
    sections: list[object] = json.loads(assembly.render("json"))["sections"]
    cut = next((i for i, s in enumerate(sections) if s == {"boundary": True}), len(sections))
    return sections[:cut]


@settings(SETTINGS, max_examples=25)
@given(
    files=FILES,
    users=st.lists(
        st.from_regex(r"[a-z][a-z0-9.]{0,15}", fullmatch=True), min_size=2, max_size=2, unique=True
    ),
)
def test_rendering_is_deterministic(
    tmp_path_factory: pytest.TempPathFactory, files: Files, users: list[str]
) -> None:
    with fresh_dir(tmp_path_factory) as base:
        managed = base / "etc" / "claude-code"  # one machine, one managed directory
        write_managed(managed, files)
        # Two users with different home directories and checkouts at different depths; the first
        # checkout is inside its home (so ~/CLAUDE.md is one of its ancestor files).
        homes = [base / "home" / users[0], base / "Users" / "staff" / users[1]]
        projects = [
            git_init(homes[0] / "src" / "repo"),
            git_init(base / "srv" / users[1] / "w" / "repo"),
        ]
        assemblies = []
        for user, home, project in zip(users, homes, projects, strict=True):
            write_user(home, project, files)
            first = run(project, home, managed, user=user)
            second = run(project, home, managed, user=user)
            for fmt in format_names(first.policy.client):
                same(first.render(fmt).encode(), second.render(fmt).encode(), fmt)
                same(first.render(fmt), first.render(fmt), f"{fmt}, rendered twice")
            assemblies.append(first)
        alice, bob = (a.text for a in assemblies)
        for assembly in assemblies:
            assert (BOUNDARY in assembly.text) == any(not s.dropped for s in assembly.sources)
        same(alice.partition(BOUNDARY)[0].encode(), bob.partition(BOUNDARY)[0].encode(), "prefix")
        assert static_json_sections(assemblies[0]) == static_json_sections(assemblies[1])
        # The home-specific files really are there, after the boundary.
        for text, home in zip((alice, bob), homes, strict=True):
            assert ("home-level notes for " + home.name in text) == (home == homes[0])
            assert "home-level notes" not in text.partition(BOUNDARY)[0]


@pytest.mark.slow
def test_rendering_is_identical_across_processes(tmp_path: Path) -> None:
    """Separate CLI processes with different hash seeds (set/dict order) print the same bytes."""
    managed, home = tmp_path / "managed", tmp_path / "home"
    project = git_init(tmp_path / "repo")
    write(managed / "CLAUDE.md", "Managed policy. 管理")
    write(managed / "managed-settings.json", json.dumps({"claudeMd": "From settings 🙂"}))
    for name in ("zeta", "alpha", "mid", "b\u00e9ta", "x1", "x10", "x2"):
        write(managed / ".claude" / "rules" / f"{name}.md", f"Managed rule {name}")
        write(
            project / ".claude" / "rules" / f"{name}.md",
            f"Project rule {name} @../../docs/{name}.md",
        )
        write(project / "docs" / f"{name}.md", f"Doc {name}")
    write(home / ".claude" / "CLAUDE.md", "User file\n@~/.claude/extra.md")
    write(home / ".claude" / "extra.md", "Extra user text")
    write(project / "CLAUDE.md", "Project ✓\n\n<!-- hidden -->\n\n@docs/zeta.md")
    write(project / "CLAUDE.local.md", "Local")
    write(project / "sub" / "CLAUDE.md", "Nested")
    write(project / "sub" / "a.py", "")
    write(home / ".claude" / "projects" / slug(project) / "memory" / "MEMORY.md", "- [x](x.md)")
    env = {"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8"}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    args = [sys.executable, "-m", "assembler", "render", str(project), "--home", str(home)]
    args += ["--managed-dir", str(managed), "--date", "2026-01-31", "--touch"]
    args += [str(project / "sub" / "a.py")]
    for fmt in format_names("claude-code"):
        outputs = [
            subprocess.run(
                [*args, "--format", fmt],
                capture_output=True,
                timeout=60,
                cwd=tmp_path,
                env={**env, "PYTHONHASHSEED": seed},
            )
            for seed in ("1", "2")
        ]
        assert [r.returncode for r in outputs] == [0, 0], outputs[0].stderr
        assert b"Project rule alpha" in outputs[0].stdout
        same(outputs[0].stdout, outputs[1].stdout, fmt)
        same(outputs[0].stderr, outputs[1].stderr, f"{fmt} stderr")


# --- (b) the total budget -----------------------------------------------------------------

_MANAGED_SECTION = re.compile(r"<managed_policy[^>]*>\n.*?\n</managed_policy>", re.DOTALL)


def managed_cost(text: str) -> int:
    """What the managed sections (and the boundary after them) cost, as the budget counts:
    every section with its separator, and the boundary marker with its separator."""
    sections = _MANAGED_SECTION.findall(text.partition(BOUNDARY)[0])
    if not sections:
        return 0
    return sum(estimate_tokens(s + SEPARATOR) for s in sections) + estimate_tokens(
        BOUNDARY + SEPARATOR
    )


def check_budget_cuts(before: Sequence[Source], after: Sequence[Source], budget: int) -> int:
    """Every source the budget changed carries exactly one new, accurate `Cut`; returns how many."""
    assert [(s.path, s.layer) for s in before] == [(s.path, s.layer) for s in after]
    cuts = 0
    for old, new in zip(before, after, strict=True):
        if new.layer is Layer.MANAGED:
            same_source(new, old, "managed text is never cut")
            continue
        if not new.dropped and new.content == old.content:
            same_source(new, old, f"{new.display} unchanged")
            continue
        cuts += 1
        assert new.cuts[:-1] == old.cuts
        cut = new.cuts[-1]
        event(cut.kind)
        assert f"{budget:,}" in cut.reason
        if new.dropped:
            assert (cut.kind, cut.lines, cut.chars, cut.tokens) == (
                "budget-drop",
                old.stats.lines,
                old.stats.chars,
                old.stats.tokens,
            )
            continue
        assert cut.kind == "budget-trim"
        assert new.stats.chars == len(new.content)
        assert new.stats.tokens == estimate_tokens(new.content)
        assert (cut.lines, cut.chars, cut.tokens) == (
            max(0, old.stats.lines - new.stats.lines),
            max(0, old.stats.chars - new.stats.chars),
            max(0, old.stats.tokens - new.stats.tokens),
        )
        # A trim keeps a prefix of the text: whole lines, or part of the first line.
        assert new.content.endswith(BUDGET_MARKER)
        kept = new.content[: -len(BUDGET_MARKER)]
        assert kept
        assert old.content.startswith(kept)
        assert kept.encode("utf-8").decode("utf-8") == kept
        assert old.content[len(kept)] == "\n" or "\n" not in kept
        event("trim: whole lines" if old.content[len(kept)] == "\n" else "trim: in the first line")
    return cuts


@settings(SETTINGS, max_examples=40)
@given(files=FILES, fractions=st.lists(st.floats(0, 1.1), min_size=1, max_size=4))
def test_budget_is_never_exceeded_and_every_cut_is_recorded(
    tmp_path_factory: pytest.TempPathFactory, files: Files, fractions: list[float]
) -> None:
    with fresh_dir(tmp_path_factory) as base:
        managed, home = base / "managed", base / "home"
        project = git_init(base / "repo")
        write_managed(managed, files)
        write_user(home, project, files)
        full = run(project, home, managed, max_tokens=0)
        floor = managed_cost(full.text)
        total = estimate_tokens(full.text)
        # 0 means no budget: every budget tried is at least 1.
        budgets = sorted(
            {max(floor, 1), max(floor - 1, 1), *(int(f * total) + 1 for f in fractions)}
        )
        for budget in budgets:
            assembly = run(project, home, managed, max_tokens=budget)
            unmet = [d for d in assembly.diagnostics if d.code == "CTX601"]
            event("budget met" if budget >= floor else "budget unmet")
            if budget >= floor:
                # Met, unless the budget holds none of the sources: that is said (CTX601).
                empty = [d for d in unmet if "holds none" in d.message]
                assert unmet == empty
                assert not empty or all(s.dropped for s in assembly.sources)
                assert estimate_tokens(assembly.text) <= budget
            else:
                assert [(d.severity, d.path) for d in unmet] == [(Severity.ERROR, "<assembly>")]
                assert all(s.dropped for s in assembly.sources if s.layer is not Layer.MANAGED)
            # Managed text is never cut: the static prefix is the unbudgeted one.
            same(assembly.text.partition(BOUNDARY)[0], full.text.partition(BOUNDARY)[0], "prefix")
            cuts = check_budget_cuts(full.sources, assembly.sources, budget)
            noted = [d for d in assembly.diagnostics if d.code in ("CTX602", "CTX603")]
            assert len(noted) == cuts
            assert {d.path for d in noted} <= {s.display for s in assembly.sources}
            assembly.text.encode("utf-8")


# --- (c) truncation never splits a character ----------------------------------------------


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def index_warning(why: str) -> str:
    return (
        f"\n\n> WARNING: MEMORY.md is {why}. Only part of it was loaded. "
        "Keep index entries to one line under ~200 chars; move detail into topic files."
    )


def check_index_cut(original: str, result: tuple[str, str] | None, lines: int, chars: int) -> None:
    trimmed = original.strip()
    fits = trimmed.count("\n") + 1 <= lines and utf16_len(trimmed) <= chars
    assert (result is None) == fits
    if result is None:
        return
    text, why = result
    event(
        f"index cut: {'both' if ' and ' in why else 'lines' if 'lines (limit' in why else 'size'}"
    )
    assert text.endswith(index_warning(why))
    kept = text[: -len(index_warning(why))]
    kept.encode("utf-8")  # no lone surrogate: a split UTF-16 pair is U+FFFD
    if not trimmed.startswith(kept):  # the client cut at unit `chars`, inside a character
        kept = kept.removesuffix("\ufffd")
        assert trimmed.startswith(kept) and "\n" not in kept
        assert trimmed[len(kept)] >= "\U00010000" and utf16_len(kept) == chars - 1
    assert kept.count("\n") + 1 <= lines
    assert utf16_len(kept) <= chars
    rest = trimmed[len(kept) :]
    if kept.count("\n") + 1 < lines and rest:
        # Cut for size: at the last line boundary that fits, else as much of the line as fits.
        assert rest.startswith("\n") or (
            "\n" not in kept and utf16_len(trimmed[: len(kept) + 1]) > chars
        )


@settings(SETTINGS, max_examples=300)
@given(
    text=st.one_of(TEXT, long_text(max_repeat=6)),
    lines=st.integers(1, 12),
    chars=st.integers(1, 90),
)
def test_index_cut_keeps_a_prefix_within_both_limits(text: str, lines: int, chars: int) -> None:
    check_index_cut(text, truncate_index(text, lines, chars, "MEMORY.md"), lines, chars)


@settings(SETTINGS, max_examples=30)
@given(text=memory_index())
def test_memory_index_from_disk_is_cut_at_a_character_boundary(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    """The real limits (200 lines / 25,000 UTF-16 units) on a real auto-memory MEMORY.md
    (2.1.197's warning and line endings; the cut is 2.1.332's too, `test_memory_cut`)."""
    with fresh_dir(tmp_path_factory) as base:
        project = git_init(base / "repo")
        home = base / "home"
        write(home / ".claude" / "projects" / slug(project) / "memory" / "MEMORY.md", text)
        assembly = run(project, home, base / "managed", client_version="2.1.197")
        memory = [s for s in assembly.sources if s.layer is Layer.MEMORY]
        discovered = [s for s in assembly.discovered if s.layer is Layer.MEMORY]
        if not discovered:
            assert memory == []
            assert not text.strip()
            return
        [source], [before] = memory, discovered
        # Frontmatter and block comments are removed first; the index cut applies to what is left.
        result = None
        if source.cuts:
            assert [c.kind for c in source.cuts] == ["index"]
            result = (source.content, source.cuts[0].reason.removeprefix("index limit: "))
        else:
            same(source.content, before.content, "uncut index")
        check_index_cut(before.content, result, 200, 25_000)
        assert source.content in assembly.text
        assembly.text.encode("utf-8")


@settings(SETTINGS, max_examples=40)
@given(
    soul=long_text(max_repeat=200),
    memory=long_text(max_repeat=200),
    lead=st.sampled_from(["", " ", "\n\n", "\u3000"]),
)
def test_bootstrap_char_limit_cuts_at_a_character_boundary(
    tmp_path_factory: pytest.TempPathFactory, soul: str, memory: str, lead: str
) -> None:
    """The seed's `readWithLimit`: `content[:2000].strip() + "\\n...(truncated)"` when longer."""
    with fresh_dir(tmp_path_factory) as workspace:
        raw = {"soul.md": lead + soul, "memory/MEMORY.md": memory}
        for name, text in raw.items():
            write(workspace / name, text)
        assembly = assemble(
            workspace,
            policy="bootstrap",
            home=workspace / "home",
            managed_dir=workspace / "managed",
            environ={},
        )
        by_tag = {s.tag: s for s in assembly.sources}
        for tag, name in (("soul", "soul.md"), ("memory_index", "memory/MEMORY.md")):
            source, original = by_tag[tag], raw[name]
            if len(original) <= 2000:
                expected = original.strip()
                assert not [c for c in source.cuts if c.kind == "file-chars"]
            else:
                expected = original[:2000].strip() + TRUNCATED
                event(f"{tag} over 2,000 chars")
                assert source.cuts[0].kind == "file-chars"
            if tag == "soul":
                same(source.content, expected, "soul.md")
            else:  # the index cut (200 lines) may follow the character limit
                kept = source.content.partition("\n\n> WARNING: MEMORY.md is ")[0]
                assert expected.startswith(kept)
                assert kept.count("\n") < 200
            body = expected.removesuffix(TRUNCATED)
            assert len(body) <= 2000
            assert original.strip().startswith(body)
            assert body.encode("utf-8").decode("utf-8") == body
        assembly.text.encode("utf-8")
