"""What a subagent started through Claude Code's Agent tool receives (SPEC 4c), per agent
type and release, on real trees: the instruction block, the skills list, tools and prompt,
reads inside the subagent, and the definitions of custom agents."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from assembler import Assembly, assemble
from assembler.errors import RequestError
from assembler.lint import lint
from assembler.model import AgentType, Why
from tests.helpers.cli import ctxasm
from tests.helpers.trees import build, git_init, machine

OLD, NEW = "2.1.197", "2.1.332"
VERSIONS = (OLD, NEW)
DATE = "2026-12-01"

TREE = {
    "managed/CLAUDE.md": "managed rules",  # not in the recordings: the programs read /etc
    "home/.claude/CLAUDE.md": "user rules",
    "home/.claude/skills/notes/SKILL.md": "---\nname: notes\ndescription: Keep notes.\n---\nbody",
    "home/.claude/agents/scribe.md": "---\nname: scribe\ndescription: Notes.\ntools: Bash, Read\n---\nWrite notes.",
    "repo/CLAUDE.md": "root rules\n\nUse the Explore agent for searches.",
    "repo/CLAUDE.local.md": "local rules",
    "repo/.claude/rules/web.md": "---\npaths: web/**\n---\nweb rule",
    "repo/.claude/agents/reviewer.md": (
        "---\nname: reviewer\ndescription: Reviews.\ntools: Read, Grep, Glob\nmodel: sonnet\n---\n"
        "\nYou review.\n"
    ),
    "repo/.claude/agents/helper.md": "---\nname: helper\ndescription: Helps.\n---\nYou help.",
    "repo/sub/CLAUDE.md": "sub rules",
    "repo/sub/a.py": "",
    "repo/web/app.ts": "",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    git_init(tmp_path / "repo")
    build(tmp_path, TREE)
    return tmp_path


def _assemble(tmp: Path, version: str, **options: Any) -> Assembly:
    return assemble(tmp / "repo", client_version=version, **machine(tmp), **options)


def _agent(tmp: Path, version: str, name: str) -> AgentType:
    agent = _assemble(tmp, version, subagent=name).agent
    assert agent is not None
    return agent


def _render(tmp: Path, version: str, **options: Any) -> str:
    return _assemble(tmp, version, **options).render("claude-code", date=DATE)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", ["general-purpose", "claude", "reviewer", "helper", "scribe"])
def test_these_agents_get_the_main_agents_instruction_block_byte_for_byte(
    tree: Path, version: str, name: str
) -> None:
    main = _render(tree, version)
    assert "managed rules" in main and "user rules" in main and "root rules" in main
    assert _render(tree, version, subagent=name) == main


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", ["Explore", "Plan"])
def test_explore_and_plan_start_without_the_instruction_files(
    tree: Path, version: str, name: str
) -> None:
    rendered = _render(tree, version, subagent=name)
    assert "Contents of" not in rendered and f"Today's date is {DATE}." in rendered
    sub = _assemble(tree, version, subagent=name)
    assert [s.reason.why for s in sub.sources] == [Why.SKILLS]


@pytest.mark.parametrize("version", VERSIONS)
def test_the_skills_list_goes_with_the_skill_tool(tree: Path, version: str) -> None:
    def skills(name: str) -> bool:
        sub = _assemble(tree, version, subagent=name)
        return any(s.reason.why is Why.SKILLS for s in sub.sources)

    assert skills("helper") and skills("general-purpose") and skills("Explore")
    assert not skills("reviewer") and not skills("scribe") and not skills("statusline-setup")


def test_a_custom_agent_brings_its_tools_prompt_and_model(tree: Path) -> None:
    reviewer = _agent(tree, NEW, "reviewer")
    assert (reviewer.tools, reviewer.prompt, reviewer.model) == (
        ("Read", "Grep", "Glob"),
        "You review.",
        "sonnet",
    )
    helper = _agent(tree, NEW, "helper")
    assert (helper.tools, helper.skills, helper.model) == ((), True, "")


def test_explore_runs_on_a_small_model_only_at_2_1_197(tree: Path) -> None:
    assert _agent(tree, OLD, "Explore").model == "haiku"
    assert _agent(tree, NEW, "Explore").model == ""


def test_fork_exists_at_2_1_332_and_shares_the_parents_reads(tree: Path) -> None:
    read = tree / "repo" / "sub" / "a.py"
    main = _assemble(tree, NEW, touched=[read])
    fork = main.subagent("fork")
    assert fork.render("claude-code", date=DATE) == main.render("claude-code", date=DATE)
    assert fork.touch(read).render("claude-code", date=DATE).count("sub rules") == 1


def test_fork_at_2_1_197_is_the_clients_not_found_answer(tree: Path) -> None:
    with pytest.raises(RequestError) as caught:
        _assemble(tree, OLD, subagent="fork")
    assert str(caught.value) == (
        "subagent fork: Claude Code 2.1.197 answers \"Agent type 'fork' not found\"; its agent "
        "types: claude, Explore, general-purpose, helper, Plan, reviewer, scribe, statusline-setup"
    )


def test_an_unknown_agent_is_a_one_line_usage_error(tree: Path) -> None:
    result = ctxasm(
        ["render", str(tree / "repo"), "--subagent", "nobody", "--home", str(tree / "home"),
         "--managed-dir", str(tree / "managed")]
    )  # fmt: skip
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Agent type 'nobody' not found" in result.stderr


@pytest.mark.parametrize("version", VERSIONS)
def test_each_agent_keeps_its_own_attached_files(tree: Path, version: str) -> None:
    """A subagent attaches again what the main agent already has; nothing it attaches
    reaches the main agent (its reads are its own)."""
    read = tree / "repo" / "sub" / "a.py"
    main = _assemble(tree, version, touched=[read])
    assert main.render("claude-code", date=DATE).count("sub rules") == 1
    sub = main.subagent("general-purpose")
    assert "sub rules" not in sub.render("claude-code", date=DATE)
    after = sub.touch(read)
    assert after.render("claude-code", date=DATE).count("sub rules") == 1
    explore = _assemble(
        tree, version, subagent="Explore", touched=[tree / "repo" / "web" / "app.ts"]
    )
    attached = [s.display for s in explore.sources if s.lazy]
    assert attached == [".claude/rules/web.md"]
    assert "web rule" not in main.render("claude-code", date=DATE)


def test_the_cli_renders_a_subagent_and_json_lists_what_it_receives(tree: Path) -> None:
    common = ["--home", str(tree / "home"), "--managed-dir", str(tree / "managed")]
    result = ctxasm(
        ["render", str(tree / "repo"), "--subagent", "reviewer", "--format", "json", *common]
    )
    assert result.exit_code == 0, result.stderr
    import json

    data = json.loads(result.stdout)
    assert data["subagent"] | {"origin": ""} == {
        "name": "reviewer", "description": "Reviews.", "origin": "", "instructions": True,
        "skills": False, "tools": ["Read", "Grep", "Glob"], "tools_excluded": [],
        "prompt": "You review.", "model": "sonnet", "shares_parent": False,
    }  # fmt: skip
    assert [s["path"] for s in data["sources"]][-3:] == [
        "~/.claude/CLAUDE.md", "CLAUDE.md", "CLAUDE.local.md",
    ]  # fmt: skip
    explained = ctxasm(["explain", str(tree / "repo"), "--subagent", "Explore", "--json", *common])
    rows = json.loads(explained.stdout)["sources"]
    assert {r["path"]: r["skip"] for r in rows if r["status"] == "skipped"}["CLAUDE.md"] == (
        "excluded for this agent"
    )


# --- custom agent definitions ----------------------------------------------------------------


def test_a_project_agent_wins_over_a_user_agent_of_its_name(tree: Path) -> None:
    build(
        tree,
        {
            "home/.claude/agents/reviewer.md": "---\nname: reviewer\ndescription: Mine.\n---\nUser's."
        },
    )
    sub = _assemble(tree, NEW, subagent="reviewer")
    assert _agent(tree, NEW, "reviewer").prompt == "You review."
    assert [(d.code, d.path) for d in sub.diagnostics if d.code == "CTX413"] == [
        ("CTX413", "~/.claude/agents/reviewer.md")
    ]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("---\nname: x\n---\nbody", "CTX411"),
        ("---\ndescription: d\n---\nbody", "CTX410"),
        ('---\nname: "x\ndescription: d\n---\nbody', "CTX410"),
        ("---\nname: x\ndescription: d\ntools: Read, Raed\n---\nbody", "CTX412"),
    ],
)
def test_definitions_the_client_cannot_use_are_reported(tree: Path, text: str, code: str) -> None:
    build(tree, {"repo/.claude/agents/x.md": text})
    sub = _assemble(tree, NEW, subagent="general-purpose")
    assert code in [d.code for d in sub.diagnostics]


def test_a_hostile_agents_directory_is_read_within_bounds(tree: Path) -> None:
    agents = tree / "repo" / ".claude" / "agents"
    for i in range(205):
        (agents / f"a{i:03}.md").write_text(f"---\nname: a{i:03}\ndescription: d\n---\nx")
    os.mkfifo(agents / "fifo.md")
    os.symlink("/dev/zero", agents / "zero.md")
    (agents / "loop.md").symlink_to("loop.md")
    sub = _assemble(tree, NEW, subagent="general-purpose")
    notes = [d.message for d in sub.diagnostics if d.code == "CTX410"]
    assert any("over 200 definitions" in m for m in notes)


def test_lint_checks_the_agent_definitions_of_the_start(tree: Path) -> None:
    """Each finding is on the definition's file; the user's agent that the project's
    replaces, and instructions that speak to subagents Explore and Plan never see."""
    build(
        tree,
        {
            "repo/.claude/agents/bad.md": "---\nname: bad\ntools: Read, Raed\ncolour: red\n---\nx",
            "home/.claude/agents/reviewer.md": "---\nname: reviewer\ndescription: Mine.\n---\nx",
        },
    )
    result = lint(base=tree / "repo", **machine(tree))
    found = sorted((f.path, f.code) for f in result.findings if f.code.startswith("CTX41"))
    assert found == [
        (".claude/agents/bad.md", "CTX410"),
        (".claude/agents/bad.md", "CTX411"),
        (".claude/agents/bad.md", "CTX412"),
        ("CLAUDE.md", "CTX414"),
        ("~/.claude/agents/reviewer.md", "CTX413"),
    ]
    quiet = lint(base=tree / "repo", select=["CTX414"], **machine(tree))
    assert [f.code for f in quiet.findings] == ["CTX414"]


def test_no_note_when_the_instructions_do_not_speak_of_subagents(tree: Path) -> None:
    build(tree, {"repo/CLAUDE.md": "Plan your work. Explore the code."})
    assert "CTX414" not in [f.code for f in lint(base=tree / "repo", **machine(tree)).findings]


def test_a_definition_reached_through_a_link_out_of_the_project_is_reported(
    tree: Path,
) -> None:
    build(tree, {"home/secret.md": "---\nname: leak\ndescription: d\n---\nsecret"})
    (tree / "repo" / ".claude" / "agents" / "leak.md").symlink_to(tree / "home" / "secret.md")
    sub = _assemble(tree, NEW, subagent="leak")
    assert [(d.code, d.path) for d in sub.diagnostics if d.code in ("CTX801", "CTX802")] == [
        ("CTX802", ".claude/agents/leak.md")
    ]


def test_omit_claude_md_leaves_the_files_out_from_2_1_332(tree: Path) -> None:
    build(
        tree,
        {
            "repo/.claude/agents/terse.md": (
                "---\nname: terse\ndescription: d\ntools: Read, Skill\nomitClaudeMd: true\n---\nx"
            )
        },
    )
    assert _render(tree, OLD, subagent="terse") == _render(tree, OLD)  # read, changes nothing
    assert "Contents of" not in _render(tree, NEW, subagent="terse")
    assert _agent(tree, NEW, "terse").skills


def test_disallowed_skill_tool_means_no_skills_list(tree: Path) -> None:
    build(
        tree,
        {
            "repo/.claude/agents/n.md": "---\nname: n\ndescription: d\ndisallowedTools: Skill\n---\nx"
        },
    )
    agent = _agent(tree, NEW, "n")
    assert (agent.instructions, agent.skills, agent.tools, agent.excluded) == (
        True,
        False,
        (),
        ("Skill",),
    )


def test_keys_the_client_reads_are_not_reported(tree: Path) -> None:
    build(
        tree,
        {
            "repo/.claude/agents/k.md": (
                "---\nname: k\ndescription: d\ncolor: red\npermissionMode: plan\nmaxTurns: 3\n"
                "skills: [notes]\ncolour: red\n---\nx"
            )
        },
    )
    sub = _assemble(tree, NEW, subagent="k")
    assert [d.message for d in sub.diagnostics if d.code == "CTX410"] == [
        "frontmatter key 'colour' is not read by the client"
    ]


def test_lint_checks_a_definition_given_as_a_file(tree: Path) -> None:
    """What the pre-commit hook passes: the definition alone, checked as the client reads it
    (no import walk, no empty-file check: a prompt is not instructions)."""
    build(tree, {"repo/.claude/agents/bad.md": "---\nname: bad\ntools: Raed\n---\nSee @nowhere.md"})
    result = lint([".claude/agents/bad.md"], base=tree / "repo", **machine(tree))
    assert sorted(f.code for f in result.findings) == ["CTX411", "CTX412"]
    empty = lint([".claude/agents/helper.md"], base=tree / "repo", **machine(tree))
    build(tree, {"repo/.claude/agents/e.md": "---\nname: e\ndescription: d\n---\n"})
    assert empty.findings == ()
    assert lint([".claude/agents/e.md"], base=tree / "repo", **machine(tree)).findings == ()


def test_definitions_in_subdirectories_are_found_and_a_link_loop_is_entered_once(
    tree: Path,
) -> None:
    build(tree, {"repo/.claude/agents/team/deep.md": "---\nname: deep\ndescription: d\n---\nDeep."})
    (tree / "repo" / ".claude" / "agents" / "team" / "loop").symlink_to("..")
    assert _agent(tree, NEW, "deep").prompt == "Deep."
    assert lint([".claude/agents/team/deep.md"], base=tree / "repo", **machine(tree)).findings == ()


def test_a_custom_agent_of_a_built_in_name_replaces_it(tree: Path) -> None:
    build(
        tree,
        {"repo/.claude/agents/e.md": "---\nname: Explore\ndescription: Mine.\ntools: Read\n---\nx"},
    )
    assert _render(tree, NEW, subagent="Explore") == _render(tree, NEW)
    assert _agent(tree, NEW, "Explore").origin == ".claude/agents/e.md"


def test_agent_definitions_read_in_one_run_are_bounded_in_bytes(tree: Path) -> None:
    agents = tree / "repo" / ".claude" / "agents"
    body = "x" * (3 * 1024 * 1024)  # under the 4 MiB a file may have
    for i in range(7):
        (agents / f"big{i}.md").write_text(f"---\nname: big{i}\ndescription: d\n---\n{body}")
    sub = _assemble(tree, NEW, subagent="general-purpose")
    notes = [d for d in sub.diagnostics if d.code == "CTX410"]
    assert [(d.path, "past 16 MiB" in d.message) for d in notes] == [
        (".claude/agents/big5.md", True)
    ]
