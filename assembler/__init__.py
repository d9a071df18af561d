"""ctxasm: assemble the instruction context an LLM agent sees from layered instruction files.

from assembler import assemble
ctx = assemble("services/api")  # the project's policy, else the built-in default
ctx.text                      # the native XML, most stable first, with the boundary
ctx.render()                  # the policy's format: a client's own is byte for byte its request
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
    ConversationError,
    DiscoveryError,
    PolicyError,
    RenderError,
    RequestError,
    SkillError,
)
from .model import Cut, Diagnostic, Layer, Policy, Reason, Severity, Source, Stats, Why

if TYPE_CHECKING:
    from .assembly import Assembly, assemble
    from .live.assembler import Assembler
    from .model import TokenCounter
    from .output.tiers import TTL, RequestOptions
    from .policy import load_policy
    from .request import Options, Request
    from .tokens import estimate_tokens

# The pipeline is imported on first use, so `import assembler` (and `ctxasm lint`, which
# needs only part of it) does not pay for discovery, budgeting and rendering up front.
_LAZY = {
    "Assembly": ".assembly",
    "assemble": ".assembly",
    "Assembler": ".live.assembler",
    "load_policy": ".policy",
    "Options": ".request",
    "Request": ".request",
    "RequestOptions": ".output.tiers",
    "TTL": ".output.tiers",
    "TokenCounter": ".model",
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
    "ConversationError",
    "Cut",
    "Diagnostic",
    "DiscoveryError",
    "Layer",
    "Options",
    "Policy",
    "PolicyError",
    "Reason",
    "RenderError",
    "Request",
    "RequestError",
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
