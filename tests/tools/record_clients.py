"""Records the reference requests of the real clients on the project's fixture trees:
`tests/data/clients/<client>-<version>/<case>.json` (tests/helpers/client_cases.py).

It is `ctxasm verify`'s own capture (`assembler.verify.check.session`: the stand-in
provider, the program's launch and bounded run, the scripted reads), run on each case laid
out as the tests lay it out, with each pinned version `make clients` installed:

    make clients
    .venv/bin/python -m tests.tools.record_clients            # every case and version
    .venv/bin/python -m tests.tools.record_clients demo-api   # one case
    .venv/bin/python -m tests.tools.record_clients --compaction  # after a compaction
    .venv/bin/python -m tests.tools.record_clients --compaction auto  # one mode

With `--compaction`, Claude Code's first request after a manual compaction
(`tests/data/clients/claude-code-<version>/compact-<mode>.json`, SPEC 4c), on the
`demo-api` case, the stand-in answering `hello` with a read of the case's file: mode
`manual` sends `hello`, `/compact` and `next` to one process (`--input-format
stream-json`); mode `continued` runs `claude -p hello`, then `/compact` and `next` in two
more processes (`--continue` each); mode `auto` runs `claude -p hello` with the window set
(`CLAUDE_CODE_AUTO_COMPACT_WINDOW`) and every reply reporting a prompt past the automatic
line, at the releases that compact there (`client_cases.compaction_recordings`); mode
`skill` is `manual` with a project skill planted and the first answer a call of the Skill
tool for it, no read. The
stand-in answers the summary request with `ok`; the recording keeps the request that
follows it.

A `subagent-NAME` case makes the main agent call the Agent tool for that agent type at its
first turn, and records the subagent's requests (its start, then after each of its reads).

The tests that read the references need no node (tests/verify/test_references.py).
"""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from assembler.clients.claude_code.client import DESCRIPTIONS
from assembler.clients.claude_code.headless import ClaudeCodeHeadless
from assembler.clients.headless import Body, Reply, stream_reply
from assembler.verify.check import client_of, session
from tests.helpers.client_cases import (
    BY_NAME,
    CASES,
    COMPACTION_CASE,
    COMPACTION_MODES,
    SKILL,
    case_headless,
    compaction_path,
    compaction_recordings,
    lay_out,
    plant_skill,
    reads,
    recorded,
    reference_path,
)
from tests.helpers.clients import CACHE, Pin, installed


def record(name: str) -> list[Path]:
    case = BY_NAME[name]
    written = []
    for pin in case.pins():
        program = _installed(pin)
        root = Path(tempfile.mkdtemp(prefix="ctxasm-golden-", dir="/tmp"))
        try:
            cwd = lay_out(case, root)
            headless = case_headless(case, root)
            with session(headless, str(program), root / "home", reads(case, root)) as run:
                version = run.version(cwd)
                turns = run.capture(cwd)
        finally:
            shutil.rmtree(root)
        reference = {
            "case": case.name,
            "client": case.client,
            "version": version,
            "package": f"{pin.package}@{pin.version}",
            "recorder": "python -m tests.tools.record_clients",
            "turns": recorded(turns, headless.kept, root, pin.prefix(CACHE)),
        }
        path = reference_path(case, pin)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(reference, indent=1, ensure_ascii=False) + "\n", "utf-8")
        written.append(path)
    return written


_STEP_TIMEOUT = 180  # seconds for one process of the client


def record_compaction(mode: str) -> list[Path]:
    case = BY_NAME[COMPACTION_CASE]
    _, headless = client_of(case.client)
    written = []
    for pin in (pin for recorded_mode, pin in compaction_recordings() if recorded_mode == mode):
        program = _installed(pin)
        root = Path(tempfile.mkdtemp(prefix="ctxasm-golden-", dir="/tmp"))
        try:
            cwd = lay_out(case, root)
            stand_in = _STAND_INS.get(mode, ClaudeCodeHeadless)(DESCRIPTIONS.values())
            if mode == "skill":
                plant_skill(cwd)
            read = reads(case, root) if mode != "skill" else ()
            with session(stand_in, str(program), root / "home", read) as run:
                version = run.version(cwd)
                if mode == "continued":
                    run.capture(cwd)  # a first process: hello, the read, its answer
                before = len(run.provider.exchanges())
                environ = {**run.environ, **(_AUTO_WINDOW if mode == "auto" else {})}
                for argv, said in _compaction_steps(mode):
                    _converse([str(program), *argv], cwd, environ, said)
                turns = [e.body for e in run.provider.exchanges()[before:] if e.turn]
        finally:
            shutil.rmtree(root)
        reference = {
            "case": f"compact-{mode}",
            "fixture": case.name,
            "client": case.client,
            "version": version,
            "package": f"{pin.package}@{pin.version}",
            "recorder": "python -m tests.tools.record_clients --compaction",
            "compaction": {
                "trigger": "auto" if mode == "auto" else "manual",
                "continued": mode == "continued",
                "skills": [SKILL] if mode == "skill" else [],
                "reads": mode != "skill",
            },
            "turns": recorded(turns[-1:], headless.kept, root, pin.prefix(CACHE)),
        }
        path = compaction_path(mode, pin)
        path.write_text(json.dumps(reference, indent=1, ensure_ascii=False) + "\n", "utf-8")
        written.append(path)
    return written


