"""Claude Code run headless (`claude -p`) against a local stand-in for the Anthropic Messages
API, and where its requests carry the instruction files (SPEC section 4b, "Running a real
client headless, offline"; observed on 2.1.197 and 2.1.332).

At start the files are the `claudeMd` text of the first user message: inside the "As you
answer…" reminder, before `# currentDate` (2.1.197), or a reminder block of their own
(2.1.332). A Read attaches files to its tool result, one `<system-reminder>` each.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ...discovery.jsonfile import json_object
from ...errors import VerifyError
from ..headless import (
    Body,
    Headless,
    Launch,
    Mirrored,
    Part,
    Relocation,
    Reply,
    entries,
    json_reply,
    stream_reply,
    texts,
)
from .settings import MAX_SLUG, loading_settings, sanitized, slug

MODEL = "claude-sonnet-4-5"  # the model SPEC 4b runs it with; the stand-in answers any
PREAMBLE = (
    "Codebase and user instructions are shown below. Be sure to adhere to these instructions. "
    "IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them "
    "exactly as written.\n\n"
)
_HEADING = "# claudeMd\n"
# Where the files end: the date section of 2.1.197's reminder, or the end of 2.1.332's block
# (followed by the next reminder or nothing).
_END = re.compile(
    r"\n# currentDate\nToday's date is \d{4}-\d\d-\d\d\.\n"
    r"|\n</system-reminder>(?=\s*(?:\Z|<system-reminder>\n(?:Today's date is|As you answer)))"
)
# A file a Read attached: `Contents of <path>:` in a reminder of its own (an AGENTS.md
# through the agents-md plugin's hook, 2.1.332, with the hook's words first).
_ATTACHED = re.compile(
    r"<system-reminder>\n(?:tool\.call hook additional context: )?Contents of (?P<path>[^\n]+?):\n\n"
)
_NEXT_REMINDER = "\n\n<system-reminder>\n"
# The keys of `~/.claude.json` a project entry keeps in the mirror: the approval of external
# imports, nothing of the account.
_APPROVAL = "hasClaudeMdExternalIncludes"
ACCOUNT_FILE = ".claude.json"
SETTINGS_FILES = ("settings.json", "settings.local.json")
# MCP servers of the project (`.mcp.json`): never in the mirror.
MCP_FILE = ".mcp.json"
# The program's own switches, a second wall behind the mirror: flag settings (which win over
# every settings file) turn every hook off and every helper that runs a command into
# nothing, and only the MCP servers of `--mcp-config` (none) start. Observed on 2.1.197 and
# 2.1.332: with them, hooks of the project's settings, `apiKeyHelper` and `.mcp.json`
# servers enabled by `enableAllProjectMcpServers` run nothing (tests/verify/test_hostile.py).
_WALL_SETTINGS = {
    "disableAllHooks": True,
    "apiKeyHelper": "",
    "awsAuthRefresh": "",
    "awsCredentialExport": "",
    "otelHeadersHelper": "",
}
_WALL_ARGV = (
    "--settings", json.dumps(_WALL_SETTINGS, separators=(",", ":")),
    "--strict-mcp-config", "--mcp-config", '{"mcpServers":{}}',
)  # fmt: skip


class ClaudeCodeHeadless(Headless):
    binary = "claude"
    format = "claude-code"
    kept = ("messages",)

    def __init__(self, descriptions: Iterable[str]) -> None:
        """`descriptions`: the words of each type's header (`Contents of <path> (<words>):`)."""
        self._entry = re.compile(
            r"\n\nContents of (?P<path>[^\n]+?) \((?:"
            + "|".join(re.escape(d) for d in descriptions)
            + r")\):\n\n"
        )

    def launch(
        self, base_url: str, home: Callable[[str], bytes | None], cwd: Callable[[str], bytes | None]
    ) -> Launch:
        return Launch(
            ("-p", "hello", "--model", MODEL, *_WALL_ARGV),
            {
                "ANTHROPIC_BASE_URL": base_url,
                "ANTHROPIC_API_KEY": "sk-ant-ctxasm-verify-not-a-key",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
            },
        )

    def is_turn(self, path: str, body: Body) -> bool:
        tools = body.get("tools")
        return (
            path.split("?")[0] == "/v1/messages"
            and isinstance(tools, list)
            and any(isinstance(t, dict) and t.get("name") == "Read" for t in tools)
        )

    def answer(self, path: str, body: Body, read: str | None) -> Reply:
        route = path.split("?")[0]
        if route == "/v1/messages/count_tokens":
            return json_reply({"input_tokens": 1})
        if route != "/v1/messages":
            return json_reply({"type": "error", "error": {"type": "not_found_error"}}, 404)
        calls = read is not None and self.is_turn(path, body)
        # Ids unique in the conversation: the client merges replies of one message id, and
        # ignores a call it has answered.
        turn = len(_messages(body))
        block = (
            _read_call(read, turn) if calls and read is not None else {"type": "text", "text": "ok"}
        )
        return _reply(body, block, turn)

    def delegating(self, agent: str, before: Sequence[str] = ()) -> Headless:
        return _Delegating(self, agent, before)

    def start_text(self, body: Body) -> str:
        first = _messages(body)[:1]
        blocks = texts(first[0].get("content")) if first else []
        return next((text for text in blocks if PREAMBLE in text), "")

    def read_text(self, body: Body) -> str:
        """The last tool result of the last message, and what follows it there."""
        last = _messages(body)[-1:]
        content = last[0].get("content") if last else None
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        results = [i for i, b in enumerate(blocks) if b.get("type") == "tool_result"]
        out = []
        for block in blocks[results[-1] :] if results else []:
            out += texts(block.get("content") if block.get("type") == "tool_result" else [block])
        return "\n\n".join(out)

    def start_parts(self, text: str) -> tuple[Part, ...]:
        begin = text.find(PREAMBLE)
        if begin == -1:
            return ()
        if text[:begin].endswith(_HEADING):
            begin -= len(_HEADING)
        end = _END.search(text, begin + len(PREAMBLE))
        region = text[begin : end.start() if end else len(text)]
        body_at = region.find(PREAMBLE) + len(PREAMBLE)
        # Each entry starts at the blank line before its header; the first at the preamble's.
        starts = [
            (max(m.start(), body_at), m.group("path"))
            for m in self._entry.finditer(region, body_at - 2)
        ]
        return entries(region, starts, "(the heading of the files)")

    def read_parts(self, text: str) -> tuple[Part, ...]:
        parts = []
        for found in _ATTACHED.finditer(text):
            end = text.find(_NEXT_REMINDER, found.end())
            parts.append(
                Part(found.group("path"), text[found.start() : len(text) if end == -1 else end])
            )
        return tuple(parts)

    def mirrored(self, names: Sequence[str], data: bytes, where: Relocation) -> Mirrored:
        if any(os.path.basename(n) == MCP_FILE for n in names):
            return Mirrored(None, ("MCP servers",))
        if any(n == os.path.join(where.home, ACCOUNT_FILE) for n in names):
            return Mirrored(_approvals(data, where))
        if any(_is_settings(n) for n in names):
            return _settings(data, where)
        return Mirrored(data)

    def moves(self, where: Relocation) -> tuple[tuple[str, str], ...]:
        """The project's auto-memory folder, which the program names after the project's
        path (`~/.claude/projects/<slug>`)."""
        projects = os.path.join(where.home, ".claude", "projects")
        real = sanitized(where.project)
        mirrored = sanitized(where.root + where.project)
        if len(mirrored) > MAX_SLUG >= len(real):
            raise VerifyError(
                f"{where.project}: the copy verify runs Claude Code in would give its auto-memory "
                f"folder a name over {MAX_SLUG} characters, which the program names otherwise; "
                "verify a project at a shorter path"
            )
        return (
            (os.path.join(projects, slug(where.project)), where.inside(projects) + os.sep + slug(where.root + where.project)),
        )  # fmt: skip


