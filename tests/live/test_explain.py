"""`ctxasm explain`: every candidate in load order, why it is there, what became of it.

Each status and skip reason appears on a real tree with the exact words the user reads; the
JSON form is checked key by key against the schema docs/explain-and-watch.md documents; plain output (not a
terminal, or NO_COLOR) has no escape code, and a real terminal gets colour.
"""

from __future__ import annotations

import itertools
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from assembler.clients.claude_code.settings import slug
from assembler.live.explain import Explanation, Skip, Status, explain
from assembler.model import RulesOrder
from tests.helpers.cli import ctxasm
from tests.helpers.trees import ROOT, build, git_init, machine
from tests.helpers.unprivileged import as_unprivileged, traversable  # noqa: F401 (a fixture)

SKIP_LIMIT = 4 * 1024 * 1024


def invoke(tmp_path: Path, *args: str) -> Any:
    """`ctxasm explain ARGS` in this process, hermetic."""
    machine_args = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    return ctxasm(["explain", *args, *machine_args])


def every_status_tree(tmp_path: Path) -> Path:
    """A project where every kind of row appears once."""
    repo = git_init(tmp_path / "repo")
    memory = f"home/.claude/projects/{slug(repo)}/memory/MEMORY.md"
    build(
        tmp_path,
        {
            "managed/CLAUDE.md": "Managed policy.",
            "managed/managed-settings.json": json.dumps({"claudeMd": "Inline managed rule."}),
            "home/.claude/CLAUDE.md": "User preferences.",
            "home/.claude/settings.json": json.dumps(
                {"claudeMdExcludes": ["**/repo/CLAUDE.local.md"]}
            ),
            "repo/CLAUDE.md": "Root.\n@docs/guide.md\n@../outside.md\n@big.md\n@blob.md\n",
            "repo/docs/guide.md": "Guide @one.md",
            "repo/docs/one.md": "One @two.md",
            "repo/docs/two.md": "Two @three.md",
            "repo/docs/three.md": "Three @four.md",
            "repo/docs/four.md": "Four, one hop too many.",
            "outside.md": "Outside the project.",
            "repo/.claude/CLAUDE.md": "<!-- only a comment -->\n",
            "repo/.claude/rules/ts.md": '---\npaths: "src/**/*.ts"\n---\nTypeScript rule.',
            "repo/CLAUDE.local.md": "Excluded by the settings.",
            "repo/src/app.ts": "",
            memory: "".join(f"- entry {i}\n" for i in range(250)),
        },
    )
    with open(repo / "big.md", "wb") as f:  # sparse: one stat says it is too large
        f.truncate(SKIP_LIMIT + 1)
    (repo / "blob.md").write_bytes(b"\0\1\2")
    return repo


def rows(result: Explanation, show_all: bool = False) -> list[tuple[str | None, ...]]:
    return [
        (
            r.layer.value if r.layer else None,
            r.path,
            r.reason.text if r.reason else None,
            r.status.value,
            r.skip.value if r.skip else None,
            r.detail,
        )
        for r in result.visible(show_all)
    ]


