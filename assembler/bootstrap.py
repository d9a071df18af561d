"""The `bootstrap` discoverer: the fixed workspace of the first seed article.

Each configured file (`soul.md`, `user.md`, `agent.md`, `memory/MEMORY.md` by default) becomes
one section, in the policy's order; a missing or unreadable file renders the policy's
`missing` text, exactly like the seed's `readWithLimit` (`'(file not found)'`).
"""

from __future__ import annotations

from .discover import Discovery
from .loader import Context, Loader, text_source
from .model import Reason, Severity, Source, Why
from .policy import Policy
from .tokens import TokenCounter


def discover_bootstrap(ctx: Context, policy: Policy, counter: TokenCounter) -> Discovery:
    loader = Loader(ctx, policy, counter)
    sources: list[Source] = []
    for item in policy.workspace:
        path = str(ctx.cwd / item.path)
        processed = loader.read(path, "workspace file")
        if processed is None:
            loader.note(
                "workspace-missing", Severity.WARNING, path, f"renders as {policy.missing_text!r}"
            )
            raw = content = policy.missing_text
        else:
            raw = processed[2]
            content = raw.strip()
        reason = Reason(Why.WORKSPACE, f"workspace file {item.path}")
        source = text_source(
            item.layer, path, item.path, reason, content, item.tag, counter,
            raw=raw, is_index=item.is_index,
        )  # fmt: skip
        sources.append(source)
    return Discovery(tuple(sources), tuple(loader.diagnostics))
