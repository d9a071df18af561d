"""How an agent runs headless against a local stand-in for its provider's API, and where the
request it sends carries the instruction context: what `ctxasm verify` asks a client.

A client that can be checked against its real program answers `Client.headless` with a
`Headless`. Everything in it is a fact of that agent (its program's name, the variables that
point it at a base URL and turn off its other traffic, its provider's wire format, the
places of its request that hold the instruction files); the verify package runs the server,
the process and the comparison, and names no agent.

The context is handed back as `Part`s: each file's entry (its header and content, labelled
with the path the header names) and the text around them. Both sides of a comparison, the
captured request and ctxasm's rendering of the client's own format, are split by the same
function, so agreeing bytes always split alike.
"""

from __future__ import annotations

import abc
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

# A request body as JSON: the stand-in parses each one before a client reads it.
Body = Mapping[str, Any]
_VERSION = re.compile(r"(\d+\.\d+\.\d+)")


class Reply(NamedTuple):
    """What the stand-in provider answers to one request."""

    status: int
    content_type: str
    body: bytes


class Launch(NamedTuple):
    """How to start the agent: its arguments after the program, the environment variables
    it needs besides `PATH` and `HOME`, and files to write into the temporary home (relative
    path -> bytes; they replace a copied file of that name)."""

    argv: tuple[str, ...]
    environ: Mapping[str, str]
    files: Mapping[str, bytes] = {}


class Relocation(NamedTuple):
    """Where `ctxasm verify` runs the program: in a mirror, every path P of the machine at
    `root` + P (a new, private directory), the user's home `home` included; `project` is the
    root of the project on the real machine. `moves`: places named after a path (a client's
    per-project folder, `Headless.moves`), each (real prefix, prefix in the mirror)."""

    root: str
    home: str
    project: str
    moves: tuple[tuple[str, str], ...] = ()

    def inside(self, path: str) -> str:
        """Where the real `path` (absolute) is in the mirror."""
        full = os.path.abspath(path)
        for real, mirrored in self.moves:
            if full == real or full.startswith(real.rstrip(os.sep) + os.sep):
                return mirrored + full[len(real) :]
        return self.root + full

    def outside(self, text: str) -> str:
        """`text` with every path of the mirror written as the real path it stands for."""
        for real, mirrored in sorted(self.moves, key=lambda m: -len(m[1])):
            text = text.replace(mirrored, real)
        return text.replace(self.root + os.sep, os.sep)


class Mirrored(NamedTuple):
    """What the mirror holds of one file (`data`; None: nothing, the file is left out), what
    of it was kept back (each in a few words: `hooks`, `env (ANTHROPIC_BASE_URL)`), and the
    environment variables it sets for the program (`env` of a settings file), which verify
    never passes on and refuses to run without when they change what loads."""

    data: bytes | None
    withheld: tuple[str, ...] = ()
    environ: Mapping[str, str] = {}


class Part(NamedTuple):
    """One piece of the instruction context: a file's entry (`file`: its header and content;
    `label` is the path its header names) or the text around the entries (`label` says which,
    in parentheses)."""

    label: str
    text: str
    file: bool = True


