"""Level 1: large tool outputs persisted to disk (second article, level 1; first article, 5.2).

Claude Code's numbers, as both articles give them:

* a result over 50,000 characters (`DEFAULT_MAX_RESULT_SIZE_CHARS`) is written to
  `store_dir/tool-results/<tool_use_id>.txt` (`result_path`; never over another output:
  `store.save_new`) and replaced by the `<persisted-output>` block of
  the first article's `buildLargeToolResultMessage`: the size, the path, and a preview of the
  first 2,000 bytes (`PREVIEW_SIZE_BYTES`) cut on a character boundary. Sizes print as
  `formatFileSize` prints them ("45.2KB", "2KB": the articles' examples); the size is the
  saved file's, in UTF-8 bytes;
* shell output over 30,000 characters keeps its head, then `\\n\\n... [N lines truncated] ...`
  (N: the lines of the cut part, a partial line counting as one);
* an error keeps its head and its tail, 5,000 characters each ("the key to an error is often at
  its end"); the articles give no text for the mark between them, so it has the shell mark's
  form, counted in characters: `\\n\\n... [N characters truncated] ...\\n\\n`;
* when one message's tool results total more than 200,000 characters
  (`MAX_TOOL_RESULTS_PER_MESSAGE_CHARS`), the largest are persisted first until it fits.

Every step is idempotent: a block, a cut shell output or a cut error is never cut again, so
the pipeline can run this over the whole list every turn. A write that fails (a full disk, a
read-only store) keeps the result whole and says why: nothing is dropped that was not saved.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Collection, Sequence
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

from ..display import format_file_size, shown
from ..errors import ConversationError
from .messages import Result, Scan, Unknown, scan, with_results
from .store import Below, save_new

MAX_RESULT_CHARS = 50_000
PREVIEW_BYTES = 2_000
SHELL_MAX_CHARS = 30_000
ERROR_KEEP_CHARS = 5_000
MESSAGE_BUDGET_CHARS = 200_000
# Shell tools whose output is cut head-only: Claude Code's (`Bash`, `PowerShell`) and the
# names agents commonly give theirs.
SHELL_TOOLS = frozenset({"Bash", "PowerShell", "bash", "shell", "run_shell", "execute_command"})

BLOCK = """<persisted-output>
Output too large ({size}). Full output saved to: {path}

Preview (first {preview_size}):
{preview}
...
</persisted-output>"""
_BLOCK = re.compile(r"<persisted-output>\n.*\n</persisted-output>\Z", re.S)
_SHELL_CUT = re.compile(rf".{{{SHELL_MAX_CHARS}}}\n\n\.\.\. \[\d+ lines truncated\] \.\.\.\Z", re.S)
_ERROR_CUT = re.compile(
    rf".{{{ERROR_KEEP_CHARS}}}\n\n\.\.\. \[\d+ characters truncated\] \.\.\.\n\n"
    rf".{{{ERROR_KEEP_CHARS}}}\Z",
    re.S,
)
_BLOCK_MAX = 8_192  # a block: ~150 characters, the path, the preview (at most 2,000)
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


class Kind(Enum):
    OUTPUT = "output"
    SHELL = "shell"
    ERROR = "error"


class Action(Enum):
    KEPT = "kept"
    PERSISTED = "persisted"
    SHELL_CUT = "shell output truncated"
    ERROR_CUT = "error truncated"
    FAILED = "not persisted"


class Persisted(NamedTuple):
    """What became of one result: its new text, the file it was saved to, its lengths."""

    action: Action
    content: str
    tool_use_id: str
    before: int
    path: Path | None = None
    error: str = ""

    def __str__(self) -> str:
        after = len(self.content)
        if self.action is Action.PERSISTED:
            return f"Tool result saved to {self.path}: {self.before} → {after} chars"
        if self.action is Action.FAILED:
            return f"Tool result {shown(self.tool_use_id, 80)} kept whole: {self.error}"
        return f"{self.action.value.capitalize()}: {self.before} → {after} chars"


class PersistResult(NamedTuple):
    messages: list[Any]
    actions: tuple[Persisted, ...]  # only results that changed or failed to be saved
    unknown: tuple[Unknown, ...]


def is_persisted(text: str) -> bool:
    """Whether `text` is a `<persisted-output>` block: the path in it is how the model gets the
    whole output back, so no level cuts it (`prune` leaves it whole)."""
    return len(text) <= _BLOCK_MAX and _BLOCK.match(text) is not None


def _stem(tool_use_id: str) -> str:
    """The file name of an id, less `.txt`: the id itself when it is 1-128 of `[A-Za-z0-9_-]`;
    any other id (a `/`, `..`, a NUL, a very long id) its first 48 characters made safe, `~`,
    and 32 hex digits of its SHA-256. `~` is in no id kept as it is: the two never meet."""
    if _SAFE_ID.fullmatch(tool_use_id):
        return tool_use_id
    digest = hashlib.sha256(tool_use_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{re.sub(r'[^A-Za-z0-9_-]', '_', tool_use_id[:48])}~{digest[:32]}"


def result_path(store_dir: str | os.PathLike[str], tool_use_id: str) -> Path:
    """`store_dir/tool-results/<name>.txt`, the first place an id's output is saved: always
    directly inside `tool-results/`, and distinct ids never share a name."""
    return Path(os.path.abspath(store_dir)) / "tool-results" / f"{_stem(tool_use_id)}.txt"


def _names(tool_use_id: str, data: bytes) -> tuple[str, str]:
    """Where an output may be saved: its id's name, else (that name holds another output: a
    rerun that numbers its calls from zero again) the name with `.` and 16 hex digits of
    the output's SHA-256. `.` is in no first name, so no id's first name is another's second."""
    stem = _stem(tool_use_id)
    return f"{stem}.txt", f"{stem}.{hashlib.sha256(data).hexdigest()[:16]}.txt"


