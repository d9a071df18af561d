"""Reading both message shapes, the one place that knows them.

* Anthropic: an assistant message holds `{"type": "tool_use", "id", "name", "input"}` blocks;
  the next user message holds `{"type": "tool_result", "tool_use_id", "content", "is_error"}`
  blocks (`content` a string or a list of blocks).
* OpenAI: an assistant message holds `tool_calls: [{"id", "type": "function", "function":
  {"name", "arguments"}}]`; each result is its own `{"role": "tool", "tool_call_id",
  "content"}` message.

A message of any other shape (not a mapping, an unknown role, content that is neither a
string, a list of blocks nor null, a tool block without its id) is *unknown*: every function
of the package leaves it as it is, the same object, and reports it. Nothing here mutates a
message: rewrites build new dicts and share the messages they do not change.

A list that cannot be one (not a list; a message nested deeper than `MAX_DEPTH`, or holding
itself; more than `MAX_VALUES` values, counted as JSON would write them) is bad input:
`listed` refuses it with `ConversationError`, and every entry point reads its list through
it (`scan`) before anything recursive (JSON, a summariser's transcript) touches a message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, NamedTuple

from ..display import shown
from ..errors import ConversationError

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
# Leading messages of these roles are instructions, never summarised or collapsed.
HEAD_ROLES = frozenset({"system", "developer"})
# Nesting of one message: real ones are under ten deep (content, block, tool_result content,
# block, source), a model's tool input a few dozen at most. 100 keeps every JSON encoder
# call far below Python's recursion limit, whatever the caller's stack.
MAX_DEPTH = 100
# Values of a list, as JSON writes them (a value shared by several places counts at each):
# a list over a million-token window holds well under this.
MAX_VALUES = 4_000_000
_NESTS = (list, tuple, set, frozenset)  # containers JSON or repr() walk into
_LEAVES = frozenset({str, int, float, bool, type(None)})  # exactly these types: nothing inside


class Shape(Enum):
    ANTHROPIC = "anthropic"  # tool_use / tool_result blocks
    OPENAI = "openai"  # tool_calls / role "tool"


class Call(NamedTuple):
    """A tool call: the message it is in, its id, the tool's name and its input (a mapping
    for Anthropic; OpenAI's `arguments` parsed when they are a JSON object, else {})."""

    at: int
    id: str
    name: str
    input: Mapping[str, Any]


class Result(NamedTuple):
    """A tool result: its message, its block in that message (None: an OpenAI tool message),
    the call's id, its text (blocks joined) and whether the tool reported an error."""

    at: int
    block: int | None
    id: str
    text: str
    is_error: bool
    shape: Shape


class Unknown(NamedTuple):
    """A message of no known shape, left untouched: where it is and why."""

    at: int
    reason: str

    def __str__(self) -> str:
        return f"message {self.at} left as it is: {self.reason}"


class Scan(NamedTuple):
    """Every tool call and result of a message list, in order, and the unknown messages."""

    calls: Mapping[str, Call]
    results: tuple[Result, ...]
    unknown: tuple[Unknown, ...]

    def tool_name(self, result: Result) -> str | None:
        call = self.calls.get(result.id)
        return call.name if call is not None else None

    @property
    def unknown_indices(self) -> frozenset[int]:
        return frozenset(u.at for u in self.unknown)


