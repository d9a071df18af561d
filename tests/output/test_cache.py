"""`ctxasm cache`: tiers, hashes, breakpoints, and where a change breaks the cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from assembler.clients.claude_code.settings import slug
from assembler.output.cache import Snapshot, TierState, compare
from assembler.output.tiers import TTL
from tests.helpers.cli import ctxasm
from tests.helpers.trees import build, git_init

WORDS = "lorem ipsum dolor sit amet " * 60  # 1,620 characters: 405 tokens


def cache(tmp_path: Path, repo: Path, *args: str) -> tuple[int, str, str]:
    result = ctxasm(["cache", str(repo), "--home", str(tmp_path / "home"), "--managed-dir",
         str(tmp_path / "managed"), *args])  # fmt: skip
    return result.exit_code, result.stdout, result.stderr


def tree(tmp_path: Path, name: str, local: str) -> Path:
    """One checkout: the same managed policy, user file, project files and memory; its own
    CLAUDE.local.md."""
    repo = git_init(tmp_path / name / "repo")
    build(tmp_path, {"managed/CLAUDE.md": WORDS * 3, "home/.claude/CLAUDE.md": WORDS})
    build(repo, {"CLAUDE.md": WORDS * 4, "CLAUDE.local.md": local})
    memory = tmp_path / "home" / ".claude" / "projects" / slug(repo) / "memory" / "MEMORY.md"
    build(memory.parent, {"MEMORY.md": "- [note](note.md) the staging DB resets on Mondays"})
    return repo


def test_a_pair_differing_only_in_claude_local_md_diverges_at_the_local_tier(
    tmp_path: Path,
) -> None:
    first = tree(tmp_path, "a", "My sandbox is sandbox-a.")
    second = tree(tmp_path, "b", "My sandbox is sandbox-b, in another region.")
    snap = tmp_path / "snap.json"
    code, out, err = cache(tmp_path, first, "--save", str(snap))
    assert (code, err) == (0, f"ctxasm: snapshot saved to {snap}\n")
    lines = out.splitlines()
    assert lines[0].startswith("5 tiers, ")
    assert lines[0].endswith(
        " tokens (estimated); 4 of 4 breakpoints used; minimum cacheable 1,024 tokens"
    )
    assert lines[1] == "   #  tier            tokens   prefix  sha256        breakpoint"
    assert [line.split()[1] for line in lines[2:7]] == [
        "managed",
        "user",
        "project",
        "local",
        "memory",
    ]
    code, out, err = cache(tmp_path, second, "--against", str(snap), "--json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert [(t["name"], t["breakpoint"]) for t in report["tiers"]] == [
        ("managed", {"ttl": "5m", "scope": None}),
        ("user", {"ttl": "5m", "scope": None}),
        ("project", {"ttl": "5m", "scope": None}),
        # Five tiers, four breakpoints: re-writing 18 tokens of local when memory changes
        # costs less than re-writing the user tier when the project changes.
        ("local", None),
        ("memory", {"ttl": "5m", "scope": None}),
    ]
    tokens = {t["name"]: t["tokens"] for t in report["tiers"]}
    against = report["against"]
    assert (against["tier"], against["change"], against["position"]) == ("local", "changed", 3)
    # Read what the snapshot's request cached before the local tier (through project), write
    # local and memory (each up to its breakpoint), nothing at base price.
    read = tokens["managed"] + tokens["user"] + tokens["project"]
    written = tokens["local"] + tokens["memory"]
    assert (against["read"], against["written_5m"], against["written_1h"]) == (read, written, 0)
    assert (against["uncached"], against["reprocessed"]) == (0, written)
    expected = (0.1 * read + 1.25 * written) / (read + written)
    assert against["relative_cost"] == pytest.approx(expected, abs=1e-4)
    assert against["cached_cost"] == pytest.approx(0.1)
    code, out, _ = cache(tmp_path, second, "--against", str(snap))
    assert out.splitlines()[-3:] == [
        f"against {snap}: first divergence: local (changed), tier 4 of 5",
        f"  next request: {read:,} tokens read from the cache, {written} written (5m), "
        f"0 uncached; {written} re-processed",
        f"  relative cost: {expected:.3f}x of an uncached request (unchanged: 0.100x)",
    ]


def test_the_same_tree_against_itself_has_no_divergence(tmp_path: Path) -> None:
    repo = tree(tmp_path, "a", "Local.")
    snap = tmp_path / "snap.json"
    assert cache(tmp_path, repo, "--save", str(snap))[0] == 0
    code, out, _ = cache(tmp_path, repo, "--against", str(snap), "--json")
    assert json.loads(out)["against"]["change"] == "none"
    assert json.loads(out)["against"]["relative_cost"] == pytest.approx(0.1)
    # A --json report is a snapshot too.
    (tmp_path / "report.json").write_text(out)
    code, out, _ = cache(tmp_path, repo, "--against", str(tmp_path / "report.json"))
    assert (code, f"against {tmp_path / 'report.json'}: no tier changed" in out) == (0, True)


def test_options_reach_the_plan(tmp_path: Path) -> None:
    repo = tree(tmp_path, "a", "Local.")
    _, out, _ = cache(
        tmp_path, repo, "--ttl", "1h", "--ttl", "memory=5m", "--reserve-breakpoint",
        "--scope", "global", "--model", "claude-haiku-4-5", "--json",
    )  # fmt: skip
    report = json.loads(out)
    assert report["min_tokens"] == 4096 and report["slots"] == 3
    assert [t["breakpoint"] for t in report["tiers"]] == [None] * 5  # 3,046 < 4,096 tokens
    _, out, _ = cache(tmp_path, repo, "--min-cache-tokens", "1000", "--scope", "global",
                      "--ttl", "1h", "--ttl", "memory=5m", "--reserve-breakpoint", "--json")  # fmt: skip
    marks = [t["breakpoint"] for t in json.loads(out)["tiers"]]
    assert marks == [
        {"ttl": "1h", "scope": "global"},
        None,
        {"ttl": "1h", "scope": None},
        None,
        {"ttl": "5m", "scope": None},
    ]


def test_bad_snapshots_and_options_are_one_line_errors(tmp_path: Path) -> None:
    repo = tree(tmp_path, "a", "Local.")
    missing = tmp_path / "nope.json"
    assert cache(tmp_path, repo, "--against", str(missing)) == (
        2,
        "",
        f"ctxasm: {missing}: snapshot not found; create one with --save\n",
    )
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "tiers": [{"name": "x"}]}')
    code, _, err = cache(tmp_path, repo, "--against", str(bad))
    assert (code, err) == (
        2,
        f"ctxasm: {bad}: malformed snapshot ('tokens'); recreate it with --save\n",
    )
    bad.write_text("[1, 2")
    assert cache(tmp_path, repo, "--against", str(bad))[2].startswith(
        f"ctxasm: {bad}: not a JSON snapshot ("
    )
    for hostile, said in [
        ("/dev/zero", "not a regular file"),
        (_fifo(tmp_path / "fifo"), "not a regular file"),
        (_big(tmp_path / "big.json"), "over the 1,048,576-byte limit"),
        (_deep(tmp_path / "deep.json"), "nested too deeply"),
    ]:
        code, out, err = cache(tmp_path, repo, "--against", hostile)
        assert (code, out) == (2, "") and said in err and err.count("\n") == 1, err
    code, _, err = cache(tmp_path, repo, "--ttl", "user=1h")
    assert (code, err) == (
        2,
        "ctxasm: ttl: user=1h follows managed at 5m; the API requires longer TTLs first: "
        "give 1h to every tier before user too\n",
    )
    code, _, err = cache(tmp_path, repo, "--ttl", "3h")
    assert code == 2 and "Invalid value for '--ttl': '3h' is not 5m, 1h, or TIER=5m|1h" in err


def _fifo(path: Path) -> str:
    os.mkfifo(path)
    return str(path)


def _big(path: Path) -> str:
    path.write_text("[" + "1," * 600_000 + "1]")
    return str(path)


def _deep(path: Path) -> str:
    path.write_text("[" * 100_000 + "]" * 100_000)
    return str(path)


def _state(name: str, tokens: int, mark: bool = True) -> TierState:
    return TierState(name, tokens, f"h-{name}", TTL.FIVE_MINUTES if mark else None)


def test_added_and_removed_tiers() -> None:
    before = Snapshot(
        (_state("managed", 2000), _state("project", 1000), _state("memory", 100)), "", "", 0, 4
    )
    added = before._replace(tiers=(*before.tiers[:2], _state("local", 50), before.tiers[2]))
    d = compare(added, before)
    assert (d.tier, d.change, d.position, d.read, d.written_5m) == ("local", "added", 2, 3000, 150)
    removed = before._replace(tiers=before.tiers[:2])
    d = compare(removed, before)
    assert (d.tier, d.change, d.read, d.written_5m, d.uncached) == ("memory", "removed", 3000, 0, 0)
    unmarked = before._replace(tiers=tuple(t._replace(ttl=None) for t in before.tiers))
    d = compare(unmarked, before)
    assert (d.read, d.uncached, d.relative_cost) == (0, 3100, 1.0)  # no cache_control: no cache


def test_what_cache_says_before_and_after_its_work(tmp_path: Path) -> None:
    """`--save` says where it saved; a TTL order that no run can satisfy is a usage error
    before discovery; a missing --touch path is a warning."""
    repo = tree(tmp_path, "a", "Local.")
    saved = tmp_path / "snap.json"
    code, _, err = cache(tmp_path, repo, "--save", str(saved))
    assert code == 0 and f"ctxasm: snapshot saved to {saved}\n" in err and saved.exists()
    code, out, err = cache(
        tmp_path, tmp_path / "no-such-dir", "--ttl", "project=5m", "--ttl", "memory=1h"
    )
    assert (code, out) == (2, "") and "memory=1h follows project at 5m" in err  # before the path
    machine = ["--home", str(tmp_path / "nope"), "--managed-dir", str(tmp_path)]
    result = ctxasm(["cache", str(repo), *machine, "--touch", str(repo / "gone.py")])
    assert f"ctxasm: warning: --touch {repo / 'gone.py'}: no such file" in result.stderr


# Numbers Python's json accepts that no snapshot holds: non-finite, past a float, not whole.
HOSTILE_NUMBERS = ("1e999", "-1e999", "NaN", "Infinity", "-Infinity", "1" + "0" * 4000, "1e308",
                   "2.5", "-1", "true")  # fmt: skip


def _leaves(value: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _leaves(v, (*path, i))]
    return [path]


def _replaced(data: object, path: tuple[object, ...], literal: str) -> str:
    """`data` as JSON text with the value at `path` written as `literal` (JSON or not)."""
    copy = json.loads(json.dumps(data))
    node = copy
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = "@@hostile@@"
    return json.dumps(copy).replace('"@@hostile@@"', literal)


def test_a_hostile_number_anywhere_in_a_snapshot_is_one_line(tmp_path: Path) -> None:
    """`1e999`, `NaN`, `Infinity` (which Python's json accepts) or a 4,000-digit integer at
    any field of a snapshot: exit 2 and one line naming the file, never an internal error."""
    repo = tree(tmp_path, "a", "Local.")
    saved = tmp_path / "snap.json"
    assert cache(tmp_path, repo, "--save", str(saved), "--ttl", "1h")[0] == 0
    data = json.loads(saved.read_text())
    leaves = _leaves(data)
    assert ("min_tokens",) in leaves and ("tiers", 0, "tokens") in leaves
    assert ("tiers", 0, "breakpoint", "ttl") in leaves
    bad = tmp_path / "bad.json"
    for path in leaves:
        for literal in HOSTILE_NUMBERS:
            bad.write_text(_replaced(data, path, literal))
            for extra in ((), ("--json",)):
                code, out, err = cache(tmp_path, repo, "--against", str(bad), *extra)
                assert (code, out) == (2, ""), (path, literal, err)
                assert err.startswith(f"ctxasm: {bad}: ") and err.count("\n") == 1, err
                assert err.endswith("; recreate it with --save\n"), err


def test_a_snapshot_of_another_agent_is_refused_naming_both(tmp_path: Path) -> None:
    """`cache --policy codex --against` a Claude Code snapshot compared silently ("first
    divergence: user (removed)", issue 34): a snapshot says whose context it is, and another
    agent's is refused with the policy to compare it under. A snapshot that does not say
    (written before) is compared as before."""

    from tests.helpers.cli import ctxasm

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("Claude.\n")
    (repo / "AGENTS.md").write_text("Agents.\n")
    (tmp_path / "home").mkdir()
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "m")]
    snap = tmp_path / "snap.json"
    assert ctxasm(["cache", str(repo), "--save", str(snap), *machine]).exit_code == 0
    assert json.loads(snap.read_text())["client"] == "claude-code"
    other = ctxasm(["cache", str(repo), "--policy", "codex", "--against", str(snap), *machine])
    assert other.exit_code == 2 and other.stdout == ""
    assert other.stderr.endswith(
        "a snapshot of Claude Code's context, and this run is Codex's: compare it with "
        "--policy claude-code, or save one for this agent with --save\n"
    )
    assert ctxasm(["cache", str(repo), "--against", str(snap), *machine]).exit_code == 0
    old = json.loads(snap.read_text())
    del old["client"]
    snap.write_text(json.dumps(old))
    unsaid = ctxasm(["cache", str(repo), "--policy", "codex", "--against", str(snap), *machine])
    assert unsaid.exit_code == 0


def test_the_text_report_fits_columns(tmp_path: Path) -> None:
    """`cache` ignored `COLUMNS` (lines of 138-140 characters, issue 34): its prose wraps to
    it, the table's rows stay whole; piped without COLUMNS, it is as it was."""
    from tests.helpers.cli import ctxasm

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("Root.\n")
    (repo / "CLAUDE.local.md").write_text("Local.\n")
    args = ["cache", str(repo), "--home", str(tmp_path / "h"), "--managed-dir", str(tmp_path / "m")]
    narrow = ctxasm(args, env={"COLUMNS": "60"}).stdout.splitlines()
    rows = [line for line in narrow if "  " in line.strip()]
    assert rows and all(len(line) <= 60 for line in narrow if line not in rows), narrow
    wide = ctxasm(args, env={"COLUMNS": None}).stdout.splitlines()  # type: ignore[dict-item]
    assert max(map(len, wide)) > 60 and len(wide) < len(narrow)