def preview(text: str, limit: int = PREVIEW_BYTES) -> str:
    """The first `limit` UTF-8 bytes of `text`, cut back to the start of a character."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    cut = limit
    while cut > 0 and data[cut] & 0xC0 == 0x80:  # a continuation byte: inside a character
        cut -= 1
    return data[:cut].decode("utf-8", "surrogatepass")


def persist_text(text: str, tool_use_id: str, store_dir: str | os.PathLike[str]) -> Persisted:
    """Save `text` and return the `<persisted-output>` block that replaces it."""
    data = text.encode("utf-8", "surrogatepass")
    place = Below(Path(os.path.abspath(store_dir)), ("tool-results",))
    try:
        path = save_new(place, _names(tool_use_id, data), data)
    except OSError as err:
        first = result_path(store_dir, tool_use_id)
        reason = f"cannot write {shown(str(first))} ({err.strerror or err})"
        return Persisted(Action.FAILED, text, tool_use_id, len(text), None, reason)
    block = BLOCK.format(
        size=format_file_size(len(data)),
        path=path,
        preview_size=format_file_size(PREVIEW_BYTES),
        preview=preview(text),
    )
    return Persisted(Action.PERSISTED, block, tool_use_id, len(text), path)


def shell_cut(text: str, limit: int = SHELL_MAX_CHARS) -> str:
    """Head only: the first `limit` characters, then how many lines were cut."""
    lines = text[limit:].count("\n") + 1
    return f"{text[:limit]}\n\n... [{lines} lines truncated] ..."


def error_cut(text: str, keep: int = ERROR_KEEP_CHARS) -> str:
    """Head and tail, `keep` characters each."""
    return (
        f"{text[:keep]}\n\n... [{len(text) - 2 * keep} characters truncated] ...\n\n{text[-keep:]}"
    )


def persist_tool_result(
    text: str,
    *,
    tool_use_id: str,
    store_dir: str | os.PathLike[str],
    kind: Kind = Kind.OUTPUT,
) -> Persisted:
    """One result as Claude Code hands it to the model: an error cut head and tail, shell
    output cut head-only, any other output over 50,000 characters saved and replaced."""
    if not (isinstance(text, str) and isinstance(tool_use_id, str)):
        raise ConversationError("persist_tool_result takes the result and its id as strings")
    if is_persisted(text):
        return Persisted(Action.KEPT, text, tool_use_id, len(text))
    if kind is Kind.ERROR and len(text) > 2 * ERROR_KEEP_CHARS and not _ERROR_CUT.match(text):
        return Persisted(Action.ERROR_CUT, error_cut(text), tool_use_id, len(text))
    if kind is Kind.SHELL and len(text) > SHELL_MAX_CHARS and not _SHELL_CUT.match(text):
        return Persisted(Action.SHELL_CUT, shell_cut(text), tool_use_id, len(text))
    if kind is Kind.OUTPUT and len(text) > MAX_RESULT_CHARS:
        return persist_text(text, tool_use_id, store_dir)
    return Persisted(Action.KEPT, text, tool_use_id, len(text))


def _kind(result: Result, found: Scan, shell_tools: Collection[str]) -> Kind:
    if result.is_error:
        return Kind.ERROR
    return Kind.SHELL if found.tool_name(result) in shell_tools else Kind.OUTPUT


def _group(result: Result, found: Scan) -> int:
    """The message a result belongs to: its own (Anthropic), or its call's (OpenAI: the tool
    messages answering one assistant message are that message's results)."""
    if result.block is not None:
        return result.at
    call = found.calls.get(result.id)
    return call.at if call is not None else result.at


def persist_results(
    messages: Sequence[Any],
    *,
    store_dir: str | os.PathLike[str],
    shell_tools: Collection[str] = SHELL_TOOLS,
    message_budget: int = MESSAGE_BUDGET_CHARS,
) -> PersistResult:
    """Every result of `messages` through `persist_tool_result`, then each message's results
    within `message_budget` characters, the largest saved first."""
    found = scan(messages)
    texts: dict[Result, Persisted] = {}
    for result in found.results:
        kind = _kind(result, found, shell_tools)
        texts[result] = persist_tool_result(
            result.text, tool_use_id=result.id, store_dir=store_dir, kind=kind
        )
    groups: dict[int, list[Result]] = {}
    for result in found.results:
        groups.setdefault(_group(result, found), []).append(result)
    for members in groups.values():
        total = sum(len(texts[r].content) for r in members)
        by_size = sorted(members, key=lambda r: (-len(texts[r].content), r.at, r.block or 0))
        for result in by_size:
            if total <= message_budget:
                break
            if texts[result].action in (Action.PERSISTED, Action.FAILED):
                continue
            saved = persist_text(texts[result].content, result.id, store_dir)
            if saved.action is Action.PERSISTED:
                total += len(saved.content) - len(texts[result].content)
                texts[result] = saved._replace(before=len(result.text))
            else:
                texts[result] = saved
    replaced = {
        (r.at, r.block): p.content
        for r, p in texts.items()
        if p.action not in (Action.KEPT, Action.FAILED)
    }
    actions = tuple(p for p in texts.values() if p.action is not Action.KEPT)
    return PersistResult(with_results(messages, replaced), actions, found.unknown)