class Headless(abc.ABC):
    """An agent's program run headless: how to start it, how to answer it, and where its
    requests carry the instruction context."""

    binary: str  # the program's name on PATH
    format: str  # the client's output format that holds the same text as its request
    kept: tuple[str, ...]  # the request's keys that carry the conversation (what is recorded)
    # Why a scripted read cannot be checked, or None when it can (`answer` gets `read`).
    no_reads: str | None = None

    def version(self, output: str) -> str | None:
        """The version in what `<binary> --version` printed (its first `N.N.N`); None when
        there is none."""
        found = _VERSION.search(output)
        return found.group(1) if found else None

    @abc.abstractmethod
    def launch(
        self, base_url: str, home: Callable[[str], bytes | None], cwd: Callable[[str], bytes | None]
    ) -> Launch:
        """How to start the agent against the stand-in at `base_url`; `home` reads a file of
        the home it runs with, `cwd` one of the directory it starts in (a path relative to
        it; None: there is none)."""

    @abc.abstractmethod
    def is_turn(self, path: str, body: Body) -> bool:
        """Whether a request is a turn of the conversation (not a side request, such as a
        title or a token count): the first holds the start context, each later one the
        result of a scripted read."""

    @abc.abstractmethod
    def answer(self, path: str, body: Body, read: str | None) -> Reply:
        """The stand-in's answer: for a turn, a call of the agent's read tool on `read` when
        given, else a short text that ends the turn."""

    @abc.abstractmethod
    def start_text(self, body: Body) -> str:
        """The text of the first turn that holds the instruction context loaded at start."""

    @abc.abstractmethod
    def read_text(self, body: Body) -> str:
        """The text of a later turn that holds what the scripted read attached."""

    @abc.abstractmethod
    def start_parts(self, text: str) -> tuple[Part, ...]:
        """The instruction context loaded at start, in `text` (a request's `start_text`, or
        ctxasm's rendering of `format` without touches)."""

    @abc.abstractmethod
    def read_parts(self, text: str) -> tuple[Part, ...]:
        """What one read attached, in `text` (a request's `read_text`, or what a touch
        appended to ctxasm's rendering)."""

    def delegating(self, agent: str, before: Sequence[str] = ()) -> Headless | None:
        """The same agent, its main agent made to read each of `before`, then start one
        subagent of type `agent`: then the turns are the subagent's (its start, and after each
        of its scripted reads). None: this agent starts no subagents."""
        return None

    def mirrored(self, names: Sequence[str], data: bytes, where: Relocation) -> Mirrored:
        """What the mirror holds of a file ctxasm's prediction read, known by `names` (its
        path as read, then the path it really is at): by default a copy. A client keeps back
        everything that could make its program run a command, send a request or reach a
        credential (hooks, helpers, MCP servers, `env`, telemetry, plugins: its settings
        reduced to the keys that change what it loads), moving any absolute path it keeps
        with `where`."""
        return Mirrored(data)

    def moves(self, where: Relocation) -> tuple[tuple[str, str], ...]:
        """The places the program names after the project's path (`Relocation.moves`); a
        `VerifyError` when the mirror cannot give them a name the program would find."""
        return ()


# --- shared by the clients' wire formats --------------------------------------------------


def sse(events: Iterable[tuple[str | None, Mapping[str, Any]]]) -> bytes:
    """A server-sent-events stream: each `(event name or None, data)` as one event."""
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n")
    return "".join(out).encode()


def json_reply(data: Mapping[str, Any], status: int = 200) -> Reply:
    return Reply(status, "application/json", json.dumps(data).encode())


def stream_reply(events: Iterable[tuple[str | None, Mapping[str, Any]]]) -> Reply:
    return Reply(200, "text/event-stream", sse(events))


def texts(blocks: object) -> list[str]:
    """The text of each text block of a message's content (a string is one block)."""
    if isinstance(blocks, str):
        return [blocks]
    if not isinstance(blocks, list):
        return []
    return [
        str(b["text"]) for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
    ]


def between(text: str, opening: str, closing: str) -> list[tuple[int, int]]:
    """The (start, end) of each stretch of `text` from `opening` through the next `closing`
    (or the end of `text`), in order."""
    spans = []
    start = text.find(opening)
    while start != -1:
        end = text.find(closing, start + len(opening))
        end = len(text) if end == -1 else end + len(closing)
        spans.append((start, end))
        start = text.find(opening, end)
    return spans


def entries(text: str, starts: Sequence[tuple[int, str]], frame: str) -> tuple[Part, ...]:
    """`text` cut at each `(offset, label)` of `starts` (ascending) into file parts; the
    text before the first, when there is any, is the part labelled `frame`."""
    parts = []
    first = starts[0][0] if starts else len(text)
    if first:
        parts.append(Part(frame, text[:first], file=False))
    bounds = [offset for offset, _ in starts[1:]] + [len(text)]
    for (offset, label), end in zip(starts, bounds, strict=True):
        parts.append(Part(label, text[offset:end]))
    return tuple(parts)