# An automatic compaction: the model's window set (claude-sonnet-4-5 has none configured, so
# the client never compacts it at a threshold) and every reply reporting a prompt past the
# line (167,000 of 200,000) and under the point where the client refuses to send (2.1.332).
_AUTO_WINDOW = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000"}
_AUTO_USAGE = b"195000"


class _Filled(ClaudeCodeHeadless):
    """The stand-in, its replies reporting `_AUTO_USAGE` prompt tokens."""

    def answer(self, path: str, body: Body, read: str | None) -> Reply:
        reply = super().answer(path, body, read)
        return reply._replace(
            body=reply.body.replace(b'"input_tokens":1', b'"input_tokens":' + _AUTO_USAGE)
        )


class _SkillCall(ClaudeCodeHeadless):
    """The stand-in, its first answer a call of the Skill tool for `SKILL`."""

    def __init__(self, descriptions: Iterable[str]) -> None:
        super().__init__(descriptions)
        self.called = False

    def answer(self, path: str, body: Body, read: str | None) -> Reply:
        if self.called or not self.is_turn(path, body):
            return super().answer(path, body, read)
        self.called = True
        block: dict[str, Any] = {"type": "tool_use", "id": "toolu_ctxasm_skill", "name": "Skill",
                 "input": {"skill": SKILL}}  # fmt: skip
        message: dict[str, Any] = {
            "id": "msg_ctxasm_skill", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [], "stop_reason": None,
            "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        }  # fmt: skip
        return stream_reply(
            (name, {"type": name, **data})
            for name, data in (
                ("message_start", {"message": message}),
                ("content_block_start", {"index": 0, "content_block": {**block, "input": {}}}),
                ("content_block_delta", {"index": 0, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}),
                ("content_block_stop", {"index": 0}),
                ("message_delta", {"delta": {"stop_reason": "tool_use", "stop_sequence": None},
                                   "usage": {"output_tokens": 1}}),
                ("message_stop", {}),
            )
        )  # fmt: skip


_STAND_INS: dict[str, type[ClaudeCodeHeadless]] = {"auto": _Filled, "skill": _SkillCall}


def _installed(pin: Pin) -> Path:
    """The pinned program, or the end of the recording with what to run."""
    program = installed(pin)
    if program is None:
        raise SystemExit(f"{pin.package}@{pin.version} is not installed: run make clients")
    return program


def _compaction_steps(mode: str) -> list[tuple[list[str], tuple[str, ...]]]:
    """The processes to run: (arguments, the user's messages in stream-json, one a turn)."""
    model = ["--model", "claude-sonnet-4-5"]
    stream = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    if mode == "continued":
        return [(["-p", "/compact", "--continue", *model], ()),
                (["-p", "next", "--continue", *model], ())]  # fmt: skip
    if mode == "auto":
        return [(["-p", "hello", *model], ())]  # the line is reached after the read
    return [(["-p", *stream, *model], ("hello", "/compact", "next"))]


def _pump(stream: IO[str] | None, lines: queue.Queue[str]) -> None:
    for line in stream or ():
        lines.put(line)


def _converse(argv: list[str], cwd: Path, environ: dict[str, str], said: tuple[str, ...]) -> None:
    """Run the client; with `said`, send each message after the previous turn's result (a
    message sent while it works is folded into that turn), then close its input."""
    child = subprocess.Popen(
        argv, cwd=cwd, env=environ, stdin=subprocess.PIPE if said else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_pump, args=(child.stdout, lines), daemon=True).start()
    try:
        for text in said:
            assert child.stdin is not None
            message = {"type": "user", "message": {"role": "user", "content": text}}
            child.stdin.write(json.dumps(message) + "\n")
            child.stdin.flush()
            while '"type":"result"' not in lines.get(timeout=_STEP_TIMEOUT).replace(" ", ""):
                pass
        if child.stdin is not None:
            child.stdin.close()
        child.wait(timeout=_STEP_TIMEOUT)
    finally:
        child.kill()
        child.wait()


USAGE = "usage: python -m tests.tools.record_clients [CASE ...] | --compaction [MODE ...]"


def main(argv: list[str]) -> int:
    compaction = argv[:1] == ["--compaction"]
    asked = argv[1:] if compaction else argv
    known = COMPACTION_MODES if compaction else tuple(BY_NAME)
    if {"-h", "--help"} & set(argv):
        print(USAGE)
        return 0
    unknown = [a for a in asked if a not in known]
    if unknown:
        print(f"record_clients: {unknown[0]!r} is not a case here; {USAGE}", file=sys.stderr)
        return 2
    if compaction:
        for mode in asked or COMPACTION_MODES:
            for path in record_compaction(mode):
                print(f"recorded {path}")
        return 0
    for name in argv or [case.name for case in CASES]:
        for path in record(name):
            print(
                f"recorded {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
