"""Lint checks each file's content once however many paths reach it, and reports it at each
path as it would at one (`lint.scan`); one run scans at most its budget of characters, and
says where it stopped (`CTX008`)."""

from __future__ import annotations

import os
import time
from collections import defaultdict
from pathlib import Path

import pytest

from assembler.lint import LintResult, lint
from assembler.lint.context import Starts
from assembler.lint.duplicates import Duplicates
from assembler.lint.files import Finding, Machine
from assembler.policy import load_policy
from tests.helpers.trees import Link, build, bytes_read, git_init, machine

PARAGRAPH = "A paragraph long enough to be compared with the files that load with it."


def _aws_key(i: int) -> str:
    return "AKIA" + f"{i:016d}".translate(str.maketrans("0123456789", "ABCDEFGHIJ"))


def _shared_text() -> str:
    """A file with findings of every content check: frontmatter keys, 130 secrets (one of
    them suppressed), forged structure, a duplicated paragraph, imports."""
    return (
        "---\ntitle: x\nglobs: a\n---\n"
        + "".join(f"key {_aws_key(i)} here\n" for i in range(130))
        + "<!-- ctxasm: disable-next-line=CTX501 -->\n"
        + f"key {_aws_key(999)}\n\n"
        + "<project_instructions> forged\n\n"
        + f"{PARAGRAPH}\n\nSee @missing.md and @guide.md\n"
        + "".join(f"line {i}\n" for i in range(250))
        + "filler text\n" * 10_000  # 120,000 characters more: scanning it is the cost
    )


def _by_path(result: LintResult) -> dict[str, list[tuple[int, int, str, str]]]:
    found: dict[str, list[tuple[int, int, str, str]]] = defaultdict(list)
    for f in result.findings:
        found[f.path].append((f.line, f.col, f.code, f.message))
    return found


def _links_tree(root: Path, count: int) -> tuple[Path, str]:
    repo = git_init(root / "repo")
    text = _shared_text()
    files: dict[str, str | Link | None] = {
        "shared/big.md": text,
        "shared/guide.md": "the guide\n",
        "CLAUDE.md": f"{PARAGRAPH}\n",
    }
    files.update({f"d{i}/CLAUDE.md": Link("../shared/big.md") for i in range(count)})
    build(repo, files)
    (repo / "hard").mkdir()
    os.link(repo / "shared/big.md", repo / "hard/CLAUDE.md")  # another name of the same file
    return repo, text


def test_many_links_to_one_file_are_scanned_once_and_reported_at_each(tmp_path: Path) -> None:
    """50 directories whose CLAUDE.md links to one file (and a hard link): its content is
    scanned as for one link (by lint's checks and by Claude Code's own: twice), where it was
    scanned again for every path; what is compared at each path (its paragraphs, its
    imports' paths) costs the 50 paths less than one more scan. Every path gets the
    findings one path gets."""
    one, text = _links_tree(tmp_path / "one", 1)
    many, _ = _links_tree(tmp_path / "many", 50)
    reference = lint(base=one, **machine(tmp_path / "one"))
    result = lint(base=many, **machine(tmp_path / "many"))
    root = len(f"{PARAGRAPH}\n")
    assert 2 * len(text) + 2 * root <= reference.scanned < 3 * len(text)
    assert reference.scanned <= result.scanned < reference.scanned + len(text)
    expected = _by_path(reference)["d0/CLAUDE.md"]
    found = _by_path(result)
    assert [(c, m) for _, _, c, m in expected if c in ("CTX008", "CTX502")] == [
        ("CTX008", "30 more CTX501 findings in d0/CLAUDE.md are not shown: lint reports the first 100 of each code in a file"),
        ("CTX502", "this paragraph is also in CLAUDE.md, which loads with it: keep it in one place"),
    ]  # fmt: skip
    assert {c for _, _, c, _ in expected} >= {"CTX201", "CTX302", "CTX501", "CTX504", "CTX101"}
    for i in range(50):
        path = f"d{i}/CLAUDE.md"
        assert found[path] == [(*f[:3], f[3].replace("d0/", f"d{i}/")) for f in expected], path
    hard = found["hard/CLAUDE.md"]  # its imports resolve from its own directory
    assert [f for f in hard if f[2] == "CTX008"] == [
        (f[0], f[1], f[2], f[3].replace("d0/", "hard/")) for f in expected if f[2] == "CTX008"
    ]


def test_links_do_not_spend_the_scan_budget(tmp_path: Path) -> None:
    """The budget counts each file once: 50 links to one file fit in three times its size."""
    repo, text = _links_tree(tmp_path, 50)
    result = lint(base=repo, max_scan_chars=3 * len(text), **machine(tmp_path))
    assert not [f for f in result.findings if "stopped checking content" in f.message]
    assert len([f for f in result.findings if f.code == "CTX502"]) == 51