def block_text(content: Any) -> str:
    """The text of a content value: a string as it is; a list of blocks joined by newlines,
    each text block by its text and any other block (an image) by a `[type]` mark."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        kind = block.get("type")
        parts.append(block.get("text", "") if kind == "text" else f"[{kind}]")
    return "\n".join(str(p) for p in parts)


def _blocks_ok(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"content is a {type(content).__name__}, not a string or a list of blocks"
    for block in content:
        if not (type(block) is dict or isinstance(block, Mapping)):
            return "a content block without a type"
        if not isinstance(block.get("type"), str):
            return "a content block without a type"
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            return "a text block without text"
    return None


def _problem(message: Any) -> str | None:
    """Why `message` has no known shape, or None."""
    if not (type(message) is dict or isinstance(message, Mapping)):
        return f"a {type(message).__name__}, not a mapping"
    role = message.get("role")
    if not isinstance(role, str):
        return f"role is a {type(role).__name__}, not a string"
    if role not in ROLES:
        return f"role {shown(role, 40)}"
    content = message.get("content")
    problem = _blocks_ok(content)
    if problem:
        return problem
    for block in content if isinstance(content, list) else ():
        if block["type"] == "tool_use" and not (
            isinstance(block.get("id"), str) and isinstance(block.get("name"), str)
        ):
            return "a tool_use block without its id or name"
        if block["type"] == "tool_result":
            if not isinstance(block.get("tool_use_id"), str):
                return "a tool_result block without its tool_use_id"
            inner = _blocks_ok(block.get("content"))
            if inner:
                return f"a tool_result block: {inner}"
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        return "a tool message without its tool_call_id"
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            return "tool_calls is not a list"
        for call in calls:
            function = call.get("function") if isinstance(call, Mapping) else None
            if not (
                isinstance(call, Mapping)
                and isinstance(call.get("id"), str)
                and isinstance(function, Mapping)
                and isinstance(function.get("name"), str)
            ):
                return "a tool call without its id or function name"
    return None


def _arguments(raw: Any) -> Mapping[str, Any]:
    if isinstance(raw, Mapping):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
        return {}
    return value if isinstance(value, Mapping) else {}


def listed(messages: object) -> Sequence[Any]:
    """`messages` if it can be a message list; else `ConversationError` naming the message.
    Walked a level at a time, never recursively, and never past the bounds."""
    sequence = as_sequence(messages)
    if isinstance(sequence, Checked):
        scan(sequence)  # the same bounds, and the facts remembered for the levels after
        return sequence
    left = MAX_VALUES
    for index, message in enumerate(sequence):
        left -= _values(message, index, left)
    return sequence


def as_sequence(messages: object) -> Sequence[Any]:
    """`messages` if it is a sequence that can hold messages (not a string), else
    `ConversationError`."""
    if isinstance(messages, str | bytes | bytearray) or not isinstance(messages, Sequence):
        raise ConversationError(
            f"the messages are a {type(messages).__name__}, not a list of messages"
        )
    return messages


class _Facts(NamedTuple):
    """What `scan` learns of one message at one place in a list (`Checked` keeps it)."""

    message: Any  # held, so that its id is not reused while the memo lives
    values: int
    problem: str | None
    at: int  # the index `calls` and `results` name
    calls: tuple[Call, ...] = ()
    results: tuple[Result, ...] = ()

    def placed(self, index: int) -> _Facts:
        """These facts for the message at `index` (a level dropped messages before it)."""
        if index == self.at:
            return self
        calls = tuple(c._replace(at=index) for c in self.calls)
        results = tuple(r._replace(at=index) for r in self.results)
        return self._replace(at=index, calls=calls, results=results)


class Checked(list[Any]):
    """A message list whose messages' facts are remembered by identity (`memo`), so that the
    levels of one `Conversation.prepare` read each message once, not once a level: every
    level shares the messages it does not change. Only for one call: a caller may change a
    message between two."""

    def __init__(self, messages: Sequence[Any], memo: dict[int, _Facts]) -> None:
        super().__init__(messages)
        self.memo = memo


def _facts(message: Any, values: int, index: int) -> _Facts:
    problem = _problem(message)
    if problem:
        return _Facts(message, values, problem, index)
    content = message.get("content")
    calls: list[Call] = []
    results: list[Result] = []
    for call in message.get("tool_calls") or ():
        function = call["function"]
        calls.append(
            Call(index, call["id"], function["name"], _arguments(function.get("arguments")))
        )
    if message["role"] == "tool":
        text = block_text(content)
        results.append(Result(index, None, message["tool_call_id"], text, False, Shape.OPENAI))
        return _Facts(message, values, None, index, tuple(calls), tuple(results))
    for number, block in enumerate(content if isinstance(content, list) else ()):
        if block["type"] == "tool_use":
            given = block.get("input")
            calls.append(
                Call(index, block["id"], block["name"], given if isinstance(given, Mapping) else {})
            )
        elif block["type"] == "tool_result":
            text = block_text(block.get("content"))
            error = block.get("is_error") is True
            results.append(
                Result(index, number, block["tool_use_id"], text, error, Shape.ANTHROPIC)
            )
    return _Facts(message, values, None, index, tuple(calls), tuple(results))


def _values(message: Any, index: int, budget: int) -> int:
    """How many values `message` holds (itself included), at most `budget`."""
    level, depth, count = [message], 0, 0
    while level:
        depth += 1
        count += len(level)
        if depth > MAX_DEPTH:  # a list that holds itself never ends: it lands here too
            raise ConversationError(
                f"message {index} is nested more than {MAX_DEPTH} levels deep, or holds "
                "itself: it cannot be saved or summarised; flatten it or leave it out"
            )
        below: list[Any] = []
        for value in level:
            kind = type(value)
            if kind in _LEAVES:  # the common values first: an ABC check costs ten times more
                continue
            if kind is dict or kind is list:
                below += value.values() if kind is dict else value
            elif isinstance(value, str):
                continue
            elif isinstance(value, Mapping):
                below += value.values()
            elif isinstance(value, _NESTS):
                below += value
            else:
                continue
            if count + len(below) > budget:
                raise ConversationError(
                    f"the messages hold more than {MAX_VALUES:,} values as JSON (message "
                    f"{index}, with what it shares): they cannot be saved; leave some out"
                )
        level = below
    return count


def scan(messages: Sequence[Any]) -> Scan:
    """One pass over `messages`: calls by id, results in order, unknown messages. A list
    that cannot be one (`listed`) raises `ConversationError`. A `Checked` list reads each
    message's facts from its memo (and adds those it lacks)."""
    as_sequence(messages)
    memo: dict[int, _Facts] = messages.memo if isinstance(messages, Checked) else {}
    get = memo.get
    left = MAX_VALUES
    calls: dict[str, Call] = {}
    results: list[Result] = []
    unknown: list[Unknown] = []
    for index, message in enumerate(messages):
        facts = get(id(message))
        if facts is None or facts.message is not message:
            facts = memo[id(message)] = _facts(message, _values(message, index, left), index)
        elif facts.values > left:
            _values(message, index, left)  # raises, with the message's index
        left -= facts.values
        if facts.problem:
            unknown.append(Unknown(index, facts.problem))
            continue
        if facts.at != index:
            facts = memo[id(message)] = facts.placed(index)
        for call in facts.calls:
            calls[call.id] = call
        results += facts.results
    return Scan(calls, tuple(results), tuple(unknown))


