"""Request shapes for the providers' APIs: Anthropic Messages and OpenAI Responses/Chat.

Plain data only: the SDKs are never imported here (they are test and example dependencies).
Each shape can be passed to the official SDK as keyword arguments, with the caller adding
the model, the token limit and the conversation.
"""

from __future__ import annotations

from typing import Any

from ..errors import CacheError
from ..model import Assembled, Layer
from .tiers import TTL, CachePlan, RequestOptions, plan_for, text_hash

OPENAI_APIS = ("responses", "chat")
CACHE_KEY_PREFIX = "ctxasm-"


def anthropic_system(cache_plan: CachePlan) -> list[dict[str, Any]]:
    """`system` text blocks, one per tier, `cache_control` on the breakpoints.

    The shape of the client's own blocks (SPEC section 4): `{"type": "ephemeral"}`, plus
    `"ttl": "1h"` for 1-hour caching and `"scope": "global"` on the static block; the boundary
    marker is not sent (`splitSysPromptPrefix` drops it, anchors section 1.8).
    """
    blocks: list[dict[str, Any]] = []
    for i, tier in enumerate(cache_plan.tiers):
        block: dict[str, Any] = {"type": "text", "text": tier.text}
        breakpoint_ = cache_plan.at(i)
        if breakpoint_ is not None:
            control: dict[str, Any] = {"type": "ephemeral"}
            if breakpoint_.ttl is TTL.ONE_HOUR:
                control["ttl"] = TTL.ONE_HOUR.value
            if breakpoint_.scope:
                control["scope"] = breakpoint_.scope
            block["cache_control"] = control
        blocks.append(block)
    return blocks


def anthropic_request(assembly: Assembled, options: RequestOptions | None = None) -> dict[str, Any]:
    """`{"system": [...]}` for `client.messages.create(**request, model=..., ...)`."""
    return {"system": anthropic_system(plan_for(assembly, options or RequestOptions()))}


def prompt_cache_key(plan: CachePlan) -> str | None:
    """A routing key shared by every request that starts with the same text, or None.

    OpenAI routes on a hash of the first ~256 tokens combined with `prompt_cache_key`
    (platform.openai.com/docs/guides/prompt-caching): requests that start alike share the key,
    so they land on the machines that hold that prefix; the key is a hash, so nothing of the
    text leaks into it. The text is the static prefix, or without one the first tier that is
    not the environment (which changes every day): a project without managed files still
    gets a key of its own, not the hash of nothing. None when there is no such text.
    """
    text = plan.static_text or next(
        (t.text for t in plan.tiers if t.layer is not Layer.ENVIRONMENT), ""
    )
    return CACHE_KEY_PREFIX + text_hash(text)[:24] if text else None


def openai_request(assembly: Assembled, options: RequestOptions | None = None) -> dict[str, Any]:
    """The static prefix first, then the rest, and the `prompt_cache_key`.

    Responses API: `instructions` is the static prefix and `input` starts with one developer
    message holding the rest (append the conversation to it). Chat Completions: `messages`
    starts with the same two parts as system messages. Empty parts are left out.
    """
    options = options or RequestOptions()
    if options.openai_api not in OPENAI_APIS:
        raise CacheError(
            f"{options.openai_api}: unknown OpenAI API; choose one of {', '.join(OPENAI_APIS)}"
        )
    cache_plan = plan_for(assembly, options)
    static, dynamic = cache_plan.static_text, cache_plan.dynamic_text
    key = prompt_cache_key(cache_plan)
    request: dict[str, Any] = {}
    if options.openai_api == "chat":
        request["messages"] = [
            {"role": "system", "content": text} for text in (static, dynamic) if text
        ]
    else:
        if static:
            request["instructions"] = static
        request["input"] = [{"role": "developer", "content": dynamic}] if dynamic else []
    if key is not None:
        request["prompt_cache_key"] = key
    return request