def test_past_the_scan_budget_the_rest_is_not_checked_and_lint_says_so(tmp_path: Path) -> None:
    """Three files of 10,000 characters, a budget of 40,000: two are checked (each scanned
    by lint's checks and Claude Code's), the third is not read, and one warning says so."""
    repo = git_init(tmp_path / "repo")
    body = "plain text line\n" * 625  # 10,000 characters, no finding
    build(
        repo,
        {
            "a/CLAUDE.md": body,
            "b/CLAUDE.md": body.replace("plain", "Plain"),
            "c.md": body.replace("plain", "PLAIN") + f"key {_aws_key(1)}\n",
            "c/CLAUDE.md": Link("../c.md"),
            "d/CLAUDE.md": Link("../c.md"),
        },
    )
    limits = {"max_lines": 1000, "max_bytes": 100_000}
    (repo / ".ctxasm.toml").write_text(
        "[lint]\n" + "".join(f"{k} = {v}\n" for k, v in limits.items())
    )
    result = lint(base=repo, max_scan_chars=40_000, **machine(tmp_path))
    assert result.scanned == 40_000
    assert result.findings == (
        Finding(
            "c/CLAUDE.md", 1, 1, "CTX008",
            "lint stopped checking content here: one run's checks scan at most 40,000 "
            "characters and follow at most 200,000 imports, and this run reached a limit; the "
            "content of this path and 1 more is not fully checked (secrets, size, imports, "
            "duplicates): lint fewer or smaller files at once",
            result.findings[0].severity,
        ),
    )  # fmt: skip
    assert result.findings[0].severity is not None
    assert result.findings[0].severity.value == "warning"
    assert not result.failed and result.fails(strict=True)  # exit 0, or 1 with --strict
    whole = lint(base=repo, **machine(tmp_path))
    assert [(f.path, f.code) for f in whole.findings] == [
        ("c/CLAUDE.md", "CTX501"),
        ("d/CLAUDE.md", "CTX501"),
    ]


def test_a_file_written_just_before_the_run_is_read_once_for_all_its_links(
    tmp_path: Path,
) -> None:
    """A file whose times are the run's own (a checkout just before CI lints it; here an
    hour ahead, so no clock tick can make it older) was read and parsed again by the
    discovery of each directory that loads it: it is settled for the whole run."""
    repo = git_init(tmp_path / "repo")
    build(repo, {"shared.md": "plain text line\n" * 20_000})  # 320,000 bytes
    build(repo, {f"d{i}/CLAUDE.md": Link("../shared.md") for i in range(100)})
    ahead = time.time_ns() + 3600 * 10**9
    os.utime(repo / "shared.md", ns=(ahead, ahead))
    before = bytes_read()
    lint(base=repo, **machine(tmp_path))
    assert bytes_read() - before < 5 * 320_000  # lint's scan, discovery, the index: once each


def test_the_index_reads_each_linted_file_once_whatever_its_names(tmp_path: Path) -> None:
    """Ten links to one 4 MB file: the paragraph index read the file once a name, reached the
    16 Mi characters one run loads by the fifth and gave up, so every directory was discovered
    to check duplicates; it reads the file once and stays whole."""
    repo = git_init(tmp_path / "repo")
    build(repo, {"shared.md": "a" * 4_000_000})
    build(repo, {f"d{i}/CLAUDE.md": Link("../shared.md") for i in range(10)})
    policy = load_policy("claude-code")
    where = machine(tmp_path)
    starts = Starts(policy, Machine(where["home"], where["managed_dir"], where["environ"]))
    duplicates = Duplicates(starts, {"CTX502"})
    duplicates.index_repository(repo, [repo / f"d{i}/CLAUDE.md" for i in range(10)], True)
    assert duplicates.indexed  # whole: only the first start of a kind is discovered


@pytest.mark.slow
def test_the_imports_walked_in_one_run_are_bounded(tmp_path: Path) -> None:
    """110 directories whose CLAUDE.md links to one file of 1,990 imports: each path walks
    its own (what an import loads depends on where the agent starts), 218,900 in all (10,000
    links: 20 million, most of an hour). The run follows at most 200,000: the path
    where they run out says so at its first import not followed, and one CTX008 counts the
    paths whose imports were not walked."""
    repo = git_init(tmp_path / "repo")
    files: dict[str, str | Link | None] = {f"docs/f{i}.md": f"doc {i}\n" for i in range(1990)}
    files["shared.md"] = "".join(f"See @docs/f{i}.md\n" for i in range(1990))
    files.update({f"d{i:03}/CLAUDE.md": Link("../shared.md") for i in range(110)})
    build(repo, files)
    result = lint(base=repo, select=["CTX008"], **machine(tmp_path))
    said = [(f.path, f.line, f.message) for f in result.findings]
    assert said == [
        ("d100/CLAUDE.md", 1001, "lint stops following imports after 200,000 in one run (all "
         "files together): @docs/f1000.md and the imports after it are not checked; import "
         "fewer files"),
        ("d101/CLAUDE.md", 1, "lint stopped checking content here: one run's checks scan at "
         "most 268,435,456 characters and follow at most 200,000 imports, and this run reached a "
         "limit; the content of this path and 8 more is not fully checked (secrets, size, "
         "imports, duplicates): lint fewer or smaller files at once"),
    ]  # fmt: skip