def _is_settings(path: str) -> bool:
    """A settings file of a `.claude` directory (the user's, a project's)."""
    head, name = os.path.split(path)
    return name in SETTINGS_FILES and os.path.basename(head) == ".claude"


def _settings(data: bytes, where: Relocation) -> Mirrored:
    """A settings file reduced to the keys that change what loads, each absolute path in
    them moved into the mirror; what was left out, and the variables its `env` sets."""
    settings, _ = json_object(data)
    if settings is None:  # ctxasm takes no key from it: nor may the program
        return Mirrored(b"{}", ("all of it: it is no JSON object",))
    kept = loading_settings(settings)
    excludes = kept.get("claudeMdExcludes")
    if isinstance(excludes, list):
        kept["claudeMdExcludes"] = [
            where.root + p if isinstance(p, str) and p.startswith("/") else p for p in excludes
        ]
    memory = kept.get("autoMemoryDirectory")
    if isinstance(memory, str) and os.path.isabs(memory):
        kept["autoMemoryDirectory"] = where.inside(memory)
    env = settings.get("env")
    environ = {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {}
    left = [k for k in settings if k not in kept]
    withheld = tuple(
        f"env ({', '.join(environ)})" if key == "env" and environ else key for key in left
    )
    return Mirrored(json.dumps(kept, indent=2).encode(), withheld, environ)


def _approvals(data: bytes, where: Relocation) -> bytes | None:
    """`~/.claude.json` reduced to the projects' approvals of external imports, each
    project's path moved into the mirror."""
    config, _ = json_object(data)
    if config is None:
        return None  # neither the client nor ctxasm reads approvals from it
    projects = config.get("projects")
    kept = {
        where.inside(path) if os.path.isabs(path) else path: {
            k: v for k, v in entry.items() if k.startswith(_APPROVAL)
        }
        for path, entry in (projects.items() if isinstance(projects, dict) else ())
        if isinstance(entry, dict) and any(k.startswith(_APPROVAL) for k in entry)
    }
    return json.dumps({"projects": kept}, indent=2).encode()


def _reply(body: Body, block: Mapping[str, Any], turn: int | str) -> Reply:
    """One assistant message holding `block` (streamed when the request asks for it)."""
    stop = "tool_use" if block["type"] == "tool_use" else "end_turn"
    message: dict[str, Any] = {
        "id": f"msg_ctxasm_verify_{turn}", "type": "message", "role": "assistant",
        "model": str(body.get("model") or MODEL), "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
    }  # fmt: skip
    if not body.get("stream"):
        return json_reply({**message, "content": [block], "stop_reason": stop})
    return stream_reply(
        (name, {"type": name, **data})
        for name, data in (
            ("message_start", {"message": message}),
            ("content_block_start", {"index": 0, "content_block": _opening(block)}),
            ("content_block_delta", {"index": 0, "delta": _delta(block)}),
            ("content_block_stop", {"index": 0}),
            ("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 1}}),
            ("message_stop", {}),
        )
    )  # fmt: skip


# The subagent's task, as the main agent hands it over: how its requests are told apart.
TASK = "ctxasm-verify: the subagent's task."
_FORK_STARTED = "Fork started"  # 2.1.332's tool result in the fork's own conversation
_AGENT_CALL = "toolu_ctxasm_verify_agent"


class _Delegating(ClaudeCodeHeadless):
    """Claude Code whose main agent reads `before` (one Read a turn), then calls the Agent
    tool (`subagent_type`: the agent) in the foreground (2.1.332 runs agents in the background
    otherwise; 2.1.197 has no such parameter and ignores it); the turns are the subagent's
    requests, which get the scripted reads; the main agent's next turn ends the run."""

    def __init__(self, parent: ClaudeCodeHeadless, agent: str, before: Sequence[str]) -> None:
        self._entry = parent._entry
        self.agent = agent
        self.before = tuple(before)

    def is_turn(self, path: str, body: Body) -> bool:
        return path.split("?")[0] == "/v1/messages" and self._side(body) == "subagent"

    def answer(self, path: str, body: Body, read: str | None) -> Reply:
        side = self._side(body) if path.split("?")[0] == "/v1/messages" else ""
        messages = _messages(body)
        turn = len(messages)
        if side == "subagent":  # ids of its own: the client merges replies of one id
            mine = f"subagent_{turn}"
            block = _read_call(read, mine) if read is not None else {"type": "text", "text": "ok"}
            return _reply(body, block, mine)
        if side != "main":
            return super().answer(path, body, read)
        if TASK in json.dumps(messages):  # the agent's result is back: the run ends
            return _reply(body, {"type": "text", "text": "ok"}, turn)
        done = sum(b.get("type") == "tool_use" for m in messages for b in _blocks(m))
        if done < len(self.before):
            return _reply(body, _read_call(self.before[done], f"main_{done}"), turn)
        call = {"type": "tool_use", "id": _AGENT_CALL, "name": "Agent", "input": {
            "subagent_type": self.agent, "description": "ctxasm verify", "prompt": TASK,
            "run_in_background": False}}  # fmt: skip
        return _reply(body, call, turn)

    def _side(self, body: Body) -> str:
        """Whose request: the main agent's, the subagent's, or neither (a side request)."""
        tools = body.get("tools")
        if not isinstance(tools, list) or not tools:
            return ""
        messages = _messages(body)
        text = json.dumps(messages)
        if TASK not in text:
            return (
                "main"
                if any(t.get("name") == "Agent" for t in tools if isinstance(t, dict))
                else ""
            )
        results = [
            block
            for message in messages
            for block in _blocks(message)
            if block.get("type") == "tool_result" and block.get("tool_use_id") == _AGENT_CALL
        ]
        if not results:
            return "subagent"  # its own conversation starts with the task
        return "subagent" if _FORK_STARTED in json.dumps(results[0]) else "main"


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _messages(body: Body) -> list[dict[str, Any]]:
    messages = body.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def _read_call(path: str, turn: int | str) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_ctxasm_verify_{turn}", "name": "Read",
            "input": {"file_path": path}}  # fmt: skip


def _opening(block: Mapping[str, Any]) -> dict[str, Any]:
    """A streamed block starts empty; its delta carries the rest."""
    return {**block, "input": {}} if block["type"] == "tool_use" else {**block, "text": ""}


def _delta(block: Mapping[str, Any]) -> dict[str, Any]:
    if block["type"] == "tool_use":
        return {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    return {"type": "text_delta", "text": block["text"]}