def test_every_status_with_its_exact_reason(tmp_path: Path) -> None:
    repo = every_status_tree(tmp_path)
    result = explain(repo, **machine(tmp_path))
    managed = f"{tmp_path}/managed/CLAUDE.md"
    memory = f"~/.claude/projects/{slug(repo)}/memory/MEMORY.md"
    imported = "imported by {} (@{}) at depth {}"
    assert rows(result) == [
        ("managed", managed, "managed policy file", "loaded", None, ""),
        ("managed", "<managed-settings>", "claudeMd in managed-settings.json", "loaded", None, ""),
        ("user", "~/.claude/CLAUDE.md", "user instructions", "loaded", None, ""),
        ("project", "CLAUDE.md", "in cwd", "loaded", None, ""),
        (
            "project",
            "docs/guide.md",
            imported.format("CLAUDE.md", "docs/guide.md", 1),
            "loaded",
            None,
            "",
        ),
        (
            "project",
            "docs/one.md",
            imported.format("docs/guide.md", "one.md", 2),
            "loaded",
            None,
            "",
        ),
        ("project", "docs/two.md", imported.format("docs/one.md", "two.md", 3), "loaded", None, ""),
        (
            "project",
            "docs/three.md",
            imported.format("docs/two.md", "three.md", 4),
            "loaded",
            None,
            "",
        ),
        (
            "project",
            "docs/four.md",
            imported.format("docs/three.md", "four.md", 5),
            "skipped",
            "import too deep",
            "import at depth 5 (via docs/three.md) is beyond the 4-hop limit; the client drops "
            "it: import it from a shallower file",
        ),
        (
            "project",
            "../outside.md",
            imported.format("CLAUDE.md", "../outside.md", 1),
            "skipped",
            "external import not approved",
            "@../outside.md in CLAUDE.md points outside the working directory; the client drops "
            "it unless external imports are approved (answer yes when Claude Code asks at "
            "start; it records hasClaudeMdExternalIncludesApproved for the project in "
            "~/.claude.json)",
        ),
        (
            "project",
            "big.md",
            imported.format("CLAUDE.md", "big.md", 1),
            "skipped",
            "too large",
            "import is 4,194,305 bytes, over the 4,194,304-byte limit; the client skips it: split "
            "it or move detail into imported files",
        ),
        (
            "project",
            "blob.md",
            imported.format("CLAUDE.md", "blob.md", 1),
            "skipped",
            "binary",
            "import is binary (NUL byte at offset 0); not loaded: replace it with text",
        ),
        (
            "project",
            ".claude/CLAUDE.md",
            "in cwd",
            "skipped",
            "empty",
            "file is empty after removing frontmatter and comments",
        ),
        (
            "project",
            ".claude/rules/ts.md",
            "rule in .claude/rules",
            "skipped",
            "conditional rule not matched",
            "paths: src/**/*.ts; loaded when the agent touches a matching file",
        ),
        (
            "local",
            "CLAUDE.local.md",
            "in cwd",
            "skipped",
            "excluded by settings",
            "excluded by claudeMdExcludes",
        ),
        (
            "memory",
            memory,
            "auto memory index of the project",
            "truncated",
            None,
            "cut 48 lines, 376 chars, 94 tokens: index limit: 250 lines (limit: 200)",
        ),
    ]
    by_path = {r.path: r for r in result.rows}
    assert (by_path["big.md"].bytes, by_path["big.md"].tokens) == (SKIP_LIMIT + 1, None)
    assert by_path[".claude/rules/ts.md"].paths == ("src/**/*.ts",)
    assert result.rules_order is RulesOrder.DIRECTORY


def test_all_lists_candidate_locations_that_do_not_exist(tmp_path: Path) -> None:
    repo = every_status_tree(tmp_path)
    result = explain(repo, **machine(tmp_path))
    # Within the test's directory (those above it belong to the machine): the project's
    # parent, looked at as every ancestor of cwd is.
    absent = [
        (r.layer.value if r.layer else None, r.path, r.reason.text if r.reason else None)
        for r in result.visible(True)
        if r.status is Status.ABSENT and r.file.startswith(f"{tmp_path}{os.sep}")
    ]
    assert absent == [
        ("project", "../CLAUDE.md", "ancestor of cwd"),
        ("project", f"{tmp_path}/.claude/CLAUDE.md", "ancestor of cwd"),
        ("local", "../CLAUDE.local.md", "ancestor of cwd"),
    ]
    assert all(r.status is not Status.ABSENT for r in result.visible(False))


def test_touch_lists_what_was_attached_where_it_was_attached(tmp_path: Path) -> None:
    repo = every_status_tree(tmp_path)
    build(repo, {"src/CLAUDE.md": "Sources.", "src/CLAUDE.local.md": ""})
    result = explain(repo, touched=[repo / "src" / "app.ts"], **machine(tmp_path))
    tail = rows(result)[-3:]
    assert tail == [
        ("subdirectory", "src/CLAUDE.md", "in src, on the way to src/app.ts", "loaded", None, ""),
        (
            "local",
            "src/CLAUDE.local.md",
            "in src, on the way to src/app.ts",
            "skipped",
            "empty",
            "file is empty after removing frontmatter and comments",
        ),
        (
            "subdirectory",
            ".claude/rules/ts.md",
            "paths: 'src/**/*.ts' matched src/app.ts",
            "loaded",
            None,
            "",
        ),
    ]
    # Listed once: where it was attached, not also as "not matched" at start.
    assert [r.path for r in result.rows].count(".claude/rules/ts.md") == 1


