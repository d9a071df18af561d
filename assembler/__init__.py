"""ctxasm: assemble the instruction context an LLM agent sees from layered instruction files.

from assembler import assemble
ctx = assemble("services/api", policy="claude-code")
ctx.text                      # the native XML, most stable first, with the boundary
ctx.render("claude-code")     # byte-compatible with Claude Code's first user message
ctx.sources, ctx.diagnostics  # what was loaded, cut or skipped, and why
ctx.touch("services/api/src/app.ts")  # what lazy loading adds for that path
"""

from __future__ import annotations

from .assembly import Assembly, assemble
from .errors import AssemblerError, BudgetError, DiscoveryError, PolicyError, RenderError
from .model import Cut, Diagnostic, Layer, Reason, Severity, Source, Stats, Why
from .policy import Policy, load_policy
from .tokens import TokenCounter, estimate_tokens

__all__ = [
    "AssemblerError",
    "Assembly",
    "BudgetError",
    "Cut",
    "Diagnostic",
    "DiscoveryError",
    "Layer",
    "Policy",
    "PolicyError",
    "Reason",
    "RenderError",
    "Severity",
    "Source",
    "Stats",
    "TokenCounter",
    "Why",
    "assemble",
    "estimate_tokens",
    "load_policy",
]
