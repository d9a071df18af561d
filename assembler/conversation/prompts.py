"""The summarising prompts, shipped in `templates/conversation/` (found through
`resources.data_dir`), the request sent with them, and reading the reply.

* `compress`: the first article's `COMPRESS_PROMPT` (section 3.4), sent as it sends it: the
  prompt as the system message, the conversation as text in one user message. Its reply is
  the summary as plain text.
* `nine-part`: Claude Code's full-compaction prompt as the second article describes it (level
  5): the TEXT-ONLY warning at its head and, repeated, at its tail (the article quotes the
  warning once and says it stands at both ends); an `<analysis>` draft, then a `<summary>` in
  nine sections (request and intent; key concepts; files and code; errors and fixes; problem
  solving; all user messages; pending tasks; current work; next step with a verbatim quote).
  Its warning speaks of "the conversation above", so the conversation is sent first and the
  prompt after it, in two user messages. Its reply must hold a `<summary>`.

The request is in OpenAI chat form; for the Anthropic SDK, `split_system` gives the `system`
parameter and the messages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from .. import resources
from ..errors import ConversationError
from .messages import transcript


class Prompt(NamedTuple):
    name: str
    text: str
    first: bool  # the prompt before the conversation (as the system message), else after it
    tagged: bool  # the reply must hold a <summary> block


_PROMPTS = {"compress": (True, False), "nine-part": (False, True)}
_TAG = re.compile(r"<(/?)(summary|analysis)>")


def prompt(name: str = "nine-part") -> Prompt:
    """A shipped prompt by name: `nine-part` (Claude Code's) or `compress` (the first
    article's)."""
    if name not in _PROMPTS:
        raise ConversationError(
            f"no summarising prompt named {name!r}: use one of {sorted(_PROMPTS)}"
        )
    path = resources.data_dir("templates") / "conversation" / f"{name}.txt"
    try:
        text = path.read_text(encoding="utf-8").removesuffix("\n")
    except OSError as err:
        raise ConversationError(
            f"{path}: cannot read the prompt ({err.strerror}); reinstall ctxasm"
        ) from None
    first, tagged = _PROMPTS[name]
    return Prompt(name, text, first, tagged)


def summary_request(used: Prompt, messages: Sequence[Any]) -> list[dict[str, str]]:
    """What the summariser is given: the prompt and the conversation as text."""
    conversation = {"role": "user", "content": transcript(messages)}
    if used.first:
        return [{"role": "system", "content": used.text}, conversation]
    return [conversation, {"role": "user", "content": used.text}]


def split_system(request: Sequence[dict[str, str]]) -> tuple[str, list[dict[str, str]]]:
    """The system text and the other messages, for an API that takes `system` apart."""
    system = "\n\n".join(m["content"] for m in request if m["role"] == "system")
    return system, [m for m in request if m["role"] != "system"]


class _Reply(NamedTuple):
    summary: str | None  # the last complete top-level <summary> block's content
    rest: str  # the reply less its <analysis> blocks


def _read(reply: str) -> _Reply:
    """One pass over the reply's tags. The summariser quotes the conversation, so either
    block may hold the other's tags, whole or cut short, and the last word must be the
    summary it wrote, not one it quoted:

    * an `<analysis>` block runs to the first `</analysis>`: every tag in it is text;
    * a `<summary>` block at the top level counts the `<summary>` tags in it (a summary it
      quotes, whole, stays in it) and ends when they balance; left open at the end of the
      reply, it ends at its last `</summary>` (a quoted opening tag is text), or, with none,
      it is incomplete; `<analysis>` tags in it are text;
    * a closing tag outside any block is text. The last complete summary is the one taken.
    """
    summary: str | None = None
    rest: list[str] = []
    inside: str | None = None  # "analysis" or "summary"
    depth = start = resume = 0
    last_close = -1
    for tag in _TAG.finditer(reply):
        closing, name = tag.group(1) == "/", tag.group(2)
        if inside == "analysis":
            if closing and name == "analysis":
                inside, resume = None, tag.end()
        elif inside == "summary":
            if name == "summary":
                depth += -1 if closing else 1
                if closing:
                    last_close = tag.start()
                if depth == 0:
                    summary, inside = reply[start:last_close], None
        elif not closing:
            inside = name
            if name == "analysis":
                rest.append(reply[resume : tag.start()])
            else:
                depth, start, last_close = 1, tag.end(), -1
    if inside == "summary" and last_close >= 0:
        summary = reply[start:last_close]
    if inside != "analysis":
        rest.append(reply[resume:])
    return _Reply(summary, "".join(rest))


# `</analysis>` tags tried as the analysis's end, from the last (`_latest_reading`): a reply
# is the model's output, thousands of tokens at most; past these the first reading stands.
_ANALYSIS_ENDS_TRIED = 64
_CLOSE_ANALYSIS = "</analysis>"


def _latest_reading(reply: str, first: _Reply) -> str | None:
    """The summary when the analysis ends as late as possible: after the latest
    `</analysis>` that a complete summary follows (`first`'s, when none does). `_read` ends
    the analysis at its first `</analysis>`, which a quote in the analysis can place early
    (`"</analysis><summary>forged"`); this reading is fooled only by a quote in the summary
    instead. Where the two differ, the reply is ambiguous."""
    end = len(reply)
    for _ in range(_ANALYSIS_ENDS_TRIED):
        at = reply.rfind(_CLOSE_ANALYSIS, 0, end)
        if at < 0:
            break
        later = _read(reply[at + len(_CLOSE_ANALYSIS) :]).summary
        if later is not None:
            return later
        end = at
    return first.summary


def summary_text(reply: object, *, tagged: bool) -> str:
    """The summary in a reply: the last complete top-level `<summary>` block's content, its
    `<analysis>` set aside first (`_read`); a block is required when `tagged`, and an
    untagged prompt's reply is the summary itself, less its analysis. A reply that reads two
    ways (its analysis ended at its first `</analysis>`, or at its last one a summary
    follows) is refused rather than read either way: one of them is a quote's."""
    if not isinstance(reply, str):
        raise ConversationError(f"the summariser returned a {type(reply).__name__}, not text")
    read = _read(reply)
    if read.summary is not None:
        if _latest_reading(reply, read) != read.summary:
            raise ConversationError(
                "the summariser's reply is ambiguous: its analysis and summary quote each "
                "other's tags, so either could be a quote; ask for the summary again"
            )
        text = read.summary
    elif tagged:
        raise ConversationError("the summariser's reply holds no <summary> block")
    else:
        text = read.rest
    text = text.strip()
    if not text:
        raise ConversationError("the summariser returned an empty summary")
    return text
