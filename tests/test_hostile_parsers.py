"""Hostile frontmatter and globs (issue 11, items 2 and 3): each attack runs through the real
CLI in a subprocess with a timeout, and must finish quickly with a diagnostic, never hang.

Before the fix every one of these hung `render --touch` or `lint` (minutes, or gigabytes for
the alias bomb), or crashed on an uncaught exception."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.trees import build, git_init

# A guard against a hang (each of these attacks hung for minutes, or forever, before its
# fix), far from what a loaded two-core machine takes: each case takes well under a second.
TIMEOUT = 60

A60 = "a" * 60
STARS = "*a" * 40 + "*z"  # exponential for a backtracking regex engine on `a` * 60
EXTGLOB = "+(a|aa)" * 20 + "z"


def alias_bomb() -> str:
    lines = ["a0: &a0 [" + ",".join(["x"] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    return "\n".join([*lines, "paths: *a8"])


def cli(tmp_path: Path, *args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """`ctxasm ARGS` with the hermetic home and managed directory; fails on a timeout."""
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    result = subprocess.run(
        [sys.executable, "-m", "assembler", *args, *machine],
        capture_output=True,
        timeout=TIMEOUT,
        cwd=cwd or tmp_path,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
    )
    stderr = result.stderr.decode()
    assert "Traceback" not in stderr
    return result.returncode, result.stdout.decode(), stderr


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = git_init(tmp_path / "repo")
    build(tmp_path, {"home/.keep": "", "managed/.keep": "", "repo/CLAUDE.md": "root"})
    build(repo, files)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, capture_output=True)
    return repo


def render_touch(tmp_path: Path, repo: Path, touched: str) -> tuple[int, str, str]:
    return cli(tmp_path, "render", str(repo), "--touch", str(repo / touched))


def lint(tmp_path: Path, repo: Path, *files: str) -> tuple[int, str, str]:
    return cli(tmp_path, "lint", "--format", "json", *files, cwd=repo)


def lint_codes(out: str) -> list[str]:
    return sorted(f["code"] for f in json.loads(out))


# --- YAML frontmatter -------------------------------------------------------------------


def test_an_alias_bomb_in_a_rule_is_dropped(tmp_path: Path) -> None:
    repo = project(
        tmp_path, {".claude/rules/r.md": f"---\n{alias_bomb()}\n---\nbomb rule", "src/x.ts": ""}
    )
    code, out, err = render_touch(tmp_path, repo, "src/x.ts")
    assert code == 0 and "bomb rule" in out  # no paths: left, so the rule loads at start
    assert "over 20,000 nodes" in err and "[CTX308]" in err
    code, out, _ = lint(tmp_path, repo, ".claude/rules/r.md")
    assert (code, lint_codes(out)) == (1, ["CTX308"])


def test_an_alias_bomb_in_a_skill_is_dropped(tmp_path: Path) -> None:
    skill = f"---\nname: s\ndescription: d\n{alias_bomb()}\n---\nskill"
    repo = project(tmp_path, {".claude/skills/s/SKILL.md": skill, "src/x.ts": ""})
    code, _, err = render_touch(tmp_path, repo, "src/x.ts")
    assert code == 0
    assert ".claude/skills/s/SKILL.md: warning: YAML frontmatter is over 20,000 nodes" in err


def aliased_string(key: str, aliases: int = 19_000, size: int = 200_000) -> str:
    """One 200 KB string aliased 19,000 times as `key` (260 KB, under the node limit)."""
    return f'x: &x "{"a," * (size // 2)}"\n{key}: [' + ", ".join(["*x"] * aliases) + "]"


_AGENT = "name: a\ndescription: d\n"


@pytest.mark.parametrize(
    ("path", "lead", "key", "policy", "said"),
    [
        (".claude/agents/a.md", _AGENT, "tools", "claude-code", "CTX308"),
        (".claude/agents/a.md", _AGENT, "disallowedTools", "claude-code", "CTX308"),
        (".claude/rules/r.md", "", "paths", "claude-code", "CTX308"),
        # Cursor and Copilot document no limit: each line is cut to 8,192 characters first.
        (".github/instructions/x.instructions.md", "", "applyTo", "copilot", "CTX309"),
        (".cursor/rules/r.mdc", "", "globs", "cursor", "CTX309"),
    ],
)
def test_an_aliased_string_is_not_expanded_to_gigabytes(
    tmp_path: Path, path: str, lead: str, key: str, policy: str, said: str
) -> None:
    """It gave MemoryError (exit 3) through an agent's tools and a Copilot applyTo, and over
    60 s of CPU through a rule's paths and a Cursor globs (issue 30, item 4): what aliases
    expand to is bounded in characters too (CTX308), or, for a client without limits, the
    lines are cut before the YAML is parsed (CTX309)."""
    repo = project(tmp_path, {path: f"---\n{lead}{aliased_string(key)}\n---\nbody\n"})
    code, out, _ = cli(tmp_path, "lint", "--policy", policy, "--format", "json", path, cwd=repo)
    assert code == 1 and said in lint_codes(out)
    if said == "CTX308":
        [found] = [f for f in json.loads(out) if f["code"] == "CTX308"]
        assert "characters of values, each alias counted" in found["message"]
    for command in ("explain", "render"):
        code, _, err = cli(tmp_path, command, "--policy", policy, cwd=repo)
        # explain shows notes in its rows; render does not read agent definitions
        assert code == 0 and (said in err or command == "explain" or "agents" in path)


def test_fifty_thousand_frontmatter_keys_are_quick(tmp_path: Path) -> None:
    keys = "\n".join(f"k{i}: v" for i in range(50_000))
    few = "\n".join(f"k{i}: v" for i in range(5000))  # within the limit: keys reported, capped
    repo = project(
        tmp_path,
        {
            ".claude/rules/r.md": f"---\npaths: src/**\n{keys}\n---\nrule",
            "docs/CLAUDE.md": f"---\n{few}\n---\ndocs",
            "src/x.ts": "",
        },
    )
    code, _, err = render_touch(tmp_path, repo, "src/x.ts")
    assert code == 0 and "[CTX308]" in err
    code, out, _ = lint(tmp_path, repo, ".claude/rules/r.md", "docs/CLAUDE.md")
    found = lint_codes(out)
    assert code == 1 and found.count("CTX308") == 1 and found.count("CTX302") == 100
    assert "4,900 more CTX302 findings in docs/CLAUDE.md" in out


# --- globs ------------------------------------------------------------------------------


def test_a_pathological_paths_glob_is_matched_in_linear_time(tmp_path: Path) -> None:
    repo = project(
        tmp_path,
        {
            ".claude/rules/stars.md": f'---\npaths: "{STARS}"\n---\nstars rule',
            ".claude/rules/match.md": f'---\npaths: "{"*a" * 40}"\n---\nmatching rule',
            f"src/{A60}": "",
        },
    )
    code, out, err = render_touch(tmp_path, repo, f"src/{A60}")
    assert (code, err) == (0, "")
    assert "matching rule" in out and "stars rule" not in out
    code, out, _ = lint(tmp_path, repo, ".claude/rules/stars.md")
    assert (code, lint_codes(out)) == (0, ["CTX305"])  # dead (a warning): no file ends in z


def test_pathological_claude_md_excludes_are_matched_in_linear_time(tmp_path: Path) -> None:
    excludes = [f"**/{STARS}/CLAUDE.md", f"**/{EXTGLOB}/CLAUDE.md", f"**/{A60}/CLAUDE.md"]
    repo = project(
        tmp_path,
        {
            ".claude/settings.json": json.dumps({"claudeMdExcludes": excludes}),
            f"src/{A60}/CLAUDE.md": "excluded",
            f"src/{A60}/f": "",
        },
    )
    code, out, err = render_touch(tmp_path, repo, f"src/{A60}/f")
    assert (code, err) == (0, "")
    assert "root" in out and "excluded" not in out


def test_a_pathological_skill_glob_is_harmless(tmp_path: Path) -> None:
    skill = f'---\nname: s\ndescription: d\npaths: "{STARS}"\n---\nskill'
    repo = project(tmp_path, {".claude/skills/s/SKILL.md": skill, f"src/{A60}": ""})
    code, out, _ = render_touch(tmp_path, repo, f"src/{A60}")
    assert code == 0 and "- s: d" not in out  # conditional: not offered at start


@pytest.mark.parametrize("where", ["paths", "claudeMdExcludes"])
def test_a_two_megabyte_glob_is_refused(tmp_path: Path, where: str) -> None:
    huge = "*a" * (1024 * 1024)
    if where == "paths":
        files = {".claude/rules/r.md": f'---\npaths: "{huge}"\n---\nrule'}
        shown = ".claude/rules/r.md: warning: glob '*a*a"
    else:
        files = {".claude/settings.json": json.dumps({"claudeMdExcludes": [huge]})}
        shown = ".claude/settings.json: warning: pattern '*a*a"
    repo = project(tmp_path, {**files, f"src/{A60}": ""})
    code, out, err = render_touch(tmp_path, repo, f"src/{A60}")
    assert code == 0 and "root" in out and "rule" not in out
    assert err.startswith(shown)
    assert "is refused (longer than 1,024 characters)" in err and "[CTX307]" in err
    assert len(err) < 400  # the pattern is shortened (display.PATTERN_CHARS)
    if where == "paths":
        code, out, _ = lint(tmp_path, repo, ".claude/rules/r.md")
        assert (code, lint_codes(out)) == (1, ["CTX102", "CTX307"])  # 2 MB: over 25,000 bytes


def test_the_brace_budget_is_shared_across_a_paths_list(tmp_path: Path) -> None:
    items = "\n".join(f'  - "d{i}/{{a,b,c,d,e,f,g,h,i,j}}"' for i in range(500))
    repo = project(
        tmp_path, {".claude/rules/r.md": f"---\npaths:\n{items}\n---\nrule", "d499/a": ""}
    )
    code, out, err = render_touch(tmp_path, repo, "d499/a")
    assert code == 0 and "rule" not in out  # past the budget: left out, as the client does
    assert "'d100/{a,b,c,d,e,f,g,h,i,j}' (and 399 more) exceeds the 1000 patterns" in err
    code, out, _ = lint(tmp_path, repo, ".claude/rules/r.md")
    found = lint_codes(out)
    assert found.count("CTX306") == 21  # 20 named, and one line for the rest