def test_a_rule_loaded_at_start_is_not_listed_again_as_not_matched_by_a_touch(
    tmp_path: Path,
) -> None:
    """A touch reads the rules directories again for the conditional rules: an unconditional
    rule, loaded at start, is no candidate the read kept out (it was listed as a "conditional
    rule not matched" with empty `paths:` once per touch)."""
    repo = git_init(tmp_path / "repo")
    build(
        repo,
        {
            "CLAUDE.md": "Root.",
            ".claude/rules/always.md": "Always.",
            ".claude/rules/web.md": '---\npaths: "web/**"\n---\nWeb rule.',
            "src/app.ts": "",
        },
    )
    result = explain(repo, touched=[repo / "src" / "app.ts"], **machine(tmp_path))
    assert [row[:5] for row in rows(result) if str(row[1]).startswith(".claude/rules/")] == [
        ("project", ".claude/rules/always.md", "rule in .claude/rules", "loaded", None),
        (
            "project",
            ".claude/rules/web.md",
            "rule in .claude/rules",
            "skipped",
            "conditional rule not matched",
        ),
    ]


def test_the_budget_trims_and_drops_and_the_picture_adds_up(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "home/.claude/CLAUDE.md": "User.",
            "repo/CLAUDE.md": "\n".join(f"Project line {i}." for i in range(40)),
            "repo/CLAUDE.local.md": "\n".join(f"Local line {i}." for i in range(40)),
        },
    )
    result = explain(repo, max_tokens=120, **machine(tmp_path))
    assert [(r.path, r.status, r.skip) for r in result.rows if r.status is not Status.ABSENT] == [
        ("~/.claude/CLAUDE.md", Status.LOADED, None),
        ("CLAUDE.md", Status.TRUNCATED, None),
        ("CLAUDE.local.md", Status.SKIPPED, Skip.BUDGET),
    ]
    trimmed = next(r for r in result.rows if r.path == "CLAUDE.md")
    assert trimmed.detail.startswith("cut ") and "trimmed to fit --max-tokens 120" in trimmed.detail
    assert [(lt.layer.value, lt.sources) for lt in result.layers] == [("user", 1), ("project", 1)]
    assert result.total == sum(lt.tokens for lt in result.layers) + result.boundary_tokens
    assert result.total <= result.budget == 120


@pytest.mark.usefixtures("traversable")
def test_an_unreadable_file_is_skipped_as_unreadable(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "secret", "repo/CLAUDE.local.md": "local"})
    explain(repo, **machine(tmp_path))  # import everything first: the child cannot read /root
    os.chmod(repo / "CLAUDE.md", 0)
    try:
        found = as_unprivileged(
            repo / "CLAUDE.md", lambda: rows(explain(repo, **machine(tmp_path)))
        )
    finally:
        os.chmod(repo / "CLAUDE.md", 0o644)
    assert found == [
        (
            "project",
            "CLAUDE.md",
            "in cwd",
            "skipped",
            "unreadable",
            "file cannot be read (Permission denied); not loaded: fix its permissions",
        ),
        ("local", "CLAUDE.local.md", "in cwd", "loaded", None, ""),
    ]


# --- JSON ---------------------------------------------------------------------------------

OPT_INT, OPT_STR = (int, type(None)), (str, type(None))
SOURCE_SCHEMA: dict[str, Any] = {
    "layer": OPT_STR, "path": str, "file": str, "why": OPT_STR, "reason": OPT_STR,
    "parent": OPT_STR, "depth": OPT_INT, "pattern": OPT_STR, "touched": OPT_STR,
    "status": str, "skip": OPT_STR, "code": OPT_STR, "detail": OPT_STR,
    "lines": OPT_INT, "bytes": OPT_INT, "chars": OPT_INT, "tokens": OPT_INT,
    "cuts": list, "paths": list, "lazy": bool, "notes": list,
}  # fmt: skip
TOP_SCHEMA: dict[str, Any] = {
    "version": int, "policy": str, "client_version": str, "cwd": str, "project_root": str,
    "rules_order": str, "touched": list, "sources": list, "budget": dict, "notes": list,
    "subagent": type(None), "subagents": list, "subagents_note": str,
}  # fmt: skip
BUDGET_SCHEMA = {"max_tokens": int, "total": int, "boundary": int, "layers": list}
CUT_SCHEMA = {"kind": str, "reason": str, "lines": int, "chars": int, "tokens": int}
DIAGNOSTIC_SCHEMA = {"code": str, "severity": str, "path": str, "message": str}


def conforms(value: dict[str, Any], schema: dict[str, Any]) -> None:
    assert sorted(value) == sorted(schema)
    for key, kind in schema.items():
        assert isinstance(value[key], kind), (key, value[key])


