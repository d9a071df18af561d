"""The `bootstrap` discoverer: the fixed workspace of the first seed article.

Each configured file (`soul.md`, `user.md`, `agent.md`, `memory/MEMORY.md` by default) becomes
one section, in the policy's order; a missing or unreadable file renders the policy's
`missing` text, exactly like the seed's `readWithLimit` (`'(file not found)'`).
"""

from __future__ import annotations

from .discover import Discovery
from .loader import Context, Loader, make_stats
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
        stats = make_stats(content, counter)
        sources.append(
            Source(
                layer=item.layer,
                path=path,
                display=item.path,
                reason=Reason(Why.WORKSPACE, f"workspace file {item.path}"),
                content=content,
                raw=raw,
                stats=stats,
                original=stats,
                tag=item.tag,
                is_index=item.is_index,
            )
        )
    return Discovery(tuple(sources), tuple(loader.diagnostics))
