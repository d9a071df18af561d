"""What the first request after a Claude Code compaction holds (SPEC 4c), on a tree with every
layer, at 2.1.197 and 2.1.332: `after_compact=`, `render --after-compact`, `explain
--after-compact`, and the runtime's profile (`Client.compaction_profile`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from assembler import assemble
from assembler.assembly import Assembly
from assembler.clients import registry
from assembler.clients.claude_code.compaction import RESTORE_LIMIT
from assembler.clients.claude_code.versions import MODELLED
from assembler.commands import main
from assembler.compaction import Compaction, CompactionProfile, Fate, Trigger
from assembler.errors import RequestError, SkillError
from assembler.versions import ClientVersion
from tests.helpers.trees import build, git_init

OLD, NEW = MODELLED
DATE = "2026-01-31"


def _tree(tmp: Path) -> Path:
    """Every layer, an import, unconditional and `paths:` rules, a nested CLAUDE.md with a
    nested rule, auto memory, a user and a project skill."""
    repo = git_init(tmp / "repo")
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(repo.resolve()))
    build(
        tmp,
        {
            "managed/CLAUDE.md": "Managed rule.\n",
            "home/.claude/CLAUDE.md": "User rule.\n",
            "home/.claude/rules/style.md": "User style.\n",
            "home/.claude/skills/standup/SKILL.md": (
                "---\nname: standup\ndescription: Summarise yesterday.\n---\nRead the log.\n"
            ),
            f"home/.claude/projects/{slug}/memory/MEMORY.md": "- remembered fact\n",
            "repo/CLAUDE.md": "Root rules. See @docs/extra.md\n",
            "repo/docs/extra.md": "Imported text.\n",
            "repo/CLAUDE.local.md": "Local notes.\n",
            "repo/.claude/rules/always.md": "Always on.\n",
            "repo/.claude/rules/ts.md": "---\npaths: src/**/*.ts\n---\nTypeScript rule.\n",
            "repo/.claude/skills/deploy/SKILL.md": (
                "---\nname: deploy\ndescription: Ship it.\n---\nRun make deploy.\n"
            ),
            "repo/src/CLAUDE.md": "Nested src rules.\n",
            "repo/src/.claude/rules/nested.md": "Nested rule.\n",
            "repo/src/app.ts": "export const a = 1;\nexport const b = 2;\n",
        },
    )
    return repo


def _after(tmp: Path, version: str, compaction: Compaction | str) -> Assembly:
    repo = _tree(tmp)
    return assemble(
        repo,
        home=tmp / "home",
        managed_dir=tmp / "managed",
        environ={},
        touched=[repo / "src/app.ts"],
        client_version=version,
        after_compact=compaction,
    )


def _fates(assembly: Assembly) -> dict[tuple[str, str], Fate]:
    after = assembly.compacted
    assert after is not None
    return {(s.kind, s.name): s.fate for s in after.survivors}


def test_manual_at_2_1_332_rereads_every_start_file_and_restores_reads_and_skills(
    tmp_path: Path,
) -> None:
    a = _after(tmp_path, NEW, Compaction(Trigger.MANUAL, ("deploy",)))
    fates = _fates(a)
    start = [s for s in a.sources if not s.lazy and s.reason.why.name != "SKILLS"]
    assert len(start) == 8  # managed, user, user rule, root, import, rule, local, memory
    assert all(fates["instructions", s.display] is Fate.REREAD for s in start)
    assert fates["skills list", "skills list"] is Fate.REREAD
    restored = {name for (kind, name), f in fates.items() if f is Fate.RESTORED}
    assert {"src/app.ts", "src/CLAUDE.md", "src/.claude/rules/nested.md"} <= restored
    assert ".claude/rules/ts.md" in restored and "deploy" in restored
    after = a.compacted
    assert after is not None
    assert after.summary_first and after.reread == "right after the compaction"
    rule = next(s for s in after.survivors if s.name == ".claude/rules/ts.md")
    assert rule.content == "1\t---\n2\tpaths: src/**/*.ts\n3\t---\n4\tTypeScript rule.\n5\t"
    skill = next(s for s in after.survivors if s.kind == "skill")
    assert "Run make deploy." in skill.content


def test_auto_at_2_1_197_rereads_at_the_next_user_turn_and_drops_the_skills_list(
    tmp_path: Path,
) -> None:
    a = _after(tmp_path, OLD, "auto")
    fates = _fates(a)
    assert {f for (k, _), f in fates.items() if k == "instructions"} == {Fate.LATER}
    assert fates["skills list", "skills list"] is Fate.LOST
    text = a.render("claude-code", date=DATE)
    assert "Contents of" not in text.split("Called the Read tool")[0]  # no instructions yet
    assert text.startswith("[the continuation message")
    assert text.count("Called the Read tool with the following input:") == 4


def test_auto_at_2_1_332_sends_the_reads_the_start_blocks_then_the_summary(
    tmp_path: Path,
) -> None:
    a = _after(tmp_path, NEW, "auto")
    assert {f for (k, _), f in _fates(a).items() if k == "instructions"} == {Fate.REREAD}
    text = a.render("claude-code", date=DATE)
    start = assemble(
        tmp_path / "repo", home=tmp_path / "home", managed_dir=tmp_path / "managed",
        environ={}, client_version=NEW,
    ).render("claude-code", date=DATE)  # fmt: skip
    assert text.startswith("<system-reminder>\nCalled the Read tool")
    reads, rest = text.split(start)  # the start blocks, byte for byte, re-read
    assert "Result of calling the Read tool" in reads
    assert rest.startswith("[the continuation message")


def test_manual_at_2_1_332_puts_the_summary_first_then_the_reads_then_the_start(
    tmp_path: Path,
) -> None:
    text = _after(tmp_path, NEW, "manual").render("claude-code", date=DATE)
    first, rest = text.split("\n\n", 1)
    assert first.startswith("[the continuation message")
    assert rest.startswith("<system-reminder>\nCalled the Read tool")
    assert rest.rindex("Result of calling the Read tool") < rest.index("Root rules.")


def test_a_restored_read_is_a_call_and_its_numbered_result(tmp_path: Path) -> None:
    text = _after(tmp_path, NEW, "manual").render("claude-code", date=DATE)
    app = str((tmp_path / "repo/src/app.ts").resolve())
    call = json.dumps({"file_path": app}, separators=(",", ":"))
    assert (
        f"<system-reminder>\nCalled the Read tool with the following input: {call}\n"
        "</system-reminder>\n\n<system-reminder>\nResult of calling the Read tool:\n"
        "1\texport const a = 1;\n2\texport const b = 2;\n3\t\n</system-reminder>"
    ) in text


def test_more_candidates_than_the_limit_are_shown_all_with_the_limit(tmp_path: Path) -> None:
    repo = _tree(tmp_path)
    reads = []
    for n in range(5):
        build(repo, {f"src/f{n}.ts": f"file {n}\n"})
        reads.append(repo / f"src/f{n}.ts")
    a = assemble(
        repo, home=tmp_path / "home", managed_dir=tmp_path / "managed", environ={},
        touched=[repo / "src/app.ts", *reads], after_compact="manual",
    )  # fmt: skip
    after = a.compacted
    assert after is not None and after.restore_limit == RESTORE_LIMIT
    assert len(after.of(Fate.CANDIDATE)) == 9 and not after.of(Fate.RESTORED)[:-1]
    text = a.render("claude-code", date=DATE)
    assert "[9 candidates below; the client restores 5 of them" in text
    assert text.count("Called the Read tool") == 9


def test_a_continued_session_restores_only_the_files_the_model_read(tmp_path: Path) -> None:
    a = _after(tmp_path, NEW, Compaction(Trigger.MANUAL, ("deploy",), continued=True))
    fates = _fates(a)
    assert fates["read", "src/app.ts"] is Fate.RESTORED
    assert fates["attached", "src/CLAUDE.md"] is Fate.LOST
    assert fates["attached", ".claude/rules/ts.md"] is Fate.LOST
    assert fates["skill", "deploy"] is Fate.LOST


def test_json_lists_every_source_and_its_fate(tmp_path: Path) -> None:
    data = json.loads(_after(tmp_path, OLD, "manual").render("json"))
    after = data["after_compact"]
    assert (after["version"], after["trigger"], after["restore_limit"]) == (OLD, "manual", 5)
    assert {s["fate"] for s in after["sources"]} == {"re-read", "restored", "lost"}


def test_without_after_compact_the_outputs_are_unchanged(tmp_path: Path) -> None:
    repo = _tree(tmp_path)
    a = assemble(repo, home=tmp_path / "home", managed_dir=tmp_path / "managed", environ={})
    assert a.compacted is None and "after_compact" not in json.loads(a.render("json"))


def test_an_unknown_skill_or_option_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match="nope: no such skill; listed skills: "):
        _after(tmp_path, NEW, Compaction(Trigger.MANUAL, ("nope",)))
    with pytest.raises(RequestError, match="after_compact: 'sometimes'"):
        _after(tmp_path, NEW, "sometimes")


def test_cli_explain_prints_the_before_after_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _tree(tmp_path)
    argv = [
        "explain", str(repo), "--home", str(tmp_path / "home"), "--managed-dir",
        str(tmp_path / "managed"), "--touch", str(repo / "src/app.ts"), "--after-compact",
        "--compact", "auto", "--skill", "deploy", "--client-version", OLD,
    ]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    table = out[out.index("After an automatic compaction (Claude Code 2.1.197") :]
    assert re.search(r"(?m)^CLAUDE\.md +at start +re-read later", table)
    assert re.search(r"src/app\.ts +read +restored", table)
    assert re.search(r"src/CLAUDE\.md +on a read +restored", table)
    assert re.search(r"skill deploy +invoked +restored", table)
    assert all(len(line) <= 80 for line in table.splitlines())


def test_cli_refuses_details_without_after_compact_and_unmodelled_clients(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _tree(tmp_path)
    machine = ["--home", str(tmp_path / "home"), "--managed-dir", str(tmp_path / "managed")]
    assert main(["render", str(repo), *machine, "--skill", "deploy"]) == 2
    assert "add it" in capsys.readouterr().err
    assert main(["render", str(repo), *machine, "--policy", "codex", "--after-compact"]) == 2
    err = capsys.readouterr().err
    assert "not modelled for Codex" in err and "Traceback" not in err
    assert main(["explain", str(repo), *machine, "--policy", "all", "--after-compact"]) == 2


# --- the runtime's profile ------------------------------------------------------------------


def _profile(
    version: str, environ: dict[str, str], window: int | None = 200_000
) -> CompactionProfile:
    client = registry.get("claude-code")
    found = client.compaction_profile(ClientVersion(version), environ, window)
    assert found is not None
    return found


def test_profile_lines_for_a_200000_window() -> None:
    p = _profile(NEW, {})
    assert (p.window, p.effective, p.auto_compact, p.warning) == (
        200_000,
        180_000,
        167_000,
        147_000,
    )


def test_profile_window_and_percentage_from_the_environment() -> None:
    p = _profile(NEW, {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"})
    assert p.auto_compact == 90_000
    p = _profile(NEW, {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"})
    assert (p.effective, p.auto_compact, p.warning) == (80_000, 67_000, 47_000)
    p = _profile(
        NEW, {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "lots", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "0"}
    )
    assert p.auto_compact == 167_000 and len(p.notes) == 2


def test_profile_without_a_configured_window_has_no_lines() -> None:
    p = _profile(NEW, {}, None)
    assert (p.window, p.auto_compact, p.warning) == (None, None, None)


def test_profile_instruction_per_version_and_additional_instructions() -> None:
    new, old = _profile(NEW, {}), _profile(OLD, {})
    assert "Count only turns with the user role" in new.instruction()
    assert "Count only turns with the user role" not in old.instruction()
    text = new.instruction("Focus on the tests.")
    assert text.endswith("Additional Instructions:\nFocus on the tests.\n\n" + new.instruction_tail)
    assert text.index("<analysis>") < text.index("9. Optional Next Step")
    assert (old.min_messages, new.min_messages) == (3, 0)
    assert (old.reread_auto_now, new.reread_auto_now) == (False, True)


def test_a_read_that_failed_is_not_restored(tmp_path: Path) -> None:
    repo = _tree(tmp_path)
    a = assemble(
        repo, home=tmp_path / "home", managed_dir=tmp_path / "managed", environ={},
        touched=[repo / "src/app.ts", repo / "src/gone.ts"], after_compact="manual",
    )  # fmt: skip
    assert a.compacted is not None
    names = [s.name for s in a.compacted.survivors if s.kind == "read"]
    assert names == ["src/app.ts"]