def test_json_has_the_documented_schema(tmp_path: Path) -> None:
    repo = every_status_tree(tmp_path)
    result = invoke(tmp_path, str(repo), "--json", "--all")
    assert result.exit_code == 1  # an import is binary: an error, as `ctxasm render` says
    assert result.stderr == ""
    data = json.loads(result.stdout)
    conforms(data, TOP_SCHEMA)
    assert (data["version"], data["policy"], data["rules_order"]) == (1, "claude-code", "directory")
    assert data["client_version"] == "2.1.332"  # the release modelled: the newest by default
    conforms(data["budget"], BUDGET_SCHEMA)
    for layer in data["budget"]["layers"]:
        conforms(layer, {"layer": str, "sources": int, "tokens": int})
    for source in data["sources"]:
        conforms(source, SOURCE_SCHEMA)
        for cut in source["cuts"]:
            conforms(cut, CUT_SCHEMA)
        for note in source["notes"]:
            conforms(note, DIAGNOSTIC_SCHEMA)
    statuses = {s["status"] for s in data["sources"]}
    assert statuses == {"loaded", "truncated", "skipped", "absent"}
    skips = {s["skip"] for s in data["sources"]} - {None}
    assert skips == {
        "import too deep", "external import not approved", "too large", "binary", "empty",
        "conditional rule not matched", "excluded by settings",
    }  # fmt: skip
    blob = next(s for s in data["sources"] if s["path"] == "blob.md")
    assert (blob["code"], blob["why"], blob["parent"], blob["depth"]) == (
        "CTX003",
        "import",
        "CLAUDE.md",
        1,
    )
    without_all = json.loads(invoke(tmp_path, str(repo), "--json").stdout)
    assert [s for s in data["sources"] if s["status"] != "absent"] == without_all["sources"]


# --- terminal -----------------------------------------------------------------------------


def test_plain_output_without_a_terminal(tmp_path: Path) -> None:
    repo = every_status_tree(tmp_path)
    result = invoke(tmp_path, str(repo), "--max-tokens", "4000")
    out = result.stdout
    assert "\x1b" not in out
    lines = out.splitlines()
    head = f"ctxasm explain: {repo} (policy claude-code, Claude Code 2.1.332) "  # wrapped when tmp_path is long
    assert " ".join(out.split()).startswith(head)
    assert not any(line.startswith("rules order:") for line in lines)  # the same every run
    everything = invoke(tmp_path, str(repo), "--max-tokens", "4000", "--all").stdout.splitlines()
    assert (
        "rules order: directory: raw directory order (os.scandir, unsorted), "
        "as Claude Code reads rules"
    ) in everything
    assert "big.md: import is 4,194,305 bytes, over the 4,194,304-byte limit" in out
    budget = lines[lines.index(next(x for x in lines if x.startswith("budget: "))) :]
    total = sum(lt for lt in _layer_tokens(tmp_path, repo))
    assert budget[0] == f"budget: {total:,} of 4,000 tokens (estimated, {100 * total / 4000:.0f}%)"
    bar = budget[1]
    assert bar.startswith("[M") and bar.endswith(".]") and len(bar) == 62
    assert set(bar[1:-1]) == {"M", "U", "P", "A", "|", "."}
    assert budget[2].startswith("M managed ")


def _layer_tokens(tmp_path: Path, repo: Path) -> list[int]:
    result = explain(repo, max_tokens=4000, **machine(tmp_path))
    return [lt.tokens for lt in result.layers] + [result.boundary_tokens]


def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run `ctxasm` with its stdout on a pseudo-terminal; what it printed."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "assembler", *args],
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # the terminal closed: the process is done
                break
            if not chunk:
                break
            chunks.append(chunk)
        elif proc.poll() is not None:
            break
    os.close(leader)
    code = proc.wait(timeout=30)
    assert proc.stderr is not None
    with proc.stderr:
        assert code == 1, proc.stderr.read()
    return b"".join(chunks).decode()


@pytest.mark.parametrize("no_color", [True, False])
def test_no_color_on_a_terminal(tmp_path: Path, no_color: bool) -> None:
    repo = every_status_tree(tmp_path)
    env = {"PATH": os.environ.get("PATH", ""), "TERM": "xterm-256color", "COLUMNS": "120"}
    if no_color:
        env["NO_COLOR"] = "1"
    out = _on_a_terminal(
        ["explain", str(repo), "--home", str(tmp_path / "home"), "--managed-dir",
         str(tmp_path / "managed")],
        env,
    )  # fmt: skip
    assert "big.md" in out
    assert ("\x1b" in out) is not no_color


