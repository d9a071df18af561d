"""The conversation runtime: keeping an agent's message list alive as it grows.

Five levels, from the two seed articles (`docs/conversation.md`): large tool outputs
persisted to disk, pruning of old tool results, micro-compaction (time-based, or
cache-preserving through Anthropic's `cache_reference` / `cache_edits`), context collapse,
and full compaction; `Conversation` runs them in order before each model call. Provider-neutral
(Anthropic `tool_use` / `tool_result` blocks and OpenAI `tool_calls` / `role: "tool"`
messages), network-free: summarising is a callable the agent passes. Importing this package
loads only the standard library and ctxasm's value modules.
"""

from __future__ import annotations

from ..errors import ConversationError
from .collapse import CollapseResult, Stage, StageJob, apply_collapse, collapse_span, stage_collapse
from .compact import (
    Attachment,
    AttachmentKind,
    Boundary,
    CompactionResult,
    Thresholds,
    Trigger,
    compact,
    compaction_thresholds,
    fit_attachments,
    should_compact,
)
from .messages import Shape, Unknown, scan
from .micro import (
    CLEARED,
    COMPACTABLE_TOOLS,
    CacheEditResult,
    CacheEditState,
    ClearResult,
    cache_edit_tool_results,
    clear_old_tool_results,
)
from .persist import Kind, Persisted, PersistResult, persist_results, persist_tool_result
from .pipeline import Conversation, Event, Level, Levels, Micro, Prepared
from .prompts import Prompt, prompt, split_system, summary_request, summary_text
from .prune import PruneResult, prune_tool_results

__all__ = [
    "CLEARED",
    "COMPACTABLE_TOOLS",
    "Attachment",
    "AttachmentKind",
    "Boundary",
    "CacheEditResult",
    "CacheEditState",
    "ClearResult",
    "CollapseResult",
    "CompactionResult",
    "Conversation",
    "ConversationError",
    "Event",
    "Kind",
    "Level",
    "Levels",
    "Micro",
    "PersistResult",
    "Persisted",
    "Prepared",
    "Prompt",
    "PruneResult",
    "Shape",
    "Stage",
    "StageJob",
    "Thresholds",
    "Trigger",
    "Unknown",
    "apply_collapse",
    "cache_edit_tool_results",
    "clear_old_tool_results",
    "collapse_span",
    "compact",
    "compaction_thresholds",
    "fit_attachments",
    "persist_results",
    "persist_tool_result",
    "prompt",
    "prune_tool_results",
    "scan",
    "should_compact",
    "split_system",
    "stage_collapse",
    "summary_request",
    "summary_text",
]
