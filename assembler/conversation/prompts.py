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
_ANALYSIS = re.compile(r"<analysis>.*?</analysis>", re.S)
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.S)


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


def summary_text(reply: object, *, tagged: bool) -> str:
    """The summary in a reply: `<analysis>` blocks stripped, the `<summary>` block's content
    kept (required when `tagged`; an untagged prompt's reply is the summary itself)."""
    if not isinstance(reply, str):
        raise ConversationError(f"the summariser returned a {type(reply).__name__}, not text")
    found = _SUMMARY.search(reply)
    if found:
        text = found.group(1)
    elif tagged:
        raise ConversationError("the summariser's reply holds no <summary> block")
    else:
        text = _ANALYSIS.sub("", reply)
    text = text.strip()
    if not text:
        raise ConversationError("the summariser returned an empty summary")
    return text