def test_paths_never_wrap_at_80_columns(tmp_path: Path) -> None:
    """The table at 80 columns drops number columns, then folds a path from the left
    (`…/rules/name.md`); no path, in the table or below it, is split across lines."""
    repo = every_status_tree(tmp_path)
    deep = ".claude/rules/frontend/packaging-and-release-engineering/package-installation.md"
    build(
        repo,
        {
            ".claude/rules/package-installation.md": '---\npaths: "**/package.json"\n---\nUse pnpm.',
            deep: "Always pin versions.",
            "package.json": "{}",
        },
    )
    machine_args = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    done = subprocess.run(
        [sys.executable, "-m", "assembler", "explain", str(repo), *machine_args,
         "--touch", str(repo / "package.json")],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
        env={**os.environ, "COLUMNS": "80"},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # the tree has skipped files
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, done.stdout
    # The case: the column cannot hold the path, so it loses its head at a `/`.
    assert any("…/package-installation.md" in line for line in lines), done.stdout
    assert deep not in done.stdout
    paths = [str(repo), *(r.path for r in explain(repo, **machine(tmp_path)).visible(False))]
    assert ".claude/rules/package-installation.md" in paths
    for path in paths:  # each on one line, whole or folded from the left
        tails = [path] + [f"…{path[i:]}" for i in range(1, len(path))]
        assert any(t in line for line in lines for t in tails), (path, done.stdout)
        for before, after in itertools.pairwise(lines):
            for cut in range(1, len(path)):
                assert not (before.rstrip().endswith(path[:cut]) and
                            after.lstrip().startswith(path[cut:])), (path, before, after)  # fmt: skip


@pytest.mark.parametrize("first", ["", "import assembler.live.explain_view", "import assembler"])
def test_the_documented_import_gives_the_functions(tmp_path: Path, first: str) -> None:
    """`from assembler.live import explain` (the docs' `assembler.live.explain`) is the
    function, whatever was imported before; so is `side_by_side`; the modules still serve
    `from assembler.live.explain import ...`."""
    build(tmp_path, {"repo/CLAUDE.md": "Root."})
    script = f"""{first}
from pathlib import Path
from assembler.live import explain, side_by_side
from assembler.live.explain import Explanation
tmp = Path({str(tmp_path)!r})
hermetic = dict(home=tmp / "home", managed_dir=tmp / "managed", environ={{}})
found = explain(tmp / "repo", **hermetic)
assert isinstance(found, Explanation), type(found)
print([row.path for row in found.rows if row.status.value == "loaded"])
print(type(side_by_side(tmp / "repo", **hermetic)).__name__)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == ["['CLAUDE.md']", "SideBySide"]


def test_at_80_columns_each_reason_takes_at_most_two_lines(tmp_path: Path) -> None:
    """A new user's terminal: every line fits 80 columns, and the "why it is there" under a
    path takes two lines, not four (the source column took only its longest word's width)."""
    repo = git_init(tmp_path / "repo")
    build(
        repo,
        {
            "CLAUDE.md": "Types from @langfuse/shared; style in @docs/style.md\n",
            "docs/style.md": "Tabs.",
            "web/CLAUDE.md": "Web.",
            "web/.claude/rules/ui.md": '---\npaths: "src/**/*.tsx"\n---\nUse the design system.',
        },
    )
    (tmp_path / "home").mkdir()
    machine_args = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    done = subprocess.run(
        [sys.executable, "-m", "assembler", "explain", "web", *machine_args],
        capture_output=True, text=True, cwd=repo, timeout=60,
        env={**os.environ, "COLUMNS": "80"},
    )  # fmt: skip
    lines = done.stdout.splitlines()
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert max(len(line) for line in lines) <= 80, done.stdout
    header = next(line for line in lines if line.startswith("#  layer"))
    start = header.index("source (why it is there)")
    rows = explain(repo / "web", **machine(tmp_path)).visible(False)
    assert len(rows) == 5
    for row in rows:
        assert row.reason is not None
        at = next(i for i, line in enumerate(lines) if line[start:].startswith(row.path + " "))
        below = itertools.takewhile(lambda line: not line[:start].strip(), lines[at + 1 :])
        reason = [part for line in below if (part := line[start:].split("  ")[0])]
        assert (" ".join(reason), len(reason) <= 2) == (row.reason.text, True), done.stdout


# --- subagents ----------------------------------------------------------------------------


def _subagent_tree(tmp_path: Path) -> Path:
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "root",
            "repo/.claude/rules/a.md": "rule",
            "repo/.claude/agents/rev.md": "---\nname: rev\ndescription: d\ntools: Read\n---\nx",
            "home/.claude/skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\nx",
        },
    )
    return repo


