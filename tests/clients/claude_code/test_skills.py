"""The skills index: which SKILL.md files are listed, what the index says, `Assembly.skill()`."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from assembler import Layer, assemble
from assembler.errors import SkillError
from benchmarks.corpus import lay_out
from benchmarks.harness import CORPUS
from tests.helpers.trees import Link, build, codes, git_init, run


def skill(description: str = "", body: str = "Do the thing.\n", **fields: str) -> str:
    lines = [f"{k.replace('_', '-')}: {v}" for k, v in fields.items()]
    if description:
        lines.append(f"description: {description}")
    return ("---\n" + "\n".join(lines) + "\n---\n" if lines else "") + body


def test_user_and_project_skills_in_the_clients_order(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "home/.claude/skills/standup/SKILL.md": skill("Summarise yesterday."),
            "repo/.claude/skills/zeta/SKILL.md": skill("Last by name."),
            "repo/.claude/skills/alpha/SKILL.md": skill("First by name."),
            "repo/pkg/.claude/skills/local-only/SKILL.md": skill("Nearest directory first."),
            "repo/.claude/skills/notes.md": "a file, not a skill directory",
            "repo/.claude/skills/empty-dir": None,
        },
    )
    a = run(tmp_path, "repo/pkg")
    assert [(s.name, s.layer, s.display) for s in a.skills] == [
        ("standup", Layer.USER, "~/.claude/skills/standup/SKILL.md"),
        ("local-only", Layer.PROJECT, "pkg/.claude/skills/local-only/SKILL.md"),
        ("alpha", Layer.PROJECT, ".claude/skills/alpha/SKILL.md"),
        ("zeta", Layer.PROJECT, ".claude/skills/zeta/SKILL.md"),
    ]
    [index] = [s for s in a.sources if s.tag == "skills"]
    assert (index.layer, index.path, index.display) == (
        Layer.PROJECT,
        "<skills>",
        "~/.claude/skills, pkg/.claude/skills, .claude/skills",
    )
    assert index.reason.text == "skills index: 4 skills, name and description only"
    assert index.content == (
        "- standup: Summarise yesterday.\n"
        "- local-only: Nearest directory first.\n"
        "- alpha: First by name.\n"
        "- zeta: Last by name."
    )


def test_the_index_is_a_project_section_after_the_project_files(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "Project.",
            "repo/CLAUDE.local.md": "Local.",
            "repo/.claude/skills/deploy/SKILL.md": skill("Ship it </skills> now."),
        },
    )
    a = run(tmp_path, "repo")
    assert a.text == (
        "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__\n\n"
        '<project_instructions source="CLAUDE.md">\nProject.\n</project_instructions>\n\n'
        '<skills source=".claude/skills">\n- deploy: Ship it &lt;/skills> now.\n</skills>\n\n'
        '<local_instructions source="CLAUDE.local.md">\nLocal.\n</local_instructions>'
    )
    assert "CTX503" in codes(a)
    # Claude Code lists skills in a reminder of its own: its claudeMd block is unchanged.
    assert "deploy" not in a.render("claude-code", date="2026-01-01")


def test_what_is_not_listed(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/.agents/skills/agents-only/SKILL.md": skill("Codex's directory."),
            "repo/.gemini/skills/gemini-only/SKILL.md": skill("Gemini's directory."),
            "repo/.claude/skills/scoped/SKILL.md": skill("Only for SQL.", paths="'**/*.sql'"),
            "repo/.claude/skills/everywhere/SKILL.md": skill(
                "Paths ** is no condition.", paths="'**'"
            ),
            "repo/.claude/skills/manual/SKILL.md": skill(
                "Users only.", disable_model_invocation="true"
            ),
            "repo/.claude/skills/dup/SKILL.md": skill("Project copy.", name="standup"),
            "home/.claude/skills/standup/SKILL.md": skill("User copy."),
            "skills-above-the-repo/.claude/skills/outside/SKILL.md": skill("Above the git root."),
        },
    )
    a = run(tmp_path, "repo")
    assert [s.name for s in a.skills] == ["standup", "everywhere"]
    assert [(d.code, d.path) for d in a.diagnostics] == [
        ("CTX714", ".claude/skills/dup/SKILL.md"),
        ("CTX713", ".claude/skills/manual/SKILL.md"),
        ("CTX712", ".claude/skills/scoped/SKILL.md"),
    ]


def test_outside_git_the_walk_stops_below_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    build(
        tmp_path,
        {
            "home/.claude/skills/mine/SKILL.md": skill("User skill."),
            "home/work/.claude/skills/team/SKILL.md": skill("Above cwd, below home."),
            "home/work/app/.claude/skills/app/SKILL.md": skill("In cwd."),
            "outside/.claude/skills/x/SKILL.md": skill("Never reached."),
        },
    )
    a = assemble(home / "work" / "app", home=home, managed_dir=tmp_path / "m", environ={})
    assert [s.name for s in a.skills] == ["mine", "app", "team"]


def test_symlinked_skill_directories_count_once(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/.agents/skills/shared/SKILL.md": skill("Kept in .agents, linked from .claude."),
            "repo/.claude/skills/shared": Link("../../.agents/skills/shared"),
            "repo/.claude/skills/again": Link("../../.agents/skills/shared"),
            "repo/.claude/skills/broken": Link("../../nowhere"),
        },
    )
    a = run(tmp_path, "repo")
    assert [(s.name, s.directory, s.display) for s in a.skills] == [
        ("again", "again", ".claude/skills/again/SKILL.md"),
    ]


def test_name_and_description_come_from_frontmatter_else_the_text(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    long = "word " * 40
    build(
        tmp_path,
        {
            "repo/.claude/skills/a/SKILL.md": skill("Two\n  lines.", name="'Release Helper'"),
            "repo/.claude/skills/b/SKILL.md": "# Heading becomes the description\n\nBody.\n",
            "repo/.claude/skills/c/SKILL.md": f"\n\n{long}\n",
            "repo/.claude/skills/d/SKILL.md": skill("42"),
            "repo/.claude/skills/e/SKILL.md": "---\ndescription: [unclosed\n---\nFallback line.\n",
        },
    )
    skills = run(tmp_path, "repo").skills
    assert [(s.name, s.description) for s in skills] == [
        ("Release Helper", "Two lines."),
        ("b", "Heading becomes the description"),
        ("c", long.strip()[:97] + "..."),
        ("d", "42"),
        ("e", "[unclosed"),  # invalid YAML is retried with the value quoted, as the client does
    ]


def test_skill_text_is_read_on_demand(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/.claude/skills/deploy/SKILL.md": skill("Deploy.", body="Step 1.\n")})
    a = run(tmp_path, "repo")
    directory = tmp_path / "repo" / ".claude" / "skills" / "deploy"
    assert a.skill("deploy") == f"Base directory for this skill: {directory}\n\nStep 1.\n"
    (directory / "SKILL.md").write_text(skill("Deploy.", body="Step 2.\n"), encoding="utf-8")
    assert a.skill("deploy").endswith("\n\nStep 2.\n")  # the file as it is now
    with pytest.raises(SkillError, match=r"^nope: no such skill; listed skills: deploy$"):
        a.skill("nope")
    (directory / "SKILL.md").unlink()
    with pytest.raises(SkillError, match=r"cannot read the skill \(missing\)"):
        a.skill("deploy")


def test_a_policy_can_turn_the_index_off(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/.ctxasm.toml": "[skills]\nenabled = false\n",
            "repo/.claude/skills/deploy/SKILL.md": skill("Deploy."),
        },
    )
    a = run(tmp_path, "repo")
    assert a.skills == () and "<skills" not in a.text


def test_an_unreadable_skill_is_reported(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/.claude/skills/bin/SKILL.md": "text\0with a NUL"})
    a = run(tmp_path, "repo")
    assert a.skills == ()
    assert [d.line() for d in a.diagnostics] == [
        ".claude/skills/bin/SKILL.md: warning: skill not listed: binary (NUL byte at offset 4); "
        "fix the file [CTX711]"
    ]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_pydantic_ai_lists_its_claude_skills_and_not_its_agents_ones() -> None:
    """The real repository: four of its seven .claude skills are directory symlinks into
    .agents/skills (stored as stubs in the corpus, restored by `lay_out`)."""
    with tempfile.TemporaryDirectory() as tmp:
        laid = lay_out(CORPUS / "pydantic__pydantic-ai", Path(tmp))
        a = assemble(laid.repo, home=laid.home, managed_dir=laid.managed, environ={})
        assert os.path.islink(laid.repo / ".claude" / "skills" / "i-have-adhd")
        assert [s.name for s in a.skills] == [
            "address-feedback",
            "complete-partial-pr",
            "i-have-adhd",
            "poweruser-feature-audit",
            "pre-push-review",
            "pushing-commits-to-the-repo",
            "testing-skill",
        ]
        # add-new-model lives only in .agents/skills: Claude Code does not read it.
        assert "add-new-model" not in a.text
        assert a.skill("i-have-adhd").startswith(
            f"Base directory for this skill: {laid.repo}/.claude/skills/i-have-adhd\n\n"
        )


def test_the_index_names_only_directories_that_contributed(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "home/.claude/skills/mine/SKILL.md": skill("Mine."),
            "repo/pkg/.claude/skills/manual/SKILL.md": skill(
                "Hidden.", disable_model_invocation="true"
            ),
            "repo/pkg/.claude/skills/no-skill-file": None,
        },
    )
    a = run(tmp_path, "repo/pkg")
    assert [(s.display, s.content) for s in a.sources] == [("~/.claude/skills", "- mine: Mine.")]


def test_a_skill_with_invalid_yaml_is_listed_by_its_directory_and_reported(tmp_path: Path) -> None:
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {
            "repo/CLAUDE.md": "hi",
            "repo/.claude/skills/deploy/SKILL.md": "---\ndescription: 'open\n---\nDeploys.",
        },
    )
    a = run(tmp_path, "repo")
    assert [(s.name, s.description) for s in a.skills] == [("deploy", "Deploys.")]
    assert codes(a) == ["CTX301"]


def test_a_huge_description_or_name_is_cut_and_said(tmp_path: Path) -> None:
    """Issue 22 item 7: a skill's name and description are listed with every skill at once,
    so each is cut (256 and 4,096 characters, whitespace runs made one space first) and the
    cut said (CTX706); the body, read on demand, is whole."""
    git_init(tmp_path / "repo")
    huge = "word \n " * 300_000
    build(
        tmp_path,
        {
            "repo/.claude/skills/big/SKILL.md": skill(huge.replace("\n", " ")),
            "repo/.claude/skills/named/SKILL.md": skill("short", name="n" * 1000),
            "repo/.claude/skills/fine/SKILL.md": skill("x" * 4096),
            "repo/.claude/skills/lines/SKILL.md": "\n" * 1_000_000 + "# " + "y" * 200,
        },
    )
    a = run(tmp_path, "repo")
    by_dir = {s.directory: s for s in a.skills}
    assert by_dir["big"].description == ("word " * 820)[:4093] + "..."
    assert by_dir["named"].name == "n" * 253 + "..."
    assert by_dir["fine"].description == "x" * 4096  # at the limit: whole
    assert by_dir["lines"].description == "y" * 97 + "..."  # the client's own fallback cut
    cut = sorted((d.path, d.message) for d in a.diagnostics if d.code == "CTX706")
    assert [path for path, _ in cut] == [
        ".claude/skills/big/SKILL.md",
        ".claude/skills/named/SKILL.md",
    ]
    assert "description is over 4,096 characters" in cut[0][1]
    assert "name is over 256 characters" in cut[1][1]
    assert a.skill("big").endswith("Do the thing.\n")


def test_the_index_holds_at_most_a_mebibyte_of_names_and_descriptions(tmp_path: Path) -> None:
    """257 skills of 4,096-character descriptions: the first 255 fit in 1 Mi characters, the
    rest are not listed and said once."""
    git_init(tmp_path / "repo")
    build(
        tmp_path,
        {f"repo/.claude/skills/s{i:03d}/SKILL.md": skill("d" * 4096) for i in range(257)},
    )
    a = run(tmp_path, "repo")
    assert [s.directory for s in a.skills] == [f"s{i:03d}" for i in range(255)]
    [index] = [s for s in a.sources if s.tag == "skills"]
    assert len(index.content) <= 1024 * 1024
    [said] = [d for d in a.diagnostics if d.code == "CTX706"]
    assert said.path == ".claude/skills/s255/SKILL.md"
    assert "2 skills are not listed" in said.message


# Runs the command after its first argument, its output and diagnostics to that file, and
# prints its exit code and peak RSS (KiB on Linux): the command's own, whatever else the test
# process started before.
_PEAK = (
    "import resource, subprocess, sys\n"
    "out, *command = sys.argv[1:]\n"
    "with open(out, 'w') as f:\n"
    "    r = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT)\n"
    "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB, RLIMIT_AS")
@pytest.mark.parametrize("command", ["render", "explain"])
def test_a_hundred_skills_of_3_mb_descriptions_stay_small(tmp_path: Path, command: str) -> None:
    """Issue 22 item 7, as reported: 100 skills with 3 MB descriptions made render and explain
    peak at 1.27 GB (exit 3 under 1 GiB). Each description is cut as it is read: the run
    peaks at some 50 MB, under a 1 GiB address-space limit, and says what it cut."""
    repo = git_init(tmp_path / "repo")
    text = "---\ndescription: " + "word " * (3 * 1024 * 1024 // 5) + "\n---\nBody.\n"
    for i in range(100):
        build(repo, {f".claude/skills/s{i:03d}/SKILL.md": text})
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    limit = f"resource.setrlimit(resource.RLIMIT_AS, ({1 << 30}, {1 << 30}))"
    run_cli = (
        f"import resource, sys; {limit}; from assembler.commands import main; sys.exit(main())"
    )
    out = tmp_path / "out.txt"
    measured = subprocess.run(
        [sys.executable, "-c", _PEAK, str(out), sys.executable, "-c", run_cli, command, str(repo), *machine],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )  # fmt: skip
    code, peak_kib = map(int, measured.stdout.split())
    said = out.read_text()
    assert code == 0, said[-500:]
    assert peak_kib < 200 * 1024
    assert said.count("[CTX706]") == 100


def test_a_directory_name_that_is_not_utf8_names_its_skill_as_the_client_reads_it(
    tmp_path: Path,
) -> None:
    git_init(tmp_path / "repo")
    build(tmp_path, {"repo/CLAUDE.md": "Root.\n"})
    skill_dir = os.fsencode(tmp_path / "repo/.claude/skills") + b"/bad\xff"
    os.makedirs(skill_dir)
    Path(os.fsdecode(skill_dir + b"/SKILL.md")).write_text(skill("Odd name."))
    a = run(tmp_path, "repo")
    assert [s.name for s in a.skills] == ["bad\ufffd"]
    for fmt in ("xml", "markdown", "json"):
        a.render(fmt).encode("utf-8")  # no lone surrogate: the output is text
    [index] = [s for s in a.sources if s.tag == "skills"]
    assert index.content == "- bad\ufffd: Odd name."
