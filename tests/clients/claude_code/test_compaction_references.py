"""`after_compact` against the first request after a manual compaction, recorded from the
real client at 2.1.197 and 2.1.332, as `explain --after-compact` sees it (`python -m tests.tools.record_clients --compaction`: in
one process, and continued across processes), with no node: every source of the recorded
request is one ctxasm calls re-read or restored, and nothing it calls lost is in it."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from assembler.clients.claude_code.headless import PREAMBLE
from assembler.clients.headless import texts
from assembler.compaction import AfterCompact, Compaction, Fate, Trigger
from assembler.live import explain
from assembler.verify.check import client_of
from assembler.verify.process import environment
from tests.helpers.client_cases import (
    BY_NAME,
    compaction_path,
    compaction_recordings,
    lay_out,
    machine,
    plant_skill,
    reads,
    replayed,
)
from tests.helpers.clients import Pin

_CALL = re.compile(r"\ACalled the Read tool with the following input: (\{.*\})\Z", re.S)
_RESULT = "Result of calling the Read tool:\n"
_SKILLS = "The following skills are available for use with the Skill tool"
_AGENTS = "Available agent types for the Agent tool"
_CONTINUATION = "This session is being continued from a previous conversation"


def _params() -> list[Any]:
    return [
        pytest.param(pin, mode, id=f"{pin.key}-{mode}") for mode, pin in compaction_recordings()
    ]


def _blocks(request: Mapping[str, Any]) -> list[str]:
    return [t for message in request["messages"] for t in texts(message.get("content"))]


def _reminders(request: Mapping[str, Any]) -> list[str]:
    """Every text block of the request, a reminder's tags taken off."""
    out = []
    for text in _blocks(request):
        inner = text.strip("\n").removeprefix("<system-reminder>\n")
        out.append(inner.removesuffix("\n</system-reminder>"))
    return out


def _predicted(mode: str, pin: Pin, root: Path) -> tuple[AfterCompact, str, Mapping[str, Any]]:
    reference = json.loads(compaction_path(mode, pin).read_text("utf-8"))
    case = BY_NAME[reference["fixture"]]
    cwd = lay_out(case, root)
    how = reference["compaction"]
    if how["skills"]:
        plant_skill(cwd)
    compaction = Compaction(Trigger(how["trigger"]), tuple(how["skills"]), how["continued"])
    # The date the reference was recorded on, which its request carries.
    day = re.search(r"Today's date is (\d{4}-\d\d-\d\d)", json.dumps(reference))
    now = dt.datetime.fromisoformat(day.group(1)) if day else None
    assembly = explain(
        cwd, environ=environment(root / "home", {}), touched=reads(case, root) if how["reads"] else (),
        client_version=reference["version"], after_compact=compaction, now=now, **machine(root),
    ).assembly  # fmt: skip
    assert assembly.compacted is not None
    rendered = assembly.render("claude-code")
    return assembly.compacted, rendered, replayed(reference, root)[0]


@pytest.mark.parametrize(("pin", "mode"), _params())
def test_every_source_of_the_recorded_request_is_reread_or_restored(
    pin: Pin, mode: str, fixed_tmp: Path
) -> None:
    after, rendered, request = _predicted(mode, pin, fixed_tmp)
    blocks = _reminders(request)
    _, headless = client_of("claude-code")
    # The instruction files: the recorded block is the one ctxasm renders, file by file.
    start = [b for b in blocks if PREAMBLE in b]
    assert len(start) == 1
    recorded = [p.label for p in headless.start_parts(start[0]) if not p.label.startswith("(")]
    reread = [s.path for s in after.survivors if s.kind == "instructions"]
    assert recorded == reread and recorded
    assert {s.fate for s in after.survivors if s.kind == "instructions"} == {Fate.REREAD}
    assert next(b for b in _blocks(request) if PREAMBLE in b).strip("\n") in rendered
    # The files restored as a read call and its result, byte for byte.
    calls = [json.loads(m.group(1))["file_path"] for b in blocks if (m := _CALL.match(b))]
    results = [b.removeprefix(_RESULT) for b in blocks if b.startswith(_RESULT)]
    restored = {
        s.path: s.content
        for s in after.survivors
        if s.kind in ("attached", "read") and s.fate is Fate.RESTORED
    }
    assert calls == list(restored)  # in the order recorded (not stable past the limit)
    assert dict(zip(calls, results, strict=True)) == restored
    # The skills invoked: re-injected, each under its name, its body whole.
    for skill in (s for s in after.survivors if s.kind == "skill"):
        assert skill.fate is Fate.RESTORED
        holding = [b for b in blocks if f"### Skill: {skill.name}\n" in b]
        assert len(holding) == 1 and skill.content.strip() in holding[0]
    raw = [b for b in _blocks(request) if "### Skill: " in b]
    assert all(b.strip("\n") in rendered for b in raw)  # the whole block, byte for byte
    # Nothing called lost is in the request.
    whole = "\n".join(blocks)
    lost = [s for s in after.survivors if s.fate is Fate.LOST and s.path]
    assert [s.path for s in lost if s.path in whole] == []
    # The lists: the agent types always; the skills list when ctxasm says it is sent again.
    fates = {s.kind: s.fate for s in after.survivors if s.kind in ("skills list", "agent types")}
    assert any(b.startswith(_AGENTS) for b in blocks) and fates["agent types"] is Fate.RESTORED
    assert any(b.startswith(_SKILLS) for b in blocks) is (fates["skills list"] is Fate.REREAD)


@pytest.mark.parametrize(("pin", "mode"), _params())
def test_the_summary_stands_where_ctxasm_says(pin: Pin, mode: str, fixed_tmp: Path) -> None:
    after, _, request = _predicted(mode, pin, fixed_tmp)
    blocks = _reminders(request)
    found = {
        "summary": [i for i, b in enumerate(blocks) if b.startswith(_CONTINUATION)],
        "reads": [i for i, b in enumerate(blocks) if _CALL.match(b)],
        "start": [i for i, b in enumerate(blocks) if PREAMBLE in b],
    }
    where = {part: at[0] for part, at in found.items() if at}  # no read: no reads part
    assert tuple(sorted(where, key=where.__getitem__)) == tuple(
        p for p in after.layout if p in where
    )


def test_a_continued_session_lost_what_the_read_attached() -> None:
    """The recorded facts the model's `continued` rows rest on: across processes only the
    file the model read comes back; in one process the attached files come back too."""
    for pin in {pin for _, pin in compaction_recordings()}:
        found = {}
        for mode in ("manual", "continued"):
            text = compaction_path(mode, pin).read_text("utf-8")
            found[mode] = "Called the Read tool" in text, "handlers/CLAUDE.md" in text
        assert found == {"manual": (True, True), "continued": (True, False)}