def test_explain_sets_each_agent_type_beside_the_main_agent(tmp_path: Path) -> None:
    repo = _subagent_tree(tmp_path)
    result = explain(repo, client_version="2.1.197", **machine(tmp_path))
    rows = {r.name: (r.files, r.skills, r.shares_parent) for r in result.agents}
    both = ("CLAUDE.md", ".claude/rules/a.md")
    assert rows == {
        "main agent": (both, True, False),
        "claude": (both, True, False),
        "Explore": ((), True, False),
        "general-purpose": (both, True, False),
        "Plan": ((), True, False),
        "statusline-setup": (both, False, False),
        "rev": (both, False, False),
    }  # no fork at 2.1.197
    assert result.agents_note == "Explore and Plan start without your CLAUDE.md files"
    text = invoke(tmp_path, str(repo)).stdout
    assert "  Explore           no instruction files; skills list (built-in)\n" in text
    assert "  Explore and Plan start without your CLAUDE.md files.\n" in text
    data = json.loads(invoke(tmp_path, str(repo), "--json").stdout)
    assert [a["name"] for a in data["subagents"]][-2:] == ["fork", "rev"]  # 2.1.332
    assert data["subagent"] is None


def test_explain_of_a_subagent_skips_what_it_does_not_receive(tmp_path: Path) -> None:
    repo = _subagent_tree(tmp_path)
    result = explain(repo, subagent="Plan", **machine(tmp_path))
    skipped = {r.path: r.skip for r in result.rows if r.status is Status.SKIPPED}
    assert skipped == {"CLAUDE.md": Skip.EXCLUDED_AGENT, ".claude/rules/a.md": Skip.EXCLUDED_AGENT}
    assert result.agents == ()
    text = invoke(tmp_path, str(repo), "--subagent", "Plan").stdout
    assert (
        "\nsubagent: Plan (built-in): no instruction files (only the date); the skills list" in text
    )


def test_one_missing_candidate_is_one_location(tmp_path: Path) -> None:
    """Gemini's explain said "1 candidate locations do not exist"."""
    from tests.helpers.cli import ctxasm

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "GEMINI.md").write_text("Gemini.\n")
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "m")]
    out = ctxasm(["explain", str(repo), "--policy", "gemini", *machine]).stdout
    said = [line for line in out.splitlines() if "candidate location" in line]
    assert said and all(
        line.startswith("1 candidate location does not exist")
        or re.match(r"[\d,]+ candidate locations do not exist", line)
        for line in said
    ), said


def test_a_subagent_gets_no_skills_list_where_there_are_no_skills(tmp_path: Path) -> None:
    """`explain --subagent Explore` said "the skills list" in a repository with no skills,
    where the main table said "no skills list" (issue 34)."""
    from tests.helpers.cli import ctxasm

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("Root.\n")
    args = ["explain", str(repo), "--subagent", "Explore", "--home", str(tmp_path / "h"),
            "--managed-dir", str(tmp_path / "m")]  # fmt: skip
    text = " ".join(ctxasm(args).stdout.split())  # however the terminal width wraps it
    assert "; no skills list (no skills here); " in text, text
    skill = repo / ".claude" / "skills" / "s" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: s\ndescription: d\n---\nSkill.\n")
    assert "; the skills list; " in " ".join(ctxasm(args).stdout.split())


def test_where_nothing_loads_no_subagent_gets_the_same_0_files(tmp_path: Path) -> None:
    """explain printed "Explore  the same 0 instruction files" beside "Explore and Plan start
    without your CLAUDE.md files" where nothing loads (issue 34)."""
    from tests.helpers.cli import ctxasm

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    out = ctxasm(["explain", str(repo), "--home", str(tmp_path / "h"), "--managed-dir",
                  str(tmp_path / "m")]).stdout  # fmt: skip
    assert "the same 0" not in out and "start without your CLAUDE.md" not in out
    assert re.search(r"^  Explore +no instruction files;", out, re.M), out
