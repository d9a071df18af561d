"""ctxasm against the reference requests recorded from the real clients on the project's
fixture trees (tests/helpers/client_cases.py; `python -m tests.tools.record_clients` made
them with `ctxasm verify`'s own capture): file by file and byte by byte, with the same
comparison `ctxasm verify` makes, and no node.

Each reference is compared with ctxasm at the release it was recorded with
(`client_version=`, as `verify` predicts): Claude Code 2.1.197 and 2.1.332 (SPEC 4b), Codex
0.171, Gemini CLI 0.61. Every comparison must agree.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assembler.verify.check import client_of, client_sides
from tests.helpers.client_cases import (
    CASES,
    MACHINE_PATHS,
    REFERENCES,
    Case,
    compaction_path,
    compaction_recordings,
    compare_reference,
    load,
    reference_path,
)
from tests.helpers.clients import PINS, Pin


def _params() -> list[object]:
    return [
        pytest.param(case, pin, id=f"{pin.key}-{case.name}")
        for case in CASES
        for pin in case.pins()
    ]


@pytest.mark.parametrize(("case", "pin"), _params())
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
            empty = case.name == "agents-only" and pin.version == "2.1.197"
            assert bool(files) is not empty, (case.name, pin.version)
