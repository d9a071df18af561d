"""ctxasm against the reference requests recorded from the real clients on the project's
fixture trees (tests/helpers/client_cases.py; `python -m tests.tools.record_clients` made
them with `ctxasm verify`'s own capture): file by file and byte by byte, with the same
comparison `ctxasm verify` makes, and no node.

Each reference is compared with ctxasm at the release it was recorded with
(`client_version=`, as `verify` predicts): Claude Code 2.1.197 and 2.1.332 (SPEC 4b), Codex
0.171, Gemini CLI 0.61. Every comparison must agree.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from assembler.clients.claude_code.headless import PREAMBLE, TASK
from assembler.verify.check import client_of, client_sides
from tests.helpers.client_cases import (
    CASES,
    MACHINE_PATHS,
    REFERENCES,
    Case,
    case_params,
    compaction_path,
    compaction_recordings,
    compare_reference,
    lay_out,
    load,
    reference_path,
    reference_steps,
    replayed,
)
from tests.helpers.clients import PINS, Pin

_DATE = re.compile(r"Today's date is (\d{4}-\d\d-\d\d)\.")


@pytest.mark.parametrize(("case", "pin"), case_params())
def test_ctxasm_matches_the_recorded_client(case: Case, pin: Pin, fixed_tmp: Path) -> None:
    found = compare_reference(case, pin, fixed_tmp)
    assert found is None, found


def test_every_case_is_recorded_at_every_pinned_version() -> None:
    wanted = {reference_path(case, pin) for case in CASES for pin in case.pins()}
    wanted |= {compaction_path(mode, pin) for mode, pin in compaction_recordings()}
    assert set(REFERENCES.rglob("*.json")) == wanted
    for case in CASES:
        for pin in case.pins():
            reference = load(case, pin)
            assert (reference["client"], reference["version"]) == (case.client, pin.version)
            assert len(reference["turns"]) == 1 + len(case.reads)
    assert {p.client for p in PINS} == {c.client for c in CASES}


def test_the_references_hold_no_path_of_the_recording_machine() -> None:
    for path in REFERENCES.rglob("*.json"):
        text = path.read_text(encoding="utf-8")
        assert MACHINE_PATHS.findall(text) == [], path
        assert str(Path.home()) + "/" not in text, path


def test_the_references_hold_the_instruction_files() -> None:
    """Each recording has the context to compare (a reference of nothing proves nothing)."""
    for case in CASES:
        for pin in case.pins():
            _, headless = client_of(case.client)
            turns = load(case, pin)["turns"]
            files = [p for p in client_sides(headless, turns).start if p.file]
            agents_md_only = case.fixture == "codex" and pin.version == "2.1.197"
            omitted = case.subagent == "terse" and pin.version == "2.1.332"  # omitClaudeMd
            empty = agents_md_only or omitted or case.subagent in ("Explore", "Plan")
            assert bool(files) is not empty, (case.name, pin.version)


def test_the_subagent_references_are_the_subagents_requests() -> None:
    """Each subagent recording is the subagent's own conversation (the task the main agent
    handed it), and its first read attached the nested files to its own tool result, even
    those the main agent had attached already; but not a fork's, which shares them."""
    for case in CASES:
        if not case.subagent:
            continue
        for pin in case.pins():
            _, headless = client_of(case.client)
            turns = load(case, pin)["turns"]
            assert TASK in json.dumps(turns[0]["messages"]), (case.name, pin.version)
            attached = client_sides(headless, turns).reads[0]
            first = {"subagents": ["services/api/CLAUDE.md"], "codex": ["services/AGENTS.md"]}
            shared = case.subagent == "fork" and case.main_reads  # the parent attached them
            nothing = shared or (case.fixture == "codex" and pin.version == "2.1.197")
            wanted = [] if nothing else first[case.fixture]
            assert [p.label.rsplit("/repo/", 1)[1] for p in attached][:1] == wanted, (
                case.name,
                pin.version,
            )


_SUBAGENT_CASES = [
    pytest.param(case, pin, id=f"{pin.key}-{case.name}")
    for case in CASES
    if case.subagent
    for pin in case.pins()
]


@pytest.mark.parametrize(("case", "pin"), _SUBAGENT_CASES)
def test_a_subagents_instruction_and_date_blocks_are_ctxasms_byte_for_byte(
    case: Case, pin: Pin, fixed_tmp: Path
) -> None:
    """Each block of the subagent's first message that holds the instruction files or the
    date (Explore's and Plan's: the date alone) is in `render --subagent NAME --format
    claude-code` as the client sent it (gitStatus, which ctxasm does not model, aside)."""
    cwd = lay_out(case, fixed_tmp)
    first = replayed(load(case, pin), fixed_tmp)[0]["messages"][0]["content"]
    blocks = [b["text"] for b in first if "text" in b]
    ours = reference_steps(case, pin, fixed_tmp, cwd)[0]
    dated = [b for b in blocks if _DATE.search(b) and "# gitStatus" not in b]
    date = _DATE.search(dated[0]).group(1)  # type: ignore[union-attr]
    rendered = ours.render("claude-code", date=date)
    wanted = [b for b in blocks if PREAMBLE in b or b in dated]
    assert wanted and all(b.strip() in rendered for b in wanted), (case.name, pin.version)
    assert (PREAMBLE in rendered) is any(PREAMBLE in b for b in blocks)
