"""ctxasm: assemble the instruction context an LLM agent sees from layered instruction files.

from assembler import assemble
ctx = assemble("services/api", policy="claude-code")
ctx.text                      # the native XML, most stable first, with the boundary
ctx.render("claude-code")     # byte-compatible with Claude Code's first user message
ctx.sources, ctx.diagnostics  # what was loaded, cut or skipped, and why
ctx.touch("services/api/src/app.ts")  # what lazy loading adds for that path

from assembler import Assembler       # for agents and watchers: assemble every turn
asm = Assembler("services/api")
asm.assemble() is asm.assemble()      # True while nothing changed: only `stat` calls
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .errors import (
    AssemblerError,
    BudgetError,
    CacheError,
    DiscoveryError,
    PolicyError,
    RenderError,
    SkillError,
)
from .model import Cut, Diagnostic, Layer, Reason, Severity, Source, Stats, Why

if TYPE_CHECKING:
    from .assembly import Assembly, assemble
    from .incremental import Assembler
    from .policy import Policy, load_policy
    from .tiers import TTL, RequestOptions
    from .tokens import TokenCounter, estimate_tokens

# The pipeline is imported on first use, so `import assembler` (and `ctxasm lint`, which
# needs only part of it) does not pay for discovery, budgeting and rendering up front.
_LAZY = {
    "Assembly": ".assembly",
    "assemble": ".assembly",
    "Assembler": ".incremental",
    "Policy": ".policy",
    "load_policy": ".policy",
    "RequestOptions": ".tiers",
    "TTL": ".tiers",
    "TokenCounter": ".tokens",
    "estimate_tokens": ".tokens",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assembler' has no attribute {name!r}")
    return getattr(import_module(module, __name__), name)


__all__ = [
    "TTL",
    "Assembler",
    "AssemblerError",
    "Assembly",
    "BudgetError",
    "CacheError",
    "Cut",
    "Diagnostic",
    "DiscoveryError",
    "Layer",
    "Policy",
    "PolicyError",
    "Reason",
    "RenderError",
    "RequestOptions",
    "Severity",
    "SkillError",
    "Source",
    "Stats",
    "TokenCounter",
    "Why",
    "assemble",
    "estimate_tokens",
    "load_policy",
]