def with_results(
    messages: Sequence[Any], replaced: Mapping[tuple[int, int | None], Any]
) -> list[Any]:
    """A new list where each result at (message, block) has the new content; the messages
    nothing was replaced in are shared, the others are new dicts (the input is not mutated)."""
    out = list(messages)
    by_message: dict[int, dict[int | None, Any]] = {}
    for (index, block), content in replaced.items():
        by_message.setdefault(index, {})[block] = content
    for index, blocks in by_message.items():
        message = messages[index]
        if None in blocks:  # an OpenAI tool message
            out[index] = {**message, "content": blocks[None]}
            continue
        content = list(message["content"])
        for number, new in blocks.items():
            assert number is not None
            content[number] = {**content[number], "content": new}
        out[index] = {**message, "content": content}
    return out


def safe_cuts(messages: Sequence[Any], found: Scan) -> list[bool]:
    """`cut[i]`: splitting the list before message `i` keeps every tool call with all of its
    results (a call whose results are missing reaches to the end)."""
    size = len(messages)
    last_result: dict[str, int] = {}
    for result in found.results:
        last_result[result.id] = max(result.at, last_result.get(result.id, -1))
    # +1 where an unsafe run (call, last result] starts, -1 after it ends.
    delta = [0] * (size + 2)
    for call in found.calls.values():
        end = last_result.get(call.id, size)
        if end > call.at:
            delta[call.at + 1] += 1
            delta[end + 1] -= 1
    safe, depth = [], 0
    for i in range(size + 1):
        depth += delta[i]
        safe.append(depth == 0)
    return safe


def head_length(messages: Sequence[Any]) -> int:
    """How many leading messages are system/developer instructions (kept in place)."""
    count = 0
    for message in messages:
        role = message.get("role") if isinstance(message, Mapping) else None
        if not (isinstance(role, str) and role in HEAD_ROLES):
            break
        count += 1
    return count


def transcript(messages: Sequence[Any]) -> str:
    """The conversation as text for a summariser: `[role] content` a line each, as the first
    article's `compress` builds it (content that is not a string as JSON), an OpenAI
    message's tool calls and a tool message's call id included."""
    lines = []
    for message in listed(messages):
        if not isinstance(message, Mapping):
            lines.append(f"[unknown] {dumps(message)}")
            continue
        content = message.get("content")
        text = content if isinstance(content, str) else dumps(_without_media(content))
        if message.get("tool_calls"):
            text += f" tool_calls: {dumps(message['tool_calls'])}"
        if message.get("role") == "tool":
            text = f"({_plain(message.get('tool_call_id'))}) {text}"
        lines.append(f"[{_plain(message.get('role'))}] {text}")
    return "\n".join(lines)


def _plain(value: Any) -> str:
    """A role or an id in the transcript: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else dumps(value)


def _without_media(content: Any) -> Any:
    """Content with the data of image and document blocks (base64, at any of the two levels
    a block list has) left out: a summariser reads text, and a screenshot is megabytes."""
    if not isinstance(content, list):
        return content
    out = []
    for block in content:
        if isinstance(block, Mapping) and "source" in block:
            block = {**block, "source": "[omitted]"}
        if isinstance(block, Mapping) and isinstance(block.get("content"), list):
            inner = [
                {**b, "source": "[omitted]"} if isinstance(b, Mapping) and "source" in b else b
                for b in block["content"]
            ]
            block = {**block, "content": inner}
        out.append(block)
    return out


def dumps(
    value: Any,
    *,
    strict: bool = False,
    ascii: bool = False,
    sort_keys: bool = False,
    indent: int | None = None,
) -> str:
    """`value` as JSON (what is not JSON as its `repr`; `strict`: refused). Call it on what
    `listed` let through: what JSON still cannot write (a key that is not a string, a number
    of thousands of digits, a `repr` that fails) is `ConversationError`."""
    try:
        default = None if strict else repr
        return json.dumps(
            value, ensure_ascii=ascii, default=default, sort_keys=sort_keys, indent=indent
        )
    except (TypeError, ValueError, RecursionError) as err:
        raise ConversationError(f"the messages cannot be saved as JSON ({err})") from None
